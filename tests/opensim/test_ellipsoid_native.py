"""The compiled WrapEllipsoid routine (forces/ellipsoid_wrap.c) against the fixed program on
floats (forces/wrap_ellipsoid.py's FloatArithmetic, itself checked against OpenSim 4.6's
lengths in test_wrap_ellipsoid.py): every method and quadrant, at random segments crossing
an ellipsoid of Arm26's BIClonghh's radii, the same outcome, tangent points and surface
length to round-off."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symbody.opensim.forces import ellipsoid_native as N
from symbody.opensim.forces import wrap_ellipsoid as W

DIMS = (0.035, 0.02, 0.02)


def _segments(n: int, seed: int):
    rng = np.random.default_rng(seed)
    d = np.array(DIMS)
    for k in range(n):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        c = rng.uniform(-0.6, 0.6, 3) * d          # the line passes inside the ellipsoid
        P1 = c + u * rng.uniform(0.03, 0.15)
        P2 = c - u * rng.uniform(0.03, 0.15)
        if k % 7 == 0:                              # and segments that miss it
            P2 = P1 + 0.3 * (P2 - P1)
        yield ("hybrid", "axial", "midpoint")[k % 3], int(rng.integers(3)), \
            int(rng.integers(-1, 2)), P1, P2


@pytest.mark.skipif(N._module() is None, reason="no C compiler for the extension")
def test_c_routine_matches_the_float_program():
    o = W.FloatArithmetic()
    wrapped = compared = 0
    for method, axis, sign, P1, P2 in _segments(110, 3):
        wraps, r1, r2, s = N.wrap_ellipsoid_native(DIMS, axis, sign, method, P1, P2)
        ref = W.ellipsoid_wrap(o, DIMS, axis, sign, method, list(P1), list(P2))
        assert bool(wraps) == bool(ref[0]), (method, axis, sign, P1, P2)
        if not wraps:
            assert math.isnan(s)
            continue
        wrapped += 1
        if math.isnan(ref[3]):        # the fixed program would need more unrolled steps
            continue
        compared += 1
        scale = max(DIMS)
        assert np.abs(r1 - ref[1]).max() <= 1e-14 * scale
        assert np.abs(r2 - ref[2]).max() <= 1e-14 * scale
        assert s == pytest.approx(ref[3], rel=1e-14, abs=1e-14 * scale)
    assert compared >= 80 and wrapped - compared <= 3


def test_python_fallback_gives_the_same_tuple(monkeypatch):
    method, axis, sign, P1, P2 = list(_segments(2, 4))[1]
    monkeypatch.setattr(N, "_module", lambda: None)
    wraps, r1, r2, s = N.wrap_ellipsoid_native(DIMS, axis, sign, method, P1, P2)
    ref = W.ellipsoid_wrap(W.FloatArithmetic(), DIMS, axis, sign, method, list(P1), list(P2))
    assert wraps and np.array_equal(r1, ref[1]) and s == ref[3]
