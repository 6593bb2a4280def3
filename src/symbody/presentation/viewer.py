"""The 3D web viewer: one self-contained HTML page (three.js inlined) that plays a trajectory.

::

    page = symbody.view(trajectory, model.scene)     # or view(trajectory, model)
    page.save("bike.html")                           # or page.to_html(); Jupyter shows it inline

Every sample k of the trajectory gives, by compiled evaluation of the scene's expressions
(one kernel from :func:`symbody.make_function` for all of them),

    pose[k, f]   = (r_f, quaternion of R_f, length)   R_f = N.dcm(frame_f)   (frames, 8)
    points[k, i] = r_i(q_k, c)                          named points in N      (points, 3)

stored as base64 float32 arrays (about 30 bytes per body and 16 per point per sample, so
10 s of the bicycle at 60 samples per second is a few hundred kB besides three.js).  The page
interpolates linearly between samples (rotations by slerp), plays, pauses, scrubs, changes
speed, orbits, zooms, follows a body, and exposes ``window.symbody`` for tests
(``ready``, ``setTime(t)``, ``time()``, ``names()``, ``position(name)``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import zlib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame, Vector

from ..errors import InputError
from ._trajectory_evaluation import (
    TrajectoryEvaluator,
    constants_by_symbol,
    free_constants,
    position_matrix,
)
from .scene import Mesh, Scene, Segment, VisualizationFrame

__all__ = ["view", "Viewer", "scene_samples", "rotation_to_quaternion"]

BACKGROUND = "#f3f5f8"
LINE_COLOR = "#39424e"
TRACE_COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]
#: automatic sizes, as fractions of the scene's size (largest extent at the first sample)
AUTO_SPHERE, AUTO_ROD, AUTO_AXES = 0.025, 0.01, 0.2
DEFAULT_MAX_SAMPLES = 6000
#: largest total of mesh file bytes (before compression) a page embeds
DEFAULT_MAX_MESH_BYTES = 400_000_000


@cache
def _asset(*path: str) -> str:
    """A file of the viewer's package data (``viewer_assets/``; third-party files under ``vendor/``)."""
    return resources.files("symbody.presentation").joinpath("viewer_assets", *path).read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- geometry
def rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternions (x, y, z, w) of rotation matrices R (..., 3, 3); w >= 0 is not enforced.

    Shepperd's method: the largest of (trace, R_00, R_11, R_22) picks the stable formula.
    """
    R = np.asarray(R, dtype=float)
    shape = R.shape[:-2]
    R = R.reshape(-1, 3, 3)
    out = np.empty((len(R), 4))
    tr = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]
    diag = np.stack([tr, R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]], axis=1)
    pick = np.argmax(diag, axis=1)
    for case in range(4):
        m = pick == case
        if not np.any(m):
            continue
        r = R[m]
        if case == 0:
            s = np.sqrt(1.0 + tr[m]) * 2
            q = [(r[:, 2, 1] - r[:, 1, 2]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s,
                 (r[:, 1, 0] - r[:, 0, 1]) / s, 0.25 * s]
        elif case == 1:
            s = np.sqrt(1.0 + r[:, 0, 0] - r[:, 1, 1] - r[:, 2, 2]) * 2
            q = [0.25 * s, (r[:, 0, 1] + r[:, 1, 0]) / s, (r[:, 0, 2] + r[:, 2, 0]) / s,
                 (r[:, 2, 1] - r[:, 1, 2]) / s]
        elif case == 2:
            s = np.sqrt(1.0 + r[:, 1, 1] - r[:, 0, 0] - r[:, 2, 2]) * 2
            q = [(r[:, 0, 1] + r[:, 1, 0]) / s, 0.25 * s, (r[:, 1, 2] + r[:, 2, 1]) / s,
                 (r[:, 0, 2] - r[:, 2, 0]) / s]
        else:
            s = np.sqrt(1.0 + r[:, 2, 2] - r[:, 0, 0] - r[:, 1, 1]) * 2
            q = [(r[:, 0, 2] + r[:, 2, 0]) / s, (r[:, 1, 2] + r[:, 2, 1]) / s, 0.25 * s,
                 (r[:, 1, 0] - r[:, 0, 1]) / s]
        out[m] = np.stack(q, axis=1)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.reshape(*shape, 4)


def _continuous(quaternions: np.ndarray) -> np.ndarray:
    """Flip signs so that consecutive quaternions (k, F, 4) lie in the same hemisphere (smooth slerp)."""
    q = quaternions.copy()
    for k in range(1, len(q)):
        flip = np.sum(q[k] * q[k - 1], axis=-1) < 0
        q[k, flip] *= -1
    return q


def _y_to(direction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quaternions (k, 4) turning the y axis onto ``direction`` (k, 3), and the lengths (k,)."""
    length = np.linalg.norm(direction, axis=1)
    d = direction / np.where(length > 0, length, 1.0)[:, None]
    d[length == 0] = (0.0, 1.0, 0.0)
    # q = (y x d, 1 + y.d) normalised; y x d = (d_z, 0, -d_x)
    q = np.stack([d[:, 2], np.zeros(len(d)), -d[:, 0], 1.0 + d[:, 1]], axis=1)
    opposite = q[:, 3] < 1e-9
    q[opposite] = (1.0, 0.0, 0.0, 0.0)     # half turn about x
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q, length


