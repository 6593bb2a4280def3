"""The Whipple bicycle against the benchmark of Meijaard, Papadopoulos, Ruina and Schwab (2007).

Reference numbers (Tables 1 and 2, the linearized coefficient matrices and the
characteristic speeds) are in tests/data/whipple_benchmark.json, copied from
Proc. R. Soc. A 463:1955-1982, doi:10.1098/rspa.2007.1857.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sm
from scipy.optimize import brentq

import symbody as sb
from symbody.models.whipple_bicycle import (
    benchmark_parameters,
    benchmark_to_constants,
    lean_steer_states,
    whipple_bicycle,
    whipple_bicycle_system,
)

REF = json.loads((Path(__file__).parents[1] / "data" / "whipple_benchmark.json").read_text())
t = sm.Symbol("t")


@pytest.fixture(scope="module")
def bicycle():
    return whipple_bicycle()


def evaluate(M: sm.Matrix, values: dict) -> np.ndarray:
    """A big symbolic matrix at numbers (through symengine: sympy would walk the expression tree)."""
    import symengine as se

    from symbody.formulation.symbolic_linearization import to_symengine

    subs = {se.sympify(k): se.RealDouble(float(val)) for k, val in values.items()}
    flat = [float(e.xreplace(subs)) for e in to_symengine(list(M))]
    return np.array(flat).reshape(M.shape)


def lean_steer_matrix(model, v: float) -> np.ndarray:
    """A of the states [roll, steer, roll rate, steer rate] at forward speed v (upright, straight)."""
    A, _ = sb.linearize(model, model.operating_point({"v": v}))
    idx, _ = lean_steer_states(model)
    return A[np.ix_(idx, idx)]


def modes(model, v: float) -> dict:
    """Eigenvalues sorted into the benchmark's modes: weave (complex pair), capsize, castor (real)."""
    ev = np.linalg.eigvals(lean_steer_matrix(model, v))
    complex_ = ev[np.abs(ev.imag) > 1e-9]
    real = np.sort(ev[np.abs(ev.imag) <= 1e-9].real)
    out = {"real": real}
    if len(complex_) == 2:
        out["weave"] = complex_[np.argmax(complex_.imag)]
        out["castor"], out["capsize"] = real[0], real[1]
    return out


def test_parameters_map_to_the_test_kane3_geometry():
    """The benchmark -> model mapping agrees with SymPy's test_kane3 (evaluated with sympy)."""
    c = benchmark_to_constants()
    bp = benchmark_parameters()
    HTA = (sm.pi / 2 - sm.pi / 10).evalf(30)
    rF, rR, w, trail = 0.35, 0.3, 1.02, 0.08
    rake = (-(trail * sm.sin(HTA) - (rF * sm.cos(HTA)))).evalf(30)
    frame_length = (w * sm.sin(HTA) - (rake - (rF - rR) * sm.cos(HTA))).evalf(30)
    frame_cg_norm = ((0.9 - rR - (0.3 / sm.sin(HTA)) * sm.cos(HTA)) * sm.sin(HTA)).evalf(30)
    frame_cg_par = (0.3 / sm.sin(HTA) + (0.9 - rR - 0.3 / sm.sin(HTA) * sm.cos(HTA))
                    * sm.cos(HTA)).evalf(30)
    ta, tb = 0.7 - rF, w - 0.9
    tc = sm.sqrt(ta**2 + tb**2).evalf(30)
    fork_l = (w * sm.cos(HTA) - (rF - rR) * sm.sin(HTA)).evalf(30)
    fork_cg_norm = (rake + (tc * sm.sin(sm.pi / 2 - HTA - sm.acos(ta / tc)))).evalf(30)
    fork_cg_par = (tc * sm.cos((sm.pi / 2 - HTA) - sm.acos(ta / tc)) - fork_l).evalf(30)
    expected = {"h_a": HTA, "d_o": rake, "d_f": frame_length, "d_l": fork_l, "c_f1": frame_cg_norm,
                "c_f3": frame_cg_par, "c_h1": fork_cg_par, "c_h3": fork_cg_norm}
    for name, value in expected.items():
        assert c[name] == pytest.approx(float(value), rel=1e-14, abs=1e-15), name
    assert c["I_Bxz"] == -bp["IBxz"] and c["I_Hxz"] == -bp["IHxz"]
    with pytest.raises(sb.InputError, match="unknown benchmark parameter"):
        benchmark_to_constants({"wheelbase": 1.0})


