"""Trajectory optimization: symbody.optimize against opty and CasADi on the same NLPs.

Problems (:mod:`symbody.optimize.examples`, the same equations, grid, bounds, instance
constraints, objective quadrature and initial guess for all three tools):

* ``pendulum``   opty's gallery "fixed duration pendulum swing up", backward Euler, N = 501;
* ``cart-pole``  Kelly (2017) cart-pole swing-up, midpoint, N = 101;
* ``cart-10``    the 10-link pendulum on a cart swung up (scaling row; ``--links 10``).

For each: build time (problem to a solvable NLP: symbody's symbolic derivatives and compiled
kernels — cold kernel cache unless ``--warm`` —, opty's Cython compilation, CasADi's graph and
``nlpsol``), solve time, IPOPT iterations, optimum.  symbody and CasADi use IPOPT with exact
Hessians; opty has none (IPOPT's limited-memory quasi-Newton).  opty and symbody's
``solver="cyipopt"`` call cyipopt-wheels' bundled IPOPT 3.14.11 / MUMPS 5.5.1; CasADi and
symbody's ``solver="ipopt-casadi"`` (the default: symbody's compiled derivative kernels in
CasADi's IPOPT 3.14.19 / MUMPS 5.8.2) and ``"ipopt-casadi-sx"`` (CasADi's AD of symbody's
blocks as SX) call CasADi's.  ``--solvers`` picks symbody's solvers, ``--repeat k`` solves
k times (medians of wall and CPU seconds, for a loaded machine), ``setup`` is the one-off
construction of CasADi's solver object inside symbody's first solve.  ``--coarse 26 51``
starts every tool from one guess made by a continuation in the grid (the problem solved by
symbody on 26 nodes, then on 51 from it, interpolated to the benchmark's nodes; not timed):
the 10-link cart's local optima depend on the start.

Usage (opty declares a dependency on ``cyipopt``, whose source build needs a system IPOPT:
install it with ``--no-deps`` next to cyipopt-wheels, which provides the same ``cyipopt``
module)::

    .venv/bin/python -m pip install --pre cyipopt-wheels
    .venv/bin/python -m pip install casadi opty cython --no-deps
    .venv/bin/python benchmarks/bench_optimize.py [--problems pendulum cart-pole cart-10]
                                                  [--solvers ipopt-casadi cyipopt]
                                                  [--repeat 3] [--no-opty] [--json out.json]
                                                  [--coarse 26 51]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


def _timed(call, repeat):
    """(last result, median wall s, median CPU s) of ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = call()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return out, statistics.median(walls), statistics.median(cpus)


def _on_nodes(problem, res, num_nodes):
    """A result's states and inputs interpolated linearly to ``num_nodes`` equal nodes."""
    tr = res.trajectory
    tn = np.linspace(tr.t[0], tr.t[-1], num_nodes)
    start = {}
    for j, c in enumerate(problem.coordinates):
        start[c] = np.interp(tn, tr.t, tr.q[:, j])
    for j, c in enumerate(problem.speeds):
        start[c] = np.interp(tn, tr.t, tr.u[:, j])
    for j, c in enumerate(problem.specifieds):
        start[c] = np.interp(tn, tr.t, tr.specified_values[:, j])
    return start


def coarse_start(name, links, grids):
    """A continuation in the grid: the problem solved on ``grids[0]`` nodes (symbody's
    default solver, from the problem's own guess), then on each next grid from the previous
    solution interpolated, the last one interpolated to the benchmark's nodes -> (guess
    mapping of arrays, the last coarse result): the one initial guess all tools start from."""
    builder, kw = problem_spec(name, links)
    guess, res = None, None
    sizes = list(grids) + [kw["num_nodes"]]
    for k, nxt in zip(sizes[:-1], sizes[1:]):
        coarse, own = builder(**dict(kw, num_nodes=k))
        res = coarse.solve(own if guess is None else guess, progress=False)
        print(f"           continuation: {k} nodes, {res.iterations} iterations, objective "
              f"{res.objective:.8f} ({res.message})", flush=True)
        guess = _on_nodes(coarse, res, nxt)
    return guess, res


def run_symbody(name, links, warm, solvers=("ipopt-casadi",), repeat=1, start=None):
    builder, kw = problem_spec(name, links)
    if not warm:
        os.environ["SYMBODY_CACHE_DIR"] = tempfile.mkdtemp(prefix="symbody-bench-opt-")
        from symbody.compilation import codegen
        codegen._MEMORY.clear()
    t0 = time.perf_counter()
    problem, guess = builder(**kw)
    build = time.perf_counter() - t0
    if start is not None:
        guess = start
    problem.initial_vector(guess)            # (imports symbody.analysis once, outside the timing)
    rows = []
    for solver in solvers:
        first = problem.solve(guess, progress=False, solver=solver)
        setup = float(first.info.get("setup_time", 0.0))
        res, wall, cpu = _timed(lambda s=solver: problem.solve(guess, progress=False, solver=s),
                                repeat)
        rows.append(dict(tool=f"symbody ({solver})", build=build, setup=setup, solve=wall,
                         cpu=cpu, iterations=res.iterations, objective=res.objective,
                         status=res.status, n=problem.nlp.n, m=problem.nlp.m))
    return rows, problem, guess


