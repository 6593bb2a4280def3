"""The N-four-bar mechanism of the IFToMM multibody benchmark library (problem A02).

N four-bar loops side by side: N + 1 rockers hinged to the ground at x = 0, d, ..., N d
(absolute angles θ_0 .. θ_N from the x axis) and N couplers (absolute angles φ_1 .. φ_N),
coupler i joining the tips of rockers i - 1 and i.  All 2N + 1 links are uniform thin
rods of length L and mass m; gravity -g y.  Loop i closes by

    L cos θ_{i-1} + L cos φ_i - L cos θ_i - d = 0,   L sin θ_{i-1} + L sin φ_i - L sin θ_i = 0,

2N equations in 2N + 1 coordinates: one degree of freedom (θ_0 independent).  With L = d
the loops are parallelograms: all rockers turn together and the couplers stay horizontal.
Where the rockers lie flat (θ = 0 or π) every link is on the x axis and ∂f_h/∂q loses rank
by N: a bifurcation point at which the motion may continue on the parallelogram branch or
fold.  Kinematics q' = u.

Benchmark data (A02, lim.ii.udc.es/mbsbenchmark/dist/A02/A02_specification.xml): N = 40,
L = d = 1 m, m = 1 kg, g = 9.81 m/s²; the rockers start vertical (θ = π/2, φ = 0) and the
tip B0 of the first rocker moves at 1 m/s along +x; 20 s; output: B0's position.

On the parallelogram branch the motion reduces exactly to one rocker angle θ(t)
(:func:`parallelogram_reduction`):

    I θ'' = -g m L ((N + 1)/2 + N) cos θ,   I = (N + 1) m L²/3 + N m L²,

from V(θ) = g m L sin θ ((N + 1)/2 + N) and T = ½ I θ'².
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sm
from sympy.physics.mechanics import RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..errors import InputError
from .base import Drawing, KaneSystem, Model, energy_fields, point_coordinates, rotated_frame

__all__ = ["n_four_bar", "n_four_bar_system", "parallelogram_reduction"]

t = TIME

DESCRIPTION = "IFToMM benchmark A02: N-four-bar (option n, default 40), 1 dof, flat positions"
REFERENCES = ("IFToMM Technical Committee for Multibody Dynamics, Library of Computational "
              "Benchmark Problems, problem A02 'N four-bar mechanism' "
              "(lim.ii.udc.es/mbsbenchmark/dist/A02/A02_specification.xml): N = 40, links 1 m, 1 kg, "
              "g = 9.81, B0 x-velocity 1 m/s, 20 s, precision 1e-1 / 1e-3 m on B0 at 400 outputs.")


def n_four_bar_system(n: int) -> tuple[KaneSystem, dict]:
    """Kinematics and loads of the N-four-bar with ``n`` loops; returns (KaneSystem, extras)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InputError(f"n must be a positive integer (the number of loops), got {n!r}")
    th = dynamicsymbols(f"theta0:{n + 1}")
    ph = [None] + list(dynamicsymbols(f"phi1:{n + 1}"))
    wt = dynamicsymbols(f"w0:{n + 1}")           # rocker rates θ_i'
    wp = [None] + list(dynamicsymbols(f"v1:{n + 1}"))   # coupler rates φ_i'
    L, d, m, g = sm.symbols("L, d, m, g")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    I_rod = inertia(N, 0, 0, m * L**2 / 12)      # about the centre, z axis (planar)
    bodies, loads, tips, points = [], [], [], {}
    potential = sm.S.Zero
    for i in range(n + 1):
        R = rotated_frame(f"R{i}", N, th[i])
        R.set_ang_vel(N, wt[i] * N.z)
        P = O.locatenew(f"P{i}", i * d * N.x)
        P.set_vel(N, 0)
        G = P.locatenew(f"G{i}", L / 2 * R.x)
        G.v2pt_theory(P, N, R)
        B = P.locatenew(f"B{i}", L * R.x)
        B.v2pt_theory(P, N, R)
        tips.append(B)
        bodies.append(RigidBody(f"rocker{i}", G, R, m, (I_rod, G)))
        loads.append((G, -m * g * N.y))
        potential += m * g * G.pos_from(O).dot(N.y)
        points[f"P{i}"] = point_coordinates(P, O, N)
        points[f"B{i}"] = point_coordinates(B, O, N)
    fh = []
    for i in range(1, n + 1):
        C = rotated_frame(f"C{i}", N, ph[i])
        C.set_ang_vel(N, wp[i] * N.z)
        G = tips[i - 1].locatenew(f"H{i}", L / 2 * C.x)
        G.v2pt_theory(tips[i - 1], N, C)
        bodies.append(RigidBody(f"coupler{i}", G, C, m, (I_rod, G)))
        loads.append((G, -m * g * N.y))
        potential += m * g * G.pos_from(O).dot(N.y)
        gap = tips[i - 1].pos_from(O) + L * C.x - tips[i].pos_from(O)
        fh += [gap.dot(N.x), gap.dot(N.y)]
    q = [th[0], *th[1:], *ph[1:]]
    u = [wt[0], *wt[1:], *wp[1:]]
    qd_u = {qi.diff(t): ui for qi, ui in zip(q, u)}
    kd = [qi.diff(t) - ui for qi, ui in zip(q, u)]
    fhd = [sm.diff(e, t).xreplace(qd_u) for e in fh]
    system = KaneSystem(frame=N, q_ind=[q[0]], u_ind=[u[0]], kd_eqs=kd, bodies=bodies, loads=loads,
                        q_dep=q[1:], configuration_constraints=fh, u_dep=u[1:], velocity_constraints=fhd)
    kinetic = sum(b.kinetic_energy(N) for b in bodies)
    extras = {"symbols": {"L": L, "d": d, "m": m, "g": g}, "q": q, "u": u, "theta": th,
              "phi": ph[1:], "points": points, "kinetic": kinetic, "potential": potential,
              "holonomic": sm.Matrix(fh)}
    return system, extras


