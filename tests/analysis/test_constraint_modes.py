"""Constraint modes as objects: options, equivalence with the names, and a mode of one's own.

On the zoo four-bar (holonomic constraints, unreduced dynamics).  A constraint mode is a
``ConstraintMode`` from ``symbody.analysis.simulation``; ``constraints="baumgarte"`` and
``constraints=Baumgarte(alpha)`` must be the same computation.
"""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody import Solver
from symbody.analysis import simulate
from symbody.analysis.simulation import DAE, Baumgarte, ConstraintMode, Plain, Projection
from symbody.analysis.simulation.strategy import StopIntegration
from symbody.compilation import compile
from symbody.errors import InputError
from symbody.models import four_bar

T_EVAL = np.linspace(0.0, 2.0, 21)


@pytest.fixture(scope="module")
def fb():
    mdl = four_bar()
    return compile(mdl.eom), mdl.initial_state, mdl.constants


def _run(fb, constraints, **kw):
    model, x0, p = fb
    return simulate(model, (0.0, 2.0), x0, p, constraints=constraints, t_eval=T_EVAL, **kw)


def test_mode_objects_are_the_named_modes(fb):
    for name, obj, kw in [("none", Plain(), {}), ("baumgarte", Baumgarte(), {}),
                          ("project", Projection(), {}), ("dae", DAE(), {})]:
        by_name = _run(fb, name, **kw)
        by_object = _run(fb, obj)
        assert by_object.success and by_object.constraints == name
        np.testing.assert_array_equal(by_object.x, by_name.x)    # the same computation


def test_baumgarte_gain_is_an_option(fb):
    model, x0, p = fb
    runs = {alpha: simulate(model, (0.0, 10.0), x0, p, constraints=Baumgarte(alpha=alpha),
                            solver=Solver(rtol=1e-4, atol=1e-6)) for alpha in (0.0, 2.0)}
    plain = simulate(model, (0.0, 10.0), x0, p, constraints="none",
                     solver=Solver(rtol=1e-4, atol=1e-6))
    np.testing.assert_array_equal(runs[0.0].x, plain.x)         # alpha = 0: the plain ODE
    # at this loose tolerance the plain ODE drifts to |f_h| ~ 2e-3 after 10 s; with α = 2/s
    # the drift decays (e^-20 of it remains), leaving the last steps' local errors
    assert abs(plain.holonomic_residuals[-1]).max() > 1e-3
    assert abs(runs[2.0].holonomic_residuals[-1]).max() < 1e-4
    with pytest.raises(InputError, match="alpha"):
        Baumgarte(alpha=-1.0)


def test_projection_restarts_keep_the_residual_at_round_off(fb):
    every = _run(fb, Projection(drift_tolerance=0.0), solver=Solver(rtol=1e-8, atol=1e-8))
    default = _run(fb, Projection(), solver=Solver(rtol=1e-8, atol=1e-8))
    ref = _run(fb, "project", solver=Solver(rtol=1e-11, atol=1e-11))
    for tr in (every, default):
        assert tr.success and tr.max_holonomic_residual < 1e-12
        # rtol = atol = 1e-8 over 2 s: the global error stays well below 1e-5
        np.testing.assert_allclose(tr.q, ref.q, atol=1e-5)
    with pytest.raises(InputError, match="drift_tolerance"):
        Projection(drift_tolerance=-1.0)


def test_ida_dense_output_at_the_output_times(fb):
    # IDA's samples come from its own interpolating polynomial; compared with a tight ODE
    # reference at rtol = atol = 1e-9 the difference is of the order of the tolerance
    raw = _run(fb, DAE(polish_algebraic=False), solver=Solver(rtol=1e-9, atol=1e-9))
    ref = _run(fb, "project", solver=Solver(rtol=1e-12, atol=1e-12))
    assert raw.success and len(raw.t) == len(T_EVAL)
    np.testing.assert_allclose(raw.q, ref.q, atol=1e-6)
    assert raw.max_holonomic_residual < 1e-6


class _Counting(ConstraintMode):
    """A mode of one's own: the plain ODE, counting the accepted steps."""

    name = "counting"

    def __init__(self):
        self.accepted = 0

    def accept(self, run, t, y, part):
        self.accepted += 1
        return y, False


def test_a_new_mode_plugs_in_without_private_access(fb):
    mode = _Counting()
    tr = _run(fb, mode)
    assert tr.success and tr.constraints == "counting"
    assert mode.accepted == tr.nsteps
    np.testing.assert_array_equal(tr.x, _run(fb, "none").x)


def test_bad_constraint_argument(fb):
    with pytest.raises(InputError, match="constraint-mode object"):
        _run(fb, object())


class _FailsAfter(Projection):
    """The projection of output samples fails after t = 1.05 (as Newton's method would far
    from the constraints)."""

    name = "fails-after"

    def output(self, run, t, y, part):
        if t > 1.05:
            raise StopIntegration(-4, f"projection did not converge at t = {t:.6g}")
        return super().output(run, t, y, part)

    def output_many(self, run, times, Y, part):
        if (times > 1.05).any():
            raise StopIntegration(-4, "(batch)")
        return super().output_many(run, times, Y, part)


def test_samples_projected_together_equal_one_by_one_and_a_failed_sample_ends_the_run(fb):
    """Output samples wait and are projected many at once (emit/flush): the result equals
    projecting each sample as it comes; a sample whose projection fails stops the run there
    with the samples before it (projected) and no event recorded after it."""
    model, x0, p = fb
    ref = _run(fb, Projection(), solver=Solver(rtol=1e-6, atol=1e-6))

    class _OneByOne(Projection):
        name = "one-by-one"

        def output_many(self, run, times, Y, part):
            return np.array([self.output(run, t, y, part) for t, y in zip(times, Y)])

    one = _run(fb, _OneByOne(), solver=Solver(rtol=1e-6, atol=1e-6))
    assert ref.success and ref.max_holonomic_residual < 1e-12
    np.testing.assert_allclose(ref.x, one.x, rtol=0, atol=1e-13)
    late = sb.Event(lambda t, x, p: t - 1.5, name="late")
    with pytest.warns(sb.SimulationFailedWarning, match="status -4"):
        tr = simulate(model, (0.0, 2.0), x0, p, constraints=_FailsAfter(), t_eval=T_EVAL,
                      solver=Solver(rtol=1e-6, atol=1e-6, raise_on_failure=False), events=[late])
    assert tr.status == -4 and "t = 1.1" in tr.message
    np.testing.assert_array_equal(tr.t, T_EVAL[T_EVAL <= 1.05])
    np.testing.assert_allclose(tr.x, ref.x[:tr.t.size], rtol=0, atol=1e-13)
    assert tr.max_holonomic_residual < 1e-12
    assert not [e for e in tr.events if e.name == "late"], "an event after the failure was kept"
