"""Sweeps: serial loop, local processes (fresh and kept workers) and Dask on the same cases.

Usage::

    python benchmarks/bench_sweep.py [--runs 6 20 50 200] [--workers 2] [--repeat 3] [--no-dask]

Cases: four-bar linkage (seed chapter 001 model), t in [0, 2] s, rtol = 1e-8, initial
crank angles q1 in [0, 60] deg (the README's sweep).  For each number of runs, repeated
``--repeat`` times with the runners interleaved:

- "serial": ``sweep(..., Execution(parallel=False))`` (the anchor; the same runs as a loop
  of ``simulate`` calls);
- "processes (fresh)": ``Execution(processes=workers, parallel=True)`` after
  ``stop_workers()``: every sweep forks its workers;
- "processes (kept)": the same with the workers kept from the sweep before (the default
  after a first sweep of the model);
- "processes (default)": ``Execution(processes=workers)``: what the sweep decides itself
  (``result.parallel`` says which and why);
- "dask": ``Execution(client=...)`` on a ``LocalCluster(n_workers=workers)`` started and
  warmed before timing.

Every sweep's trajectories are checked equal to the serial ones to the last bit before any
time is printed.  On a machine shared with other jobs the wall times mean little (Linux's
autogroup scheduler gives each session one share of the cores, however many processes it
runs), so the CPU seconds of this process and of each worker process are measured too
(psutil, 10 ms ticks: read the small sweeps' rows with care), and "idle wall" bounds the
wall time on an idle machine from above: this process's CPU time (the first runs timed
here, the fork, sending the cases, unpickling the results) plus the busiest worker's, as
if none of it overlapped.  "speed-up" is serial's over the runner's,
by that estimate (medians); the crossover is the smallest number of runs at which kept
(fresh) workers win.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import psutil

import symbody as sb
from symbody.analysis.sweep.processes import stop_workers


def _cpu_seconds(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


class _Meter:
    """CPU seconds of this process and of each of its child processes (alive ones read
    directly, finished ones from RUSAGE_CHILDREN), and the wall time."""

    def __init__(self, exclude: set | None = None) -> None:
        self.me = psutil.Process()
        self.exclude = exclude or set()     # (the Dask workers: measured by client.run)

    def snapshot(self) -> tuple[float, float, dict, float]:
        import resource

        children = {}
        for c in self.me.children(recursive=True):
            if c.pid in self.exclude:
                continue
            try:
                children[c.pid] = _cpu_seconds(c)
            except psutil.Error:
                pass
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.perf_counter(), _cpu_seconds(self.me), children, r.ru_utime + r.ru_stime

    @staticmethod
    def difference(a: tuple, b: tuple) -> tuple[float, float, float]:
        """(wall, this process's CPU, the busiest child's CPU) between snapshots a and b."""
        per_child = [cpu - a[2].get(pid, 0.0) for pid, cpu in b[2].items()]
        reaped = b[3] - a[3]          # children that ended in between (fresh workers)
        busiest = max(per_child + [reaped / max(1, len(per_child) or 2)], default=0.0)
        return b[0] - a[0], b[1] - a[1], busiest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[6, 20, 50, 200])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()

    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    opts = dict(solver=sb.Solver(rtol=1e-8, atol=1e-9, progress=False))
    t_span = (0.0, 2.0)
    client = cluster = None
    if not args.no_dask:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        warm = sb.grid_cases(q1=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
        sb.sweep(model, t_span, warm, zoo.constants, x0=zoo.initial_state,
                 execution=sb.Execution(client=client, parallel=True, progress=False), **opts)
    runners = {"serial": sb.Execution(parallel=False, progress=False),
               "processes (fresh)": sb.Execution(processes=args.workers, parallel=True, progress=False),
               "processes (kept)": sb.Execution(processes=args.workers, parallel=True, progress=False),
               "processes (default)": sb.Execution(processes=args.workers, progress=False)}
    if client is not None:
        runners["dask"] = sb.Execution(client=client, progress=False)
    dask_pids: set = set()
    if client is not None:
        for pid in client.run(os.getpid).values():
            dask_pids |= {pid} | {c.pid for c in psutil.Process(pid).children(recursive=True)}
            dask_pids |= {p.pid for p in psutil.Process(pid).parents()} - {os.getpid(), 1}
    meter = _Meter(dask_pids)
    print(f"four-bar sweeps, t in [0, 2] s, rtol 1e-8, {args.workers} workers, {os.cpu_count()} CPUs "
          f"(load average before: {os.getloadavg()[0]:.2f}); medians of {args.repeat}")
    print("| runs | runner | wall | CPU here | busiest worker CPU | idle wall (est.) | speed-up "
          "(idle est.) | load | decided |")
    print("|---|---|---|---|---|---|---|---|---|")
    crossover: dict[str, int | None] = {"processes (kept)": None, "processes (fresh)": None}
    try:
        for runs in args.runs:
            cases = sb.grid_cases(q1=np.radians(np.linspace(0.0, 60.0, runs)))
            rows: dict[str, list[tuple[float, float, float]]] = {k: [] for k in runners}
            decided: dict[str, str] = {}
            ref = None
            for _ in range(args.repeat):
                for name, execution in runners.items():
                    if name == "processes (fresh)":
                        stop_workers()
                    elif name == "processes (kept)":      # kept from a sweep before
                        sb.sweep(model, t_span, cases[:4], zoo.constants, x0=zoo.initial_state,
                                 execution=execution, **opts)
                    before = client.run(time.process_time) if name == "dask" else {}
                    a = meter.snapshot()
                    res = sb.sweep(model, t_span, cases, zoo.constants, x0=zoo.initial_state,
                                   execution=execution, **opts)
                    b = meter.snapshot()
                    wall, here, worker = meter.difference(a, b)
                    if name == "dask":
                        after = client.run(time.process_time)
                        worker = max((after[k] - before.get(k, 0.0) for k in after), default=0.0)
                    rows[name].append((wall, here, worker))
                    decided[name] = res.parallel.split(";")[0][:60]
                    ref = ref or res.trajectories
                    same = all(np.array_equal(x.t, y.t) and np.array_equal(x.x, y.x)
                               for x, y in zip(ref, res.trajectories))
                    assert same, f"{name}: results differ from the serial runs"
            med = {k: [statistics.median(r[j] for r in v) for j in range(3)] for k, v in rows.items()}
            base = max(med["serial"][1], med["serial"][2])
            for name, (wall, here, worker) in med.items():
                idle = here + worker
                speed = base / idle if idle > 0 else float("nan")
                if name in crossover and crossover[name] is None and speed > 1.0:
                    crossover[name] = runs
                print(f"| {runs} | {name} | {wall:.2f} s | {here:.3f} s | {worker:.3f} s | "
                      f"{idle:.3f} s | {speed:.2f}x | {os.getloadavg()[0]:.1f} | {decided[name]} |")
    finally:
        if client is not None:
            client.close()
            cluster.close()
        stop_workers()
    for name, n in crossover.items():
        print(f"crossover, {name}: " + (f"{n} runs" if n else "not reached"))


if __name__ == "__main__":
    main()