def _world_quaternion(up: str) -> list[float]:
    """The rotation turning N's ``up`` axis onto the screen's y axis (three.js is y-up)."""
    axes = np.eye(3)
    sign = -1.0 if up.startswith("-") else 1.0
    e_up = sign * axes["xyz".index(up[-1])]
    a = axes[1] if up[-1] == "x" else axes[0]
    c = np.cross(a, e_up)
    M = np.vstack([a, e_up, c])         # rows: N coordinates -> screen coordinates
    return [float(v) for v in rotation_to_quaternion(M)]


# ----------------------------------------------------------------------------- scene -> expressions
def _point_expression(scene: Scene, spec: Any, what: str) -> sm.Matrix:
    N = scene.reference_frame
    if isinstance(spec, str):
        if spec not in scene.points:
            raise InputError(f"{what}: no named point {spec!r} in the scene; known points: "
                             f"{', '.join(sorted(scene.points)) or '(none)'}")
        return position_matrix(scene.points[spec], f"scene point {spec!r}")
    if isinstance(spec, Point):
        if scene.origin is None:
            raise InputError(f"{what} is placed at the Point {spec.name}, but the scene has no origin "
                             "Point to measure it from: Scene(N, origin, ...)")
        try:
            return sm.Matrix(spec.pos_from(scene.origin).to_matrix(N))
        except ValueError as exc:
            raise InputError(f"{what}: the Point {spec.name} is not located relative to the scene's "
                             f"origin {scene.origin.name}: {exc}") from exc
    if isinstance(spec, Vector):
        return sm.Matrix(spec.to_matrix(N))
    return position_matrix(spec, what)


def _rotation_expression(scene: Scene, frame: ReferenceFrame | sm.MatrixBase | None,
                         what: str) -> sm.Matrix | None:
    if frame is None:
        return None
    if isinstance(frame, sm.MatrixBase):      # the rotation matrix N <- frame itself
        return sm.Matrix(frame)
    N = scene.reference_frame
    try:
        return sm.Matrix(N.dcm(frame))
    except ValueError as exc:
        raise InputError(f"{what}: the frame {frame.name} has no orientation relative to the scene's "
                         f"frame {N.name} (orient it, e.g. with orient_axis)") from exc


