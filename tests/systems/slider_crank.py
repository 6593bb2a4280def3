"""A slider-crank whose rod is shorter than its crank (issue 40, section 1).

Crank OA (length a, angle q1 from the slide line, a uniform rod of mass m_a) turns about
O; rod AB (length b, angle q2, mass m_b) ends at the slider B (mass m_s) on the x-axis:

    f_h = a sin q1 + b sin q2 = 0,     u1 = q1', u2 = q2'.

With b < a the rod turns fully and the crank rocks (|sin q1| <= b/a): at q2 = ±pi/2 the
crank stands at a dead centre of q1, where ∂f_h/∂q2 = b cos q2 vanishes, so the set with
q1 independent (``independent="q1"``) is singular there and the motion passes on only by
switching to q2 independent (``independent="q2"``, regular throughout).  Gravity g acts
along -y.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sm
from sympy.physics.mechanics import (
    Particle,
    Point,
    ReferenceFrame,
    RigidBody,
    dynamicsymbols,
    inertia,
)

import symbody as sb

CONSTANTS = {"a": 0.1, "b": 0.05, "m_a": 1.0, "m_b": 0.5, "m_s": 0.3, "g": 9.81}


def slider_crank_eom(independent: str = "q1") -> sb.EquationsOfMotion:
    """Kane's equations (unreduced dynamics, so the dependent set may be switched)."""
    q1, q2 = dynamicsymbols("q1 q2")
    u1, u2 = dynamicsymbols("u1 u2")
    a, b, m_a, m_b, m_s, g = sm.symbols("a b m_a m_b m_s g")
    t = dynamicsymbols._t
    N = ReferenceFrame("N")
    C = N.orientnew("C", "Axis", (q1, N.z))
    R = N.orientnew("R", "Axis", (q2, N.z))
    C.set_ang_vel(N, u1 * N.z)
    R.set_ang_vel(N, u2 * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    Ca = O.locatenew("Ca", a / 2 * C.x)
    A = O.locatenew("A", a * C.x)
    Rb = A.locatenew("Rb", b / 2 * R.x)
    B = A.locatenew("B", b * R.x)
    for P in (Ca, A, Rb, B):
        P.v2pt_theory(O if P in (Ca, A) else A, N, C if P in (Ca, A) else R)
    crank = RigidBody("crank", Ca, C, m_a, (inertia(C, 0, 0, m_a * a**2 / 12), Ca))
    rod = RigidBody("rod", Rb, R, m_b, (inertia(R, 0, 0, m_b * b**2 / 12), Rb))
    slider = Particle("slider", B, m_s)
    loads = [(Ca, -m_a * g * N.y), (Rb, -m_b * g * N.y), (B, -m_s * g * N.y)]
    fh = a * sm.sin(q1) + b * sm.sin(q2)
    vel = fh.diff(t).subs({q1.diff(t): u1, q2.diff(t): u2})
    q_ind, q_dep, u_ind, u_dep = ([q1], [q2], [u1], [u2]) if independent == "q1" else \
        ([q2], [q1], [u2], [u1])
    km = sb.KanesMethod(N, q_ind, u_ind, kd_eqs=[q1.diff(t) - u1, q2.diff(t) - u2],
                        q_dependent=q_dep, configuration_constraints=[fh],
                        u_dependent=u_dep, velocity_constraints=[vel])
    km.kanes_equations([crank, rod, slider], loads)
    return km.to_eom()


def start(q2: float = 0.3, u2: float = -30.0, p: dict = CONSTANTS) -> dict:
    """A consistent start: q1 from the loop (the branch with |q1| < pi/2), u1 from u2."""
    q1 = math.asin(-p["b"] / p["a"] * math.sin(q2))
    u1 = -p["b"] * math.cos(q2) * u2 / (p["a"] * math.cos(q1))
    return {"q1": q1, "q2": q2, "u1": u1, "u2": u2}


def state_array(model, values: dict) -> np.ndarray:
    """The state [q1, q2, u_ind] of ``model`` (either independent set) from ``values``."""
    names = [sb.formatting.symbol_name(s) for s in model.states]
    return np.array([values[n] for n in names])
