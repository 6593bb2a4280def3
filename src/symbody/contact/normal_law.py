"""The normal force: Hunt-Crossley, with linear spring-damper and Hertz as special cases.

With the penetration δ = max(0, -g) (g the gap) and its rate δ' = -g'::

    F_n = k δⁿ max(0, 1 + 3/2 c δ')                       (never pulling: no adhesion)

the form of Simbody's and OpenSim's ``HuntCrossleyForce`` (Hunt & Crossley 1975): the
damping force is proportional to the penetration, so the force starts and ends at zero
(no jump at touchdown, no pull at lift-off as a linear damper gives).  n = 1 is a linear
spring with this damping; n = 3/2 without damping is Hertz's law of a sphere on a plane,
k = 4/3 E* sqrt(R) (:func:`hertz_stiffness`).  The spring stores V = k δ^(n+1) / (n+1).

Restitution.  During an impact at approach speed v (gravity neglected over the contact
time), m δ'' = -F_n with the approach speed written as a function of the depth, w = δ',
separates: m w dw / (1 + 3/2 c w) = -k δⁿ dδ.  Integrated from touchdown (w = v) to the
deepest point (w = 0) and back to lift-off (w = -e v), the two sides give the same spring
energy, and with β = 3/2 c v

    β (1 + e) = ln((1 + β) / (1 - β e)),

whatever the mass, stiffness and exponent (the clip at 1 + 3/2 c δ' = 0 is never reached
in a free impact: it would take an infinite depth).  The coefficient of restitution e
falls from 1 (β = 0) towards 0 (β -> infinity; e ≈ 1 - 2β/3 = 1 - c v for small c v,
the relation Simbody's documentation quotes).  Since e depends on c and v only through
β = 3/2 c v, ``restitution=e`` alone sets the damping of each impact from that impact's
touchdown speed v₀: c = 2 β(e) / (3 v₀), β(e) the root of the relation above (Brent's
method), so that every bounce has coefficient e exactly (apart from the gravity acting
during the contact), slow or fast.  The contact carries s = 1/v₀ as a state of the
equations (``<name>_impact_slowness``, s' = 0) that the simulation sets to -1/g' at each
touchdown event; it starts at 0 (undamped until the first touchdown) unless the initial
state gives it.  ``restitution=e`` with ``impact_speed=v`` sets one c = 2 β(e) / (3 v)
for all impacts: a bounce at approach speed v has coefficient e, at other speeds it
differs (less rebound at higher speeds).
(Lankarani & Nikravesh 1990, c = (1 - e²)/(2 v), and Flores et al. 2011,
c = 16 (1 - e)/(15 e v), approximate the same relation for e near 1 and over [0, 1].)
"""

from __future__ import annotations

import functools
from typing import Any

import sympy as sm

from ..errors import InputError

__all__ = ["hunt_crossley", "linear_damper", "restitution_of", "beta_of", "damping_from_restitution", "hertz_stiffness",
           "effective_modulus"]


def linear_damper(stiffness: Any, exponent: Any, damping: Any, gap: sm.Expr,
                  gap_rate: sm.Expr) -> tuple[sm.Expr, sm.Expr, sm.Expr | None]:
    """(F_n, V, the switching function where the force would pull, or None) of
    F_n = max(0, k δⁿ + d δ') while δ > 0 (``damping_law="linear"``: a linear damper d in
    N s/m, the force of the Learn Multibody Dynamics jumper; n = 1 is Kelvin-Voigt's
    spring-damper).  The force jumps to d δ' at touchdown."""
    # |g|^n as (g²)^(n/2): no Piecewise inside the switch (SymPy would fold the nested
    # conditions into ITE, which symengine does not take), no negative base while apart
    spring = stiffness * (gap ** 2) ** (sm.S(exponent) / 2)
    inside = gap < 0
    energy = sm.Piecewise((stiffness * (gap ** 2) ** ((sm.S(exponent) + 1) / 2) / (exponent + 1), inside),
                          (sm.S.Zero, True))
    if damping == 0:
        return sm.Piecewise((spring, inside), (sm.S.Zero, True)), energy, None
    switch = spring + damping * (-gap_rate)
    return sm.Piecewise((switch, sm.And(inside, switch > 0)), (sm.S.Zero, True)), energy, switch


