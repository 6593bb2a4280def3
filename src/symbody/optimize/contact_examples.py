"""Optimal control through contact (issue 37): a hop of the planar hopper through its smooth
Hunt-Crossley ground force (``symbody.contact.SmoothNormal``) and smooth Coulomb friction.

:func:`hopper_hop` returns ``(problem, initial_guess)`` like :mod:`.examples` (which
re-exports it); tests/optimize/test_contact_optimize.py checks its optimum against the
physics (the defects with the simulation's right-hand side, the force never pulling, the
apex in the air) and the NLP's derivatives through the contact against finite differences.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sm

from .problem import OptimalControlProblem
from .statement import Collocation

__all__ = ["hopper_hop", "hopper_mass_centre"]


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
