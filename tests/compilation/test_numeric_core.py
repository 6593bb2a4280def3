"""The numeric core of a compiled model against closed forms derived by hand.

Written to kill the mutants ``make mutants`` found surviving (docs/testing.md): every
number here comes from a formula in this file, never from another symbody code path.

System 1, a particle pendulum in Cartesian coordinates whose pivot moves as
s(t) = a sin(w t), pushed along x by a specified force F(t), in unreduced (augmented) form
with λ in closed form (tests/systems/moving_pivot.py).

System 2, a particle on a conveyor in reduced (hand-derived) form: uy = c ux + k t
(b = -k t), gravity along -y, force F along x; Kane's reduced equation in ux' is
m (1 + c^2) ux' + m c k + m g c - F = 0, and uy' = c ux' + k.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.compilation.numeric_model import (
    Partition,
    SingularMassMatrixError,
    solve_dependent,
    solve_dynamics,
)
from symbody.errors import InputError, SingularConstraintError
from systems.moving_pivot import P1, closed_form, pendulum_eom
from systems.moving_pivot import pivot as _pivot

t = me.dynamicsymbols._t
SEED = 2016        # fixed: the same states on every run

#: kernels and the closed forms evaluate the same formulas in a different order: round-off
#: (~1e-15) times the conditioning of 2 x 2 / 3 x 3 solves (< 1e2 at these states); a wrong
#: sign or a dropped term changes results by O(1)
RTOL = 1e-10


@pytest.fixture(scope="module")
def pendulum():
    return sb.compile(pendulum_eom())


def _states(rng, k):
    """k states near the constraint (y < 0, away from the singular y = 0)."""
    tt = rng.uniform(0.1, 3.0, k)
    x = rng.uniform(-0.4, 0.4, k)
    y = -rng.uniform(0.5, 0.9, k)
    return tt, x, y, rng.uniform(-1.0, 1.0, k), rng.uniform(-2.0, 2.0, k)


def test_dependent_speed_has_the_closed_form_with_b_from_the_moving_pivot(pendulum):
    rng = np.random.default_rng(SEED)
    for tt, x, y, ux, F in zip(*_states(rng, 4)):
        uy, uxd, uyd, _ = closed_form(tt, x, y, ux, F)
        xd = pendulum.rhs(tt, [x, y, ux], P1, [F])
        assert xd == pytest.approx([ux, uy, uxd], rel=RTOL), \
            "rhs: dependent speed uy = -(B_ind u_ind + b) / B_dep or u' wrong"
        assert pendulum.full_speeds([x, y], [ux], P1, tt) == pytest.approx([ux, uy], rel=RTOL), \
            "full_speeds: dependent speed wrong (sign of b = -d s'?)"
    # t = 0 by default: s' = a w there, so b != 0 even at t = 0
    x, y, ux = 0.3, -0.7, 0.4
    uy0 = closed_form(0.0, x, y, ux, 0.0)[0]
    assert pendulum.full_speeds([x, y], [ux], P1) == pytest.approx([ux, uy0], rel=RTOL), \
        "full_speeds: the default time is not t = 0"


def test_another_dependent_set_gives_the_same_speeds_and_accelerations(pendulum):
    """ux dependent instead of uy: ux = s' - y uy / d; the motion is the same."""
    part = Partition((1,), (0,), 2, 2)
    rng = np.random.default_rng(SEED + 1)
    for tt, x, y, ux, F in zip(*_states(rng, 3)):
        uy, uxd, uyd, lam = closed_form(tt, x, y, ux, F)
        assert pendulum.full_speeds([x, y], [uy], P1, tt, partition=part) == pytest.approx([ux, uy], rel=RTOL), \
            "dependent speed in another dependent set (partition path of the solve) wrong"
        xd = pendulum.rhs(tt, [x, y, uy], P1, [F], partition=part)
        assert xd == pytest.approx([ux, uy, uyd], rel=RTOL), "rhs in another dependent set wrong"
        X = np.array([[x, y, uy]])
        assert pendulum.speeds_many([tt], X, P1, [F], partition=part)[0] == pytest.approx([ux, uy], rel=RTOL), \
            "batch dependent speeds in another dependent set wrong"
        ud, lam_p = pendulum.accelerations([x, y], [uy], P1, tt, [F], partition=part)
        assert np.concatenate([ud, lam_p]) == pytest.approx([uxd, uyd, lam], rel=RTOL), \
            "accelerations from the independent speeds of another dependent set wrong"


