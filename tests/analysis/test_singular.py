"""Singular configurations (issue 6, item 4): switching the dependent set, or stopping cleanly.

The four-bar of the zoo (symbody.models.four_bar: relative angles q1 of the ground link
A, q2 of the coupler B, q3 of C; q1 independent) with other lengths:

- crank-rocker: C (0.5) is the shortest link and sits at the ground pivot P4, so C turns
  fully and A rocks with q1 in [acos(2/3), pi/2] (la^2 + ln^2 = (lb + lc)^2 makes the
  upper extreme exactly pi/2).  At both extremes B and C are collinear and
  det ∂f_h/∂(q2, q3) = 0: the model's own dependent set is singular there.
- triple rocker (non-Grashof: s + l = 3.5 > p + q = 2.3): no joint turns fully, so every
  choice of independent coordinate meets singular configurations and the dependent set
  must change again and again.
- parallelogram (la = lc, lb = ln): at q1 = pi all links are collinear and the full
  Jacobian ∂f_h/∂q loses rank (a change point): no dependent set is regular there.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm

import symbody
from symbody import Projection, Solver
from symbody.analysis import Trajectory, simulate
from symbody.compilation import compile, make_function
from symbody.compilation.numeric_model import Partition
from symbody.errors import InputError, SimulationError
from symbody.models import four_bar
from symbody.models.four_bar import four_bar_system

CRANK_ROCKER = {"l_a": 1.5, "l_b": 2.0, "l_c": 0.5, "l_n": 2.0, "m": 1.0, "g": 9.81}
TRIPLE_ROCKER = {"l_a": 1.0, "l_b": 1.2, "l_c": 1.1, "l_n": 2.5, "m": 1.0, "g": 9.81}
PARALLELOGRAM = {"l_a": 1.0, "l_b": 2.0, "l_c": 1.0, "l_n": 2.0, "m": 1.0, "g": 0.0}
Q1_MAX = math.pi / 2                       # crank-rocker: rocker A's extreme positions
Q1_MIN = math.acos(2.0 / 3.0)
TIGHT = {"solver": Solver(rtol=1e-10, atol=1e-10)}


def _assemble(p: dict, q1: float) -> np.ndarray:
    """(q1, q2, q3) closing the loop for the ground-link angle q1 (one assembly branch)."""
    la, lb, lc, ln = p["l_a"], p["l_b"], p["l_c"], p["l_n"]
    P2 = la * np.array([math.cos(q1), math.sin(q1)])
    P4 = np.array([ln, 0.0])
    d = float(np.linalg.norm(P4 - P2))
    a = (lb**2 - lc**2 + d**2) / (2 * d)
    h = math.sqrt(lb**2 - a**2)
    e = (P4 - P2) / d
    P3 = P2 + a * e + h * np.array([-e[1], e[0]])
    th_b = math.atan2(*(P3 - P2)[::-1])
    th_c = math.atan2(*(P4 - P3)[::-1])
    return np.array([q1, th_b - q1, th_c - th_b])


def _state(model, p: dict, q1: float, u1: float) -> np.ndarray:
    """[q1, q2, q3, u1] with the speeds along the motion the loop allows (u1 given)."""
    q = _assemble(p, q1)
    P = model.constants_array(p)
    assert np.abs(model.holonomic_residual(q, P)).max() < 1e-12
    return np.concatenate([q, [u1]])


@pytest.fixture(scope="module")
def zoo():
    """The zoo four-bar (symbody.KanesMethod: unreduced dynamics) and its energy."""
    mdl = four_bar()
    model = compile(mdl.eom)
    energy = make_function([list(model.coordinates), list(model.speeds), list(model.constants)],
                           mdl.energy)
    return mdl, model, energy


def _energy(energy, model, tr, p):
    return energy(tr.q, tr.u, model.constants_array(p))


def _det_dependent(model, tr, p, cols=(1, 2)) -> np.ndarray:
    P = model.constants_array(p)
    return np.array([np.linalg.det(model.holonomic_jacobian(q, P)[:, list(cols)]) for q in tr.q])


# ---------------------------------------------------------------- switching
def test_crank_rocker_switches_and_passes_the_rocker_extremes(zoo):
    _, model, energy = zoo
    x0 = _state(model, CRANK_ROCKER, 1.2, 3.0)
    tr = simulate(model, (0.0, 4.0), x0, CRANK_ROCKER, **TIGHT)
    assert tr.success, tr.message
    assert tr.partition_changes and "switch" in tr.message
    # the run ends in the set with the crank joint q3 independent, which is regular throughout
    assert tr.partition_changes[-1].dependent_coordinates == ("q1", "q2")
    assert tr.partition_changes[-1].dependent_speeds == ("u1", "u2")
    # the model's own dependent set (q2, q3) was singular many times along the way
    det = _det_dependent(model, tr, CRANK_ROCKER)
    crossings = int(np.count_nonzero(np.diff(np.sign(det)) != 0))
    assert crossings >= 6
    assert tr.q[:, 0].max() == pytest.approx(Q1_MAX, abs=1e-3)
    assert tr.q[:, 0].min() == pytest.approx(Q1_MIN, abs=1e-3)
    assert Q1_MIN - 1e-9 <= tr.q[:, 0].min() and tr.q[:, 0].max() <= Q1_MAX + 1e-9   # never beyond
    # closed loop, consistent speeds, conserved energy
    assert tr.max_holonomic_residual < 1e-10
    assert tr.max_velocity_residual < 1e-10
    e = _energy(energy, model, tr, CRANK_ROCKER)
    assert np.abs(e - e[0]).max() < 1e-6 * abs(e[0])
    # columns in model order whatever the dependent set
    assert tr.coordinates == model.coordinates and tr.speeds == model.speeds
    assert tr.states == model.states
    np.testing.assert_array_equal(tr.x[:, :3], tr.q)
    np.testing.assert_array_equal(tr.x[:, 3], tr.u[:, 0])
    np.testing.assert_array_equal(tr.column("u3"), tr.u[:, 2])


def test_switching_agrees_with_a_formulation_that_never_needs_to(zoo):
    """The crank joint q3 as the independent coordinate is regular throughout."""
    _, model, _ = zoo
    system, ex = four_bar_system()
    q1, q2, q3 = ex["q"]
    u1, u2, u3 = ex["u"]
    system.q_ind, system.q_dep = [q3], [q1, q2]
    system.u_ind, system.u_dep = [u3], [u1, u2]
    _, eom = system.form(name="four-bar, crank angle independent")
    crank = compile(eom)
    assert crank.coordinates == (q3, q1, q2)

    x0 = _state(model, CRANK_ROCKER, 1.2, 3.0)
    t_eval = np.linspace(0.0, 3.0, 61)
    tr = simulate(model, (0.0, 3.0), x0, CRANK_ROCKER, t_eval=t_eval, **TIGHT)
    u0 = tr.u[0]
    start = {"q1": x0[0], "q2": x0[1], "q3": x0[2], "u3": u0[2]}
    ref = simulate(crank, (0.0, 3.0), start, CRANK_ROCKER, t_eval=t_eval, **TIGHT)
    assert tr.success and ref.success
    assert tr.partition_changes and not ref.partition_changes
    for name in ("q1", "q2", "q3", "u1", "u2", "u3"):
        np.testing.assert_allclose(tr.column(name), ref.column(name), atol=1e-7, err_msg=name)


def test_triple_rocker_switches_back_and_forth(zoo, tmp_path):
    _, model, energy = zoo
    x0 = _state(model, TRIPLE_ROCKER, 1.0, 3.0)
    tr = simulate(model, (0.0, 4.0), x0, TRIPLE_ROCKER, **TIGHT)
    assert tr.success, tr.message
    changes = tr.partition_changes
    assert len(changes) >= 8
    assert all(a.dependent_coordinates != b.dependent_coordinates for a, b in zip(changes, changes[1:]))
    assert all(a.t < b.t for a, b in zip(changes, changes[1:]))
    independent = {tuple(sorted({"q1", "q2", "q3"} - set(c.dependent_coordinates))) for c in changes}
    assert len(independent) >= 2
    assert tr.max_holonomic_residual < 1e-10 and tr.max_velocity_residual < 1e-10
    e = _energy(energy, model, tr, TRIPLE_ROCKER)
    assert np.abs(e - e[0]).max() < 1e-6 * abs(e[0])
    # every sample's dependent speeds satisfy the constraints in model order
    P = model.constants_array(TRIPLE_ROCKER)
    i = len(tr.t) // 2
    np.testing.assert_allclose(model.full_speeds(tr.q[i], tr.x[i, 3:], P), tr.u[i], rtol=1e-9, atol=1e-9)
    # the switches are saved with the trajectory
    back = Trajectory.load(tr.save(tmp_path / "rocker"))
    assert back.partition_changes == changes
    assert tr.summary()["dependent-set switches"] == len(changes)


@pytest.mark.parametrize("options", [
    {"constraints": "none"}, {"constraints": "baumgarte"}, {"constraints": "dae"},
    {"constraints": "project", "solver": Solver(method="Radau", rtol=1e-8, atol=1e-8)},
])
def test_every_mode_switches(zoo, options):
    _, model, energy = zoo
    x0 = _state(model, TRIPLE_ROCKER, 1.0, 3.0)
    t_eval = np.linspace(0.0, 2.0, 41)
    ref = simulate(model, (0.0, 2.0), x0, TRIPLE_ROCKER, t_eval=t_eval, **TIGHT)
    tr = simulate(model, (0.0, 2.0), x0, TRIPLE_ROCKER, t_eval=t_eval,
                  **{"solver": Solver(rtol=1e-8, atol=1e-8), **options})
    assert tr.success, tr.message
    assert len(tr.t) == len(t_eval)
    assert abs(len(tr.partition_changes) - len(ref.partition_changes)) <= 1
    np.testing.assert_allclose(tr.q, ref.q, atol=1e-4)
    bound = {"none": 1e-5, "baumgarte": 1e-6}.get(options["constraints"], 1e-12)
    assert tr.max_holonomic_residual < bound
    assert tr.max_velocity_residual < 1e-10


def test_a_poor_initial_dependent_set_is_switched_at_the_start(zoo):
    _, model, _ = zoo
    x0 = _state(model, CRANK_ROCKER, Q1_MAX - 1e-4, 0.01)        # the rocker almost at rest
    tr = simulate(model, (0.0, 0.5), x0, CRANK_ROCKER, **TIGHT)
    assert tr.success, tr.message
    assert tr.partition_changes[0].t == 0.0
    assert "q1" in tr.partition_changes[0].dependent_coordinates
    np.testing.assert_allclose(tr.x[0], x0, atol=1e-12)
    assert np.abs(tr.u[0, 1:]).max() > 10 * abs(x0[3])        # the others move fast
    assert tr.max_holonomic_residual < 1e-10


# ---------------------------------------------------------------- stopping
def test_without_switching_the_run_stops_at_the_singular_configuration(zoo):
    _, model, _ = zoo
    x0 = _state(model, CRANK_ROCKER, 1.2, 3.0)                  # q1 increases towards pi/2
    tr = simulate(model, (0.0, 4.0), x0, CRANK_ROCKER, constraints=Projection(switch_threshold=0),
                  **TIGHT)
    assert tr.status == -3 and not tr.success
    assert not tr.partition_changes
    assert "singular configuration at t = " in tr.message
    assert "∂f_h/∂(q2, q3)" in tr.message and "q1 = 1.5708" in tr.message
    assert "switch_threshold=0" in tr.message
    assert len(tr.t) > 3 and tr.q[-1, 0] < Q1_MAX
    assert tr.max_holonomic_residual < 1e-10


def test_book_form_stops_with_the_partial_trajectory(zoo):
    """Seed 001's form (u2, u3 eliminated symbolically for q1 independent) cannot switch."""
    mdl, _, _ = zoo
    book = compile(_reduced_by_hand(mdl.eom, eliminate_dependent_speeds=True))
    assert not book.partition_switchable and book.m == 0
    x0 = _state(book, CRANK_ROCKER, 1.2, 3.0)
    stops = []
    for options in ({}, {"t_eval": np.linspace(0.0, 1.0, 101)}, {"constraints": "dae"}):
        tr = simulate(book, (0.0, 1.0), x0, CRANK_ROCKER, **options)
        assert tr.status == -3, tr.message
        t_star = float(tr.message.split("singular configuration at t = ")[1].split(":")[0])
        stops.append(t_star)
        assert "∂f_h/∂(q2, q3)" in tr.message and "q1 = 1.5708" in tr.message
        assert "no dependent speeds" in tr.message and "unreduced" in tr.message
        assert len(tr.t) > 3 and tr.t[-1] <= t_star and tr.q[-1, 0] < Q1_MAX
        assert tr.max_holonomic_residual < 1e-8
    # q1 reaches its extreme pi/2 there: the time of the maximum of q1 in an independent run of
    # the unreduced zoo model (which switches its dependent set there and goes on), from the
    # parabola through the three samples around it on a 1e-4 s grid (vertex error ~ h^2 times
    # |q1''' / q1''|, far below 1e-7 s); the messages print t with 6 significant digits
    # (resolution 5e-7 at t ~ 0.15), and the three stopped runs integrate at the default
    # rtol = 1e-6, which places a maximum of q1 (where q1' = 0, so the time is sensitive) to
    # about 1e-5 s (measured 8e-6 s for the ODE runs): 3e-5 s
    _, model, _ = zoo
    h = 1e-4
    grid = np.arange(0.0, 0.3, h)
    ref = simulate(model, (0.0, 0.3), x0, CRANK_ROCKER, t_eval=grid, **TIGHT)
    k = int(np.argmax(ref.q[:, 0]))
    assert abs(ref.q[k, 0] - Q1_MAX) < 1e-6 and 0 < k < len(grid) - 1
    a, b, c = ref.q[k - 1:k + 2, 0]
    t_ref = grid[k] + h * (a - c) / (2 * (a - 2 * b + c))
    np.testing.assert_allclose(stops, t_ref, atol=3e-5)              # the same place in every mode
    with pytest.raises(SimulationError, match="singular configuration") as err:
        simulate(book, (0.0, 1.0), x0, CRANK_ROCKER, solver=Solver(raise_on_failure=True))
    assert err.value.trajectory.status == -3 and len(err.value.trajectory.t) > 3


