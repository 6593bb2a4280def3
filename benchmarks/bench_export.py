"""Exported C against symbody's own compiled right-hand side, and the export time.

1. The 20-link pendulum on a cart (zoo ``n-link-pendulum-on-cart``, n = 20, no force),
   compiled with ``backend="c"``.  The same loop of right-hand-side calls in C, in one
   shared library built here with ``cc -O2``, on the same state:

   * exported: ``mdl_rhs(t, x, p, r, xdot)`` of ``symbody.export_c`` (its kernels and the
     LU/Cholesky written out in the generated file, built with ``cc -std=c99 -O2``);
   * symbody: ``symbody_rhs(plan, t, x, xdot)`` of ``compilation/native_rhs.py`` (the
     model's C kernels, built by ``symbody.compile`` with its own flags, and LAPACK's
     dposv from SciPy), the function simulate's compiled steps call;
   * for reference, ``model.rhs`` from Python (one call).

   Both give the same x' to round-off (checked).  Times are the best of 9 loops of
   ``--calls`` calls each, the two loops taking turns.
2. The Whipple bicycle (zoo ``whipple-bicycle``): the time of ``export_c`` and of
   ``export_fmu`` (generation + building the FMU's binary with cc) on a compiled model.
3. ``--casadi``: every zoo model (and the slider-crank of issue 40 with b < a, from
   tests/systems/slider_crank.py), x' per call from one C loop: ``mdl_rhs`` of
   ``sb.export_c`` against the C that CasADi generates (``CodeGenerator``) from
   ``sb.to_casadi(model).rhs``, both compiled into one library by the same ``cc -O2``,
   at the zoo's initial state; CPU time (``time.process_time``) of loops of ``--calls``
   calls, the two loops interleaved, median of ``--repeats``.  Both x' equal
   ``model.rhs`` (checked).  The walkers are exported with ``events=False``; Bricard's
   loop (a redundant constraint set) cannot be exported; the N-four-bar runs with n = 4
   (CasADi's symbolic solve of the n = 40 system is too large to generate).

Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_export.py [--n 20] [--calls 20000]
    PYTHONPATH=src .venv/bin/python benchmarks/bench_export.py --casadi [--models four-bar ...]
"""

from __future__ import annotations

import argparse
import ctypes
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import symbody as sb
from symbody.compilation.native_rhs import native_rhs

DRIVER = r"""
#include "mdl.h"
typedef int (*native_fn)(void *, double, const double *, double *);

double loop_exported(long n, const double *x, const double *p, double *xd)
{
    double acc = 0.0;
    long i;
    for (i = 0; i < n; i++) { mdl_rhs(0.0, x, p, 0, xd); acc += xd[0]; }
    return acc;
}

double loop_native(long n, void *f, void *plan, const double *x, double *xd)
{
    double acc = 0.0;
    long i;
    native_fn fn = (native_fn)f;
    for (i = 0; i < n; i++) { fn(plan, 0.0, x, xd); acc += xd[0]; }
    return acc;
}
"""


def best_of(fn, repeats: int = 7) -> float:
    return best_of_each([fn], repeats)[0]


