"""The seed chapters' models, derived BY HAND exactly as the chapters do (test helper).

Each builder returns a dict with the EquationsOfMotion and the expressions the
tests need (energies, invariants).  sympy.physics.mechanics is used only for the
kinematics objects, as in the chapters.
"""

from __future__ import annotations

import functools

import sympy as sm
import sympy.physics.mechanics as me

import symbody

t = me.dynamicsymbols._t


@functools.cache
def four_bar(form: str = "reduced") -> dict:
    """Seed 001: four-bar linkage, P2 and P3 particles of mass m, gravity along -N.y.

    ``form="reduced"``: the chapter's equations (u2, u3 eliminated symbolically;
    kinematic Mk q' + gk = 0 with gk in u1; Md, gd 1 x 1; q_dep = [q2, q3]).
    ``form="unreduced"``: u_dep = [u2, u3], q' = u, velocity constraints from
    d/dt f_h, dynamic equations Fr + Fr* = 0 for all three speeds as if independent.
    """
    q1, q2, q3 = me.dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = me.dynamicsymbols("u1, u2, u3")
    la, lb, lc, ln = sm.symbols("l_a, l_b, l_c, l_n")
    m, g = sm.symbols("m, g")
    p = [la, lb, lc, ln, m, g]
    q, qr = sm.Matrix([q1]), sm.Matrix([q2, q3])
    qN = q.col_join(qr)
    u, ur = sm.Matrix([u1]), sm.Matrix([u2, u3])
    uN = u.col_join(ur)
    qdN = qN.diff(t)

    N, A, B, C = (me.ReferenceFrame(s) for s in "NABC")
    A.orient_axis(N, q1, N.z)
    B.orient_axis(A, q2, A.z)
    C.orient_axis(B, q3, B.z)
    P1, P2, P3, P4 = (me.Point(f"P{i}") for i in range(1, 5))
    P2.set_pos(P1, la * A.x)
    P3.set_pos(P2, lb * B.x)
    P4.set_pos(P3, lc * C.x)
    loop = P4.pos_from(P1) - ln * N.x
    fh = sm.trigsimp(sm.Matrix([loop.dot(N.x), loop.dot(N.y)]))

    fk = sm.Matrix([q1.diff(t) - u1, q2.diff(t) - u2, q3.diff(t) - u3])
    Mk = fk.jacobian(qdN)
    gk = fk.xreplace({qd: 0 for qd in qdN})
    qdN_sol = -Mk.LUsolve(gk)
    qd_repl = dict(zip(qdN, qdN_sol))

    y_P2 = P2.pos_from(P1).dot(N.y)
    y_P3 = P3.pos_from(P1).dot(N.y)
    PE = m * g * (y_P2 + y_P3)

    if form == "reduced":
        fhd = sm.trigsimp(fh.diff(t).xreplace(qd_repl))
        Mhd = fhd.jacobian(ur)
        ghd = fhd.xreplace({ui: 0 for ui in ur})
        ur_sol = sm.trigsimp(-Mhd.LUsolve(ghd))
        ur_repl = dict(zip(ur, ur_sol))
        A.set_ang_vel(N, u1 * N.z)
        B.set_ang_vel(A, ur_repl[u2] * A.z)
        C.set_ang_vel(B, ur_repl[u3] * B.z)
        P1.set_vel(N, 0)
        P2.v2pt_theory(P1, N, A)
        P3.v2pt_theory(P2, N, B)
        P4.v2pt_theory(P3, N, C)
        gk = gk.xreplace(ur_repl)
        R_P2 = -m * g * N.y
        R_P3 = -m * g * N.y
        Fr = sm.Matrix([P2.vel(N).diff(u1, N).dot(R_P2) + P3.vel(N).diff(u1, N).dot(R_P3)])
        Rs_P2 = -m * P2.acc(N)
        Rs_P3 = -m * P3.acc(N).xreplace(qd_repl).xreplace(ur_repl)
        Frs = sm.Matrix([P2.vel(N).diff(u1, N).dot(Rs_P2) + P3.vel(N).diff(u1, N).dot(Rs_P3)])
        ud = u.diff(t)
        Md = Frs.jacobian(ud)
        gd = Frs.xreplace({udi: 0 for udi in ud}) + Fr
        eom = symbody.EquationsOfMotion(
            q_ind=[q1], u_ind=[u1], kinematic=Mk * qdN + gk, dynamic=(Md, gd),
            constraints=symbody.ConstraintEquations(q_dep=[q2, q3], holonomic=fh),
            constants=p, name="four-bar (book, reduced)")
        KE = m / 2 * (P2.vel(N).dot(P2.vel(N)) + P3.vel(N).dot(P3.vel(N)))
    elif form == "unreduced":
        A.set_ang_vel(N, u1 * N.z)
        B.set_ang_vel(A, u2 * A.z)
        C.set_ang_vel(B, u3 * B.z)
        P1.set_vel(N, 0)
        P2.v2pt_theory(P1, N, A)
        P3.v2pt_theory(P2, N, B)
        R = -m * g * N.y
        Fr, Frs = [], []
        for ui in uN:
            v2 = P2.vel(N).diff(ui, N)
            v3 = P3.vel(N).diff(ui, N)
            Fr.append(v2.dot(R) + v3.dot(R))
            Frs.append(v2.dot(-m * P2.acc(N).xreplace(qd_repl))
                       + v3.dot(-m * P3.acc(N).xreplace(qd_repl)))
        eom = symbody.EquationsOfMotion(
            q_ind=[q1], u_ind=[u1], kinematic=fk, dynamic=sm.Matrix(Fr) + sm.Matrix(Frs),
            constraints=symbody.ConstraintEquations(q_dep=[q2, q3], u_dep=[u2, u3], holonomic=fh),
            constants=p,
            name="four-bar (unreduced, u_dep = [u2, u3])")
        KE = m / 2 * (P2.vel(N).dot(P2.vel(N)) + P3.vel(N).dot(P3.vel(N)))
    else:
        raise ValueError(form)
    return {"eom": eom, "p": p, "q": list(qN), "u": list(eom.u), "KE": KE, "PE": PE, "fh": fh}


