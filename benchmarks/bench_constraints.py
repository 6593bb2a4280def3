"""Constraint handling on the four-bar linkage (seed 001): wall time and loop residual.

The book's three approaches (measured here, same process, same equations):

* ``book plain``       solve_ivp(RK45) at its default tolerances on the chapter's eval_rhs
                       (sympy.lambdify of Mk, gk, Md, gd); the loop drifts open;
* ``book root finder`` the dependent coordinates corrected by fsolve inside eval_rhs;
* ``book IDA``         the index-1 DAE (q2, q3 algebraic, f_h as their residuals) with
                       SUNDIALS IDA through scikit-sundae at rtol = atol = 1e-10.

against ``symbody.simulate`` with constraints = "none", "baumgarte", "project", "dae".
All runs: 30 s, output at 20 frames per second (600 samples), the chapter's parameters
and initial state.  Wall time is the median of ``--repeat`` runs (compilation excluded
for both sides: lambdify and symbody.compile happen once before timing).

Usage::

    .venv/bin/python benchmarks/bench_constraints.py [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

import symbody

t = me.dynamicsymbols._t


def book_four_bar():
    """The chapter's derivation (seed 001), returning the book's matrices and symbols."""
    q1, q2, q3 = me.dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = me.dynamicsymbols("u1, u2, u3")
    la, lb, lc, ln = sm.symbols("l_a, l_b, l_c, l_n")
    m, g = sm.symbols("m, g")
    p = sm.Matrix([la, lb, lc, ln, m, g])
    q, qr = sm.Matrix([q1]), sm.Matrix([q2, q3])
    qN = q.col_join(qr)
    u, ur = sm.Matrix([u1]), sm.Matrix([u2, u3])
    qdN = qN.diff(t)
    ud = u.diff(t)
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
    qd_repl = dict(zip(qdN, -Mk.LUsolve(gk)))
    fhd = sm.trigsimp(fh.diff(t).xreplace(qd_repl))
    Mhd = fhd.jacobian(ur)
    ghd = fhd.xreplace({ui: 0 for ui in ur})
    ur_repl = dict(zip(ur, sm.trigsimp(-Mhd.LUsolve(ghd))))
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(A, ur_repl[u2] * A.z)
    C.set_ang_vel(B, ur_repl[u3] * B.z)
    P1.set_vel(N, 0)
    P2.v2pt_theory(P1, N, A)
    P3.v2pt_theory(P2, N, B)
    gk = gk.xreplace(ur_repl)
    R = -m * g * N.y
    Fr = sm.Matrix([P2.vel(N).diff(u1, N).dot(R) + P3.vel(N).diff(u1, N).dot(R)])
    Rs_P2 = -m * P2.acc(N)
    Rs_P3 = -m * P3.acc(N).xreplace(qd_repl).xreplace(ur_repl)
    Frs = sm.Matrix([P2.vel(N).diff(u1, N).dot(Rs_P2) + P3.vel(N).diff(u1, N).dot(Rs_P3)])
    Md = Frs.jacobian(ud)
    gd = Frs.xreplace({udi: 0 for udi in ud}) + Fr
    KE = m / 2 * (P2.vel(N).dot(P2.vel(N)) + P3.vel(N).dot(P3.vel(N)))
    PE = m * g * (P2.pos_from(P1).dot(N.y) + P3.pos_from(P1).dot(N.y))
    return dict(q1=q1, q=q, qr=qr, qN=qN, u=u, qdN=qdN, p=p, Mk=Mk, gk=gk, Md=Md, gd=gd, fh=fh,
                energy=KE + PE)


P_VALS = np.array([0.8, 2.0, 1.0, 2.0, 1.0, 9.81])
X0_GUESS = np.array([np.deg2rad(10.0), np.deg2rad(10.0), np.deg2rad(-150.0), 0.0])
T0, TF, FPS = 0.0, 30.0, 20


def book_four_bar_rhs():
    """The chapter's eval_rhs(t, x, p) at p = P_VALS with its Mk, gk, Md, gd lambdified with
    common subexpressions eliminated (``cse=True``, as bench_rhs and bench_rhs_entry time
    it): x = [q1, q2, q3, u1] -> x' (4,), q' from Mk q' = -gk, u1' from Md u1' = -gd."""
    d = book_four_bar()
    qN, u, p = d["qN"], d["u"], d["p"]
    eval_k = sm.lambdify((qN, u, p), (d["Mk"], d["gk"]), cse=True)
    eval_d = sm.lambdify((qN, u, p), (d["Md"], d["gd"]), cse=True)

    def book_rhs(x):
        qv, uv = x[:3], x[3:]
        Mk, gk = eval_k(qv, uv, P_VALS)
        qNd = -np.linalg.solve(Mk, np.squeeze(gk))
        Md, gd = eval_d(qv, uv, P_VALS)
        ud = -np.linalg.solve(Md, gd)[0]
        return np.hstack((qNd, ud))
    return book_rhs


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=str, default=None)
    args = ap.parse_args(argv)
    d = book_four_bar()
    qN, u, p, q1 = d["qN"], d["u"], d["p"], d["q1"]
    ts = np.linspace(T0, TF, num=int(FPS * (TF - T0)))

    # ------------------------------------------------------------ the book's functions
    eval_k = sm.lambdify((qN, u, p), (d["Mk"], d["gk"]))
    eval_d = sm.lambdify((qN, u, p), (d["Md"], d["gd"]))
    eval_fh = sm.lambdify((d["qr"], q1, p), d["fh"])
    eval_energy = sm.lambdify((qN, u, p), d["energy"])

    def eval_rhs(t, x, p):
        qv, uv = x[:3], x[3:]
        Mk, gk = eval_k(qv, uv, p)
        qNd = -np.linalg.solve(Mk, np.squeeze(gk))
        Md, gd = eval_d(qv, uv, p)
        ud = -np.linalg.solve(Md, gd)[0]
        return np.hstack((qNd, ud))

    def eval_rhs_fsolve(t, x, p):
        q1v = x[0]
        q2v, q3v = fsolve(lambda qr, q1, p: np.squeeze(eval_fh(qr, q1, p)), x[1:3], args=(q1v, p))
        return eval_rhs(t, np.array([q1v, q2v, q3v, x[3]]), p)

    def residuals(xs):
        return np.array([np.squeeze(eval_fh(xi[1:3], xi[0], P_VALS)) for xi in xs])

    def energy_drift(xs):
        e = np.array([eval_energy(xi[:3], xi[3:], P_VALS) for xi in xs])
        return float(np.abs(e - e[0]).max())

    q2_0, q3_0 = fsolve(lambda qr, q1, p: np.squeeze(eval_fh(qr, q1, p)), X0_GUESS[1:3],
                        args=(X0_GUESS[0], P_VALS))
    x0 = np.array([X0_GUESS[0], q2_0, q3_0, 0.0])

    def book_plain():
        sol = solve_ivp(eval_rhs, (T0, TF), x0, args=(P_VALS,), t_eval=ts, rtol=1e-3, atol=1e-6)
        return sol.y.T

    def book_root():
        sol = solve_ivp(eval_rhs_fsolve, (T0, TF), x0, args=(P_VALS,), t_eval=ts, rtol=1e-3,
                        atol=1e-6)
        return sol.y.T

    def book_ida():
        from sksundae.ida import IDA

        def resfn(t, y, yp, res):
            Md, gd = eval_d(y[:3], y[3:], P_VALS)
            res[0] = -yp[0] + y[3]
            res[1] = Md[0, 0] * yp[3] + gd[0, 0]
            res[2:] = np.squeeze(eval_fh(y[1:3], y[0], P_VALS))

        yp0 = eval_rhs(T0, x0, P_VALS)
        solver = IDA(resfn, algebraic_idx=[1, 2], rtol=1e-10, atol=1e-10, max_num_steps=100000)
        sol = solver.solve(ts, x0, yp0)
        return sol.y

    rows = []

    def run(name, fn, extract):
        walls = []
        out = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            out = fn()
            walls.append(time.perf_counter() - t0)
        xs = extract(out)
        rows.append({"approach": name, "wall_s": statistics.median(walls),
                     "max_residual_m": float(np.abs(residuals(xs)).max()),
                     "energy_drift_J": energy_drift(xs), "samples": len(xs)})
        r = rows[-1]
        print(f"{name:58s} {r['wall_s']:8.3f} s   max |f_h| {r['max_residual_m']:9.2e} m   "
              f"max |E - E0| {r['energy_drift_J']:9.2e} J", flush=True)

    run("book: plain solve_ivp (rtol 1e-3, atol 1e-6)", book_plain, lambda y: y)
    run("book: fsolve inside rhs (rtol 1e-3, atol 1e-6)", book_root, lambda y: y)
    run("book: IDA index-1 (rtol = atol = 1e-10)", book_ida, lambda y: y)

    eom = symbody.EquationsOfMotion(q_ind=[q1], u_ind=list(u), kinematic=d["Mk"] * d["qdN"] + d["gk"],
                                    dynamic=(d["Md"], d["gd"]),
                                    constraints=symbody.ConstraintEquations(q_dep=list(d["qr"]),
                                                                            holonomic=d["fh"]),
                                    constants=list(p))
    model = symbody.compile(eom)
    cases = [("none", 1e-3, 1e-6, True), ("baumgarte", 1e-3, 1e-6, True),
             ("project", 1e-3, 1e-6, True), ("project", 1e-6, 1e-9, True),
             ("project", 1e-10, 1e-10, True), ("dae", 1e-3, 1e-6, True),
             ("dae", 1e-10, 1e-10, False), ("dae", 1e-10, 1e-10, True)]
    for mode, rtol, atol, polish in cases:
        def fn(mode=mode, rtol=rtol, atol=atol, polish=polish):
            constraints = symbody.DAE(polish_algebraic=polish) if mode == "dae" else mode
            return symbody.simulate(model, (T0, TF), X0_GUESS, P_VALS, constraints=constraints,
                                    t_eval=ts, solver=symbody.Solver(rtol=rtol, atol=atol))
        label = "" if (mode != "dae" or polish) else ", IDA's raw q_dep"
        run(f"symbody: {mode} (rtol {rtol:g}, atol {atol:g}{label})", fn, lambda tr: tr.x)
    res = {"rows": rows, "repeat": args.repeat}
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
