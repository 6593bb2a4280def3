"""The constraint modes' pieces one at a time, against closed forms.

``Projection.accept`` / ``output``, ``project_state``, ``Baumgarte.rhs``, the dependent-set
monitor's ``gauge``, ``locate_root`` and ``remap``, evaluated directly on a hand-derived
model (a particle pendulum in Cartesian coordinates, pivot at the origin):

    q = [x, y] (y dependent), u = [ux, uy] (uy dependent),
    f_h = x^2 + y^2 - l^2,  ∂f_h/∂q = [2x, 2y],  B = [x, y] (b = 0).

Everything asserted follows from these formulas; written to kill the mutants of
``analysis/simulation`` that survived the integration-level tests (docs/testing.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.optimize import brentq

import symbody as sb
from symbody.analysis.simulation import Baumgarte, Projection
from symbody.analysis.simulation.dependent_set import DependentSetMonitor, locate_root, remap
from symbody.analysis.simulation.strategy import Run, StopIntegration, project_state
from symbody.compilation.numeric_model import Partition
from systems.moving_pivot import P1, closed_form, hanging_y, pendulum_eom, pivot

t = me.dynamicsymbols._t
L = 0.8
P = {"m": 1.0, "g": 9.81, "l": L}
DEFAULT = Partition((1,), (1,), 2, 2)      # y, uy dependent (the model's own choice)
OTHER = Partition((0,), (0,), 2, 2)        # x, ux dependent

#: closed forms and kernels evaluate the same formulas in a different order: round-off
RTOL = 1e-12


@pytest.fixture(scope="module")
def pendulum():
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    m, g, l = sm.symbols("m g l")
    eom = sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux, y.diff(t) - uy],
                               [m * ux.diff(t), m * uy.diff(t) + m * g],
                               constraints=sb.ConstraintEquations(q_dep=[y], u_dep=[uy],
                                                                  holonomic=[x**2 + y**2 - l**2],
                                                                  velocity=[x * ux + y * uy]))
    return sb.compile(eom)


@pytest.fixture(scope="module")
def free_particle():
    x, ux = me.dynamicsymbols("x u_x")
    return sb.compile(sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [ux.diff(t)]))


def _run(model, rtol=1e-6, atol=1e-9):
    return Run(model, model.constants_array(P if model.constants else {}), None, 0.0, 1.0, rtol, atol, "RK45")


def _on(x):
    return -math.sqrt(L**2 - x**2)


# --------------------------------------------------------------------------- projection
def test_projection_tolerance_is_ten_times_the_step_tolerances_unless_given(pendulum):
    run = _run(pendulum, rtol=1e-6, atol=np.array([1e-9, 3e-9, 2e-9]))
    assert Projection()._tolerance(run) == pytest.approx(10 * (1e-6 + 1e-9), rel=1e-15), \
        "default drift tolerance is 10 (rtol + min atol)"
    assert Projection(drift_tolerance=2.5e-4)._tolerance(run) == 2.5e-4
    assert Projection(drift_tolerance=0.0)._tolerance(run) == 0.0


def test_projection_accept_restarts_only_above_the_drift_tolerance(pendulum):
    run = _run(pendulum)
    x = 0.3
    tol = 1e-3
    mode = Projection(drift_tolerance=tol)
    scale = 1.0 + L                         # 1 + max |q| (|y| is the largest coordinate here)
    for factor, restart in ((0.8, False), (1.25, True)):
        dy = -factor * tol * scale          # y moved off the constraint (further from the pivot)
        y_state = np.array([x, _on(x) + dy, 0.4])
        kept, again = mode.accept(run, 0.0, y_state, DEFAULT)
        assert kept[:2] == pytest.approx([x, _on(x)], rel=RTOL), "accept: the kept state is not projected"
        assert kept[2] == 0.4, "accept changed the independent speed"
        assert again is restart, (f"a correction of {factor} x the drift tolerance "
                                  f"{'must' if restart else 'must not'} restart the solver")
        assert y_state[1] == pytest.approx(_on(x) + dy), "accept modified the solver's state in place"
    # the other dependent set: x moves, y is held
    y0 = -0.5
    kept, again = Projection(drift_tolerance=0.0).accept(run, 0.0, np.array([0.7, y0, 0.1]), OTHER)
    assert kept[1] == y0 and kept[0] == pytest.approx(math.sqrt(L**2 - y0**2), rel=RTOL)
    assert again, "drift_tolerance=0 restarts after any correction"
    # ... but not when nothing moved (a state exactly on f_h = 0)
    kept, again = Projection(drift_tolerance=0.0).accept(run, 0.0, np.array([0.0, -L, 0.1]), DEFAULT)
    assert not again, "a restart without any correction (moved = 0 is not above the tolerance 0)"


def test_projection_output_projects_and_leaves_unconstrained_models_alone(pendulum, free_particle):
    run = _run(pendulum)
    y_state = np.array([0.2, -0.7, 0.3])
    out = Projection().output(run, 0.0, y_state, DEFAULT)
    assert out == pytest.approx([0.2, _on(0.2), 0.3], rel=RTOL), "output samples are not projected"
    out = Projection().output(run, 0.0, np.array([0.7, -0.5, 0.3]), OTHER)
    assert out[1] == -0.5 and out[0] == pytest.approx(math.sqrt(L**2 - 0.25), rel=RTOL), \
        "output samples are projected in the active dependent set"
    fr = _run(free_particle)
    y_free = np.array([0.2, 0.3])
    assert Projection().output(fr, 0.0, y_free, free_particle.default_partition) is y_free
    kept, again = Projection().accept(fr, 0.0, y_free, free_particle.default_partition)
    assert kept is y_free and again is False, "a model without f_h has nothing to project"


def test_project_state_stops_with_the_right_status(pendulum):
    run = _run(pendulum)
    y_state = np.array([0.3, -0.6, 0.2])
    out = project_state(run, 0.0, y_state, DEFAULT)
    assert out[:2] == pytest.approx([0.3, _on(0.3)], rel=RTOL) and out[2] == 0.2
    assert y_state[1] == -0.6, "project_state modified its input"
    with pytest.raises(StopIntegration) as info:
        project_state(run, 0.0, np.array([0.3, -40.0, 0.0]), DEFAULT, max_iter=1)
    assert info.value.status == -4 and "did not converge" in info.value.message
    with pytest.raises(StopIntegration) as info:      # one step from y = -0.9 leaves f_h = 0.02
        project_state(run, 0.0, np.array([0.3, -0.9, 0.0]), DEFAULT, max_iter=1)
    assert info.value.status == -4, "a small but unconverged residual (0.02) must stop the run"
    with pytest.raises(StopIntegration) as info:
        project_state(run, 0.25, np.array([0.3, 0.0, 0.0]), DEFAULT)
    assert info.value.status == -3 and info.value.message.startswith("projection at t = 0.25")
    # a start on the constraint converges at once (residual 0 or round-off)
    assert project_state(run, 0.0, np.array([0.0, -L, 0.0]), DEFAULT)[1] == -L


# --------------------------------------------------------------------------- Baumgarte
@pytest.mark.parametrize("alpha", [0.0, 5.0])
def test_baumgarte_corrects_the_dependent_coordinate_by_its_gain(pendulum, alpha):
    """q_dep' = u_dep - α f_h / (∂f_h/∂q_dep): y' = uy - α f_h / (2 y) (or x' with x dependent)."""
    run = _run(pendulum)
    x, y, ux = 0.3, -0.7, 0.4             # off the constraint: f_h = x^2 + y^2 - l^2 = -0.06
    fh = x**2 + y**2 - L**2
    uy = -x * ux / y
    f = Baumgarte(alpha).rhs(run, DEFAULT)
    xd = f(0.0, np.array([x, y, ux]))
    assert xd[:2] == pytest.approx([ux, uy - alpha * fh / (2 * y)], rel=RTOL), \
        "Baumgarte's correction of q_dep' wrong"
    assert xd[2] == pytest.approx(pendulum.rhs(0.0, [x, y, ux], P)[2], rel=RTOL), "Baumgarte changed u'"
    g = Baumgarte(alpha).rhs(run, OTHER)
    xo = g(0.0, np.array([x, y, uy]))
    assert xo[0] == pytest.approx(ux - alpha * fh / (2 * x), rel=RTOL), \
        "Baumgarte corrects the active partition's dependent coordinate"
    assert xo[1] == pytest.approx(uy, rel=RTOL)


def test_baumgarte_stops_where_the_jacobian_is_singular(free_particle):
    """f_h = y^3 - x with the (deliberately independent) velocity constraint uy - ux = 0:
    B_dep = 1 is regular everywhere, ∂f_h/∂y = 3 y^2 vanishes at y = 0."""
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    model = sb.compile(sb.EquationsOfMotion(
        [x], [ux], [x.diff(t) - ux, y.diff(t) - uy], [ux.diff(t), uy.diff(t)],
        constraints=sb.ConstraintEquations(q_dep=[y], u_dep=[uy], holonomic=[y**3 - x],
                                           velocity=[uy - ux])))
    run = Run(model, model.constants_array({}), None, 0.0, 1.0, 1e-6, 1e-9, "RK45")
    f = Baumgarte(5.0).rhs(run, model.default_partition)
    # y = 0.5: y' = uy - α (y^3 - x) / (3 y^2)
    assert f(0.0, np.array([0.1, 0.5, 0.2]))[1] == pytest.approx(0.2 - 5.0 * (0.125 - 0.1) / 0.75, rel=RTOL)
    with pytest.raises(StopIntegration) as info:
        f(0.4, np.array([0.1, 0.0, 0.2]))
    assert info.value.status == -3, "a singular ∂f_h/∂q_dep must stop with status -3"
    assert info.value.message.startswith("the holonomic constraint Jacobian is singular in the dependent "
                                         "coordinates at t = 0.4")
    fr = _run(free_particle)
    assert Baumgarte(5.0).rhs(fr, free_particle.default_partition)(0.0, np.array([0.2, 0.3])) == \
        pytest.approx([0.3, 0.0])


# --------------------------------------------------------------------------- dependent set
def test_gauge_measures_the_active_set_against_the_best_one(pendulum):
    """∂f_h/∂q = [2x, 2y], B = [x, y]: dets 2y and y; best |det| 2 max(|x|, |y|) and max(|x|, |y|)."""
    P_ = pendulum.constants_array(P)
    mon = DependentSetMonitor(pendulum, P_, None, threshold=0.5, rtol=1e-6)
    x, y = 0.75, -0.2                      # |y| / |q| = 0.26 < 0.5: the ratio is computed
    g = mon.gauge(0.0, np.array([x, y, 0.1]), DEFAULT)
    assert g.dets == pytest.approx((2 * y, y), rel=RTOL), "gauge: det of the dependent columns wrong"
    assert g.signs == (-1.0, -1.0)
    assert g.ratio == pytest.approx(abs(y) / abs(x), rel=RTOL), "gauge: |det dep| / |det best| wrong"
    g = mon.gauge(0.0, np.array([x, y, 0.1]), OTHER)
    assert g.dets == pytest.approx((2 * x, x), rel=RTOL) and g.signs == (1.0, 1.0)
    assert g.ratio == 1.0, "the best-conditioned set has ratio 1"
    x, y = 0.3, -0.7                       # |y| / |q| = 0.92 >= 0.5: cheap bound, no QR
    g = mon.gauge(0.0, np.array([x, y, 0.1]), DEFAULT)
    assert g.ratio == 1.0
    x, y = 0.7, -0.4                       # |y| / |q| = 0.50 > 0.5 fails: ratio |y| / |x|
    assert abs(y) / math.hypot(x, y) < 0.5
    assert mon.gauge(0.0, np.array([x, y, 0.1]), DEFAULT).ratio == pytest.approx(abs(y) / x, rel=RTOL)
    x, y = 0.6, -0.5                       # |y| / |q| = 0.64: the bound passes for both matrices
    assert mon.gauge(0.0, np.array([x, y, 0.1]), DEFAULT).ratio == 1.0, \
        "the cheap bound |det| >= threshold sqrt(det(A A^T)) must decide (|q| < 1 here: det(B B^T) < 1)"
    # time-dependent constraints are measured at the given time (pivot at s(t))
    moving = sb.compile(pendulum_eom())
    tt, x, y = 0.7, 0.55, -0.1             # d = x - s(t) = 0.30: |y| / |(d, y)| = 0.31 < 0.5
    d = x - pivot(tt)[0]
    mon_t = DependentSetMonitor(moving, moving.constants_array(P1), None, threshold=0.5, rtol=1e-6)
    g = mon_t.gauge(tt, np.array([x, y, 0.1]), DEFAULT)
    assert g.dets == pytest.approx((2 * y, y), rel=RTOL)
    assert g.ratio == pytest.approx(abs(y) / abs(d), rel=RTOL), "gauge not evaluated at the time t"
    # a singular active set has ratio 0
    assert mon.gauge(0.0, np.array([0.8, 0.0, 0.1]), DEFAULT).ratio == 0.0
    # switching off: no ratio, dets still reported
    off = DependentSetMonitor(pendulum, P_, None, threshold=0.0, rtol=1e-6)
    g = off.gauge(0.0, np.array([0.75, -0.2, 0.1]), DEFAULT)
    assert g.ratio == 1.0 and g.dets == pytest.approx((-0.4, -0.2), rel=RTOL)


def test_gauge_reports_each_matrix_sign_separately():
    """f_h = y^3 - x and ux - uy = 0: det ∂f_h/∂y = 3 y^2 > 0 but B_dep = -1 < 0."""
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    model = sb.compile(sb.EquationsOfMotion(
        [x], [ux], [x.diff(t) - ux, y.diff(t) - uy], [ux.diff(t), uy.diff(t)],
        constraints=sb.ConstraintEquations(q_dep=[y], u_dep=[uy], holonomic=[y**3 - x],
                                           velocity=[ux - uy])))
    mon = DependentSetMonitor(model, model.constants_array({}), None, 0.5, 1e-6)
    g = mon.gauge(0.0, np.array([0.1, 0.5, 0.2]), model.default_partition)
    assert g.signs == (1.0, -1.0) and g.dets == pytest.approx((0.75, -1.0), rel=RTOL), \
        "gauge: the signs of det ∂f_h/∂q_dep and det B_dep mixed up"


def test_gauge_of_an_unconstrained_model(free_particle):
    mon = DependentSetMonitor(free_particle, free_particle.constants_array({}), None, 0.5, 1e-6)
    g = mon.gauge(0.0, np.array([0.1, 0.2]), free_particle.default_partition)
    assert g.signs == (1.0, 1.0) and g.dets == (1.0, 1.0) and g.ratio == 1.0


def test_locate_root_finds_the_sign_change():
    assert locate_root(math.cos, 1.0, 2.0) == pytest.approx(math.pi / 2, abs=1e-12), "root of cos on [1, 2]"
    root = locate_root(lambda s: s**3 - 2.0, 1.0, 2.0)
    assert root == pytest.approx(brentq(lambda s: s**3 - 2.0, 1.0, 2.0, xtol=1e-14), abs=1e-12)
    # large times: the tolerance scales with |t|
    assert locate_root(lambda s: s - 1000.3, 1000.0, 1001.0) == pytest.approx(1000.3, abs=1e-8)
    assert locate_root(lambda s: s - 0.5, 0.5, 1.0) == 0.5, "a root at the left end is returned as is"
    assert locate_root(lambda s: s + 1.0, 0.0, 1.0) == 1.0, "no sign change: the right end"
    assert locate_root(lambda s: 0.1 + 0.2 * s, 0.0, 1.0) == 1.0, "no sign change (small values): the right end"
    assert locate_root(lambda s: math.nan, 0.0, 1.0) == 1.0
    assert locate_root(lambda s: math.inf if s > 0.5 else -1.0, 0.0, 1.0) == 1.0, "non-finite end: the right end"
    assert locate_root(lambda s: 1.0 - s, 0.0, 1.0) == pytest.approx(1.0, abs=1e-12)


def test_remap_carries_the_speeds_into_the_new_dependent_set(pendulum):
    P_ = pendulum.constants_array(P)
    x, y, ux = 0.3, -0.7, 0.4
    uy = -x * ux / y
    new = remap(pendulum, 0.0, np.array([x, y, ux]), P_, DEFAULT, OTHER)
    assert new == pytest.approx([x, y, uy], rel=RTOL), "remap: the new independent speed is not uy"
    back = remap(pendulum, 0.0, new, P_, OTHER, DEFAULT)
    assert back == pytest.approx([x, y, ux], rel=RTOL), "remap there and back changed the state"
    # with time-dependent constraints the speeds are solved at the given time
    moving = sb.compile(pendulum_eom())
    P1_ = moving.constants_array(P1)
    tt, x, ux = 0.9, 0.2, -0.3
    y = hanging_y(tt, x)
    uy = closed_form(tt, x, y, ux, 0.0)[0]
    assert remap(moving, tt, np.array([x, y, ux]), P1_, DEFAULT, OTHER) == pytest.approx([x, y, uy], rel=RTOL), \
        "remap: the dependent speed is not solved at the time of the switch"
    with pytest.raises(StopIntegration) as info:
        remap(pendulum, 0.2, np.array([x, 0.0, ux]), P_, DEFAULT, OTHER)
    assert info.value.status == -3 and "switching the dependent set at t = 0.2" in info.value.message
