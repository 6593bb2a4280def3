"""Benchmark systems built with sympy.physics.vector kinematics (shared by the benchmarks).

The n-link pendulum on a cart follows PyDy's ``n_link_pendulum_on_cart`` example:
a cart on N.x, n links with absolute angles about N.z, particles at the link
ends, gravity along -N.y and a specified force on the cart.
The rod chain (``rod_chain_lagrangian``): n uniform rods with relative angles and damped
joints, as a Lagrangian (tests/formulation/test_lagrange.py, benchmarks/bench_lagrange.py).
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me


def n_link_pendulum_on_cart(n: int, *, specified: bool = True):
    """Return (N, q, u, kd, bodies, loads, constants) for the n-link pendulum on a cart."""
    q = me.dynamicsymbols(f"q:{n + 1}")
    u = me.dynamicsymbols(f"u:{n + 1}")
    f = me.dynamicsymbols("f")
    m = sm.symbols(f"m:{n + 1}")
    l = sm.symbols(f"l:{n}")
    g, t = sm.symbols("g t")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P0 = me.Point("P0")
    P0.set_pos(O, q[0] * N.x)
    P0.set_vel(N, u[0] * N.x)
    Pa0 = me.Particle("Pa0", P0, m[0])
    frames, points, particles = [N], [P0], [Pa0]
    forces = [(P0, (f if specified else 0) * N.x - m[0] * g * N.y)]
    kd = [q[0].diff() - u[0]]
    for i in range(n):
        Bi = N.orientnew(f"B{i}", "Axis", [q[i + 1], N.z])
        Bi.set_ang_vel(N, u[i + 1] * N.z)
        frames.append(Bi)
        Pi = points[-1].locatenew(f"P{i + 1}", l[i] * Bi.x)
        Pi.v2pt_theory(points[-1], N, Bi)
        points.append(Pi)
        particles.append(me.Particle(f"Pa{i + 1}", Pi, m[i + 1]))
        forces.append((Pi, -m[i + 1] * g * N.y))
        kd.append(q[i + 1].diff() - u[i + 1])
    return N, list(q), list(u), kd, particles, forces, list(m) + list(l) + [g]


def whipple_bicycle_sympy_test_kane3():
    """The Whipple bicycle of SymPy's test_kane3 (Moore's formulation), kinematics only.

    Returns (N, q_ind, q_dep, u_ind, u_dep, kd, conlist_coord, conlist_speed, bodies, loads).
    """
    mu = sm.symbols  # noqa: F841  (kept short; see sympy/physics/mechanics/tests/test_kane3.py)
    q1, q2, q3, q4, q5 = me.dynamicsymbols("q1 q2 q3 q4 q5")
    q1d, q2d, q4d, q5d = me.dynamicsymbols("q1 q2 q4 q5", 1)
    u1, u2, u3, u4, u5, u6 = me.dynamicsymbols("u1 u2 u3 u4 u5 u6")
    u1d, u2d, u3d, u4d, u5d, u6d = me.dynamicsymbols("u1 u2 u3 u4 u5 u6", 1)
    WFrad, WRrad, htangle, forkoffset = sm.symbols("WFrad WRrad htangle forkoffset")
    forklength, framelength, forkcg1 = sm.symbols("forklength framelength forkcg1")
    forkcg3, framecg1, framecg3, Iwr11 = sm.symbols("forkcg3 framecg1 framecg3 Iwr11")
    Iwr22, Iwf11, Iwf22, Iframe11 = sm.symbols("Iwr22 Iwf11 Iwf22 Iframe11")
    Iframe22, Iframe33, Iframe31, Ifork11 = sm.symbols("Iframe22 Iframe33 Iframe31 Ifork11")
    Ifork22, Ifork33, Ifork31, g = sm.symbols("Ifork22 Ifork33 Ifork31 g")
    mframe, mfork, mwf, mwr = sm.symbols("mframe mfork mwf mwr")

    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    R = Y.orientnew("R", "Axis", [q2, Y.x])
    Frame = R.orientnew("Frame", "Axis", [q4 + htangle, R.y])
    WR = me.ReferenceFrame("WR")
    TempFrame = Frame.orientnew("TempFrame", "Axis", [-htangle, Frame.y])
    Fork = Frame.orientnew("Fork", "Axis", [q5, Frame.x])
    TempFork = Fork.orientnew("TempFork", "Axis", [-htangle, Fork.y])
    WF = me.ReferenceFrame("WF")

    WR_cont = me.Point("WR_cont")
    WR_mc = WR_cont.locatenew("WR_mc", WRrad * R.z)
    Steer = WR_mc.locatenew("Steer", framelength * Frame.z)
    Frame_mc = WR_mc.locatenew("Frame_mc", -framecg1 * Frame.x + framecg3 * Frame.z)
    Fork_mc = Steer.locatenew("Fork_mc", -forkcg1 * Fork.x + forkcg3 * Fork.z)
    WF_mc = Steer.locatenew("WF_mc", forklength * Fork.x + forkoffset * Fork.z)
    WF_cont = WF_mc.locatenew("WF_cont", WFrad * (me.dot(Fork.y, Y.z) * Fork.y - Y.z).normalize())

    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    WR.set_ang_vel(Frame, u3 * Frame.y)
    Frame.set_ang_vel(R, u4 * Frame.y)
    Fork.set_ang_vel(Frame, u5 * Fork.x)
    WF.set_ang_vel(Fork, u6 * Fork.y)

    WR_cont.set_vel(N, 0)
    WR_mc.v2pt_theory(WR_cont, N, WR)
    Steer.v2pt_theory(WR_mc, N, Frame)
    Frame_mc.v2pt_theory(WR_mc, N, Frame)
    Fork_mc.v2pt_theory(Steer, N, Fork)
    WF_mc.v2pt_theory(Steer, N, Fork)
    WF_cont.v2pt_theory(WF_mc, N, WF)

    Frame_I = (me.inertia(TempFrame, Iframe11, Iframe22, Iframe33, 0, 0, Iframe31), Frame_mc)
    Fork_I = (me.inertia(TempFork, Ifork11, Ifork22, Ifork33, 0, 0, Ifork31), Fork_mc)
    WR_I = (me.inertia(Frame, Iwr11, Iwr22, Iwr11), WR_mc)
    WF_I = (me.inertia(Fork, Iwf11, Iwf22, Iwf11), WF_mc)
    BodyFrame = me.RigidBody("BodyFrame", Frame_mc, Frame, mframe, Frame_I)
    BodyFork = me.RigidBody("BodyFork", Fork_mc, Fork, mfork, Fork_I)
    BodyWR = me.RigidBody("BodyWR", WR_mc, WR, mwr, WR_I)
    BodyWF = me.RigidBody("BodyWF", WF_mc, WF, mwf, WF_I)

    kd = [q1d - u1, q2d - u2, q4d - u4, q5d - u5]
    conlist_speed = [WF_cont.vel(N) & Y.x, WF_cont.vel(N) & Y.y, WF_cont.vel(N) & Y.z]
    conlist_coord = [WF_cont.pos_from(WR_cont) & Y.z]
    FL = [(Frame_mc, -mframe * g * Y.z), (Fork_mc, -mfork * g * Y.z),
          (WF_mc, -mwf * g * Y.z), (WR_mc, -mwr * g * Y.z)]
    BL = [BodyFrame, BodyFork, BodyWR, BodyWF]
    return dict(N=N, q_ind=[q1, q2, q5], q_dep=[q4], u_ind=[u2, u3, u5], u_dep=[u1, u4, u6],
                kd=kd, conlist_coord=conlist_coord, conlist_speed=conlist_speed, bodies=BL, loads=FL)


def pydy_cython_rhs(M, F, q, u, constants):
    """PyDy's Cython right-hand side f(x, t, p) of ``M u' = F`` (q' = u), built in a temporary
    directory; returns (f, build seconds).  The anchor the benchmarks compare against."""
    import os
    import tempfile
    import time

    from pydy.codegen.ode_function_generators import generate_ode_function

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            f = generate_ode_function(F, q, u, constants, mass_matrix=M,
                                      coordinate_derivatives=sm.Matrix(u), generator="cython")
        finally:
            os.chdir(cwd)
        return f, time.perf_counter() - t0


def rod_chain_lagrangian(n: int):
    """(L, q, kwargs) of an n-link pendulum of uniform rods with relative angles and damped
    joints, for ``LagrangesMethod(L, q, **kwargs)`` (gravity along N.x)."""
    q = me.dynamicsymbols(f"q1:{n + 1}")
    qd = [s.diff(me.dynamicsymbols._t) for s in q]
    m = sm.symbols(f"m1:{n + 1}")
    ls = sm.symbols(f"l1:{n + 1}")
    g, c = sm.symbols("g c")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    bodies, loads = [], []
    prevF, prevP = N, O
    for i in range(n):
        A = prevF.orientnew(f"A{i}", "Axis", [q[i], prevF.z])
        A.set_ang_vel(prevF, qd[i] * prevF.z)
        P = prevP.locatenew(f"P{i}", ls[i] * A.x)
        P.v2pt_theory(prevP, N, A)
        G = prevP.locatenew(f"G{i}", ls[i] / 2 * A.x)
        G.v2pt_theory(prevP, N, A)
        b = me.RigidBody(f"B{i}", G, A, m[i],
                         (me.inertia(A, 0, m[i] * ls[i]**2 / 12, m[i] * ls[i]**2 / 12), G))
        b.potential_energy = -m[i] * g * G.pos_from(O).dot(N.x)
        bodies.append(b)
        loads.append((A, -c * qd[i] * A.z))
        prevF, prevP = A, P
    return me.Lagrangian(N, *bodies), list(q), dict(forcelist=loads, bodies=bodies, frame=N)