def test_model_interface_and_consistent_upright_state(bicycle):
    eom = bicycle.eom
    assert [str(s.func) for s in eom.q_ind] == ["x", "y", "yaw", "roll", "steer"]
    assert [str(s.func) for s in eom.q_dep] == ["pitch"]
    assert [str(s.func) for s in eom.u_ind] == ["u_roll", "u_rear", "u_steer"]
    assert set(bicycle.constants) == set(eom.constants)
    assert bicycle.op_parameters == {"v": 5.0}
    op = bicycle.operating_point({"v": 4.0})
    values = {**bicycle.constants, **op}
    assert abs(float(eom.holonomic[0].xreplace(values))) < 1e-15
    # the dependent speeds of the operating point satisfy the velocity constraints
    u = sm.Matrix(eom.u).xreplace(values)
    res = (eom.velocity_matrix * u + eom.velocity_rest).xreplace(values)
    assert max(abs(float(e)) for e in res) < 1e-13
    assert set(bicycle.initial_state) == set(eom.q) | set(eom.u_ind)


def test_ignorable_states_decouple(bicycle):
    """Position, yaw and rear-wheel rate do not feed back into the lean and steer dynamics."""
    A, B = sb.linearize(bicycle, bicycle.operating_point({"v": 4.5}))
    assert A.shape == (8, 8) and B.shape == (8, 0)
    idx, _ = lean_steer_states(bicycle)
    others = [i for i in range(8) if i not in idx]
    assert np.abs(A[np.ix_(idx, others)]).max() < 1e-14 * np.abs(A).max()


def test_eigenvalues_match_table_2(bicycle):
    """Table 2 of the benchmark paper, v = 0 ... 10 m/s, to 1e-11 relative."""
    worst = 0.0
    for key, ref in REF["eigenvalues"].items():
        v = float(key)
        got = modes(bicycle, v)
        if "real" in ref:
            expected = np.sort(ref["real"])
            assert len(got["real"]) == 4
            rel = np.abs(got["real"] - expected) / np.abs(expected)
            worst = max(worst, rel.max())
            continue
        assert "weave" in got, f"no oscillating weave mode at v = {v}"
        pairs = [(got["weave"].real, ref["weave"][0]), (got["weave"].imag, ref["weave"][1]),
                 (got["capsize"], ref["capsize"]), (got["castor"], ref["castor"])]
        for value, expected in pairs:
            rel = abs(value - expected) / abs(expected)
            worst = max(worst, rel)
            assert rel < 1e-11, f"v = {v}: {value!r} vs {expected!r} (relative error {rel:.2e})"
    assert worst < 1e-11


def test_weave_and_capsize_speeds(bicycle):
    """The stable speed range [v_weave, v_capsize] by root finding, to 1e-9 relative."""
    speeds = REF["characteristic_speeds"]
    v_weave = brentq(lambda v: modes(bicycle, v)["weave"].real, 4.0, 5.0, xtol=1e-14, rtol=1e-15)
    v_capsize = brentq(lambda v: modes(bicycle, v)["capsize"], 5.5, 6.5, xtol=1e-14, rtol=1e-15)
    assert v_weave == pytest.approx(speeds["v_weave"], rel=1e-9)
    assert v_capsize == pytest.approx(speeds["v_capsize"], rel=1e-9)


def test_linearized_coefficient_matrices(bicycle):
    """A = [[0, I], [-M^-1 (g K0 + v^2 K2), -v M^-1 C1]] with the paper's M, C1, K0, K2."""
    M, C1 = np.array(REF["M"]), np.array(REF["C1"])
    K0, K2 = np.array(REF["K0"]), np.array(REF["K2"])
    g = REF["parameters"]["g"]
    for v in (0.0, 3.0, 7.5):
        A = lean_steer_matrix(bicycle, v)
        np.testing.assert_allclose(A[:2], [[0, 0, 1, 0], [0, 0, 0, 1]], atol=1e-15)
        stiff = np.linalg.solve(M, g * K0 + v**2 * K2)
        damp = np.linalg.solve(M, v * C1)
        np.testing.assert_allclose(-A[2:, :2], stiff, rtol=1e-11, atol=1e-11 * np.abs(stiff).max())
        np.testing.assert_allclose(-A[2:, 2:], damp, rtol=1e-11, atol=1e-11 * max(1.0, np.abs(damp).max()))