def _reduced_by_hand(eom, eliminate_dependent_speeds=False):
    """The zoo four-bar's dynamics reduced to u1' symbolically, as the seed chapters do by hand:
    u = T u1 (T = [1; -B_dep^-1 B_ind]), u' = T u1' + c, and T^T (M_d u' + g_d) = 0.  With
    ``eliminate_dependent_speeds`` u2, u3 are replaced by T u1 everywhere (seed 001's form:
    no dependent speeds left); otherwise they stay, solved from the velocity constraints."""
    Md, gd = sm.Matrix(eom.dynamic_mass), sm.Matrix(eom.dynamic_rest)
    B, ba = sm.Matrix(eom.velocity_matrix), sm.Matrix(eom.acceleration_rest)
    Bd_inv = B[:, 1:].adjugate() / B[:, 1:].det()
    T = sm.Matrix.vstack(sm.eye(1), -Bd_inv * B[:, :1])
    c = sm.Matrix.vstack(sm.zeros(1, 1), -Bd_inv * ba)
    if eliminate_dependent_speeds:
        u_dep = dict(zip(eom.u_dep, T[1:, :] * sm.Matrix(eom.u_ind)))
        qdot = sm.Matrix(eom.qdot_solution).xreplace(u_dep)
        return symbody.EquationsOfMotion(
            eom.q_ind, eom.u_ind, kinematic=sm.Matrix(eom.qdot) - qdot,
            dynamic=(T.T * Md * T, (T.T * (Md * c + gd)).xreplace(u_dep)),
            constraints=symbody.ConstraintEquations(q_dep=eom.q_dep, holonomic=eom.holonomic),
            name="four-bar, seed 001 form")
    return symbody.EquationsOfMotion(
        eom.q_ind, eom.u_ind, kinematic=sm.Matrix(eom.qdot) - sm.Matrix(eom.qdot_solution),
        dynamic=(T.T * Md * T, T.T * (Md * c + gd)),
        constraints=symbody.ConstraintEquations(q_dep=eom.q_dep, u_dep=eom.u_dep,
                                                holonomic=eom.holonomic,
                                                velocity=sm.Matrix(eom.velocity_matrix) * sm.Matrix(eom.u)
                                                + sm.Matrix(eom.velocity_rest)),
        name="four-bar reduced by hand")


