"""Trajectory optimization: symbody.optimize against opty and CasADi on the same NLPs.

Problems (:mod:`symbody.optimize.examples`, the same equations, grid, bounds, instance
constraints, objective quadrature and initial guess for all three tools):

* ``pendulum``   opty's gallery "fixed duration pendulum swing up", backward Euler, N = 501;
* ``cart-pole``  Kelly (2017) cart-pole swing-up, midpoint, N = 101;
* ``cart-10``    the 10-link pendulum on a cart swung up (scaling row; ``--links 10``).

For each: build time (problem to a solvable NLP: symbody's symbolic derivatives and compiled
kernels — cold kernel cache unless ``--warm`` —, opty's Cython compilation, CasADi's graph and
``nlpsol``), solve time, IPOPT iterations, optimum.  symbody and CasADi use IPOPT with exact
Hessians; opty has none (IPOPT's limited-memory quasi-Newton).  All three call the same IPOPT
(cyipopt-wheels' bundled 3.14 with MUMPS for symbody and opty; CasADi's own build).

Usage (opty declares a dependency on ``cyipopt``, whose source build needs a system IPOPT:
install it with ``--no-deps`` next to cyipopt-wheels, which provides the same ``cyipopt``
module)::

    .venv/bin/python -m pip install --pre cyipopt-wheels
    .venv/bin/python -m pip install casadi opty cython --no-deps
    .venv/bin/python benchmarks/bench_optimize.py [--problems pendulum cart-pole cart-10]
                                                  [--no-opty] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from symbody.optimize import examples

_t = dynamicsymbols._t


def problem_spec(name: str, links: int):
    """(builder, kwargs) of a benchmark problem."""
    if name == "pendulum":
        return examples.pendulum_swing_up, dict(transcription="backward-euler", num_nodes=501)
    if name == "cart-pole":
        return examples.cart_pole_swing_up, dict(transcription="midpoint", num_nodes=101)
    if name == "cart-10":
        return (lambda **kw: examples.n_link_cart_swing_up(links, **kw),
                dict(transcription="midpoint", num_nodes=101, duration=3.0))
    raise ValueError(name)


def explicit_equations(problem):
    """opty's implicit form of the same equations: [q' - qdot(q, u); M_d u' + g_d] with the
    known constants substituted, the state list [q, u], the input list."""
    eom = problem.eom
    q, u = list(eom.q), list(eom.u)
    qd = sm.Matrix([qi.diff(_t) for qi in q])
    ud = sm.Matrix([ui.diff(_t) for ui in u])
    kin = qd - sm.Matrix(eom.qdot_solution)
    dyn = sm.Matrix(eom.dynamic_mass) * ud + sm.Matrix(eom.dynamic_rest)
    sub = {k: v for k, v in problem.known_parameters.items()}
    return sm.Matrix.vstack(kin, dyn).xreplace(sub), q + u, list(problem.specifieds)


def guess_vector_opty(problem, guess, states, inputs):
    N = problem.num_nodes
    parts = []
    for x in states + inputs:
        v = guess.get(x, 0.0)
        parts.append(np.broadcast_to(np.asarray(v, float), (N,)))
    return np.concatenate(parts)


def run_symbody(name, links, warm):
    builder, kw = problem_spec(name, links)
    if not warm:
        os.environ["SYMBODY_CACHE_DIR"] = tempfile.mkdtemp(prefix="symbody-bench-opt-")
        from symbody.compilation import codegen
        codegen._MEMORY.clear()
    t0 = time.perf_counter()
    problem, guess = builder(**kw)
    build = time.perf_counter() - t0
    res = problem.solve(guess, progress=False)
    return dict(tool="symbody", build=build, solve=res.solve_time, iterations=res.iterations,
                objective=res.objective, status=res.status, n=problem.nlp.n, m=problem.nlp.m), problem, guess


def run_opty(problem, guess):
    from opty import Problem
    eq, states, inputs = explicit_equations(problem)
    N = problem.num_nodes
    h = problem.duration / (N - 1)
    method = {"backward-euler": "backward euler", "midpoint": "midpoint"}[problem.transcription]
    F = inputs
    obj_expr = sum(f ** 2 for f in F)
    assert sm.simplify(problem.objective - obj_expr) == 0, "benchmark objectives are sums of input squares"
    nS, nI = len(states), len(inputs)

    # opty takes the objective as Python functions: the same quadrature as symbody's
    if problem.quadrature == "rectangle":
        weights = np.ones(N)
    elif method == "backward euler":
        weights = np.r_[0.0, np.ones(N - 1)]
    else:
        weights = None                       # midpoint values

    def obj(free):
        r = free[nS * N:(nS + nI) * N].reshape(nI, N)
        if weights is None:
            return h * np.sum((0.5 * (r[:, 1:] + r[:, :-1])) ** 2)
        return h * np.sum(weights * r ** 2)

    def obj_grad(free):
        g = np.zeros_like(free)
        r = free[nS * N:(nS + nI) * N].reshape(nI, N)
        if weights is None:
            rm = 0.5 * (r[:, 1:] + r[:, :-1])
            gr = np.zeros_like(r)
            gr[:, 1:] += h * rm
            gr[:, :-1] += h * rm
        else:
            gr = 2 * h * weights * r
        g[nS * N:(nS + nI) * N] = gr.ravel()
        return g

    inst = [e for e, _, _ in problem.instance_constraints]
    bounds = {k: v for k, v in problem.bounds.items()}
    t0 = time.perf_counter()
    prob = Problem(obj, obj_grad, eq, tuple(states), N, h, known_parameter_map={},
                   instance_constraints=tuple(inst), bounds=bounds, time_symbol=_t,
                   integration_method=method, tmp_dir=tempfile.mkdtemp(prefix="opty-bench-"))
    build = time.perf_counter() - t0
    prob.add_option("print_level", 0)
    prob.add_option("tol", 1e-8)
    prob.add_option("max_iter", 3000)
    w0 = guess_vector_opty(problem, guess, states, inputs)
    t0 = time.perf_counter()
    sol, info = prob.solve(w0)
    solve = time.perf_counter() - t0
    return dict(tool="opty", build=build, solve=solve, iterations=len(prob.obj_value) - 1,
                objective=float(info["obj_val"]), status=int(info["status"]))


def run_casadi(problem, guess):
    import casadi as ca
    eq, states, inputs = explicit_equations(problem)
    N = problem.num_nodes
    h = problem.duration / (N - 1)
    nS, nI = len(states), len(inputs)
    t0 = time.perf_counter()
    xd = [s.diff(_t) for s in states]
    X, XD, R = ca.SX.sym("x", nS), ca.SX.sym("xd", nS), ca.SX.sym("r", nI)
    sym_x, sym_xd, sym_r = sm.symbols(f"x:{nS}"), sm.symbols(f"xd:{nS}"), sm.symbols(f"r:{nI}")
    rep = dict(zip(xd, sym_xd))
    expr = eq.xreplace(rep).xreplace(dict(zip(states + inputs, list(sym_x) + list(sym_r))))
    fn = sm.lambdify([sym_x, sym_xd, sym_r], list(expr),
                     modules=[{"sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "sqrt": ca.sqrt}, "math"])
    res = fn([X[i] for i in range(nS)], [XD[i] for i in range(nS)], [R[i] for i in range(nI)])
    phi = ca.Function("phi", [X, XD, R], [ca.vertcat(*res)])
    W = ca.SX.sym("w", (nS + nI) * N)
    Xs = ca.reshape(W[:nS * N], N, nS).T           # (nS, N), opty's layout
    Rs = ca.reshape(W[nS * N:], N, nI).T
    if problem.transcription == "backward-euler":
        Xc, Rc = Xs[:, 1:], Rs[:, 1:]
        J = h * ca.sumsqr(Rs[:, 1:])
    else:
        Xc, Rc = 0.5 * (Xs[:, 1:] + Xs[:, :-1]), 0.5 * (Rs[:, 1:] + Rs[:, :-1])
        J = h * ca.sumsqr(Rc)
    if problem.quadrature == "rectangle":
        J = h * ca.sumsqr(Rs)
    XDc = (Xs[:, 1:] - Xs[:, :-1]) / h
    G = [ca.vec(phi.map(N - 1)(Xc, XDc, Rc))]
    # instance constraints: value of the function at its node
    for e, _, _ in problem.instance_constraints:
        f = [a for a in e.atoms(sm.core.function.AppliedUndef)][0]
        k = int(round((float(f.args[0]) - problem.t0) / h))
        j = [s.func for s in states].index(f.func)
        G.append(ca.SX(float(sm.N(e.xreplace({f: 0})))) + Xs[j, k])
    g = ca.vertcat(*G)
    solver = ca.nlpsol("s", "ipopt", {"x": W, "f": J, "g": g},
                       {"ipopt.print_level": 0, "print_time": 0, "ipopt.tol": 1e-8,
                        "ipopt.max_iter": 3000})
    build = time.perf_counter() - t0
    lb = np.full(W.shape[0], -np.inf)
    ub = np.full(W.shape[0], np.inf)
    for k, (lo, hi) in problem.bounds.items():
        j = (states + inputs).index(k)
        lb[j * N:(j + 1) * N], ub[j * N:(j + 1) * N] = lo, hi
    w0 = guess_vector_opty(problem, guess, states, inputs)
    t0 = time.perf_counter()
    sol = solver(x0=w0, lbx=lb, ubx=ub, lbg=0, ubg=0)
    solve = time.perf_counter() - t0
    st = solver.stats()
    W = np.asarray(sol["x"]).ravel()
    start = {x: W[j * N:(j + 1) * N] for j, x in enumerate(states + inputs)}
    return dict(tool="casadi", build=build, solve=solve, iterations=int(st["iter_count"]),
                objective=float(sol["f"]), status=st["return_status"]), start


def cross_check(problem, start):
    """symbody's NLP evaluated at CasADi's optimum (objective and largest constraint residual:
    the same NLP), then solved from there."""
    nlp = problem.nlp
    w = problem.initial_vector(start)
    c = nlp.constraints(w)
    viol = float(np.max(np.maximum(nlp.cl - c, c - nlp.cu), initial=0.0))
    print(f"           symbody's NLP at CasADi's optimum: objective {nlp.objective(w):.8f}, "
          f"max constraint residual {viol:.1e}")
    res = problem.solve(start, progress=False)
    return dict(tool="symbody from casadi's optimum", build=0.0, solve=res.solve_time,
                iterations=res.iterations, objective=res.objective, status=res.status)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", nargs="+", default=["pendulum", "cart-pole"])
    ap.add_argument("--links", type=int, default=10)
    ap.add_argument("--no-opty", action="store_true")
    ap.add_argument("--warm", action="store_true", help="keep symbody's kernel cache")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print(f"{'problem':10s} {'tool':8s} {'build s':>8s} {'solve s':>8s} {'iter':>5s} "
          f"{'objective':>14s}  status")
    for name in args.problems:
        sb, problem, guess = run_symbody(name, args.links, args.warm)
        out = [sb]
        if not args.no_opty:
            out.append(run_opty(problem, guess))
        ca_row, ca_start = run_casadi(problem, guess)
        out.append(ca_row)
        if abs(ca_row["objective"] - sb["objective"]) > 1e-6 * abs(ca_row["objective"]):
            out.append(cross_check(problem, ca_start))
        for r in out:
            r["problem"] = name
            print(f"{name:10s} {r['tool']:8s} {r['build']:8.3f} {r['solve']:8.3f} "
                  f"{r['iterations']:5d} {r['objective']:14.8f}  {r['status']}", flush=True)
        rows += out
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
