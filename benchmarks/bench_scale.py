"""Scale: the n-link pendulum on a cart from equations to a simulated trajectory, n = 10 .. 100.

For each n, in a fresh Python process with an empty kernel cache (a new temporary
``SYMBODY_CACHE_DIR``), the stages of the pipeline are timed:

* formation   symbody.KanesMethod(...).kanes_equations(particles, loads)
* to_eom      km.to_eom()
* compile     symbody.compile(eom) (symbolic conversion; machine code is made lazily)
* first rhs   the first model.rhs call (code generation: straight-line program, C compiler)
* simulate    symbody.simulate over 10 s from 5 degrees off the upright equilibrium
              (default tolerances)
* peak memory (the process's maximum resident set size) and the kernel's size.

The growth exponent b of ``time ~ n^b`` is fitted by least squares on log-log axes over
n >= 20.  Anchors, in the same run:

* the main kernel built by generated C and by symengine's LLVM at ``--backend-n`` (20, 30);
* one rhs call at ``--book-n`` (20) against the seed chapters' approach,
  ``sympy.lambdify((q, u, p), (M, F), cse=True)`` + ``numpy.linalg.solve``;
* one rhs call at ``--pydy-n`` (40) against PyDy's ``generate_ode_function(generator="cython")``
  (its build time too);
* the Whipple bicycle pipeline (build, compile, eigenvalues at 11 speeds) against SymPy on a
  cold cache (``bench_linearize.py``, each pipeline in its own process);
* ``import symbody`` against ``import sympy.physics.mechanics`` (best of 7 fresh processes,
  ``python -X importtime``).

Usage::

    .venv/bin/python benchmarks/bench_scale.py                 # full: n = 10 20 40 80 100, all anchors
    .venv/bin/python benchmarks/bench_scale.py --quick         # n = 10 20, no PyDy, no SymPy bicycle
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))                      # the shared benchmark systems


def per_call(fn, min_time: float = 0.2, repeats: int = 7) -> float:
    """Seconds per call: the best of ``repeats`` timed loops (least disturbed by other load)."""
    fn()
    number = 1
    while timeit.timeit(fn, number=number) < min_time / 5 and number < 1e6:
        number *= 4
    return min(timeit.timeit(fn, number=number) / number for _ in range(repeats))


def _system(n: int):
    from systems import n_link_pendulum_on_cart
    return n_link_pendulum_on_cart(n, specified=False)


def _numbers(n: int, model):
    """PyDy's parameters (masses 0.01/n, lengths 1/n, g = 9.81) and the zoo's initial state."""
    import numpy as np
    values = {}
    for c in model.constants:
        name = str(c)
        values[c] = 9.81 if name == "g" else (0.01 / n if name.startswith("m") else 1.0 / n)
    p = np.array([values[c] for c in model.constants])
    x0 = np.zeros(len(model.states))
    for i in range(1, n + 1):
        x0[i] = math.pi / 2 + (-1) ** (i + 1) * math.radians(5.0)
    return p, x0


# ------------------------------------------------------------------ one size, in a child process
def stage_chain(n: int, simulate: bool) -> dict:
    import resource

    import numpy as np

    import symbody as sb
    res: dict = {"n": n}
    N, q, u, kd, particles, loads, constants = _system(n)
    res["load_average"] = os.getloadavg()[0]
    cpu0, children0 = time.process_time(), os.times()
    t0 = time.perf_counter()
    km = sb.KanesMethod(N, q, u, kd_eqs=kd)
    km.kanes_equations(particles, loads)
    t1 = time.perf_counter()
    eom = km.to_eom()
    t2 = time.perf_counter()
    model = sb.compile(eom)
    t3 = time.perf_counter()
    p, x0 = _numbers(n, model)
    xd = model.rhs(0.0, x0, p)
    t4 = time.perf_counter()
    children1 = os.times()
    res.update(formation_s=t1 - t0, to_eom_s=t2 - t1, compile_s=t3 - t2, first_rhs_s=t4 - t3)
    # CPU seconds from the equations to the first rhs call: this process plus the C compilers
    # it ran (under load the wall-clock times above include waiting for a core)
    res["cpu_to_first_rhs_s"] = time.process_time() - cpu0
    res["compiler_cpu_s"] = (children1.children_user + children1.children_system
                             - children0.children_user - children0.children_system)
    res["kernel_backend"] = model.kernels.main.backend
    res["rhs_finite"] = bool(np.isfinite(xd).all())
    if simulate:
        t5 = time.perf_counter()
        sol = sb.simulate(model, (0.0, 10.0), x0, p)
        res["simulate_10s_s"] = time.perf_counter() - t5
        res["simulate_status"] = str(getattr(sol, "status", ""))
        res["simulate_steps"] = int(len(sol.t))
        res["simulate_nfev"] = int(sol.nfev)           # right-hand-side evaluations
    res["rhs_call_us"] = per_call(lambda: model.rhs(0.0, x0, p), min_time=0.1, repeats=5) * 1e6
    res["total_s"] = sum(res[k] for k in ("formation_s", "to_eom_s", "compile_s", "first_rhs_s",
                                          "simulate_10s_s") if k in res)
    res["peak_memory_MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return res


def stage_book(n: int) -> dict:
    """One rhs call: symbody vs sympy.lambdify(cse=True) + numpy.linalg.solve, same states."""
    import numpy as np
    import sympy as sm

    import symbody as sb
    N, q, u, kd, particles, loads, constants = _system(n)
    km = sb.KanesMethod(N, q, u, kd_eqs=kd)
    km.kanes_equations(particles, loads)
    model = sb.compile(km.to_eom(), constants=constants)
    M, F = km.mass_matrix, km.forcing              # SymPy's forms (equal to SymPy's own)
    t0 = time.perf_counter()
    eval_MF = sm.lambdify((q, u, constants), (M, F), cse=True)
    build = time.perf_counter() - t0

    def book_rhs(t, x, p):
        Mv, Fv = eval_MF(x[:n + 1], x[n + 1:], p)
        return np.hstack((x[n + 1:], np.linalg.solve(Mv, np.squeeze(Fv))))

    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(0.5, 1.5, len(constants) - 1), [9.81]])
    X = rng.normal(size=(20, 2 * (n + 1))) * 0.5
    err = max(float(np.abs(model.rhs(0.0, x, p) - book_rhs(0.0, x, p)).max()) for x in X)
    x = X[0]
    book = per_call(lambda: book_rhs(0.0, x, p)) * 1e6
    ours = per_call(lambda: model.rhs(0.0, x, p)) * 1e6
    return {"n": n, "book_build_s": build, "book_rhs_us": book, "symbody_rhs_us": ours,
            "speedup": book / ours, "max_abs_difference": err}


def stage_pydy(n: int) -> dict:
    """One rhs call: symbody vs PyDy's Cython right-hand side (and PyDy's build time)."""
    import numpy as np

    import symbody as sb
    N, q, u, kd, particles, loads, constants = _system(n)
    km = sb.KanesMethod(N, q, u, kd_eqs=kd)
    km.kanes_equations(particles, loads)
    model = sb.compile(km.to_eom(), constants=constants)
    M, F = km.mass_matrix, km.forcing
    from systems.benchmark_systems import pydy_cython_rhs
    f_pydy, build = pydy_cython_rhs(M, F, q, u, constants)
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(0.5, 1.5, len(constants) - 1), [9.81]])
    X = rng.normal(size=(10, 2 * (n + 1))) * 0.5
    err = max(float(np.abs(model.rhs(0.0, x, p) - f_pydy(x, 0.0, p)).max()) for x in X)
    x = X[0]
    theirs = per_call(lambda: f_pydy(x, 0.0, p)) * 1e6
    ours = per_call(lambda: model.rhs(0.0, x, p)) * 1e6
    return {"n": n, "pydy_build_s": build, "pydy_rhs_us": theirs, "symbody_rhs_us": ours,
            "speedup": theirs / ours, "max_abs_difference": err}


def stage_backends(n: int) -> dict:
    """The chain's main kernel (q', M_d, -g_d) built by each compiled backend: build + first
    call, and one call, from the same symengine expressions (cold: no cache)."""
    import numpy as np

    import symbody as sb
    from symbody.compilation import c_kernels, codegen
    N, q, u, kd, particles, loads, constants = _system(n)
    km = sb.KanesMethod(N, q, u, kd_eqs=kd)
    km.kanes_equations(particles, loads)
    eom = km.to_eom()
    args = [eom.t, *eom.q, *eom.u, *eom.specifieds, *eom.constants, *eom.udot]
    exprs = list(eom.qdot_solution) + list(eom.dynamic_mass) + [-e for e in eom.dynamic_rest]
    se_exprs, _ = codegen._to_symengine(args, exprs, "main")
    t0 = time.perf_counter()
    program = c_kernels.straight_line_program(se_exprs, len(args))
    res = {"n": n, "program_s": time.perf_counter() - t0, "operations": len(program)}
    z = np.random.default_rng(1).uniform(0.5, 1.5, len(args))
    values = {}
    for backend in ("c", "llvm"):
        codegen._MEMORY.clear()
        t0 = time.perf_counter()
        kernel = codegen.compile_kernel(args, exprs, backend=backend, cache=False)
        values[backend] = kernel(z)
        res[f"{backend}_build_s"] = time.perf_counter() - t0
        out = np.empty(kernel.nout)
        res[f"{backend}_call_us"] = per_call(lambda k=kernel, o=out: k.into(z, o)) * 1e6
    scale = float(np.abs(values["llvm"]).max())
    res["max_relative_difference"] = float(np.abs(values["c"] - values["llvm"]).max()) / scale
    return res


STAGES = {"chain": stage_chain, "book": stage_book, "pydy": stage_pydy, "backends": stage_backends}


def _child(stage: str, n: int, extra: list[str] | None = None, timeout: float = 1200) -> dict:
    """Run one stage in a fresh process with an empty kernel cache; its JSON result."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        env = dict(os.environ, SYMBODY_CACHE_DIR=str(Path(tmp, "cache")), SYMBODY_QUIET="1")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
        out = Path(tmp, "out.json")
        cmd = [sys.executable, __file__, "--stage", stage, "--n", str(n), "--out", str(out), *(extra or [])]
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            return {"n": n, "error": f"timed out after {timeout:.0f} s"}
        if r.returncode != 0 or not out.exists():
            return {"n": n, "error": (r.stderr or r.stdout)[-800:], "wall_s": time.perf_counter() - t0}
        return json.loads(out.read_text())


