"""A smooth (C-infinity) Hunt-Crossley normal force, for optimal control through contact.

The Hunt-Crossley law (:mod:`.normal_law`) has two non-smooth points: the penetration
δ = max(0, -g) at touchdown and the damping factor max(0, 1 + 3/2 c δ') where the damping
would make the force pull.  A Newton-type optimizer (IPOPT with exact Hessians) sees them
as jumps of the second derivatives (δ^(n-2) even blows up at δ = 0 for n < 2), and the
collocation nodes that fall near them slow it down or stop it.  ``Contact(...,
smoothing=SmoothNormal(depth, rate))`` replaces both maxima by the smooth positive part

    s(x, ε) = (x + sqrt(x² + ε²)) / 2,      max(0, x) < s(x, ε) <= max(0, x) + ε/2,

    F_n = k s(-g, ε_δ)ⁿ s(1 + 3/2 c δ', ε_v),        (δ' = -g')

the same regularization as OpenSim's ``SmoothSphereHalfSpaceForce`` (which multiplies by
smoothed Heaviside steps (1 + tanh(x/w))/2 instead; the square-root form is used here
because it never pulls: F_n > 0 everywhere).  Its error, from
s(x, ε) - max(0, x) = (sqrt(x² + ε²) - |x|)/2 = ε²/(4|x|) + O(ε⁴/|x|³):

- in contact at depth δ >> ε_δ: the spring force is too large by the fraction
  n ε_δ²/(4 δ²) (below 1e-4 at δ = 100 ε_δ for n = 3/2);
- at touchdown (g = 0): F_n = k (ε_δ/2)ⁿ instead of 0;
- apart, at a gap g >> ε_δ: a force at a distance k (ε_δ²/(4 g))ⁿ (k = 1e5 N/m^1.5,
  ε_δ = 1e-3 m, g = 0.1 m: 4e-4 N);
- the damping factor is too large by at most ε_v/2 (where 1 + 3/2 c δ' = 0) and by
  ε_v²/(4 |1 + 3/2 c δ'|) elsewhere (dimensionless).

Choose ε_δ a small fraction of the working depth (the depth m g / k^(1/n) a body of mass m
rests at): the defaults ε_δ = 1e-4 m and ε_v = 1e-2 suit stiffnesses 1e4..1e6.  The spring
stores V = k s(-g, ε_δ)^(n+1) / (n+1) (the exact potential for ε_δ = 0; with smoothing the
energy the contact dissipates, D = -∫ P dt - ΔV, absorbs the difference, so the balance
E + V + D = E(0) + V(0) + the inputs' work still closes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy as sm

from ..errors import InputError

__all__ = ["SmoothNormal", "smooth_positive_part", "smooth_hunt_crossley"]


@dataclass(frozen=True)
class SmoothNormal:
    """The scales of the smooth normal force (module docstring): ``depth`` ε_δ (m) of the
    penetration's positive part, ``rate`` ε_v (dimensionless) of the damping factor's."""

    depth: Any = 1e-4
    rate: Any = 1e-2

    def checked(self, name: str) -> SmoothNormal:
        """The scales sympified and checked (> 0; InputError naming the contact)."""
        out = []
        for what, value in (("depth", self.depth), ("rate", self.rate)):
            try:
                v = sm.sympify(value)
            except (sm.SympifyError, TypeError) as exc:
                raise InputError(f"contact {name!r}: the smoothing's {what} scale must be a number "
                                 f"or a SymPy expression, got {value!r}") from exc
            if v.is_number and (not v.is_real or not v > 0):
                raise InputError(f"contact {name!r}: the smoothing's {what} scale must be > 0, got "
                                 f"{value!r}")
            out.append(v)
        return SmoothNormal(*out)


def as_smoothing(smoothing: Any, name: str) -> SmoothNormal | None:
    """``smoothing`` (None, True, a depth scale in m, or a :class:`SmoothNormal`) checked."""
    if smoothing is None or smoothing is False:
        return None
    if smoothing is True:
        smoothing = SmoothNormal()
    elif not isinstance(smoothing, SmoothNormal):
        smoothing = SmoothNormal(depth=smoothing)
    return smoothing.checked(name)


def smooth_positive_part(x: sm.Expr, scale: sm.Expr) -> sm.Expr:
    """s(x, ε) = (x + sqrt(x² + ε²)) / 2: max(0, x) < s <= max(0, x) + ε/2, C-infinity."""
    return (x + sm.sqrt(x ** 2 + scale ** 2)) / 2


def smooth_hunt_crossley(stiffness: Any, exponent: Any, damping: Any, gap: sm.Expr,
                         gap_rate: sm.Expr, smoothing: SmoothNormal) -> tuple[sm.Expr, sm.Expr]:
    """(F_n, V) of the smooth Hunt-Crossley law (module docstring) for a contact of ``gap``
    g and ``gap_rate`` g'."""
    depth = smooth_positive_part(-gap, smoothing.depth)
    force = stiffness * depth ** exponent
    if damping != 0:
        force = force * smooth_positive_part(1 + sm.Rational(3, 2) * damping * (-gap_rate),
                                             smoothing.rate)
    energy = stiffness * depth ** (exponent + 1) / (exponent + 1)
    return force, energy
