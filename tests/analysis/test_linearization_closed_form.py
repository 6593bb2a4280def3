"""``linearize`` against central differences of closed forms (never of symbody's own rhs).

* the moving-pivot pendulum (tests/systems/moving_pivot.py): time-dependent f_h and b, an
  input force, y and uy dependent; A and B in [x, ux] by central differences of the closed
  form x'' = ux'(t, x, y(x), ux, uy(x, ux), F) with y, uy on the constraints;
* a cart pushed by a force that is an extra state a (a' = (F - a) / τ):
  A = [[0, 1, 0], [0, 0, 1/m], [0, 0, -1/τ]], B = [0, 0, 1/τ]^T exactly;
* a particle steered on a slope r(t) (uy = r ux, the input inside B) with u' != 0 at the
  point: B by central differences of the closed form ux'(x, ux, r, r') (the d(B_a)/dr u' term).

Written to kill the mutants of ``linearize`` (docs/testing.md): the default time, the
operating point's dependent values, the return_point dict, the extra-state path and the
d(B_a)/dr u' term (#298, #299).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from systems.moving_pivot import P1, closed_form, hanging_y, pendulum_eom

t = me.dynamicsymbols._t
#: central differences with h = 1e-5 of smooth O(1) functions: truncation ~h^2 |f'''| ~ 1e-9,
#: round-off ~1e-16 / h ~ 1e-11; a missing term changes an entry by O(0.1) or more
FD_TOL = 1e-7


@pytest.fixture(scope="module")
def pendulum():
    return sb.compile(pendulum_eom())


def _f(tt, x, ux, F):
    """[x', ux'] on the constraints (y below the pivot, uy from the velocity constraint)."""
    y = hanging_y(tt, x)
    uy, uxd, _, _ = closed_form(tt, x, y, ux, F)
    return np.array([ux, uxd])


def _jacobians(tt, x, ux, F, h=1e-5):
    A = np.column_stack([(_f(tt, x + h, ux, F) - _f(tt, x - h, ux, F)) / (2 * h),
                         (_f(tt, x, ux + h, F) - _f(tt, x, ux - h, F)) / (2 * h)])
    B = ((_f(tt, x, ux, F + h) - _f(tt, x, ux, F - h)) / (2 * h))[:, None]
    return A, B


@pytest.mark.parametrize("tt", [None, 0.7])
def test_linearization_of_the_moving_pivot_pendulum(pendulum, tt):
    x, ux, F = 0.2, -0.4, 0.6
    when = 0.0 if tt is None else tt
    kw = {} if tt is None else {"t": tt}
    y_guess = hanging_y(when, x) + 0.05                 # off the constraint: projected first
    A, B, point = sb.linearize(pendulum, {"x": x, "y": y_guess, "u_x": ux}, P1, r=[F],
                               return_point=True, **kw)
    A_fd, B_fd = _jacobians(when, x, ux, F)
    assert A == pytest.approx(A_fd, rel=FD_TOL, abs=FD_TOL), f"A at t = {when} != central differences"
    assert B == pytest.approx(B_fd, rel=FD_TOL, abs=FD_TOL), f"B at t = {when} != central differences"
    y = hanging_y(when, x)
    uy, uxd, uyd, lam = closed_form(when, x, y, ux, F)
    assert point["q"] == pytest.approx([x, y], rel=1e-12), "operating point: y not on f_h(q, t) = 0"
    assert point["u"] == pytest.approx([ux, uy], rel=1e-12)
    assert point["qdot"] == pytest.approx([ux, uy], rel=1e-12)
    assert point["udot"] == pytest.approx([uxd, uyd], rel=1e-10)
    assert point["multipliers"] == pytest.approx([lam], rel=1e-10), "operating point λ wrong"
    assert point["r"] == pytest.approx([F])
    # the same from an array [q (N), u_ind (p)]
    A2, B2 = sb.linearize(pendulum, np.array([x, y_guess, ux]), P1, r=[F], **kw)
    assert A2 == pytest.approx(A, rel=1e-12) and B2 == pytest.approx(B, rel=1e-12)


def test_linearization_with_extra_states_is_exact_for_a_linear_system():
    x, ux, a = me.dynamicsymbols("x u_x a")
    F = me.dynamicsymbols("F")
    m, tau = sm.symbols("m tau")
    # a spring whose stiffness grows with time, t x: A[1, 0] = -t / m
    eom = sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [m * ux.diff(t) - a + t * x],
                               specifieds=[F], extra_states={a: (F - a) / tau})
    model = sb.compile(eom)
    P = {"m": 2.0, "tau": 0.1}
    A, B = sb.linearize(model, {"x": 0.3, "u_x": 0.1, "a": 0.5}, P, r=[0.2])
    # central differences of a linear rhs: exact up to round-off / h
    assert A == pytest.approx(np.array([[0, 1, 0], [0, 0, 0.5], [0, 0, -10.0]]), abs=1e-6), \
        "A with an extra state (the force's lag) wrong"
    assert B == pytest.approx(np.array([[0], [0], [10.0]]), abs=1e-6), "B with an extra state wrong"
    A, B, point = sb.linearize(model, {"x": 0.3, "u_x": 0.1, "a": 0.5}, P, r=[0.2], t=1.0,
                               return_point=True)
    assert A[1, 0] == pytest.approx(-0.5, abs=1e-6), "extra-state path: A not at the time t"
    assert point["xdot"] == pytest.approx([0.1, (0.5 - 0.3) / 2.0, (0.2 - 0.5) / 0.1], rel=1e-12)


def test_a_bad_time_is_refused_naming_it(pendulum):
    with pytest.raises(sb.errors.InputError, match=r"^t, the time of the operating point, = nan must be finite"):
        sb.linearize(pendulum, {"x": 0.2, "y": -0.8, "u_x": 0.0}, P1, r=[0.0], t=float("nan"))


def test_default_constants_come_from_a_zoo_model_and_are_required_otherwise(pendulum):
    """A zoo Model (anything with ``eom`` and a ``constants`` mapping) supplies p; a compiled
    model with constants needs them; one without constants does not."""
    from types import SimpleNamespace

    op = {"x": 0.2, "y": -0.8, "u_x": 0.1}
    zoo_like = SimpleNamespace(eom=pendulum_eom(), constants=dict(P1))
    A, B = sb.linearize(zoo_like, op, r=[0.3], t=0.4)
    A_ref, B_ref = _jacobians(0.4, 0.2, 0.1, 0.3)
    assert A == pytest.approx(A_ref, rel=FD_TOL, abs=FD_TOL), "a zoo Model's default constants not used"
    with pytest.raises(sb.errors.InputError, match="^give the constants p"):
        sb.linearize(pendulum, op, r=[0.3])
    x, ux = me.dynamicsymbols("x u_x")
    free = sb.compile(sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [ux.diff(t) + x]))
    A, B = sb.linearize(free, {"x": 0.0, "u_x": 0.0})
    assert A == pytest.approx(np.array([[0.0, 1.0], [-1.0, 0.0]])) and B.shape == (2, 0)


def test_an_unreachable_operating_point_is_refused(pendulum):
    """|x - s| > l: no y satisfies f_h = 0 (Newton's method stalls at y = 0, f_h = d^2 - l^2 > 0)."""
    with pytest.raises(sb.errors.InputError, match="could not solve the holonomic constraints"):
        sb.linearize(pendulum, {"x": 1.2, "y": -0.1, "u_x": 0.0}, P1, r=[0.0])


def test_kinematic_and_mass_coefficients_that_depend_on_the_configuration_and_the_input():
    """(1 + x^2)(1 + v) x' - (2 + sin x + v) ux - c = 0 and (1 + v) ux' + k x = 0, v an input:
    K_qd, K_u and M_d depend on x and v, the kinematic rest is -c.  Oracle: SymPy's derivatives
    of the solved right-hand side [x', ux'] (no symbody code path)."""
    x, ux, v = me.dynamicsymbols("x u_x v")
    c, k = sm.symbols("c k")
    model = sb.compile(sb.EquationsOfMotion(
        [x], [ux], [(1 + x**2) * (1 + v) * x.diff(t) - (2 + sm.sin(x) + v) * ux - c],
        [(1 + v) * ux.diff(t) + k * x], specifieds=[v]))
    X, U, V = sm.symbols("X U V")
    f = sm.Matrix([((2 + sm.sin(X) + V) * U + c) / ((1 + X**2) * (1 + V)), -k * X / (1 + V)])
    vals = {X: 0.5, U: 0.3, V: 0.4, c: 0.7, k: 2.0}
    A_ref = np.array(f.jacobian([X, U]).subs(vals), dtype=float)
    B_ref = np.array(f.jacobian([V]).subs(vals), dtype=float)
    A, B, point = sb.linearize(model, {"x": 0.5, "u_x": 0.3}, {"c": 0.7, "k": 2.0}, r=[0.4], return_point=True)
    assert point["qdot"] == pytest.approx([float(f[0].subs(vals))], rel=1e-12), "q' at the operating point"
    assert A == pytest.approx(A_ref, rel=1e-12), "A (dK_qd/dq q', dK_u/dq u, dM_d/dq u' terms) wrong"
    assert B == pytest.approx(B_ref, rel=1e-12), "B (dK_qd/dr q', dK_u/dr u, dM_d/dr u' terms) wrong"


def test_kinematic_equations_with_a_rest_and_a_configuration_dependent_coefficient():
    """(1 + x^2) x' - ux - c = 0, ux' = -k x:  x' = (ux + c) / (1 + x^2), so
    A = [[-2 x (ux + c) / (1 + x^2)^2, 1 / (1 + x^2)], [-k, 0]] and q' at the point is (ux + c) / (1 + x^2)."""
    x, ux = me.dynamicsymbols("x u_x")
    c, k = sm.symbols("c k")
    model = sb.compile(sb.EquationsOfMotion([x], [ux], [(1 + x**2) * x.diff(t) - ux - c],
                                            [ux.diff(t) + k * x]))
    xv, uv, cv, kv = 0.5, 0.3, 0.7, 2.0
    A, B, point = sb.linearize(model, {"x": xv, "u_x": uv}, {"c": cv, "k": kv}, return_point=True)
    den = 1 + xv**2
    assert point["qdot"] == pytest.approx([(uv + cv) / den], rel=1e-12), "q' at the operating point (sign of k?)"
    assert A == pytest.approx(np.array([[-2 * xv * (uv + cv) / den**2, 1 / den], [-kv, 0.0]]), rel=1e-12), \
        "A with a configuration-dependent K_qd and a kinematic rest wrong"


def test_a_reduced_block_reports_no_multipliers():
    """The conveyor of test_numeric_core (uy = c ux + k t, reduced in ux'): λ is not available,
    NaN as from model.accelerations (not 0, which would read as "no constraint force")."""
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    m, g, c, k = sm.symbols("m g c k")
    model = sb.compile(sb.EquationsOfMotion(
        [x, y], [ux], [x.diff(t) - ux, y.diff(t) - uy], [m * (1 + c**2) * ux.diff(t) + m * c * k + m * g * c],
        constraints=sb.ConstraintEquations(u_dep=[uy], velocity=[uy - c * ux - k * t])))
    P = {"m": 0.8, "g": 9.81, "c": 0.6, "k": 0.3}
    A, B, point = sb.linearize(model, {"x": 0.1, "y": 0.2, "u_x": 0.4}, P, return_point=True)
    assert point["multipliers"].shape == (1,) and np.isnan(point["multipliers"]).all()
    uxd = -(0.6 * 0.3 + 9.81 * 0.6) / (1 + 0.36)
    assert point["udot"] == pytest.approx([uxd, 0.6 * uxd + 0.3], rel=1e-12), "reduced block: u_dep' at the point"


def test_an_input_inside_the_velocity_constraint_matrix_with_nonzero_accelerations():
    """A particle steered on a slope r(t): uy = r ux (B = [-r, 1], the input inside B), a spring
    k x along x and gravity along y, augmented (λ the constraint force).  The acceleration
    constraint uy' - r ux' - r' ux = 0 gives

        ux' = -(k x + m r (r' ux + g)) / (m (1 + r^2)),

    nonzero at the point, so d(B_a)/dr u' = -ux' enters B.  Oracle: central differences of
    this closed form in [x, y, ux] and [r, r'] (no symbody code path)."""
    x, y, ux, uy, r = me.dynamicsymbols("x y u_x u_y r")
    m, g, k = sm.symbols("m g k")
    model = sb.compile(sb.EquationsOfMotion(
        [x, y], [ux], [x.diff(t) - ux, y.diff(t) - uy], [m * ux.diff(t) + k * x, m * uy.diff(t) + m * g],
        constraints=sb.ConstraintEquations(u_dep=[uy], velocity=[uy - r * ux]),
        specifieds=[r, r.diff(t)]))
    P = {"m": 1.3, "g": 9.81, "k": 2.0}

    def f(z, rr):
        xv, _, uv = z
        rv, rd = rr
        uxd = -(P["k"] * xv + P["m"] * rv * (rd * uv + P["g"])) / (P["m"] * (1 + rv**2))
        return np.array([uv, rv * uv, uxd])

    z0, r0, h = np.array([0.4, 0.1, 0.7]), np.array([0.5, 0.3]), 1e-5
    eye3, eye2 = np.eye(3), np.eye(2)
    A_fd = np.column_stack([(f(z0 + h * e, r0) - f(z0 - h * e, r0)) / (2 * h) for e in eye3])
    B_fd = np.column_stack([(f(z0, r0 + h * e) - f(z0, r0 - h * e)) / (2 * h) for e in eye2])
    A, B, point = sb.linearize(model, {"x": 0.4, "y": 0.1, "u_x": 0.7}, P, r=list(r0), return_point=True)
    assert point["udot"][0] == pytest.approx(f(z0, r0)[2], rel=1e-12), "ux' at the operating point"
    assert abs(point["udot"][0]) > 1.0, "the test needs u' != 0 at the operating point"
    # FD_TOL: central differences of a smooth O(1) closed form (see its definition); the
    # d(B_a)/dr u' term changes dux'/dr by ~ux' r / (1 + r^2) ~ 1.8, far above it
    assert A == pytest.approx(A_fd, rel=FD_TOL, abs=FD_TOL), "A with an input inside B wrong"
    assert B == pytest.approx(B_fd, rel=FD_TOL, abs=FD_TOL), \
        "B with an input inside B wrong (the d(B_a)/dr u' term of the acceleration constraint?)"