def test_reduced_dynamic_block_stops_and_agrees_until_then(zoo):
    mdl, model, _ = zoo
    reduced = compile(_reduced_by_hand(mdl.eom))
    assert reduced.dynamic_reduced and reduced.m == 2 and not reduced.partition_switchable
    x0 = _state(model, CRANK_ROCKER, 1.2, 3.0)
    t_eval = np.linspace(0.0, 1.0, 101)
    full = simulate(model, (0.0, 1.0), x0, CRANK_ROCKER, t_eval=t_eval, **TIGHT)
    for constraints in ("project", "dae"):
        tr = simulate(reduced, (0.0, 1.0), x0, CRANK_ROCKER, t_eval=t_eval, constraints=constraints,
                      solver=Solver(rtol=1e-7, atol=1e-9))
        assert tr.status == -3, tr.message
        assert "reduced form" in tr.message and "q1 = 1.5708" in tr.message
        k = len(tr.t)
        assert k > 10 and tr.t[-1] < 0.2
        np.testing.assert_allclose(tr.q, full.q[:k], atol=1e-6 if constraints == "project" else 1e-4)
    # the reduced model refuses another dependent set outright
    P = reduced.constants_array(CRANK_ROCKER)
    with pytest.raises(InputError, match="reduced form"):
        reduced.rhs(0.0, x0, P, partition=Partition((0, 1), (0, 1), 3, 3))


