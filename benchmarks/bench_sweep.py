"""Sweeps: serial loop, local processes and a Dask LocalCluster on the same cases, in one run.

Usage::

    python benchmarks/bench_sweep.py [--runs 6 40 200] [--workers 2] [--repeat 3]

Cases: four-bar linkage (seed chapter 001 model), t in [0, 2] s, rtol = 1e-8, initial
crank angles q1 in [0, 60] deg (the README's sweep).  For each number of runs: the
serial loop of ``simulate`` calls from the sweep's assembled initial states (the
anchor), ``sweep(processes=workers)`` and ``sweep(client=...)`` on a
``LocalCluster(n_workers=workers, threads_per_worker=1)`` started once before timing
(its start-up is printed separately), repeated ``--repeat`` times, alternating.  Every
sweep's trajectories are checked equal to the serial loop's to the last bit before any
time is printed.  The row "ceiling" is what the machine allows at that moment: ``workers``
forked copies of this process each running its share of the serial loop, with nothing
sent back (no sweep machinery); "ceiling / runner" compares a runner with it.  Printed:
min and median wall times, the speed-up min(serial) /
min(sweep), the parallel efficiency speed-up / workers, what the sweep decided
(``result.parallel``), the CPU seconds used by this process, its worker processes and the
Dask workers (the work the parallel runners add), and the load average.  On a machine
shared with other jobs the wall times mean little: Linux's autogroup scheduler gives each
session one share of the cores, however many processes it runs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import time

import numpy as np

import symbody as sb


def _cpu(client=None) -> float:
    """CPU seconds of this process, its finished children and the Dask workers."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
    if client is not None:
        total += sum(client.run(time.process_time).values())
    return total


def _loop(model, t_span, states, p, opts) -> None:
    for x in states:
        sb.simulate(model, t_span, x, p, **opts)


def _ceiling(model, t_span, states, p, opts, workers: int) -> None:
    """What the machine allows now: ``workers`` forked copies of this process, each running
    its share of the serial loop, nothing sent back (no sweep machinery at all)."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_loop, args=(model, t_span, states[k::workers], p, opts))
             for k in range(workers)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[6, 40, 200])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from dask.distributed import Client, LocalCluster

    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    opts = dict(solver=sb.Solver(rtol=1e-8, atol=1e-9, progress=False))
    t_span = (0.0, 2.0)
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    client.run(lambda: __import__("symbody"))
    t_start = time.perf_counter() - t0
    # a fresh worker's first run loads the integrator and the kernels (~1-3 s): warm the
    # workers with a small sweep first, as a kept-running cluster would be
    warm = sb.grid_cases(q1=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    t0 = time.perf_counter()
    sb.sweep(model, t_span, warm, zoo.constants, x0=zoo.initial_state,
             execution=sb.Execution(client=client, parallel=True, progress=False), **opts)
    t_warm = time.perf_counter() - t0
    print(f"four-bar sweeps, t in [0, 2] s, rtol 1e-8, {args.workers} workers, "
          f"{os.cpu_count()} CPUs (load average before: {os.getloadavg()[0]:.2f}); "
          f"Dask LocalCluster start-up {t_start:.2f} s and warm-up sweep {t_warm:.2f} s (not in "
          "the times)")
    print("| runs | runner | wall min | wall median | speed-up (min) | efficiency | ceiling / runner "
          "(min, median) | CPU s (median) | load | decided |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    try:
        for runs in args.runs:
            cases = sb.grid_cases(q1=np.radians(np.linspace(0.0, 60.0, runs)))
            walls: dict[str, list[float]] = {"serial loop": [], "ceiling": [], "processes": [],
                                             "dask": []}
            cpus: dict[str, list[float]] = {k: [] for k in walls}
            decided = {}
            ref = None
            for _ in range(args.repeat):
                for name in walls:
                    dc = client if name == "dask" else None
                    c0, w0 = _cpu(dc), time.perf_counter()
                    if name == "serial loop":
                        if ref is None:
                            res0 = sb.sweep(model, t_span, cases, zoo.constants, x0=zoo.initial_state,
                                            execution=sb.Execution(parallel=False, progress=False,
                                                                   keep_trajectories=False),
                                            **opts)
                            states = res0.initial_states
                            c0, w0 = _cpu(), time.perf_counter()
                        trajs = [sb.simulate(model, t_span, x, zoo.constants, **opts)
                                 for x in states]
                        ref = ref or trajs
                    elif name == "ceiling":
                        trajs = ref
                        _ceiling(model, t_span, states, zoo.constants, opts, args.workers)
                    else:
                        kw = {"processes": args.workers} if name == "processes" else {"client": client}
                        res = sb.sweep(model, t_span, cases, zoo.constants, x0=zoo.initial_state,
                                       execution=sb.Execution(progress=False, **kw), **opts)
                        trajs = res.trajectories
                        decided[name] = res.parallel.split(";")[0]
                    walls[name].append(time.perf_counter() - w0)
                    cpus[name].append(_cpu(dc) - c0)
                    same = all(np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)
                               for a, b in zip(ref, trajs))
                    assert same, f"{name}: results differ from the serial loop"
            base = min(walls["serial loop"])
            for name, w in walls.items():
                speed = base / min(w)
                eff = "" if name == "serial loop" or decided.get(name, "").startswith("serial") \
                    else f"{speed / args.workers:.0%}"
                ceil = walls["ceiling"]
                vs = "" if name in ("serial loop", "ceiling") else \
                    f"{min(ceil) / min(w):.0%}, {statistics.median(ceil) / statistics.median(w):.0%}"
                print(f"| {runs} | {name} | {min(w):.2f} s | {statistics.median(w):.2f} s | "
                      f"{speed:.2f}x | {eff} | {vs} | {statistics.median(cpus[name]):.2f} | "
                      f"{os.getloadavg()[0]:.1f} | {decided.get(name, '')} |")
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