def scene_samples(trajectory: Any, scene: Scene, constants: Mapping | None = None) -> dict[str, Any]:
    """Poses (k, F, 8), named points (k, P, 3) and shape sizes of ``scene`` along ``trajectory``.

    ``pose[k, f] = (x, y, z, qx, qy, qz, qw, length)``: the position in N, the quaternion of
    N.dcm(frame) and (segments) the length.  All expressions are compiled into one function.
    """
    items = list(scene.visualization_frames)
    exprs: list[sm.Expr] = []
    layout: list[tuple[int, int]] = []        # (offset, kind) per item: 0 point, 1 point+dcm, 2 segment
    for item in items:
        what = f"visualization frame {item.name!r}"
        layout.append((len(exprs), 2 if isinstance(item, Segment) else 0))
        if isinstance(item, Segment):
            exprs += list(_point_expression(scene, item.start, f"segment {item.name!r} start"))
            exprs += list(_point_expression(scene, item.end, f"segment {item.name!r} end"))
        else:
            exprs += list(_point_expression(scene, item.point, what))
            R = _rotation_expression(scene, item.frame, what)
            if R is not None:
                exprs += list(R)
                layout[-1] = (layout[-1][0], 1)
    names = list(scene.points)
    point_offset = len(exprs)
    for name in names:
        exprs += list(position_matrix(scene.points[name], f"scene point {name!r}"))
    exprs = [sm.sympify(e) for e in exprs]
    t = np.asarray(trajectory.t, dtype=float)
    if t.size == 0:
        raise InputError("the trajectory has no samples to view")
    sizes = [item.shape.sizes() if isinstance(item, VisualizationFrame) else {"radius": item.radius}
             for item in items]
    size_exprs = [v for s in sizes for v in s.values() if isinstance(v, sm.Basic)]
    needed = free_constants(exprs + size_exprs)
    evaluator = TrajectoryEvaluator(exprs, trajectory.coordinates, getattr(trajectory, "speeds", ()),
                                    free_constants(exprs), "scene coordinate")
    values = evaluator(trajectory, constants) if exprs else np.empty((len(t), 0))
    if not np.all(np.isfinite(values)):
        bad = int(np.argwhere(~np.isfinite(values))[0][1])
        raise InputError(f"scene expression {exprs[bad]} is not finite along the trajectory")
    k = len(t)
    pose = np.zeros((k, len(items), 8))
    pose[:, :, 6] = 1.0
    pose[:, :, 7] = 1.0
    for f, (offset, kind) in enumerate(layout):
        if kind == 2:
            a, b = values[:, offset:offset + 3], values[:, offset + 3:offset + 6]
            pose[:, f, :3] = (a + b) / 2
            pose[:, f, 3:7], pose[:, f, 7] = _y_to(b - a)
        else:
            pose[:, f, :3] = values[:, offset:offset + 3]
            if kind == 1:
                pose[:, f, 3:7] = rotation_to_quaternion(values[:, offset + 3:offset + 12].reshape(k, 3, 3))
    if len(items):
        pose[:, :, 3:7] = _continuous(pose[:, :, 3:7])
    points = values[:, point_offset:].reshape(k, len(names), 3)
    known = constants_by_symbol(trajectory, constants, needed)
    by_name = {str(s): v for s, v in known.items()}
    numeric_sizes = []
    for item, s in zip(items, sizes, strict=True):
        numeric = {}
        for key, value in s.items():
            if isinstance(value, sm.Basic):
                value = sm.sympify(value.xreplace(
                    {sym: sm.Float(known.get(sym, by_name.get(str(sym))))
                     for sym in value.free_symbols if sym in known or str(sym) in by_name}))
                if value.free_symbols or not value.is_number:
                    raise InputError(f"the size {key} of {item.name!r} needs a value for "
                                     f"{', '.join(sorted(map(str, value.free_symbols)))}; give it in constants=")
                value = float(value)
                if not value > 0:
                    raise InputError(f"the size {key} of {item.name!r} is {value:g}; sizes must be positive")
            numeric[key] = value
        numeric_sizes.append(numeric)
    return {"t": t, "pose": pose, "names": names, "points": points, "sizes": numeric_sizes}