def test_accelerations_and_multiplier_have_the_closed_form(pendulum):
    rng = np.random.default_rng(SEED + 2)
    for tt, x, y, ux, F in zip(*_states(rng, 4)):
        uy, uxd, uyd, lam = closed_form(tt, x, y, ux, F)
        ud, lm = pendulum.accelerations([x, y], [ux, uy], P1, tt, [F])
        assert ud == pytest.approx([uxd, uyd], rel=RTOL), "u' of the augmented system wrong"
        assert lm.shape == (1,) and lm[0] == pytest.approx(lam, rel=RTOL), \
            "multiplier λ (M_d u' + g_d = B^T λ) wrong: sign or value"
        # from the independent speed only: uy solved first
        ud2, lm2 = pendulum.accelerations([x, y], [ux], P1, tt, [F])
        assert np.concatenate([ud2, lm2]) == pytest.approx([uxd, uyd, lam], rel=RTOL)
    # the default time is t = 0 (the pivot's s'' = 0 but s' = a w there)
    x, y, ux, F = 0.2, -0.8, -0.3, 0.5
    uy, uxd, uyd, lam = closed_form(0.0, x, y, ux, F)
    ud, lm = pendulum.accelerations([x, y], [ux, uy], P1, r=[F])
    assert np.concatenate([ud, lm]) == pytest.approx([uxd, uyd, lam], rel=RTOL), \
        "accelerations: the default time is not t = 0"


def test_batch_evaluation_matches_the_closed_form(pendulum):
    rng = np.random.default_rng(SEED + 3)
    tt, x, y, ux, F = _states(rng, 5)
    uy, uxd, uyd, lam = closed_form(tt, x, y, ux, F)
    X = np.column_stack([x, y, ux])
    R = F[:, None]
    Xd = pendulum.rhs_many(tt, X, P1, R)
    assert Xd == pytest.approx(np.column_stack([ux, uy, uxd]), rel=RTOL), "rhs_many (batch u_dep and u') wrong"
    U = pendulum.speeds_many(tt, X, P1, R)
    assert U == pytest.approx(np.column_stack([ux, uy]), rel=RTOL), "speeds_many: batch dependent speeds wrong"
    samples = pendulum.evaluate_samples(tt, X, P1, R)
    s = _pivot(tt)
    assert samples.speeds == pytest.approx(np.column_stack([ux, uy]), rel=RTOL)
    assert samples.holonomic[:, 0] == pytest.approx((x - s[0]) ** 2 + y**2 - P1["l"] ** 2, rel=RTOL, abs=1e-14), \
        "sample holonomic residual wrong"
    assert np.abs(samples.velocity).max() < 1e-14, "sample velocity residual is not at round-off"
    assert samples.multipliers[:, 0] == pytest.approx(lam, rel=RTOL), "Trajectory.multipliers (batch λ) wrong"
    # given speeds are used as they are: uy off the constraint shows in the velocity residual
    off = np.column_stack([ux, uy + 0.1])
    given = pendulum.evaluate_samples(tt, X, P1, R, speeds=off)
    assert given.velocity[:, 0] == pytest.approx(y * 0.1, rel=RTOL), \
        "velocity residual of given speeds is not B u + b"
    lam_off = closed_form(tt, x, y, ux, F, uy=uy + 0.1)[3]
    assert given.multipliers[:, 0] == pytest.approx(lam_off, rel=RTOL)
    assert pendulum.evaluate_samples(tt, X, P1, R, multipliers=False).multipliers is None
    # one state, a constant input broadcast
    Xd1 = pendulum.rhs_many(tt[0], X[:1], P1, [F[0]])
    assert Xd1[0] == pytest.approx([ux[0], uy[0], uxd[0]], rel=RTOL)


