"""Trajectory outputs: compiled expressions, specified inputs, constraint and auxiliary forces
along the trajectory; dense output sol(t); to_dataframe()."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import InputError

t = me.dynamicsymbols._t


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def test_energy_output_is_compiled_and_matches_evaluation(four_bar):
    zoo, model = four_bar
    sol = sb.simulate(model, (0.0, 2.0), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-10),
                      outputs={"E": zoo.energy, "u1_dot": model.speeds[0].diff(t)})
    E = sol.outputs["E"]
    assert E.shape == sol.t.shape
    # conservative linkage, rtol 1e-10 with projection: energy constant to ~1e-8 relative
    assert np.ptp(E) < 1e-7 * abs(E[0]) + 1e-9
    # the same expression evaluated by SymPy at one sample (an oracle, not the code path)
    i = len(sol.t) // 2
    vals = {s: v for s, v in zip(model.coordinates, sol.q[i])}
    vals.update({s: v for s, v in zip(model.speeds, sol.u[i])})
    vals.update(zoo.constants)
    assert E[i] == pytest.approx(float(zoo.energy.xreplace(vals)), rel=1e-12)
    ud, _ = model.accelerations(sol.q[i], sol.u[i], zoo.constants, sol.t[i])
    assert sol.outputs["u1_dot"][i] == pytest.approx(ud[0], rel=1e-12)


def test_constraint_forces_are_B_transpose_lambda(four_bar):
    zoo, model = four_bar
    sol = sb.simulate(model, (0.0, 0.5), zoo.initial_state, zoo.constants, outputs=["constraint_forces"])
    F = sol.outputs["constraint_forces"]
    assert F.shape == (len(sol.t), model.o)
    B = model.velocity_constraint_matrix(sol.q[3], zoo.constants, sol.t[3])
    np.testing.assert_allclose(F[3], B.T @ sol.multipliers[3], rtol=1e-12)


def test_auxiliary_forces_and_specifieds_along_the_trajectory():
    zoo = sb.models.two_particle_pendulum()
    model = sb.compile(zoo.eom)
    sol = sb.simulate(model, (0.0, 0.5), zoo.initial_state, zoo.constants, outputs=["auxiliary_forces"])
    names = [str(getattr(f, "func", f)).split("(")[0] for f in model.noncontributing]
    for name in names:
        key = next(k for k in sol.outputs if k == name or k.startswith(name))
        assert sol.outputs[key].shape == sol.t.shape and np.isfinite(sol.outputs[key]).all()
    i = 2
    ud, _ = model.accelerations(sol.q[i], sol.u[i], zoo.constants, sol.t[i])
    direct = model.auxiliary_forces(sol.q[i], sol.u[i], ud, zoo.constants, sol.t[i])
    got = [sol.outputs[k][i] for k in sol.outputs]
    np.testing.assert_allclose(got, direct, rtol=1e-12)

    q, u, F = me.dynamicsymbols("q u F")
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[1]]), sm.Matrix([q - F])))
    osc = sb.compile(eom)
    sol = sb.simulate(osc, (0.0, 1.0), [0.0, 0.0], [], specifieds=[sm.sin(3 * t)], outputs=["specifieds"])
    np.testing.assert_allclose(sol.outputs["F"], np.sin(3 * sol.t), rtol=1e-13, atol=1e-15)


def test_dense_output_between_steps(four_bar):
    zoo, model = four_bar
    sol = sb.simulate(model, (0.0, 2.0), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-10))
    ref = sb.simulate(model, (0.0, 2.0), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(rtol=1e-12, atol=1e-12),
                      t_eval=np.linspace(0.0, 2.0, 41))
    got = sol(ref.t)
    assert got.shape == ref.x.shape
    # cubic Hermite on DOP853's steps: error ~ h^4 max|x^(4)| / 384; the steps here are up to
    # h ~ 0.1 s and the rocker swings fast, so up to ~3e-4
    assert float(np.max(np.diff(sol.t))) > 0.02     # large steps: interpolation really tested
    np.testing.assert_allclose(got, ref.x, atol=3e-4)
    # C1: continuous across a sample
    ti, eps = sol.t[4], 1e-9
    assert np.all(np.abs(sol(ti + eps) - sol(ti - eps)) < 1e-6)
    assert np.array_equal(sol(sol.t[5]), sol.x[5])
    with pytest.raises(InputError, match="outside the trajectory's span"):
        sol(2.5)


def test_state_derivatives_at_the_samples_are_the_models_rhs(four_bar):
    """``sol.xdot`` (evaluated on first access, after the run) is the model's x' = f(t, x) at
    each sample: the same function the dense output's Hermite pieces rely on."""
    zoo, model = four_bar
    p = model.constants_array(zoo.constants)
    sol = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants)
    assert sol._xdot is None                       # nothing evaluated until asked for
    xdot = sol.xdot
    assert xdot.shape == sol.x.shape
    for i in (0, len(sol.t) // 2, len(sol.t) - 1):
        # the batch path (rhs_many) against the single-sample path: round-off only
        np.testing.assert_allclose(xdot[i], model.rhs(sol.t[i], sol.x[i], p), rtol=1e-12, atol=1e-12)
    assert sol.xdot is xdot                        # evaluated once
    # pickled (a sweep's trajectories come back from worker processes): x' travels as
    # numbers, without the model behind the lazy evaluation
    import pickle
    fresh = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants)
    blob = pickle.dumps(fresh)
    assert fresh._xdot is not None and fresh._xdot_source is None
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.xdot, xdot)
    assert b"NumericModel" not in blob


def test_to_dataframe_and_bad_outputs(four_bar):
    zoo, model = four_bar
    sol = sb.simulate(model, (0.0, 0.3), zoo.initial_state, zoo.constants, outputs={"E": zoo.energy})
    df = sol.to_dataframe()
    assert list(df.index) == list(sol.t)
    assert {"q1", "q2", "q3", "u1", "u2", "u3", "E", "multiplier[0]"} <= set(df.columns)
    assert np.array_equal(df["E"].to_numpy(), sol.outputs["E"])
    a = sm.Symbol("a")
    with pytest.raises(InputError, match="output 'bad' .*depends on a"):
        sb.simulate(model, (0.0, 0.1), zoo.initial_state, zoo.constants, outputs={"bad": a * model.coordinates[0]})
    with pytest.raises(InputError, match="unknown output 'forces'"):
        sb.simulate(model, (0.0, 0.1), zoo.initial_state, zoo.constants, outputs=["forces"])