@pytest.mark.parametrize("constraints", ["project", "dae", "none", "baumgarte"])
def test_change_point_is_passed_on_the_branch_the_motion_is_on(zoo, constraints):
    """At q1 = pi all links of the parallelogram are collinear and ∂f_h/∂q loses rank: the run
    goes on in full coordinates there and stays a parallelogram (exact: q1 = pi/2 + 2 t)."""
    _, model, _ = zoo
    x0 = np.array([math.pi / 2, -math.pi / 2, -math.pi / 2, 2.0])    # q1' = 2 rad/s, uniform
    t_eval = np.linspace(0.0, 3.0, 301)
    tr = simulate(model, (0.0, 3.0), x0, PARALLELOGRAM, constraints=constraints, t_eval=t_eval,
                  **TIGHT)
    assert tr.status == 0, tr.message
    assert "full coordinates" in tr.message
    assert np.abs(tr.q[:, 0] - (math.pi / 2 + 2.0 * tr.t)).max() < 1e-6
    coupler = np.angle(np.exp(1j * (tr.q[:, 0] + tr.q[:, 1])))         # B stays horizontal
    assert np.abs(coupler).max() < 1e-6
    assert np.abs(tr.u[:, 0] - 2.0).max() < 1e-6
    if constraints in ("project", "dae"):
        assert tr.max_holonomic_residual < 1e-9
    elif constraints == "baumgarte":
        assert tr.max_holonomic_residual < 1e-6
    # q1 = pi at t = pi/4, 2 pi at 3 pi/4, ...: each change point inside a span integrated in
    # full coordinates (a change with no dependent coordinates starts one; the next ends it)
    changes = tr.partition_changes
    spans = [(c.t, changes[i + 1].t if i + 1 < len(changes) else 3.0)
             for i, c in enumerate(changes) if not c.dependent_coordinates]
    for t_c in (math.pi / 4, 3 * math.pi / 4):
        assert any(a <= t_c <= b for a, b in spans), (t_c, spans)


