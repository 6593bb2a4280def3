"""Linearizing the Whipple bicycle: symbody against SymPy's KanesMethod + Linearizer.

Three pipelines on the same bicycle (``symbody.models.whipple_bicycle_system``:
SymPy's test_kane3 formulation plus the rear-contact position), each in a fresh
Python process so that no cache is shared:

* sympy      sympy.physics.mechanics.KanesMethod(constraint_solver="CRAMER"), then
             ``km.linearize(A_and_B=True, linear_solver="CRAMER")`` about the upright
             straight-ahead motion at a symbolic forward speed v (as SymPy's own
             test_kane3 does), then A at 11 speeds and the eigenvalues of the
             lean/steer block;
* numeric    symbody.KanesMethod -> to_eom -> symbody.compile -> symbody.linearize at
             the 11 speeds -> eigenvalues (also without the compile step:
             symbody.linearize accepts the EquationsOfMotion directly);
* symbolic   symbody.KanesMethod -> km.linearize(A_and_B=True) with the same symbolic
             operating point; A evaluated at the 11 speeds and compared with SymPy's.

Usage::

    .venv/bin/python benchmarks/bench_linearize.py            # all three (SymPy takes minutes)
    .venv/bin/python benchmarks/bench_linearize.py --skip-sympy
    .venv/bin/python benchmarks/bench_linearize.py --backends 5   # the numeric pipeline only

``--backends K``: the numeric pipeline (cold kernel cache, fresh process) K times with each
of the default backend (generated C; the dynamics kernels built at first use), the default
as it was before issue 40 ("auto, eager": every model kernel's compiler run started by
``compile``, the dynamics' too, which a linearization never evaluates) and symengine's
LLVM, interleaved; medians of the wall time and of the CPU time of the process and its
compiler processes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPEEDS = [float(v) for v in range(11)]
LEAN_STEER = [3, 4, 5, 7]      # roll, steer, u_roll, u_steer in [q_ind, u_ind]


def _symbolic_op(ex, v):
    S = ex["symbols"]
    u_roll, u_rear, u_steer, u_yaw, u_pitch, u_front = ex["u"]
    op = {q: 0 for q in ex["q"]}
    op.update({u_roll: 0, u_steer: 0, u_yaw: 0, u_pitch: 0, u_rear: v / S["r_R"],
               u_front: v / S["r_F"]})
    op.update({u.diff(): 0 for u in ex["u"]})
    return op


def _evaluate(M, values: dict) -> np.ndarray:
    """A symbolic matrix at numbers, through symengine (memoized conversion)."""
    import symengine as se

    from symbody.formulation.symbolic_linearization import to_symengine

    subs = {se.sympify(k): se.RealDouble(float(x)) for k, x in values.items()}
    return np.array([float(e.xreplace(subs)) for e in to_symengine(list(M))]).reshape(M.shape)


def stage_sympy(out: Path) -> None:
    import sympy as sm
    from sympy.physics.mechanics import KanesMethod

    from symbody.models.whipple_bicycle import benchmark_to_constants, whipple_bicycle_system
    res: dict = {}
    t0 = time.perf_counter()
    system, ex = whipple_bicycle_system()
    t1 = time.perf_counter()
    km = KanesMethod(system.frame, system.q_ind, system.u_ind, kd_eqs=system.kd_eqs,
                     q_dependent=system.q_dep, configuration_constraints=system.configuration_constraints,
                     u_dependent=system.u_dep, velocity_constraints=system.velocity_constraints,
                     constraint_solver="CRAMER")
    km.kanes_equations(system.bodies, system.loads)
    t2 = time.perf_counter()
    v = sm.Symbol("v")
    op = _symbolic_op(ex, v)
    A, B, r = km.linearize(A_and_B=True, op_point=op, linear_solver="CRAMER")
    t3 = time.perf_counter()
    S = ex["symbols"]
    consts = {S[k]: val for k, val in benchmark_to_constants().items()}
    As = A.xreplace(consts)
    mats, eigs = [], []
    for speed in SPEEDS:
        An = np.array(As.xreplace({v: speed}).evalf(), dtype=float)
        mats.append(An)
        eigs.append(np.linalg.eigvals(An[np.ix_(LEAN_STEER, LEAN_STEER)]))
    t4 = time.perf_counter()
    res.update(kinematics=t1 - t0, formation=t2 - t1, linearize=t3 - t2, evaluate=t4 - t3,
               total=t4 - t0, ops=int(sum(sm.count_ops(e) for e in A)))
    # symbody's symbolic linearizer applied to SymPy's own KanesMethod object
    from symbody.formulation.symbolic_linearization import linearize_kane
    t5 = time.perf_counter()
    A2, _, _ = linearize_kane(km, op_point=op, A_and_B=True)
    res["symbody_on_sympy_km"] = time.perf_counter() - t5
    mats2 = [_evaluate(A2, {**consts, v: speed}) for speed in SPEEDS]
    np.savez(out.with_suffix(".npz"), A=np.array(mats), A2=np.array(mats2),
             eig=np.array(eigs))
    out.write_text(json.dumps(res))


def _cpu_with_children() -> float:
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def stage_numeric(out: Path) -> None:
    os.environ["SYMBODY_CACHE_DIR"] = tempfile.mkdtemp(prefix="symbody-bench-cache-")
    import symbody as sb
    backend = os.environ.get("BENCH_BACKEND", "auto")
    if backend == "auto, eager":      # before issue 40: every model kernel started at compile
        from symbody.compilation import kernel_assembly
        compile_kernel = kernel_assembly.compile_kernel

        def eager(*args, background=None, **kwargs):
            return compile_kernel(*args, background=None, **kwargs)
        kernel_assembly.compile_kernel = eager
    from symbody.models.whipple_bicycle import (
        benchmark_to_constants,
        lean_steer_states,
        whipple_bicycle_system,
    )
    res: dict = {}
    t0 = time.perf_counter()
    system, ex = whipple_bicycle_system()
    t1 = time.perf_counter()
    km = sb.KanesMethod(system.frame, system.q_ind, system.u_ind, kd_eqs=system.kd_eqs,
                        q_dependent=system.q_dep,
                        configuration_constraints=system.configuration_constraints,
                        u_dependent=system.u_dep, velocity_constraints=system.velocity_constraints)
    km.kanes_equations(system.bodies, system.loads)
    t2 = time.perf_counter()
    eom = km.to_eom()
    t3 = time.perf_counter()
    c3 = _cpu_with_children()
    model = sb.compile(eom, backend="llvm" if backend == "llvm" else "auto")
    t4 = time.perf_counter()
    S = ex["symbols"]
    p = {S[k]: val for k, val in benchmark_to_constants().items()}
    idx, _ = lean_steer_states(eom)

    def sweep(target):
        mats, eigs = [], []
        for speed in SPEEDS:
            op = {s: 0.0 for s in eom.q}
            u_rear = [u for u in eom.u_ind if str(u.func) == "u_rear"][0]
            op.update({u: 0.0 for u in eom.u_ind})
            op[u_rear] = speed / p[S["r_R"]]
            A, _ = sb.linearize(target, op, p)
            mats.append(A)
            eigs.append(np.linalg.eigvals(A[np.ix_(idx, idx)]))
        return mats, eigs

    mats, eigs = sweep(model)
    t5 = time.perf_counter()
    c5 = _cpu_with_children()
    sweep(model)
    t6 = time.perf_counter()
    res.update(kinematics=t1 - t0, formation=t2 - t1, to_eom=t3 - t2, compile=t4 - t3,
               linearize_11=t5 - t4, linearize_11_again=t6 - t5, total=t5 - t0,
               total_without_compile=t5 - t0 - (t4 - t3), backend=model.backend,
               compile_and_linearize=t5 - t3, compile_and_linearize_cpu=c5 - c3)
    # the same, fresh process state aside, straight from the EquationsOfMotion
    L = sys.modules["symbody.analysis.linearization"]     # (the package attribute is the function)
    for cache in ("_KERNELS", "_VIEWS"):          # in-process caches, where the module has them
        getattr(L, cache, {}).clear()
    t7 = time.perf_counter()
    sweep(eom)
    res["linearize_11_from_eom"] = time.perf_counter() - t7
    np.savez(out.with_suffix(".npz"), A=np.array(mats), eig=np.array(eigs))
    out.write_text(json.dumps(res))


def stage_symbolic(out: Path) -> None:
    import sympy as sm

    import symbody as sb
    from symbody.models.whipple_bicycle import benchmark_to_constants, whipple_bicycle_system
    res: dict = {}
    t0 = time.perf_counter()
    system, ex = whipple_bicycle_system()
    t1 = time.perf_counter()
    km = sb.KanesMethod(system.frame, system.q_ind, system.u_ind, kd_eqs=system.kd_eqs,
                        q_dependent=system.q_dep,
                        configuration_constraints=system.configuration_constraints,
                        u_dependent=system.u_dep, velocity_constraints=system.velocity_constraints)
    km.kanes_equations(system.bodies, system.loads)
    t2 = time.perf_counter()
    v = sm.Symbol("v")
    A, B, r = km.linearize(A_and_B=True, op_point=_symbolic_op(ex, v))
    t3 = time.perf_counter()
    S = ex["symbols"]
    consts = {S[k]: val for k, val in benchmark_to_constants().items()}
    mats = [_evaluate(A, {**consts, v: speed}) for speed in SPEEDS]
    t4 = time.perf_counter()
    res.update(kinematics=t1 - t0, formation=t2 - t1, linearize=t3 - t2, evaluate=t4 - t3,
               total=t4 - t0)
    np.savez(out.with_suffix(".npz"), A=np.array(mats))
    out.write_text(json.dumps(res))


STAGES = {"sympy": stage_sympy, "numeric": stage_numeric, "symbolic": stage_symbolic}


def run_stage(name: str, workdir: Path, backend: str = "auto") -> tuple[dict, dict]:
    out = workdir / f"{name}.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               BENCH_BACKEND=backend)
    subprocess.run([sys.executable, __file__, "--stage", name, "--out", str(out)], check=True, env=env)
    data = np.load(out.with_suffix(".npz"))
    return json.loads(out.read_text()), {k: data[k] for k in data.files}


def table2_error(eigs: np.ndarray) -> float:
    """Largest relative error of the eigenvalues against Table 2 (nearest-match pairing)."""
    ref = json.loads((ROOT / "tests" / "data" / "whipple_benchmark.json").read_text())["eigenvalues"]
    worst = 0.0
    for speed, ev in zip(SPEEDS, eigs):
        r = ref[str(int(speed))]
        want = r["real"] if "real" in r else [r["castor"], r["capsize"], complex(*r["weave"]),
                                              complex(r["weave"][0], -r["weave"][1])]
        for w in want:
            worst = max(worst, float(np.min(np.abs(ev - w)) / abs(w)))
    return worst


def compare_backends(repeat: int) -> None:
    """The numeric pipeline with each backend, ``repeat`` times interleaved (module doc)."""
    import statistics

    names = ("auto", "auto, eager", "llvm")
    runs: dict[str, list[dict]] = {k: [] for k in names}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            for name in names:
                res, data = run_stage("numeric", Path(tmp), name)
                assert table2_error(data["eig"]) < 1e-9, name
                runs[name].append(res)
    print(f"\nWhipple bicycle: compile + 11 linearizations, cold cache, fresh process, medians of "
          f"{repeat} (load average {os.getloadavg()[0]:.1f})")
    print("| backend | compile | 11 linearizations | compile + linearize, wall | CPU (with compilers) | "
          "pipeline total |")
    print("|---|---|---|---|---|---|")
    for name in names:
        r = runs[name]

        def med(key, _r=r):
            return statistics.median(x[key] for x in _r)
        print(f"| {name} | {med('compile'):.2f} s | {med('linearize_11'):.2f} s | "
              f"{med('compile_and_linearize'):.2f} s | {med('compile_and_linearize_cpu'):.2f} s | "
              f"{med('total'):.2f} s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=sorted(STAGES))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--skip-sympy", action="store_true", help="do not run SymPy's pipeline")
    ap.add_argument("--json", type=Path, help="write all timings to this file")
    ap.add_argument("--backends", type=int, default=0, metavar="K",
                    help="only the numeric pipeline, K times per backend (see the module doc)")
    args = ap.parse_args()
    if args.stage:
        STAGES[args.stage](args.out)
        return
    if args.backends:
        compare_backends(args.backends)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        num, num_d = run_stage("numeric", work)
        sym, sym_d = run_stage("symbolic", work)
        ref = ref_d = None
        if not args.skip_sympy:
            ref, ref_d = run_stage("sympy", work)
    print("\nWhipple bicycle (Meijaard et al. 2007 benchmark), linearized at v = 0..10 m/s")
    print(f"symbody numeric : kinematics {num['kinematics']:.2f} s, KanesMethod {num['formation']:.2f} s, "
          f"to_eom {num['to_eom']:.2f} s, compile ({num['backend']}) {num['compile']:.2f} s, "
          f"11 linearizations {num['linearize_11']:.3f} s (again {num['linearize_11_again']:.4f} s)")
    print(f"                  total {num['total']:.2f} s; without compile {num['total_without_compile']:.2f} s "
          f"(linearize from the eom: 11 in {num['linearize_11_from_eom']:.3f} s)")
    print(f"                  Table 2 max relative error {table2_error(num_d['eig']):.2e}")
    print(f"symbody symbolic: kinematics {sym['kinematics']:.2f} s, KanesMethod {sym['formation']:.2f} s, "
          f"km.linearize(A_and_B=True) {sym['linearize']:.2f} s, evaluate 11 speeds {sym['evaluate']:.2f} s")
    err_num_sym = float(np.max(np.abs(num_d["A"] - sym_d["A"])))
    print(f"                  max |A_symbolic - A_numeric| over 11 speeds: {err_num_sym:.2e}")
    results = {"numeric": num, "symbolic": sym}
    if ref is not None:
        print(f"sympy           : kinematics {ref['kinematics']:.2f} s, KanesMethod {ref['formation']:.2f} s, "
              f"linearize(A_and_B=True, CRAMER) {ref['linearize']:.1f} s, evaluate {ref['evaluate']:.2f} s, "
              f"total {ref['total']:.1f} s")
        print(f"                  Table 2 max relative error {table2_error(ref_d['eig']):.2e}")
        d_sym = float(np.max(np.abs(sym_d["A"] - ref_d["A"])))
        d_num = float(np.max(np.abs(num_d["A"] - ref_d["A"])))
        d_on = float(np.max(np.abs(ref_d["A2"] - ref_d["A"])))
        print(f"max |A - A_sympy| (11 speeds, |A| <= {np.abs(ref_d['A']).max():.0f}): symbolic {d_sym:.1e}, "
              f"numeric {d_num:.1e}, symbody linearizer on SymPy's KanesMethod {d_on:.1e} "
              f"({ref['symbody_on_sympy_km']:.2f} s)")
        # the like-for-like headline: the same work on both sides (symbolic linearization with
        # symbolic v); the pipeline ratio compares symbody's numeric A at 11 speeds with SymPy's
        # symbolic pipeline (different work: SymPy has no numeric linearizer)
        print(f"headline (same work): symbolic linearize {ref['linearize'] / sym['linearize']:.0f}x "
              "(km.linearize(A_and_B=True) with symbolic v, symbody vs SymPy)")
        print(f"different work: symbody's numeric pipeline vs SymPy's symbolic pipeline "
              f"{ref['total'] / num['total']:.0f}x ({ref['total'] / num['total_without_compile']:.0f}x "
              "without compile)")
        results["sympy"] = ref
        results["differences"] = {"symbolic_vs_sympy": d_sym, "numeric_vs_sympy": d_num,
                                  "symbody_on_sympy_km_vs_sympy": d_on}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
