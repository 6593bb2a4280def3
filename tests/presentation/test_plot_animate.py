"""Plots, animations, HTML/GIF export and the progress indicator (symbody.presentation).

Most checks use a hand-made trajectory of a pendulum with a sliding pivot, q1 = 0.5 cos 2t,
q2 = 0.1 t, so that every plotted or drawn number is known in closed form.
"""

from __future__ import annotations

import base64
import io
import json
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sympy as sm  # noqa: E402
from sympy.physics.vector import dynamicsymbols  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.analysis.trajectory import ModelInfo, RunReport, SampleArrays, Trajectory  # noqa: E402
from symbody.presentation import (  # noqa: E402
    Progress,
    as_progress,
    plot_comparison,
    plot_eigenvalues,
    save_gif,
    save_html,
)
from symbody.presentation._trajectory_evaluation import evaluate_along  # noqa: E402
from symbody.presentation.animate import frame_times, point_positions  # noqa: E402
from symbody.presentation.plot import RESIDUAL_FLOOR  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")

q1, q2, u1, u2 = dynamicsymbols("q1 q2 u1 u2")
l, g, m = sm.symbols("l g m", positive=True)
CONSTANTS = {l: 1.5, g: 9.81, m: 2.0}


def make_trajectory(tf: float = 5.0, k: int = 251, drift: float = 1e-3) -> Trajectory:
    t = np.linspace(0.0, tf, k)
    q = np.column_stack([0.5 * np.cos(2 * t), 0.1 * t])
    u = np.column_stack([-np.sin(2 * t), np.full_like(t, 0.1)])
    return Trajectory(SampleArrays(t=t, x=np.column_stack([q, u[:, :1]]), q=q, u=u,
                                   holonomic_residuals=(drift * t**2)[:, None],
                                   velocity_residuals=np.full((k, 1), 1e-14)),
                      ModelInfo(coordinates=(q1, q2), speeds=(u1, u2), constants=CONSTANTS),
                      RunReport(constraints="none"))


ENERGY = m * g * l * (1 - sm.cos(q1)) + m * l**2 * u1**2 / 2


def drawing(view: str = "2d"):
    points = {"O": sm.Matrix([q2, 0, 0]),
              "P": sm.Matrix([q2 + l * sm.sin(q1), -l * sm.cos(q1), 0]),
              "ground": sm.Matrix([0, 0, 0])}
    return sb.models.Drawing(points=points, lines=[["O", "P"]], traces=("P",), view=view)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- evaluation
