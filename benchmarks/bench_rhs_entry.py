"""``model.rhs`` from Python through the compiled entry, against Pinocchio and the book.

Three parts, each in one process so that the ratios compare runs of the same moment:

``--robots``   example-robot-data's UR5, Panda, Solo12 (free-flyer), Talos' left arm and
               Talos (talos_reduced, free-flyer, 38 speeds),
               loaded with ``symbody.load_urdf`` and compiled with the default backend:
               one ``model.rhs(t, x, p, tau)`` call (the compiled entry), the same on the
               Python path (``NumericModel.rhs``), one ``pin.aba(model, data, q, v, tau)``
               call from Python; ``model.rhs_many`` on 1 000 states against a Python loop
               of ``pin.aba`` over the same states; the largest difference of u' from ABA.
``--four-bar`` the zoo four-bar's ``model.rhs`` (entry and Python path) against the book's
               lambdify-and-solve (``bench_constraints.book_four_bar``: ``sympy.lambdify``
               of Mk, gk, Md, gd with cse=True + two ``numpy.linalg.solve``).
``--default``  issue 34 item 3: IFToMM A02 (N-four-bar, n = 40) simulated with the default
               backend and with ``backend="c"`` (CPU time of ``simulate``, warm kernels),
               and the cold compile of small models (a fresh process and an empty
               SYMBODY_CACHE_DIR each: compile + every kernel built; the first ``rhs`` call
               apart, since it also builds the entry's extension once per cache).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_rhs_entry.py [--robots] [--four-bar] [--default] [--cold]

Per-call times are the best of 7 timed loops (timeit's advice for a loaded machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))         # the shared test systems
sys.path.insert(0, str(HERE))

ROBOTS = [("UR5", "ur_description/urdf/ur5_robot.urdf", False),
          ("Panda", "panda_description/urdf/panda.urdf", False),
          ("Solo12", "solo_description/robots/solo12.urdf", True),
          ("Talos arm", "talos_data/robots/talos_left_arm.urdf", False),
          ("Talos", "talos_data/robots/talos_reduced.urdf", True)]


def per_call(fn, min_time: float = 0.1, repeats: int = 7) -> float:
    """Seconds per call of fn(): the best of ``repeats`` timed loops."""
    fn()
    number = 1
    while timeit.timeit(fn, number=number) < min_time / 5 and number < 1e6:
        number *= 4
    return float(min(timeit.timeit(fn, number=number) / number for _ in range(repeats)))


def robot_row(pin, root: Path, path: str, floating: bool, count: int, rng, rounds: int = 4) -> dict:
    """One robot's row (see the module docstring)."""
    import symbody as sb
    from symbody.compilation.numeric_model import NumericModel
    from systems.pinocchio_oracle import compare, pinocchio_model, random_state

    robot = sb.load_urdf(root / path, floating_base=floating)
    model = sb.compile(robot.eom)
    pm = pinocchio_model(pin, root / path, floating)
    pd = pm.createData()
    P = model.constants_array(robot.constants)
    states = [random_state(pin, pm, rng) for _ in range(count)]
    X = np.array([robot.from_pinocchio(q, v) for q, v in states])
    if model.M:
        X = np.array([model.consistent_state(x, P) for x in X])
    tau = np.zeros(len(model.specifieds))
    tau_pin = np.zeros(pm.nv)
    # the oracle: the pinocchio_oracle comparison (crba, rnea, aba) at 3 random states
    err = compare(pin, robot, model, pm, np.random.default_rng(1), states=3)["aba"]
    x = X[0]
    q0, v0 = states[0]
    model.rhs(0.0, x, P, tau)                  # installs the entry
    entry = type(model.rhs).__name__ == "Entry"
    Q = [q for q, _ in states]
    V = [v for _, v in states]

    def aba_loop():
        for q, v in zip(Q, V):
            pin.aba(pm, pd, q, v, tau_pin)

    t_entry = t_python = t_aba = t_many = t_loop = np.inf
    for _ in range(rounds):         # interleaved rounds, the best of each: a loaded machine's
        t_entry = min(t_entry, per_call(lambda: model.rhs(0.0, x, P, tau)))    # pauses hit
        t_aba = min(t_aba, per_call(lambda: pin.aba(pm, pd, q0, v0, tau_pin)))  # one side
        t_python = min(t_python, per_call(lambda: NumericModel.rhs(model, 0.0, x, P, tau)))
        t_many = min(t_many, per_call(lambda: model.rhs_many(0.0, X, P, tau), repeats=5))
        t_loop = min(t_loop, per_call(aba_loop, repeats=5))
    return {"nq": pm.nq, "nv": pm.nv, "states": len(model.states), "entry": entry,
            "kernels": sorted({k.backend for _, k in model.kernels.items() if k is not None}),
            "main_kernel_outputs": model.kernels.main.nout,
            "rhs_entry_us": 1e6 * t_entry, "rhs_python_us": 1e6 * t_python,
            "pin_aba_us": 1e6 * t_aba, "entry_over_aba": t_entry / t_aba,
            "rhs_many_1000_ms": 1e3 * t_many, "aba_loop_1000_ms": 1e3 * t_loop,
            "aba_loop_over_rhs_many": t_loop / t_many,
            # the conservative ratio: 1 000 times the best single pin.aba call (no loop, no
            # other states) against rhs_many
            "aba_single_x1000_over_rhs_many": count * t_aba / t_many,
            "max_rel_error_vs_aba": err}


