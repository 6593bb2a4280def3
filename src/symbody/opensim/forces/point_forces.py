"""Forces at points of bodies: ``PointToPointSpring`` and ``PointActuator``, as OpenSim
(Simbody) applies them; Q = Σ J_Pᵀ F over the points P the force acts at.

- ``PointToPointSpring`` (Simbody's ``TwoPointLinearSpring``): points P1 (``point1`` in
  ``body1``) and P2 (``point2`` in ``body2``) at distance d = |p2 - p1|; the tension
  f = k (d - rest_length) pulls them together: F on P1 = f (p2 - p1)/d, on P2 its opposite.
- ``PointActuator``: F = optimal_force · c · ê on ``body`` at ``point``, the control c an
  input (``control_<name>``); ê = ``direction`` normalized, in the body's frame
  (``force_is_global`` false) or the ground's (true); ``point`` in the body's frame, or
  (``point_is_global``) the ground point where the force acts, converted (as OpenSim does)
  to the body point that is there at the current state.
"""

from __future__ import annotations

import re

import numpy as np
from sympy.physics.mechanics import dynamicsymbols

from . import register_force
from .base import ForceContext, ForceContribution
from .system_form import PointLoad
from .vector3 import F, norm, scale, sub

__all__ = ["point_to_point_spring", "point_actuator", "frame_in_ground", "rotate", "rotate_back",
           "BodyTag", "body_frame"]


def frame_in_ground(ctx: ForceContext, placement) -> tuple:
    """(R_GF (3x3 nested), p_GF (3)) of a frame fixed in a body (a
    :class:`~..model_spec.Placement`), symengine."""
    R, p = ctx.kinematics.pose(placement.body)
    Rf = [[sum((R[a][c] * F(placement.R[c][b]) for c in range(3)), F(0.0)) for b in range(3)]
          for a in range(3)]
    return Rf, ctx.kinematics.point(placement.body, placement.p)


class BodyTag:
    """A view of a force ``element`` whose ``<body>`` is its child ``tag`` (a 3.x file's
    ``<body1>``, ``<body_2>`` ...), for the model's frame resolution."""

    def __init__(self, element, tag: str):
        self._element, self._tag = element, tag

    def __getattr__(self, attr):
        return getattr(self._element, attr)

    def find(self, tag: str):
        return self._element.find(self._tag if tag == "body" else tag)

    def text_of(self, tag: str, default=None):
        return self._element.text_of(self._tag if tag == "body" else tag, default)


def body_frame(element, ctx: ForceContext, socket: str):
    """The frame of a force's socket ``socket`` (4.x), or of its 3.x ``<socket>`` body name."""
    if element.text_of(socket):
        return ctx.spec.frame_of(BodyTag(element, socket), "body")
    return ctx.frame(element, socket)


def rotate(R, v) -> list:
    """R v (3)."""
    return [R[a][0] * v[0] + R[a][1] * v[1] + R[a][2] * v[2] for a in range(3)]


def rotate_back(R, v) -> list:
    """Rᵀ v (3)."""
    return [R[0][a] * v[0] + R[1][a] * v[1] + R[2][a] * v[2] for a in range(3)]


@register_force("PointToPointSpring")
def point_to_point_spring(element, ctx: ForceContext) -> ForceContribution:
    """Simbody's linear two-point spring (module docstring)."""
    f1, f2 = body_frame(element, ctx, "body1"), body_frame(element, ctx, "body2")
    if f1.body == f2.body:
        raise element.error(f"body1 and body2 are the same body ({f1.body!r}): OpenSim refuses "
                            "a spring within one body")
    r1 = f1.point(element.numbers("point1", 3, default=(0, 0, 0)))
    r2 = f2.point(element.numbers("point2", 3, default=(0, 0, 0)))
    k, rest = element.number("stiffness", 1.0), element.number("rest_length", 0.0)
    p1, p2 = ctx.kinematics.point(f1.body, r1), ctx.kinematics.point(f2.body, r2)
    d = sub(p2, p1)
    length = norm(d)
    force = scale(F(k) * (length - F(rest)) / length, d)          # on P1, towards P2
    Q = [a + b for a, b in zip(ctx.point_force(f1.body, r1, force),
                               ctx.point_force(f2.body, r2, scale(F(-1.0), force)))]
    loads = (PointLoad(f1.body, tuple(r1), tuple(force)),
             PointLoad(f2.body, tuple(r2), tuple(scale(F(-1.0), force))))
    return ForceContribution(generalized=Q, system_loads=loads,
                             record=("PointToPointSpring", f1.body, f2.body))


@register_force("PointActuator")
def point_actuator(element, ctx: ForceContext) -> ForceContribution:
    """F = optimal_force · control · direction at a point of a body (module docstring)."""
    body_name = (element.text_of("body") or "").strip().rsplit("/", 1)[-1]
    if body_name not in ctx.kinematics.names:
        raise element.error(f"<body> {body_name!r} is not a body of the model")
    direction = element.numbers("direction", 3, default=(1, 0, 0))
    if not np.linalg.norm(direction) > 0:
        raise element.error("<direction> must not be the zero vector")
    direction = direction / np.linalg.norm(direction)
    point = element.numbers("point", 3, default=(0, 0, 0))
    ident = re.sub(r"\W", "_", element.name or body_name)
    control = dynamicsymbols(f"control_{ident}")
    magnitude = F(element.number("optimal_force", 1.0)) * ctx.symbol(control)
    R, p = ctx.kinematics.pose(body_name)
    e = [F(x) for x in direction]
    if not element.flag("force_is_global", False):
        e = rotate(R, e)
    if element.flag("point_is_global", False):
        r = rotate_back(R, sub([F(x) for x in point], p))
    else:
        r = [F(x) for x in point]
    force = scale(magnitude, e)
    Q = ctx.point_force(body_name, r, force)
    return ForceContribution(generalized=Q, specifieds=(control,),
                             system_loads=(PointLoad(body_name, tuple(r), tuple(force)),),
                             record=("PointActuator", body_name))

