"""Plots people can read: a unit on every axis, one kind of quantity per axis, smooth curves,
nothing clipped, and stability verdicts only about equilibria.

The units come from a dimensional analysis of the equations (symbody.presentation.units);
the expected kinds below are read off each seed chapter's model by hand.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sympy as sm  # noqa: E402
import sympy.physics.mechanics as me  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.cli import main  # noqa: E402
from symbody.errors import InputError  # noqa: E402
from symbody.presentation.plot import plot_eigenvalues  # noqa: E402
from symbody.presentation.units import quantity_kinds, residual_units  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _names(kinds: dict) -> dict:
    return {str(s).removesuffix("(t)"): k for s, k in kinds.items()}


@pytest.fixture(scope="module")
def snakeboard():
    model = sb.models.get("snakeboard")
    numeric = sb.compile(model.eom)
    return model, numeric


# ----------------------------------------------------------------------------- kinds of quantities
def test_kinds_of_the_seed_models():
    # seed 000: q1, q2 position of the board, q3..q5 angles; u3 = l q3'/2 is a velocity
    assert _names(quantity_kinds(sb.models.get("snakeboard").eom)) == {
        "q1": "length", "q2": "length", "q3": "angle", "q4": "angle", "q5": "angle",
        "u1": "velocity", "u2": "velocity", "u3": "velocity", "u4": "angular rate",
        "u5": "angular rate"}
    # seed 001: three angles
    four_bar = sb.models.get("four-bar")
    assert set(quantity_kinds(four_bar).values()) == {"angle", "angular rate"}
    assert residual_units(four_bar.eom) == {"holonomic": "m", "velocity": "m/s"}
    # seed 002: two rod angles and the particle's distance along the second rod
    assert _names(quantity_kinds(sb.models.get("double-rod-pendulum").eom)) == {
        "q1": "angle", "q2": "angle", "q3": "length",
        "u1": "angular rate", "u2": "angular rate", "u3": "velocity"}
    # a cart (length) carrying pendulum links (angles)
    kinds = _names(quantity_kinds(sb.models.get("n-link-pendulum-on-cart").eom))
    assert kinds["q0"] == "length" and kinds["u0"] == "velocity"
    assert kinds["q1"] == "angle" and kinds["u1"] == "angular rate"


def test_kinds_from_hand_written_kane_equations():
    """An angle only in orient_axis and a slider only in set_pos: both recognised."""
    q, s, u, v = me.dynamicsymbols("q s u v")
    m, g, r = sm.symbols("m g r")
    N, A = me.ReferenceFrame("N"), me.ReferenceFrame("A")
    A.orient_axis(N, q, N.z)
    O, P = me.Point("O"), me.Point("P")
    O.set_vel(N, 0)
    P.set_pos(O, (r + s) * A.x)
    P.set_vel(N, P.pos_from(O).dt(N).subs({q.diff(): u, s.diff(): v}))
    km = sb.KanesMethod(N, [q, s], [u, v], kd_eqs=[q.diff() - u, s.diff() - v])
    km.kanes_equations([me.Particle("P", P, m)], [(P, -m * g * N.y)])
    assert _names(quantity_kinds(km.to_eom())) == {"q": "angle", "s": "length",
                                                   "u": "angular rate", "v": "velocity"}


# ----------------------------------------------------------------------------- sb.plot
def _axis_labels(fig) -> list[str]:
    return [ax.get_ylabel() for ax in fig.axes]


def test_plot_groups_by_kind_with_units(snakeboard):
    model, numeric = snakeboard
    sol = sb.simulate(numeric, (0.0, 2.0), model.initial_state, model.constants,
                      t_eval=np.linspace(0.0, 2.0, 41))
    fig = sb.plot(sol, numeric, energy=model.energy)
    labels = _axis_labels(fig)
    assert labels[:4] == ["angles [deg]", "lengths [m]", "angular rates [deg/s]", "velocities [m/s]"]
    assert any(label.startswith("constraint residual [m/s]") for label in labels)
    assert labels[-1].endswith("[J]")
    for label in labels:
        assert re.search(r"\[[^\]]+\]$", label), f"axis {label!r} has no unit"
    # the angle axis shows q3, q4, q5 in degrees (t_eval given: the samples themselves)
    angle_lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in angle_lines] == ["$q_{3}$", "$q_{4}$", "$q_{5}$"]
    np.testing.assert_allclose(angle_lines[1].get_ydata(), np.rad2deg(sol["q4"]), rtol=1e-12)
    # dependent speeds u1, u2 dashed on the velocity axis, u3 solid
    styles = {line.get_label(): line.get_linestyle() for line in fig.axes[3].get_lines()}
    assert styles == {"$u_{3}$": "-", "$u_{1}$": "--", "$u_{2}$": "--"}


def test_plot_unit_overrides(snakeboard):
    model, numeric = snakeboard
    sol = sb.simulate(numeric, (0.0, 1.0), model.initial_state, model.constants,
                      t_eval=np.linspace(0.0, 1.0, 11))
    fig = sb.plot(sol, numeric, panels=("q",), units={"q3": "rad"}, angles="deg")
    assert _axis_labels(fig) == ["angles [rad]", "angles [deg]", "lengths [m]"]
    fig = sb.plot(sol, numeric, panels=("u",), angles="rad")
    assert _axis_labels(fig) == ["angular rates [rad/s]", "velocities [m/s]"]
    with pytest.raises(InputError, match="q9"):
        sb.plot(sol, numeric, units={"q9": "m"})
    with pytest.raises(InputError, match="furlong"):
        sb.plot(sol, numeric, units={"q1": "furlong"})


def test_plot_is_smooth_without_t_eval():
    """Without t_eval the solver's few steps are joined by a cubic interpolant that follows
    the true solution (a run with dense t_eval at tight tolerance) to line-width accuracy."""
    model = sb.models.get("double-rod-pendulum")
    numeric = sb.compile(model.eom)
    coarse = sb.simulate(numeric, (0.0, 3.0), model.initial_state, model.constants)
    assert len(coarse.t) < 60          # the solver's own steps: a jagged polyline if drawn as is
    fig = sb.plot(coarse, numeric, panels=("q",))
    line = fig.axes[0].get_lines()[0]           # q1 in degrees
    t_fine = np.asarray(line.get_xdata(), dtype=float)
    assert len(t_fine) > 10 * len(coarse.t)
    exact = sb.simulate(numeric, (0.0, 3.0), model.initial_state, model.constants,
                        solver=sb.Solver(rtol=1e-10, atol=1e-12), t_eval=t_fine)
    error = np.max(np.abs(np.asarray(line.get_ydata()) - np.rad2deg(exact["q1"])))
    span = np.ptp(np.rad2deg(exact["q1"]))
    # rtol=1e-6 solution plus the spline's O(h^4) error between steps: well under 0.5 % of the
    # plotted range (about a pixel of a 400-pixel-high axis)
    assert error < 5e-3 * span
    # t_eval given (evenly spaced): the samples are drawn as they are
    even = sb.simulate(numeric, (0.0, 3.0), model.initial_state, model.constants,
                       t_eval=np.linspace(0.0, 3.0, 31))
    assert len(sb.plot(even, numeric, panels=("q",)).axes[0].get_lines()[0].get_xdata()) == 31


def test_smoothing_does_not_cross_a_jump():
    """Repeated times (an impact) split the interpolant: no spline across the jump."""
    from symbody.presentation.plot import _curves

    t = np.r_[np.linspace(0, 1, 7) ** 1.5, np.linspace(1, 2, 9) ** 1.2]
    q = np.where(t < 1, t, 5.0 + t)[:, None]
    q[6] = 1.0            # the sample before the jump
    t_fine, q_fine, _ = _curves(t, q, np.zeros((len(t), 0)), None)
    before = t_fine < 1.0
    assert np.all(np.abs(q_fine[before, 0] - t_fine[before]) < 1e-9)   # linear data stays linear
    assert np.isnan(q_fine).sum() == 1                                   # one break in the line


# ----------------------------------------------------------------------------- nothing clipped
def _outside(fig) -> list:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    bad = []
    for ax in fig.axes:
        box = ax.get_tightbbox(renderer)      # tick labels, axis labels, title, legend
        if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > width + 0.5 or box.y1 > height + 0.5:
            bad.append((ax.get_ylabel(), box.bounds, (width, height)))
    return bad


@pytest.mark.parametrize("name", ["four-bar", "snakeboard"])
@pytest.mark.parametrize("figsize", [None, (4.0, 3.0)])
def test_animation_labels_and_legend_inside_the_figure(name, figsize):
    model = sb.models.get(name)
    numeric = sb.compile(model.eom)
    sol = sb.simulate(numeric, (0.0, 1.0), model.initial_state, model.constants,
                      t_eval=np.linspace(0.0, 1.0, 21))
    anim = sb.animate(sol, model.drawing, max_frames=5, figure=sb.FigureOptions(
        title=f"{name}, a long title for the run", figsize=figsize))
    assert _outside(anim._fig) == []
    anim._draw_was_started = True       # built for inspection only


def test_plot_labels_inside_the_figure(snakeboard):
    model, numeric = snakeboard
    sol = sb.simulate(numeric, (0.0, 1.0), model.initial_state, model.constants)
    for figsize in (None, (5.0, 6.0)):
        assert _outside(sb.plot(sol, numeric, energy=model.energy,
                                figure=sb.FigureOptions(figsize=figsize))) == []


# ----------------------------------------------------------------------------- stability labels
def _linearize_output(*args: str) -> str:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["linearize", *args, "--quiet"]) == 0
    return buffer.getvalue()


def test_no_stability_verdict_away_from_equilibrium():
    # the four-bar has no operating point: its initial state is not at rest (gravity moves it)
    text = _linearize_output("four-bar")
    assert "not an equilibrium" in text and "unstable" not in text and "no growing mode" not in text
    # the n-link pendulum on a cart is linearized upright at rest: an unstable equilibrium
    assert "(unstable)" in _linearize_output("n-link-pendulum-on-cart")


def test_eigenvalue_plot_shades_stability_only_when_asked():
    v = np.linspace(1.0, 3.0, 5)
    ev = np.column_stack([-v + 0j, -2 * v + 1j])
    labels = lambda fig: [t.get_text() for t in fig.axes[0].get_legend().get_texts()]  # noqa: E731
    assert "stable" in labels(plot_eigenvalues(v, ev))
    assert "stable" not in labels(plot_eigenvalues(v, ev, stability=False))


def test_plot_uses_the_trajectory_dense_output_when_it_has_one():
    """A trajectory that can evaluate itself between samples (trajectory(t) with known x')
    is drawn from that, not from a spline through its few samples."""
    from symbody.analysis.trajectory import ModelInfo, SampleArrays, Trajectory

    th, w = me.dynamicsymbols("theta omega")

    class WithDenseOutput(Trajectory):
        def __call__(self, times):      # the exact solution theta = sin t, omega = cos t
            times = np.asarray(times, dtype=float)
            return np.column_stack([np.sin(times), np.cos(times)])

    t = np.array([0.0, 0.4, 1.3, 2.0, 3.1, 4.5, 5.2, 6.2])       # few, uneven: solver steps
    x = np.column_stack([np.sin(t), np.cos(t)])
    traj = WithDenseOutput(SampleArrays(t=t, x=x, q=x[:, :1], u=x[:, 1:],
                                        holonomic_residuals=np.zeros((8, 0)),
                                        velocity_residuals=np.zeros((8, 0))),
                           ModelInfo(coordinates=(th,), speeds=(w,), constants={}))
    traj.xdot = np.column_stack([np.cos(t), -np.sin(t)])
    fig = sb.plot(traj, units={"theta": "rad", "omega": "rad/s"})
    for ax, exact in zip(fig.axes, (np.sin, np.cos)):
        line = ax.get_lines()[0]
        t_fine = np.asarray(line.get_xdata())
        np.testing.assert_allclose(line.get_ydata(), exact(t_fine), atol=1e-12)
    # without the dense output the spline through 8 samples is visibly off somewhere
    traj.xdot = None
    line = sb.plot(traj, units={"theta": "rad", "omega": "rad/s"}).axes[0].get_lines()[0]
    assert np.max(np.abs(line.get_ydata() - np.sin(line.get_xdata()))) > 1e-3
