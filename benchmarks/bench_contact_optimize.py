"""Optimal control through contact (issue 37): the planar hopper's hop, symbody against the
same problem written by hand in CasADi Opti.

The problem is :func:`symbody.optimize.examples.hopper_hop` (from standing at rest to the
apex of a hop 0.25 m higher, on the spot or ``--strides`` m forward, in 0.5 s, ∫ (F/100)² + (τ/10)² dt,
Hermite-Simpson, the state derivatives unknowns at every point).  The CasADi side
(tests/systems/casadi_hopper.py, shared with the tests) writes it from scratch: the equations of motion by Lagrange's equations through CasADi's own
differentiation of T and V (not symbody's Kane equations), the smooth Hunt-Crossley ground
force and smooth Coulomb friction typed in from their formulas, the same Hermite-Simpson
defects, Simpson quadrature of the cost, bounds, instance constraints and initial point
(symbody's vector, unknown by unknown, in symbody's order).  Both run CasADi's IPOPT
(exact Hessians, the same options).  Printed: build (symbody: the model's equations, the
problem and its compiled kernels, on a cold kernel cache; CasADi: the Opti graph), solve
(CPU seconds, median of ``--repeat`` runs, the two tools interleaved), IPOPT iterations, the
optimum, and each tool's optimum evaluated in the other's NLP (the same NLP: the objective
agrees and the other's constraints hold).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_contact_optimize.py --nodes 21 41 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
from systems.casadi_hopper import hand_written, symbody_columns, transcription  # noqa: E402

OPTIONS = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes", "ipopt.tol": 1e-8,
           "ipopt.max_iter": 3000}


def opti_same(problem, guess, rise: float = 0.25, stride: float = 0.0):
    """:func:`hand_written` posed through CasADi Opti: one variable vector, the rows as
    equality constraints, the bounds ``opti.bounded`` (passed to IPOPT as variable bounds by
    ``detect_simple_bounds``): IPOPT sees symbody's NLP.  Returns (opti, w)."""
    import casadi as ca
    w, cost, g, lbx, ubx, w0 = hand_written(problem, guess, rise, stride)
    nlp = ca.Function("hop", [w], [cost, g])
    opti = ca.Opti()
    wv = opti.variable(w.shape[0])
    f_mx, g_mx = nlp(wv)
    opti.minimize(f_mx)
    opti.subject_to(g_mx == 0)
    for i in np.flatnonzero(np.isfinite(lbx)):
        opti.subject_to(opti.bounded(lbx[i], wv[int(i)], ubx[i]))
    opti.set_initial(wv, w0)
    opti.solver("ipopt", dict(OPTIONS, detect_simple_bounds=True))
    return opti, wv


def opti_natural(problem, guess, rise: float = 0.25, stride: float = 0.0):
    """The same transcription as a CasADi user writes it in Opti: a variable per point, the
    constraints and bounds given one by one (``detect_simple_bounds`` then also turns the
    initial state and the final x into fixed variables, which IPOPT removes: 11 unknowns and
    rows fewer than symbody's NLP).  Returns (opti, w)."""
    import casadi as ca
    nlp = problem.nlp
    P = nlp.iX.shape[0]
    opti = ca.Opti()
    Z = [opti.variable(22) for _ in range(P)]        # per point: x (10), r (2), v (10)
    Xp, Rp = [z[:10] for z in Z], [z[10:12] for z in Z]
    cost, rows, bounds = transcription(problem, Xp, Rp, [z[12:] for z in Z], rise, stride)
    for row in rows:
        opti.subject_to(row == 0)
    for j in range(P):
        for part, i, lo, hi in bounds:
            opti.subject_to(opti.bounded(lo, (Xp if part == "x" else Rp)[j][i], hi))
    opti.minimize(cost)
    w0 = problem.initial_vector(guess)
    for j in range(P):
        opti.set_initial(Z[j], np.concatenate([w0[nlp.iX[j]], w0[nlp.iR[j]], w0[nlp.iV[j]]]))
    opti.solver("ipopt", dict(OPTIONS, detect_simple_bounds=True))
    return opti, ca.vertcat(*Z)


def _row(nodes, stride, tool, build, cpu, iterations, objective, note):
    print(f"{nodes:5d} {stride:6.2f} {tool:14s} {build:8.2f} {statistics.median(cpu):8.2f} "
          f"{iterations:5d} "
          f"{objective:12.8f}  {note}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, nargs="+", default=[21, 41])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--strides", type=float, nargs="+", default=[0.0, 0.2])
    ap.add_argument("--natural", action="store_true",
                    help="also the Opti problem as a user writes it (opti_natural)")
    args = ap.parse_args()
    os.environ["SYMBODY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-contact-ocp-")
    import casadi as ca

    from symbody.optimize import examples
    print(f"{'nodes':>5s} {'stride':>6s} {'tool':14s} {'build s':>8s} {'solve s':>8s} {'iter':>5s} "
          f"{'objective':>12s}  the optimum in the other NLP: objective, max violation")
    for nodes, stride in ((n, s) for n in args.nodes for s in args.strides):
        c0 = time.process_time()
        problem, guess = examples.hopper_hop(num_nodes=nodes, stride=stride)   # cold cache
        build_sb = time.process_time() - c0
        cols = symbody_columns(problem)
        w, cost, g, lbx, ubx, _ = hand_written(problem, guess, stride=stride)
        hand = ca.Function("hand", [w], [cost, g])
        tools = {"opti_same": opti_same}
        if args.natural:
            tools["opti_natural"] = opti_natural
        built, cpu = {}, {"symbody": []}
        for name, make in tools.items():
            c0 = time.process_time()
            built[name] = make(problem, guess, stride=stride)
            cpu[name] = [time.process_time() - c0]              # the build, first entry
        sols: dict = {}
        for _ in range(args.repeat):                              # interleaved
            c0 = time.process_time()
            r = problem.solve(guess, progress=False)
            cpu["symbody"].append(time.process_time() - c0)
            for name, (opti, _) in built.items():
                c0 = time.process_time()
                try:
                    sols[name] = opti.solve_limited()
                except RuntimeError as exc:                       # IPOPT's failures
                    sols[name] = str(exc).splitlines()[-1]
                cpu[name].append(time.process_time() - c0)
        f_h, g_h = (np.asarray(v).ravel() for v in hand(r.w[cols]))
        viol = max(np.abs(g_h).max(), np.max(lbx - r.w[cols]), np.max(r.w[cols] - ubx))
        _row(nodes, stride, "symbody", build_sb, cpu["symbody"][0:], r.iterations, r.objective,
             f"in CasADi's: {f_h.item():.8f}, {viol:.1e}  [{r.message[:34]}]")
        for name, (opti, wv) in built.items():
            sol = sols[name]
            if isinstance(sol, str):
                _row(nodes, stride, name, cpu[name][0], cpu[name][1:], -1, float("nan"), sol[-80:])
                continue
            stats = sol.stats()
            w_ca = r.w.copy()
            w_ca[cols] = np.asarray(sol.value(wv)).ravel()
            c = problem.nlp.constraints(w_ca)
            viol = max(np.max(problem.nlp.cl - c), np.max(c - problem.nlp.cu),
                       np.max(problem.nlp.lb - w_ca), np.max(w_ca - problem.nlp.ub))
            _row(nodes, stride, name, cpu[name][0], cpu[name][1:], stats["iter_count"],
                 float(sol.value(opti.f)), f"in symbody's: {problem.nlp.objective(w_ca):.8f}, "
                 f"{viol:.1e}  [{stats['return_status']}]")


if __name__ == "__main__":
    main()