def robots(count: int = 1000) -> dict:
    import pinocchio as pin

    from systems.pinocchio_oracle import robots_dir

    root = robots_dir()
    res: dict = {}
    rng = np.random.default_rng(0)
    for name, path, floating in ROBOTS:
        res[name] = robot_row(pin, root, path, floating, count, rng)
        print(name, json.dumps(res[name]), flush=True)
    return res


def four_bar_vs_book() -> dict:
    from bench_constraints import P_VALS, book_four_bar_rhs

    import symbody as sb
    from symbody.compilation.numeric_model import NumericModel

    book_rhs = book_four_bar_rhs()                 # the chapter's eval_rhs(t, x, p)

    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    names = ["l_a", "l_b", "l_c", "l_n", "m", "g"]      # the book's p order
    P = model.constants_array(dict(zip(names, P_VALS)))
    x = model.consistent_state(model.state_array(zoo.initial_state), P)
    xb = x.copy()                                   # the book's state: the same [q1, q2, q3, u1]
    diff = float(np.abs(model.rhs(0.0, x, P) - book_rhs(xb)).max())
    book = entry = python = float("inf")
    for _ in range(3):                              # interleaved rounds, the best of each
        book = min(book, per_call(lambda: book_rhs(xb)))
        entry = min(entry, per_call(lambda: model.rhs(0.0, x, P)))
        python = min(python, per_call(lambda: NumericModel.rhs(model, 0.0, x, P)))
    res = {"book_us": 1e6 * book, "rhs_entry_us": 1e6 * entry, "rhs_python_us": 1e6 * python,
           "book_over_entry": book / entry, "book_over_python": book / python,
           "entry": type(model.rhs).__name__ == "Entry", "max_abs_difference": diff}
    print("four-bar", json.dumps(res), flush=True)
    return res


_COLD = r"""
import json, os, resource, sys, time
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
t0 = time.perf_counter()
import symbody as sb
t1 = time.perf_counter()
zoo = sb.models.get(sys.argv[1], **json.loads(sys.argv[3]))
t2 = time.perf_counter()
c2 = cpu()
m = sb.compile(zoo.eom, backend=sys.argv[2])
for _, k in m.kernels.items():
    if k is not None:
        k.realize()
t3 = time.perf_counter()
c3 = cpu()
P = m.constants_array(zoo.constants)
x = m.state_array(zoo.initial_state)
r = [0.0] * len(m.specifieds) if m.specifieds else None
m.rhs(0.0, x, P, r)
t4 = time.perf_counter()
print(json.dumps({"compile_s": t3 - t2, "first_rhs_s": t4 - t3, "compile_cpu_s": c3 - c2,
                  "first_rhs_cpu_s": cpu() - c3,
                  "kernels": sorted({k.backend for _, k in m.kernels.items() if k is not None})}))
"""


def cold_compile(name: str, backend: str, options: dict | None = None) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SYMBODY_CACHE_DIR": cache}
        r = subprocess.run([sys.executable, "-c", _COLD, name, backend, json.dumps(options or {})],
                           capture_output=True, text=True, env=env, timeout=900)
        if r.returncode:
            return {"error": r.stderr[-500:]}
        return json.loads(r.stdout.strip().splitlines()[-1])


def cold_compiles() -> dict:
    """Cold compiles (see the module docstring): wall and CPU time (the process and its
    compiler runs) of each backend, one after the other for each model."""
    res: dict = {}
    for name, opts in (("n-link-pendulum-on-cart", {"n": 1}), ("four-bar", {}),
                       ("n-link-pendulum-on-cart", {"n": 3}), ("whipple-bicycle", {})):
        key = name + ("" if not opts else f" {opts}")
        res[key] = {b: cold_compile(name, b, opts) for b in ("auto", "c", "llvm")}
        print("cold", key, json.dumps(res[key]), flush=True)
    return res


def default_backend(rtols=(1e-3, 1e-5), cold: bool = True) -> dict:
    import symbody as sb

    res: dict = {"cold": cold_compiles() if cold else {}, "a02": {}}
    zoo = sb.models.get("n-four-bar", n=40)
    t_eval = np.linspace(0.0, 20.0, 401)
    models = {b: sb.compile(zoo.eom, backend=b) for b in ("auto", "c", "llvm")}
    for m in models.values():                          # warm: kernels built, steps loaded
        sb.simulate(m, (0.0, 1e-3), zoo.initial_state, zoo.constants)
    for rtol in rtols:
        row = {}
        for _ in range(2):                             # interleaved, the best of two
            for b, m in models.items():
                t0 = time.process_time()
                tr = sb.simulate(m, (0.0, 20.0), zoo.initial_state, zoo.constants,
                                 solver=sb.Solver(rtol=rtol, atol=rtol), t_eval=t_eval)
                cpu = time.process_time() - t0
                assert tr.success, tr.message
                row[b] = min(row.get(b, np.inf), cpu)
        row["auto_over_c"] = row["auto"] / row["c"]
        row["llvm_over_c"] = row["llvm"] / row["c"]
        res["a02"][f"rtol {rtol:g}"] = row
        print("A02", rtol, json.dumps(row), flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--robots", action="store_true")
    ap.add_argument("--four-bar", action="store_true")
    ap.add_argument("--default", action="store_true")
    ap.add_argument("--cold", action="store_true", help="only the cold compiles of --default")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    every = not (args.robots or args.four_bar or args.default or args.cold)
    out: dict = {}
    if every or args.four_bar:
        out["four_bar"] = four_bar_vs_book()
    if every or args.robots:
        out["robots"] = robots()
    if every or args.default:
        out["default_backend"] = default_backend()
    if args.cold and not args.default:
        out["cold"] = cold_compiles()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
