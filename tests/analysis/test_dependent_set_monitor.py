"""The dependent-set monitor's evaluation shortcuts give the numbers of the plain evaluation.

The monitor evaluates the constraint matrices with the constants bound
(:func:`~symbody.compilation.partition.constraint_matrices_function`) and reuses the last
configuration's matrices and pivoted QR between ``rank`` and ``gauge``.  Its decisions
compare these numbers with thresholds, so they must be the plain evaluation's to the last
bit: the oracle here is ``model.constraint_matrices`` (a fresh argument vector at every
call) and a monitor with the shortcuts turned off, at states of the zoo four-bar that
include the parallelogram's change point (where ∂f_h/∂q loses rank) and its neighbourhood.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symbody.analysis.simulation.dependent_set import DependentSetMonitor
from symbody.compilation import compile
from symbody.compilation.partition import Partition, constraint_matrices_function
from symbody.models import four_bar

PARALLELOGRAM = {"l_a": 1.0, "l_b": 2.0, "l_c": 1.0, "l_n": 2.0, "m": 1.0, "g": 0.0}


@pytest.fixture(scope="module")
def model():
    return compile(four_bar().eom)


def _states(rng: np.random.Generator, n: int) -> list[tuple[float, np.ndarray]]:
    """(t, y) at random configurations and at the parallelogram's change point
    (q1 = pi, the links collinear) and next to it."""
    out = []
    for _ in range(n):
        out.append((float(rng.uniform(0, 5)), rng.uniform(-math.pi, math.pi, size=4)))
    for eps in (0.0, 1e-9, 1e-3, -1e-2):
        out.append((1.0, np.array([math.pi + eps, math.pi - eps, math.pi + eps, 0.3])))
    return out


def test_bound_matrices_are_constraint_matrices_to_the_last_bit(model):
    P = model.constants_array(PARALLELOGRAM)
    f = constraint_matrices_function(model, P)
    rng = np.random.default_rng(11)
    previous = None
    for t, y in _states(rng, 30):
        J, B = f(t, y[:model.N])
        J0, B0 = model.constraint_matrices(y[:model.N], P, t)
        assert J.tobytes() == J0.tobytes() and B.tobytes() == B0.tobytes()
        assert J.shape == J0.shape and B.shape == B0.shape
        if previous is not None:
            # each call returns new arrays: what an earlier call returned stays as it was
            assert previous[2].tobytes() == previous[0].tobytes()
        previous = (J, B, J.copy())


@pytest.mark.parametrize("threshold", [0.1, 0.0])
def test_monitor_shortcuts_change_no_number(model, threshold):
    """rank and gauge (reused configuration, pivoted_qr, remember=False at other states in
    between, as the step's interior checks do) against a monitor without the shortcuts."""
    P = model.constants_array(PARALLELOGRAM)
    fast = DependentSetMonitor(model, P, None, threshold, 1e-6)
    plain = DependentSetMonitor(model, P, None, threshold, 1e-6)
    assert fast._matrices is not None
    plain._matrices = None                      # the model's constraint_matrices every time
    parts = [model.default_partition, Partition((0, 1), (0, 1), model.N, model.o),
             Partition((0, 2), (0, 2), model.N, model.o)]
    rng = np.random.default_rng(12)
    states = _states(rng, 40)
    for i, (t, y) in enumerate(states):
        part = parts[i % len(parts)]
        r = fast.rank(t, y)
        other_t, other_y = states[(i + 7) % len(states)]
        r_other = fast.rank(other_t, other_y, remember=False)
        g = fast.gauge(t, y, part)
        assert r == plain.rank(t, y)
        assert r_other == plain.rank(other_t, other_y)
        g0 = plain.gauge(t, y, part)
        assert g.signs == g0.signs and g.dets == g0.dets
        assert g.ratio == g0.ratio or (math.isnan(g.ratio) and math.isnan(g0.ratio))
        for which in (0, 1):
            assert fast.det(t, y, part, which) == plain.det(t, y, part, which)
    # at the change point the rank measure is (nearly) zero: the states test what they should
    assert fast.rank(1.0, states[-4][1]) < 1e-8