# ----------------------------------------------------------------------------- the page
def _b64(array: np.ndarray, dtype: str) -> str:
    """Little-endian bytes of ``array`` as ``dtype`` ("<f4", "<f8"), base64 text."""
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def _mesh_table(items: Sequence[Any], max_bytes: int) -> tuple[list[dict], dict[int, int]]:
    """The mesh files of the scene's Mesh shapes, each once: [{file, format, size, data}] with
    ``data`` the zlib-compressed bytes in base64 (the page inflates them with fflate), and
    item index -> table index.  Files with the same bytes are stored once."""
    table: list[dict] = []
    by_digest: dict[tuple[str, str], int] = {}
    by_path: dict[str, int] = {}
    of_item: dict[int, int] = {}
    total = 0
    for f, item in enumerate(items):
        shape = getattr(item, "shape", None)
        if not isinstance(shape, Mesh):
            continue
        key = str(shape.filename)
        if key not in by_path:
            try:
                raw = shape.filename.read_bytes()
            except OSError as exc:
                raise InputError(f"visualization frame {item.name!r}: cannot read the mesh file "
                                 f"{key}: {exc.strerror or exc}") from exc
            digest = (shape.format, hashlib.sha256(raw).hexdigest())
            if digest not in by_digest:
                total += len(raw)
                if total > max_bytes:
                    raise InputError(f"the scene's mesh files exceed max_mesh_bytes={max_bytes} bytes "
                                     f"(at {key}); raise max_mesh_bytes or use lighter meshes")
                by_digest[digest] = len(table)
                table.append({"file": shape.filename.name, "format": shape.format, "size": len(raw),
                              "data": base64.b64encode(zlib.compress(raw, 9)).decode("ascii")})
            by_path[key] = by_digest[digest]
        of_item[f] = by_path[key]
    return table, of_item


def _bounds(pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    xyz = np.concatenate([pose[..., :3].reshape(len(pose), -1, 3), points], axis=1)
    if xyz.shape[1] == 0:
        return np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]])
    flat = xyz.reshape(-1, 3)
    return np.array([flat.min(axis=0), flat.max(axis=0)])


class Viewer:
    """A trajectory in a scene, as one self-contained HTML page (three.js inlined, no network).

    ``save(path)`` writes it, ``to_html()`` returns it, Jupyter shows it inline
    (``_repr_html_``, in an iframe).  ``data`` holds the numbers sent to the page:
    ``t`` (k,), ``pose`` (k, F, 8), ``points`` (k, P, 3), ``names``, ``frames``.
    """

    def __init__(self, data: dict[str, Any], title: str, height: int = 520):
        self.data = data
        self.title = title
        self.height = int(height)

    # -- what the page needs
    def _payload(self) -> dict[str, Any]:
        d = self.data
        return {
            "title": self.title, "t": _b64(d["t"], "<f8"), "frames": d["frames"],
            "pose": _b64(d["pose"], "<f4"), "points": d["names"], "pts": _b64(d["points"], "<f4"),
            "lines": d["lines"], "traces": d["traces"], "world": d["world"], "follow": d["follow"],
            "bounds_all": d["bounds_all"], "size": d["size"],
            "ground": d["ground"], "autoplay": d["autoplay"], "background": BACKGROUND,
            "line_color": LINE_COLOR, "trace_colors": TRACE_COLORS, "meshes": d.get("meshes", []),
        }

    def to_html(self) -> str:
        """The page: one HTML document with three.js, the viewer script and the data inlined."""
        payload = json.dumps(self._payload(), separators=(",", ":")).replace("</", "<\\/")
        title = html.escape(self.title)
        speeds = "".join(f'<option value="{s}"{" selected" if s == 1 else ""}>{s:g}x</option>'
                         for s in (0.1, 0.25, 0.5, 1, 2, 4))
        return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:">