def n_four_bar(n: int = 40) -> Model:
    """The IFToMM A02 N-four-bar with ``n`` loops (benchmark: n = 40; see the module doc)."""
    system, ex = n_four_bar_system(n)
    km, eom = system.form(name=f"N-four-bar (n={n})")
    s = ex["symbols"]
    constants = {s["L"]: 1.0, s["d"]: 1.0, s["m"]: 1.0, s["g"]: 9.81}
    th, ph, u = ex["theta"], ex["phi"], ex["u"]

    def initial_state(values: dict) -> dict:
        L = values[s["L"]]
        if abs(values[s["d"]] - L) > 1e-12 * max(1.0, abs(L)):
            raise InputError("the benchmark's initial state (rockers vertical, couplers horizontal) "
                             "needs d = L; give another initial state for other lengths")
        state = {qi: math.pi / 2 for qi in th}
        state.update(dict.fromkeys(ph, 0.0))
        state[u[0]] = -1.0 / L           # B0 = L (cos θ0, sin θ0): x' = -L sin θ0 θ0' = 1 m/s
        return state

    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    drawing = Drawing(points=ex["points"],
                      lines=[[f"P{i}", f"B{i}"] for i in range(n + 1)]
                      + [[f"B{i}" for i in range(n + 1)]],
                      traces=("B0",), view="2d")
    return Model.create(
        name="n-four-bar", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 20.0), drawing=drawing,
        **energy_fields(kinetic, ex["potential"], B0_x=ex["points"]["B0"][0],
                        B0_y=ex["points"]["B0"][1]),
        references=REFERENCES)


def parallelogram_reduction(n: int, t: np.ndarray, theta0: float = math.pi / 2, rate0: float = -1.0,
                            L: float = 1.0, m: float = 1.0, g: float = 9.81, rtol: float = 1e-12,
                            atol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """The exact motion on the parallelogram branch: (θ(t), θ'(t)) at the times ``t`` (k,).

    All rockers turn by one angle θ and the couplers translate, so with thin rods
    T = ½ I θ'², I = (n + 1) m L²/3 + n m L², and V = g m L sin θ ((n + 1)/2 + n):
    θ'' = -g m L ((n + 1)/2 + n) cos θ / I, integrated by scipy's DOP853 at ``rtol``, ``atol``.
    """
    from scipy.integrate import solve_ivp

    inertia_ = (n + 1) * m * L**2 / 3 + n * m * L**2
    k = g * m * L * ((n + 1) / 2 + n) / inertia_
    t = np.asarray(t, dtype=float)
    sol = solve_ivp(lambda _t, y: [y[1], -k * math.cos(y[0])], (float(t[0]), float(t[-1])),
                    [theta0, rate0], method="DOP853", rtol=rtol, atol=atol, t_eval=t)
    return sol.y[0], sol.y[1]