def run_opty(problem, guess, repeat=1):
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

    def solve_once():
        prob.obj_value.clear()
        return prob.solve(w0)
    (sol, info), solve, cpu = _timed(solve_once, repeat)
    return dict(tool="opty", build=build, setup=0.0, solve=solve, cpu=cpu,
                iterations=len(prob.obj_value) - 1, objective=float(info["obj_val"]),
                status=int(info["status"]))


def run_casadi(problem, guess, repeat=1):
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
    sol, solve, cpu = _timed(lambda: solver(x0=w0, lbx=lb, ubx=ub, lbg=0, ubg=0), repeat)
    st = solver.stats()
    W = np.asarray(sol["x"]).ravel()
    start = {x: W[j * N:(j + 1) * N] for j, x in enumerate(states + inputs)}
    return dict(tool="casadi", build=build, setup=0.0, solve=solve, cpu=cpu,
                iterations=int(st["iter_count"]),
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
    return dict(tool="symbody from casadi's optimum", build=0.0, setup=0.0, solve=res.solve_time,
                cpu=float("nan"), iterations=res.iterations, objective=res.objective,
                status=res.status)


def _summary(name, out):
    """The issue's ratios from one problem's rows (same run)."""
    ca = next(r for r in out if r["tool"] == "casadi")
    opty = next((r for r in out if r["tool"] == "opty"), None)
    for r in out:
        if not r["tool"].startswith("symbody ("):
            continue
        line = (f"  {name}: {r['tool']} solve / CasADi's: wall {r['solve'] / ca['solve']:.2f}x, "
                f"CPU {r['cpu'] / ca['cpu']:.2f}x")
        if opty is not None:
            total = r["build"] + r["setup"] + r["solve"]
            line += (f"; build+solve {total:.2f} s vs opty's {opty['build'] + opty['solve']:.2f} s"
                     f" = {(opty['build'] + opty['solve']) / total:.1f}x faster")
        line += f"; optimum - CasADi's {r['objective'] - ca['objective']:+.1e}"
        print(line, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", nargs="+", default=["pendulum", "cart-pole"])
    ap.add_argument("--solvers", nargs="+", default=["ipopt-casadi", "cyipopt"],
                    help="symbody's solvers (solve(..., solver=))")
    ap.add_argument("--links", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=1, help="solves per tool (medians)")
    ap.add_argument("--no-opty", action="store_true")
    ap.add_argument("--warm", action="store_true", help="keep symbody's kernel cache")
    ap.add_argument("--coarse", type=int, nargs="+", default=[], metavar="N",
                    help="start every tool from the problem solved on N nodes first (then on "
                         "each next N; interpolated: a continuation in the grid)")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print(f"{'problem':10s} {'tool':28s} {'build s':>8s} {'setup s':>8s} {'solve s':>8s} "
          f"{'CPU s':>7s} {'iter':>5s} {'objective':>14s}  status")
    for name in args.problems:
        start = None
        if args.coarse:
            t0 = time.perf_counter()
            start, res = coarse_start(name, args.links, args.coarse)
            print(f"{name:10s} start: solved on {args.coarse} nodes in "
                  f"{time.perf_counter() - t0:.2f} s (build and solve, not counted below), "
                  f"{res.iterations} iterations, objective {res.objective:.8f}", flush=True)
        out, problem, guess = run_symbody(name, args.links, args.warm, args.solvers, args.repeat,
                                          start)
        if not args.no_opty:
            out.append(run_opty(problem, guess))
        ca_row, ca_start = run_casadi(problem, guess, args.repeat)
        out.append(ca_row)
        if abs(ca_row["objective"] - out[0]["objective"]) > 1e-6 * abs(ca_row["objective"]):
            out.append(cross_check(problem, ca_start))
        for r in out:
            r["problem"] = name
            print(f"{name:10s} {r['tool']:28s} {r['build']:8.3f} {r['setup']:8.3f} "
                  f"{r['solve']:8.3f} {r['cpu']:7.3f} {r['iterations']:5d} "
                  f"{r['objective']:14.8f}  {r['status']}", flush=True)
        _summary(name, out)
        rows += out
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
