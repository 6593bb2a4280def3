"""Reaching with the musculoskeletal arm: extra first-order states (muscle activations)
and their excitations in the collocation problem."""

from __future__ import annotations

import math

import numpy as np
import pytest

import symbody as sb
from symbody.optimize import examples

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")


def test_arm_reaching_solves_and_satisfies_the_model_at_every_point():
    problem, guess = examples.arm_reaching(num_nodes=41)
    res = problem.solve(guess, progress=False)
    assert res.success, res.message
    nlp = problem.nlp
    traj = res.trajectory
    # the target is reached at rest, from the model's initial state
    assert traj.q[0, 0] == pytest.approx(math.radians(75.0), abs=1e-9)
    assert traj.q[-1, 0] == pytest.approx(math.radians(120.0), abs=1e-9)
    assert abs(traj.u[-1, 0]) < 1e-9
    # excitations and activations within [0, 1]
    assert res.inputs.min() >= -1e-8 and res.inputs.max() <= 1 + 1e-8
    act = traj.x[:, 2:]
    assert act.min() >= -1e-8 and act.max() <= 1 + 1e-8
    # the derivative unknowns at every node and midpoint are the model's own x' = f(t, x, e)
    # (NumericModel.rhs: muscle forces, activation dynamics) at the optimal x and e
    model = sb.models.musculoskeletal_arm()
    numeric = sb.compile(model.eom)
    X, V, E = res.w[nlp.iX], res.w[nlp.iV], res.w[nlp.iR]
    h = res.duration / (problem.num_nodes - 1)
    f = np.array([numeric.rhs(j * h / 2, X[j], model.constants, E[j]) for j in range(len(X))])
    scale = np.abs(f).max(axis=0) + 1.0
    assert np.max(np.abs(f - V) / scale) < 1e-7
    # the biceps does the lifting: its mean excitation exceeds the triceps'
    assert res.inputs[:, 0].mean() > res.inputs[:, 1].mean()


def test_arm_reaching_with_radau_satisfies_the_model_at_every_collocation_point():
    """Radau (s = 5, 11 nodes) on the stiff arm: the derivative unknowns at every point are the
    model's x' = f(t, x, e) there, and the excitations, at t0 too (the first interval's input
    polynomial extrapolated), lie within [0, 1]."""
    problem, guess = examples.arm_reaching(transcription="radau5", num_nodes=11)
    res = problem.solve(guess, progress=False)
    assert res.success, res.message
    nlp = problem.nlp
    assert nlp.layout["P"] == 5 * 10 + 1
    model = sb.models.musculoskeletal_arm()
    numeric = sb.compile(model.eom)
    X, V, E = res.w[nlp.iX], res.w[nlp.iV], res.w[nlp.iR]
    h = res.duration / (problem.num_nodes - 1)
    f = np.array([numeric.rhs(nlp.point_kappa[j] * h, X[j], model.constants, E[j])
                  for j in range(len(X))])
    scale = np.abs(f).max(axis=0) + 1.0
    assert np.max(np.abs(f - V) / scale) < 1e-7
    assert E.min() >= -1e-8 and E.max() <= 1 + 1e-8
    assert res.trajectory.q[-1, 0] == pytest.approx(math.radians(120.0), abs=1e-9)
