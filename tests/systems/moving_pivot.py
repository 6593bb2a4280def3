"""A particle pendulum in Cartesian coordinates whose pivot moves as s(t) = a sin(w t),
pushed along x by a specified force F(t); hand-derived, unreduced (augmented) form, with
its closed-form solution (the oracle of tests/compilation/test_numeric_core.py and
tests/analysis/test_linearization_closed_form.py):

    q = [x, y] (y dependent), u = [ux, uy] (uy dependent), x' = ux, y' = uy
    f_h = (x - s)^2 + y^2 - l^2
    velocity constraint  d (ux - s') + y uy = 0          (d = x - s; B = [d, y], b = -d s')
    dynamics  m ux' - F = B_x λ,  m uy' + m g = B_y λ     (M_d u' + g_d = B^T λ)

The acceleration constraint (ux - s')^2 + d (ux' - s'') + uy^2 + y uy' = 0 then gives

    λ = [m (d s'' + g y - (ux - s')^2 - uy^2) - d F] / (d^2 + y^2).
"""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb

t = me.dynamicsymbols._t
P1 = {"m": 1.3, "g": 9.81, "l": 0.9, "a": 0.25, "w": 2.0}


def pivot(tt, p=P1):
    """s, s', s'' of the moving pivot."""
    a, w = p["a"], p["w"]
    return a * np.sin(w * tt), a * w * np.cos(w * tt), -a * w**2 * np.sin(w * tt)


def pendulum_eom() -> sb.EquationsOfMotion:
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    F = me.dynamicsymbols("F")
    m, g, l, a, w = sm.symbols("m g l a w")
    s = a * sm.sin(w * t)
    d = x - s
    return sb.EquationsOfMotion(
        [x], [ux], [x.diff(t) - ux, y.diff(t) - uy],
        [m * ux.diff(t) - F, m * uy.diff(t) + m * g],
        constraints=sb.ConstraintEquations(q_dep=[y], u_dep=[uy], holonomic=[d**2 + y**2 - l**2],
                                           velocity=[d * (ux - s.diff(t)) + y * uy]),
        name="moving-support pendulum")


def closed_form(tt, x, y, ux, F, p=P1, uy=None):
    """(uy, ux', uy', λ) (uy from the velocity constraint unless given)."""
    s, sd, sdd = pivot(tt, p)
    d = x - s
    if uy is None:
        uy = -d * (ux - sd) / y
    m, g = p["m"], p["g"]
    lam = (m * (d * sdd + g * y - (ux - sd) ** 2 - uy**2) - d * F) / (d**2 + y**2)
    return uy, (F + d * lam) / m, -g + y * lam / m, lam


def hanging_y(tt, x, p=P1):
    """The dependent coordinate on the constraint, below the pivot (y < 0)."""
    return -np.sqrt(p["l"] ** 2 - (x - pivot(tt, p)[0]) ** 2)
