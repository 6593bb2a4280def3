"""Robot forward dynamics: symbody's tree recursion against Pinocchio's ABA, same run.

Three parts (each robot in a fresh process; CPU time, interleaved rounds, medians):

``--speed``   every URDF of example-robot-data (fixed base, and with a free-flyer for the
              legged robots, humanoids and flying robots): one ``model.rhs(t, x, p, tau)``
              call against one ``pin.aba(model, data, q, v, tau)`` call from Python, and
              ``model.rhs_many`` on 1 000 random states against a Python loop of ``pin.aba``
              over the same states; the largest relative difference of u' from ABA over 10
              states (with mimic joints: the constrained accelerations from Pinocchio's M
              and bias), and cond(M).
``--native``  UR5, Panda, Solo12, Talos and TIAGo dual from C: Pinocchio's ABA from C++
              (a small program built against the headers the ``pin`` wheel ships, Eigen
              from the ``casadi`` wheel) and ``sb.export_c``'s ``name_rhs`` (cc -O2), with
              ``forward_dynamics="auto"`` (the recursion) and ``"solve"`` (M and a dense
              solve), per call over 1 000 states.
``--ltdl``    the other O(n)-ish choice, measured: M and the bias (the compiled main kernel)
              then Featherstone's tree-sparse L^T D L factorization and solve (RBDA table
              6.3, a C loop over the parent array), against the recursion's kernel, scalar
              and in SIMD lanes, per state over 1 000 states (robots without mimic joints).
``--cold``    Panda, Talos and TIAGo dual: formation (``load_urdf``) and compile until the
              first ``model.rhs`` (an empty kernel cache each, CPU of the process and its
              compiler runs) with ``forward_dynamics="solve"`` (what main did) and "auto".

    PYTHONPATH=src:tests python benchmarks/bench_robot_speed.py --speed --native --ltdl --cold
    PYTHONPATH=src:tests python benchmarks/bench_robot_speed.py --speed --match talos

Needs the ``test`` extra (pin, example-robot-data); ``--native`` also g++ and casadi.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))
sys.path.insert(0, str(HERE))

NATIVE = [("UR5", "ur_description/urdf/ur5_robot.urdf", False),
          ("Panda", "panda_description/urdf/panda.urdf", False),
          ("Solo12", "solo_description/robots/solo12.urdf", True),
          ("Talos", "talos_data/robots/talos_full_v2.urdf", True),
          ("TIAGo dual", "tiago_description/robots/tiago_dual.urdf", False)]
COLD = [("Panda", "panda_description/urdf/panda.urdf", False),
        ("Talos", "talos_data/robots/talos_full_v2.urdf", False),
        ("TIAGo dual", "tiago_description/robots/tiago_dual.urdf", False)]


def cpu_per_call(fn, calls: int) -> float:
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls


def load(path: Path, floating: bool):
    """The robot (refused mimic tags dropped, as bench_robots does) and its default model."""
    import symbody as sb
    from symbody.errors import SymbodyError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return sb.load_urdf(path, floating_base=floating, invalid_inertia="warn")
        except SymbodyError as exc:
            if "mimics" not in str(exc):
                raise
            return sb.load_urdf(path, floating_base=floating, invalid_inertia="warn", mimic=False)


def states(robot, model, pm, count: int, seed: int = 0):
    """``count`` random states: symbody's X (k, nx) and Pinocchio's q (k, nq), v (k, nv)."""
    import pinocchio as pin

    from systems.pinocchio_oracle import random_state
    rng = np.random.default_rng(seed)
    P = model.constants_array(robot.constants)
    X, Q, V = [], [], []
    for _ in range(count):
        x = robot.from_pinocchio(*random_state(pin, pm, rng))
        if model.M:
            x = model.consistent_state(x, P)
        q, v = robot.to_pinocchio(x)
        X.append(x)
        Q.append(q)
        V.append(v)
    return np.array(X), np.array(Q), np.array(V)


def speed_row(path: str, floating: bool, count: int, rounds: int) -> dict:
    """One robot's row of ``--speed``."""
    import pinocchio as pin

    import symbody as sb
    from systems.pinocchio_oracle import compare, pinocchio_model

    row: dict = {"floating": floating}
    try:
        pm = pinocchio_model(pin, path, floating)
    except Exception as exc:  # noqa: BLE001 (Pinocchio's own refusal, reported as it is)
        return {**row, "refused": "Pinocchio: " + str(exc).splitlines()[0][:80]}
    try:
        robot = load(path, floating)
    except Exception as exc:  # noqa: BLE001
        return {**row, "refused": "symbody: " + str(exc).replace(str(path), "the file")[:120]}
    model = sb.compile(robot.eom)
    pd = pm.createData()
    P = model.constants_array(robot.constants)
    X, Q, V = states(robot, model, pm, count)
    tau = np.zeros(len(robot.inputs))
    tau_p = np.zeros(pm.nv)
    err = compare(pin, robot, model, pm, np.random.default_rng(1), states=10)
    x0, q0, v0 = X[0], Q[0], V[0]
    model.rhs(0.0, x0, P, tau)
    model.rhs_many(0.0, X, P, tau)
    if model.kernels.forward_many is not None:
        model.kernels.forward_many.realize()    # (built in the background: wait for it here)

    def aba_loop():
        for q, v in zip(Q, V):
            pin.aba(pm, pd, q, v, tau_p)

    calls = max(200, int(2e-2 / max(cpu_per_call(lambda: pin.aba(pm, pd, q0, v0, tau_p), 50), 1e-7)))
    r_rhs, r_aba, r_many, r_loop = [], [], [], []
    for _ in range(rounds):                  # interleaved: a loaded machine's pauses hit both
        r_rhs.append(cpu_per_call(lambda: model.rhs(0.0, x0, P, tau), calls))
        r_aba.append(cpu_per_call(lambda: pin.aba(pm, pd, q0, v0, tau_p), calls))
        r_many.append(cpu_per_call(lambda: model.rhs_many(0.0, X, P, tau), 2))
        r_loop.append(cpu_per_call(aba_loop, 2))
    return {**row, "nv": pm.nv, "mimic": len(robot.u_dep),
            "recursion": model.kernels.forward is not None,
            "rhs_us": 1e6 * float(np.median(r_rhs)), "aba_us": 1e6 * float(np.median(r_aba)),
            "rhs_over_aba": float(np.median(np.array(r_rhs) / np.array(r_aba))),
            "many_us": 1e6 * float(np.median(r_many)) / count,
            "loop_us": 1e6 * float(np.median(r_loop)) / count,
            "loop_over_many": float(np.median(np.array(r_loop) / np.array(r_many))),
            "err": err["aba"], "cond": err["cond"]}


