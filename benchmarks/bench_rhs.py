"""Right-hand-side evaluation speed: symbody vs the book's lambdify approach vs PyDy's Cython.

System: the n-link pendulum on a cart (PyDy's example), formed with
sympy.physics.mechanics.KanesMethod and handed to symbody as hand-derived matrices
(kinematic = kd equations, dynamic = (M, -F) with M u' = F).

Compared, in the same process, at the same random states:

* book:   ``sympy.lambdify((q, u, p), (M, F), cse=True)`` + ``numpy.linalg.solve``
          (the seed chapters' eval_rhs);
* symbody: ``symbody.compile(eom).rhs(t, x, p)`` (symengine LLVM kernels, LAPACK solve),
           and ``rhs_many`` per state for a batch of 1000 states;
* PyDy:   ``generate_ode_function(..., generator='cython')`` (build time and evaluation).

Closed loops (``--closed-loop``, also run by default): one rhs call of a model with
dependent coordinates against the book's approach on the same consistent states:

* the seed-001 four-bar: the chapter's ``eval_rhs`` (``sympy.lambdify`` of Mk, gk, Md, gd,
  here with ``cse=True``, + ``numpy.linalg.solve`` twice; derivation in
  ``bench_constraints.book_four_bar``) against the zoo's ``four_bar()`` compiled by symbody
  (unreduced Kane equations: dependent speeds and the augmented system solved numerically);
* a closed chain of 4 bars (ground + 3 rigid bodies, ``symbody.testing.random_model(1,
  n_bodies=3, kind="closed_loop", options=RandomModelOptions(particles=False))``: 3 coordinates, 2 holonomic constraints):
  ``sympy.lambdify((q, u, p), (M_full, F_full), cse=True)`` of the reduced SymPy forms
  (``mass_matrix_full``, ``forcing_full``: the state carries all q and u) +
  ``numpy.linalg.solve``, against ``symbody.compile(eom).rhs``.

Usage::

    .venv/bin/python benchmarks/bench_rhs.py [--n 20] [--no-pydy] [--json out.json]
    .venv/bin/python benchmarks/bench_rhs.py --closed-loop      # only the closed loops

Timings are the best of 7 timed loops (each about 40 ms); compile times are cold (empty
cache directory) and warm (on-disk cache hit, empty in-process cache).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
from systems import n_link_pendulum_on_cart  # noqa: E402


def per_call(fn, min_time: float = 0.2, repeats: int = 7) -> float:
    """Seconds per call of fn(): the best of ``repeats`` timed loops (timeit's advice: the
    minimum is the least disturbed by other processes on a shared machine)."""
    fn()
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= min_time / 5 or number > 1e6:
            break
        number *= 4
    runs = [timeit.timeit(fn, number=number) / number for _ in range(repeats)]
    return float(np.min(runs))


def closed_loops() -> dict:
    """One rhs call on models with dependent coordinates: the book's lambdify approach vs
    symbody, same consistent states (see the module docstring)."""
    import symbody
    from symbody.models import four_bar
    from symbody.testing import RandomModelOptions, random_model
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_constraints import P_VALS, book_four_bar_rhs

    res: dict = {}
    rng = np.random.default_rng(2)

    def record(name, book_rhs, model, P, states, book_states, compare):
        """states: symbody's [q, u_ind]; book_states: the same states in the book's layout."""
        x, xb = states[0], book_states[0]
        err = max(float(np.abs(compare(model.rhs(0.0, xi, P)) - compare(book_rhs(bi))).max())
                  for xi, bi in zip(states, book_states))
        fast = model.rhs_function(P)
        book = ours = bound = float("inf")
        for _ in range(3):      # interleaved rounds, the best of each: a loaded machine's
            book = min(book, per_call(lambda: book_rhs(xb)) * 1e6)     # pauses hit one side
            ours = min(ours, per_call(lambda: model.rhs(0.0, x, P)) * 1e6)
            bound = min(bound, per_call(lambda: fast(0.0, x)) * 1e6)
        res[name] = {"book_rhs_us": book, "symbody_rhs_us": ours, "symbody_bound_rhs_us": bound,
                     "speedup_rhs": book / ours, "speedup_bound": book / bound,
                     "max_abs_difference": err, "states": len(states),
                     "kernels": sorted({k.backend for k in (model.kernels.main, model.kernels.velocity)})}

    # ---- the seed-001 four-bar
    eval_rhs = book_four_bar_rhs()                # the chapter's eval_rhs(t, x, p)

    zoo = four_bar()
    fb = symbody.compile(zoo.eom)
    names = ["l_a", "l_b", "l_c", "l_n", "m", "g"]     # the book's p order
    P = fb.constants_array(dict(zip(names, P_VALS)))
    states = []
    for _ in range(20):
        guess = fb.state_array(zoo.initial_state)
        guess[0] += rng.uniform(-0.3, 0.3)
        x = fb.consistent_state(guess, P)
        x[-1] = rng.uniform(-2, 2)
        states.append(x)
    record("four-bar", eval_rhs, fb, P, states, states, lambda xd: xd)

    # ---- a closed chain of 4 bars (3 bodies and the ground), 2 holonomic constraints
    rm = random_model(1, n_bodies=3, kind="closed_loop", options=RandomModelOptions(particles=False))
    km = rm.form()
    eom = km.to_eom()
    model = symbody.compile(eom)
    consts = list(model.constants)
    P = np.array([float(rm.constants[c]) for c in consts])
    q, uu = list(eom.q), list(eom.u)
    t0 = time.perf_counter()
    eval_full = sm.lambdify((q, uu, consts), (km.mass_matrix_full, km.forcing_full), cse=True)
    res["closed chain book lambdify (s)"] = time.perf_counter() - t0
    N, pp = model.N, model.p

    def book_full(xf):                          # x = [q (N), u (o)] -> [q', u']
        MM, FF = eval_full(xf[:N], xf[N:], P)
        return np.linalg.solve(MM, np.squeeze(FF))

    full_states = []
    for k in range(20):
        st = rm.random_state(k, spread=0.5)
        full_states.append(np.array([st[s] for s in q] + [st[s] for s in uu], dtype=float))
    states = [np.concatenate([xf[:N], xf[N:N + pp]]) for xf in full_states]
    record("closed chain of 4 bars", book_full, model, P, states, full_states, lambda xd: xd[:N + pp])
    res["closed chain sizes"] = {"N": N, "M": model.M, "p": pp, "m": model.m}
    return res


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="number of links (default 20)")
    ap.add_argument("--no-pydy", action="store_true", help="skip PyDy's Cython generator")
    ap.add_argument("--closed-loop", action="store_true", help="only the closed-loop models")
    ap.add_argument("--json", type=str, default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    n = args.n
    res: dict = {"n_links": n, "python": sys.version.split()[0],
                 "load_average_at_start": os.getloadavg()}
    res["closed_loop"] = closed_loops()
    for name, row in res["closed_loop"].items():
        print(f"{name:36s} {row if not isinstance(row, float) else f'{row:.4g}'}", flush=True)
    if args.closed_loop:
        res["load_average_at_end"] = os.getloadavg()
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2))
        return res

    # ------------------------------------------------------------ formation (sympy)
    t0 = time.perf_counter()
    N, q, u, kd, particles, loads, constants = n_link_pendulum_on_cart(n, specified=False)
    km = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=kd)
    km.kanes_equations(particles, loads)
    M, F = km.mass_matrix, km.forcing
    res["formation_sympy_kane_s"] = time.perf_counter() - t0

    rng = np.random.default_rng(0)
    p_vals = np.concatenate([rng.uniform(0.5, 1.5, n + 1), rng.uniform(0.5, 1.5, n), [9.81]])
    X = rng.normal(size=(200, 2 * (n + 1))) * 0.5

    # ------------------------------------------------------------ book approach
    t0 = time.perf_counter()
    eval_MF = sm.lambdify((q, u, constants), (M, F), cse=True)
    res["book_lambdify_s"] = time.perf_counter() - t0

    def book_rhs(t, x, p):
        qv, uv = x[:n + 1], x[n + 1:]
        Mv, Fv = eval_MF(qv, uv, p)
        return np.hstack((uv, np.linalg.solve(Mv, np.squeeze(Fv))))

    x = X[0]
    res["book_rhs_us"] = per_call(lambda: book_rhs(0.0, x, p_vals)) * 1e6

    # ------------------------------------------------------------ symbody
    import symbody
    from symbody.compilation import codegen

    eom = symbody.EquationsOfMotion(q, u, kinematic=kd, dynamic=(M, -F), constants=constants)
    old_cache = os.environ.get("SYMBODY_CACHE_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SYMBODY_CACHE_DIR"] = tmp
        codegen._MEMORY.clear()
        t0 = time.perf_counter()
        model = symbody.compile(eom)
        res["symbody_compile_cold_s"] = time.perf_counter() - t0
        codegen._MEMORY.clear()
        t0 = time.perf_counter()
        model = symbody.compile(eom)
        res["symbody_compile_warm_s"] = time.perf_counter() - t0
    if old_cache is None:
        os.environ.pop("SYMBODY_CACHE_DIR", None)
    else:
        os.environ["SYMBODY_CACHE_DIR"] = old_cache
    res["symbody_backend"] = model.backend
    err = max(np.abs(model.rhs(0.0, xi, p_vals) - book_rhs(0.0, xi, p_vals)).max() for xi in X[:20])
    res["max_abs_difference_vs_book"] = float(err)
    res["symbody_rhs_us"] = per_call(lambda: model.rhs(0.0, x, p_vals)) * 1e6
    Xbig = np.tile(X, (5, 1))
    res["symbody_rhs_many_per_state_us"] = per_call(lambda: model.rhs_many(0.0, Xbig, p_vals)) \
        * 1e6 / len(Xbig)
    res["speedup_symbody_vs_book"] = res["book_rhs_us"] / res["symbody_rhs_us"]

    # ------------------------------------------------------------ PyDy (Cython)
    if not args.no_pydy:
        try:
            from systems.benchmark_systems import pydy_cython_rhs
            f_pydy, res["pydy_cython_build_s"] = pydy_cython_rhs(M, F, q, u, constants)
            err = max(np.abs(f_pydy(xi, 0.0, p_vals) - book_rhs(0.0, xi, p_vals)).max()
                      for xi in X[:20])
            res["pydy_max_abs_difference_vs_book"] = float(err)
            res["pydy_cython_rhs_us"] = per_call(lambda: f_pydy(x, 0.0, p_vals)) * 1e6
        except Exception as exc:  # report, do not fail the benchmark
            res["pydy_error"] = f"{type(exc).__name__}: {exc}"

    res["load_average_at_end"] = os.getloadavg()
    for k, v in res.items():
        if k != "closed_loop":
            print(f"{k:36s} {v:.4g}" if isinstance(v, float) else f"{k:36s} {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
