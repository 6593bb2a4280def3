"""Regenerate the pictures in docs/images/ used by the README (run from the repository root).

    .venv/bin/python docs/make_images.py

Runs ``symbody demo`` into a temporary directory and keeps small palette PNGs of its plots
and of the last animation frames (t = 30 s) without and with constraint enforcement, and
the Whipple bicycle's eigenvalues against speed from ``symbody linearize --speeds``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

from PIL import Image  # noqa: E402

from symbody.presentation.cli import main  # noqa: E402

IMAGES = Path(__file__).resolve().parent / "images"


def small_png(image: Image.Image, path: Path, width: int) -> None:
    """Save ``image`` scaled to ``width`` pixels as a 128-colour PNG."""
    image = image.convert("RGB")
    height = round(image.height * width / image.width)
    image = image.resize((width, height), Image.Resampling.LANCZOS)
    image.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(path, optimize=True)
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


def last_frame(gif: Path) -> Image.Image:
    with Image.open(gif) as im:
        im.seek(im.n_frames - 1)
        return im.convert("RGB")


def run() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        code = main(["demo", "--out", str(out), "--quiet"])
        if code != 0:
            return code
        small_png(Image.open(out / "drift_comparison.png"), IMAGES / "demo_drift_comparison.png", 1000)
        a = last_frame(out / "animation_without_enforcement.gif")
        b = last_frame(out / "animation_with_enforcement.gif")
        both = Image.new("RGB", (a.width + b.width, max(a.height, b.height)), "white")
        both.paste(a, (0, 0))
        both.paste(b, (a.width, 0))
        small_png(both, IMAGES / "demo_four_bar_final_frames.png", 1000)
        code = main(["linearize", "whipple-bicycle", "--speeds", "0:10:41", "--out", str(out), "--quiet"])
        if code != 0:
            return code
        small_png(Image.open(out / "eigenvalues_vs_v.png"), IMAGES / "whipple_eigenvalues_vs_v.png", 640)
    return 0


if __name__ == "__main__":
    sys.exit(run())