def test_change_point_stops_when_switching_is_off(zoo):
    _, model, _ = zoo
    x0 = np.array([math.pi / 2, -math.pi / 2, -math.pi / 2, 2.0])
    tr = simulate(model, (0.0, 3.0), x0, PARALLELOGRAM, constraints=Projection(switch_threshold=0),
                  **TIGHT)
    assert tr.status == -3
    assert "singular" in tr.message
    assert tr.t[-1] < math.pi / 4 + 1e-3 and tr.max_holonomic_residual < 1e-10


# ---------------------------------------------------------------- numeric model API
def test_partitions_in_the_numeric_model(zoo):
    _, model, _ = zoo
    P = model.constants_array(CRANK_ROCKER)
    assert model.partition_switchable
    assert model.default_partition == Partition((1, 2), (1, 2), 3, 3)
    # near the rocker's extreme q1 must be dependent
    q_near = _assemble(CRANK_ROCKER, Q1_MAX - 1e-3)
    best = model.choose_partition(q_near, P)
    assert 0 in best.dependent_coordinates and 0 in best.dependent_speeds
    assert model.partition_names(best)[0] == tuple(model.coordinates[i] for i in best.dependent_coordinates)
    # at a regular configuration every partition describes the same motion
    x0 = _state(model, CRANK_ROCKER, 1.2, 3.0)
    q = x0[:3]
    u = model.full_speeds(q, x0[3:], P)
    udot, _ = model.accelerations(q, u, P)
    xdot = model.rhs(0.0, x0, P)
    for part in (Partition((0, 1), (0, 1), 3, 3), Partition((0, 2), (0, 2), 3, 3)):
        i = part.independent_speeds[0]
        np.testing.assert_allclose(model.full_speeds(q, u[[i]], P, partition=part), u, rtol=1e-12)
        ydot = model.rhs(0.0, np.concatenate([q, u[[i]]]), P, partition=part)
        np.testing.assert_allclose(ydot[:3], xdot[:3], rtol=1e-12)
        assert ydot[3] == pytest.approx(udot[i], rel=1e-10)
        np.testing.assert_allclose(model.accelerations(q, u[[i]], P, partition=part)[0], udot, rtol=1e-10)
        # Newton on this partition's dependent coordinates holds its independent one
        moved = q + 0.01
        proj, ok, _ = model.project_coordinates(moved, P, partition=part)
        assert ok and proj[part.independent_coordinates[0]] == moved[part.independent_coordinates[0]]
        assert np.abs(model.holonomic_residual(proj, P)).max() < 1e-12


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1e-6, "often"])
def test_switch_threshold_is_checked(zoo, bad):
    _, model, _ = zoo
    x0 = _state(model, CRANK_ROCKER, 1.2, 3.0)
    with pytest.raises(InputError, match="switch_threshold"):
        simulate(model, (0.0, 0.1), x0, CRANK_ROCKER, constraints=Projection(switch_threshold=bad))


