"""Redundant configuration constraints: more holonomic equations than dependent coordinates.

Bricard's 6R loop (IFToMM A04) formed with all five loop-closure equations (rank 4 on the
motion) against the independent reference of systems.iftomm_reference and the zoo's model
formed with four; small particle models for the over-constrained, unassemblable and
re-selection cases (their answers are exact)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import Particle, Point, ReferenceFrame, dynamicsymbols

import symbody as sb
from symbody.analysis.initial_state import InitialStateWarning
from symbody.compilation.redundant import OverconstrainedError, RedundantModel
from symbody.errors import FormulationError, InputError
from systems.iftomm_reference import a04_reference

T_END = 10.0


def _numeric(zoo, expr):
    e = sm.sympify(expr).xreplace(zoo.constants)
    return sm.lambdify([list(zoo.eom.q), list(zoo.eom.u)], e, "numpy")


@pytest.fixture(scope="module")
def bricard_runs():
    """The five- and the four-equation Bricard models over the benchmark's 10 s."""
    t = np.linspace(0.0, T_END, 201)
    z5 = sb.models.get("bricard", redundant=True)
    z4 = sb.models.get("bricard")
    m5, m4 = sb.compile(z5.eom), sb.compile(z4.eom)
    opts = dict(solver=sb.Solver(rtol=1e-10, atol=1e-10), t_eval=t)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s5 = sb.simulate(m5, (0.0, T_END), z5.initial_state, z5.constants, **opts)
    s4 = sb.simulate(m4, (0.0, T_END), z4.initial_state, z4.constants, **opts)
    return {"t": t, "z5": z5, "z4": z4, "m5": m5, "m4": m4, "s5": s5, "s4": s4,
            "warnings": [w for w in caught if issubclass(w.category, sb.RedundantConstraintWarning)]}


def test_kanes_method_takes_all_five_bricard_loop_equations_by_name(bricard_runs):
    z5, m5 = bricard_runs["z5"], bricard_runs["m5"]
    assert z5.eom.holonomic_names == ("loop_x", "loop_y", "loop_z", "axis_y", "axis_z")
    assert z5.eom.constraint_excess == 1 and z5.eom.M == 4 and z5.eom.velocity_matrix.rows == 5
    assert isinstance(m5, RedundantModel) and m5.M == 4 and len(m5.constraint_names) == 5
    assert z5.redundant_constraints == {}


def test_the_redundant_loop_equation_is_named_with_its_expression(bricard_runs):
    s5, z5 = bricard_runs["s5"], bricard_runs["z5"]
    assert s5.success, s5.message
    (w,) = bricard_runs["warnings"]
    text = str(w.message)
    assert "axis_y = " in text and "rank 4" in text and "minimum-norm" in text
    assert str(z5.eom.holonomic[3])[:40] in text
    assert s5.redundant_constraints == ("axis_y",)
    assert "redundant configuration constraints axis_y" in s5.message
    assert set(s5.redundancy.kept) == {"loop_x", "loop_y", "loop_z", "axis_z"}
    # watched along the run: rank 4 of 5 at every sample, every residual at round-off
    assert np.all(s5.constraint_rank == 4)
    assert np.max(np.abs(s5.constraint_residuals)) < 1e-12


def test_bricard_with_five_equations_meets_the_reference_and_conserves_energy(bricard_runs):
    t, s5, z5 = bricard_runs["t"], bricard_runs["s5"], bricard_runs["z5"]
    ref = a04_reference(t, rtol=1e-11)        # tighter than the run (1e-12 takes 4x longer and
    #                                           agrees with it to 1.3e-12 m)
    q, u = np.asarray(s5.q), np.asarray(s5.u)
    p3_of = [_numeric(z5, z5.outputs[k]) for k in ("x_P3", "y_P3", "z_P3")]
    p3 = np.column_stack([[float(f(a, b)) for a, b in zip(q, u, strict=True)] for f in p3_of])
    assert np.max(np.abs(p3 - ref["P3"])) < 1e-6           # the benchmark asks 1e-4 m
    assert np.ptp(p3[:, 0]) > 1.0
    energy_of = _numeric(z5, z5.energy)
    energy = np.array([float(energy_of(a, b)) for a, b in zip(q, u, strict=True)])
    assert np.max(np.abs(energy - energy[0])) / (5 * 9.81) < 1e-6