def test_constraint_residuals_have_the_closed_form(pendulum):
    x, y, ux, uy, tt = 0.35, -0.6, 0.7, -0.2, 1.3
    s, sd, _ = _pivot(tt)
    d = x - s
    fh = d**2 + y**2 - P1["l"] ** 2
    assert pendulum.holonomic_residual([x, y], P1, tt) == pytest.approx([fh], rel=RTOL), \
        "holonomic residual f_h(q, t) wrong"
    fh0 = (x - _pivot(0.0)[0]) ** 2 + y**2 - P1["l"] ** 2
    assert pendulum.holonomic_residual([x, y], P1) == pytest.approx([fh0], rel=RTOL), \
        "holonomic residual: the default time is not t = 0"
    vel = d * (ux - sd) + y * uy
    assert pendulum.velocity_residual([x, y], [ux, uy], P1, tt) == pytest.approx([vel], rel=RTOL), \
        "velocity residual B u + b wrong"
    vel0 = (x - _pivot(0.0)[0]) * (ux - _pivot(0.0)[1]) + y * uy
    assert pendulum.velocity_residual([x, y], [ux, uy], P1) == pytest.approx([vel0], rel=RTOL), \
        "velocity residual: the default time is not t = 0"
    with pytest.raises(InputError, match="all 2 speeds"):
        pendulum.velocity_residual([x, y], [ux], P1, tt)


def test_residuals_of_an_unconstrained_model_are_empty():
    x, ux = me.dynamicsymbols("x u_x")
    k = sm.Symbol("k")
    model = sb.compile(sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [ux.diff(t) + k * x]))
    samples = model.evaluate_samples([0.0, 1.0], np.array([[0.3, 0.1], [0.2, 0.0]]), {"k": 2.0})
    assert samples.holonomic.shape == (2, 0) and samples.velocity.shape == (2, 0)
    assert samples.multipliers is None and samples.speeds == pytest.approx(np.array([[0.1], [0.0]]))
    assert model.velocity_residual([0.3], [0.1], {"k": 2.0}).shape == (0,)
    assert model.holonomic_residual([0.3], {"k": 2.0}).shape == (0,)
    ud, lam = model.accelerations([0.3], [0.1], {"k": 2.0})
    assert ud == pytest.approx([-0.6], rel=RTOL)
    assert lam.shape == (0,), "an unconstrained model has no multipliers (shape (0,))"


def test_projection_solves_the_holonomic_constraint(pendulum):
    tt = 0.7
    s = _pivot(tt)[0]
    l = P1["l"]
    x = 0.3
    y_exact = -np.sqrt(l**2 - (x - s) ** 2)
    for guess in (y_exact + 0.02, -0.2, -3.0):        # close, far (damped steps), beyond
        q, ok, norm = pendulum.project_coordinates([x, guess], P1, tt)
        assert ok, f"Newton's method did not converge from y = {guess}"
        assert q[0] == x, "projection moved the independent coordinate"
        assert q[1] == pytest.approx(y_exact, rel=1e-12), f"projected y wrong from the guess {guess}"
        assert norm < 1e-13, "the reported residual is not the final one"
    # the other dependent set: x solved with y held (the root on the side of the guess)
    part = Partition((0,), (1,), 2, 2)
    y = -0.6
    x_exact = s + np.sqrt(l**2 - y**2)
    q, ok, _ = pendulum.project_coordinates([x_exact - 0.1, y], P1, tt, partition=part)
    assert ok and q[1] == y and q[0] == pytest.approx(x_exact, rel=1e-12), \
        "projection in another dependent set wrong"
    # a consistent start is returned as it is; the default time is t = 0
    q, ok, norm = pendulum.project_coordinates([0.1, -np.sqrt(l**2 - (0.1 - _pivot(0.0)[0]) ** 2)], P1)
    assert ok and norm < 1e-15
    # max_iter bounds the iterations: one step from far away cannot converge
    q, ok, norm = pendulum.project_coordinates([x, -3.0], P1, tt, max_iter=1)
    assert not ok and norm > 1e-3, "one Newton step reported as converged"
    # at y = 0, ∂f_h/∂y = 2 y = 0
    with pytest.raises(SingularConstraintError, match="dependent coordinates y"):
        pendulum.project_coordinates([x, 0.0], P1, tt)