def test_symbolic_linearization_of_the_model(bicycle):
    """KanesMethod.linearize (symbolic forward speed) equals the numeric linearization."""
    km = bicycle.method
    v = sm.Symbol("v")
    named = {str(k): k for k in bicycle.constants}
    op = bicycle.operating_point({"v": 1.0})
    rR, rF = named["r_R"], named["r_F"]
    op_sym = {}
    for s, val in op.items():
        name = str(s.func)
        op_sym[s] = v / rR if name == "u_rear" else v / rF if name == "u_front" else val
        op_sym[s.diff()] = 0
    A, B, r = km.linearize(A_and_B=True, op_point=op_sym)
    assert A.shape == (8, 8) and B.shape == (0, 0) and r.shape == (0, 0)
    for speed in (0.5, 5.0):
        got = evaluate(A, {v: speed, **bicycle.constants})
        A_num, _ = sb.linearize(bicycle, bicycle.operating_point({"v": speed}))
        np.testing.assert_allclose(got, A_num, rtol=1e-11, atol=1e-11)


def test_symbolic_linearizer_on_sympys_own_bicycle(bicycle):
    """symbody's linearizer applied to SymPy's KanesMethod (test_kane3 form) gives the table."""
    from sympy.physics.mechanics import KanesMethod

    system, ex = whipple_bicycle_system()
    km = KanesMethod(system.frame, system.q_ind, system.u_ind, kd_eqs=system.kd_eqs,
                     q_dependent=system.q_dep,
                     configuration_constraints=system.configuration_constraints,
                     u_dependent=system.u_dep, velocity_constraints=system.velocity_constraints,
                     constraint_solver="CRAMER")
    km.kanes_equations(system.bodies, system.loads)
    S = ex["symbols"]
    x, y, yaw, roll, steer, pitch = ex["q"]
    u_roll, u_rear, u_steer, u_yaw, u_pitch, u_front = ex["u"]
    v = sm.Symbol("v")
    op = {s: 0 for s in ex["q"]}
    op.update({u_roll: 0, u_steer: 0, u_yaw: 0, u_pitch: 0, u_rear: v / S["r_R"],
               u_front: v / S["r_F"]})
    op.update({s.diff(): 0 for s in ex["u"]})
    A, _, _ = sb.formulation.symbolic_linearization.linearize_kane(km, op_point=op, A_and_B=True)
    consts = {S[k]: val for k, val in benchmark_to_constants().items()}
    idx = [3, 4, 5, 7]                    # roll, steer, u_roll, u_steer in [q_ind, u_ind]
    for key in ("2", "6"):
        ev = np.linalg.eigvals(evaluate(A.extract(idx, idx), {v: float(key), **consts}))
        ref = REF["eigenvalues"][key]
        assert np.min(np.abs(ev - ref["capsize"])) < 1e-10
        assert np.min(np.abs(ev - ref["castor"])) < 1e-10
        assert np.min(np.abs(ev - complex(*ref["weave"]))) < 1e-10


def test_other_bicycles_and_options(bicycle):
    """Benchmark parameters can be replaced; the forward speed is the op parameter v."""
    model = whipple_bicycle(v=3.0, parameters={"c": 0.1, "mB": 80.0})
    assert model.op_parameters == {"v": 3.0}
    u_rear = [s for s in model.initial_state if str(s.func) == "u_rear"][0]
    assert math.isclose(model.initial_state[u_rear], 3.0 / 0.3)
    named = {str(k): val for k, val in model.constants.items()}
    assert named["m_B"] == 80.0 and named["d_o"] != benchmark_to_constants()["d_o"]
    assert not np.allclose(lean_steer_matrix(model, 5.0), lean_steer_matrix(bicycle, 5.0))
    faster = bicycle.with_constants(v=6.0)
    assert faster.op_parameters["v"] == 6.0
    np.testing.assert_allclose(lean_steer_matrix(faster, 6.0), lean_steer_matrix(bicycle, 6.0),
                               rtol=1e-14, atol=1e-14)
    with pytest.raises(sb.InputError):
        whipple_bicycle(v=float("nan"))