def test_five_equations_give_the_four_equation_answer(bricard_runs):
    s5, s4 = bricard_runs["s5"], bricard_runs["s4"]
    assert np.max(np.abs(np.asarray(s5.q) - np.asarray(s4.q))) < 1e-8
    assert np.max(np.abs(np.asarray(s5.u) - np.asarray(s4.u))) < 1e-7
    # another independent four (loop_y left out instead of axis_y): other square equations,
    # the same motion to the integration tolerance
    other = RedundantModel(bricard_runs["z5"].eom, rows=(0, 2, 3, 4))
    with pytest.warns(sb.RedundantConstraintWarning, match="loop_y = "):
        s = sb.simulate(other, (0.0, T_END), bricard_runs["z5"].initial_state,
                        bricard_runs["z5"].constants, solver=sb.Solver(rtol=1e-10, atol=1e-10),
                        t_eval=bricard_runs["t"])
    assert s.redundant_constraints == ("loop_y",)
    assert np.max(np.abs(np.asarray(s.q) - np.asarray(s4.q))) < 1e-7


def test_multipliers_are_the_minimum_norm_ones(bricard_runs):
    """B_aᵀ λ (the constraint force) from the four-equation model, λ for all five rows by
    numpy's least squares, B_a from SymPy: the five-equation model's multipliers."""
    s5, s4, z5, z4 = (bricard_runs[k] for k in ("s5", "s4", "z5", "z4"))
    Ba5 = sm.lambdify([list(z5.eom.q)], z5.eom.acceleration_matrix.xreplace(z5.constants), "numpy")
    Ba4 = sm.lambdify([list(z4.eom.q)], z4.eom.acceleration_matrix.xreplace(z4.constants), "numpy")
    assert s5.multipliers.shape == (len(s5.t), 5)
    for i in range(0, len(s5.t), 20):
        B5 = np.array(Ba5(s5.q[i]), dtype=float)
        force = np.array(Ba4(s4.q[i]), dtype=float).T @ s4.multipliers[i]
        expected = np.linalg.lstsq(B5.T, force, rcond=None)[0]
        assert np.max(np.abs(s5.multipliers[i] - expected)) < 1e-6 * (1 + np.abs(expected).max())
        assert np.max(np.abs(B5.T @ s5.multipliers[i] - force)) < 1e-6 * (1 + np.abs(force).max())


def test_kanes_method_still_needs_one_equation_per_dependent_coordinate():
    from symbody.models.bricard import bricard_system
    system, ex = bricard_system()
    system.configuration_constraints = [ex["equations"]["loop_x"], ex["equations"]["loop_y"]]
    with pytest.raises(FormulationError, match="4 dependent coordinates but only 2 configuration"):
        system.form()


def test_extra_velocity_constraints_must_match_the_redundant_holonomic_ones():
    from symbody.models.bricard import bricard_system
    system, ex = bricard_system(redundant=True)
    system.velocity_constraints = system.velocity_constraints[:4]
    with pytest.raises(FormulationError, match="4 dependent speeds and 1 redundant.*5 velocity constraints are needed.*got 4"):
        system.form()
    system, ex = bricard_system(redundant=True)
    system.velocity_constraints = system.velocity_constraints + system.velocity_constraints[:1]
    with pytest.raises(FormulationError, match="1 redundant.*derivatives of the redundant ones.*got 6"):
        system.form()


