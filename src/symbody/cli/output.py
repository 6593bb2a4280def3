"""Files the commands write (figures, animations, trajectories) and how numbers are shown."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from .console import Console


def _fmt(value: float) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}"


def _save_figure(fig, path: Path, written: list[Path], dpi: float = 100) -> None:
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    written.append(path)


def _save_animation(trajectory, model, out: Path, stem: str, fps: float | None, written: list[Path],
                    title: str | None = None, max_frames: int = 200) -> None:
    from ..presentation.animate import animate
    from ..presentation.export import pillow_available, save_gif, save_html
    from ..presentation.options import FigureOptions

    anim = animate(trajectory, model.drawing, fps=fps, max_frames=max_frames,
                   figure=FigureOptions(title=title, close=True))
    written.append(save_html(anim, out / f"{stem}.html", title=title or model.name))
    if pillow_available():
        gif = save_gif(anim, out / f"{stem}.gif")
        if gif is not None:
            written.append(gif)


def _write_trajectory(trajectory, out: Path, written: list[Path]) -> None:
    csv_path, npz_path = out / "trajectory.csv", out / "trajectory.npz"
    trajectory.to_csv(csv_path)
    written.append(csv_path)
    trajectory.save(npz_path)
    written.append(npz_path)


def _list_written(console: Console, written: Sequence[Path], heading: str) -> None:
    console.always(heading)
    for path in written:
        console.always(f"  {path}")
