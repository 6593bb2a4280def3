"""Walking models of the zoo against the literature: the rimless wheel's steady rolling speed
(closed form) and the simplest walker's period-one gait (Garcia et al. 1998)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import symbody as sb
from symbody.models.rimless_wheel import steady_speed
from symbody.models.simplest_walker import period_one_gait, stride

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "walking_models.json").read_text())


def test_rimless_wheel_settles_at_the_closed_form_speed():
    zoo = sb.models.rimless_wheel()
    model = sb.compile(zoo.eom)
    c = {str(k): v for k, v in zoo.constants.items()}
    expected = steady_speed(c["g"], c["l"], c["alpha"], c["gamma"])
    sol = sb.simulate(model, (0.0, 12.0), zoo.initial_state, zoo.constants, events=zoo.events,
                      solver=sb.Solver(rtol=1e-11, atol=1e-12))
    assert sol.success, sol.message
    after = np.array([e.x_after[1] for e in sol.events])
    assert len(after) > 25
    # the stride map contracts by about cos^2(2 alpha) = 0.5 per step: after 25+ steps from
    # 1.5 rad/s the speed after impact is at the fixed point to ~1e-8; integration at rtol
    # 1e-11 and event times to ~1e-13 leave it well inside 1e-6
    assert abs(after[-1] - expected) < 1e-6
    assert abs(after[0] - expected) > 1e-2          # it did start elsewhere
    # each step ends at q1 = gamma + alpha and restarts at gamma - alpha
    e = sol.events[-1]
    assert e.x[0] == pytest.approx(c["gamma"] + c["alpha"], abs=1e-12)
    assert e.x_after[0] == pytest.approx(c["gamma"] - c["alpha"], abs=1e-12)
    assert e.x_after[1] == pytest.approx(math.cos(2 * c["alpha"]) * e.x[1], rel=1e-14)


def test_simplest_walker_period_one_gait_matches_the_paper():
    ref = DATA["simplest_walker"]
    zoo = sb.models.simplest_walker(gamma=ref["gamma"])
    model = sb.compile(zoo.eom)
    gait = period_one_gait(model, gamma=ref["gamma"], guess=(0.2, -0.2))
    # the paper's values are given to 1e-10; ours come from rtol 1e-12 strides and Newton
    # to 1e-11: the acceptance bound is 1e-6
    assert abs(gait["theta"] - ref["long_period_gait"]["theta"]) < 1e-6
    assert abs(gait["theta_dot"] - ref["long_period_gait"]["theta_dot"]) < 1e-6
    # stable (the long-period gait): both eigenvalues inside the unit circle (|λ| ≈ 0.589)
    assert np.all(np.abs(gait["eigenvalues"]) < 1)
    # and the walker keeps walking on it: the stride map returns the paper's state
    z = np.array([ref["long_period_gait"]["theta"], ref["long_period_gait"]["theta_dot"]])
    assert np.max(np.abs(stride(model, z, ref["gamma"]) - z)) < 1e-8
