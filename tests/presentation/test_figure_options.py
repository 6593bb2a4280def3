"""The option objects of plot and animate (FigureOptions, Camera) and the former keywords,
which still work for one release with a DeprecationWarning naming the new spelling."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

# the sliding-pivot pendulum of test_plot_animate (q1 = 0.5 cos 2t, q2 = 0.1 t); pytest puts
# this folder on sys.path
from test_plot_animate import ENERGY, drawing, make_trajectory  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.deprecation import moved_keywords  # noqa: E402
from symbody.presentation import plot_comparison, plot_eigenvalues  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plot_takes_title_size_and_dpi_from_figure_options():
    fig = sb.plot(make_trajectory(), figure=sb.FigureOptions(title="run 1", figsize=(6.0, 5.0),
                                                             dpi=50))
    assert fig._suptitle.get_text() == "run 1"
    np.testing.assert_allclose(fig.get_size_inches(), (6.0, 5.0))
    assert fig.dpi == 50
    assert plt.fignum_exists(fig.number)
    closed = sb.plot(make_trajectory(), figure=sb.FigureOptions(close=True))
    assert not plt.fignum_exists(closed.number)


def test_plot_default_title_is_the_constraint_mode():
    fig = sb.plot(make_trajectory())
    assert fig._suptitle.get_text() == "constraints = 'none'"


@pytest.mark.parametrize("old, new", [
    ({"title": "a"}, sb.FigureOptions(title="a")),
    ({"figsize": (5.0, 4.0)}, sb.FigureOptions(figsize=(5.0, 4.0))),
    ({"title": "b", "figsize": (5.0, 4.0)}, sb.FigureOptions(title="b", figsize=(5.0, 4.0))),
])
def test_former_plot_keywords_warn_and_draw_the_same_figure(old, new):
    with pytest.warns(DeprecationWarning, match=r"plot\((title|figsize)=\.\.\.\) is deprecated.*"
                                                r"figure=FigureOptions\((title|figsize)="):
        before = sb.plot(make_trajectory(), **old)
    after = sb.plot(make_trajectory(), figure=new)
    np.testing.assert_allclose(before.get_size_inches(), after.get_size_inches())
    assert before._suptitle.get_text() == after._suptitle.get_text()


def test_a_former_keyword_with_its_option_object_is_an_error():
    with pytest.raises(sb.InputError, match="figure= and the old keyword title="):
        sb.plot(make_trajectory(), title="a", figure=sb.FigureOptions())
    with pytest.raises(sb.InputError, match="camera= and the old keyword view="):
        sb.animate(make_trajectory(), drawing(), view="3d", camera=sb.Camera())


def test_an_option_that_is_not_its_object_is_refused_with_the_spelling():
    with pytest.raises(sb.InputError, match=r"figure=FigureOptions\(title='a'\)"):
        sb.plot(make_trajectory(), figure={"title": "a"})
    with pytest.raises(sb.InputError, match=r"camera='3d': give a symbody.Camera\(\.\.\.\)"):
        sb.animate(make_trajectory(), drawing(), camera="3d")
    with pytest.raises(sb.InputError, match=r"Camera\(view='top'\)"):
        sb.Camera(view="top")


def test_an_unknown_keyword_is_still_a_type_error():
    with pytest.raises(TypeError, match="colour"):
        sb.plot(make_trajectory(), colour="red")


def test_comparison_and_eigenvalue_plots_take_figure_options():
    a, b = make_trajectory(), make_trajectory(drift=1e-6)
    fig = plot_comparison({"a": a, "b": b}, energy=ENERGY,
                          figure=sb.FigureOptions(title="two runs", figsize=(8.0, 5.0)))
    assert fig._suptitle.get_text() == "two runs"
    np.testing.assert_allclose(fig.get_size_inches(), (8.0, 5.0))
    with pytest.warns(DeprecationWarning, match=r"plot_comparison\(title="):
        plot_comparison({"a": a}, title="old")
    v = np.linspace(0.0, 5.0, 6)
    ev = np.column_stack([-1.0 + 0.2 * v + 1j, -1.0 + 0.2 * v - 1j])
    fig = plot_eigenvalues(v, ev, figure=sb.FigureOptions(title="weave"))
    assert fig.axes[0].get_title() == "weave"
    with pytest.warns(DeprecationWarning, match=r"plot_eigenvalues\(figsize="):
        fig = plot_eigenvalues(v, ev, figsize=(4.0, 3.0))
    np.testing.assert_allclose(fig.get_size_inches(), (4.0, 3.0))


def test_animate_camera_and_figure_options_match_the_former_keywords():
    traj = make_trajectory()
    new = sb.animate(traj, drawing(), fps=4, camera=sb.Camera(view="3d", follow=False),
                     figure=sb.FigureOptions(title="pendulum", dpi=40, figsize=(5.0, 5.0)))
    with pytest.warns(DeprecationWarning) as caught:
        old = sb.animate(traj, drawing(), fps=4, view="3d", follow=False, title="pendulum",
                         dpi=40, figsize=(5.0, 5.0))
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 5
    assert any("use camera=Camera(view=...)" in m for m in messages)
    assert any("use figure=FigureOptions(dpi=...)" in m for m in messages)
    for anim in (new, old):
        anim._draw_was_started = True       # built for inspection only
    assert new._fig.axes[0].name == old._fig.axes[0].name == "3d"
    assert new._fig.dpi == old._fig.dpi == 40
    assert new.title == old.title == "pendulum"
    np.testing.assert_allclose(new.positions, old.positions)
    plane = sb.animate(traj, drawing(), fps=4, camera=sb.Camera(plane=(0, 2)))
    plane._draw_was_started = True
    assert plane._fig.axes[0].get_ylabel() == "z [m]"


@pytest.mark.parametrize("bad, match", [({"figsize": (4.0,)}, "figsize"),
                                        ({"figsize": (4.0, -1.0)}, "figsize"),
                                        ({"dpi": 0}, "dpi")])
def test_figure_options_are_checked(bad, match):
    with pytest.raises(sb.InputError, match=match):
        sb.FigureOptions(**bad)


def test_moved_keywords_with_renamed_fields():
    class Options:
        def __init__(self, speed=1.0):
            self.speed = speed

    @moved_keywords("run", {"options": (Options, {"velocity": "speed"})})
    def run(x, *, options=None):
        return x * (options or Options()).speed

    assert run(2.0) == 2.0
    with pytest.warns(DeprecationWarning, match=r"run\(velocity=\.\.\.\).*options=Options\(speed="):
        assert run(2.0, velocity=3.0) == 6.0
