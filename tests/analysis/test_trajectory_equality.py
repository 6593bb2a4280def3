"""Trajectory.load(sol.save(path)) == sol (issue 34, item 5): == compares every field."""

from __future__ import annotations

import copy

import numpy as np

import symbody as sb
from systems.bouncing_ball import bouncing_ball


def _bouncing_ball():
    ball = bouncing_ball()
    model, bounce, q, u, g = ball.model, ball.bounce, ball.q, ball.u, ball.g
    return sb.simulate(model, (0.0, 2.0), [1.0, 0.0], {"g": 9.81, "e": 0.8}, events=[bounce],
                       outputs={"energy": u**2 / 2 + g * q})


def test_a_loaded_trajectory_equals_the_saved_one(tmp_path):
    sol = _bouncing_ball()
    assert sol.events and sol.outputs
    back = sb.Trajectory.load(sol.save(tmp_path / "ball"))
    assert back == sol and sol == back and not (back != sol)
    # any field that differs makes them unequal
    for change in (lambda tr: tr.x.__setitem__((3, 0), tr.x[3, 0] + 1e-15),
                   lambda tr: setattr(tr, "message", tr.message + "!"),
                   lambda tr: tr.outputs["energy"].__setitem__(0, 0.0),
                   lambda tr: tr.constants.update({next(iter(tr.constants)): 1.0}),
                   lambda tr: tr.events.pop()):
        other = copy.deepcopy(back)
        change(other)
        assert other != sol
    assert sol != "a trajectory" and sol != None  # noqa: E711 - the comparison under test


def test_nan_fields_compare_equal(tmp_path):
    sol = _bouncing_ball()
    other = copy.deepcopy(sol)
    sol.holonomic_residuals = np.full((len(sol.t), 1), np.nan)
    other.holonomic_residuals = np.full((len(sol.t), 1), np.nan)
    assert sol == other