@functools.cache
def snakeboard() -> dict:
    """Seed 000: the snakeboard, u_dep = [u1, u2], reduced Md, gd (3 x 3 over u3', u4', u5')."""
    q1, q2, q3, q4, q5 = me.dynamicsymbols("q1, q2, q3, q4, q5")
    u1, u2, u3, u4, u5 = me.dynamicsymbols("u1, u2, u3, u4, u5")
    l, I, m = sm.symbols("l, I, m")
    p = [l, I, m]
    q = sm.Matrix([q1, q2, q3, q4, q5])
    us = sm.Matrix([u3, u4, u5])
    ur = sm.Matrix([u1, u2])
    qd = q.diff(t)
    urd = ur.diff(t)
    usd = us.diff(t)
    qd_zero = {qdi: 0 for qdi in qd}
    ur_zero = {ui: 0 for ui in ur}
    urd_zero = {udi: 0 for udi in urd}
    usd_zero = {udi: 0 for udi in usd}

    N, A, B, C = (me.ReferenceFrame(s) for s in "NABC")
    A.orient_axis(N, q3, N.z)
    B.orient_axis(A, q4, A.z)
    C.orient_axis(A, q5, A.z)
    O, Ao, Bo, Co = me.Point("O"), me.Point("A_o"), me.Point("B_o"), me.Point("C_o")
    Ao.set_pos(O, q1 * N.x + q2 * N.y)
    Bo.set_pos(Ao, l / 2 * A.x)
    Co.set_pos(Ao, -l / 2 * A.x)
    O.set_vel(N, 0)
    Bo.v2pt_theory(Ao, N, A)
    Co.v2pt_theory(Ao, N, A)

    fk = sm.Matrix([u1 - q1.diff(t), u2 - q2.diff(t), u3 - l * q3.diff(t) / 2,
                    u4 - q4.diff(t), u5 - q5.diff(t)])
    Mk = fk.jacobian(qd)
    gk = fk.xreplace(qd_zero)
    qd_sol = -Mk.LUsolve(gk)
    qd_repl = dict(zip(qd, qd_sol))

    fn = sm.Matrix([Bo.vel(N).dot(B.y), Co.vel(N).dot(C.y)]).xreplace(qd_repl)
    Mn = fn.jacobian(ur)
    gn = fn.xreplace(ur_zero)
    ur_sol = Mn.LUsolve(-gn)
    ur_repl = dict(zip(ur, ur_sol))

    N_w_A = A.ang_vel_in(N).xreplace(qd_repl).xreplace(ur_repl)
    N_w_B = B.ang_vel_in(N).xreplace(qd_repl).xreplace(ur_repl)
    N_w_C = C.ang_vel_in(N).xreplace(qd_repl).xreplace(ur_repl)
    N_v_Ao = Ao.vel(N).xreplace(qd_repl).xreplace(ur_repl)
    N_v_Bo = Bo.vel(N).xreplace(qd_repl).xreplace(ur_repl)
    N_v_Co = Co.vel(N).xreplace(qd_repl).xreplace(ur_repl)
    vels = (N_w_A, N_w_B, N_w_C, N_v_Ao, N_v_Bo, N_v_Co)
    w_A, w_B, w_C, v_Ao, v_Bo, v_Co = me.partial_velocity(vels, us, N)

    fnd = fn.diff(t).xreplace(qd_repl)
    Mnd = fnd.jacobian(urd)
    gnd = fnd.xreplace(urd_zero).xreplace(ur_repl)
    urd_sol = Mnd.LUsolve(-gnd)
    urd_repl = dict(zip(urd, urd_sol))
    qdd_repl = {k.diff(t): v.diff(t).xreplace(urd_repl) for k, v in qd_repl.items()}

    Rs_Ao = -m * Ao.acc(N).xreplace(qdd_repl).xreplace(qd_repl)
    Rs_Bo = -m * Bo.acc(N).xreplace(qdd_repl).xreplace(qd_repl)
    Rs_Co = -m * Co.acc(N).xreplace(qdd_repl).xreplace(qd_repl)
    I_A_Ao = I * me.outer(A.z, A.z)
    I_B_Bo = I * me.outer(B.z, B.z)
    I_C_Co = I * me.outer(C.z, C.z)
    Ts_A = -A.ang_acc_in(N).dot(I_A_Ao).xreplace(qdd_repl)
    Ts_B = -B.ang_acc_in(N).dot(I_B_Bo).xreplace(qdd_repl)
    Ts_C = -C.ang_acc_in(N).dot(I_C_Co).xreplace(qdd_repl)
    Frs = sm.Matrix([v_Ao[i].dot(Rs_Ao) + v_Bo[i].dot(Rs_Bo) + v_Co[i].dot(Rs_Co)
                     + w_A[i].dot(Ts_A) + w_B[i].dot(Ts_B) + w_C[i].dot(Ts_C)
                     for i in range(len(us))])
    Md = Frs.jacobian(usd)
    gd = Frs.xreplace(usd_zero)

    eom = symbody.EquationsOfMotion(
        q_ind=list(q), u_ind=list(us), kinematic=fk, dynamic=(Md, gd),
        constraints=symbody.ConstraintEquations(u_dep=list(ur), velocity=fn),
        constants=p, name="snakeboard (book)")
    # kinetic energy in terms of q and all five speeds (dependent ones from the trajectory)
    vA = Ao.vel(N).xreplace(qd_repl)
    vB = Bo.vel(N).xreplace(qd_repl)
    vC = Co.vel(N).xreplace(qd_repl)
    wA = A.ang_vel_in(N).xreplace(qd_repl)
    wB = B.ang_vel_in(N).xreplace(qd_repl)
    wC = C.ang_vel_in(N).xreplace(qd_repl)
    KE = (m / 2 * (vA.dot(vA) + vB.dot(vB) + vC.dot(vC))
          + I / 2 * (wA.dot(wA) + wB.dot(wB) + wC.dot(wC)))
    omega_B = wB.dot(N.z)
    omega_C = wC.dot(N.z)
    return {"eom": eom, "p": p, "KE": KE, "omega_B": omega_B, "omega_C": omega_C,
            "ur_sol": ur_sol, "q": list(q), "us": list(us), "ur": list(ur)}


