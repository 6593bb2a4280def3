"""IFToMM benchmark A03: Andrews' squeezer mechanism (7 bodies, 7 angles, 6 loop equations).

The planar seven-body mechanism of Hairer & Wanner (Solving ODEs II, section VII.7) in their
coordinates: beta (body 1 about O), Theta (body 2 relative to body 1), gamma (body 3 about
B), Phi (body 4 relative to body 5), delta (body 5 about A), Omega (body 6 relative to
body 7), epsilon (body 7 about A); absolute angles beta + Theta, Phi + delta, Omega + epsilon
for the bodies 2, 4, 6.  With e_a = (cos a, sin a):

    F = rr e_beta,  E = F - d e_(beta+Theta)                 (bodies 1, 2)
    E = B + ss (sin gamma, -cos gamma)                        (body 3)
    E = A + zt e_delta + e (sin(Phi+delta), -cos(Phi+delta))  (bodies 5, 4)
    E = A + u (sin eps, -cos eps) + zf e_(Omega+eps)          (bodies 7, 6)

give the six loop equations g = 0 of Hairer's (7.11) (the body-2 end against the other
three).  A constant torque mom drives body 1; a spring (stiffness c0, rest length l0) pulls
D = B + sd e_gamma + sc (sin gamma, -cos gamma) on body 3 toward the fixed point C.  No
gravity.  beta is independent; Theta, gamma, Phi, delta, Omega, epsilon dependent.  The
classical problem runs 0.03 s from rest (the initial angles of Hairer & Wanner).
"""

from __future__ import annotations

import sympy as sm
from sympy.physics.mechanics import RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from .base import Drawing, KaneSystem, Model, energy_fields, point_coordinates, rotated_frame

__all__ = ["andrews_squeezer", "andrews_squeezer_system", "INITIAL_ANGLES"]

t = TIME

DESCRIPTION = "IFToMM benchmark A03: Andrews' squeezer, 7 bodies, 1 dof, 6 loop equations"
REFERENCES = ("IFToMM multibody benchmark library, problem A03 "
              "(http://lim.ii.udc.es/mbsbenchmark/dist/A03/A03_specification.xml); data and "
              "initial state of Hairer & Wanner, Solving ODEs II, VII.7 (also the Test Set for IVP "
              "solvers, Mazzia & Magherini, problem 'andrews'): 0.03 s from rest.")

#: consistent initial angles (Hairer & Wanner; Test Set for IVP solvers)
INITIAL_ANGLES = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
                  0.222668390165885884674473185609, 0.487364979543842550225598953530,
                  -0.222668390165885884674473185609, 1.23054744454982119249735015568)

_VALUES = {"m1": .04325, "m2": .00365, "m3": .02373, "m4": .00706, "m5": .07050, "m6": .00706,
           "m7": .05498, "I1": 2.194e-6, "I2": 4.410e-7, "I3": 5.255e-6, "I4": 5.667e-7,
           "I5": 1.169e-5, "I6": 5.667e-7, "I7": 1.912e-5, "xa": -.06934, "ya": -.00227,
           "xb": -.03635, "yb": .03273, "xc": .014, "yc": .072, "d": 28e-3, "da": 115e-4,
           "e": 2e-2, "ea": 1421e-5, "rr": 7e-3, "ra": 92e-5, "l0": 7785e-5, "ss": 35e-3,
           "sa": 1874e-5, "sb": 1043e-5, "sc": 18e-3, "sd": 2e-2, "ta": 2308e-5, "tb": 916e-5,
           "u": 4e-2, "ua": 1228e-5, "ub": 449e-5, "zf": 2e-2, "zt": 4e-2, "fa": 1421e-5,
           "mom": 33e-3, "c0": 4530.0}


