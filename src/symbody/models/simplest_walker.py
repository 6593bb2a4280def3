"""The simplest walking model (Garcia, Chatterjee, Ruina & Coleman 1998): a passive compass gait.

Two rigid massless legs of length l hinged at the hip, a point mass M at the hip and
infinitesimal point masses m (m/M -> 0) at the feet, walking down a slope gamma.  In the
paper's nondimensional form (time in units of sqrt(l/g)) the stance leg angle theta (from
the slope normal) and the angle phi between the legs obey, in the limit m/M -> 0,

    theta'' = sin(theta - gamma),
    phi''   = sin(theta - gamma) + sin(phi) (theta'^2 - cos(theta - gamma)).

These are hand-derived equations (the limit is singular for Kane's method on finite
masses), given to symbody as an EquationsOfMotion with q = [theta, phi], u = [theta', phi'].

Heelstrike: the swing foot reaches the slope when phi - 2 theta = 0 while rising
(event "heelstrike", direction +1; the falling crossing at mid-stance is the foot scuffing
the paper ignores).  The legs swap and the plastic impact maps

    theta+ = -theta-,   phi+ = -2 theta-,
    theta'+ = cos(2 theta-) theta'-,   phi'+ = cos(2 theta-) (1 - cos(2 theta-)) theta'-.

Period-one gait (the paper's long-period, stable gait at gamma = 0.009):
theta* = 0.20031090049483, theta'* = -0.19983247291764 just after heelstrike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..analysis.events import Event
from ..compat.sympy import TIME
from ..formulation import EquationsOfMotion
from .base import Drawing, Model

__all__ = ["simplest_walker", "simplest_walker_equations", "stride", "period_one_gait", "heelstrike_map",
           "gait_state"]

t = TIME

DESCRIPTION = "simplest walker (Garcia et al. 1998): passive compass gait with heelstrike impacts"
REFERENCES = ("Garcia, Chatterjee, Ruina & Coleman, The simplest walking model: stability, complexity, "
              "and scaling, ASME J. Biomechanical Engineering 120(2):281-288, 1998.  Nondimensional "
              "(g = l = 1); gamma = 0.009; initial state: the paper's long-period gait "
              "theta = 0.20031090049483, theta' = -0.19983247291764, phi = 2 theta, "
              "phi' = theta' (1 - cos 2 theta).")

THETA_STAR = 0.20031090049483
THETA_DOT_STAR = -0.19983247291764


def simplest_walker_equations() -> tuple[EquationsOfMotion, dict]:
    """The stance-phase EquationsOfMotion and the symbols (theta, phi, their rates, gamma)."""
    theta, phi = dynamicsymbols("theta, phi")
    w_theta, w_phi = dynamicsymbols("u_theta, u_phi")
    gamma = sm.Symbol("gamma")
    theta_dd = sm.sin(theta - gamma)
    phi_dd = sm.sin(theta - gamma) + sm.sin(phi) * (w_theta ** 2 - sm.cos(theta - gamma))
    eom = EquationsOfMotion(
        [theta, phi], [w_theta, w_phi],
        kinematic=[theta.diff(t) - w_theta, phi.diff(t) - w_phi],
        dynamic=(sm.eye(2), -sm.Matrix([theta_dd, phi_dd])), name="simplest-walker")
    return eom, {"theta": theta, "phi": phi, "w_theta": w_theta, "w_phi": w_phi, "gamma": gamma}


def simplest_walker(gamma: float = 0.009) -> Model:
    """The simplest walker on the slope ``gamma`` (rad); ``model.events`` holds the heelstrike."""
    eom, s = simplest_walker_equations()
    theta, phi, w_theta, w_phi, gam = s["theta"], s["phi"], s["w_theta"], s["w_phi"], s["gamma"]
    c2 = sm.cos(2 * theta)
    heelstrike = Event(phi - 2 * theta, name="heelstrike", direction=1,
                       action={theta: -theta, phi: -2 * theta, w_theta: c2 * w_theta,
                               w_phi: c2 * (1 - c2) * w_theta})

    def initial_state(values: dict) -> dict:
        th, w = THETA_STAR, THETA_DOT_STAR
        return {theta: th, phi: 2 * th, w_theta: w, w_phi: w * (1 - math.cos(2 * th))}

    # drawing in slope coordinates (x down the slope, y along its normal), stance foot at 0
    hip = sm.Matrix([-sm.sin(theta), sm.cos(theta), 0])
    swing = hip + sm.Matrix([sm.sin(phi - theta), -sm.cos(phi - theta), 0])
    drawing = Drawing(points={"stance_foot": sm.Matrix([0, 0, 0]), "hip": hip, "swing_foot": swing},
                      lines=[["stance_foot", "hip", "swing_foot"]], traces=("hip",), view="2d")
    # energy per unit hip mass (nondimensional): the feet carry none in the limit m/M -> 0
    energy = w_theta ** 2 / 2 + sm.cos(theta - gam)
    return Model.create(
        name="simplest-walker", description=DESCRIPTION, eom=eom, method=None,
        constants={gam: float(gamma)}, initial_state_rule=initial_state, t_span=(0.0, 20.0),
        drawing=drawing, energy=energy, outputs={"swing_foot_height": swing[1]},
        references=REFERENCES, events=(heelstrike,))


def heelstrike_map(x: np.ndarray) -> np.ndarray:
    """The state just after heelstrike from the state x = [theta, phi, theta', phi'] just before."""
    th, _, w, _ = (float(v) for v in x)
    c2 = math.cos(2 * th)
    return np.array([-th, -2 * th, c2 * w, c2 * (1 - c2) * w])


def gait_state(theta: float, theta_dot: float) -> np.ndarray:
    """The state just after heelstrike on a gait: [theta, 2 theta, theta', theta' (1 - cos 2 theta)]."""
    return np.array([theta, 2 * theta, theta_dot, theta_dot * (1 - math.cos(2 * theta))])


def stride(model: Model, z: Sequence[float], gamma: float = 0.009, rtol: float = 1e-12, atol: float = 1e-12) -> np.ndarray:
    """The stride map S: (theta, theta') just after one heelstrike -> just after the next.

    ``model``: the compiled walker (``symbody.compile(simplest_walker().eom)``).  One step is
    simulated to the heelstrike (a terminal event located on the dense output), then the
    impact map is applied.
    """
    from ..analysis import Solver, simulate

    eom_model = model
    theta, phi = eom_model.coordinates[:2]
    stop = Event(phi - 2 * theta, name="heelstrike", direction=1, terminal=True)
    x0 = gait_state(float(z[0]), float(z[1]))
    sol = simulate(eom_model, (0.0, 50.0), x0, [gamma], events=[stop],
                   solver=Solver(rtol=rtol, atol=atol, progress=False))
    if not sol.events:
        raise ValueError(f"no heelstrike within 50 time units from {tuple(z)} (the walker fell)")
    after = heelstrike_map(sol.events[-1].x)
    return after[[0, 2]]


def period_one_gait(model: Model, gamma: float = 0.009, guess: Sequence[float] = (0.2, -0.2), tol: float = 1e-11,
                    max_iter: int = 20) -> dict:
    """A period-one gait: a fixed point z* = S(z*) of the stride map, by Newton's method.

    The Jacobian of S - I comes from central differences (step 1e-6); Newton stops when
    the step is below ``tol``.  Returns {"theta", "theta_dot", "eigenvalues" (of dS/dz at
    the fixed point: the gait is stable when all |λ| < 1), "iterations"}.
    """
    z = np.array(guess, dtype=float)
    iterations = 0
    for _ in range(max_iter):
        iterations += 1
        F = stride(model, z, gamma) - z
        J = np.empty((2, 2))
        for j in range(2):
            dz = np.zeros(2)
            dz[j] = 1e-6
            J[:, j] = (stride(model, z + dz, gamma) - stride(model, z - dz, gamma)) / 2e-6
        step = np.linalg.solve(J - np.eye(2), -F)
        z = z + step
        if np.max(np.abs(step)) < tol:
            break
    else:
        raise ValueError(f"Newton's method on the stride map did not converge from {guess}")
    return {"theta": float(z[0]), "theta_dot": float(z[1]), "eigenvalues": np.linalg.eigvals(J),
            "iterations": iterations}