def hunt_crossley(stiffness: Any, exponent: Any, damping: Any, gap: sm.Expr,
                  gap_rate: sm.Expr) -> tuple[sm.Expr, sm.Expr, sm.Expr | None]:
    """(F_n, V, the damping switching function or None) of the Hunt-Crossley law for a
    contact of ``gap`` g and ``gap_rate`` g' (see the module docstring)."""
    depth = positive_part(-gap)
    force = stiffness * depth ** exponent
    switch = None
    if damping != 0:
        switch = 1 + sm.Rational(3, 2) * damping * (-gap_rate)
        force = force * positive_part(switch)
    energy = stiffness * depth ** (exponent + 1) / (exponent + 1)
    return force, energy, switch


def positive_part(x: sm.Expr) -> sm.Expr:
    """max(0, x), written as ``Piecewise((x, x > 0), (0, True))``: symengine differentiates
    a Piecewise (exact Jacobians, the linearity checks of the formulation) but not Max."""
    return sm.Piecewise((x, x > 0), (sm.S.Zero, True))


def restitution_of(beta: float) -> float:
    """e(β): the coefficient of restitution of a Hunt-Crossley impact with β = 3/2 c v,
    the root in (0, 1/β) of β (1 + e) = ln((1 + β) / (1 - β e)) (module docstring)."""
    import math

    from scipy.optimize import brentq

    if beta <= 0.0:
        return 1.0

    def h(e: float) -> float:
        return beta * (1.0 + e) - math.log1p(beta) + math.log1p(-beta * e)

    top = min(1.0, (1.0 - 1e-15) / beta)
    if h(top) > 0.0:
        return top
    return brentq(h, 0.0, top, xtol=1e-16, rtol=1e-15)


@functools.cache
def beta_of(e: float) -> float:
    """β(e) = 3/2 c v: the inverse of :func:`restitution_of` (Brent's method)."""
    import math

    from scipy.optimize import brentq

    if e >= 1.0:
        return 0.0

    def h(beta: float) -> float:
        return beta * (1.0 + e) - math.log1p(beta) + math.log1p(-beta * e)

    top = (1.0 - 1e-15) / e
    if h(top) >= 0.0:
        return top
    low = 0.5 * top
    while h(low) <= 0.0:          # h ~ β² (1 - e²) / 2 > 0 below the root
        low *= 0.5
    return brentq(h, low, top, xtol=1e-300, rtol=1e-15)


def damping_from_restitution(restitution: Any, impact_speed: Any, name: str = "contact") -> sm.Expr:
    """The Hunt-Crossley damping c (s/m) whose bounce at approach speed ``impact_speed`` has
    the coefficient of restitution ``restitution``: c = 2 β(e) / (3 v) (module docstring)."""
    try:
        e = float(restitution)
    except (TypeError, ValueError):
        raise InputError(f"contact {name!r}: restitution must be a number to be mapped "
                         "to a damping (give damping=c for a symbolic one)") from None
    if not 0.0 <= e <= 1.0:
        raise InputError(f"contact {name!r}: restitution must be in [0, 1], got {restitution!r}")
    if e == 0.0:
        raise InputError(f"contact {name!r}: restitution 0 needs infinite Hunt-Crossley damping; give "
                         "a small positive restitution or damping=c")
    beta = beta_of(e)
    v = sm.sympify(impact_speed)
    if v.is_number and not v > 0:
        raise InputError(f"contact {name!r}: impact_speed must be > 0, got {impact_speed!r}")
    return sm.Float(2.0 * beta / 3.0) / v if beta else sm.S.Zero


def effective_modulus(young_a: Any, poisson_a: Any, young_b: Any | None = None,
                      poisson_b: Any | None = None) -> sm.Expr:
    """E* with 1/E* = (1 - ν_a²)/E_a + (1 - ν_b²)/E_b (b omitted: a rigid counterpart)."""
    inv = (1 - sm.sympify(poisson_a) ** 2) / sm.sympify(young_a)
    if young_b is not None:
        inv += (1 - sm.sympify(poisson_b or 0) ** 2) / sm.sympify(young_b)
    return 1 / inv


def hertz_stiffness(radius: Any, modulus: Any) -> sm.Expr:
    """Hertz's k of a sphere of ``radius`` R on a plane: k = 4/3 E* sqrt(R) (use it with
    ``exponent=1.5``; ``modulus``: E*, :func:`effective_modulus`)."""
    return sm.Rational(4, 3) * sm.sympify(modulus) * sm.sqrt(sm.sympify(radius))
