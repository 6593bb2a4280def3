"""Friction at a contact: Coulomb's law, with optional Stribeck and viscous terms.

With the slip velocity v_t (the tangential velocity of b's material point at the contact
relative to a's, components (v_1, v_2) along the tangent basis) and the normal force F_n:

    F_t = -F_n [ μ(|v_t|) v_t / sqrt(|v_t|² + ε²) + μ_v v_t ]                 ("smooth")
    μ(s) = μ_d + (μ_s - μ_d) exp(-(s / v_S)²)                               (Stribeck)

Coulomb's law is μ_s = μ_d = μ, μ_v = 0.  The regularization by the velocity scale ε
(``velocity_scale``, default 1e-3 m/s) makes the force a C-infinity function of the slip
velocity (no events, exact derivatives for implicit integrators, linearization and
optimal control).  Its error: the friction force's magnitude is
μ F_n |v_t| / sqrt(|v_t|² + ε²) instead of μ F_n, too small by the fraction

    1 - 1 / sqrt(1 + (ε / |v_t|)²)  <=  ε² / (2 |v_t|²),

so below 5e-5 of the Coulomb force at |v_t| >= 100 ε; its direction is exact.  Around
|v_t| < ε it is a steep viscous law (slope μ F_n / ε): a body that should stick creeps at a
speed about ε (tangential load / (μ F_n)) instead.  Exact stick needs
``friction_mode="exact"`` (stick as a constraint, slip/stick events).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy as sm

from ..errors import InputError

__all__ = ["Friction", "as_friction", "smooth_friction"]

#: the default regularization velocity ε of the smooth law (m/s)
DEFAULT_VELOCITY_SCALE = 1e-3


def _coefficient(value: Any, what: str, name: str) -> sm.Expr:
    try:
        v = sm.sympify(value)
    except (sm.SympifyError, TypeError) as exc:
        raise InputError(f"contact {name!r}: {what} must be a number or a SymPy expression, "
                         f"got {value!r}") from exc
    if v.is_number and (not v.is_real or v < 0):
        raise InputError(f"contact {name!r}: {what} must be >= 0, got {value!r}")
    return v


@dataclass(frozen=True)
class Friction:
    """A friction law (module docstring): ``coefficient`` μ (Coulomb; the dynamic μ_d with
    ``static``), ``static`` μ_s (Stribeck's peak at zero slip, default μ),
    ``stribeck_velocity`` v_S (m/s; needed with ``static``), ``viscous`` μ_v (s/m, force
    per normal force per slip speed) and ``velocity_scale`` ε (m/s) of the smooth mode."""

    coefficient: Any
    static: Any = None
    stribeck_velocity: Any = None
    viscous: Any = 0
    velocity_scale: Any = DEFAULT_VELOCITY_SCALE

    def checked(self, name: str, exact: bool = False) -> Friction:
        """The law with every number sympified and checked (InputError naming the contact).
        ``exact``: for ``friction_mode="exact"``, Coulomb's law with the kinetic μ and the
        static μ_s (``static``, no Stribeck velocity; no viscous term)."""
        mu = _coefficient(self.coefficient, "the friction coefficient", name)
        static = None if self.static is None else _coefficient(self.static, "the static friction "
                                                                "coefficient", name)
        vs = None if self.stribeck_velocity is None else _coefficient(
            self.stribeck_velocity, "the Stribeck velocity", name)
        if exact and (vs is not None or not (sm.sympify(self.viscous).is_number
                                             and sm.sympify(self.viscous) == 0)):
            raise InputError(f"contact {name!r}: exact friction is Coulomb's law with the kinetic "
                             "coefficient and a static one (Friction(mu, static=mu_s)); a Stribeck "
                             "velocity or a viscous term needs friction_mode='smooth'")
        if static is not None and vs is None and not exact:
            raise InputError(f"contact {name!r}: a static friction coefficient needs the Stribeck "
                             "velocity (stribeck_velocity=v_S, m/s)")
        if vs is not None and vs.is_number and vs == 0:
            raise InputError(f"contact {name!r}: the Stribeck velocity must be > 0")
        viscous = _coefficient(self.viscous, "the viscous friction coefficient", name)
        eps = _coefficient(self.velocity_scale, "the friction velocity_scale", name)
        if eps.is_number and eps == 0:
            raise InputError(f"contact {name!r}: the friction velocity_scale must be > 0 (the smooth "
                             "law divides by sqrt(|v|² + ε²))")
        return Friction(mu, static, vs, viscous, eps)

    def coefficient_at(self, speed_squared: sm.Expr) -> sm.Expr:
        """μ at the slip speed s, as a function of s² (Stribeck's, or the constant μ)."""
        if self.static is None:
            return self.coefficient
        return self.coefficient + (self.static - self.coefficient) * sm.exp(
            -speed_squared / self.stribeck_velocity ** 2)


def as_friction(friction: Any, name: str, exact: bool = False) -> Friction | None:
    """``friction`` (None, a coefficient or a :class:`Friction`) as a checked Friction
    (``exact``: for the exact mode, see :meth:`Friction.checked`)."""
    if friction is None:
        return None
    if not isinstance(friction, Friction):
        friction = Friction(friction)
    return friction.checked(name, exact)


def smooth_friction(law: Friction, normal_force: sm.Expr, slip: tuple) -> tuple:
    """The smooth friction force's components along the tangent basis for slip velocity
    components ``slip`` (module docstring)."""
    speed_squared = sum((v ** 2 for v in slip), sm.S.Zero)
    scale = 1 / sm.sqrt(speed_squared + law.velocity_scale ** 2)
    mu = law.coefficient_at(speed_squared)
    return tuple(-normal_force * (mu * scale + law.viscous) * v for v in slip)
