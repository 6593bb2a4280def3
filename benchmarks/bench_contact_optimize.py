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

``--opty``: the hop against opty instead.  opty 1.5 has backward Euler and midpoint, not
Hermite-Simpson, and takes no sin/cos in instance constraints (it reads every Function atom
of one as a state at an instant: the mass centre's height fails), so both tools solve
:func:`body_hop`: the hop with the body's apex (its height y(T) 0.25 m up, u_y(T) = 0, x(T)
= 0; linear) in place of the mass centre's, midpoint, symbody's problem otherwise. opty gets the
model's own equations in implicit form ``[q' - q'(q, u); M_d u' + g_d] = 0`` (the smooth
contact force inside them, the constants substituted), the same instance constraints, bounds
and nodes, the cost h Σ L((R_k + R_{k+1})/2) as Python functions, and symbody's initial point.
opty's IPOPT (cyipopt) has no exact Hessian (limited-memory BFGS); symbody runs with its
exact Hessian and once with ``hessian="limited-memory"`` (IPOPT's path as opty's).  Printed:
build (symbody: model, problem and kernels on a cold cache; opty: its Cython compilation),
solve CPU, iterations, objective, and the largest difference of the two optima's states.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_contact_optimize.py --opty --nodes 21 41 --repeat 3
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


def body_hop(nodes, rise=0.25, stride=0.0, **collocation):
    """:func:`hopper_hop`'s problem with the body's apex in place of the mass centre's
    (instance constraints linear in the states), midpoint -> (problem, guess)."""
    from symbody.optimize import Collocation, OptimalControlProblem, examples
    ref, guess = examples.hopper_hop("midpoint", num_nodes=nodes, stride=stride)
    eom, T = ref.eom, ref.duration
    x, y = eom.q[0], eom.q[1]
    uy = eom.u[1]
    from symbody.models import planar_hopper
    start = planar_hopper().initial_state                 # standing at rest, as hopper_hop
    inst = [s.func(0.0) - start[s] for s in (*eom.q, *eom.u)]
    inst += [y.func(T) - (start[y] + rise), uy.func(T), x.func(T) - stride]
    problem = OptimalControlProblem(
        eom, num_nodes=nodes, duration=T, objective=ref.objective, instance_constraints=inst,
        bounds=ref.bounds, known_parameters=ref.known_parameters,
        transcription=Collocation("midpoint", **collocation))
    return problem, guess


def opty_hop(problem, guess):
    """opty's Problem of symbody's midpoint hop (module docstring) -> (opty problem, w0, states)."""
    import sympy as sm
    from opty import Problem

    from symbody.compat.sympy import TIME
    eom = problem.eom
    q, u, inputs = list(eom.q), list(eom.u), list(problem.specifieds)
    qd = sm.Matrix([qi.diff(TIME) for qi in q]) - sm.Matrix(eom.qdot_solution)
    ud = sm.Matrix([ui.diff(TIME) for ui in u])
    dyn = sm.Matrix(eom.dynamic_mass) * ud + sm.Matrix(eom.dynamic_rest)
    equations = sm.Matrix.vstack(qd, dyn).xreplace(problem.known_parameters)
    weights = [float(sm.diff(problem.objective, r, 2) / 2) for r in inputs]
    assert sm.expand(problem.objective - sum(c * r ** 2 for c, r in zip(weights, inputs))) == 0
    N, states = problem.num_nodes, q + u
    h, n = problem.duration / (N - 1), len(states) * N
    c = np.repeat(weights, N - 1).reshape(len(inputs), N - 1)

    def objective(free):
        r = free[n:].reshape(len(inputs), N)
        return h * np.sum(c * (0.5 * (r[:, 1:] + r[:, :-1])) ** 2)

    def gradient(free):
        r = free[n:].reshape(len(inputs), N)
        mid = c * (r[:, 1:] + r[:, :-1]) * 0.5
        g = np.zeros_like(free)
        gr = np.zeros_like(r)
        gr[:, 1:] += h * mid
        gr[:, :-1] += h * mid
        g[n:] = gr.ravel()
        return g

    prob = Problem(objective, gradient, equations, tuple(states), N, h,
                   instance_constraints=tuple(e for e, _, _ in problem.instance_constraints),
                   bounds=dict(problem.bounds), time_symbol=TIME, integration_method="midpoint",
                   tmp_dir=tempfile.mkdtemp(prefix="opty-hop-"))
    for key, value in (("print_level", 0), ("tol", 1e-8), ("max_iter", 3000)):
        prob.add_option(key, value)
    w0 = np.concatenate([np.broadcast_to(np.asarray(guess.get(x, 0.0), float), (N,))
                         for x in states + inputs])
    lo = np.concatenate([np.full(N, problem.bounds.get(x, (-np.inf, np.inf))[0]) for x in states + inputs])
    hi = np.concatenate([np.full(N, problem.bounds.get(x, (-np.inf, np.inf))[1]) for x in states + inputs])
    return prob, np.clip(w0, lo, hi), states


