"""Linearization: numeric symbody.linearize and the sympy-compatible symbolic linearizers.

Oracles: SymPy's KanesMethod / LagrangesMethod ``linearize`` (its Linearizer), the
analytic change of variables between minimal and non-minimal pendulum
coordinates, and central differences of the compiled right-hand side.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.analysis.linearization import linearize as num_linearize
from symbody.compilation import compile as sb_compile
from symbody.errors import InputError, SingularConstraintError
from symbody.formulation.linearization_data import (
    KaneLinearizationData,
    LagrangeLinearizationData,
)
from symbody.formulation.symbolic_linearization import (
    kane_data_from_sympy,
    lagrange_data_from_sympy,
    linearize_eom,
    linearize_kane,
    linearize_lagrange,
)

t = me.dynamicsymbols._t


# --------------------------------------------------------------------------- systems
def pendulum_minimal(mod):
    """Particle on a massless rod of length L, angle th from the downward vertical, torque T(t)."""
    th, w = me.dynamicsymbols("th w")
    T = me.dynamicsymbols("T")
    L, m, g = sm.symbols("L m g")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, w * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", -L * A.y)
    P.v2pt_theory(O, N, A)
    km = mod.KanesMethod(N, [th], [w], kd_eqs=[th.diff(t) - w])
    km.kanes_equations([me.Particle("p", P, m)], [(P, -m * g * N.y), (A, T * N.z)])
    return km, dict(th=th, w=w, T=T, L=L, m=m, g=g)


def pendulum_cartesian(mod):
    """The same pendulum in Cartesian coordinates: x independent, y dependent, x^2 + y^2 = L^2."""
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    T = me.dynamicsymbols("T")
    L, m, g = sm.symbols("L m g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, ux * N.x + uy * N.y)
    # the torque T about O as a force on P perpendicular to the rod: T/L^2 (-y, x)
    force = -m * g * N.y + T * (-y * N.x + x * N.y) / L**2
    km = mod.KanesMethod(N, [x], [ux], kd_eqs=[x.diff(t) - ux, y.diff(t) - uy],
                         q_dependent=[y], configuration_constraints=[x**2 + y**2 - L**2],
                         u_dependent=[uy], velocity_constraints=[x * ux + y * uy])
    km.kanes_equations([me.Particle("p", P, m)], [(P, force)])
    return km, dict(x=x, y=y, ux=ux, uy=uy, T=T, L=L, m=m, g=g)


def rolling_disc(mod):
    """Thin disc rolling without slip (Kane's classic; SymPy's linearization example)."""
    q1, q2, q3 = me.dynamicsymbols("q1:4")
    u1, u2, u3 = me.dynamicsymbols("u1:4")
    r, m, g = sm.symbols("r m g")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = me.Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    w_qd = (L.ang_vel_in(N) + q3.diff(t) * L.y)
    kd = [(R.ang_vel_in(N) - w_qd).dot(e) for e in L]
    I = me.inertia(L, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4)
    disc = me.RigidBody("disc", Dmc, R, m, (I, Dmc))
    km = mod.KanesMethod(N, [q1, q2, q3], [u1, u2, u3], kd_eqs=kd)
    km.kanes_equations([disc], [(Dmc, -m * g * Y.z)])
    return km, dict(q=[q1, q2, q3], u=[u1, u2, u3], r=r, m=m, g=g)


def chaplygin_sleigh(mod):
    """Nonholonomic: a sleigh whose blade at P cannot slide sideways; push force F(t) along it."""
    x, y, th = me.dynamicsymbols("x y th")
    ux, uy, w = me.dynamicsymbols("u_x u_y w")
    F = me.dynamicsymbols("F")
    m, I0, a = sm.symbols("m I_0 a")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, w * N.z)
    P = me.Point("P")
    P.set_vel(N, ux * N.x + uy * N.y)
    G = P.locatenew("G", a * A.x)
    G.v2pt_theory(P, N, A)
    body = me.RigidBody("sleigh", G, A, m, (me.inertia(A, 0, 0, I0), G))
    km = mod.KanesMethod(N, [x, y, th], [ux, w], kd_eqs=[x.diff(t) - ux, y.diff(t) - uy,
                                                        th.diff(t) - w],
                         u_dependent=[uy], velocity_constraints=[P.vel(N).dot(A.y)])
    km.kanes_equations([body], [(P, F * A.x)])
    return km, dict(q=[x, y, th], u=[ux, w, uy], F=F, m=m, I0=I0, a=a)


def _num(M, values):
    """A sympy matrix evaluated to floats with ``values`` substituted."""
    return np.array(sm.Matrix(M).xreplace(values).evalf(), dtype=float)


# --------------------------------------------------------------------------- numeric vs SymPy
def test_numeric_pendulum_with_input_matches_sympy():
    km, s = pendulum_minimal(me)
    vals = {s["L"]: 1.3, s["m"]: 0.7, s["g"]: 9.81}
    th0, w0, T0 = 0.4, -0.8, 0.25
    A_s, B_s, r = km.linearize(A_and_B=True, op_point={s["th"]: th0, s["w"]: w0, s["T"]: T0})
    km_sb, s2 = pendulum_minimal(sb)
    eom = km_sb.to_eom()
    A, B = num_linearize(eom, {"th": th0, "w": w0}, {str(k): v for k, v in vals.items()}, r=[T0])
    assert list(r) == [s["T"]]
    np.testing.assert_allclose(A, _num(A_s, vals), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(B, _num(B_s, vals), rtol=1e-13, atol=1e-13)
    # analytic: th'' = -g/L sin th + T/(m L^2)
    np.testing.assert_allclose(A, [[0, 1], [-9.81 / 1.3 * np.cos(th0), 0]], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(B, [[0], [1 / (0.7 * 1.3**2)]], rtol=1e-14)


def test_minimal_and_nonminimal_pendulum_give_the_same_linearization():
    """dx = J dth maps the minimal linearization onto the Cartesian one (away from equilibrium too)."""
    km_min, s = pendulum_minimal(sb)
    km_car, c = pendulum_cartesian(sb)
    L, g, m = 1.3, 9.81, 0.7
    p_min = {s["L"]: L, s["g"]: g, s["m"]: m}
    p_car = {c["L"]: L, c["g"]: g, c["m"]: m}
    # hanging equilibrium: identical A (x = L th to first order, u_x = L w)
    A_min, B_min = num_linearize(km_min.to_eom(), {s["th"]: 0.0, s["w"]: 0.0}, p_min)
    A_car, B_car = num_linearize(km_car.to_eom(), {c["x"]: 0.0, c["y"]: -L, c["ux"]: 0.0}, p_car)
    np.testing.assert_allclose(A_car, A_min, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(A_car, [[0, 1], [-g / L, 0]], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(B_car, L * B_min, rtol=1e-13, atol=1e-13)   # [x, u_x] = L [th, w]
    # a moving, tilted state: y_dep solved by Newton from the guess, the map is nonlinear
    th0, w0 = 0.5, 0.9
    A_min, _ = num_linearize(km_min.to_eom(), {s["th"]: th0, s["w"]: w0}, p_min)
    A_car, _, point = num_linearize(km_car.to_eom(), {c["x"]: L * np.sin(th0), c["y"]: -1.0,
                                                      c["ux"]: L * np.cos(th0) * w0}, p_car,
                                    return_point=True)
    np.testing.assert_allclose(point["q"], [L * np.sin(th0), -L * np.cos(th0)], rtol=1e-14)
    np.testing.assert_allclose(point["u"][1], L * np.sin(th0) * w0, rtol=1e-13)
    # x = Phi(th, w) = (L sin th, L cos th w); A_car = D(DPhi f) DPhi^-1 with f the minimal field
    th, w = sm.symbols("th w")
    f = sm.Matrix([w, -g / L * sm.sin(th)])
    Phi = sm.Matrix([L * sm.sin(th), L * sm.cos(th) * w])
    J = Phi.jacobian([th, w])
    expected = ((J * f).jacobian([th, w]) * J.inv()).subs({th: th0, w: w0})
    np.testing.assert_allclose(A_car, np.array(expected, dtype=float), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        A_min, np.array(f.jacobian([th, w]).subs({th: th0, w: w0}), dtype=float), rtol=1e-13)


def test_numeric_nonholonomic_matches_sympy_away_from_equilibrium():
    """Chaplygin sleigh with a push force: dependent speed, input, non-equilibrium state."""
    km, s = chaplygin_sleigh(me)
    km_sb, _ = chaplygin_sleigh(sb)
    vals = {s["m"]: 2.0, s["I0"]: 0.3, s["a"]: 0.4}
    x, y, th = s["q"]
    ux, w, uy = s["u"]
    state = {x: 0.1, y: -0.2, th: 0.7, ux: 0.9, w: 0.4}
    A, B, point = num_linearize(km_sb.to_eom(), state, vals, r={"F": 0.3}, return_point=True)
    ud = point["udot"]
    op = dict(state)
    op.update({uy: point["u"][2], s["F"]: 0.3})
    op.update({ui.diff(t): v for ui, v in zip([ux, w, uy], ud)})
    A_s, B_s, r = km.linearize(A_and_B=True, op_point=op)
    np.testing.assert_allclose(A, _num(A_s, vals), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B, _num(B_s, vals), rtol=1e-12, atol=1e-12)


def test_numeric_rolling_disc_matches_sympy_and_compiled_model():
    km, s = rolling_disc(me)
    km_sb, _ = rolling_disc(sb)
    q1, q2, q3 = s["q"]
    u1, u2, u3 = s["u"]
    vals = {s["r"]: 0.3, s["m"]: 2.0, s["g"]: 9.81}
    # steady upright rolling at spin rate 7 rad/s: an equilibrium of the lean dynamics
    op = {q1: 0.0, q2: 0.0, q3: 0.0, u1: 0.0, u2: 7.0, u3: 0.0}
    A_s, B_s, _ = km.linearize(A_and_B=True, op_point=[op, {u.diff(t): 0 for u in s["u"]}])
    model = sb_compile(km_sb.to_eom())
    A, B = num_linearize(model, op, vals)
    assert B.shape == (6, 0)
    np.testing.assert_allclose(A, _num(A_s, vals), rtol=1e-12, atol=1e-12)
    # the same through an array operating point in model order
    x = np.array([op[v] for v in model.states])
    A2, _ = num_linearize(model, x, np.array([vals[c] for c in model.constants]))
    np.testing.assert_array_equal(A, A2)


def test_numeric_linearization_is_the_jacobian_of_rhs():
    """Central differences of model.rhs agree (to their own accuracy) at a generic state."""
    km, c = pendulum_cartesian(sb)
    model = sb_compile(km.to_eom())
    p = {"L": 1.1, "m": 0.5, "g": 9.81}
    x0 = model.consistent_state({c["x"]: 0.6, c["y"]: -0.8, c["ux"]: 0.7}, p)
    A, B = num_linearize(model, x0, p, r=[0.2])
    n, M = model.n, model.M

    def f(xi, r=0.2):
        x = np.concatenate([xi[:n], x0[n:n + M], xi[n:]])
        x = model.consistent_state(x, p)
        d = model.rhs(0.0, x, p, r=[r])
        return np.concatenate([d[:n], d[n + M:]])

    xi0 = np.concatenate([x0[:n], x0[n + M:]])
    h = 1e-6
    fd = np.column_stack([(f(xi0 + h * e) - f(xi0 - h * e)) / (2 * h) for e in np.eye(len(xi0))])
    np.testing.assert_allclose(A, fd, rtol=1e-7, atol=1e-7)
    fd_r = (f(xi0, 0.2 + h) - f(xi0, 0.2 - h)) / (2 * h)
    np.testing.assert_allclose(B[:, 0], fd_r, rtol=1e-7, atol=1e-7)


# --------------------------------------------------------------------------- symbolic vs SymPy
@pytest.mark.parametrize("A_and_B", [False, True])
def test_symbolic_kane_matches_sympy_with_dependent_coordinates(A_and_B):
    km, c = pendulum_cartesian(me)
    km_sb, _ = pendulum_cartesian(sb)
    L = c["L"]
    op = {c["x"]: 0.5, c["y"]: -sm.sqrt(L**2 - sm.Rational(1, 4)), c["ux"]: 0.3,
          c["uy"]: 0.15 / sm.sqrt(L**2 - sm.Rational(1, 4)), c["ux"].diff(t): 0.2,
          c["uy"].diff(t): -0.1}
    ours = km_sb.linearize(A_and_B=A_and_B, op_point=op)
    ref = km.linearize(A_and_B=A_and_B, op_point=op)
    assert len(ours) == len(ref)
    vals = {L: 1.2, c["m"]: 0.8, c["g"]: 9.81, c["T"]: 0.0}
    for mine, theirs in zip(ours[:-1], ref[:-1]):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(_num(mine, vals), _num(theirs, vals), rtol=1e-12, atol=1e-12)
    assert list(ours[-1]) == list(ref[-1]) == [c["T"]]


def test_symbolic_kane_nonholonomic_matches_sympy_both_paths():
    """symbody's KanesMethod (unreduced path) and SymPy's KanesMethod object (attribute path)."""
    km, s = chaplygin_sleigh(me)
    km_sb, _ = chaplygin_sleigh(sb)
    x, y, th = s["q"]
    ux, w, uy = s["u"]
    op = {x: 0.1, y: -0.2, th: 0.7, ux: 0.9, w: 0.4, uy: 0.0}
    ref_M, ref_A, ref_B, ref_r = km.linearize(op_point=op)
    vals = {s["m"]: 2.0, s["I0"]: 0.3, s["a"]: 0.4, s["F"]: 0.3}
    vals.update({u.diff(t): v for u, v in zip([ux, w, uy], [0.11, -0.7, 0.25])})
    for M, A, B, r in (km_sb.linearize(op_point=op), linearize_kane(km, op_point=op)):
        np.testing.assert_allclose(_num(M, vals), _num(ref_M, vals), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_num(A, vals), _num(ref_A, vals), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_num(B, vals), _num(ref_B, vals), rtol=1e-12, atol=1e-12)
        assert list(r) == list(ref_r) == [s["F"]]


def test_symbolic_linear_solver_options():
    km, s = rolling_disc(sb)
    q1, q2, q3 = s["q"]
    u1, u2, u3 = s["u"]
    op = [{q1: 0, q2: 0, q3: 0, u1: 0, u2: sm.Symbol("Omega"), u3: 0},
          {u.diff(t): 0 for u in s["u"]}]
    A1, _, _ = km.linearize(A_and_B=True, op_point=op)
    A2, _, _ = km.linearize(A_and_B=True, op_point=op, linear_solver="CRAMER")
    A3, _, _ = km.linearize(A_and_B=True, op_point=op, linear_solver=lambda A, b: A.LUsolve(b))
    vals = {s["r"]: 0.3, s["m"]: 2.0, s["g"]: 9.81, sm.Symbol("Omega"): 7.0}
    for other in (A2, A3):
        np.testing.assert_allclose(_num(other, vals), _num(A1, vals), rtol=1e-13, atol=1e-13)
    ref, _, _ = rolling_disc(me)[0].linearize(A_and_B=True, op_point=op)
    np.testing.assert_allclose(_num(A1, vals), _num(ref, vals), rtol=1e-12, atol=1e-12)
    with pytest.raises(sb.FormulationError):
        km.linearize(A_and_B=True, op_point=op, linear_solver=42)


def test_symbolic_linearize_eom_of_hand_derived_reduced_equations():
    """A hand-derived reduced EquationsOfMotion linearizes like the Kane object it came from."""
    km, c = pendulum_cartesian(sb)
    x, y, ux, uy, L, g = c["x"], c["y"], c["ux"], c["uy"], c["L"], c["g"]
    p = 1
    # reduce k_d u' + f_d = 0 with u_dep' = A_rs u_ind' - B_dep^-1 b_a (acceleration constraints)
    k_d, f_d = km.mass_matrix[:p, :], -km.forcing[:p, :]
    Bd_inv_ba = km._k_dnh[:, p:].inv() * km._f_dnh
    M_red = k_d[:, :p] + k_d[:, p:] * km._Ars
    g_red = f_d - k_d[:, p:] * Bd_inv_ba
    eom = sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux, y.diff(t) - uy], (M_red, g_red),
                               constraints=sb.ConstraintEquations(q_dep=[y], u_dep=[uy],
                                                                  holonomic=[x**2 + y**2 - L**2],
                                                                  velocity=[x * ux + y * uy]))
    op = {x: 0.0, y: -L, ux: 0.0, uy: 0.0, ux.diff(t): 0, uy.diff(t): 0}
    A, B, r = linearize_eom(eom, op_point=op, A_and_B=True)
    vals = {L: 1.5, g: 9.81, c["m"]: 2.0}
    np.testing.assert_allclose(_num(A, vals), [[0, 1], [-9.81 / 1.5, 0]], rtol=1e-13, atol=1e-13)
    assert eom.dynamic_reduced
    # numerically, reduced and unreduced forms agree away from equilibrium as well
    state = {x: 0.7, y: -1.0, ux: -0.4}
    p_num = {"L": 1.5, "g": 9.81, "m": 2.0, "T": 0.0}
    A_red, B_red = num_linearize(eom, state, {k: v for k, v in p_num.items() if k != "T"},
                                 r=[0.3] if eom.specifieds else None)
    A_unr, B_unr = num_linearize(km.to_eom(), state, {k: v for k, v in p_num.items() if k != "T"},
                                 r=[0.3])
    np.testing.assert_allclose(A_red, A_unr, rtol=1e-12, atol=1e-12)


def test_terms_sympy_counts_twice_are_counted_once():
    """SymPy 1.14 adds a kinematic remainder f_k and the velocity-free part of Fr* twice.

    Kinematic remainder: q' = u - q.  Rheonomic system: a bead on a rod spun at the
    prescribed rate Omega (radial q, q'' = Omega^2 q).  symbody gives the true Jacobians.
    """
    q, u = me.dynamicsymbols("q u")
    k, m, W = sm.symbols("k m Omega")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", q * N.x)
    P.set_vel(N, (u - q) * N.x)
    km = sb.KanesMethod(N, [q], [u], kd_eqs=[q.diff(t) - u + q])
    km.kanes_equations([me.Particle("p", P, m)], [(P, -k * q * N.x)])
    A, _, _ = km.linearize(A_and_B=True, op_point={q: 0, u: 0, u.diff(t): 0})
    # m (u' - q') = -k q with q' = u - q:  u' = u - q - k q / m
    assert sm.simplify(A - sm.Matrix([[-1, 1], [-1 - k / m, 1]])) == sm.zeros(2, 2)

    A_rod = N.orientnew("A", "Axis", [W * t, N.z])
    B = O.locatenew("B", q * A_rod.x)
    B.set_vel(N, u * A_rod.x + W * q * A_rod.y)
    km = sb.KanesMethod(N, [q], [u], kd_eqs=[q.diff(t) - u])
    km.kanes_equations([me.Particle("b", B, m)], [(B, 0 * N.x)])
    A, _, _ = km.linearize(A_and_B=True, op_point={q: 0, u: 0, u.diff(t): 0})
    assert sm.simplify(A - sm.Matrix([[0, 1], [W**2, 0]])) == sm.zeros(2, 2)


# --------------------------------------------------------------------------- Lagrange
def pendulum_lagrange(mod):
    """Cartesian pendulum with Lagrange's method and a holonomic constraint (multiplier)."""
    x, y = me.dynamicsymbols("x y")
    L, m, g = sm.symbols("L m g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, x.diff(t) * N.x + y.diff(t) * N.y)
    pa = me.Particle("p", P, m)
    pa.potential_energy = m * g * y
    lag = me.Lagrangian(N, pa)
    lm = mod.LagrangesMethod(lag, [x, y], hol_coneqs=[x**2 + y**2 - L**2], frame=N)
    lm.form_lagranges_equations()
    return lm, dict(x=x, y=y, L=L, m=m, g=g)


def test_lagrange_matches_sympy_and_kane():
    lm, c = pendulum_lagrange(me)
    x, y, L, g, m = c["x"], c["y"], c["L"], c["g"], c["m"]
    kw = dict(q_ind=[x], qd_ind=[x.diff(t)], q_dep=[y], qd_dep=[y.diff(t)])
    op = {x: 0.3, y: -sm.sqrt(L**2 - sm.Rational(9, 100)), x.diff(t): 0.0, y.diff(t): 0.0,
          x.diff(t, 2): 0, y.diff(t, 2): 0}
    lam_op = lm.solve_multipliers(op)
    op.update(lam_op)
    M_s, A_s, B_s, r_s = lm.linearize(op_point=op, **kw)
    lm_sb, _ = pendulum_lagrange(sb)
    M, A, B, r = lm_sb.linearize(op_point=op, **kw)
    vals = {L: 1.2, g: 9.81, m: 0.8}
    np.testing.assert_allclose(_num(M, vals), _num(M_s, vals), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_num(A, vals), _num(A_s, vals), rtol=1e-12, atol=1e-12)
    assert B.shape == B_s.shape == (0, 0)
    assert list(r) == list(r_s) == []
    # A_and_B through symbody's LagrangesMethod and Kane's method of the same system, at the
    # hanging equilibrium (q'' = 0 there, so the operating point is consistent)
    op0 = {x: 0, y: -L, x.diff(t): 0, y.diff(t): 0, x.diff(t, 2): 0, y.diff(t, 2): 0}
    op0.update(lm.solve_multipliers(op0))
    A_lag, _, _ = lm_sb.linearize(op_point=op0, A_and_B=True, **kw)
    A_ref, _, _ = lm.linearize(op_point=op0, A_and_B=True, **kw)
    np.testing.assert_allclose(_num(A_lag, vals), _num(A_ref, vals), rtol=1e-12, atol=1e-12)
    km, k = pendulum_cartesian(sb)
    A_kane, _ = num_linearize(km.to_eom(), {k["x"]: 0.0, k["y"]: -1.0, k["ux"]: 0.0},
                              {"L": 1.2, "g": 9.81, "m": 0.8})
    np.testing.assert_allclose(_num(A_lag, vals), A_kane, rtol=1e-12, atol=1e-12)
    # moving: the multiplier and accelerations at the op point enter A
    op2 = {x: 0.3, y: -sm.sqrt(L**2 - sm.Rational(9, 100)), x.diff(t): 0.5,
           y.diff(t): 0.15 / sm.sqrt(L**2 - sm.Rational(9, 100))}
    A_kane2, _, pt = num_linearize(km.to_eom(), {k["x"]: 0.3, k["y"]: -1.0, k["ux"]: 0.5},
                                   {"L": 1.2, "g": 9.81, "m": 0.8}, return_point=True)
    num_op = {key: float(val.xreplace(vals)) if isinstance(val, sm.Basic) else val
              for key, val in op2.items()}
    num_op.update({x.diff(t, 2): pt["udot"][0], y.diff(t, 2): pt["udot"][1]})
    num_op.update({lam: float(v.xreplace(vals).xreplace(num_op).evalf())
                   for lam, v in lm_sb.solve_multipliers(num_op).items()})
    A_lag2, _, _ = lm_sb.linearize(op_point=num_op, A_and_B=True, **kw)
    np.testing.assert_allclose(_num(A_lag2, vals), A_kane2, rtol=1e-10, atol=1e-10)


def test_lagrange_unconstrained_defaults_and_input():
    th = me.dynamicsymbols("th")
    T = me.dynamicsymbols("T")
    L, m, g = sm.symbols("L m g")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", -L * A.y)
    P.v2pt_theory(O, N, A)
    pa = me.Particle("p", P, m)
    pa.potential_energy = -m * g * L * sm.cos(th)
    lm = sb.LagrangesMethod(me.Lagrangian(N, pa), [th], forcelist=[(A, T * N.z)], frame=N)
    lm.form_lagranges_equations()
    A_, B_, r = linearize_lagrange(lm, op_point={th: 0, th.diff(t): 0}, A_and_B=True)
    vals = {L: 2.0, m: 0.5, g: 9.81}
    np.testing.assert_allclose(_num(A_, vals), [[0, 1], [-9.81 / 2.0, 0]], rtol=1e-14)
    np.testing.assert_allclose(_num(B_, vals), [[0], [1 / (0.5 * 4.0)]], rtol=1e-14)
    assert list(r) == [T]


def test_lagrange_linearizer_on_sympys_own_method_object():
    """SymPy's LagrangesMethod (public attributes, hol_coneqs through compat) linearizes as SymPy."""
    lm, c = pendulum_lagrange(me)
    x, y, L, g, m = c["x"], c["y"], c["L"], c["g"], c["m"]
    kw = dict(q_ind=[x], qd_ind=[x.diff(t)], q_dep=[y], qd_dep=[y.diff(t)])
    op = {x: 0.3, y: -sm.sqrt(L**2 - sm.Rational(9, 100)), x.diff(t): 0.2,
          y.diff(t): 0.06 / sm.sqrt(L**2 - sm.Rational(9, 100)), x.diff(t, 2): 0.1,
          y.diff(t, 2): -0.3}
    op.update({lam: 1.7 for lam in lm.lam_vec})
    vals = {L: 1.2, g: 9.81, m: 0.8}
    lm_sb, _ = pendulum_lagrange(sb)
    data = lagrange_data_from_sympy(lm)
    ours = lm_sb.to_linearizer_data()
    assert isinstance(data, LagrangeLinearizationData) and isinstance(ours, LagrangeLinearizationData)
    assert data.m_cd.shape == ours.m_cd.shape == (1, 2) and data.hol_coneqs.shape == (1, 1)
    assert (data.m_d - ours.m_d).applyfunc(sm.simplify) == sm.zeros(2, 2)
    for got in (linearize_lagrange(lm, op_point=op, **kw), linearize_lagrange(data, op_point=op, **kw)):
        for mine, theirs in zip(got[:3], lm.linearize(op_point=op, **kw)[:3]):
            assert mine.shape == theirs.shape
            if mine.shape != (0, 0):
                np.testing.assert_allclose(_num(mine, vals), _num(theirs, vals), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="equations of motion first"):
        linearize_lagrange(me.LagrangesMethod(me.Lagrangian(me.ReferenceFrame("N")), [x]))


def test_linearization_data_is_frozen_public_data():
    """The methods hand the linearizer frozen data; the data alone linearizes the same."""
    km, c = pendulum_cartesian(sb)
    data = km.to_linearizer_data()
    assert isinstance(data, KaneLinearizationData) and not data.dynamic_reduced
    assert data.q == (c["x"], c["y"]) and data.u == (c["ux"], c["uy"])
    with pytest.raises(AttributeError):
        data.q_ind = ()
    op = {c["x"]: 0.0, c["y"]: -c["L"], c["ux"]: 0.0, c["uy"]: 0.0, c["ux"].diff(t): 0,
          c["uy"].diff(t): 0}
    vals = {c["L"]: 1.5, c["g"]: 9.81, c["m"]: 2.0, c["T"]: 0.0}
    A1, B1, r1 = linearize_kane(data, op_point=op, A_and_B=True)
    A2, B2, r2 = km.linearize(op_point=op, A_and_B=True)
    assert A1 == A2 and B1 == B2 and r1 == r2
    np.testing.assert_allclose(_num(A1, vals), [[0, 1], [-9.81 / 1.5, 0]], rtol=1e-13, atol=1e-13)
    ref, _ = pendulum_cartesian(me)
    sympy_data = kane_data_from_sympy(ref)
    assert sympy_data.dynamic_reduced and sympy_data.dynamic_mass.shape == (1, 2)
    assert sympy_data.q_dep == (c["y"],) and sympy_data.u_dep == (c["uy"],)
    unformed = me.KanesMethod(me.ReferenceFrame("N"), [c["x"]], [c["ux"]],
                              kd_eqs=[c["x"].diff(t) - c["ux"]])
    with pytest.raises(ValueError, match="Need to compute Fr, Fr"):
        linearize_kane(unformed)


# --------------------------------------------------------------------------- bad input
def test_bad_operating_points_raise_clear_errors():
    km, c = pendulum_cartesian(sb)
    eom = km.to_eom()
    p = {"L": 1.0, "m": 1.0, "g": 9.81}
    with pytest.raises(InputError, match="u_x"):
        num_linearize(eom, {c["x"]: 0.1}, p)
    with pytest.raises(InputError, match="unknown operating-point entry"):
        num_linearize(eom, {c["x"]: 0.1, c["ux"]: 0.0, "z": 1.0}, p)
    with pytest.raises(InputError, match="not a number"):
        num_linearize(eom, {c["x"]: "a", c["ux"]: 0.0}, p)
    with pytest.raises(InputError, match="state has 3"):
        num_linearize(eom, [0.1, -1.0, 0.0, 1.0, 2.0], p)
    with pytest.raises(InputError, match="missing value for constant"):
        num_linearize(eom, {c["x"]: 0.1, c["ux"]: 0.0}, {"L": 1.0})
    # x = L: the constraint Jacobian in the dependent coordinate y vanishes
    with pytest.raises((SingularConstraintError, InputError)):
        num_linearize(eom, {c["x"]: 1.0, c["y"]: 0.0, c["ux"]: 0.0}, p)
    with pytest.raises(InputError, match="could not solve the holonomic"):
        num_linearize(eom, {c["x"]: 2.0, c["y"]: -1.0, c["ux"]: 0.0}, p)
    with pytest.raises(InputError, match="NumericModel"):
        num_linearize("pendulum", {}, p)


def test_linearize_is_exported():
    assert sb.linearize is num_linearize
