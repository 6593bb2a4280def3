"""Plots, animations, the viewer and ``trajectory(t)`` after impacts: each segment between
impacts is drawn on its own, from its own samples and the dense output (issue 24, item 2).

The ball: q'' = -g dropped from 1 m, impacts u -> -e u at q = 0 with e = 0.8.  Impact k
(k >= 1) at t_k = t1 (1 + 2 e + ... + 2 e^(k-1)), t1 = sqrt(2/g); the apex after impact k
is e^(2k) m high, at t_k + e^k t1 (0.64 m at 0.8127 s, 0.4096 m at 1.4630 s).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sympy as sm  # noqa: E402
import sympy.physics.mechanics as me  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.presentation._trajectory_evaluation import resampled  # noqa: E402
from symbody.presentation.animate import point_positions  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")
G, E = 9.81, 0.8
T1 = np.sqrt(2 / G)


def exact_height(t: np.ndarray) -> np.ndarray:
    impacts = [T1 * (1 + 2 * sum(E ** j for j in range(1, k))) for k in range(1, 12)]
    out = np.empty_like(t)
    for n, tt in enumerate(t):
        k = int(np.searchsorted(impacts, tt, side="right"))
        if k == 0:
            out[n] = 1 - G * tt ** 2 / 2
        else:
            dt = tt - impacts[k - 1]
            out[n] = E ** k * np.sqrt(2 * G) * dt - G * dt ** 2 / 2
    return out


@pytest.fixture(scope="module")
def model():
    t = me.dynamicsymbols._t
    q, u = me.dynamicsymbols("q u")
    g, e = sm.symbols("g e")
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[1]]), sm.Matrix([g])), constants=[g, e])
    m = sb.compile(eom)
    return m, sb.Event(q, name="bounce", direction=-1, action={u: -e * u})


@pytest.fixture(scope="module", params=["solver steps", "t_eval"])
def ball(model, request):
    m, bounce = model
    kw = {} if request.param == "solver steps" else {"t_eval": np.linspace(0.0, 3.0, 31)}
    sol = sb.simulate(m, (0.0, 3.0), [1.0, 0.0], {"g": G, "e": E}, events=[bounce], **kw)
    assert sol.success and len(sol.events) == 6
    return sol


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_plotted_apexes_are_the_true_ones(ball):
    """Main drew the second and later segments as straight lines through the solver's few
    steps: the plotted apex after the second impact was 0.0000 m instead of 0.4096 m."""
    fig = sb.plot(ball, panels=["q", "u"])
    (line,) = fig.axes[0].get_lines()
    t, y = (np.asarray(a, dtype=float) for a in line.get_data())
    for k, (lo, hi) in enumerate([(0.5, 1.1), (1.2, 1.7), (1.8, 2.2)], start=1):
        inside = (t > lo) & (t < hi)
        assert np.nanmax(y[inside]) == pytest.approx(E ** (2 * k), abs=2e-4), k
    ok = np.isfinite(t)
    np.testing.assert_allclose(y[ok], exact_height(t[ok]), atol=1e-6)
    # a gap (NaN) at each impact: the line does not join the two sides of a jump
    assert np.isnan(t).sum() == len(ball.events)
    (speed,) = fig.axes[1].get_lines()
    ts, us = (np.asarray(a, dtype=float) for a in speed.get_data())
    ok = np.isfinite(ts)
    # u falls linearly in each segment and jumps at the impacts: never an interpolated blend
    drop = np.diff(us[ok]) / np.diff(ts[ok])
    assert np.all(np.abs(drop[np.isfinite(drop) & (np.diff(ts[ok]) > 1e-9)] + G) < 1e-6)


def test_trajectory_call_never_crosses_an_impact(ball):
    t = np.linspace(0.0, 3.0, 3001)
    np.testing.assert_allclose(ball(t)[:, 0], exact_height(t), atol=1e-9)
    first = ball.events[0].t
    assert ball(first - 1e-9)[1] < 0 < ball(first + 1e-9)[1]
    assert ball(first)[1] > 0          # at the impact: the state after it


def test_animation_and_viewer_frames_follow_each_segment(ball):
    drawing = sb.models.Drawing(points={"ball": sm.Matrix([0, ball.coordinates[0], 0])},
                                lines=[], traces=("ball",), view="2d")
    times = np.linspace(0.0, 3.0, 301)
    names, pos = point_positions(ball, drawing, times=times)
    np.testing.assert_allclose(pos[:, 0, 1], exact_height(times), atol=1e-9)
    frames = resampled(ball, times)
    assert np.all(np.diff(frames.u[:, 0])[np.abs(np.diff(frames.u[:, 0])) < 1] < 0)
    anim = sb.animate(ball, drawing, fps=50)
    np.testing.assert_allclose(anim.positions[:, 0, 1], exact_height(anim.times), atol=1e-9)
    page = sb.view(ball, drawing)
    t_page, heights = page.data["t"], page.data["points"][:, 0, 1]
    np.testing.assert_allclose(heights, exact_height(t_page), atol=1e-6)
    for event in ball.events:
        # two samples at each impact: the ball falling just before, rising at it
        near = np.flatnonzero(np.abs(t_page - event.t) < 1e-12)
        assert len(near) == 2
    page = sb.view(ball, drawing, fps=10)
    assert len(page.data["t"]) == 31 + 2 * len(ball.events)


def test_sample_panels_break_at_the_impacts(ball):
    """The energy and output panels are drawn at the samples; their lines stop at each
    impact (a NaN between the segments) instead of joining the two sides."""
    g = sm.Symbol("g")
    q, u = ball.coordinates[0], ball.speeds[0]
    fig = sb.plot(ball, panels=["energy", "outputs"], energy=u ** 2 / 2 + g * q,
                  outputs={"height": q})
    for ax in fig.axes:
        (line,) = ax.get_lines()
        t = np.asarray(line.get_data()[0], dtype=float)
        assert np.isnan(t).sum() == len(ball.events)


def test_a_run_stopped_by_accumulating_impacts_plots_and_views(model):
    """Stopped (status -7) between two output times: the impacts after the last sample
    start no segment, and every picture stays inside the samples' span."""
    m, bounce = model
    with pytest.warns(sb.SimulationFailedWarning):
        sol = sb.simulate(m, (0.0, 6.0), [1.0, 0.0], {"g": G, "e": E}, events=[bounce],
                          t_eval=np.linspace(0.0, 6.0, 601))
    assert sol.status == -7 and sol.segments[-1][1] == sol.t[-1] == pytest.approx(4.06)
    (line,) = sb.plot(sol, panels=["q"]).axes[0].get_lines()
    t, y = (np.asarray(a, dtype=float) for a in line.get_data())
    ok = np.isfinite(t)
    assert t[ok].max() <= sol.t[-1] and np.nanmin(y) > -1e-9
    drawing = sb.models.Drawing(points={"ball": sm.Matrix([0, sol.coordinates[0], 0])}, lines=[],
                                traces=(), view="2d")
    page = sb.view(sol, drawing)
    assert page.data["t"][-1] == sol.t[-1]
