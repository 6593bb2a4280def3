"""OpenSim's WrapEllipsoid program (forces/wrap_ellipsoid.py) against OpenSim 4.6.

BIClong of Arm26 wraps its segment P2-P3 over the ellipsoid 'BIClonghh' (hybrid method,
quadrant -y): the program on floats, with the segment's ends placed in the ellipsoid's frame
from OpenSim's own path points, must give OpenSim's ``getLength`` to round-off at random
states, wrapping or not; and the symbolic program must evaluate to the float program (the
axial method, whose expression compiles in about a second; the hybrid's fan does not: its
298 unrolled Newton solves make ~370 000 operations)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import symengine as se

from symbody.opensim import load_opensim
from symbody.opensim.forces import wrap_ellipsoid as W
from symbody.opensim.model_spec import body_fixed_xyz
from systems.opensim_oracle import ask_opensim, opensim_installed

ARM26 = Path(__file__).resolve().parents[1] / "data" / "opensim" / "arm26.osim"


def _numbers(el, tag):
    return np.array([float(x) for x in el.find(tag).text.split()])


def _arm26_parts():
    root = ET.parse(ARM26).getroot()
    wrap = next(w for w in root.iter("WrapEllipsoid") if w.get("name") == "BIClonghh")
    R = body_fixed_xyz(_numbers(wrap, "xyz_body_rotation"))
    humerus = {p.get("name"): _numbers(p, "location") for p in root.iter("PathPoint")
               if p.find("socket_parent_frame").text.endswith("/r_humerus")}
    muscle = next(m for m in root.iter("Thelen2003Muscle")
                  if m.get("name") == "BIClong")
    biclong = [p.get("name") for p in muscle.iter("PathPoint")]
    return R, _numbers(wrap, "translation"), tuple(_numbers(wrap, "dimensions")), humerus, \
        biclong


def _rigid_fit(body: np.ndarray, ground: np.ndarray) -> tuple:
    """(R, p) with ground = body R^T + p (Kabsch, exact points: round-off)."""
    cb, cg = body.mean(0), ground.mean(0)
    U, _, Vt = np.linalg.svd((body - cb).T @ (ground - cg))
    R = (U @ Vt).T
    if np.linalg.det(R) < 0:
        U[:, -1] *= -1
        R = (U @ Vt).T
    return R, cg - R @ cb


@pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
def test_float_program_gives_opensims_biclong_length():
    Rw, pw, dims, humerus, points = _arm26_parts()
    model = load_opensim(ARM26)
    rng = np.random.default_rng(5)
    qs = [model.random_coordinates(rng) for _ in range(16)]
    names = list(humerus) + points
    queries = []
    for q in qs:
        Q = model.to_opensim_state(q)[0].tolist()
        queries += [{"kind": "points", "Q": Q, "names": names},
                    {"kind": "muscles", "Q": Q, "names": ["BIClong"], "coordinates": []}]
    answers = ask_opensim(ARM26, queries, without_forces=False)
    o = W.FloatArithmetic()
    worst, wrapped = 0.0, 0
    for k in range(len(qs)):
        ground = np.array(answers[2 * k])
        L_os = answers[2 * k + 1]["lengths"][0]
        R, p = _rigid_fit(np.array(list(humerus.values())), ground[:len(humerus)])
        G = ground[len(humerus):]
        ends = [Rw.T @ (R.T @ (G[i] - p) - pw) for i in (1, 2)]      # P2, P3: range 2 3
        wraps, r1, r2, s = W.ellipsoid_wrap(o, dims, 1, -1, "hybrid", *map(list, ends))
        L = sum(np.linalg.norm(G[i + 1] - G[i]) for i in range(len(G) - 1))
        if wraps:
            wrapped += 1
            L += (np.linalg.norm(np.array(r1) - ends[0]) + s
                  + np.linalg.norm(ends[1] - np.array(r2)) - np.linalg.norm(ends[1] - ends[0]))
        worst = max(worst, abs(L - L_os) / L_os)
    assert 3 <= wrapped <= len(qs) - 3      # both kinds of state
    assert worst < 1e-12


def test_symbolic_program_evaluates_to_the_float_program(monkeypatch):
    """The same program as symengine expressions (axial method, quadrant +z; loops unrolled
    fewer times, on both sides, to keep symengine's cse short) at segments that wrap,
    near-miss and cross a quadrant."""
    for name, steps in (("ELLIPSE_STEPS", 12), ("TANGENT_STEPS", 8), ("DOUBLING_STEPS", 6)):
        monkeypatch.setattr(W, name, steps)
    x = se.symbols("x0:6")
    dims = (0.035, 0.02, 0.02)
    wraps, r1, r2, s = W.ellipsoid_wrap(W.SymbolicArithmetic(), dims, 2, 1, "axial",
                                        list(x[:3]), list(x[3:]))
    f = se.Lambdify(list(x), [W.SymbolicArithmetic().where(wraps, 1.0, 0.0), s, *r1, *r2],
                    cse=True, real=True, backend="lambda")
    rng = np.random.default_rng(3)
    o, seen = W.FloatArithmetic(), 0
    for _ in range(25):
        P1 = rng.normal(size=3) * 0.04 + np.array([0.0, 0.0, 0.01])
        P2 = -P1 + rng.normal(size=3) * 0.01
        w, a1, a2, sf = W.ellipsoid_wrap(o, dims, 2, 1, "axial", list(P1), list(P2))
        out = np.asarray(f(np.concatenate([P1, P2])), dtype=float).ravel()
        assert out[0] == float(w)
        if w:
            assert math.isnan(out[1]) == math.isnan(sf)
        if w and not math.isnan(sf):
            seen += 1
            np.testing.assert_allclose(out[1:], [sf, *a1, *a2], rtol=1e-12, atol=1e-15)
    assert seen >= 10