def against_opty(args):
    """The midpoint hop: symbody (exact and limited-memory Hessians) and opty, interleaved."""
    print(f"{'nodes':>5s} {'stride':>6s} {'tool':14s} {'build s':>8s} {'solve s':>8s} {'iter':>5s} "
          f"{'objective':>12s}  max |x_symbody - x_opty| over the nodes; symbody's optimum in "
          "opty's NLP: objective, max |constraint|")
    for nodes, stride in ((n, s) for n in args.nodes for s in args.strides):
        c0 = time.process_time()
        problem, guess = body_hop(nodes, stride=stride)
        build_sb = time.process_time() - c0
        c0 = time.process_time()
        limited, _ = body_hop(nodes, stride=stride, hessian="limited-memory")
        build_lm = time.process_time() - c0
        c0 = time.process_time()
        prob, w0, states = opty_hop(problem, guess)
        build_op = time.process_time() - c0
        cpu = {"symbody": [], "symbody-lbfgs": [], "opty": []}
        for _ in range(args.repeat):                              # interleaved
            c0 = time.process_time()
            r = problem.solve(guess, progress=False)
            cpu["symbody"].append(time.process_time() - c0)
            c0 = time.process_time()
            r_lm = limited.solve(guess, progress=False)
            cpu["symbody-lbfgs"].append(time.process_time() - c0)
            c0 = time.process_time()
            prob.obj_value.clear()
            w_op, info = prob.solve(w0)
            cpu["opty"].append(time.process_time() - c0)
        X_op = w_op[:len(states) * nodes].reshape(len(states), nodes).T

        def gap(res, prob=prob, X_op=X_op):
            X = np.column_stack([res.trajectory.q, res.trajectory.u])
            w = np.concatenate([X.T.ravel(), res.inputs.T.ravel()])     # opty's layout
            return (f"{np.abs(X - X_op).max():.1e}; in opty's NLP: {prob.obj(w):.8f}, "
                    f"{np.abs(prob.con(w)).max():.1e}")
        _row(nodes, stride, "symbody", build_sb, cpu["symbody"], r.iterations, r.objective,
             f"{gap(r)}  [{r.message[:20]}]")
        _row(nodes, stride, "symbody-lbfgs", build_lm, cpu["symbody-lbfgs"], r_lm.iterations,
             r_lm.objective, f"{gap(r_lm)}  [{r_lm.message[:20]}]")
        _row(nodes, stride, "opty", build_op, cpu["opty"], len(prob.obj_value) - 1,
             float(info["obj_val"]), f"[{info['status_msg'].decode()[:40]}]")


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
    ap.add_argument("--opty", action="store_true", help="the midpoint hop against opty")
    args = ap.parse_args()
    os.environ["SYMBODY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-contact-ocp-")
    if args.opty:
        return against_opty(args)
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