def test_batched_projection_equals_the_one_by_one_projection(pendulum):
    """project_coordinates_many: the same Newton steps for all rows at once (equal to the
    one-by-one projection to round-off); rows that need a damped step, a singular Jacobian
    or more iterations are returned unchanged and marked not done."""
    rng = np.random.default_rng(3)
    tt, x, y, _, _ = _states(rng, 12)
    s = np.array([_pivot(t)[0] for t in tt])
    y_exact = -np.sqrt(P1["l"] ** 2 - (x - s) ** 2)
    Q = np.column_stack([x, y_exact + rng.uniform(-0.02, 0.02, 12)])
    Q[3, 1] = -0.01                               # far away: a full step overshoots
    Q[5, 1] = -3.0                                # beyond: full steps converge
    Q[7, 1] = 0.0                                 # singular: dF/dy = 2 y = 0
    out, done = pendulum.project_coordinates_many(tt, Q, P1)
    assert done.tolist() == [i not in (3, 7) for i in range(12)]
    np.testing.assert_array_equal(out[[3, 7]], Q[[3, 7]])
    q, ok, _ = pendulum.project_coordinates(Q[3], P1, tt[3])    # (damped steps: converges)
    assert ok and q[1] == pytest.approx(y_exact[3], rel=1e-12)
    for i in np.flatnonzero(done):
        q, ok, _ = pendulum.project_coordinates(Q[i], P1, tt[i])
        assert ok and out[i, 0] == x[i]
        assert out[i, 1] == pytest.approx(q[1], rel=1e-14, abs=1e-15)
        assert out[i, 1] == pytest.approx(y_exact[i], rel=1e-12)
    # another dependent set (x solved, y held)
    part = Partition((0,), (1,), 2, 2)
    Q2 = np.column_stack([s + np.sqrt(P1["l"] ** 2 - y**2) - 0.05, y])
    out2, done2 = pendulum.project_coordinates_many(tt, Q2, P1, partition=part)
    assert done2.all() and np.array_equal(out2[:, 1], y)
    np.testing.assert_allclose(out2[:, 0], s + np.sqrt(P1["l"] ** 2 - y**2), rtol=1e-12)


def test_projection_in_a_middle_coordinate_and_exact_steps():
    """f_h = x + y^2 + 2 z - c with z dependent (default) or y (index 1 of 3, not 0).

    z dependent: f_h is linear in z, one Newton step is exact (z = (c - x - y^2) / 2; the
    numbers are dyadic, so the step lands on f_h = 0 exactly and max_iter = 1 suffices).
    y dependent: y = sqrt(c - x - 2 z) (the root on the side of the guess); ∂f_h/∂y = 2 y
    is singular at y = 0.  A configuration already on f_h = 0 is returned as it is, even
    where the dependent set is singular (nothing to solve)."""
    x, y, z, ux, uy, uz = me.dynamicsymbols("x y z u_x u_y u_z")
    m, c = sm.symbols("m c")
    model = sb.compile(sb.EquationsOfMotion(
        [x, y], [ux, uy], [x.diff(t) - ux, y.diff(t) - uy, z.diff(t) - uz],
        [m * ux.diff(t), m * uy.diff(t), m * uz.diff(t)],
        constraints=sb.ConstraintEquations(q_dep=[z], u_dep=[uz], holonomic=[x + y**2 + 2 * z - c],
                                           velocity=[ux + 2 * y * uy + 2 * uz])))
    P = {"m": 1.0, "c": 1.75}
    q, ok, norm = model.project_coordinates([0.5, 0.5, 0.25], P, max_iter=1)
    assert ok and norm == 0.0 and list(q) == [0.5, 0.5, 0.5], \
        "one exact Newton step (f_h = 0 exactly) not reported as converged"
    part = Partition((1,), (1,), 3, 3)
    q, ok, norm = model.project_coordinates([0.1, 1.0, 0.3], P, partition=part)
    # y = sqrt(1.05) ~ 1, well conditioned (dy/df_h = 1 / (2 y)): round-off ~1e-16
    assert ok and q[1] == pytest.approx(np.sqrt(1.75 - 0.1 - 0.6), rel=1e-12) and q[0] == 0.1 and q[2] == 0.3, \
        f"projection for y (index 1) with x, z held wrong: {q}"
    with pytest.raises(SingularConstraintError, match=r"singular in the dependent coordinates y\(t\) at q"):
        model.project_coordinates([0.1, 0.0, 0.3], P, partition=part)
    # on the constraint (0.5 + 0 + 1.25 - 1.75 = 0 exactly) at the singular y = 0
    q, ok, norm = model.project_coordinates([0.5, 0.0, 0.625], P, partition=part)
    assert ok and norm == 0.0 and list(q) == [0.5, 0.0, 0.625], \
        "a configuration already on f_h = 0 was not returned as it is"