def best_of_each(fns: list, repeats: int = 9) -> list[float]:
    """The best time of each function over ``repeats`` rounds, the functions interleaved in
    each round (so a change of load on the shared machine hits both alike)."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def rhs_speed(n: int, calls: int) -> dict:
    zoo = sb.models.get("n-link-pendulum-on-cart", n=n)
    model = sb.compile(zoo.eom, backend="c")
    P = model.constants_array(zoo.constants)
    x = model.state_array(zoo.initial_state) + 0.01
    native = native_rhs(model, P)
    if native is None:
        raise SystemExit("no native right-hand side for this model (C compiler?)")
    with tempfile.TemporaryDirectory() as tmp:
        paths = sb.export_c(model, tmp, name="mdl")
        Path(tmp, "driver.c").write_text(DRIVER)
        lib_path = Path(tmp, "bench.so")
        subprocess.run(["cc", "-std=c99", "-O2", "-fPIC", "-shared", f"-I{tmp}",
                        str(paths.source), str(Path(tmp, "driver.c")), "-o", str(lib_path), "-lm"],
                       check=True)
        lib = ctypes.CDLL(str(lib_path))
        lib.loop_exported.restype = ctypes.c_double
        lib.loop_native.restype = ctypes.c_double
        xd_e, xd_n = np.empty(model.layout.nx), np.empty(model.layout.nx)

        def exported():
            lib.loop_exported(ctypes.c_long(calls), ctypes.c_void_p(x.ctypes.data),
                              ctypes.c_void_p(P.ctypes.data), ctypes.c_void_p(xd_e.ctypes.data))

        def symbody_native():
            lib.loop_native(ctypes.c_long(calls), ctypes.c_void_p(native.function),
                            ctypes.c_void_p(native.plan), ctypes.c_void_p(x.ctypes.data),
                            ctypes.c_void_p(xd_n.ctypes.data))

        t_exp, t_nat = (t / calls for t in best_of_each([exported, symbody_native]))
        ref = model.rhs(0.0, x, P)
        err = max(np.abs(xd_e - ref).max(), np.abs(xd_n - ref).max()) / (1 + np.abs(ref).max())
        t_py = best_of(lambda: [model.rhs(0.0, x, P) for _ in range(1000)]) / 1000
    return {"n": n, "exported_us": t_exp * 1e6, "native_us": t_nat * 1e6, "python_us": t_py * 1e6,
            "ratio": t_exp / t_nat, "max_rel_diff": err}


def whipple_export() -> dict:
    zoo = sb.models.get("whipple-bicycle")
    t0 = time.perf_counter()
    model = sb.compile(zoo.eom)
    t_compile = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        sb.export_c(model, tmp, name="whipple", constants=zoo.constants)
        t_c = time.perf_counter() - t0
        t0 = time.perf_counter()
        sb.export_fmu(model, Path(tmp, "whipple.fmu"), constants=zoo.constants,
                      initial_state=zoo.initial_state)
        t_fmu = time.perf_counter() - t0
    return {"compile_s": t_compile, "export_c_s": t_c, "export_fmu_s": t_fmu}


CASADI_DRIVER = r"""
#include "mdl.h"
#include "cas.h"

double loop_exported(long n, const double *x, const double *p, const double *r, double *xd,
                     int *status)
{
    double acc = 0.0;
    long i;
    int st = 0;
    for (i = 0; i < n; i++) { st |= mdl_rhs(0.0, x, p, r, xd); acc += xd[0]; }
    *status = st;
    return acc;
}

double loop_casadi(long n, const double **arg, double **res, casadi_int *iw, casadi_real *w)
{
    double acc = 0.0;
    long i;
    for (i = 0; i < n; i++) { cas_rhs(arg, res, iw, w, 0); acc += res[0][0]; }
    return acc;
}
"""

#: the zoo's models and their options in the CasADi comparison (bricard: refused by export)
CASADI_MODELS = {name: {} for name in (
    "iftomm-pendulum", "rimless-wheel", "simplest-walker", "two-particle-pendulum",
    "double-rod-pendulum", "chaplygin-sleigh", "flyball-governor", "n-link-pendulum-on-cart",
    "snakeboard", "rolling-disc", "four-bar", "musculoskeletal-arm", "andrews-squeezer",
    "whipple-bicycle")}
CASADI_MODELS["n-four-bar"] = {"n": 4}


def _slider_crank():
    """(name, compiled model, constants, state) of the issue-40 slider-crank (b < a)."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from systems.slider_crank import CONSTANTS, slider_crank_eom, start, state_array

    model = sb.compile(slider_crank_eom("q1"))
    return model, CONSTANTS, state_array(model, start())