def andrews_squeezer_system() -> tuple[KaneSystem, dict]:
    """Kinematics, bodies and loads of the squeezer; returns (KaneSystem, extras dict)."""
    names = ["beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"]
    q = dynamicsymbols(", ".join(names))
    u = dynamicsymbols(", ".join(f"u_{n}" for n in names))
    beta, Theta, gamma, Phi, delta, Omega, eps = q
    c = {k: sm.Symbol(k) for k in _VALUES}
    N = ReferenceFrame("N")
    B1 = rotated_frame("B1", N, beta)
    B2 = rotated_frame("B2", B1, Theta)
    B3 = rotated_frame("B3", N, gamma)
    B5 = rotated_frame("B5", N, delta)
    B4 = rotated_frame("B4", B5, Phi)
    B7 = rotated_frame("B7", N, eps)
    B6 = rotated_frame("B6", B7, Omega)
    O = Point("O")
    O.set_vel(N, 0)

    def fixed(name, x, y):
        P = O.locatenew(name, x * N.x + y * N.y)
        P.set_vel(N, 0)
        return P

    def on(name, base, offset, frame):
        P = base.locatenew(name, offset)
        P.v2pt_theory(base, N, frame)
        return P

    A, B, C = fixed("A", c["xa"], c["ya"]), fixed("B", c["xb"], c["yb"]), fixed("C", c["xc"], c["yc"])
    F = on("F", O, c["rr"] * B1.x, B1)
    c1 = on("c1", O, c["ra"] * B1.x, B1)
    c2 = on("c2", F, -c["da"] * B2.x, B2)
    E2 = on("E", F, -c["d"] * B2.x, B2)
    E3 = on("E3", B, -c["ss"] * B3.y, B3)
    c3 = on("c3", B, c["sb"] * B3.x - c["sa"] * B3.y, B3)
    D = on("D", B, c["sd"] * B3.x - c["sc"] * B3.y, B3)
    G = on("G", A, c["zt"] * B5.x, B5)
    E4 = on("E4", G, -c["e"] * B4.y, B4)
    c4 = on("c4", G, -(c["e"] - c["ea"]) * B4.y, B4)
    c5 = on("c5", A, c["ta"] * B5.x + c["tb"] * B5.y, B5)
    K = on("K", A, -c["u"] * B7.y, B7)
    E6 = on("E6", K, c["zf"] * B6.x, B6)
    c6 = on("c6", K, (c["zf"] - c["fa"]) * B6.x, B6)
    c7 = on("c7", A, c["ua"] * B7.x + c["ub"] * B7.y, B7)
    fh = []
    for other in (E3, E4, E6):
        gap = E2.pos_from(other)
        fh += [gap.dot(N.x), gap.dot(N.y)]
    qd_u = {qi.diff(t): ui for qi, ui in zip(q, u, strict=True)}
    fhd = [sm.diff(e, t).xreplace(qd_u) for e in fh]
    kd = [qi.diff(t) - ui for qi, ui in zip(q, u, strict=True)]
    frames = [B1, B2, B3, B4, B5, B6, B7]
    centres = [c1, c2, c3, c4, c5, c6, c7]
    bodies = [RigidBody(f"body{k + 1}", P, Fr, c[f"m{k + 1}"],
                        (inertia(Fr, 0, 0, c[f"I{k + 1}"]), P))
              for k, (P, Fr) in enumerate(zip(centres, frames, strict=True))]
    spring = D.pos_from(C)
    length = sm.sqrt(spring.dot(spring))
    loads = [(B1, c["mom"] * N.z), (D, -c["c0"] * (length - c["l0"]) / length * spring)]
    system = KaneSystem(frame=N, q_ind=[beta], u_ind=[u[0]], kd_eqs=kd, bodies=bodies, loads=loads,
                        q_dep=list(q[1:]), configuration_constraints=fh, u_dep=list(u[1:]),
                        velocity_constraints=fhd)
    pts = {name: point_coordinates(P, O, N) for name, P in
           (("O", O), ("A", A), ("B", B), ("C", C), ("F", F), ("E", E2), ("D", D), ("G", G), ("K", K))}
    kinetic = sum(b.kinetic_energy(N) for b in bodies).xreplace(qd_u)
    # the driving torque's and the spring's potential: V = -mom beta + c0/2 (L - l0)^2
    potential = -c["mom"] * beta + c["c0"] / 2 * (length - c["l0"]) ** 2
    return system, {"symbols": c, "q": q, "u": u, "points": pts, "kinetic": kinetic,
                    "potential": potential, "holonomic": fh}


def andrews_squeezer() -> Model:
    """Andrews' squeezer (see the module docstring)."""
    system, ex = andrews_squeezer_system()
    km, eom = system.form(name="andrews-squeezer")
    constants = {ex["symbols"][k]: v for k, v in _VALUES.items()}
    state = dict(zip(ex["q"], INITIAL_ANGLES, strict=True))
    state[ex["u"][0]] = 0.0
    drawing = Drawing(points=ex["points"], lines=[["O", "F", "E"], ["B", "E"], ["A", "G", "E"],
                                                  ["A", "K", "E"], ["C", "D", "B"]],
                      traces=("E",), view="2d")
    return Model.create(
        name="andrews-squeezer", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=state, t_span=(0.0, 0.03), drawing=drawing,
        **energy_fields(ex["kinetic"], ex["potential"]), references=REFERENCES)