def test_consistent_state_solves_the_dependent_coordinate(pendulum):
    l = P1["l"]
    x0 = pendulum.consistent_state([0.2, -0.5, 0.1], P1, 0.4)
    s = _pivot(0.4)[0]
    assert x0 == pytest.approx([0.2, -np.sqrt(l**2 - (0.2 - s) ** 2), 0.1], rel=1e-12)


def test_singular_velocity_constraints_name_the_dependent_speed(pendulum):
    """At y = 0 the dependent speed uy has coefficient B_dep = y = 0."""
    with pytest.raises(SingularConstraintError, match="dependent speeds u_y"):
        pendulum.rhs(0.5, [0.3, 0.0, 0.1], P1, [0.0])
    with pytest.raises(SingularConstraintError, match="dependent speeds u_y"):
        pendulum.rhs_many([0.5], np.array([[0.3, 0.0, 0.1]]), P1, [0.0])



def test_a_dependent_set_that_is_not_the_last_speed():
    """Three speeds, one constraint ux + y uy + 2 uz - k t = 0 (uz dependent by default).
    With uy dependent instead (index 1 of 3, not 0): uy = (k t - ux - 2 uz) / y, written at
    its own place in u; at y = 0 that dependent set is singular and the error names uy
    (one state and a batch)."""
    x, y, z, ux, uy, uz = me.dynamicsymbols("x y z u_x u_y u_z")
    m, k = sm.symbols("m k")
    model = sb.compile(sb.EquationsOfMotion(
        [x, y, z], [ux, uy], [x.diff(t) - ux, y.diff(t) - uy, z.diff(t) - uz],
        [m * ux.diff(t), m * uy.diff(t), m * uz.diff(t)],
        constraints=sb.ConstraintEquations(u_dep=[uz], velocity=[ux + y * uy + 2 * uz - k * t])))
    P = {"m": 1.0, "k": 0.6}
    part = Partition((), (1,), 3, 3)
    for tt, yv, uxv, uzv in ((1.5, 0.5, 0.4, 0.7), (0.3, -1.2, -0.8, 0.25)):
        uyv = (P["k"] * tt - uxv - 2 * uzv) / yv
        assert model.full_speeds([0.1, yv, 0.3], [uxv, uzv], P, tt, partition=part) == \
            pytest.approx([uxv, uyv, uzv], rel=RTOL), "dependent speed uy (index 1) solved or placed wrong"
        xd = model.rhs(tt, [0.1, yv, 0.3, uxv, uzv], P, partition=part)
        assert xd[:3] == pytest.approx([uxv, uyv, uzv], rel=RTOL), "q' = u in the dependent set {uy} wrong"
    with pytest.raises(SingularConstraintError, match=r"singular in the dependent speeds u_y\(t\) at t = 1\.5"):
        model.full_speeds([0.1, 0.0, 0.3], [0.4, 0.7], P, 1.5, partition=part)
    with pytest.raises(SingularConstraintError, match=r"singular in the dependent speeds u_y\(t\) at one of"):
        model.speeds_many([1.5], np.array([[0.1, 0.0, 0.3, 0.4, 0.7]]), P, partition=part)


