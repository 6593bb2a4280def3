"""Differential tests on random multibody models (symbody.testing.random_model).

symbody's KanesMethod and LagrangesMethod against SymPy's, Lagrange against Kane
on the same system, and symbody.simulate / symbody.linearize against a reference
right-hand side built from SymPy's KanesMethod (tests/random_oracle.py).

The cases are fixed seeds (a seeded loop, not hypothesis): each seed is a
different random system, chosen among the first few so that SymPy forms it in
a few seconds (SymPy's cost grows quickly with the depth of random 3D chains).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import symbody as sb
from symbody import Solver
from symbody.errors import InputError
from symbody.testing import KINDS, RandomModel, RandomModelOptions, random_model
from systems.random_oracle import (
    canonical_udot,
    evaluate,
    kane_xdot,
    lagrange_qddot,
    model_from,
    reference_ode,
    relative_error,
    symbody_kane,
    sympy_kane,
)

t = me.dynamicsymbols._t


def params(model, rm) -> dict:
    """The random model's constant values that the compiled model uses.

    (A constant can drop out of the equations, e.g. the height of a joint above the
    origin; the compiled model refuses values for constants it does not have.)
    """
    return {k: rm.constants[k] for k in model.constants}


def case(kind: str, seed: int, n_bodies: int = 2, **options) -> tuple:
    return (kind, seed, n_bodies, tuple(sorted(options.items())))


def case_id(c: tuple) -> str:
    kind, seed, n, opts = c
    names = {"explicit_speeds": "qdot", "scaled_kinematics": "scaled"}
    extra = "".join(f"-{names.get(k, k)}" if isinstance(v, bool) else f"-{k}{v}" for k, v in opts)
    return f"{kind}{n}-s{seed}{extra}"


Q = {"explicit_speeds": False}   # velocities left in q' (Lagrange can take dampers and inputs)

#: Formed by SymPy in about a second or two each.
KANE_CASES = [
    case("tree", 0, **Q),
    case("tree", 1, 3),
    case("tree", 0, 3, inputs=1),
    case("tree", 4, scaled_kinematics=True),
    case("tree", 1, 3, damping=True, **Q),
    case("nonholonomic", 2, **Q),
    case("nonholonomic", 1),
    case("nonholonomic", 0, inputs=1),
    case("nonholonomic", 2, scaled_kinematics=True),
    case("closed_loop", 0, constraints=1),
    case("closed_loop", 1, constraints=2, **Q),
    case("closed_loop", 4, constraints=1, damping=True, **Q),
    case("closed_loop", 1, constraints=1, scaled_kinematics=True),
]

#: SymPy's LagrangesMethod is slower than its KanesMethod: a few cheap systems.
SYMPY_LAGRANGE_CASES = [
    case("tree", 0, damping=True, **Q),
    case("tree", 0, 3, **Q),
    case("nonholonomic", 1, scaled_kinematics=True),
    case("closed_loop", 1, constraints=1),
    case("closed_loop", 2, constraints=1, damping=True, **Q),
]

#: Lagrange (ours) against Kane (ours).
LAGRANGE_CASES = [
    case("tree", 0, 3, damping=True, **Q),
    case("tree", 1, 3, **Q),
    case("tree", 4, scaled_kinematics=True),
    case("nonholonomic", 3, damping=True, **Q),
    case("nonholonomic", 4, **Q),          # a lone symbol in the constraint Jacobian (fixed bug)
    case("nonholonomic", 1, scaled_kinematics=True),
    case("closed_loop", 1, constraints=2, **Q),
    case("closed_loop", 2, constraints=1, damping=True, **Q),
    case("closed_loop", 4, constraints=1, scaled_kinematics=True),
]

SIMULATE_CASES = [
    case("tree", 1, 3),
    case("nonholonomic", 1),
    case("closed_loop", 0, constraints=1),
    case("closed_loop", 1, constraints=2, **Q),
]

LINEARIZE_CASES = [
    case("tree", 0, 3, inputs=1),
    case("nonholonomic", 0, inputs=1),
    case("closed_loop", 0, constraints=1),
    case("closed_loop", 4, constraints=1, damping=True, **Q),
]


# ----------------------------------------------------------------------- the generator
@pytest.mark.parametrize("kind", KINDS)
def test_generator_is_reproducible_and_its_state_consistent(kind):
    a = random_model(11, n_bodies=2, kind=kind)
    b = random_model(11, n_bodies=2, kind=kind)
    assert isinstance(a, RandomModel) and a.kind == kind
    assert a.description == b.description
    assert [str(x) for x in a.q] == [str(x) for x in b.q]
    assert all(a.state[x] == b.state[y] for x, y in zip(a.q + a.u, b.q + b.u, strict=True))
    assert set(a.state) == set(a.q) | set(a.u)
    sizes = a.sizes
    if kind == "tree":
        assert sizes["M"] == sizes["m"] == 0
    elif kind == "nonholonomic":
        assert sizes["M"] == 0 and sizes["m"] >= 1
    else:
        assert sizes["M"] == sizes["m"] >= 1
    for st in (a.state, a.random_state(5)):
        vals = a.values(st)
        if a.q_dep:
            assert np.abs(evaluate(sm.Matrix(a.configuration_constraints), vals)).max() < 1e-10
        if a.u_dep:
            vc = sm.Matrix(a.velocity_constraints).xreplace(a.qdot_to_u())
            assert np.abs(evaluate(vc, vals)).max() < 1e-10
    # every speed belongs to one coordinate, through the kinematic equations
    kd = sm.Matrix(a.kd_eqs).xreplace(a.qdot_to_u())
    assert kd.applyfunc(sm.simplify) == sm.zeros(len(a.q), 1)


def test_generator_options_and_bad_arguments():
    rm = random_model(2, n_bodies=2, kind="tree",
                      options=RandomModelOptions(damping=True, inputs=2, **Q))
    assert not rm.conservative and len(rm.specifieds) == 2 and rm.nonconservative_loads
    assert random_model(2, n_bodies=2, kind="tree").conservative
    with pytest.raises(InputError, match="unknown kind 'loop'"):
        random_model(0, kind="loop")
    with pytest.raises(InputError, match="n_bodies"):
        random_model(0, n_bodies=0)
    with pytest.raises(InputError, match="constraints=5"):
        random_model(0, kind="closed_loop", options=RandomModelOptions(constraints=5))
    with pytest.raises(InputError, match="unknown axes 'random'"):
        RandomModelOptions(axes="random")
    general = random_model(3, kind="tree", options=RandomModelOptions(axes="general"))
    assert general.description != random_model(3, kind="tree").description
    with pytest.raises(InputError, match="explicit_speeds=False"):
        random_model(1, kind="tree", options=RandomModelOptions(damping=True)).lagranges_method()


def test_former_keywords_of_random_model_warn_and_build_the_same_model():
    with pytest.warns(DeprecationWarning) as caught:
        old = random_model(2, n_bodies=2, kind="tree", damping=True, inputs=2)
    assert sorted(str(w.message).split("use ")[1] for w in caught) == [
        "options=RandomModelOptions(damping=...)", "options=RandomModelOptions(inputs=...)"]
    new = random_model(2, n_bodies=2, kind="tree",
                       options=RandomModelOptions(damping=True, inputs=2))
    assert old.description == new.description and old.state == new.state
    assert old.energy == new.energy


# ----------------------------------------------------------------------- Kane vs SymPy
@pytest.mark.parametrize("c", KANE_CASES, ids=case_id)
def test_kane_matches_sympy_at_consistent_states(c):
    rm = model_from(c)
    ours, ref = symbody_kane(c), sympy_kane(c)
    assert list(ours.q) == list(ref.q) and list(ours.u) == list(ref.u)
    eom = ours.to_eom()
    N = len(rm.q)
    rng = np.random.default_rng(c[1])
    for st in (rm.state, rm.random_state(100 + c[1])):
        vals = rm.values(st)
        for r in rm.specifieds:
            vals[r] = float(rng.uniform(-1, 1))
        a, b = kane_xdot(ours, vals), kane_xdot(ref, vals)
        assert relative_error(a, b) < 1e-10, (a, b)
        # the canonical (unreduced, augmented) form gives the same accelerations
        assert relative_error(canonical_udot(eom, vals), b[N:]) < 1e-10


# ----------------------------------------------------------------------- Lagrange
def _lagrange_values(rm, st: dict) -> dict:
    """Values for Lagrange's equations: q' = u / s."""
    vals = rm.values(st)
    for qi in rm.q:
        vals[qi.diff(t)] = st[rm.speed_of[qi]] / float(rm.speed_scale[qi])
    return vals


def _kane_qddot(rm, km, vals: dict) -> np.ndarray:
    """q'' = u' / s from Kane's equations, in rm.q order."""
    xd = kane_xdot(km, vals)
    ud = dict(zip(list(km.u), xd[len(rm.q):], strict=True))
    return np.array([ud[rm.speed_of[qi]] / float(rm.speed_scale[qi]) for qi in rm.q])


@pytest.mark.parametrize("c", SYMPY_LAGRANGE_CASES, ids=case_id)
def test_lagrange_matches_sympy_lagrange_and_kane(c):
    rm = model_from(c)
    ours = rm.lagranges_method()
    ours.form_lagranges_equations()
    ref = rm.lagranges_method(me.LagrangesMethod)
    ref.form_lagranges_equations()
    for st in (rm.state, rm.random_state(7)):
        vals = _lagrange_values(rm, st)
        a, b = lagrange_qddot(ours, vals), lagrange_qddot(ref, vals)
        assert relative_error(a, b) < 1e-10
        assert relative_error(a, _kane_qddot(rm, symbody_kane(c), vals)) < 1e-10


@pytest.mark.parametrize("c", LAGRANGE_CASES, ids=case_id)
def test_lagrange_and_kane_give_the_same_coordinate_accelerations(c):
    rm = model_from(c)
    km = symbody_kane(c)
    lm = rm.lagranges_method()
    lm.form_lagranges_equations()
    speeds = [me.dynamicsymbols(f"w_{qi.name}") for qi in rm.q]      # w_i = q_i'
    eom_l = lm.to_eom(**rm.lagrange_to_eom_arguments(), speeds=speeds)
    eom_k = km.to_eom()
    assert eom_l.q == eom_k.q
    rng = np.random.default_rng(c[1])
    for st in (rm.state, rm.random_state(3)):
        vals = _lagrange_values(rm, st)
        for r in rm.specifieds:
            vals[r] = float(rng.uniform(-1, 1))
        qdd_k = _kane_qddot(rm, km, vals)
        assert relative_error(lagrange_qddot(lm, vals), qdd_k) < 1e-10
        # the canonical forms agree too
        for w, qi in zip(speeds, rm.q, strict=True):
            vals[w] = vals[qi.diff(t)]
        ud_l = dict(zip(eom_l.u, canonical_udot(eom_l, vals), strict=True))
        assert relative_error([ud_l[w] for w in speeds], qdd_k) < 1e-10


# ----------------------------------------------------------------------- simulate
@pytest.mark.parametrize("c", SIMULATE_CASES, ids=case_id)
def test_simulate_matches_solve_ivp_on_the_reference_rhs(c):
    compile_, simulate = sb.compile, sb.simulate
    rm = model_from(c)
    model = compile_(symbody_kane(c).to_eom())
    ref = reference_ode(c)
    x0 = np.array([rm.state[s] for s in model.states])
    assert list(model.states) == rm.q + list(rm.u_ind)
    t_eval = np.linspace(0.0, 0.6, 7)
    # the model's rhs agrees with the reference at the initial state
    assert relative_error(model.rhs(0.0, x0, params(model, rm)), ref.rhs(0.0, x0)) < 1e-10
    want = solve_ivp(ref.rhs, (0.0, 0.6), x0, method="DOP853", t_eval=t_eval, rtol=1e-11, atol=1e-12)
    assert want.success
    # precondition: the reference (fixed dependent coordinates) stays well conditioned
    assert min(ref.dependent_conditioning(x) for x in want.y.T) > 0.02
    for mode in ("none", "auto"):
        got = simulate(model, (0.0, 0.6), rm.x0(), params(model, rm), constraints=mode, t_eval=t_eval,
                       solver=Solver(rtol=1e-10, atol=1e-12))
        assert got.success, got.message
        np.testing.assert_allclose(got.t, t_eval)
        np.testing.assert_allclose(got.x, want.y.T, rtol=0, atol=2e-8)
        # all speeds, dependent ones included, match the reference's
        u_ref = np.array([ref.speeds(x[:ref.N], x[ref.N:]) for x in want.y.T])
        np.testing.assert_allclose(got.u, u_ref, rtol=0, atol=2e-8)


# ----------------------------------------------------------------------- linearize
@pytest.mark.parametrize("c", LINEARIZE_CASES, ids=case_id)
def test_linearize_matches_central_differences_of_the_reference(c):
    compile_, linearize = sb.compile, sb.linearize
    rm = model_from(c)
    model = compile_(symbody_kane(c).to_eom())
    ref = reference_ode(c)
    st = rm.random_state(21)
    A, B = linearize(model, rm.x0(st), params(model, rm))
    A_fd, B_fd = ref.finite_difference_linearization(st)
    n, p = len(rm.q_ind), len(rm.u_ind)
    assert A.shape == (n + p, n + p) and B.shape == (n + p, len(rm.specifieds))
    scale = max(1.0, np.abs(A_fd).max())
    np.testing.assert_allclose(A, A_fd, rtol=0, atol=1e-6 * scale)
    if rm.specifieds:
        np.testing.assert_allclose(B, B_fd, rtol=0, atol=1e-6 * max(1.0, np.abs(B_fd).max()))
        assert np.abs(B).max() > 1e-3          # the input does act


# ----------------------------------------------------------------------- regressions
def test_prescribed_motion_matches_sympy():
    """A frame driven by a specified angle w(t) (not a coordinate): w' and w'' enter the dynamics.

    symbody's KanesMethod used to drop the time derivatives of specified functions in
    the accelerations (a silent wrong answer); they are also specified inputs of the eom.
    """
    q1, u1, w = me.dynamicsymbols("q1 u1 w")
    m, l, g = sm.symbols("m l g")
    results = []
    for mod in (sb, me):
        N = me.ReferenceFrame("N")
        B = N.orientnew("B", "Axis", [w, N.x])
        O = me.Point("O")
        O.set_vel(N, 0)
        Q = O.locatenew("Q", l * B.y)
        Q.v2pt_theory(O, N, B)
        C = B.orientnew("C", "Axis", [q1, B.z])
        C.set_ang_vel(B, u1 * B.z)
        R = Q.locatenew("R", l * C.x)
        R.v2pt_theory(Q, N, C)
        km = mod.KanesMethod(N, [q1], [u1], [q1.diff(t) - u1])
        # the product of inertia I_zx makes w'' act on q1 (with a principal inertia its
        # coefficient is identically zero, and frame-aware forms no longer carry it)
        inertia = me.inertia(C, 1, 2, 3, 0, 0, sm.Rational(1, 2))
        km.kanes_equations([me.RigidBody("rod", R, C, m, (inertia, R))], [(R, -m * g * N.y)])
        results.append(km)
    ours, ref = results
    vals = {q1: 0.3, u1: 0.7, w: 0.2, w.diff(t): 1.1, w.diff(t, 2): 2.3, m: 1.3, l: 0.9, g: 9.81}
    assert relative_error(kane_xdot(ours, vals), kane_xdot(ref, vals)) < 1e-12
    eom = ours.to_eom()
    assert eom.specifieds == (w, w.diff(t), w.diff(t, 2))
    model = sb.compile(eom)
    xd = model.rhs(0.0, [0.3, 0.7], {m: 1.3, l: 0.9, g: 9.81}, [0.2, 1.1, 2.3])
    assert relative_error(xd, kane_xdot(ref, vals)) < 1e-12


def test_lagrange_to_eom_with_a_lone_symbol_in_the_constraint_jacobian():
    """LagrangesMethod.to_eom evaluated constraint Jacobian entries with xreplace, which
    returns a plain float for an entry that is a single symbol (AttributeError; fixed)."""
    x, y = me.dynamicsymbols("x y")
    a, m = sm.symbols("a m")
    L = m * (x.diff(t) ** 2 + y.diff(t) ** 2) / 2
    lm = sb.LagrangesMethod(L, [x, y], nonhol_coneqs=[a * x.diff(t) - y.diff(t)])
    lm.form_lagranges_equations()
    eom = lm.to_eom(u_dep=[y.diff(t)])
    assert len(eom.u_dep) == 1 and eom.velocity_matrix.shape == (1, 2)