def test_multipliers_at_the_change_point_are_the_minimum_norm_ones(zoo):
    """At q1 = pi the augmented system is singular; the sample there gets the multipliers of
    the augmented Lagrangian iteration (minimum norm), not the 1e15 of a singular LU solve."""
    _, model, _ = zoo
    x0 = np.array([math.pi / 2, -math.pi / 2, -math.pi / 2, 2.0])
    t_eval = np.sort(np.r_[np.linspace(0.0, 1.5, 31), math.pi / 4])
    tr = simulate(model, (0.0, 1.5), x0, PARALLELOGRAM, t_eval=t_eval, **TIGHT)
    assert tr.status == 0
    lam = tr.multipliers
    assert np.isfinite(lam).all()
    assert np.abs(lam).max() < 10.0                      # about 4 N elsewhere on this run
    i = int(np.argmin(np.abs(tr.t - math.pi / 4)))
    # min-norm where the rows vanish: near zero against the ~4 N elsewhere.  How near depends
    # on how far the sample lies from the exact singular configuration (1e-13 or 3e-12 rad
    # with the kernels' round-off: |λ| 6e-4 or 4e-2), so the bound is relative
    assert np.abs(lam[i]).max() < 0.05 * np.abs(np.delete(lam, i, axis=0)).max()


def test_without_switching_an_even_rank_loss_stops_the_run():
    """The N-four-bar with two loops loses rank by 2 at its flat positions: no sign change of
    the dependent determinant.  With switching off the magnitude watch stops the run there
    (it used to step over and report success)."""
    zoo = symbody.models.get("n-four-bar", n=2)
    model = compile(zoo.eom)
    with pytest.warns(symbody.SimulationFailedWarning, match="even number"):
        tr = simulate(model, (0.0, 5.0), zoo.initial_state, zoo.constants,
                      constraints=Projection(switch_threshold=0),
                      solver=Solver(rtol=1e-8, atol=1e-8))
    assert tr.status == -3 and not tr.success
    assert "switch_threshold=0" in tr.message
    theta = np.asarray(tr.q)[:, 0]
    assert tr.t[-1] < 0.75 and theta.min() > 0.0       # stopped before the first flat position
    assert tr.max_holonomic_residual < 1e-8