def test_a_nonsymmetric_mass_matrix_and_singular_mass_matrices(pendulum):
    """M_d = [[y, k], [0, m]] (a hand-written block, not symmetric): y ux' + k uy' = F,
    m uy' = -m g, so uy' = -g and ux' = (F + k g) / y (solving with M_d^T instead would give
    ux' = F / y); at y = 0 M_d is singular.  The augmented system of the pendulum is singular
    where B_a = [d, y] = 0, i.e. at the pivot (x = s, y = 0).  Each error names its matrix."""
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    F = me.dynamicsymbols("F")
    m, g, k = sm.symbols("m g k")
    model = sb.compile(sb.EquationsOfMotion(
        [x, y], [ux, uy], [x.diff(t) - ux, y.diff(t) - uy],
        [y * ux.diff(t) + k * uy.diff(t) - F, m * uy.diff(t) + m * g]))
    P = {"m": 1.3, "g": 9.81, "k": 0.7}
    for yv, Fv in ((0.6, 2.0), (-1.1, -0.5)):
        xd = model.rhs(0.2, [0.1, yv, 0.3, -0.4], P, [Fv])
        assert xd == pytest.approx([0.3, -0.4, (Fv + P["k"] * P["g"]) / yv, -P["g"]], rel=RTOL), \
            "non-symmetric M_d: u' = M_d^-1 (F, -m g) wrong (transposed or not solved?)"
    with pytest.raises(SingularMassMatrixError, match=r"^the dynamic mass matrix M_d is singular at t = 0\.2 "):
        model.rhs(0.2, [0.1, 0.0, 0.3, -0.4], P, [2.0])
    s = _pivot(0.5)[0]
    with pytest.raises(SingularMassMatrixError,
                       match=r"^the augmented system \[\[M_d, -B_a\^T\], \[B_a, 0\]\] is singular at t = 0\.5 "):
        pendulum.accelerations([s, 0.0], [0.1, 0.2], P1, 0.5, [0.0])


# --------------------------------------------------------------------------- reduced form
P2 = {"m": 0.8, "g": 9.81, "c": 0.6, "k": 0.3}


@pytest.fixture(scope="module")
def conveyor():
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    F = me.dynamicsymbols("F")
    m, g, c, k = sm.symbols("m g c k")
    eom = sb.EquationsOfMotion(
        [x, y], [ux], [x.diff(t) - ux, y.diff(t) - uy],
        [m * (1 + c**2) * ux.diff(t) + m * c * k + m * g * c - F],
        constraints=sb.ConstraintEquations(u_dep=[uy], velocity=[uy - c * ux - k * t]),
        name="conveyor (reduced)")
    return sb.compile(eom)


def test_reduced_block_gives_the_dependent_accelerations(conveyor):
    m, g, c, k = (P2[s] for s in "mgck")
    for tt, ux, F in ((0.0, 0.4, 1.5), (1.7, -0.3, -0.8)):
        uxd = (F - m * c * k - m * g * c) / (m * (1 + c**2))
        uy = c * ux + k * tt
        ud, lam = conveyor.accelerations([0.1, 0.2], [ux], P2, tt, [F])
        assert ud == pytest.approx([uxd, c * uxd + k], rel=RTOL), \
            "reduced block: u_dep' = -B_a,dep^-1 (B_a,ind u_ind' + b_a) wrong"
        assert lam.shape == (1,) and np.isnan(lam).all(), "a reduced block has no multipliers (NaN)"
        smp = conveyor.evaluate_samples([tt], np.array([[0.1, 0.2, ux]]), P2, np.array([[F]]))
        assert smp.holonomic.shape == (1, 0) and smp.multipliers is None
        assert smp.speeds[0] == pytest.approx([ux, uy], rel=RTOL) and abs(smp.velocity[0, 0]) < 1e-15
        xd = conveyor.rhs(tt, [0.1, 0.2, ux], P2, [F])
        assert xd == pytest.approx([ux, uy, uxd], rel=RTOL), "reduced rhs: u_dep from B u + b = 0 wrong"


