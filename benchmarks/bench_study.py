"""Studies: a sweep on a Dask LocalCluster and local processes vs the serial loop; load_model vs
compiling the Whipple bicycle again.

Usage::

    python benchmarks/bench_study.py [--runs 200] [--workers 2] [--skip-bicycle]

Sweep: ``runs`` four-bar simulations (seed chapter 001 model, t in [0, 2] s, rtol = 1e-8)
over initial crank angles q1 in [0, 60] deg.  The anchor is the serial loop of
``simulate`` calls in this process; the sweep's results are checked equal to it (to the
last bit) before any time is printed.  The cluster is started before timing (its
start-up is reported separately), as a user would keep one running.

Bicycle: ``symbody.compile(eom)`` with the kernel cache off (what "compile again" costs
in a new process whose cache is cold; also with the on-disk cache warm) against
``symbody.load_model`` of the saved model; both followed by one rhs evaluation so the
machine code exists.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import symbody as sb


def sweep_benchmark(runs: int, workers: int) -> None:
    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    cases = sb.grid_cases(q1=np.radians(np.linspace(0.0, 60.0, runs)))
    opts = dict(solver=sb.Solver(rtol=1e-8, atol=1e-9, progress=False))
    t_span = (0.0, 2.0)

    # the sweep assembles each case on the base state's branch: the serial loop starts from
    # the same initial states (res.initial_states)
    states = sb.sweep(model, t_span, cases, zoo.constants, x0=zoo.initial_state,
                      execution=sb.Execution(parallel=False, progress=False, keep_trajectories=False),
                      **opts).initial_states
    t0 = time.perf_counter()
    serial = [sb.simulate(model, t_span, x, zoo.constants, **opts) for x in states]
    t_serial = time.perf_counter() - t0

    t0 = time.perf_counter()
    local = sb.sweep(model, t_span, cases, zoo.constants, x0=zoo.initial_state,
                     execution=sb.Execution(processes=workers, progress=False), **opts)
    t_local = time.perf_counter() - t0

    from dask.distributed import Client, LocalCluster
    t0 = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("symbody"))           # workers import symbody once
        t_start = time.perf_counter() - t0
        # a fresh worker's first run loads the integrator and the kernels (~1-3 s): warm
        # the workers with a small sweep first, as a kept-running cluster would be
        sb.sweep(model, t_span, cases[:4], zoo.constants, x0=zoo.initial_state,
                 execution=sb.Execution(client=client, parallel=True, progress=False), **opts)
        t0 = time.perf_counter()
        dask = sb.sweep(model, t_span, cases, zoo.constants, x0=zoo.initial_state,
                        execution=sb.Execution(client=client, progress=False), **opts)
        t_dask = time.perf_counter() - t0

    for name, res in (("local processes", local), ("dask", dask)):
        assert not res.failed, f"{name}: failed runs {res.failed}"
        same = all(np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)
                   for a, b in zip(serial, res.trajectories))
        assert same, f"{name}: results differ from the serial loop"
    print(f"\nsweep of {runs} four-bar runs (t in [0, 2] s, rtol 1e-8), {workers} workers, "
          f"{os.cpu_count()} CPUs; all results equal to the serial loop to the last bit")
    print("| runner | wall time | vs serial loop |")
    print("|---|---|---|")
    print(f"| serial loop of simulate() (anchor) | {t_serial:.2f} s | 1x |")
    print(f"| sweep, {workers} local processes ({local.parallel.split(';')[0]}) | {t_local:.2f} s | "
          f"{t_serial / t_local:.2f}x |")
    print(f"| sweep, Dask LocalCluster {workers} worker processes ({dask.parallel.split(';')[0]}) | "
          f"{t_dask:.2f} s | "
          f"{t_serial / t_dask:.2f}x |")
    print(f"(cluster start-up, not in the Dask time: {t_start:.2f} s)")


def bicycle_benchmark() -> None:
    zoo = sb.models.whipple_bicycle()
    x = None

    def build(cache):
        nonlocal x
        t0 = time.perf_counter()
        model = sb.compile(zoo.eom, cache=cache)
        if x is None:
            x = model.state_array(zoo.initial_state)
        model.rhs(0.0, x, zoo.constants)
        return model, time.perf_counter() - t0

    from symbody.compilation import codegen
    codegen._MEMORY.clear()
    model, t_cold = build(False)
    codegen._MEMORY.clear()
    build(True)                                # fill the on-disk cache
    codegen._MEMORY.clear()
    _, t_warm = build(True)
    with tempfile.TemporaryDirectory() as tmp:
        path = model.save(os.path.join(tmp, "bicycle"))
        size = os.path.getsize(path)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            loaded = sb.load_model(path)
            loaded.rhs(0.0, x, zoo.constants)
            best = min(best, time.perf_counter() - t0)
    assert np.array_equal(loaded.rhs(0.1, x, zoo.constants), model.rhs(0.1, x, zoo.constants))
    print(f"\nWhipple bicycle: load_model vs compiling again (file {size / 1e6:.2f} MB)")
    print("| | time | load_model faster by |")
    print("|---|---|---|")
    print(f"| compile(eom, cache=False) + first rhs | {t_cold:.3f} s | {t_cold / best:.0f}x |")
    print(f"| compile(eom), kernel cache warm, + first rhs | {t_warm:.3f} s | {t_warm / best:.0f}x |")
    print(f"| load_model(path) + first rhs (best of 5) | {best * 1e3:.1f} ms | 1x |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-bicycle", action="store_true")
    ap.add_argument("--skip-sweep", action="store_true")
    args = ap.parse_args()
    if not args.skip_sweep:
        sweep_benchmark(args.runs, args.workers)
    if not args.skip_bicycle:
        bicycle_benchmark()


if __name__ == "__main__":
    main()