@functools.cache
def double_rod_pendulum() -> dict:
    """Seed 002's double-rod pendulum with the sliding particle Q of mass m/4 (the later chapters)."""
    m, g, kt, kl, l = sm.symbols("m, g, k_t, k_l, l")
    q1, q2, q3 = me.dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = me.dynamicsymbols("u1, u2, u3")
    N, A, B = (me.ReferenceFrame(s) for s in "NAB")
    A.orient_axis(N, q1, N.z)
    B.orient_axis(A, q2, A.x)
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(A, u2 * A.x)
    O, Ao, Bo, Q = me.Point("O"), me.Point("A_O"), me.Point("B_O"), me.Point("Q")
    Ao.set_pos(O, l / 2 * A.x)
    Bo.set_pos(O, l * A.x)
    Q.set_pos(Bo, q3 * B.y)
    O.set_vel(N, 0)
    Ao.v2pt_theory(O, N, A)
    Bo.v2pt_theory(O, N, A)
    Q.set_vel(B, u3 * B.y)
    Q.v1pt_theory(Bo, N, B)

    R_Ao = m * g * N.x
    R_Bo = m * g * N.x + kl * q3 * B.y
    R_Q = m / 4 * g * N.x - kl * q3 * B.y
    T_A = -kt * q1 * N.z + kt * q2 * A.x
    T_B = -kt * q2 * A.x
    Ixx = m * l**2 / 12
    I_A_Ao = Ixx * me.outer(A.y, A.y) + Ixx * me.outer(A.z, A.z)
    I_B_Bo = Ixx * me.outer(B.x, B.x) + Ixx * me.outer(B.z, B.z)

    points, masses = [Ao, Bo, Q], [m, m, m / 4]
    forces = [R_Ao, R_Bo, R_Q]
    frames, torques, inertias = [A, B], [T_A, T_B], [I_A_Ao, I_B_Bo]
    qdot_repl = {q1.diff(t): u1, q2.diff(t): u2, q3.diff(t): u3}
    Fr, Frs = [], []
    for ur in [u1, u2, u3]:
        Fri, Frsi = 0, 0
        for Pi, mi, Ri in zip(points, masses, forces):
            vr = Pi.vel(N).diff(ur, N)
            Fri += vr.dot(Ri)
            Frsi += vr.dot(-mi * Pi.acc(N).xreplace(qdot_repl))
        for Bi, Ti, Ii in zip(frames, torques, inertias):
            wr = Bi.ang_vel_in(N).diff(ur, N)
            Fri += wr.dot(Ti)
            Ts = -(Bi.ang_acc_in(N).dot(Ii)
                   + me.cross(Bi.ang_vel_in(N), Ii).dot(Bi.ang_vel_in(N)).xreplace(qdot_repl))
            Frsi += wr.dot(Ts)
        Fr.append(Fri)
        Frs.append(Frsi)
    Fr, Frs = sm.Matrix(Fr), sm.Matrix(Frs)
    q = sm.Matrix([q1, q2, q3])
    u = sm.Matrix([u1, u2, u3])
    ud = u.diff(t)
    Mm = Frs.jacobian(ud)
    F = Frs.xreplace({udr: 0 for udr in ud}) + Fr
    kd = q.diff(t) - u
    p = [g, kl, kt, l, m]
    eom = symbody.EquationsOfMotion(q_ind=list(q), u_ind=list(u), kinematic=kd, dynamic=(Mm, F),
                                    constants=p, name="double-rod pendulum (book)")
    KE = 0
    for Pi, mi in zip(points, masses):
        v = Pi.vel(N)
        KE += mi / 2 * v.dot(v)
    for Bi, Ii in zip(frames, inertias):
        w = Bi.ang_vel_in(N)
        KE += w.dot(Ii.dot(w)) / 2
    # potential: gravity along +N.x, torsion springs on q1 and q2, linear spring on q3
    PE = (-sum(mi * g * Pi.pos_from(O).dot(N.x) for Pi, mi in zip(points, masses))
          + kt * q1**2 / 2 + kt * q2**2 / 2 + kl * q3**2 / 2)
    return {"eom": eom, "p": p, "KE": KE, "PE": PE, "Md": Mm, "gd": F, "q": list(q), "u": list(u)}