def import_times(repeats: int = 7) -> dict:
    """Best-of-``repeats`` cumulative import time (us) from ``python -X importtime``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    res = {}
    for module in ("sympy.physics.mechanics", "symbody"):
        best = math.inf
        for _ in range(repeats):
            r = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                               env=env, capture_output=True, text=True)
            last = [ln for ln in r.stderr.splitlines() if ln.rstrip().endswith(f"| {module}")][-1]
            best = min(best, int(last.split("|")[1]))
        res[module] = best / 1e6
    res["ratio"] = res["symbody"] / res["sympy.physics.mechanics"]
    # paired, less sensitive to load: in one process, import sympy.physics.mechanics, then
    # symbody; the ratio is (mechanics + what symbody adds) / mechanics, best of ``repeats``
    code = ("import time; t0 = time.perf_counter(); import sympy.physics.mechanics; "
            "t1 = time.perf_counter(); import symbody; t2 = time.perf_counter(); print(t1 - t0, t2 - t1)")
    base, extra = math.inf, math.inf
    for _ in range(repeats):
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        a, b = (float(v) for v in r.stdout.split())
        base, extra = min(base, a), min(extra, b)
    res["paired_mechanics_s"], res["paired_symbody_extra_s"] = base, extra
    res["paired_ratio"] = (base + extra) / base
    return res


def bicycle(skip_sympy: bool) -> dict:
    """The Whipple bicycle pipelines of bench_linearize.py (each in its own process, cold cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "lin.json")
        cmd = [sys.executable, str(HERE / "bench_linearize.py"), "--json", str(out)]
        if skip_sympy:
            cmd.append("--skip-sympy")
        env = dict(os.environ, SYMBODY_CACHE_DIR=str(Path(tmp, "cache")), SYMBODY_QUIET="1")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0 or not out.exists():
            return {"error": (r.stderr or r.stdout)[-800:]}
        return json.loads(out.read_text())