<title>{title}</title>
<style>
html, body {{ margin: 0; height: 100%; font: 13px system-ui, sans-serif; color: #222; background: {BACKGROUND}; }}
#symbody-view {{ position: absolute; inset: 0 0 42px 0; overflow: hidden; }}
#symbody-view canvas {{ display: block; }}
#symbody-title {{ position: absolute; left: 10px; top: 8px; font-weight: 600; pointer-events: none; }}
#symbody-help {{ position: absolute; right: 10px; top: 8px; color: #667; pointer-events: none; }}
#symbody-message {{ display: none; position: absolute; left: 10px; top: 32px; color: #b00; }}
#symbody-bar {{ position: absolute; left: 0; right: 0; bottom: 0; height: 42px; display: flex; gap: 10px;
  align-items: center; padding: 0 10px; box-sizing: border-box; background: #e6e9ee; border-top: 1px solid #cfd4db; }}
#symbody-slider {{ flex: 1; min-width: 60px; }}
#symbody-time {{ font-variant-numeric: tabular-nums; min-width: 150px; }}
button, select {{ font: inherit; }}
</style></head>
<body>
<div id="symbody-view"></div>
<div id="symbody-title">{title}</div>
<div id="symbody-help">drag: orbit &middot; right-drag: pan &middot; wheel: zoom &middot; space: play/pause</div>
<div id="symbody-message"></div>
<div id="symbody-bar">
<button id="symbody-play" type="button">&#9654; play</button>
<input id="symbody-slider" type="range" aria-label="time">
<span id="symbody-time"></span>
<label>speed <select id="symbody-speed">{speeds}</select></label>
<label>follow <select id="symbody-follow"><option value="">(none)</option></select></label>
<label><input id="symbody-axes" type="checkbox"> axes</label>
</div>
<script type="application/json" id="symbody-data">{payload}</script>
<script>{_asset("vendor", "three-meshes.min.js" if self.data.get("meshes") else "three.min.js")}</script>
<script>{_asset("viewer.js")}</script>
</body></html>
"""

    def save(self, path: str | Path) -> Path:
        """Write the page to ``path`` (``.html`` added when there is no suffix); returns the path."""
        path = Path(path)
        if not path.suffix:
            path = path.with_suffix(".html")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_html(), encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.to_html(), quote=True)}" '
                f'style="width: 100%; height: {self.height}px; border: 1px solid #ccd;" '
                f'title="{html.escape(self.title)}"></iframe>')

    def __repr__(self) -> str:
        d = self.data
        return (f"<Viewer {self.title!r}: {len(d['t'])} samples, {len(d['frames'])} shapes, "
                f"{len(d['names'])} named points>")


def _scene_of(scene: Any) -> Scene:
    if isinstance(scene, Scene):
        return scene
    model_scene = getattr(scene, "scene", None)
    if isinstance(model_scene, Scene):
        return model_scene
    if getattr(scene, "points", None) is not None and getattr(scene, "lines", None) is not None:
        return Scene.from_drawing(scene)
    raise InputError(f"view needs a Scene, a zoo Model (with .scene) or a Drawing, got {type(scene).__name__}")


def view(trajectory: Any, scene: Any, *, constants: Mapping | Sequence | None = None,
         fps: float | None = None, max_samples: int = DEFAULT_MAX_SAMPLES, title: str | None = None,
         follow: str | None = None, axes: bool = False, autoplay: bool = True,
         height: int = 520, max_mesh_bytes: int = DEFAULT_MAX_MESH_BYTES) -> Viewer:
    """A 3D view of ``trajectory`` in ``scene`` (a :class:`Scene`, a zoo Model or a Drawing).

    ``constants``: values for the constants in the scene (default: the trajectory's).
    ``fps``: resample at this many samples per simulated second (q from the trajectory's
    dense output, or linearly between samples, segment by segment); default: the
    trajectory's own samples, at most ``max_samples`` (resampled beyond).  Each impact
    (a start of ``trajectory.segments``) is kept as two samples, just before and at it,
    so the player never blends the states on its two sides.
    ``follow``: the visualization frame the camera follows (default: the scene's).
    ``axes``: show every frame's axes.  Mesh shapes' files are embedded in the page
    (zlib-compressed, each file once), at most ``max_mesh_bytes`` bytes of them (before
    compression).  Returns a :class:`Viewer`.
    """
    from ._trajectory_evaluation import resampled, segment_starts, with_impact_times

    sc = _scene_of(scene)
    t = np.asarray(trajectory.t, dtype=float)
    if t.size == 0:
        raise InputError("the trajectory has no samples to view")
    times = None
    if fps is not None:
        fps = float(fps)
        if not (np.isfinite(fps) and fps > 0):
            raise InputError(f"fps must be a positive number, got {fps!r}")
        count = int(np.floor((t[-1] - t[0]) * fps + 1e-9)) + 1
        times = np.linspace(t[0], t[0] + (count - 1) / fps, count) if count > 1 else t[:1]
        if len(times) > max_samples:
            raise InputError(f"{len(times)} samples at fps={fps:g} exceed max_samples={max_samples}; "
                             "lower fps or raise max_samples")
    elif len(t) > max_samples:
        times = np.linspace(t[0], t[-1], int(max_samples))
    elif len(segment_starts(trajectory)):
        times = t
    if times is not None:
        # the impacts (segment starts) are kept as a pair of samples: the player never
        # blends the states before and after one
        trajectory = resampled(trajectory, with_impact_times(trajectory, times))
    samples = scene_samples(trajectory, sc, constants)
    pose, points = samples["pose"], samples["points"]
    bounds_first = _bounds(pose[:1], points[:1])
    bounds_all = _bounds(pose, points)
    size = float(np.max(bounds_first[1] - bounds_first[0]))
    if size <= 0:
        size = max(float(np.max(bounds_all[1] - bounds_all[0])), 1.0)
    meshes, mesh_of = _mesh_table(sc.visualization_frames, int(max_mesh_bytes))
    frames = []
    for f, (item, dims) in enumerate(zip(sc.visualization_frames, samples["sizes"], strict=True)):
        segment = isinstance(item, Segment)
        shape_kind = "cylinder" if segment else item.shape.kind
        color = item.color if segment else item.shape.color
        opacity = item.opacity if segment else item.shape.opacity
        dims = dict(dims)
        for key, value in dims.items():
            if value is None:
                dims[key] = (AUTO_ROD if segment or shape_kind in ("cylinder", "cone") else AUTO_SPHERE) * size
        if segment:
            dims["length"] = 1.0
        axes_length = item.axes if isinstance(item.axes, (int, float)) and not isinstance(item.axes, bool) \
            else AUTO_AXES * size
        frames.append({"name": item.name, "kind": shape_kind, "dims": dims, "color": color,
                       "opacity": opacity, "segment": segment, "axes": bool(item.axes) or axes,
                       "axes_length": float(axes_length)})
        if f in mesh_of:
            frames[-1].update(mesh=mesh_of[f], scale=list(item.shape.scale))
    follow_name = sc.follow if follow is None else (follow or None)
    if follow_name is not None and follow_name not in [f["name"] for f in frames]:
        raise InputError(f"follow={follow_name!r} is not a visualization frame of the scene; known: "
                         f"{', '.join(f['name'] for f in frames) or '(none)'}")
    data = {"t": samples["t"], "pose": pose, "points": points, "names": samples["names"],
            "frames": frames, "lines": [list(line) for line in sc.lines], "traces": list(sc.traces),
            "world": _world_quaternion(sc.up), "follow": follow_name,
            "bounds_all": bounds_all.tolist(), "bounds_first": bounds_first.tolist(), "size": size,
            "ground": sc.ground, "autoplay": bool(autoplay), "meshes": meshes}
    name = title if title is not None else (sc.name or "symbody")
    return Viewer(data, name, height=height)
