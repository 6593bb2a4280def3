"""Rimless wheel rolling down a slope: a pendulum between impacts, an impact map at each spoke.

All mass m at the hub, spokes of length l, 2 alpha between neighbouring spokes (n = pi/alpha
spokes), slope gamma.  q1 is the stance spoke's angle from the vertical, positive forward
(downhill); u1 = q1'.  Between impacts the hub is an inverted pendulum (Kane's equations):

    q1'' = (g / l) sin q1.

A step starts with q1 = gamma - alpha and ends when the next spoke touches the slope,
q1 = gamma + alpha (event "spoke impact", rising).  The impact is plastic, with angular
momentum about the new contact point conserved:

    q1+ = q1- - 2 alpha,      u1+ = cos(2 alpha) u1-.

Steady rolling (McGeer 1990; Coleman, Chatterjee & Ruina 1997): energy gained per step
(4 g / l) sin(alpha) sin(gamma) in u1^2 balances the impact loss, so the speed just after
each impact is

    u1* = cos(2 alpha) sqrt( 4 (g / l) sin(alpha) sin(gamma) / (1 - cos^2(2 alpha)) ).
"""

from __future__ import annotations

import copy
import math

import sympy as sm
from sympy.physics.mechanics import Particle
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..analysis.events import Event
from ..compat.sympy import TIME
from .base import Drawing, KaneSystem, Model, point_coordinates

__all__ = ["rimless_wheel", "rimless_wheel_system", "steady_speed"]

t = TIME

DESCRIPTION = "rimless wheel rolling down a slope: pendulum + spoke impacts (events), 1 dof"
REFERENCES = ("McGeer, Passive dynamic walking, Int. J. Robotics Research 9(2), 1990; Coleman, "
              "Chatterjee & Ruina, Motions of a rimless spoked wheel, Dynamics and Stability of "
              "Systems 12(3), 1997.  Defaults chosen here: m=1 kg, l=1 m, g=9.81, 8 spokes "
              "(alpha=pi/8), gamma=0.2 rad; q1=gamma-alpha, u1=1.5 rad/s.")


def steady_speed(g: float, l: float, alpha: float, gamma: float) -> float:
    """The closed-form steady rolling speed u1* just after each impact (module docstring)."""
    c = math.cos(2 * alpha)
    return c * math.sqrt(4 * (g / l) * math.sin(alpha) * math.sin(gamma) / (1 - c * c))


def rimless_wheel_system() -> tuple[KaneSystem, dict]:
    """Kinematics of the stance phase; returns (KaneSystem, extras)."""
    q1 = dynamicsymbols("q1")
    u1 = dynamicsymbols("u1")
    m, l, g, alpha, gamma = sm.symbols("m, l, g, alpha, gamma")
    N = ReferenceFrame("N")
    S = ReferenceFrame("S")                     # along the stance spoke: S.y from foot to hub
    S.orient_axis(N, -q1, N.z)
    S.set_ang_vel(N, -u1 * N.z)
    C, H = Point("C"), Point("H")
    C.set_vel(N, 0)
    H.set_pos(C, l * S.y)
    H.v2pt_theory(C, N, S)
    hub = Particle("hub", H, m)
    system = KaneSystem(frame=N, q_ind=[q1], u_ind=[u1], kd_eqs=[q1.diff(t) - u1], bodies=[hub],
                        loads=[(H, -m * g * N.y)])
    # drawing: the stance spoke and the next one (2 alpha ahead), in the inertial frame
    F = ReferenceFrame("F")
    F.orient_axis(S, -2 * alpha, N.z)
    nxt = Point("next")
    nxt.set_pos(H, -l * F.y)
    points = {"contact": point_coordinates(C, C, N), "hub": point_coordinates(H, C, N),
              "next_foot": point_coordinates(nxt, C, N)}
    kinetic = hub.kinetic_energy(N)
    potential = m * g * H.pos_from(C).dot(N.y)
    return system, {"q": q1, "u": u1, "symbols": {"m": m, "l": l, "g": g, "alpha": alpha,
                                                  "gamma": gamma},
                    "points": points, "kinetic": kinetic, "potential": potential}


def rimless_wheel(spokes: int = 8, gamma: float = 0.2) -> Model:
    """The rimless wheel with ``spokes`` spokes on a slope ``gamma`` (rad); see the module docstring.

    ``model.events`` holds the spoke impact (condition q1 - gamma - alpha, rising, with the
    impact map as its action).
    """
    if int(spokes) != spokes or spokes < 3:
        raise ValueError(f"a rimless wheel needs at least 3 spokes, got {spokes}")
    system, ex = rimless_wheel_system()
    km, eom = system.form(name="rimless-wheel")
    s = ex["symbols"]
    # the impact event needs alpha and gamma, which the stance dynamics do not contain
    eom = copy.copy(eom)
    object.__setattr__(eom, "constants", tuple(eom.constants) + (s["alpha"], s["gamma"]))
    q1, u1 = ex["q"], ex["u"]
    alpha_value = math.pi / int(spokes)
    constants = {s["m"]: 1.0, s["l"]: 1.0, s["g"]: 9.81, s["alpha"]: alpha_value, s["gamma"]: float(gamma)}
    alpha, gam = s["alpha"], s["gamma"]
    impact = Event(q1 - gam - alpha, name="spoke impact", direction=1,
                   action={q1: q1 - 2 * alpha, u1: sm.cos(2 * alpha) * u1})

    def initial_state(values: dict) -> dict:
        return {q1: values[gam] - values[alpha], u1: 1.5}

    drawing = Drawing(points=ex["points"], lines=[["contact", "hub", "next_foot"]], traces=("hub",),
                      view="2d")
    return Model.create(
        name="rimless-wheel", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 10.0), drawing=drawing,
        energy=ex["kinetic"].xreplace(eom.kindiffdict) + ex["potential"],
        outputs={"hub_height": ex["points"]["hub"][1]}, references=REFERENCES,
        events=(impact,))
