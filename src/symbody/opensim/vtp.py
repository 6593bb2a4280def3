"""VTK PolyData (``.vtp``) meshes, OpenSim's geometry format, as OBJ files the viewer reads.

:func:`read_vtp` returns the points (n x 3) and triangles (m x 3, indices) of a ``.vtp`` file:
``ascii`` data arrays (every ``.vtp`` of opensim-models is ascii; a ``binary`` or
``appended`` one is refused with a message saying how to convert it); polygons are split
into fans of triangles and triangle strips into triangles.  :func:`vtp_as_obj` writes the mesh as
a Wavefront OBJ in the cache (``$SYMBODY_CACHE_DIR/meshes``, keyed by the file's bytes) so
that :class:`symbody.scene.Mesh` draws it.
"""

from __future__ import annotations

import hashlib
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import InputError

__all__ = ["read_vtp", "vtp_as_obj"]

_TYPES = {"Float32": "<f4", "Float64": "<f8", "Int8": "<i1", "UInt8": "<u1", "Int16": "<i2",
          "UInt16": "<u2", "Int32": "<i4", "UInt32": "<u4", "Int64": "<i8", "UInt64": "<u8"}


def read_vtp(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 3), triangles (m, 3)) of a VTK PolyData file."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise InputError(f"{path}: not a readable VTK PolyData file ({exc})") from None
    if root.tag != "VTKFile" or root.get("type") != "PolyData":
        raise InputError(f"{path}: not a VTK PolyData file (<VTKFile type=\"PolyData\">)")
    def array(el) -> np.ndarray:
        dtype = _TYPES.get(el.get("type", "Float32"))
        if dtype is None:
            raise InputError(f"{path}: data type {el.get('type')!r} is not supported")
        fmt = el.get("format", "ascii")
        if fmt == "ascii":
            return np.array((el.text or "").split(), dtype=float)
        raise InputError(f"{path}: {fmt} data arrays are not supported; write the file with "
                         "ascii data (VTK: vtkXMLPolyDataWriter.SetDataModeToAscii(), as "
                         "opensim-models' Geometry/vtpbinary2ascii.py does)")

    points_list, tris = [], []
    base = 0
    for piece in root.iter("Piece"):
        pts = piece.find("Points/DataArray")
        if pts is None:
            continue
        P = array(pts).reshape(-1, 3)
        for kind in ("Polys", "Strips"):
            cells = piece.find(kind)
            if cells is None:
                continue
            arrays = {a.get("Name"): a for a in cells.findall("DataArray")}
            if "connectivity" not in arrays or "offsets" not in arrays:
                continue
            conn = array(arrays["connectivity"]).astype(np.int64)
            offs = array(arrays["offsets"]).astype(np.int64)
            start = 0
            for end in offs:
                cell = conn[start:end] + base
                start = end
                if kind == "Polys":
                    tris += [(cell[0], cell[i], cell[i + 1]) for i in range(1, len(cell) - 1)]
                else:
                    tris += [(cell[i], cell[i + 1], cell[i + 2]) if i % 2 == 0 else
                             (cell[i + 1], cell[i], cell[i + 2]) for i in range(len(cell) - 2)]
        points_list.append(P)
        base += len(P)
    if not points_list:
        raise InputError(f"{path}: no points")
    return np.vstack(points_list), np.array(tris, dtype=np.int64).reshape(-1, 3)


def vtp_as_obj(path: str | Path, folder: Path | None = None) -> Path:
    """The mesh of a ``.vtp`` file written as OBJ (cached by the file's content)."""
    path = Path(path)
    if folder is None:
        from ..compilation.cache import cache_dir
        folder = cache_dir() / "meshes"
    data = path.read_bytes()
    key = hashlib.blake2b(data, digest_size=16).hexdigest()
    out = Path(folder) / f"{path.stem}-{key}.obj"
    if out.exists():
        return out
    P, T = read_vtp(path)
    lines = [f"# {path.name} (VTK PolyData) as OBJ"]
    lines += [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in P]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in T]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(out)
    return out
