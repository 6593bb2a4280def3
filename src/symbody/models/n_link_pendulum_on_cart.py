"""n-link pendulum on a cart (PyDy's n_link_pendulum_on_cart example).

The cart, a particle of mass m0 at P0 = q0 N.x, slides on N.x; n massless
links of lengths l0..l_{n-1} hang from it with absolute angles q1..qn about N.z
(link i points along B_i.x, B_i = N rotated by q_i), carrying particles of
mass m1..mn at their ends P1..Pn.  Gravity -g N.y; u = q'.  With
``force=True`` a specified force F(t) N.x acts on the cart (energy is then
not conserved and is reported as None).  Upright equilibrium: q_i = pi/2.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import Particle
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..errors import InputError
from ..scene import Box, Scene, Segment, Sphere, VisualizationFrame
from .base import Drawing, KaneSystem, Model

__all__ = ["n_link_pendulum_on_cart", "n_link_pendulum_on_cart_system"]

t = TIME

DESCRIPTION = "n-link pendulum on a sliding cart (option n, default 3; force=True adds F(t))"
REFERENCES = ("PyDy example n_link_pendulum_on_cart (Moore et al.): links of length 1/n m, "
              "bob and cart masses 0.01/n kg, g=9.81; here started 5 deg (and -5, 5, ...) "
              "off the upright equilibrium q_i = 90 deg.")


def n_link_pendulum_on_cart_system(n: int = 3, force: bool = False) -> tuple[KaneSystem, dict]:
    """Kinematics, particles and loads for n links; returns (KaneSystem, extras)."""
    n = _check_n(n)
    q = dynamicsymbols(f"q:{n + 1}")
    u = dynamicsymbols(f"u:{n + 1}")
    m = sm.symbols(f"m:{n + 1}")
    l = sm.symbols(f"l:{n}")
    g = sm.Symbol("g")
    F = dynamicsymbols("F")

    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    P0 = Point("P0")
    P0.set_pos(O, q[0] * N.x)
    P0.set_vel(N, u[0] * N.x)
    points = [P0]
    particles = [Particle("Pa0", P0, m[0])]
    cart_force = -m[0] * g * N.y + (F * N.x if force else 0 * N.x)
    loads = [(P0, cart_force)]
    kd = [q[0].diff(t) - u[0]]
    for i in range(n):
        Bi = ReferenceFrame(f"B{i}")
        Bi.orient_axis(N, q[i + 1], N.z)
        Bi.set_ang_vel(N, u[i + 1] * N.z)
        Pi = points[-1].locatenew(f"P{i + 1}", l[i] * Bi.x)
        Pi.v2pt_theory(points[-1], N, Bi)
        points.append(Pi)
        particles.append(Particle(f"Pa{i + 1}", Pi, m[i + 1]))
        loads.append((Pi, -m[i + 1] * g * N.y))
        kd.append(q[i + 1].diff(t) - u[i + 1])
    system = KaneSystem(frame=N, q_ind=list(q), u_ind=list(u), kd_eqs=kd, bodies=particles, loads=loads)

    half = sum(l) / (2 * n) if n else sm.Rational(1, 4)
    # Positions, energies: written out in N's components as running sums over the links
    # (x_i = q0 + sum_{j<i} l_j cos q_{j+1}, v_i likewise).  The same quantities through
    # Vector.dot / Particle.kinetic_energy cost 18 s at n = 20 and 137 s at n = 40,
    # since every dot product re-expresses all link frames in N.
    x, y = [q[0]], [sm.S.Zero]
    vx, vy = [u[0]], [sm.S.Zero]
    for i in range(n):
        c, s = sm.cos(q[i + 1]), sm.sin(q[i + 1])
        x.append(x[-1] + l[i] * c)
        y.append(y[-1] + l[i] * s)
        vx.append(vx[-1] - l[i] * u[i + 1] * s)
        vy.append(vy[-1] + l[i] * u[i + 1] * c)
    drawn = {f"P{i}": sm.Matrix([x[i], y[i], 0]) for i in range(n + 1)}
    drawn["cart_left"] = sm.Matrix([q[0] - half, 0, 0])
    drawn["cart_right"] = sm.Matrix([q[0] + half, 0, 0])
    kinetic = sum((m[i] * (vx[i] ** 2 + vy[i] ** 2) / 2 for i in range(n + 1)), sm.S.Zero)
    potential = g * sum((m[i] * y[i] for i in range(n + 1)), sm.S.Zero)
    extras = {"q": q, "u": u, "m": m, "l": l, "g": g, "F": F, "points": drawn,
              "kinetic": kinetic, "potential": potential}
    return system, extras


def _check_n(n) -> int:
    try:
        value = int(n)
    except (TypeError, ValueError) as exc:
        raise InputError(f"n (the number of links) must be a positive integer, got {n!r}") from exc
    if value != n or value < 1:
        raise InputError(f"n (the number of links) must be a positive integer, got {n!r}")
    return value


def n_link_pendulum_on_cart(n: int = 3, force: bool = False) -> Model:
    """The n-link pendulum on a cart; ``force=True`` adds the specified cart force F(t)."""
    n = _check_n(n)
    system, ex = n_link_pendulum_on_cart_system(n, force)
    name = "n-link-pendulum-on-cart"
    km, eom = system.form(name=f"{name} (n={n})")
    q, u = ex["q"], ex["u"]
    constants = {ex["g"]: 9.81}
    for mi in ex["m"]:
        constants[mi] = 0.01 / n
    for li in ex["l"]:
        constants[li] = 1.0 / n
    initial = {q[0]: 0.0, u[0]: 0.0}
    for i in range(1, n + 1):
        initial[q[i]] = math.pi / 2 + (-1) ** (i + 1) * math.radians(5.0)
        initial[u[i]] = 0.0

    def upright(op_parameters: dict, values: dict) -> dict:
        state = {q[0]: float(op_parameters.get("x", 0.0)), u[0]: 0.0}
        for i in range(1, n + 1):
            state[q[i]] = math.pi / 2
            state[u[i]] = 0.0
        return state

    kinetic, potential = ex["kinetic"], ex["potential"]
    drawing = Drawing(points=ex["points"],
                      lines=[["cart_left", "cart_right"], [f"P{i}" for i in range(n + 1)]],
                      traces=(f"P{n}",), view="2d")
    total = sum(ex["l"])
    scene = Scene(
        ReferenceFrame("N"), None,
        VisualizationFrame("cart", None, "P0", Box(total / 3, total / 10, total / 6, color="#8c564b")),
        Segment("rail", "cart_left", "cart_right", radius=total / 100, color="#555555"),
        *(Segment(f"link {i + 1}", f"P{i}", f"P{i + 1}", radius=total / 120, color="#1f77b4")
          for i in range(n)),
        *(VisualizationFrame(f"bob {i}", None, f"P{i}", Sphere(total / 40, color="#d62728"))
          for i in range(1, n + 1)),
        points=ex["points"], traces=(f"P{n}",), up="y", name=name)
    return Model.create(
        name=name, description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=initial, t_span=(0.0, 10.0), drawing=drawing,
        energy=None if force else kinetic + potential,
        outputs={"kinetic_energy": kinetic, "potential_energy": potential,
                 "tip_height": ex["points"][f"P{n}"][1]},
        op_parameters={}, operating_point_rule=upright, references=REFERENCES, scene=scene)