# ------------------------------------------------------------- particle models
def _particle(constraints):
    """A particle in the vertical plane, x independent, y dependent, gravity -g y."""
    x, y = dynamicsymbols("x y")
    ux, uy = dynamicsymbols("ux uy")
    t = dynamicsymbols._t
    m, g = sm.symbols("m g")
    N = ReferenceFrame("N")
    O = Point("O")
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, ux * N.x + uy * N.y)
    fh = constraints(x, y)
    qd = {x.diff(t): ux, y.diff(t): uy}
    vc = [sm.diff(e, t).xreplace(qd) for e in fh.values()]
    km = sb.KanesMethod(N, [x], [ux], kd_eqs=[x.diff(t) - ux, y.diff(t) - uy], q_dependent=[y],
                        configuration_constraints=fh, u_dependent=[uy], velocity_constraints=vc)
    km.kanes_equations([Particle("P", P, m)], [(P, -m * g * N.y)])
    return km.to_eom(), (x, y, ux), {m: 1.0, g: 9.81}


def test_a_mechanism_that_cannot_move_is_refused_naming_its_equations():
    eom, (x, y, ux), p = _particle(lambda x, y: {"circle": x**2 + y**2 - 1, "diagonal": y - x})
    model = sb.compile(eom)
    c = 1 / math.sqrt(2)
    with pytest.raises(OverconstrainedError, match=r"cannot move \(0 degrees of freedom\)") as err:
        sb.simulate(model, (0, 1), {x: c, y: 0.7, ux: 0.0}, p)
    assert "rank 2" in str(err.value) and "circle = " in str(err.value) and "diagonal = " in str(err.value)


def test_more_independent_equations_than_dependent_coordinates_is_refused():
    """x, y independent, z dependent, on a sphere and a plane: 1 dof, 2 declared."""
    x, y, z = dynamicsymbols("x y z")
    ux, uy, uz = dynamicsymbols("ux uy uz")
    t = dynamicsymbols._t
    N = ReferenceFrame("N")
    P = Point("O").locatenew("P", x * N.x + y * N.y + z * N.z)
    P.set_vel(N, ux * N.x + uy * N.y + uz * N.z)
    fh = {"sphere": x**2 + y**2 + z**2 - 1, "plane": z - x}
    qd = {x.diff(t): ux, y.diff(t): uy, z.diff(t): uz}
    km = sb.KanesMethod(N, [x, y], [ux, uy], kd_eqs=[a.diff(t) - b for a, b in zip([x, y, z], [ux, uy, uz])],
                        q_dependent=[z], configuration_constraints=fh, u_dependent=[uz],
                        velocity_constraints=[sm.diff(e, t).xreplace(qd) for e in fh.values()])
    km.kanes_equations([Particle("P", P, sm.Symbol("m"))], [])
    model = sb.compile(km.to_eom())
    with pytest.raises(OverconstrainedError, match="rank 2 .* for 1 dependent coordinates") as err:
        sb.simulate(model, (0, 1), {x: 0.5, y: math.sqrt(0.5), z: 0.5, ux: 0, uy: 0}, {"m": 1.0})
    assert "1 degree of freedom, but 2 coordinates are declared independent" in str(err.value)


def test_an_unassemblable_configuration_names_each_equation_and_its_residual():
    eom, (x, y, ux), p = _particle(lambda x, y: {"circle": x**2 + y**2 - 1, "diagonal": y - x})
    model = sb.compile(eom)
    with pytest.raises(InputError, match="cannot be assembled") as err:
        sb.simulate(model, (0, 1), {x: 0.3, y: 0.3, ux: 0.0}, p)
    text = str(err.value)
    # least squares over y: min (0.09 + y² - 1)² + (y - 0.3)², both residuals nonzero
    ys = np.linspace(-2, 2, 400001)
    cost = (0.09 + ys**2 - 1) ** 2 + (ys - 0.3) ** 2
    yb = ys[np.argmin(cost)]
    for name, value in (("circle", 0.09 + yb**2 - 1), ("diagonal", yb - 0.3)):
        assert f"{name} = " in text
        assert f"{value:.3g}"[:4] in text, (name, value, text)


