"""The compiled WrapEllipsoid routine (forces/ellipsoid_wrap.c) against the fixed program on
floats (forces/wrap_ellipsoid.py's FloatArithmetic, itself checked against OpenSim 4.6's
lengths in test_wrap_ellipsoid.py): every method and quadrant, at random segments crossing
an ellipsoid of Arm26's BIClonghh's radii, the same outcome, tangent points and surface
length to round-off."""

from __future__ import annotations

import math
from pathlib import Path

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


REFERENCE = Path(__file__).resolve().parents[1] / "data" / "opensim" / "ellipsoid_wrap_reference.c"
CALLS = Path(__file__).resolve().parents[1] / "data" / "opensim" / "arm26_ellipsoid_calls.npz"


@pytest.fixture(scope="module")
def reference():
    """The routine before its fan was vectorized (tests/data/opensim/ellipsoid_wrap_reference.c,
    frozen), built with the flags it had then."""
    from symbody.compilation.python_extension import PythonExtension

    name = "symbody_ellipsoid_wrap_reference"
    source = REFERENCE.read_text().replace("symbody_ellipsoid_wrap", name)
    module = PythonExtension(name, source, "ellipsoid-wrap-reference",
                             opt="-O2 -ffp-contract=off").module()
    if module is None or N._module() is None:
        pytest.skip("no C compiler for the extension")
    return module


def _calls():
    """Arm26's recorded calls (tests/data/opensim/README.md) and random segments over both of
    its ellipsoids: every method, axis and quadrant, most crossing the ellipsoid."""
    data = np.load(CALLS)
    for row in np.concatenate([data["biclong"], data["trilong"]]):
        yield tuple(row[:3]), int(row[3]), int(row[4]), int(row[5]), row[6:9], row[9:12]
    rng = np.random.default_rng(7)
    for k in range(600):
        d = np.array(((0.035, 0.02, 0.02), (0.025, 0.02, 0.02))[k % 2])
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        c = rng.uniform(-0.8, 0.8, 3) * d
        P1, P2 = c + u * rng.uniform(0.02, 0.15), c - u * rng.uniform(0.02, 0.15)
        if k % 9 == 0:
            P2 = P1 + 0.3 * (P2 - P1)
        yield tuple(d), int(rng.integers(3)), int(rng.integers(-1, 2)), int(k % 5 % 3), P1, P2


VARIANTS = {"baseline only": " -DFAN_CLONES=", "AVX2 intrinsics, no AVX-512": " -DFAN_NO_AVX512",
            "clones, no intrinsics": " -DFAN_NO_INTRINSICS"}


@pytest.mark.parametrize("variant", ["as built", *VARIANTS])
def test_the_routine_gives_the_frozen_reference_bits(reference, variant):
    """Every output (wraps, r1, r2, s) of the vectorized routine is bitwise the frozen
    reference's, at Arm26's recorded calls and random segments (OpenSim's stopped iterates:
    a changed operation order would move the wrap plane): as the library builds it (the
    processor's widest variant of the fan: fan_sum_avx512 on AVX-512, fan_sum_avx2 on AVX2),
    built without the AVX-512 intrinsics (fan_sum_avx2 on an AVX2 machine), with the generic
    vectors' clones only (their AVX2 variant on an AVX2 machine), and with the baseline only."""
    module = N._module()
    if variant in VARIANTS:
        from symbody.compilation.python_extension import PythonExtension

        tag = {"baseline only": "baseline", "clones, no intrinsics": "clones"}.get(variant, "avx2")
        name = f"symbody_ellipsoid_wrap_{tag}"
        module = PythonExtension(name, N._SOURCE.replace("symbody_ellipsoid_wrap", name),
                                 f"ellipsoid-wrap-{tag}",
                                 opt=N.WRAP_C_FLAGS + VARIANTS[variant]).module()
    wrapped = 0
    for dims, axis, sign, method, P1, P2 in _calls():
        args = (*dims, axis, sign, method, *P1, *P2)
        ours, ref = module.wrap(*args), reference.wrap(*args)
        assert ours[0] == ref[0], args
        assert np.array(ours[1:]).tobytes() == np.array(ref[1:]).tobytes(), args
        wrapped += bool(ours[0])
    assert wrapped >= 600