def test_evaluate_along_matches_closed_form():
    traj = make_trajectory()
    values = evaluate_along(traj, [ENERGY, l * sm.sin(q1), 3.0])
    th, w = traj.q[:, 0], traj.u[:, 0]
    expected = 2.0 * 9.81 * 1.5 * (1 - np.cos(th)) + 2.0 * 1.5**2 * w**2 / 2
    np.testing.assert_allclose(values[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(values[:, 1], 1.5 * np.sin(th), rtol=1e-12)
    np.testing.assert_allclose(values[:, 2], 3.0)


def test_evaluate_along_constants_by_name_and_unknown_symbol():
    traj = make_trajectory()
    values = evaluate_along(traj, [l * q2], constants={"l": 2.0})
    np.testing.assert_allclose(values[:, 0], 2.0 * traj.q[:, 1])
    k = sm.Symbol("k_spring")
    with pytest.raises(sb.InputError, match="k_spring"):
        evaluate_along(traj, [k * q1])
    with pytest.raises(sb.InputError, match="nonexistent"):
        evaluate_along(traj, [l * q1], constants={"nonexistent": 1.0})


def test_evaluate_along_lambdify_and_compiled_paths_agree():
    from symbody.presentation._trajectory_evaluation import TrajectoryEvaluator

    traj = make_trajectory()
    exprs = [ENERGY, sm.cos(q1) * q2 + u2]
    args = (exprs, traj.coordinates, traj.speeds, [g, l, m])
    a = TrajectoryEvaluator(*args, backend="lambdify")(traj)
    b = TrajectoryEvaluator(*args)(traj)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------- plots
def test_plot_panels_and_data():
    traj = make_trajectory()
    # q1 is an angle, q2 the pivot's slide: one axis each (no model here, so units= says so)
    units = {"q1": "rad", "q2": "m", "u1": "rad/s", "u2": "m/s"}
    fig = sb.plot(traj, energy=ENERGY, outputs={"x_P": l * sm.sin(q1) + q2}, units=units)
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["angles [rad]", "lengths [m]", "angular rates [rad/s]", "velocities [m/s]",
                      "constraint residual [SI units]", r"$E(t) - E(t_0)$ [J]", "outputs [SI units]"]
    q_lines = fig.axes[0].get_lines()
    np.testing.assert_allclose(q_lines[0].get_ydata(), traj.q[:, 0])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["$q_{1}$"]
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["$q_{2}$"]
    # the dependent speed u2 (not a state) is dashed
    assert fig.axes[3].get_lines()[0].get_linestyle() == "--"
    # in degrees by default
    fig_deg = sb.plot(traj, panels=("q",), units={"q1": "angle", "q2": "length"})
    np.testing.assert_allclose(fig_deg.axes[0].get_lines()[0].get_ydata(), np.rad2deg(traj.q[:, 0]))
    assert fig_deg.axes[0].get_ylabel() == "angles [deg]"
    # residuals: log axis of |f_h|, zero clipped at the floor
    res = fig.axes[4]
    assert res.get_yscale() == "log"
    fh_line = res.get_lines()[0]
    np.testing.assert_allclose(fh_line.get_ydata()[1:], 1e-3 * traj.t[1:] ** 2)
    assert fh_line.get_ydata()[0] == RESIDUAL_FLOOR
    # energy drift E - E0 starts at zero and matches the closed form
    e = fig.axes[5].get_lines()[0].get_ydata()
    energy = 2.0 * 9.81 * 1.5 * (1 - np.cos(traj.q[:, 0])) + 2.25 * traj.u[:, 0] ** 2
    np.testing.assert_allclose(e, energy - energy[0], atol=1e-12)


def test_plot_selected_panels_and_errors():
    traj = make_trajectory()
    fig = sb.plot(traj, panels=("residuals",))
    assert len(fig.axes) == 1 and fig.axes[0].get_yscale() == "log"
    with pytest.raises(sb.InputError, match="unknown panel 'bogus'"):
        sb.plot(traj, panels=("bogus",))
    with pytest.raises(sb.InputError, match="energy="):
        sb.plot(traj, panels=("energy",))
    with pytest.raises(sb.InputError, match="samples"):
        sb.plot(traj, energy=np.ones(3))


def test_plot_without_constraints_has_no_residual_panel():
    traj = make_trajectory()
    traj.holonomic_residuals = np.zeros((len(traj.t), 0))
    traj.velocity_residuals = np.zeros((len(traj.t), 0))
    fig = sb.plot(traj)
    assert [ax.get_ylabel() for ax in fig.axes] == ["coordinates [SI units]", "speeds [SI units]"]


def test_plot_comparison_and_eigenvalues():
    a, b = make_trajectory(drift=1e-2), make_trajectory(drift=1e-13)
    fig = plot_comparison({"none": a, "project": b}, energy=ENERGY)
    axes = np.array(fig.axes).reshape(2, 2)
    assert axes[0, 0].get_title() == "none" and axes[0, 1].get_title() == "project"
    # shared log axis spans both the large and the tiny residuals
    lo, hi = axes[0, 1].get_ylim()
    assert lo <= 1e-12 and hi >= 0.25
    v = np.linspace(0, 10, 11)
    ev = np.array([np.linalg.eigvals([[0, 1], [-(x - 5), -0.5 * x]]) for x in v])
    fig = plot_eigenvalues(v, ev)
    real = fig.axes[0].get_lines()[0]
    np.testing.assert_allclose(np.sort(real.get_ydata()), np.sort(ev.real.ravel()))
    with pytest.raises(sb.InputError):
        plot_eigenvalues(v[:3], ev)


# ----------------------------------------------------------------------------- animation
def test_frame_times():
    t = np.linspace(0, 2, 7)
    np.testing.assert_allclose(frame_times(t, fps=10), np.linspace(0, 2, 21))
    assert len(frame_times(np.linspace(0, 100, 5), fps=20, max_frames=50)) == 50
    with pytest.raises(sb.InputError):
        frame_times(t, fps=-1)


def test_point_positions_closed_form():
    traj = make_trajectory()
    names, pos = point_positions(traj, drawing())
    assert names == ["O", "P", "ground"] and pos.shape == (len(traj.t), 3, 3)
    th, s = traj.q[:, 0], traj.q[:, 1]
    np.testing.assert_allclose(pos[:, 1, 0], s + 1.5 * np.sin(th), rtol=1e-12)
    np.testing.assert_allclose(pos[:, 1, 1], -1.5 * np.cos(th), rtol=1e-12)
    np.testing.assert_allclose(pos[:, 2], 0.0)


def test_animate_2d_frames_follow_the_trajectory():
    traj = make_trajectory()
    anim = sb.animate(traj, drawing(), fps=10)
    assert isinstance(anim, matplotlib.animation.FuncAnimation)
    assert len(anim.times) == 51 and anim.fps == pytest.approx(10.0)
    # frame 20 (t = 2 s): the link from O to P is drawn where the closed form says
    anim.update_frame(20)
    th, s = 0.5 * np.cos(4.0), 0.2
    link = anim._fig.axes[0].get_lines()[1]
    np.testing.assert_allclose(link.get_xdata(), [s, s + 1.5 * np.sin(th)], rtol=1e-9)
    np.testing.assert_allclose(link.get_ydata(), [0.0, -1.5 * np.cos(th)], rtol=1e-9)
    # the trace of P runs through every trajectory sample up to now (t = 0, 0.02, ..., 2)
    # and ends at the current position
    trace = anim._fig.axes[0].get_lines()[0]
    assert len(trace.get_xdata()) == 102
    np.testing.assert_allclose(trace.get_xdata()[[0, 50, -1]],
                               [1.5 * np.sin(0.5), 0.1 + 1.5 * np.sin(0.5 * np.cos(2.0)), s + 1.5 * np.sin(th)])
    assert "t = 2.00 s" in [text.get_text() for text in anim._fig.axes[0].texts]


def test_animate_3d_and_bad_drawings():
    traj = make_trajectory(tf=1.0, k=21)
    anim = sb.animate(traj, drawing("3d"), fps=5)
    ax = anim._fig.axes[0]
    assert ax.name == "3d"
    anim.update_frame(5)
    xs, ys, zs = ax.get_lines()[1].get_data_3d()
    np.testing.assert_allclose(ys[1], -1.5 * np.cos(0.5 * np.cos(2.0)), rtol=1e-9)
    bad = {"points": {"A": sm.Matrix([q1, 0, 0])}, "lines": [["A", "B"]]}
    with pytest.raises(sb.InputError, match="'B'"):
        sb.animate(traj, bad)
    with pytest.raises(sb.InputError, match="view"):
        sb.animate(traj, drawing(), camera=sb.Camera(view="4d"))


def test_animate_follows_a_long_path():
    t = np.linspace(0, 10, 101)
    q = np.column_stack([0.1 * np.ones_like(t), 5.0 * t])   # travels 50 m, drawing is 1.5 m
    traj = Trajectory(SampleArrays(t=t, x=q, q=q, u=np.zeros((101, 2)),
                                   holonomic_residuals=np.zeros((101, 0)),
                                   velocity_residuals=np.zeros((101, 0))),
                      ModelInfo(coordinates=(q1, q2), speeds=(u1, u2), constants=CONSTANTS))
    anim = sb.animate(traj, drawing(), fps=20)
    anim.update_frame(len(anim.times) - 1)
    assert anim.camera_moved()
    x0, x1 = anim._fig.axes[0].get_xlim()
    assert x0 < 50.0 < x1 and x1 - x0 < 10.0
    # the camera jumps rather than gliding: fewer background redraws than frames
    from symbody.presentation.animate import _camera_centers

    centers = _camera_centers(anim.positions[:, :2], 1.5 * 1.5)
    jumps = np.count_nonzero(np.any(np.diff(centers, axis=0) != 0, axis=1))
    assert 0 < jumps < len(anim.times) / 2


# ----------------------------------------------------------------------------- export
def _html_frames(text: str) -> list[str]:
    match = re.search(r"var frames = (\[.*?\]);", text, re.S)
    assert match, "no frame array in the HTML"
    return json.loads(match.group(1))


def test_save_html_is_self_contained(tmp_path):
    from PIL import Image

    traj = make_trajectory(tf=2.0, k=41)
    anim = sb.animate(traj, drawing(), fps=10)
    path = save_html(anim, tmp_path / "a.html")
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "http://" not in text and "https://" not in text      # no network needed
    frames = _html_frames(text)
    assert len(frames) == 21
    first = Image.open(io.BytesIO(base64.b64decode(frames[0])))
    last = Image.open(io.BytesIO(base64.b64decode(frames[-1])))
    assert first.size == last.size and first.size[0] > 200
    assert np.any(np.asarray(first.convert("RGB")) != np.asarray(last.convert("RGB")))
    # Jupyter display uses the same player
    assert "symbody-animation" in anim._repr_html_()


def test_blitted_frames_match_full_redraws():
    from symbody.presentation.export import render_frames

    traj = make_trajectory(tf=1.0, k=21)
    anim = sb.animate(traj, drawing(), fps=4)
    fast = render_frames(anim)
    anim.animated_artists = None
    full = render_frames(anim)
    assert len(fast) == len(full) == 5
    for a, b in zip(fast, full, strict=True):
        assert np.mean(np.any(a != b, axis=-1)) < 0.002
    # the same with a moving camera (background redrawn after each jump)
    t = np.linspace(0, 10, 101)
    q = np.column_stack([0.1 * np.ones_like(t), 5.0 * t])
    moving = Trajectory(SampleArrays(t=t, x=q, q=q, u=np.zeros((101, 2)),
                                     holonomic_residuals=np.zeros((101, 0)),
                                     velocity_residuals=np.zeros((101, 0))),
                        ModelInfo(coordinates=(q1, q2), speeds=(u1, u2), constants=CONSTANTS))
    anim = sb.animate(moving, drawing(), fps=1)
    fast = render_frames(anim)
    anim.animated_artists = None
    full = render_frames(anim)
    assert len(fast) == len(full) == 11
    for a, b in zip(fast, full, strict=True):
        differing = np.mean(np.any(a != b, axis=-1))
        assert differing < 0.002          # identical up to anti-aliasing of a few pixels


def test_save_gif(tmp_path):
    from PIL import Image

    traj = make_trajectory(tf=2.0, k=41)
    anim = sb.animate(traj, drawing(), fps=10)
    path = save_gif(anim, tmp_path / "a.gif")
    with Image.open(path) as im:
        assert im.n_frames == 21
        assert im.info["duration"] == 100
        assert im.info.get("loop") == 0


def test_gif_and_html_share_one_rendering_forgotten_with_the_animation(tmp_path, monkeypatch):
    import gc

    from symbody.presentation import export

    anim = sb.animate(make_trajectory(tf=1.0, k=21), drawing(), fps=5)
    renders = []
    original = export.render_frames
    monkeypatch.setattr(export, "render_frames", lambda a: renders.append(a) or original(a))
    save_gif(anim, tmp_path / "a.gif")
    save_html(anim, tmp_path / "a.html")
    assert len(renders) == 1 and anim in export._PALETTE_FRAMES
    gc.collect()
    cached = len(export._PALETTE_FRAMES)
    renders.clear()
    del anim
    plt.close("all")
    gc.collect()
    assert len(export._PALETTE_FRAMES) == cached - 1


# ----------------------------------------------------------------------------- progress
class _FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("SYMBODY_QUIET", raising=False)
    pipe = io.StringIO()
    with Progress("simulating", total=10, stream=pipe, delay=0) as bar:
        bar.update(5)
    assert pipe.getvalue() == ""
    tty = _FakeTTY()
    with Progress("simulating", total=10, stream=tty, delay=0, min_interval=0) as bar:
        bar.update(5, "t = 5 s")
    out = tty.getvalue()
    assert "simulating [##########..........]  50%  t = 5 s" in out
    assert out.endswith("\n") and "simulating: done in" in out
    monkeypatch.setenv("SYMBODY_QUIET", "1")
    quiet = _FakeTTY()
    with Progress("x", total=1, stream=quiet, delay=0) as bar:
        bar.update()
    assert quiet.getvalue() == ""


def test_as_progress_normalises_arguments():
    calls = []
    bar = as_progress(lambda done, total, msg: calls.append((done, total, msg)), "compiling", total=4)
    bar(1)
    bar.update(2, "kernel 3")
    assert calls == [(1.0, 4.0, ""), (3.0, 4.0, "kernel 3")]
    assert as_progress(False, "x").enabled is False
    assert as_progress(True, "x").enabled is True
    own = Progress("mine")
    assert as_progress(own, "other", total=3) is own and own.total == 3.0
    with pytest.raises(sb.InputError, match="progress"):
        as_progress(42, "x")