def test_a_subset_singular_at_the_assembled_configuration_is_replaced():
    """'square' = (y - x)² has a zero Jacobian on the line: forced as the kept equation, the
    run switches to 'line' and slides down y = x exactly (x'' = -g/2)."""
    eom, (x, y, ux), p = _particle(lambda x, y: {"line": y - x, "square": (y - x) ** 2})
    bad = RedundantModel(eom, rows=(1,))
    assert bad.constraint_rows == (1,)
    t = np.linspace(0, 1, 11)
    with pytest.warns(sb.RedundantConstraintWarning, match="square = "):
        sol = sb.simulate(bad, (0, 1), {x: 0.5, y: 0.5, ux: 0.0}, p, t_eval=t,
                          solver=sb.Solver(rtol=1e-10, atol=1e-12))
    assert sol.success, sol.message
    assert sol.redundancy.kept == ("line",) and sol.redundant_constraints == ("square",)
    assert np.max(np.abs(sol.q[:, 0] - (0.5 - 9.81 / 4 * t**2))) < 1e-9
    assert np.max(np.abs(sol.q[:, 1] - sol.q[:, 0])) < 1e-12
    # minimum norm: all of the force on 'line' (λ = m g / 2), none on 'square'
    assert np.max(np.abs(sol.multipliers[:, 0] - 9.81 / 2)) < 1e-9
    assert np.max(np.abs(sol.multipliers[:, 1])) < 1e-9


def test_a_dependent_coordinate_guess_is_assembled_by_least_squares_and_reported():
    eom, (x, y, ux), p = _particle(lambda x, y: {"line": y - x, "line_cubed": (y - x) * (1 + x**2)})
    model = sb.compile(eom)
    with pytest.warns(sb.RedundantConstraintWarning):
        with pytest.warns(InitialStateWarning, match=r"y\(t\) = 0.7 \(used 0.5"):
            sol = sb.simulate(model, (0, 0.5), {x: 0.5, y: 0.7, ux: 0.0}, p)
    assert sol.success and abs(sol.q[0, 1] - 0.5) < 1e-14


def test_the_kept_equation_is_chosen_again_where_it_degrades():
    """'low' = (y - x)(x + 0.5) is kept at x = 0.5 (better conditioned than 'high' =
    (y - x)(x - 0.2)) and loses rank at x = -0.5 on the way down: the run switches to
    'high' there and slides down y = x exactly, x = 0.5 - g t²/4."""
    eom, (x, y, ux), p = _particle(lambda x, y: {"high": (y - x) * (x - 0.2),
                                                 "low": (y - x) * (x + 0.5)})
    model = sb.compile(eom)
    t = np.linspace(0, 1, 21)
    with pytest.warns(sb.RedundantConstraintWarning, match="high = "):
        sol = sb.simulate(model, (0, 1), {x: 0.5, y: 0.5, ux: 0.0}, p, t_eval=t,
                          solver=sb.Solver(rtol=1e-10, atol=1e-12))
    assert sol.success, sol.message
    assert sol.redundancy.kept == ("low",)
    ((t_switch, kept),) = sol.constraint_reselections
    assert kept == ("high",)
    x_switch = 0.5 - 9.81 / 4 * t_switch**2        # where σ(low) = 0.05 σ(both)
    assert abs(abs(x_switch + 0.5) - 0.05 * math.hypot(x_switch - 0.2, x_switch + 0.5)) < 1e-8
    assert "chosen again where they degraded (t = " in sol.message
    np.testing.assert_array_equal(sol.t, t)
    assert np.max(np.abs(sol.q[:, 0] - (0.5 - 9.81 / 4 * t**2))) < 1e-9
    assert np.max(np.abs(sol.q[:, 1] - sol.q[:, 0])) < 1e-12
    assert np.max(np.abs(sol.constraint_residuals)) < 1e-12
    assert sol.events == []
    # trajectory(t) of the joined pieces: each piece's steps, on its kept equation
    tm = 0.5 * (t[1:] + t[:-1])
    q, _ = sol.interpolate(tm)
    assert np.max(np.abs(q[:, 0] - (0.5 - 9.81 / 4 * tm**2))) < 1e-9
    assert np.max(np.abs(q[:, 1] - q[:, 0])) < 1e-12
