"""OpenSim Moco solves a minimum-effort reach with Arm26 and symbody's OptimalControlProblem
solves the same discrete problem: the same optimum.

The guide's problem (docs/guides/opensim_reaching.md, systems/moco_reaching.py) made small
enough for Moco to solve in a few seconds: three muscles (TRIlong, the only shoulder
extensor, BIClong, BRA), 10 mesh intervals, a faster, shorter reach (0.5 s from shoulder 0,
elbow 0.3 rad to shoulder 0.1, elbow 0.9 rad).  The guide's slow 1 s reach swings the arm
back and lets gravity do the work: a flat optimum that takes Moco's limited-memory IPOPT
hundreds of iterations (136 s with six muscles and 25 intervals, 20 s with three and 10);
this reach is the muscles' work, a well-conditioned optimum that Moco reaches at IPOPT's
tol 1e-8 in about 60 iterations (4 s CPU).

Why the bounds: both tools transcribe the problem the same way (separated Hermite-Simpson on
the same 11 nodes, the excitations free at the interval midpoints, Simpson's rule for the
cost, the same bounds), and their dynamics are the same function (checked here: Moco's
solution satisfies symbody's Hermite-Simpson equations to 1e-8 and its cost in symbody's
quadrature is Moco's objective to 1e-9).  So no discretization error separates them: the
two answers are two IPOPT iterates near one optimum, apart by their convergence only (Moco at
tol 1e-8 with a limited-memory Hessian, symbody at 1e-10 with the exact one).  Measured on one
machine: objectives 2e-10 apart, q 1e-7 rad, u 2e-6 rad/s, activations and excitations 1e-6
over all 21 points; the bounds below allow 50-100 times that for another CPU or IPOPT build.
A planted change, weight 2 on BRA's effort in symbody's objective only, moves the optimum by
14 % and the trajectories by 1e-2 rad, 0.15 rad/s, 0.09 and 0.13: far outside.

``opensim`` is never imported here (its bundled casadi cannot share a process with the
``casadi`` package): Moco runs in a process of its own, so the test is skipped by
``opensim_installed()`` rather than ``pytest.importorskip``.
"""

from __future__ import annotations

import numpy as np
import pytest

from systems.moco_reaching import (
    SMALL,
    hermite_simpson_check,
    moco_in_symbody_order,
    solve_with_moco,
    symbody_points,
    symbody_problem,
)
from systems.opensim_oracle import opensim_installed

pytestmark = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")

REACH = SMALL


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """Moco's solution (it writes the model file both load) and symbody's, on the points."""
    model_file = tmp_path_factory.mktemp("moco") / "arm26_reach.osim"
    moco = solve_with_moco(REACH, model_file, tol=1e-8, timeout=600)
    arm, problem, guess = symbody_problem(REACH, model_file)
    result = problem.solve(guess, tol=1e-10)
    return moco, arm, result, moco_in_symbody_order(arm, moco), symbody_points(problem, result)


def test_moco_and_symbody_solve_the_same_discrete_problem(solved):
    moco, arm, _, (t, x, r), (ts, _, _) = solved
    assert moco["success"], moco["status"]
    assert tuple(arm.muscle_names) == REACH.muscles and not arm.left_out
    assert len(ts) == len(t) == 2 * REACH.nodes - 1 and np.abs(ts - t).max() < 1e-12
    defect, cost, _ = hermite_simpson_check(arm, t, x, r, REACH.weights)
    assert defect < 1e-8                          # Moco's optimum in symbody's equations
    assert abs(cost - moco["objective"]) < 1e-9 * moco["objective"]


def test_moco_and_symbody_find_the_same_optimum(solved):
    moco, arm, result, (_, xm, rm), (_, xs, rs) = solved
    assert result.success
    objective = moco["objective"]
    assert abs(result.objective - objective) < 1e-6 * objective
    assert result.objective < objective * (1 + 1e-8)     # Moco's point is feasible for ours
    # the states and excitations at every mesh point and midpoint, and the final state
    assert np.abs(xs[:, :2] - xm[:, :2]).max() < 1e-5              # q, rad
    assert np.abs(xs[:, 2:4] - xm[:, 2:4]).max() < 1e-4            # u, rad/s (range 10)
    assert np.abs(xs[:, 4:] - xm[:, 4:]).max() < 1e-4              # activations
    assert np.abs(rs - rm).max() < 1e-4                            # excitations
    assert np.abs(xs[-1] - xm[-1]).max() < 1e-4
    assert np.abs(xs[-1, :4] - [0.1, 0.9, 0.0, 0.0]).max() < 1e-8
    assert xm[:, 4].max() > 0.5                   # TRIlong works: not a trivial optimum
