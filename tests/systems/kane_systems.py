"""Kinematics of the seed systems for the formulation tests.

Each builder takes ``mod`` (sympy.physics.mechanics or symbody: both provide
KanesMethod with the same API), forms the equations, and returns the method
object plus the symbols and numbers needed to evaluate it.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

t = me.dynamicsymbols._t


def four_bar(mod, **options):
    """Seed 001 four-bar: q1 independent, q2, q3 dependent; particles P2, P3 of mass m.
    ``options``: more keywords of KanesMethod (e.g. ``constraint_solver="CRAMER"``)."""
    q1, q2, q3 = me.dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = me.dynamicsymbols("u1, u2, u3")
    la, lb, lc, ln, m, g = sm.symbols("l_a, l_b, l_c, l_n, m, g")
    N, A, B, C = (me.ReferenceFrame(x) for x in "NABC")
    A.orient_axis(N, q1, N.z)
    B.orient_axis(A, q2, A.z)
    C.orient_axis(B, q3, B.z)
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(A, u2 * A.z)
    C.set_ang_vel(B, u3 * B.z)
    P1, P2, P3, P4 = (me.Point(f"P{i}") for i in range(1, 5))
    P2.set_pos(P1, la * A.x)
    P3.set_pos(P2, lb * B.x)
    P4.set_pos(P3, lc * C.x)
    P1.set_vel(N, 0)
    P2.v2pt_theory(P1, N, A)
    P3.v2pt_theory(P2, N, B)
    P4.v2pt_theory(P3, N, C)
    loop = P4.pos_from(P1) - ln * N.x
    fh = [loop.dot(N.x), loop.dot(N.y)]
    fhd = [P4.vel(N).dot(N.x), P4.vel(N).dot(N.y)]
    kd = [q1.diff(t) - u1, q2.diff(t) - u2, q3.diff(t) - u3]
    bodies = [me.Particle("p2", P2, m), me.Particle("p3", P3, m)]
    loads = [(P2, -m * g * N.y), (P3, -m * g * N.y)]
    km = mod.KanesMethod(N, [q1], [u1], kd, q_dependent=[q2, q3], configuration_constraints=fh,
                         u_dependent=[u2, u3], velocity_constraints=fhd, **options)
    km.kanes_equations(bodies, loads)
    consts = {la: 0.8, lb: 2.0, lc: 1.0, ln: 2.0, m: 1.0, g: 9.81}
    q0 = {q1: np.deg2rad(10.0), q2: np.deg2rad(6.57526576), q3: np.deg2rad(-151.3836336)}
    return km, dict(q=[q1, q2, q3], u=[u1, u2, u3], consts=consts, q0=q0, fh=sm.Matrix(fh),
                    energy=m * (P2.vel(N).dot(P2.vel(N)) + P3.vel(N).dot(P3.vel(N))) / 2
                    + m * g * (P2.pos_from(P1).dot(N.y) + P3.pos_from(P1).dot(N.y)))


def snakeboard(mod):
    """Seed 000 snakeboard: u1, u2 dependent, kinematic equation u3 = l q3'/2."""
    q1, q2, q3, q4, q5 = me.dynamicsymbols("q1, q2, q3, q4, q5")
    u1, u2, u3, u4, u5 = me.dynamicsymbols("u1, u2, u3, u4, u5")
    l, I, m = sm.symbols("l, I, m")
    N, A, B, C = (me.ReferenceFrame(x) for x in "NABC")
    A.orient_axis(N, q3, N.z)
    B.orient_axis(A, q4, A.z)
    C.orient_axis(A, q5, A.z)
    O, Ao, Bo, Co = (me.Point(x) for x in ("O", "A_o", "B_o", "C_o"))
    Ao.set_pos(O, q1 * N.x + q2 * N.y)
    Bo.set_pos(Ao, l / 2 * A.x)
    Co.set_pos(Ao, -l / 2 * A.x)
    O.set_vel(N, 0)
    Bo.v2pt_theory(Ao, N, A)
    Co.v2pt_theory(Ao, N, A)
    kd = [u1 - q1.diff(t), u2 - q2.diff(t), u3 - l * q3.diff(t) / 2, u4 - q4.diff(t), u5 - q5.diff(t)]
    fn = [Bo.vel(N).dot(B.y), Co.vel(N).dot(C.y)]
    bodies = [me.RigidBody("A", Ao, A, m, (I * me.outer(A.z, A.z), Ao)),
              me.RigidBody("B", Bo, B, m, (I * me.outer(B.z, B.z), Bo)),
              me.RigidBody("C", Co, C, m, (I * me.outer(C.z, C.z), Co))]
    km = mod.KanesMethod(N, [q1, q2, q3, q4, q5], [u3, u4, u5], kd, u_dependent=[u1, u2],
                         velocity_constraints=fn)
    km.kanes_equations(bodies, [])
    consts = {l: 0.7, I: 0.1, m: 1.0}
    q0 = {q1: 0.0, q2: 0.0, q3: 0.0, q4: np.deg2rad(5.0), q5: -np.deg2rad(5.0)}
    us0 = {u3: 0.1, u4: 0.01, u5: -0.01}
    return km, dict(q=[q1, q2, q3, q4, q5], u=[u3, u4, u5, u1, u2], consts=consts, q0=q0, us0=us0)


