"""Issue 37: the book's jumper jumps as high as its knee torque allows (optimal control through
its smooth ground contact, :func:`symbody.optimize.examples.jumper_jump`).

The optimum is checked against the physics, not stored numbers: IPOPT's convergence (KKT to
its tolerance, the constraints met), the optimal torque replayed through ``symbody.simulate``
(the open-loop motion follows the collocation's states to the transcription's accuracy, and
reaches the same apex), and the energy balance along the optimal path, integrated with
Simpson's rule on the Hermite-Simpson points: the knee's work plus the ground's equals the
gain in kinetic and gravitational energy, the ground giving back less than it stored.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm

import symbody as sb
from symbody.optimize import examples
from symbody.optimize.contact_examples import JUMPER_GROUND, JUMPER_TORQUE_LIMIT

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")

NODES, DURATION = 31, 0.5


@pytest.fixture(scope="module")
def jump():
    problem, guess = examples.jumper_jump(num_nodes=NODES, duration=DURATION)
    return problem, problem.solve(guess, progress=False)


def _functions(problem):
    """Numeric functions of [q, u] (and T_k) for the jumper's energy, powers and apex."""
    eom = problem.eom
    constants = problem.known_parameters
    model = sb.models.jumper(smoothing=True)          # its outputs: the same symbols
    states = [*eom.q, *eom.u]
    torque, = eom.specifieds
    contact, = eom.contacts
    u1, u3 = eom.u[0], eom.u[1]
    height, speed = examples.jumper_mass_centre(model.with_constants(
        **{s.name: v for s, v in constants.items()}))
    g = next(v for s, v in constants.items() if s.name == "g")

    def numeric(expr, *extra):
        return sm.lambdify([states, *extra], sm.sympify(expr).xreplace(constants))

    energy = numeric(model.outputs["kinetic_energy"] + model.outputs["potential_energy"])
    return {"energy": energy,
            "knee_power": numeric(-torque * u3, [torque]),     # T on the calf, -T on the thigh
            "ground_power": numeric(contact.normal_force * u1),
            "normal_force": numeric(contact.normal_force),
            "apex": numeric(height + speed ** 2 / (2 * g)),
            "height": numeric(height)}


def test_the_jump_converged_to_a_lift_off(jump):
    problem, result = jump
    assert result.success, result.message                # IPOPT's KKT conditions to 1e-8
    assert result.constraint_violation < 1e-7
    f = _functions(problem)
    traj = result.trajectory
    x = np.column_stack([traj.q, traj.u])
    assert traj.q[-1, 0] >= 1e-3 - 1e-9                  # the foot is off the ground at T
    Fn = np.array([f["normal_force"](s) for s in x])
    assert (Fn >= 0).all() and Fn[-1] < 1.0              # never pulling; gone at lift-off
    assert -result.objective > f["apex"](x[-1]) - 1e-2   # the effort term is small
    assert f["apex"](x[-1]) > f["height"](x[0]) + 0.5    # a jump, not a stretch
    torque = result.inputs[:, 0]
    assert np.isclose(torque, JUMPER_TORQUE_LIMIT).sum() > NODES // 2   # bang-bang


def test_the_optimal_torque_replays_the_jump(jump):
    problem, result = jump
    replay = result.simulate()                           # symbody.simulate, Radau 1e-10
    assert replay.node_deviation < 0.15                  # 0.097 (31 nodes), 0.046 (41)
    f = _functions(problem)
    end = np.concatenate([replay.trajectory.q[-1], replay.trajectory.u[-1]])
    optimal = np.concatenate([result.trajectory.q[-1], result.trajectory.u[-1]])
    assert f["apex"](end) == pytest.approx(f["apex"](optimal), abs=0.02)


def test_the_energy_balance_closes_along_the_optimum(jump):
    problem, result = jump
    f = _functions(problem)
    nlp = problem.nlp
    X, R = result.w[nlp.iX], result.w[nlp.iR]           # nodes and midpoints
    h = DURATION / (NODES - 1)

    def simpson(values):
        return h / 6 * (values[0:-1:2] + 4 * values[1::2] + values[2::2]).sum()

    knee = simpson(np.array([f["knee_power"](x, r) for x, r in zip(X, R)]))
    ground = simpson(np.array([f["ground_power"](x) for x in X]))
    gain = f["energy"](X[-1]) - f["energy"](X[0])
    # the residual is the transcription's error at the torque's corners: 2.8e-3 of the knee's
    # work on 31 nodes, 5.9e-4 on 41, 5.1e-4 on 61 (a sign error in either power is 1e-2)
    assert knee + ground == pytest.approx(gain, rel=5e-3)
    # the ground stored k s(-q1, ε)^(5/2) / (5/2) at the start and gives back less (dissipates)
    k, depth = (JUMPER_GROUND[name] for name in ("k_f", "depth"))
    q1 = X[:, 0]
    stored = k * ((-q1 + np.sqrt(q1 ** 2 + depth ** 2)) / 2) ** 2.5 / 2.5
    dissipated = -ground - (stored[-1] - stored[0])
    assert knee > 0 and 0 < dissipated < 0.05 * knee