def fit_exponent(rows: list[dict], key: str) -> float | None:
    pts = [(math.log(r["n"]), math.log(r[key])) for r in rows if r.get(key) and r["n"] >= 20]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 10 20, no PyDy, no SymPy bicycle (make bench)")
    ap.add_argument("--sizes", type=int, nargs="*", default=None, help="numbers of links")
    ap.add_argument("--book-n", type=int, default=20, help="size of the book comparison (0 skips it)")
    ap.add_argument("--backend-n", type=int, nargs="*", default=None,
                    help="sizes at which the main kernel is built by both C and LLVM (default 20 30)")
    ap.add_argument("--pydy-n", type=int, default=40, help="0 to skip PyDy")
    ap.add_argument("--skip-bicycle", action="store_true")
    ap.add_argument("--skip-chain", action="store_true", help="only the anchors (C vs LLVM, book, PyDy, "
                    "bicycle, import)")
    ap.add_argument("--json", type=Path, default=None, help="write all results here")
    ap.add_argument("--stage", choices=sorted(STAGES), help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--no-simulate", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.stage:                                     # child process
        res = stage_chain(args.n, not args.no_simulate) if args.stage == "chain" else STAGES[args.stage](args.n)
        args.out.write_text(json.dumps(res))
        return res

    sizes = args.sizes or ([10, 20] if args.quick else [10, 20, 40, 80, 100])
    if args.backend_n is None:
        args.backend_n = [10] if args.quick else [20, 30]
    load = os.getloadavg()
    results: dict = {"python": sys.version.split()[0], "load_average_at_start": load, "chain": []}
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (2-core machine)", flush=True)
    cols = ["formation_s", "to_eom_s", "compile_s", "first_rhs_s", "simulate_10s_s", "total_s",
            "peak_memory_MB", "rhs_call_us", "cpu_to_first_rhs_s", "compiler_cpu_s", "load_average"]
    print("n     " + "  ".join(f"{c:>14s}" for c in cols) + "  backend", flush=True)
    for n in [] if args.skip_chain else sizes:
        row = _child("chain", n)
        results["chain"].append(row)
        if "error" in row:
            print(f"{n:<5d} error: {row['error']}", flush=True)
            continue
        print(f"{n:<5d} " + "  ".join(f"{row.get(c, float('nan')):14.3f}" for c in cols)
              + f"  {row['kernel_backend']}", flush=True)
    ok = [r for r in results["chain"] if "error" not in r]
    for r in ok:
        r["equations_to_first_rhs_s"] = r["formation_s"] + r["to_eom_s"] + r["compile_s"] + r["first_rhs_s"]
    results["growth_exponent"] = {k: fit_exponent(ok, k) for k in
                                  ("formation_s", "equations_to_first_rhs_s", "total_s", "rhs_call_us")}
    print("fitted exponents b (time ~ n^b, n >= 20):",
          ", ".join(f"{k} {v:.2f}" for k, v in results["growth_exponent"].items() if v is not None), flush=True)

    results["backends"] = [_child("backends", n) for n in args.backend_n]
    for row in results["backends"]:
        print(f"main kernel, C vs LLVM: {json.dumps(row)}", flush=True)
    if args.book_n:                                        # 0 skips the book's stage
        results["book"] = _child("book", args.book_n)
        print(f"book (lambdify + solve) at n = {args.book_n}: {json.dumps(results['book'])}", flush=True)
    if args.pydy_n and not args.quick:
        results["pydy"] = _child("pydy", args.pydy_n)
        print(f"PyDy Cython at n = {args.pydy_n}: {json.dumps(results['pydy'])}", flush=True)
    if not args.skip_bicycle:
        results["bicycle"] = bicycle(skip_sympy=args.quick)
        print("bicycle: " + json.dumps(results["bicycle"]), flush=True)
    results["import"] = import_times()
    print("import: " + json.dumps(results["import"]), flush=True)
    results["load_average_at_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
