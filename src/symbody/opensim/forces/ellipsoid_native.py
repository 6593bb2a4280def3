"""OpenSim 4.6's ``WrapEllipsoid::wrapLine`` on doubles, compiled (``ellipsoid_wrap.c``).

The fixed program of :mod:`.wrap_ellipsoid` (its docstring says what OpenSim computes) with
its loops as real loops in C, each stopped by OpenSim's own test at OpenSim's own iteration
limit (Newton 64, the 2-D ellipse's 64 passes, ``calcTangentPoint`` 50 outer and 1000 inner):
the same numbers as :class:`~.wrap_ellipsoid.FloatArithmetic` where that converges within its
unrolled counts, and OpenSim's where it would need more.  The source is a small CPython
extension built on first use with the system's C compiler and cached like the kernels
(:class:`~symbody.compilation.python_extension.PythonExtension`); without a compiler the
same program runs on Python floats (milliseconds per call instead of microseconds).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np

from ...compilation.python_extension import PythonExtension
from .wrap_ellipsoid import FloatArithmetic, ellipsoid_wrap

__all__ = ["wrap_ellipsoid_native", "METHODS", "WRAP_C_FLAGS"]

#: the wrap methods in the C routine's numbering
METHODS = {"hybrid": 0, "axial": 1, "midpoint": 2}

#: the compiler flags of every build of ``ellipsoid_wrap.c`` (here, :mod:`.multi_wrap`): no
#: contraction into fused multiply-adds (each result is OpenSim's operation sequence to the
#: bit); no ``errno`` from ``sqrt`` (its result is the same; the fan's square roots vectorize);
#: -O3 (no reassociation: the same bits, the path over several objects ~1.25x faster)
WRAP_C_FLAGS = "-O3 -ffp-contract=off -fno-math-errno"

_SOURCE = resources.files(__package__).joinpath("ellipsoid_wrap.c").read_text()
_EXTENSION = PythonExtension("symbody_ellipsoid_wrap", _SOURCE, "ellipsoid-wrap", opt=WRAP_C_FLAGS)


def _module() -> Any | None:
    return _EXTENSION.module()


def wrap_ellipsoid_native(dims: Any, axis: int, sign: int, method: str, P1: Any,
                          P2: Any) -> tuple:
    """(wraps, r1 (3), r2 (3), s) of segment P1-P2 (ellipsoid frame) over the ellipsoid of
    radii ``dims``, quadrant ``axis``/``sign`` (sign 0: all), ``method`` hybrid/axial/
    midpoint: OpenSim's ``mandatoryWrap``, the tangent points (ellipsoid frame) and the
    length over the surface (NaN where it does not wrap)."""
    module = _module()
    a = [float(x) for x in dims]
    p1, p2 = [float(x) for x in P1], [float(x) for x in P2]
    if module is not None:
        out = module.wrap(*a, int(axis), int(sign), METHODS[method], *p1, *p2)
        return out[0], np.array(out[1:4]), np.array(out[4:7]), out[7]
    wraps, r1, r2, s = ellipsoid_wrap(FloatArithmetic(), a, axis, sign, method, p1, p2)
    if not wraps:
        nan = np.full(3, np.nan)
        return False, nan, nan.copy(), float("nan")
    return True, np.array(r1, dtype=float), np.array(r2, dtype=float), float(s)