def casadi_speed(name: str, calls: int, repeats: int) -> dict:
    """ns per x' of the exported C and of CasADi's generated C of sb.to_casadi(model)."""
    import casadi as ca

    if name == "slider-crank":
        model, constants, x = _slider_crank()
    else:
        zoo = sb.models.get(name, **CASADI_MODELS[name])
        model, constants = sb.compile(zoo.eom), zoo.constants
        x = model.state_array(zoo.initial_state)
    L = model.layout
    P = model.constants_array(constants)
    if L.M:
        x = model.consistent_state(x, P)
    r = np.zeros(max(L.s, 1))
    f = sb.to_casadi(model).rhs
    sx = [f.sx_in(i) for i in range(f.n_in())]
    g = ca.Function("cas_rhs", sx, f.call(sx))
    with tempfile.TemporaryDirectory() as tmp:
        sb.export_c(model, tmp, name="mdl", events=False)
        gen = ca.CodeGenerator("cas.c", {"with_header": True})
        gen.add(g)
        gen.generate(tmp + "/")
        Path(tmp, "driver.c").write_text(CASADI_DRIVER)
        lib_path = Path(tmp, "bench.so")
        subprocess.run(["cc", "-std=c99", "-O2", "-fPIC", "-shared", f"-I{tmp}",
                        str(Path(tmp, "mdl.c")), str(Path(tmp, "cas.c")),
                        str(Path(tmp, "driver.c")), "-o", str(lib_path), "-lm"], check=True)
        lib = ctypes.CDLL(str(lib_path))
    lib.loop_exported.restype = ctypes.c_double
    lib.loop_casadi.restype = ctypes.c_double
    xd_e, xd_c = np.zeros(L.nx), np.zeros(L.nx)
    inputs = [x, P, r[:L.s] if L.s else np.zeros(0)] + [np.zeros(1)] * (g.n_in() - 3)
    arg = (ctypes.c_void_p * g.sz_arg())(*[a.ctypes.data for a in inputs],
                                         *[None] * (g.sz_arg() - len(inputs)))
    res = (ctypes.c_void_p * g.sz_res())(xd_c.ctypes.data, *[None] * (g.sz_res() - 1))
    iw = np.zeros(max(g.sz_iw(), 1), dtype=np.int64)
    w = np.zeros(max(g.sz_w(), 1))
    status = ctypes.c_int(0)

    def exported():
        lib.loop_exported(ctypes.c_long(calls), ctypes.c_void_p(x.ctypes.data),
                          ctypes.c_void_p(P.ctypes.data), ctypes.c_void_p(r.ctypes.data),
                          ctypes.c_void_p(xd_e.ctypes.data), ctypes.byref(status))

    def casadi():
        lib.loop_casadi(ctypes.c_long(calls), arg, res, ctypes.c_void_p(iw.ctypes.data),
                        ctypes.c_void_p(w.ctypes.data))

    times: dict[str, list[float]] = {"exported": [], "casadi": []}
    exported()
    casadi()
    for _ in range(repeats):
        for key, fn in (("exported", exported), ("casadi", casadi)):
            t0 = time.process_time()
            fn()
            times[key].append(time.process_time() - t0)
    ref = model.rhs(0.0, x, P, r[:L.s] if L.s else None)
    err = max(np.abs(xd_e - ref).max(), np.abs(xd_c - ref).max()) / (1 + np.abs(ref).max())
    t_e, t_c = (float(np.median(times[k])) / calls * 1e9 for k in ("exported", "casadi"))
    return {"model": name, "exported_ns": t_e, "casadi_ns": t_c, "ratio": t_e / t_c,
            "max_rel_diff": err, "status": status.value, "states": L.nx}


def casadi_table(names: list[str], calls: int, repeats: int) -> None:
    print(f"{'model':26s} {'nx':>3s} {'exported C':>11s} {'CasADi C':>10s} {'ratio':>6s} "
          f"{'max rel diff':>12s}")
    for name in names:
        r = casadi_speed(name, calls, repeats)
        note = "" if r["status"] == 0 else f"  (status {r['status']})"
        print(f"{name:26s} {r['states']:3d} {r['exported_ns']:8.1f} ns {r['casadi_ns']:7.1f} ns "
              f"{r['ratio']:6.2f} {r['max_rel_diff']:12.1e}{note}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--casadi", action="store_true",
                    help="the exported C against CasADi's generated C on every zoo model")
    ap.add_argument("--models", nargs="*", default=None)
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    if args.casadi:
        names = args.models or [*CASADI_MODELS, "slider-crank"]
        casadi_table(names, args.calls, args.repeats)
        return
    r = rhs_speed(args.n, args.calls)
    print(f"{r['n']}-link pendulum on a cart, x' per call: exported C {r['exported_us']:.2f} us, "
          f"symbody native_rhs {r['native_us']:.2f} us (exported / symbody = {r['ratio']:.2f}), "
          f"model.rhs from Python {r['python_us']:.2f} us; max rel. difference "
          f"{r['max_rel_diff']:.1e}")
    w = whipple_export()
    print(f"Whipple bicycle: sb.compile {w['compile_s']:.2f} s, export_c {w['export_c_s']:.2f} s, "
          f"export_fmu {w['export_fmu_s']:.2f} s")


if __name__ == "__main__":
    main()