def double_rod_pendulum(mod):
    """Seed 002 double-rod pendulum with a sliding particle of mass m/4 (book_reference.json)."""
    m, g, kt, kl, l = sm.symbols("m, g, k_t, k_l, l")
    q1, q2, q3 = me.dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = me.dynamicsymbols("u1, u2, u3")
    N, A, B = (me.ReferenceFrame(x) for x in "NAB")
    A.orient_axis(N, q1, N.z)
    B.orient_axis(A, q2, A.x)
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(A, u2 * A.x)
    O, Ao, Bo, Q = (me.Point(x) for x in ("O", "A_O", "B_O", "Q"))
    Ao.set_pos(O, l / 2 * A.x)
    Bo.set_pos(O, l * A.x)
    Q.set_pos(Bo, q3 * B.y)
    O.set_vel(N, 0)
    Ao.v2pt_theory(O, N, A)
    Bo.v2pt_theory(O, N, A)
    Q.set_vel(B, u3 * B.y)
    Q.v1pt_theory(Bo, N, B)
    Iv = m * l**2 / 12
    bodies = [me.RigidBody("rodA", Ao, A, m, (Iv * me.outer(A.y, A.y) + Iv * me.outer(A.z, A.z), Ao)),
              me.RigidBody("rodB", Bo, B, m, (Iv * me.outer(B.x, B.x) + Iv * me.outer(B.z, B.z), Bo)),
              me.Particle("Q", Q, m / 4)]
    loads = [(Ao, m * g * N.x), (Bo, m * g * N.x + kl * q3 * B.y), (Q, m / 4 * g * N.x - kl * q3 * B.y),
             (A, -kt * q1 * N.z + kt * q2 * A.x), (B, -kt * q2 * A.x)]
    kd = [q1.diff(t) - u1, q2.diff(t) - u2, q3.diff(t) - u3]
    km = mod.KanesMethod(N, [q1, q2, q3], [u1, u2, u3], kd)
    km.kanes_equations(bodies, loads)
    consts = {g: 9.81, kl: 2.0, kt: 0.01, l: 0.6, m: 1.0}
    return km, dict(q=[q1, q2, q3], u=[u1, u2, u3], consts=consts)


def two_particle_pendulum(mod):
    """Noncontributing-forces chapter: rod tensions exposed by auxiliary speeds u3, u4."""
    q1, q2, u1, u2, u3, u4 = me.dynamicsymbols("q1, q2, u1, u2, u3, u4")
    m1, m2, l1, l2, g, T1, T2 = sm.symbols("m1, m2, l1, l2, g, T1, T2")
    N, A, B = (me.ReferenceFrame(x) for x in "NAB")
    A.orient_axis(N, q1, N.z)
    B.orient_axis(N, q2, N.z)
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(N, u2 * N.z)
    O, P1, P2 = me.Point("O"), me.Point("P1"), me.Point("P2")
    O.set_vel(N, 0)
    P1.set_pos(O, -l1 * A.y)
    P2.set_pos(P1, -l2 * B.y)
    P1.v2pt_theory(O, N, A)
    P2.v2pt_theory(P1, N, B)
    P1.set_vel(N, P1.vel(N) + u3 * A.y)
    P2.set_vel(N, P1.vel(N) + P2.pos_from(P1).dt(N).xreplace({q2.diff(t): u2}) + u4 * B.y)
    loads = [(P1, -m1 * g * N.y + T1 * A.y - T2 * B.y), (P2, -m2 * g * N.y + T2 * B.y)]
    bodies = [me.Particle("p1", P1, m1), me.Particle("p2", P2, m2)]
    kd = [q1.diff(t) - u1, q2.diff(t) - u2]
    km = mod.KanesMethod(N, [q1, q2], [u1, u2], kd, u_auxiliary=[u3, u4])
    km.kanes_equations(bodies, loads)
    consts = {m1: 1.2, m2: 5.6, l1: 1.34, l2: 6.7, g: 9.81}
    return km, dict(q=[q1, q2], u=[u1, u2], T=[T1, T2], consts=consts)


def n_link_pendulum_on_cart(mod, n=3):
    qs = me.dynamicsymbols(f"q:{n + 1}")
    us = me.dynamicsymbols(f"u:{n + 1}")
    f = me.dynamicsymbols("f")
    ms = sm.symbols(f"m:{n + 1}")
    ls = sm.symbols(f"l:{n}")
    g = sm.symbols("g")
    N = me.ReferenceFrame("N")
    P0 = me.Point("P0")
    P0.set_vel(N, us[0] * N.x)
    particles = [me.Particle("Pa0", P0, ms[0])]
    loads = [(P0, f * N.x - ms[0] * g * N.y)]
    kd = [qs[0].diff(t) - us[0]]
    prev = P0
    for i in range(n):
        Bi = N.orientnew(f"B{i}", "Axis", [qs[i + 1], N.z])
        Bi.set_ang_vel(N, us[i + 1] * N.z)
        Pi = prev.locatenew(f"P{i + 1}", ls[i] * Bi.x)
        Pi.v2pt_theory(prev, N, Bi)
        particles.append(me.Particle(f"Pa{i + 1}", Pi, ms[i + 1]))
        loads.append((Pi, -ms[i + 1] * g * N.y))
        kd.append(qs[i + 1].diff(t) - us[i + 1])
        prev = Pi
    km = mod.KanesMethod(N, qs, us, kd)
    km.kanes_equations(particles, loads)
    consts = {s: 0.5 + 0.1 * i for i, s in enumerate(list(ms) + list(ls))}
    consts[g] = 9.81
    return km, dict(q=list(qs), u=list(us), consts=consts, specified=[f])
