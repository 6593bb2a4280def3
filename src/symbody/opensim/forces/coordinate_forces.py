"""Generalized forces on one coordinate: ``CoordinateLimitForce``, ``SpringGeneralizedForce``,
``ExpressionBasedCoordinateForce``, as OpenSim applies them (a mobility force on the
coordinate's speed; q the coordinate's value, q' its speed).

- ``SpringGeneralizedForce``: τ = -k (q - q_rest) - c q'.
- ``CoordinateLimitForce`` (OpenSim's ``calcLimitForce``): with w = π/180 for a rotational
  coordinate (the file's limits in degrees, stiffnesses per degree) else 1,
  q_u = w upper_limit, q_l = w lower_limit, K_u = upper_stiffness / w, K_l =
  lower_stiffness / w, c = damping / w and Δ = w transition, the stiffnesses switch on
  smoothly through Simbody's quintic step S(x) = x³ (10 - 15 x + 6 x²) (clamped to [0, 1]):

      k_u(q) = K_u S((q - q_u)/Δ),   k_l(q) = K_l S((q_l - q)/Δ),
      τ = -k_u (q - q_u) + k_l (q_l - q) - c (k_u/K_u + k_l/K_l) q'.

  (OpenSim divides by K_u and K_l, a NaN for a zero stiffness; here the step fractions S are
  used directly, the same number for every non-zero stiffness.)
- ``ExpressionBasedCoordinateForce``: τ = f(q, q'), the file's Lepton formula in the variables
  ``q`` and ``qdot``, read by :func:`~.expression.parse_expression` (never ``eval``).
"""

from __future__ import annotations

import math

import symengine as se

from . import register_force
from .base import ForceContext, ForceContribution
from .expression import parse_expression
from .system_form import MobilityLoad
from .vector3 import F, where

__all__ = ["spring_generalized_force", "coordinate_limit_force", "expression_coordinate_force",
           "quintic_step"]


def coordinate_of(element, ctx: ForceContext, tag: str = "coordinate") -> str:
    """The coordinate an element names (its ``<coordinate>``: a name or a path)."""
    path = (element.text_of(tag) or "").strip()
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if name not in ctx.coordinate_names:
        raise element.error(f"<{tag}> {path!r} is not a coordinate of the model")
    return name


def _rotational(ctx: ForceContext, name: str) -> bool:
    """Whether coordinate ``name`` is rotational as OpenSim decides (a 3.x ``<motion_type>``;
    else from its joint: Pin, Ball, Gimbal, Universal rotational, Slider translational, Free
    and Planar by position, a CustomJoint's by the last axis it drives with a LinearFunction
    of slope ±1: rotation1-3 rotational, translation1-3 translational, else coupled)."""
    for joint in ctx.spec.joints:
        for i, c in enumerate(joint.coordinates):
            if c.name != name:
                continue
            if c.motion_type:
                return c.motion_type.startswith("rot")
            if joint.type in ("PinJoint", "BallJoint", "GimbalJoint", "UniversalJoint"):
                return True
            if joint.type == "FreeJoint":
                return i < 3
            if joint.type == "PlanarJoint":
                return i == 0
            kind = "coupled"
            for axis in joint.axes:
                if name in axis.coordinates:
                    pure = getattr(axis.function, "kind", "") == "LinearFunction" and \
                        abs(axis.function.a) == 1.0
                    if pure:
                        kind = "rot" if axis.name.startswith("rotation") else "trans"
            return kind == "rot"
    raise KeyError(name)


def quintic_step(x, x0: float, x1: float):
    """Simbody's ``Function::Step`` from 0 at x0 to 1 at x1: S(s) = s³ (10 - 15 s + 6 s²),
    s = (x - x0)/(x1 - x0), clamped (0 before x0, 1 after x1), as a Piecewise."""
    s = (x - F(x0)) / F(x1 - x0)
    inside = s ** 3 * (F(10.0) + s * (F(6.0) * s - F(15.0)))
    if x1 > x0:
        return where(se.Le(x, F(x0)), F(0.0), where(se.Ge(x, F(x1)), F(1.0), inside))
    return where(se.Ge(x, F(x0)), F(0.0), where(se.Le(x, F(x1)), F(1.0), inside))


@register_force("SpringGeneralizedForce")
def spring_generalized_force(element, ctx: ForceContext) -> ForceContribution:
    """τ = -stiffness (q - rest_length) - viscosity q'."""
    name = coordinate_of(element, ctx)
    q, u = ctx.coordinate(name)[:2]
    k, rest, c = (element.number(t, 0.0) for t in ("stiffness", "rest_length", "viscosity"))
    tau = -F(k) * (q - F(rest)) - F(c) * u
    return ForceContribution(generalized=ctx.coordinate_force(name, tau),
                             system_loads=(MobilityLoad(name, tau),),
                             record=("SpringGeneralizedForce", name))


@register_force("CoordinateLimitForce")
def coordinate_limit_force(element, ctx: ForceContext) -> ForceContribution:
    """OpenSim's limit force with its smooth stiffness transition and damping (module
    docstring)."""
    name = coordinate_of(element, ctx)
    q, u = ctx.coordinate(name)[:2]
    w = math.pi / 180.0 if _rotational(ctx, name) else 1.0
    upper, lower = element.number("upper_limit", 0.0), element.number("lower_limit", 0.0)
    k_up, k_low = element.number("upper_stiffness", 1.0), element.number("lower_stiffness", 1.0)
    damping, transition = element.number("damping", 0.001), element.number("transition", 0.1)
    if transition <= 0:
        raise element.error(f"<transition> must be > 0, got {transition}")
    q_up, q_low, K_up, K_low = w * upper, w * lower, k_up / w, k_low / w
    s_up = quintic_step(q, q_up, q_up + w * transition)
    s_low = quintic_step(q, q_low, q_low - w * transition)
    tau = (-F(K_up) * s_up * (q - F(q_up)) + F(K_low) * s_low * (F(q_low) - q)
           - F(damping / w) * (s_up + s_low) * u)
    return ForceContribution(generalized=ctx.coordinate_force(name, tau),
                             system_loads=(MobilityLoad(name, tau),),
                             record=("CoordinateLimitForce", name))


@register_force("ExpressionBasedCoordinateForce")
def expression_coordinate_force(element, ctx: ForceContext) -> ForceContribution:
    """τ = f(q, qdot) from the file's ``<expression>`` (a Lepton formula)."""
    name = coordinate_of(element, ctx)
    q, u = ctx.coordinate(name)[:2]
    text = element.text_of("expression")
    tau = parse_expression(text if text is not None else "0.0", {"q": q, "qdot": u}, element,
                           "<expression>")
    return ForceContribution(generalized=ctx.coordinate_force(name, tau),
                             system_loads=(MobilityLoad(name, tau),),
                             record=("ExpressionBasedCoordinateForce", name, text))
