"""Animations of trajectories from a model's Drawing (points, polylines, traced paths).

The drawing's points are 3x1 sympy expressions of the inertial position (x, y, z) in q
and constants.  They are compiled once and evaluated for every frame::

    positions[f, i, :] = r_i(q(t_f), constants)      (frames, points, 3)

Frames are taken at ``fps`` per simulated second (q from the trajectory's dense output, or
linearly between its samples, segment by segment: never across an impact), at most ``max_frames`` of them, so that playback runs in real time
and the self-contained HTML stays small.

``animate`` returns a :class:`TrajectoryAnimation` (a matplotlib ``FuncAnimation``) that
plays itself in Jupyter and saves with ``save_html`` (self-contained page) or ``save_gif``
(Pillow); see :mod:`symbody.presentation.export`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..deprecation import moved_keywords
from ..errors import InputError
from ._trajectory_evaluation import TrajectoryEvaluator, free_constants, position_matrix, resampled
from .export import save_gif, save_html, to_html
from .options import CAMERA_KEYWORDS, FIGURE_KEYWORDS, Camera, FigureOptions, checked_option
from .scene import check_point_names

if TYPE_CHECKING:
    from matplotlib.animation import FuncAnimation


__all__ = ["animate", "point_positions", "frame_times"]

DEFAULT_FPS = 20
DEFAULT_MAX_FRAMES = 200


def _drawing_field(drawing: Any, name: str, default: Any) -> Any:
    return getattr(drawing, name, default) if not isinstance(drawing, Mapping) else drawing.get(name, default)


def frame_times(t: np.ndarray, fps: float | None = None, max_frames: int = DEFAULT_MAX_FRAMES) -> np.ndarray:
    """Uniform frame times over [t[0], t[-1]]: ``fps`` per second, at most ``max_frames``.

    With ``fps=None`` the rate is DEFAULT_FPS, lowered if needed to respect ``max_frames``.
    """
    t = np.asarray(t, dtype=float)
    if t.size == 0:
        raise InputError("the trajectory has no samples to animate")
    duration = float(t[-1] - t[0])
    if duration <= 0:
        return t[:1].copy()
    rate = float(fps) if fps else DEFAULT_FPS
    if rate <= 0:
        raise InputError(f"fps must be positive, not {fps}")
    count = int(np.floor(duration * rate + 1e-9)) + 1
    if max_frames and count > max_frames:
        count = int(max_frames)
    return np.linspace(t[0], t[-1], max(count, 2))


def point_positions(trajectory: Any, drawing: Any, constants: Mapping | None = None,
                    times: np.ndarray | None = None) -> tuple[list[str], np.ndarray]:
    """Positions of the drawing's points along the trajectory.

    Returns (names, positions) with positions (k, P, 3) at ``times`` (default: the
    trajectory's own samples; other times are interpolated linearly in q).
    """
    points = _drawing_field(drawing, "points", None)
    if not points:
        raise InputError("the drawing has no points")
    names = list(points)
    exprs = []
    for name in names:
        exprs.extend(position_matrix(points[name], f"drawing point {name!r}"))
    source = trajectory if times is None else resampled(trajectory, np.asarray(times, dtype=float))
    evaluator = TrajectoryEvaluator(exprs, source.coordinates, getattr(source, "speeds", ()),
                                    free_constants(exprs), "drawing coordinate")
    values = evaluator(source, constants)
    return names, values.reshape(len(source.t), len(names), 3)


def _limits(positions: np.ndarray, margin: float = 0.08) -> tuple[np.ndarray, np.ndarray]:
    finite = positions[np.all(np.isfinite(positions), axis=-1)]
    if finite.size == 0:
        return -np.ones(3), np.ones(3)
    lo, hi = finite.min(axis=0), finite.max(axis=0)
    span = np.maximum(hi - lo, 1e-9)
    pad = margin * max(span.max(), 1e-3)
    return lo - pad, hi + pad


@moved_keywords("animate", {"camera": (Camera, CAMERA_KEYWORDS), "figure": (FigureOptions, FIGURE_KEYWORDS)})
def animate(trajectory: Any, drawing: Any, constants: Mapping | None = None, *,
            fps: float | None = None, max_frames: int = DEFAULT_MAX_FRAMES,
            traces: bool | Sequence[str] = True, camera: Camera | None = None,
            figure: FigureOptions | None = None) -> FuncAnimation:
    """Animate a trajectory with a Drawing; returns a matplotlib ``FuncAnimation``.

    Parameters
    ----------
    trajectory : a :class:`symbody.Trajectory` (t (k,), q (k, N), coordinates, constants).
    drawing : a ``symbody.models.Drawing`` (or a dict with the same fields): ``points``
        {name: 3x1 position in q and constants}, ``lines`` (polylines through point names),
        ``traces`` (points whose paths are drawn), ``view`` ("2d" or "3d"), ``plane``.
    constants : values of constants missing from ``trajectory.constants`` (or overrides),
        dict keyed by Symbol or name.
    fps : frames per simulated second (default 20, reduced to respect ``max_frames``);
        playback at this rate is real time.
    traces : draw the paths of ``drawing.traces`` (True), of the named points, or none.
    camera : a :class:`~symbody.presentation.options.Camera`: ``view`` and ``plane``
        override the drawing's "2d"/"3d" choice and the 2d plane (axis indices);
        ``follow`` keeps the camera on the drawing (moving axes) instead of showing the
        whole path (default: follow when the path is more than eight times the size of the
        drawing; the camera moves in small jumps, see ``_camera_centers``).
    figure : a :class:`~symbody.presentation.options.FigureOptions`: ``title`` (text shown
        before the time in the axes title), ``figsize``, ``dpi`` (default 80) and ``close``
        (close the figure after building the animation so that Jupyter does not show a
        static copy; default: close unless a GUI backend is in use).

    Notes
    -----
    The former keywords ``view=``, ``plane=``, ``follow=``, ``title=``, ``figsize=``,
    ``dpi=`` and ``close=`` still work for one release, with a DeprecationWarning.

    Returns
    -------
    TrajectoryAnimation
        with ``times`` (frames,), ``positions`` (frames, P, 3), ``point_names`` and ``fps``;
        ``save_html(path)``, ``save_gif(path)``.
    """
    import matplotlib
    import matplotlib.pyplot as plt

    camera = checked_option(camera, Camera, "camera")
    figure = checked_option(figure, FigureOptions, "figure")
    times = frame_times(np.asarray(trajectory.t, dtype=float), fps, max_frames)
    duration = float(times[-1] - times[0])
    rate = (len(times) - 1) / duration if duration > 0 else float(fps or DEFAULT_FPS)
    names, positions = point_positions(trajectory, drawing, constants, times)
    parts = _DrawnParts(drawing, traces, names)
    view, plane = _view_and_plane(drawing, camera)
    framing = _Framing(positions, view, plane, camera.follow)
    fig, ax = framing.axes(figure)
    # paths are drawn through every trajectory sample when those are denser than the frames
    t_samples = np.asarray(trajectory.t, dtype=float)
    dense = None
    if parts.traced and len(t_samples) > len(times):
        dense = point_positions(trajectory, drawing, constants)[1]
    heading = figure.title if figure.title is not None else ""
    player = _FramePlayer(ax, framing, parts, positions, times, heading, (t_samples, dense))
    fig.tight_layout()
    anim = _animation_class()(fig, player.update, frames=len(times), interval=1000.0 / rate,
                              blit=False)
    anim.update_frame = player.update
    # the moving artists, blitted over a background that is redrawn when the camera moves
    anim.animated_artists = player.artists
    anim.camera_moved = player.camera_moved
    anim.times = times
    anim.positions = positions
    anim.point_names = names
    anim.fps = rate
    anim.title = heading or "symbody animation"
    close = figure.close
    if close is None:
        backend = matplotlib.get_backend().lower()
        close = "inline" in backend or backend in ("agg", "pdf", "svg", "ps", "cairo", "template")
    if close:
        plt.close(fig)
    return anim


class _DrawnParts:
    """What is drawn of a drawing: ``lines`` (lists of point names), ``traced`` (names of the
    points whose paths are drawn), ``loose`` (points on no line), ``index`` {name: column}."""

    def __init__(self, drawing: Any, traces: bool | Sequence[str], names: list[str]) -> None:
        self.index = {name: i for i, name in enumerate(names)}
        self.lines = [list(line) for line in (_drawing_field(drawing, "lines", None) or [])]
        if traces is True:
            self.traced = list(_drawing_field(drawing, "traces", ()) or ())
        elif traces is False or traces is None:
            self.traced = []
        else:
            self.traced = list(traces)
        check_point_names(self.lines, self.traced, self.index, "drawing")
        in_lines = {name for line in self.lines for name in line}
        self.loose = [name for name in names if name not in in_lines]


def _view_and_plane(drawing: Any, camera: Camera) -> tuple[str, tuple[int, ...]]:
    """The view ("2d" or "3d") and the 2d plane (two axis indices), the camera's over the drawing's."""
    view = (camera.view or _drawing_field(drawing, "view", "2d") or "2d").lower()
    if view not in ("2d", "3d"):
        raise InputError(f"view must be '2d' or '3d', not {view!r}")
    plane = tuple(camera.plane or _drawing_field(drawing, "plane", (0, 1)) or (0, 1))
    if len(plane) != 2 or not all(i in (0, 1, 2) for i in plane) or plane[0] == plane[1]:
        raise InputError(f"plane must be two different axis indices among 0, 1, 2, not {plane}")
    return view, plane


class _Framing:
    """The axes' limits: the whole path (``lo``, ``hi``), or a window of half width
    ``half_window`` around the camera ``centers`` (frames, 3) when following the drawing."""

    def __init__(self, positions: np.ndarray, view: str, plane: tuple, follow: bool | None) -> None:
        self.view, self.plane = view, plane
        self.lo, self.hi = _limits(positions)
        self.dims = [0, 1, 2] if view == "3d" else list(plane)
        dims = self.dims
        # the size of the drawing: the spread of its moving points (fixed ones, e.g. a ground
        # marker, do not travel with it)
        moving = np.nanmax(np.ptp(positions, axis=0), axis=1) > 1e-12
        moving = moving if moving.any() else np.ones(positions.shape[1], dtype=bool)
        body = (float(np.nanmax(np.ptp(positions[:, moving][:, :, dims], axis=1)))
                if moving.sum() > 1 else 0.0)
        extent = float(np.max(self.hi[dims] - self.lo[dims]))
        if follow is None:
            follow = body > 0 and extent > 8.0 * body
        self.follow = follow
        # the followed view: the drawing fills about a third of a 2d view, most of a 3d box
        self.half_window = max((0.9 if view == "3d" else 1.5) * body, 1e-3)
        self.centers = _camera_centers(positions[:, moving], self.half_window) if follow else None

    def axes(self, figure: FigureOptions) -> tuple[Any, Any]:
        """A new figure and its axes, limits set for the first frame."""
        import matplotlib.pyplot as plt

        dpi = figure.dpi if figure.dpi is not None else 80
        lo, hi, half_window = self.lo, self.hi, self.half_window
        if self.view == "3d":
            fig = plt.figure(figsize=figure.figsize or (6.5, 6.0), dpi=dpi)
            ax = fig.add_subplot(projection="3d")
            center, half = (lo + hi) / 2, (hi - lo).max() / 2
            if self.follow:
                center, half = self.centers[0], half_window
            ax.set_xlim(center[0] - half, center[0] + half)
            ax.set_ylim(center[1] - half, center[1] + half)
            ax.set_zlim(center[2] - half, center[2] + half)
            ax.set_box_aspect((1, 1, 1))
            ax.set_xlabel("x [m]")
            ax.set_ylabel("y [m]")
            ax.set_zlabel("z [m]")
            return fig, ax
        plane, axis_names = self.plane, ("x", "y", "z")
        if self.follow:
            lo, hi = self.centers[0] - half_window, self.centers[0] + half_window
        span = hi - lo
        aspect = span[plane[1]] / max(span[plane[0]], 1e-9)
        width = 7.0
        height = float(np.clip(width * aspect, 2.5, 7.0))
        fig, ax = plt.subplots(figsize=figure.figsize or (width, height + 0.7), dpi=dpi)
        ax.set_xlim(lo[plane[0]], hi[plane[0]])
        ax.set_ylim(lo[plane[1]], hi[plane[1]])
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel(f"{axis_names[plane[0]]} [m]")
        ax.set_ylabel(f"{axis_names[plane[1]]} [m]")
        ax.grid(True, alpha=0.3)
        return fig, ax


class _FramePlayer:
    """The artists of an animation and the function that moves them to a frame
    (:meth:`update`); :meth:`camera_moved` tells the exporter when to redraw the background.

    ``paths``: (t_samples (k,), dense (k, P, 3) or None): the traced paths run through the
    positions at the trajectory's samples when given, else through the frames.
    """

    def __init__(self, ax: Any, framing: _Framing, parts: _DrawnParts, positions: np.ndarray,
                 times: np.ndarray, heading: str, paths: tuple) -> None:
        self.ax, self.framing, self.positions, self.times = ax, framing, positions, times
        # the paths are drawn through the trajectory's samples t_samples with the positions
        # dense (samples, P, 3) there, or (dense None) through the frames
        self.t_samples, self.dense = paths
        self.view, self.plane = framing.view, framing.plane
        index = parts.index
        # 3D axes do not clip to their box by themselves (a path would run out of a moving view)
        clip = {"axlim_clip": True} if self.view == "3d" and _supports_axlim_clip() else {}
        self.trace_artists = []
        for j, name in enumerate(parts.traced):
            (artist,) = ax.plot(*self.coords(positions[:1, index[name]]), "-", lw=1.2, zorder=1,
                                color=f"C{(j + 1) % 10}", label=f"path of {name}", **clip)
            self.trace_artists.append((artist, index[name]))
        self.line_artists = []
        for line in parts.lines:
            # joints are marked on short polylines; long ones are outlines (a wheel, a disc)
            style = "-o" if len(line) <= 6 else "-"
            (artist,) = ax.plot(*self.coords(positions[0, [index[n] for n in line]]), style,
                                color="black", lw=2, markersize=5, markerfacecolor="C0",
                                markeredgecolor="black", zorder=3, **clip)
            self.line_artists.append((artist, [index[n] for n in line]))
        self.loose_idx = [index[n] for n in parts.loose]
        self.loose_artist = None
        if self.loose_idx:
            (self.loose_artist,) = ax.plot(*self.coords(positions[0, self.loose_idx]), "o",
                                           color="C3", markersize=5, zorder=4)
        self._legend()
        if heading:
            ax.set_title(heading, fontsize="medium")
        # the clock is a short text of its own: the static title is drawn once, not every frame
        self.template = "t = {:.2f} s"
        place = ax.text2D if self.view == "3d" else ax.text
        self.title_artist = place(0.02, 0.98, self.template.format(times[0]),
                                  transform=ax.transAxes, ha="left", va="top", fontsize="medium",
                                  zorder=5)
        self.camera_state = {"center": framing.centers[0] if framing.follow else None,
                             "moved": False}
        self.artists = [a for a, _ in self.trace_artists] + [a for a, _ in self.line_artists]
        self.artists += (([self.loose_artist] if self.loose_artist is not None else [])
                         + [self.title_artist])

    def _legend(self) -> None:
        traces = self.trace_artists
        if traces and len(traces) <= 6:
            if len(traces) <= 2 or self.view == "3d":
                self.ax.legend(loc="upper right", fontsize="small", framealpha=0.6)
            else:
                self.ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
                               borderaxespad=0)

    def coords(self, frame_positions: np.ndarray) -> tuple[np.ndarray, ...]:
        """(x, y[, z]) arrays of a (K, 3) block in the chosen view."""
        if self.view == "3d":
            return frame_positions[:, 0], frame_positions[:, 1], frame_positions[:, 2]
        return frame_positions[:, self.plane[0]], frame_positions[:, self.plane[1]]

    def set_artist(self, artist: Any, frame_positions: np.ndarray) -> None:
        xyz = self.coords(frame_positions)
        if self.view == "3d":
            artist.set_data_3d(*xyz)
        else:
            artist.set_data(*xyz)

    def update(self, frame: int) -> list:
        positions, set_artist = self.positions, self.set_artist
        current = positions[frame]
        for artist, idx in self.line_artists:
            set_artist(artist, current[idx])
        if self.loose_artist is not None:
            set_artist(self.loose_artist, current[self.loose_idx])
        if self.dense is None:
            for artist, i in self.trace_artists:
                set_artist(artist, positions[: frame + 1, i])
        else:
            upto = int(np.searchsorted(self.t_samples, self.times[frame], side="right"))
            for artist, i in self.trace_artists:
                set_artist(artist, np.vstack([self.dense[:upto, i], positions[frame, i][None, :]]))
        self.title_artist.set_text(self.template.format(self.times[frame]))
        self._move_camera(frame)
        return self.artists

    def _move_camera(self, frame: int) -> None:
        framing, state = self.framing, self.camera_state
        if framing.follow and not np.array_equal(framing.centers[frame], state["center"]):
            center, half, dims = framing.centers[frame], framing.half_window, framing.dims
            self.ax.set_xlim(center[dims[0]] - half, center[dims[0]] + half)
            self.ax.set_ylim(center[dims[1]] - half, center[dims[1]] + half)
            if self.view == "3d":
                self.ax.set_zlim(center[2] - half, center[2] + half)
            state["center"] = center
            state["moved"] = True

    def camera_moved(self) -> bool:
        """True once after the camera (the axes limits) moved: the background must be redrawn."""
        moved, self.camera_state["moved"] = self.camera_state["moved"], False
        return moved


def _supports_axlim_clip() -> bool:
    """matplotlib >= 3.10 can clip 3D artists to the axes limits."""
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return (major, minor) >= (3, 10)


def _camera_centers(positions: np.ndarray, half_window: float, slack: float = 0.4) -> np.ndarray:
    """Camera centre per frame (frames, 3) following the centroid of ``positions`` (frames, P, 3).

    The camera moves in jumps, only when the centroid is more than ``slack * half_window``
    from the centre, so that most frames share their background (fast blitting).
    """
    centroid = np.nanmean(positions, axis=1)
    centers = np.empty_like(centroid)
    current = centroid[0]
    for f, c in enumerate(centroid):
        if np.any(np.abs(c - current) > slack * half_window):
            current = c
        centers[f] = current
    return centers


_ANIMATION_CLASS = None


def _animation_class():
    """TrajectoryAnimation, created on first use so that matplotlib is imported lazily."""
    global _ANIMATION_CLASS
    if _ANIMATION_CLASS is None:
        from matplotlib.animation import FuncAnimation

        class TrajectoryAnimation(FuncAnimation):
            """A FuncAnimation that knows its frame rate, plays itself in Jupyter and saves
            itself as a self-contained HTML page or an animated GIF.

            Attributes: ``times`` (frames,), ``positions`` (frames, P, 3), ``point_names``,
            ``fps``, ``update_frame(i)``.
            """

            def _repr_html_(self) -> str:
                return to_html(self)

            def to_html(self) -> str:
                """HTML fragment with a JavaScript player (frames embedded)."""
                return to_html(self)

            def save_html(self, path: str | os.PathLike) -> Path:
                """Write a self-contained HTML page; returns the path."""
                return save_html(self, path)

            def save_gif(self, path: str | os.PathLike) -> Path | None:
                """Write an animated GIF; returns the path, or None without Pillow."""
                return save_gif(self, path)

        _ANIMATION_CLASS = TrajectoryAnimation
    return _ANIMATION_CLASS