# --------------------------------------------------------------------------- extra states
def test_extra_states_reach_the_accelerations():
    """A cart pushed by a force that is an extra state a (a' = (F - a) / τ): ux' = a / m."""
    x, ux, a = me.dynamicsymbols("x u_x a")
    F = me.dynamicsymbols("F")
    m, tau = sm.symbols("m tau")
    eom = sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [m * ux.diff(t) - a],
                               specifieds=[F], extra_states={a: (F - a) / tau})
    model = sb.compile(eom)
    P = {"m": 2.0, "tau": 0.1}
    ud, lam = model.accelerations([0.0], [0.3], P, r=[1.0], extra=[0.7])
    assert ud == pytest.approx([0.35], rel=RTOL), "the extra state's value did not reach the dynamics"
    Xd = model.rhs_many([0.0, 1.0], np.array([[0.0, 0.3, 0.7], [0.1, 0.2, 0.4]]), P, [1.0])
    assert Xd == pytest.approx(np.array([[0.3, 0.35, 3.0], [0.2, 0.2, 6.0]]), rel=RTOL), \
        "batch path: the extra states' derivatives (F - a) / τ wrong"
    with pytest.raises(InputError, match="^the accelerations depends on the extra states a"):
        model.accelerations([0.0], [0.3], P, r=[1.0])


# --------------------------------------------------------------------------- public solves
def test_solve_dependent_and_solve_dynamics_against_numpy():
    rng = np.random.default_rng(SEED + 4)
    m, o = 2, 5
    B = rng.normal(size=(m, o))
    rest = rng.normal(size=m)
    x_ind = rng.normal(size=o - m)
    x_dep, info = solve_dependent(B, rest, x_ind)
    assert info == 0
    assert B @ np.concatenate([x_ind, x_dep]) + rest == pytest.approx(np.zeros(m), abs=1e-12), \
        "solve_dependent: B x + rest != 0 (sign of rest?)"
    ind, dep = [0, 2, 4], [1, 3]
    x_dep2, info = solve_dependent(B, rest, x_ind, ind, dep)
    x = np.empty(o)
    x[ind], x[dep] = x_ind, x_dep2
    assert info == 0 and B @ x + rest == pytest.approx(np.zeros(m), abs=1e-12), \
        "solve_dependent with column indices wrong"
    assert solve_dependent(np.zeros((m, o)), rest, x_ind)[1] > 0, "a singular B_dep is not reported"

    A = rng.normal(size=(o, o))
    Md = A @ A.T + o * np.eye(o)
    rhs_d, rhs_a = rng.normal(size=o), rng.normal(size=m)
    sol, info = solve_dynamics(Md, rhs_d, B, rhs_a)
    ud, lam = sol[:o], sol[o:]
    assert info == 0
    assert Md @ ud == pytest.approx(rhs_d + B.T @ lam, abs=1e-12), \
        "solve_dynamics: M_d u' + g_d != B^T λ (multiplier sign)"
    assert B @ ud == pytest.approx(rhs_a, abs=1e-12), "solve_dynamics: B_a u' != -b_a"
    Md0 = Md.copy()
    for symmetric in (False, True):
        sol, info = solve_dynamics(Md, rhs_d, symmetric=symmetric)
        assert info == 0 and Md @ sol == pytest.approx(rhs_d, abs=1e-12)
        sol, info = solve_dynamics(Md, rhs_d, np.empty((0, o)), np.empty(0), symmetric=symmetric)
        assert info == 0 and Md @ sol == pytest.approx(rhs_d, abs=1e-12)
    assert (Md == Md0).all(), "solve_dynamics modified the caller's M_d"
    # not symmetric unless told: a non-symmetric M_d (a reduced, hand-derived block) by LU
    Mn = Md + np.triu(rng.normal(size=(o, o)), 1)
    sol, info = solve_dynamics(Mn, rhs_d)
    assert info == 0 and Mn @ sol == pytest.approx(rhs_d, abs=1e-12), "solve_dynamics of a non-symmetric M_d"
    # preallocated buffers give the same answer
    sys_buf, rhs_buf = np.empty((o + m, o + m), order="F"), np.empty(o + m)
    sol2, _ = solve_dynamics(Md, rhs_d, B, rhs_a, system=sys_buf, system_rhs=rhs_buf)
    assert sol2 == pytest.approx(np.concatenate([ud, lam]), rel=1e-12)
    assert solve_dynamics(Md, rhs_d, np.zeros((m, o)), rhs_a)[1] > 0, "a singular augmented system is not reported"