def robot_files(match: str) -> list[tuple[Path, bool]]:
    from bench_robots import FLOATING

    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    out = []
    for f in sorted(root.rglob("*.urdf")):
        if match not in str(f):
            continue
        folder = f.relative_to(root).parts[0]
        out += [(f, fl) for fl in ((False, True) if folder in FLOATING else (False,))]
    return out


def run_child(args: list[str], cache: str, timeout: float = 900) -> dict:
    env = {**os.environ, "SYMBODY_CACHE_DIR": cache}
    try:
        r = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                           env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"refused": f"over {timeout:.0f} s"}
    if r.returncode:
        return {"refused": "crashed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def speed_table(rows: list[tuple[str, dict]]) -> str:
    lines = ["| robot | base | nv | mimic | rhs µs | pin.aba µs | rhs / aba | rhs_many µs/state "
             "| aba loop µs/state | loop / rhs_many | max rel. err. vs aba | cond(M) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    refused = []
    for name, r in rows:
        base = "free-flyer" if r.get("floating") else "fixed"
        if "refused" in r:
            refused.append(f"- {name} ({base}): {r['refused']}")
            continue
        lines.append(f"| {name} | {base} | {r['nv']} | {r['mimic']} | {r['rhs_us']:.2f} | "
                     f"{r['aba_us']:.2f} | **{r['rhs_over_aba']:.2f}** | {r['many_us']:.3f} | "
                     f"{r['loop_us']:.2f} | **{r['loop_over_many']:.1f}x** | {r['err']:.1e} | "
                     f"{r['cond']:.0e} |")
    return "\n".join(lines) + ("\n\nNot run:\n\n" + "\n".join(refused) if refused else "") + "\n"


# ------------------------------------------------------------------ --native: C and C++
ABA_CPP = r"""
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <cstdio>
#include <ctime>
#include <vector>
#include <algorithm>
static double cpu() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
  pinocchio::Model model;
  model.loadFromBinary(argv[1]);
  pinocchio::Data data(model);
  long k = atol(argv[3]), rounds = atol(argv[4]);
  std::vector<double> buf(k * (model.nq + 2 * model.nv));
  FILE *f = fopen(argv[2], "rb");
  if (fread(buf.data(), sizeof(double), buf.size(), f) != buf.size()) return 1;
  fclose(f);
  std::vector<Eigen::VectorXd> Q(k), V(k), T(k);
  for (long i = 0; i < k; ++i) {
    double *s = buf.data() + i * (model.nq + 2 * model.nv);
    Q[i] = Eigen::Map<Eigen::VectorXd>(s, model.nq);
    V[i] = Eigen::Map<Eigen::VectorXd>(s + model.nq, model.nv);
    T[i] = Eigen::Map<Eigen::VectorXd>(s + model.nq + model.nv, model.nv);
  }
  std::vector<double> times;
  for (long r = 0; r < rounds; ++r) {
    double t0 = cpu();
    for (long i = 0; i < k; ++i) pinocchio::aba(model, data, Q[i], V[i], T[i]);
    times.push_back((cpu() - t0) / k);
  }
  std::sort(times.begin(), times.end());
  printf("%.6e\n", times[times.size() / 2]);
}
"""

RHS_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "NAME.h"
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
  long k = atol(argv[2]), rounds = atol(argv[3]), i, r;
  int nx = NX, nc = NC, ns = NS;
  double *buf = malloc(sizeof(double) * k * nx), *p = malloc(sizeof(double) * (nc + 1));
  double *tau = calloc(ns + 1, sizeof(double)), *xd = malloc(sizeof(double) * nx);
  double *times = malloc(sizeof(double) * rounds), sink = 0.0;
  FILE *f = fopen(argv[1], "rb");
  if (fread(p, sizeof(double), nc, f) != (size_t)nc) return 1;
  if (fread(buf, sizeof(double), k * nx, f) != (size_t)(k * nx)) return 1;
  fclose(f);
  for (r = 0; r < rounds; r++) {
    double t0 = cpu();
    for (i = 0; i < k; i++) { if (NAME_rhs(0.0, buf + i * nx, p, tau, xd)) return 2; sink += xd[nx - 1]; }
    times[r] = (cpu() - t0) / k;
  }
  qsort(times, rounds, sizeof(double), cmp);
  printf("%.6e %g\n", times[rounds / 2], sink);
  return 0;
}
"""


def _pin_prefix() -> Path | None:
    import pinocchio
    p = Path(pinocchio.__file__).resolve()
    for parent in p.parents:
        if (parent / "include" / "pinocchio").is_dir():
            return parent
    return None


def _eigen() -> Path | None:
    try:
        import casadi
    except ImportError:
        return None
    p = Path(casadi.__file__).parent / "include" / "eigen3"
    return p if (p / "Eigen").is_dir() else None


def build_aba_program(work: Path) -> Path | None:
    """The C++ ABA timing program (built once, kept beside the kernel cache)."""
    prefix, eigen = _pin_prefix(), _eigen()
    if prefix is None or eigen is None:
        return None
    key = hashlib.sha256((ABA_CPP + str(prefix)).encode()).hexdigest()[:16]
    exe = Path(tempfile.gettempdir()) / f"symbody-bench-aba-{key}"
    if exe.exists():
        return exe
    src = work / "aba.cpp"
    src.write_text(ABA_CPP)
    defs = ["-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
            "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]
    r = subprocess.run(["g++", "-O3", "-DNDEBUG", "-std=c++17", *defs, f"-I{prefix / 'include'}",
                        f"-I{eigen}", str(src), "-o", str(exe), f"-L{prefix / 'lib'}",
                        "-lpinocchio_default", "-lboost_serialization",
                        f"-Wl,-rpath,{prefix / 'lib'}"], capture_output=True, text=True)
    if r.returncode:
        print("g++ failed:", r.stderr[-800:], file=sys.stderr)
        return None
    return exe


def native_row(path: str, floating: bool, count: int, rounds: int, exe: str | None) -> dict:
    """One robot's row of ``--native`` (run in a child process)."""
    import pinocchio as pin

    import symbody as sb
    from systems.pinocchio_oracle import pinocchio_model

    pm = pinocchio_model(pin, path, floating)
    robot = load(path, floating)
    out: dict = {"nv": pm.nv}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for mode in ("auto", "solve"):
            model = sb.compile(robot.eom, forward_dynamics=mode)
            X, Q, V = states(robot, model, pm, count)
            P = model.constants_array(robot.constants)
            sb.export_c(model, tmp / mode, name="rob", constants=robot.constants)
            main = RHS_C.replace("NAME", "rob").replace("NX", str(model.layout.nx)) \
                .replace("NC", str(model.layout.c)).replace("NS", str(model.layout.s))
            (tmp / mode / "bench.c").write_text(main)
            exe_c = tmp / mode / "bench"
            r = subprocess.run(["cc", "-O2", "-o", str(exe_c), str(tmp / mode / "bench.c"),
                                str(tmp / mode / "rob.c"), "-lm"], capture_output=True, text=True)
            if r.returncode:
                out[f"c_{mode}"] = None
                continue
            data = tmp / mode / "states.bin"
            np.concatenate([P, X.ravel()]).tofile(data)
            line = subprocess.run([str(exe_c), str(data), str(count), str(rounds)],
                                  capture_output=True, text=True).stdout.split()
            out[f"c_{mode}_us"] = 1e6 * float(line[0])
        if exe:
            pm.saveToBinary(str(tmp / "model.bin"))
            tau = np.zeros((count, pm.nv))
            np.concatenate([Q, V, tau], axis=1).ravel().tofile(tmp / "pin.bin")
            line = subprocess.run([exe, str(tmp / "model.bin"), str(tmp / "pin.bin"), str(count),
                                   str(rounds)], capture_output=True, text=True).stdout.split()
            out["aba_cpp_us"] = 1e6 * float(line[0]) if line else None
    return out


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def native_table(rows: list[tuple[str, dict]]) -> str:
    lines = ["| robot | nv | Pinocchio ABA, C++ µs | exported C rhs (recursion) µs | C / C++ ABA "
             "| exported C rhs (M and solve) µs |", "|---|---:|---:|---:|---:|---:|"]
    for name, r in rows:
        if "refused" in r:
            lines.append(f"| {name} | - | {r['refused']} | | | |")
            continue
        a, c, s = r.get("aba_cpp_us"), r.get("c_auto_us"), r.get("c_solve_us")
        ratio = "-" if not (a and c) else f"**{c / a:.2f}**"
        lines.append(f"| {name} | {r['nv']} | {_fmt(a)} | {_fmt(c)} | {ratio} | {_fmt(s)} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ --ltdl
LTDL_C = r"""
#include <string.h>
/* the main kernel's rows OUT (k states: [q' (N), s (K), S (K*K)]) -> u' (k, K) by
   Featherstone's L^T D L of the tree (RBDA tables 6.3 and 6.4; lam: parent of each speed) */
void ltdl_many(const double *OUT, long nout, long N, long K, const int *lam, long k,
               double *UD, double *H)
{
  for (long s = 0; s < k; ++s) {
    const double *o = OUT + s * nout;
    double *b = UD + s * K;
    memcpy(H, o + N + K, K * K * sizeof(double));
    memcpy(b, o + N, K * sizeof(double));
    for (long kk = K - 1; kk >= 0; --kk)
      for (int i = lam[kk]; i >= 0; i = lam[i]) {
        double a = H[kk * K + i] / H[kk * K + kk];
        for (int j = i; j >= 0; j = lam[j]) H[i * K + j] -= H[kk * K + j] * a;
        H[kk * K + i] = a;
      }
    for (long i = K - 1; i >= 0; --i) for (int j = lam[i]; j >= 0; j = lam[j]) b[j] -= H[i * K + j] * b[i];
    for (long i = 0; i < K; ++i) b[i] /= H[i * K + i];
    for (long i = 0; i < K; ++i) for (int j = lam[i]; j >= 0; j = lam[j]) b[i] -= H[i * K + j] * b[j];
  }
}
"""

LTDL_ROBOTS = [("UR5", "ur_description/urdf/ur5_robot.urdf", False),
               ("Solo12", "solo_description/robots/solo12.urdf", True),
               ("Talos (reduced)", "talos_data/robots/talos_reduced.urdf", True),
               ("TIAGo dual", "tiago_description/robots/tiago_dual.urdf", False)]


def ltdl_row(path: str, floating: bool, count: int, rounds: int) -> dict:
    """One robot of ``--ltdl`` (run in a child process)."""
    import ctypes

    import pinocchio as pin

    import symbody as sb
    from symbody.compilation import c_kernels
    from symbody.compilation.batch import arguments_many
    from systems.pinocchio_oracle import pinocchio_model

    robot = load(path, floating)
    model = sb.compile(robot.eom)
    pm = pinocchio_model(pin, path, floating)
    X, _, _ = states(robot, model, pm, count)
    Z = arguments_many(model, 0.0, X, model.constants_array(robot.constants),
                       np.zeros(len(robot.inputs)))
    main, fwd = model.kernels.main.realize(), model.kernels.forward.realize()
    lanes = model.kernels.forward_many.realize() if model.kernels.forward_many else fwd
    L = model.layout
    off = 6 if floating else 0
    lam = list(range(-1, off - 1))           # the free-flyer's six speeds: a chain
    for b in robot.tree.moving:               # (no mimic joints: tree order = model order)
        lam.append(-1 if b.parent == 0 and not floating else off + b.parent - 1 if b.parent else off - 1)
    lam = np.array(lam, dtype=np.intc)
    with tempfile.TemporaryDirectory() as tmp:
        lib_path = Path(tmp, "ltdl.so")
        c_kernels.build_library([LTDL_C], lib_path, opt="-O2")
        lib = ctypes.CDLL(str(lib_path))
    UD, H = np.empty((count, L.K)), np.empty(L.K * L.K)

    def solve(out):
        lib.ltdl_many(ctypes.c_void_p(out.ctypes.data), ctypes.c_long(main.nout),
                      ctypes.c_long(L.N), ctypes.c_long(L.K), ctypes.c_void_p(lam.ctypes.data),
                      ctypes.c_long(count), ctypes.c_void_p(UD.ctypes.data),
                      ctypes.c_void_p(H.ctypes.data))

    solve(main.many(Z))
    ref = fwd.many(Z)[:, L.N:]
    times: dict = {"main": [], "ltdl": [], "aba": [], "lanes": []}
    for _ in range(rounds):
        t0 = time.process_time()
        out = main.many(Z)
        t1 = time.process_time()
        solve(out)
        t2 = time.process_time()
        fwd.many(Z)
        t3 = time.process_time()
        lanes.many(Z)
        t4 = time.process_time()
        for key, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            times[key].append(1e6 * v / count)
    row = {k: float(np.median(v)) for k, v in times.items()}
    row.update(nv=L.K, nnz=int((out[0, L.main_system] != 0).sum()),
               err=float(np.abs(UD - ref).max() / np.abs(ref).max()))
    return row


def ltdl_table(rows: list[tuple[str, dict]]) -> str:
    lines = ["| robot | nv | nonzeros of M | M, bias kernel µs | L^T D L µs | CRBA + L^T D L µs "
             "| ABA kernel µs | ABA in lanes µs | (CRBA + LTDL) / ABA | rel. diff. |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows:
        if "refused" in r:
            lines.append(f"| {name} | {r['refused']} | | | | | | | | |")
            continue
        crba = r["main"] + r["ltdl"]
        lines.append(f"| {name} | {r['nv']} | {r['nnz']} | {r['main']:.2f} | {r['ltdl']:.2f} | "
                     f"{crba:.2f} | {r['aba']:.2f} | {r['lanes']:.2f} | **{crba / r['aba']:.1f}** "
                     f"| {r['err']:.0e} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ --cold
COLD_SRC = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
import numpy as np
import symbody as sb
path, fl, mode = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
c0, w0 = cpu(), time.perf_counter()
robot = sb.load_urdf(path, floating_base=fl, invalid_inertia="warn")
c1, w1 = cpu(), time.perf_counter()
model = sb.compile(robot.eom, forward_dynamics=mode)
model.rhs(0.0, robot.default_state(), model.constants_array(robot.constants), np.zeros(len(robot.inputs)))
c2, w2 = cpu(), time.perf_counter()
print(json.dumps({"form": c1 - c0, "compile": c2 - c1, "form_wall": w1 - w0, "compile_wall": w2 - w1}))
"""


def cold_rows(rounds: int) -> list[tuple[str, dict]]:
    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    rows = []
    for name, path, floating in COLD:
        res: dict = {"solve": [], "auto": []}
        for _ in range(rounds):
            for mode in ("solve", "auto"):               # interleaved
                with tempfile.TemporaryDirectory() as cache:
                    env = {**os.environ, "SYMBODY_CACHE_DIR": cache}
                    r = subprocess.run([sys.executable, "-c", COLD_SRC, str(root / path),
                                        "1" if floating else "0", mode],
                                       capture_output=True, text=True, env=env)
                    res[mode].append(json.loads(r.stdout.strip().splitlines()[-1]))
        rows.append((name, {m: {k: float(np.median([v[k] for v in vs])) for k in vs[0]}
                            for m, vs in res.items()}))
        print(name, json.dumps(rows[-1][1]), file=sys.stderr, flush=True)
    return rows


def cold_table(rows: list[tuple[str, dict]]) -> str:
    lines = ["| robot | formation s | compile + first rhs, M and solve (before) s | "
             "compile + first rhs, recursion (after) s | after / before |",
             "|---|---:|---:|---:|---:|"]
    for name, r in rows:
        b, a = r["solve"], r["auto"]
        lines.append(f"| {name} | {a['form']:.2f} | {b['compile']:.2f} ({b['compile_wall']:.1f}) "
                     f"| {a['compile']:.2f} ({a['compile_wall']:.1f}) | "
                     f"{(a['form'] + a['compile']) / (b['form'] + b['compile']):.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--native", action="store_true")
    ap.add_argument("--ltdl", action="store_true")
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--match", default="")
    ap.add_argument("--states", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cold-rounds", type=int, default=3)
    ap.add_argument("--out", default=None, help="also write the tables here")
    ap.add_argument("--one", nargs=2, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--native-one", nargs=3, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ltdl-one", nargs=2, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(speed_row(a.one[0], a.one[1] == "1", a.states, a.rounds)))
        return
    if a.native_one:
        print(json.dumps(native_row(a.native_one[0], a.native_one[1] == "1", a.states, a.rounds,
                                    a.native_one[2] or None)))
        return
    if a.ltdl_one:
        print(json.dumps(ltdl_row(a.ltdl_one[0], a.ltdl_one[1] == "1", a.states, a.rounds)))
        return
    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    text = []
    with tempfile.TemporaryDirectory() as cache:
        if a.speed:
            rows = []
            for f, fl in robot_files(a.match):
                row = run_child(["--one", str(f), "1" if fl else "0", "--states", str(a.states),
                                 "--rounds", str(a.rounds)], cache)
                row.setdefault("floating", fl)
                name = str(f.relative_to(root))
                rows.append((name, row))
                print(name, json.dumps(row), file=sys.stderr, flush=True)
            text.append(speed_table(rows))
        if a.native:
            with tempfile.TemporaryDirectory() as work:
                exe = build_aba_program(Path(work))
            rows = []
            for name, path, fl in NATIVE:
                if a.match.lower() not in name.lower() and a.match not in path:
                    continue
                row = run_child(["--native-one", str(root / path), "1" if fl else "0",
                                 str(exe or ""), "--states", str(a.states),
                                 "--rounds", str(a.rounds)], cache)
                rows.append((name, row))
                print(name, json.dumps(row), file=sys.stderr, flush=True)
            text.append(native_table(rows))
        if a.ltdl:
            rows = []
            for name, path, fl in LTDL_ROBOTS:
                row = run_child(["--ltdl-one", str(root / path), "1" if fl else "0",
                                 "--states", str(a.states), "--rounds", str(a.rounds)], cache)
                rows.append((name, row))
                print(name, json.dumps(row), file=sys.stderr, flush=True)
            text.append(ltdl_table(rows))
    if a.cold:
        text.append(cold_table(cold_rows(a.cold_rounds)))
    out = "\n".join(text)
    print(out)
    if a.out:
        Path(a.out).write_text(out)


if __name__ == "__main__":
    main()
