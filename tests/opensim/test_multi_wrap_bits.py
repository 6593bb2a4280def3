"""The path routine over several wrap objects (forces/multi_wrap.c over cylinder_wrap.c and
ellipsoid_wrap.c) as the library builds it, against the frozen routines before it was made
faster (tests/data/opensim/*_reference.c, built with the flags of then): length, path nodes
and body wrenches bitwise equal at TRIlong's recorded calls of a 1 s Arm26 simulation and at
random paths over random cylinders (every axis and quadrant, side 'all') and ellipsoids,
which wrap and do not, on one to three objects (one pass, the passes that repeat), with up
to 6 segments per object (the cylinder's calls run 4 segments at a time).  No
OpenSim needed: the frozen routines are the anchor (they agree with OpenSim 4.6:
test_opensim_multi_wrap.py, test_opensim_muscle_paths.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import symbody as sb
from symbody.opensim import load_opensim
from symbody.opensim.forces import multi_wrap
from systems import wrap_calls

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"


@pytest.fixture(scope="module")
def frozen():
    """The path module over the frozen routines (tests/systems/wrap_calls.py's build, shared
    with test_opensim_multi_wrap.py through the kernel cache)."""
    module = wrap_calls.frozen_build()
    if module is None or multi_wrap._module() is None:
        pytest.skip("no C compiler for the extension")
    return module


def _same(ours, ref) -> bool:
    return (ours[2] == ref[2]
            and np.array(ours[1:2] + ours[3]).tobytes() == np.array(ref[1:2] + ref[3]).tobytes())


def test_trilong_recorded_calls_give_the_frozen_bits(frozen):
    """Every 16th of TRIlong's 2563 path calls in the 1 s Arm26 run (RK45 at rtol 1e-7 from
    OpenSim's equilibrated start, excitations 0.3; tests/data/opensim/README.md)."""
    data = np.load(DATA / "arm26_trilong_paths.npz")
    pb, spec = list(data["point_bodies"]), list(data["wraps"])
    for pts, bodies in zip(data["points"], data["bodies"]):
        args = (list(pts), pb, list(bodies), spec)
        assert _same(multi_wrap._module().path(*args), frozen.path(*args))


def _rotation(rng) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.diag(r))


def _random_path(rng, k: int) -> tuple:
    """A path of 2 to 7 points on two moving bodies along a line through (or past) the first
    wrap object, over 1 to 3 objects (three in four cylinders), each in its own random
    frame; every 5th over a cylinder a two-point path symmetric about its axis."""
    bodies = [(_rotation(rng), rng.uniform(-0.1, 0.1, 3)) for _ in range(2)]
    m = 1 + k % 3
    spec = []
    centers = []
    for _ in range(m):
        kind = int(rng.uniform() < 0.25)
        body = int(rng.integers(2))
        Rb, ob = _rotation(rng), rng.uniform(-0.02, 0.02, 3)
        if kind == 0:
            par = (rng.uniform(0.005, 0.02), rng.uniform(0.02, 0.1), 0.0)
        else:
            par = tuple(rng.uniform(0.01, 0.04, 3))
        R, o = bodies[body]
        centers.append((R @ Rb, R @ ob + o, par))
        spec += [kind, 1.0, 0, 0, int(rng.integers(3)), int(rng.integers(-1, 2)),
                 int(rng.integers(3)) if kind else 0, float(m == 1), *par, body, *Rb.ravel(), *ob]
    n = 2 + int(rng.integers(6))
    _, cw, par = centers[0]
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    miss = rng.uniform(-1.5, 1.5) * max(par[:2]) * rng.normal(size=3)
    ts = np.sort(rng.uniform(-0.15, 0.15, n))
    pts = [cw + miss + t * u + rng.normal(scale=0.01, size=3) for t in ts]
    if k % 5 == 0 and spec[0] == 0:
        # P2 = P1 turned by pi about the first cylinder's axis, in a frame where the frame
        # changes are exact (body 0 and the wrap frame at the identity): the two tangent
        # pairs' angles equal or within 1e-9 (the comparison through acos)
        bodies[0] = (np.eye(3), np.zeros(3))
        spec[11:24] = [0, *np.eye(3).ravel(), 0.0, 0.0, 0.0]
        a = np.array([*rng.uniform(0.03, 0.1, 2) * rng.choice([-1, 1], 2), rng.uniform(-0.05, 0.05)])
        b = a * [-1.0, -1.0, 1.0] + [0.0, 0.0, rng.choice([0.0, 0.01])]
        n, pts = 2, [a, b + rng.choice([0.0, 1e-12, 1e-10]) * rng.normal(size=3)]
    for j in range(m):
        start = int(rng.integers(n)) if rng.uniform() < 0.15 else 0
        end = int(rng.integers(start, n)) if rng.uniform() < 0.15 else n - 1
        spec[24 * j + 2:24 * j + 4] = [start, end]
        spec[24 * j + 1] = float(rng.uniform() > 0.05)
    point_bodies = [float(rng.integers(2)) for _ in range(n)]
    pose = [v for R, o in bodies for v in (*R.ravel(), *o)]
    return ([float(v) for p in pts for v in p], point_bodies, [float(v) for v in pose],
            [float(v) for v in spec])


def test_random_paths_give_the_frozen_bits(frozen):
    rng = np.random.default_rng(5)
    wrapped = {(0, -1): 0, (0, 0): 0, (0, 1): 0, (1, None): 0}
    several_straight = 0
    for k in range(1500):
        args = _random_path(rng, k)
        ours, ref = multi_wrap._module().path(*args), frozen.path(*args)
        assert _same(ours, ref), (k, args)
        spec, n = args[3], len(args[1])
        m = len(spec) // 24
        for j in range(m):
            if -(2 * j + 1) in ours[2]:
                kind, sign = int(spec[24 * j]), int(spec[24 * j + 5])
                wrapped[(kind, None if kind else min(max(sign, -1), 1))] += 1
        several_straight += m > 1 and len(ours[2]) == n
    assert min(wrapped.values()) >= 15 and several_straight >= 300, (wrapped, several_straight)


def test_recorded_arm26_calls_replay_to_the_frozen_bits(frozen):
    """benchmarks/bench_wrap_calls.py's mechanism on 0.01 s of Arm26 (RK45, rtol 1e-6, from
    the default pose, activations 0.3): the recorder build records BIClong's ellipsoid_wrap
    and TRIlong's multi_path calls from inside the compiled steps (not none: the steps
    compute the paths in C), and their replay in C gives the frozen build's bits.  The
    recorder is built at -O0 (a fifth of -O3's compile time; without contraction the
    routines' bits do not depend on the optimization: the other tests here check the
    library's own build)."""
    recorder = wrap_calls.recording_build("-O0 -ffp-contract=off")

    def start(model):
        return np.concatenate([model.default_state(), np.tile([0.3, 0.1], 6)])

    recorded, sol = wrap_calls.record(
        recorder, lambda: load_opensim(DATA / "arm26.osim"), start, 0.01, 0.3,
        sb.Solver(rtol=1e-6, atol=1e-9, dense_output=False, method="RK45"))
    assert sol.status == 0
    for routine in wrap_calls.ROUTINES:
        calls, data = recorded[routine]
        assert calls > 0, routine
        ours = wrap_calls.replay(recorder, routine, data)[1]
        assert len(ours) > 0 and ours == wrap_calls.replay(frozen, routine, data)[1], routine
