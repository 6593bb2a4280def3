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

Usage::

    .venv/bin/python benchmarks/bench_rhs.py [--n 20] [--no-pydy] [--json out.json]

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


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="number of links (default 20)")
    ap.add_argument("--no-pydy", action="store_true", help="skip PyDy's Cython generator")
    ap.add_argument("--json", type=str, default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    n = args.n
    res: dict = {"n_links": n, "python": sys.version.split()[0]}

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
            from pydy.codegen.ode_function_generators import generate_ode_function
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                cwd = os.getcwd()
                os.chdir(tmp)
                try:
                    f_pydy = generate_ode_function(F, q, u, constants, mass_matrix=M,
                                                   coordinate_derivatives=sm.Matrix(u),
                                                   generator="cython")
                finally:
                    os.chdir(cwd)
                res["pydy_cython_build_s"] = time.perf_counter() - t0
                err = max(np.abs(f_pydy(xi, 0.0, p_vals) - book_rhs(0.0, xi, p_vals)).max()
                          for xi in X[:20])
                res["pydy_max_abs_difference_vs_book"] = float(err)
                res["pydy_cython_rhs_us"] = per_call(lambda: f_pydy(x, 0.0, p_vals)) * 1e6
        except Exception as exc:  # report, do not fail the benchmark
            res["pydy_error"] = f"{type(exc).__name__}: {exc}"

    for k, v in res.items():
        print(f"{k:36s} {v:.4g}" if isinstance(v, float) else f"{k:36s} {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
