"""Standard optimal control problems on symbody models (docs, tests and benchmarks).

Each function returns ``(problem, initial_guess)``; the published or independently
computed optima are checked in the tests, not stored here.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..formulation import EquationsOfMotion
from .problem import OptimalControlProblem

__all__ = ["pendulum_swing_up", "cart_pole_swing_up", "pendulum_equations", "n_link_cart_swing_up"]

_t = dynamicsymbols._t


def pendulum_equations() -> tuple[EquationsOfMotion, dict]:
    """opty's compound pendulum, ``I ω' + m g d sin θ - T = 0``, θ' = ω, and its constants."""
    theta, omega, T = dynamicsymbols("theta omega T")
    I, m, g, d = sm.symbols("I m g d")
    eom = EquationsOfMotion([theta], [omega], kinematic=[theta.diff(_t) - omega],
                            dynamic=[I * omega.diff(_t) + m * g * d * sm.sin(theta) - T],
                            name="torque-driven pendulum")
    return eom, {I: 1.0, m: 1.0, g: 9.81, d: 1.0}


def pendulum_swing_up(transcription: str = "backward-euler", num_nodes: int = 501,
                      duration: float = 10.0, **kwargs) -> tuple[OptimalControlProblem, dict]:
    """opty's gallery problem "fixed duration pendulum swing up": from hanging (θ = 0) at rest
    to upright (θ = π) at rest in 10 s, |T| <= 2 N m, minimizing ∫ T² dt.

    The initial guess: hanging at rest, no torque (all zeros).  (θ rising linearly from 0 to
    π is a worse start: IPOPT ends at a point of locally minimal infeasibility from it.)
    """
    eom, constants = pendulum_equations()
    theta, = eom.q
    omega, = eom.u
    T, = eom.specifieds
    problem = OptimalControlProblem(
        eom, num_nodes=num_nodes, duration=duration, objective=T ** 2,
        instance_constraints=[theta.func(0.0), theta.func(duration) - math.pi,
                              omega.func(0.0), omega.func(duration)],
        bounds={T: (-2.0, 2.0)}, known_parameters=constants, transcription=transcription, **kwargs)
    guess = {theta: 0.0, omega: 0.0, T: 0.0}
    return problem, guess


def n_link_cart_swing_up(n: int = 1, transcription: str = "midpoint", num_nodes: int = 101,
                         duration: float = 2.0, distance: float = 1.0, force_limit: float = 20.0,
                         track: float = 2.0, cart_mass: float = 1.0, pole_mass: float = 0.3,
                         pole_length: float = 0.5, **kwargs) -> tuple[OptimalControlProblem, dict]:
    """Swing-up of the n-link pendulum on a cart (:func:`symbody.models.n_link_pendulum_on_cart`
    with the force F(t)) from hanging (q_i = -π/2) to upright (q_i = π/2), the cart moving
    ``distance``, at rest at both ends, |F| <= ``force_limit``, |q0| <= ``track``, minimizing
    ∫ F² dt.  With n = 1 and the defaults this is Kelly's (2017) cart-pole swing-up: cart
    1 kg, pole 0.3 kg at 0.5 m, 2 s, 1 m, 20 N.  With n links each has length
    ``pole_length / n`` and a bob of ``pole_mass / n``.

    The initial guess: all coordinates linear in time between the end conditions.
    """
    from ..models import n_link_pendulum_on_cart
    model = n_link_pendulum_on_cart(n, force=True)
    eom = model.eom
    q, u = eom.q, eom.u
    F, = eom.specifieds
    m = sm.symbols(f"m:{n + 1}")
    l = sm.symbols(f"l:{n}")
    g = sm.Symbol("g")
    constants = {g: 9.81, m[0]: cart_mass}
    for i in range(n):
        constants[m[i + 1]] = pole_mass / n
        constants[l[i]] = pole_length / n
    inst = [q[0].func(0.0), q[0].func(duration) - distance]
    inst += [qi.func(0.0) + math.pi / 2 for qi in q[1:]]
    inst += [qi.func(duration) - math.pi / 2 for qi in q[1:]]
    inst += [ui.func(0.0) for ui in u] + [ui.func(duration) for ui in u]
    problem = OptimalControlProblem(
        model, num_nodes=num_nodes, duration=duration, objective=F ** 2,
        instance_constraints=inst, bounds={F: (-force_limit, force_limit), q[0]: (-track, track)},
        known_parameters=constants, transcription=transcription, **kwargs)
    tt = np.linspace(0.0, 1.0, num_nodes)
    guess = {q[0]: distance * tt}
    for qi in q[1:]:
        guess[qi] = -math.pi / 2 + math.pi * tt
    return problem, guess


def cart_pole_swing_up(transcription: str = "midpoint", num_nodes: int = 101,
                       quadrature: str = "rectangle", **kwargs) -> tuple[OptimalControlProblem, dict]:
    """Kelly's (2017) cart-pole swing-up: :func:`n_link_cart_swing_up` with n = 1.

    The cost ``∫ F² dt`` is summed by the rectangle rule over all nodes, ``h Σ_k F_k²``, as an
    opty user writes it (``interval * np.sum(F**2)``); ``quadrature="transcription"`` sums
    the midpoint values instead.
    """
    return n_link_cart_swing_up(1, transcription=transcription, num_nodes=num_nodes,
                                quadrature=quadrature, **kwargs)
