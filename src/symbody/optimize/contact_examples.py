"""Optimal control through contact (issue 37): a hop of the planar hopper through its smooth
Hunt-Crossley ground force (``symbody.contact.SmoothNormal``) and smooth Coulomb friction,
and the highest jump of the book's jumper.

:func:`hopper_hop` and :func:`jumper_jump` return ``(problem, initial_guess)`` like
:mod:`.examples` (which re-exports them); tests/optimize/test_contact_optimize.py and
tests/optimize/test_jumper_jump.py check their optima against the physics (the defects with
the simulation's right-hand side, a replay with ``symbody.simulate``, the energy balance, the
force never pulling) and the NLP's derivatives through the contact against finite differences.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sm

from .problem import OptimalControlProblem
from .statement import Collocation, Cost

__all__ = ["hopper_hop", "hopper_mass_centre", "jumper_jump", "jumper_mass_centre",
           "JUMPER_GROUND", "JUMPER_TORQUE_LIMIT"]

#: the ground of :func:`jumper_jump`: k_f (N/m^1.5), c_h (s/m), ε_δ (m), ε_v
JUMPER_GROUND = {"k_f": 1e6, "c_h": 5.0, "depth": 1e-4, "rate": 1e-2}
#: the knee's torque limit of :func:`jumper_jump` (N m)
JUMPER_TORQUE_LIMIT = 300.0


def _collocation(transcription: str | Collocation, kwargs: dict) -> Collocation:
    from .examples import _collocation as collocation
    return collocation(transcription, kwargs)


def hopper_mass_centre(model: Any) -> tuple[sm.Expr, sm.Expr]:
    """(height, vertical speed) of the planar hopper's mass centre (body and foot) as
    expressions of its states, with the model's masses substituted:
    y_c = (M y + m_f y_f) / (M + m_f), y_c' = (M u_y + m_f y_f') / (M + m_f)."""
    eom = model.eom
    _, y, theta, phi, l = eom.q
    _, uy, uth, uph, ul = eom.u
    M, mf = (model.constants[model.constant(n)] for n in ("M", "m_f"))
    angle = theta + phi
    foot, foot_speed = y - l * sm.cos(angle), uy - ul * sm.cos(angle) + l * sm.sin(angle) * (uth + uph)
    return (M * y + mf * foot) / (M + mf), (M * uy + mf * foot_speed) / (M + mf)


def hopper_hop(transcription: str | Collocation = "hermite-simpson", num_nodes: int = 21,
               duration: float = 0.5, rise: float = 0.25, stride: float = 0.0, **kwargs: Any
               ) -> tuple[OptimalControlProblem, dict]:
    """A hop of the planar hopper (:func:`symbody.models.planar_hopper`) from standing at rest
    to the apex of its flight: at t = 0 the model's standing state (at rest, the foot at its
    static penetration); at t = ``duration`` (s) the mass centre ``rise`` (m) higher and
    momentarily at rest vertically (y_c' = 0: the apex if the foot is off the ground), the
    hip ``stride`` (m) forward (0: a hop on the spot); minimizing ∫ ((F/100)² + (τ/10)²) dt with the leg within
    [0.3, 0.8] m and ±1 rad of the body, the body within ±0.5 rad of level, -100 <= τ <= 100 N m,
    -500 <= F <= 1500 N.  Nothing says when the foot lifts off: the smooth contact force
    lets the optimizer find the stance and the flight.

    The initial guess: standing at rest (the leg force F = M g carrying the body) while x
    moves on linearly to ``stride``.
    """
    from ..models import planar_hopper
    model = planar_hopper()
    eom = model.eom
    x, y, theta, phi, l = eom.q
    tau, F = (next(r for r in eom.specifieds if r.func.__name__ == name) for name in ("tau", "F"))
    start = model.initial_state
    height, vertical_speed = hopper_mass_centre(model)
    at_end = {s: s.func(duration) for s in (*eom.q, *eom.u)}
    inst = [s.func(0.0) - start[s] for s in (*eom.q, *eom.u)]
    inst += [height.xreplace(at_end) - (float(height.xreplace(start)) + rise),
             vertical_speed.xreplace(at_end), x.func(duration) - stride]
    problem = OptimalControlProblem(
        model, num_nodes=num_nodes, duration=duration,
        objective=(F / 100) ** 2 + (tau / 10) ** 2, instance_constraints=inst,
        bounds={l: (0.3, 0.8), phi: (-1.0, 1.0), theta: (-0.5, 0.5),
                F: (-500.0, 1500.0), tau: (-100.0, 100.0)},
        transcription=_collocation(transcription, kwargs), **kwargs)
    weight = model.constants[model.constant("M")] * model.constants[model.constant("g")]
    guess = {x: np.linspace(0.0, stride, num_nodes), y: start[y], l: start[l], F: weight}
    return problem, guess


def jumper_mass_centre(model: Any) -> tuple[sm.Expr, sm.Expr]:
    """(height, vertical speed) of the jumper's mass centre (:func:`symbody.models.jumper`) as
    expressions of its states, with the model's constants substituted:
    y_c = V_g / (m g) from the gravitational potential V_g (the knee spring's term taken out),
    y_c' its time derivative with q' = u."""
    from ..compat.sympy import TIME
    eom = model.eom
    constants = model.constants
    gravity = model.outputs["potential_energy"].xreplace({model.constant("k_k"): 0})
    mass = sum(constants[model.constant(name)] for name in ("m_a", "m_b", "m_f", "m_u"))
    height = (gravity / (model.constant("g") * mass)).xreplace(constants)
    speed = height.diff(TIME).xreplace({q.diff(TIME): u for q, u in
                                        zip(eom.q, (eom.kindiffdict[q.diff(TIME)] for q in eom.q))})
    return height, speed


def jumper_jump(transcription: str | Collocation = "hermite-simpson", num_nodes: int = 31,
                duration: float = 0.5, knee: float = 2.6, effort_weight: float = 1e-2,
                **kwargs: Any) -> tuple[OptimalControlProblem, dict]:
    """The highest jump of the book's jumper (:func:`symbody.models.jumper`, its smooth
    contact): from crouching at rest (the knee bent by ``knee`` rad, the foot at its static
    depth) to lift-off within ``duration`` (s), maximizing the apex its mass centre will reach,

        y_apex = y_c(T) + y_c'(T)² / (2 g)      with y_c'(T) >= 0, the foot 1 mm up at T,

    (after lift-off the mass centre flies ballistically whatever the knee does, so the apex is
    known at the last node), minus a small effort term ``effort_weight`` ∫ (T_k/T_max)² dt
    that makes the bang-bang torque unique; abs(T_k) <= T_max = :data:`JUMPER_TORQUE_LIMIT`,
    the knee within [0, 2.6] rad (straight to a deep squat).  The ground is
    :data:`JUMPER_GROUND`: the book's k_f = 5e7 N/m^1.5 with its damper c_f = 1e5 N s/m gives
    the 3 kg foot a 30 µs time constant no collocation grid of a jump resolves, so the jump
    is on a softer, lightly damped ground (the standing jumper sinks 7 mm).

    It starts in the deepest squat the bounds allow (``knee`` = 2.6 rad): from a shallower
    one the optimum is a counter-movement, a small hop to land deeper that a grid of a few
    dozen nodes resolves poorly.  The initial guess: crouching still, the knee straightening
    linearly, T_k = 100 N m.
    """
    from ..contact import SmoothNormal
    from ..models import jumper
    ground = JUMPER_GROUND
    smooth = SmoothNormal(depth=ground["depth"], rate=ground["rate"])
    book = jumper(smoothing=smooth).constants
    weight = sum(value for symbol, value in book.items() if symbol.name in ("m_a", "m_b", "m_f", "m_u"))
    weight *= next(value for symbol, value in book.items() if symbol.name == "g")
    model = jumper(height=-(weight / ground["k_f"]) ** (2.0 / 3.0), knee=knee,
                   smoothing=smooth).with_constants(k_f=ground["k_f"], c_h=ground["c_h"])
    constants = model.constants
    eom = model.eom
    foot, knee_angle = eom.q[0], eom.q[1]
    torque, = eom.specifieds
    start = model.initial_state
    height, speed = jumper_mass_centre(model)
    g = constants[model.constant("g")]
    at_end = {s: s.func(duration) for s in (*eom.q, *eom.u)}
    apex = (height + speed ** 2 / (2 * g)).xreplace(at_end)
    independent = (*eom.q[:2], *eom.u[:2])
    instance = {s.func(0.0) - start[s]: (0.0, 0.0) for s in independent}
    instance.update({foot.func(duration): (1e-3, None), speed.xreplace(at_end): (0.0, None)})
    limit = JUMPER_TORQUE_LIMIT
    problem = OptimalControlProblem(
        model, num_nodes=num_nodes, duration=duration,
        objective=Cost(lagrange=effort_weight * (torque / limit) ** 2, mayer=-apex),
        instance_constraints=instance, bounds={torque: (-limit, limit), knee_angle: (0.0, 2.6)},
        transcription=_collocation(transcription, kwargs), **kwargs)
    guess = {s: start[s] for s in eom.q}
    guess.update({knee_angle: np.linspace(start[knee_angle], 0.3, num_nodes), torque: 100.0})
    return problem, guess