def test_velocity_residual_with_two_constraints_and_an_input():
    """uy - c ux - v = 0 (v a specified input) and uz - ux = 0: B u + b row by row.
    (The acceleration constraints bring v' as a second specified input.)"""
    x, y, z, ux, uy, uz = me.dynamicsymbols("x y z u_x u_y u_z")
    v = me.dynamicsymbols("v")
    c = sm.Symbol("c")
    eom = sb.EquationsOfMotion(
        [x, y, z], [ux], [x.diff(t) - ux, y.diff(t) - uy, z.diff(t) - uz],
        [ux.diff(t) + x],
        constraints=sb.ConstraintEquations(u_dep=[uy, uz], velocity=[uy - c * ux - v, uz - ux]))
    model = sb.compile(eom)
    res = model.velocity_residual([0.1, 0.2, 0.3], [0.5, 0.7, 0.4], {"c": 2.0}, r=[0.25, 0.0])
    assert res == pytest.approx([0.7 - 1.0 - 0.25, 0.4 - 0.5], rel=RTOL), \
        "velocity residual with two constraints / an input inside b wrong"
    with pytest.raises(InputError, match="specified inputs v"):
        model.velocity_residual([0.1, 0.2, 0.3], [0.5, 0.7, 0.4], {"c": 2.0})
    assert model.full_speeds([0.1, 0.2, 0.3], [0.5], {"c": 2.0}, r=[0.25, 0.0]) == \
        pytest.approx([0.5, 1.25, 0.5], rel=RTOL)


def test_a_symmetric_indefinite_mass_matrix_is_solved_by_the_fallback():
    """M_d = [[1, 2], [2, 1]] is symmetric but indefinite: Cholesky fails in place and the
    right-hand side falls back to LU of a fresh evaluation.  u' = M_d^-1 [a, b]."""
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    a, b = sm.symbols("a b")
    model = sb.compile(sb.EquationsOfMotion(
        [x, y], [ux, uy], [x.diff(t) - ux, y.diff(t) - uy],
        [ux.diff(t) + 2 * uy.diff(t) - a, 2 * ux.diff(t) + uy.diff(t) - b]))
    xd = model.rhs(0.0, [0.1, 0.2, 0.3, 0.4], {"a": 1.0, "b": 5.0})
    assert xd == pytest.approx([0.3, 0.4, (-1.0 + 10.0) / 3, (2.0 - 5.0) / 3], rel=RTOL), \
        "indefinite symmetric M_d: the LU fallback after a failed Cholesky is wrong"


def test_projection_damps_newtons_step_where_the_full_step_diverges():
    """f_h = atan(y) - x with y dependent: the exact y is tan(x), and Newton's method on atan
    overshoots and diverges from |y - tan x| large (the full step from y = 3 lands at y < -3,
    then further out).  The damped Newton step (halved until |f_h| decreases) converges."""
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    m = sm.symbols("m")
    model = sb.compile(sb.EquationsOfMotion(
        [x], [ux], [x.diff(t) - ux, y.diff(t) - uy], [m * ux.diff(t), m * uy.diff(t)],
        constraints=sb.ConstraintEquations(q_dep=[y], u_dep=[uy], holonomic=[sm.atan(y) - x],
                                           velocity=[uy / (1 + y**2) - ux])))
    xv = 0.3
    try:
        q, ok, norm = model.project_coordinates([xv, 3.0], {"m": 1.0})
    except SingularConstraintError as exc:   # the undamped iterates run off to |y| ~ 1e250
        pytest.fail(f"Newton's method diverged from y = 3 (the step not damped?): {exc}")
    assert ok, f"damped Newton's method did not converge from y = 3 (ended at y = {q[1]}, |f_h| = {norm})"
    # y = tan(x) is O(1) and well conditioned (dy/df_h = 1 + y^2 ~ 1.1): round-off ~1e-15
    assert q[1] == pytest.approx(np.tan(xv), rel=1e-12), \
        f"projected y = {q[1]} != tan(x) = {np.tan(xv)} (the undamped Newton step diverges from y = 3)"
    assert q[0] == xv, "projection moved the independent coordinate"
