"""sweep() and Execution: the options, the sweep under way (_SweepState), serial or workers."""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...compilation import NumericModel
from ...errors import InputError
from ...formatting import symbol_name as _short
from ...progress import as_progress
from ..initial_state import AssemblyBranchWarning
from ..simulation import Solver
from ..simulation.options import legacy_options, solver_type_message
from ..trajectory import Trajectory
from .assembly import _assemble
from .cases import _check_cases
from .checkpoint import _checkpoint_key, _json_default, _read_checkpoint
from .dask_runner import _run_dask
from .processes import (
    _check_main_guard,
    _run_processes,
    _start_method,
    _workers_available,
    kept_workers,
)
from .result import SweepResult
from .runs import _run_case, _SweepSettings

#: seconds of work per chunk sent to a local process / a Dask worker
_CHUNK_SECONDS = {"processes": 0.1, "dask": 0.25}
#: seconds this process spends per run sent to a worker (sending the case, unpickling the
#: trajectory; ~1 ms for the four-bar's 2 s runs)
_RESULT_SECONDS = 1e-3
#: a sweep stays serial when the runs timed here got less than this share of a CPU (other
#: processes hold the cores: with Linux's per-session scheduling, more processes of this
#: session get no more CPU time)
BUSY_SHARE = 0.6


def _parallel_overhead(kind: str, model: NumericModel, workers: int) -> tuple[float, str]:
    """(seconds to start ``workers`` workers, a note on the kept ones): a fork costs ~40 ms
    of a large interpreter's copy-on-write faults per worker, plus ~30 ms in this process;
    a spawned worker imports symbody and unpickles the model (~1 s); workers kept from the
    last sweep of the model cost nothing (:mod:`.processes`)."""
    if kind != "processes":
        return 0.1, ""          # Dask: the worker plugin with model and settings, task latency
    kept = min(kept_workers(model), workers)
    new = workers - kept
    if _start_method() == "fork":
        start = (0.03 + 0.04 * new) if new else 0.0
    else:
        start = (0.7 + 0.3 * new) if new else 0.0
    return start + 0.002 * workers, (f", {kept} worker{'s' if kept != 1 else ''} kept from the last "
                                      "sweep" if kept else "")


@dataclass(frozen=True)
class Execution:
    """How :func:`sweep` runs its cases: ``execution=Execution(processes=4)``.

    Parameters
    ----------
    client : a ``dask.distributed.Client``: run on its cluster.  Default: local processes.
    processes : number of local worker processes (default: the CPUs this process may
        use); 1 runs the cases one after another in this process.
    parallel : None (default) decides from the measured time of the first runs whether
        workers would gain (the reason is in ``result.parallel``); True always uses them;
        False runs serially in this process.
    progress : None (a progress bar on a terminal: tqdm when installed), False, True or
        a callable ``f(done, total, message)``.
    checkpoint : a ``.jsonl`` file: each finished row is appended to it; a sweep with the
        same cases and t_span run again skips the cases already there (their
        trajectories are then None).
    keep_trajectories : False returns only the table (less data sent back by workers).
    """

    client: Any = None
    processes: int | None = None
    parallel: bool | None = None
    progress: Any = None
    checkpoint: str | os.PathLike | None = None
    keep_trajectories: bool = True

    def __post_init__(self) -> None:
        if self.parallel not in (None, True, False):
            raise InputError(f"Execution(parallel={self.parallel!r}) must be None, True or False")
        n = self.processes
        if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
            raise InputError(f"Execution(processes={n!r}) must be a positive integer")
        if not isinstance(self.keep_trajectories, (bool, np.bool_)):
            raise InputError(f"Execution(keep_trajectories={self.keep_trajectories!r}) must be "
                             "True or False")


#: sweep's own old keywords, now fields of Execution
_EXECUTION_KEYWORDS = tuple(f.name for f in dataclasses.fields(Execution))
#: what sweep passes on to simulate
_SIMULATE_KEYWORDS = ("constraints", "solver", "t_eval", "events", "outputs")


def _sweep_options(model: NumericModel, execution: Execution | None,
                   options: dict) -> tuple[Execution, dict]:
    """(execution, the simulate() keywords of every run) from sweep's keywords; the old ones
    (``processes=``, ``rtol=``, ...) are folded in with a DeprecationWarning each."""
    old_exec = {k: options.pop(k) for k in list(options) if k in _EXECUTION_KEYWORDS}
    if old_exec:
        for key in old_exec:
            warnings.warn(f"sweep({key}=...) is deprecated and will be removed in the next "
                          f"release; use execution=Execution({key}=...)", DeprecationWarning,
                          stacklevel=3)
        if execution is not None:
            raise InputError(f"sweep() got execution= and the old keyword {next(iter(old_exec))}=; "
                             "give it inside Execution(...) only")
        execution = Execution(**old_exec)
    if execution is None:
        execution = Execution()
    elif not isinstance(execution, Execution):
        raise InputError(f"execution={execution!r}: give a symbody.Execution(...) object")
    if "raise_on_failure" in options:
        raise InputError("sweep() does not pass raise_on_failure= to the runs (failed runs are "
                         "recorded)")
    legacy = {k: options.pop(k) for k in list(options) if k not in _SIMULATE_KEYWORDS}
    options["constraints"], solver = legacy_options(
        model, options.get("constraints", "auto"), options.get("solver"), legacy, "sweep", 4)
    if solver is None:
        solver = Solver()
    elif not isinstance(solver, Solver):
        raise InputError(solver_type_message(solver))
    if solver.raise_on_failure or solver.progress not in (None, False):
        raise InputError("sweep() does not pass Solver(raise_on_failure=..., progress=...) to the "
                         "runs (failed runs are recorded; the sweep's progress is "
                         "Execution(progress=...))")
    options["solver"] = dataclasses.replace(solver, progress=False)
    return execution, options


def sweep(model: NumericModel, t_span: Sequence[float], cases: Sequence[Mapping],
          p: np.ndarray | Mapping | None = None, *, x0: np.ndarray | Mapping | None = None,
          specifieds: Any = None,
          final: Sequence[str] | Callable[[Trajectory], dict] | None = None,
          assembly_branch: Any = None, execution: Execution | None = None,
          **simulate_options: Any) -> SweepResult:
    """Simulate ``model`` once per case (see the module docstring); returns a :class:`SweepResult`.

    Parameters
    ----------
    model : NumericModel.
    t_span : (t0, tf) for every run.
    cases : list of dicts (names of states / constants / specified inputs -> value, or the
        groups "x0", "p", "specifieds"), e.g. from :func:`grid_cases` or :func:`sample_cases`.
    p, x0, specifieds : the base constants, initial state and inputs the cases change
        (callables, lambdas and closures included).
    final : names of coordinates/speeds whose final values become table columns
        ``final_<name>`` (with ``final_t``), or a callable ``f(trajectory) -> dict``.
    assembly_branch : with holonomic constraints, which branch the cases' dependent
        coordinates are solved on: None (that of the base ``x0``), a state (dict or array) on
        the wanted branch, or "independent" (each case by Newton's method from its own
        guess, as a single ``simulate`` call would; cases on another branch are flagged).
    execution : :class:`Execution`: where and how the runs go (``client``, ``processes``,
        ``parallel``, ``progress``, ``checkpoint``, ``keep_trajectories``).
    simulate_options : passed to :func:`symbody.simulate`: ``constraints``, ``solver``
        (a :class:`~symbody.Solver`), ``t_eval``, ``events``, ``outputs``.  The old
        keywords (``processes=``, ``rtol=``, ...) still work for one release with a
        DeprecationWarning.

    Notes
    -----
    Each run is exactly ``simulate(model, t_span, result.initial_states[i], p_case, ...)``:
    the results equal a serial loop's to the last bit, in the order of the cases.
    """
    if not isinstance(model, NumericModel):
        raise InputError(f"sweep() needs a NumericModel (symbody.compile(eom)), got {type(model).__name__}")
    cases = _check_cases(model, cases)
    execution, options = _sweep_options(model, execution, dict(simulate_options))
    if isinstance(assembly_branch, str) and assembly_branch != "independent":
        raise InputError(f"assembly_branch={assembly_branch!r}: give None, a state (dict or array) "
                         "or \"independent\"")
    if final is not None and not callable(final):
        final = [str(f) if not hasattr(f, "func") else _short(f) for f in final]
    try:
        t0 = float(t_span[0])
    except (TypeError, ValueError, IndexError):
        raise InputError(f"t_span must be (t0, tf), got {t_span!r}") from None
    settings = _SweepSettings(t_span, x0, p, specifieds, options, final,
                              bool(execution.keep_trajectories))
    start = time.perf_counter()
    states, signs, branch_ok = _assemble(model, cases, settings, t0, assembly_branch)
    state = _SweepState(model, settings, cases, states, signs, branch_ok, execution)
    try:
        runner, how = state.run_all()
    finally:
        state.close()
    if state.resumed:
        how += f"; {state.resumed} cases read back from {os.fspath(execution.checkpoint)}"
    wall = time.perf_counter() - start
    n = len(cases)
    off = [i for i in range(n) if branch_ok[i] is False and state.results[i] is not None]
    if off:
        names = ", ".join(map(str, off[:10])) + (f" ... ({len(off)} of {n})" if len(off) > 10 else "")
        warnings.warn(f"sweep: cases {names} were not assembled on the branch of the base state "
                      "(another assembly mode of the holonomic constraints, or not reached by "
                      "continuation from it); see the table's columns branch and branch_ok",
                      AssemblyBranchWarning, stacklevel=2)
    results = state.results
    return SweepResult(cases=cases, trajectories=[r[0] for r in results],
                       records=[r[1] for r in results], wall_time=wall, runner=runner,
                       initial_states=states, parallel=how)


class _SweepState:
    """One sweep under way: the results so far, the checkpoint file, the progress bar, and
    the choice between serial runs here and workers."""

    def __init__(self, model: NumericModel, settings: _SweepSettings, cases: list, states: list,
                 signs: list, branch_ok: list, execution: Execution) -> None:
        self.model, self.settings, self.cases, self.execution = model, settings, cases, execution
        self.signs, self.branch_ok = signs, branch_ok
        n = self.n = len(cases)
        self.results: list[Any] = [None] * n
        self.ckpt_file = self._open_checkpoint() if execution.checkpoint is not None else None
        self.queue = collections.deque((i, cases[i], states[i]) for i in range(n)
                                       if self.results[i] is None)
        self.resumed = n - len(self.queue)
        self.bar = as_progress(execution.progress, "sweep", total=n)
        self.tq = None
        if self.bar.enabled and self.bar.callback is None:
            try:
                from tqdm.auto import tqdm
                self.tq = tqdm(total=n, desc="sweep", unit="run", initial=self.resumed)
                self.bar.enabled = False
            except ImportError:   # pragma: no cover - tqdm is optional
                self.tq = None
        self.done = self.resumed
        self.times: list[float] = []         # wall and CPU seconds of the runs made here
        self.cpu_times: list[float] = []

    def _open_checkpoint(self) -> Any:
        path = os.fspath(self.execution.checkpoint)
        key = _checkpoint_key(self.cases, self.settings.t_span)
        for i, rec in _read_checkpoint(path, key, self.n).items():
            if 0 <= i < self.n:
                self.results[i] = (None, rec)
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        ckpt_file = open(path, "a", encoding="utf-8")     # noqa: SIM115 - closed in close()
        if new:
            ckpt_file.write(json.dumps({"symbody_sweep": 1, "key": key, "n_cases": self.n}) + "\n")
            ckpt_file.flush()
        return ckpt_file

    def close(self) -> None:
        if self.tq is not None:
            self.tq.close()
        self.bar.close()
        if self.ckpt_file is not None:
            self.ckpt_file.close()

    def on_result(self, i: int, traj: Any, rec: dict) -> None:
        if self.model.M:
            rec["branch"] = self.signs[i]
            rec["branch_ok"] = self.branch_ok[i]
        self.results[i] = (traj, rec)
        if self.ckpt_file is not None:
            self.ckpt_file.write(json.dumps({"case": i, "record": rec}, default=_json_default) + "\n")
            self.ckpt_file.flush()
        self.done += 1
        self.bar.set(self.done, f"{self.done}/{self.n} runs" +
                     ("" if rec.get("success") else " (a run failed)"))
        if self.tq is not None:
            self.tq.update(1)

    def run_here(self, item: tuple) -> None:
        t_a, c_a = time.perf_counter(), time.process_time()
        i, traj, rec = _run_case(item[0], item[1], self.settings, self.model, item[2])
        self.times.append(time.perf_counter() - t_a)
        self.cpu_times.append(time.process_time() - c_a)
        self.on_result(i, traj, rec)

    def run_all(self) -> tuple[str, str]:
        """Run every case still to do; returns (runner, how and why)."""
        execution, queue = self.execution, self.queue
        client, processes, parallel = execution.client, execution.processes, execution.parallel
        if client is not None:
            kind, workers = "dask", max(1, sum(client.nthreads().values()))
        else:
            kind, workers = "processes", processes or _workers_available()
        if parallel is False or (client is None and workers == 1) or len(queue) <= 1:
            why = ("parallel=False" if parallel is False else
                   "processes=1" if client is None and processes == 1 else
                   "one CPU available" if client is None and workers == 1 else
                   f"{len(queue)} run{'s' if len(queue) != 1 else ''} to do")
            while queue:
                self.run_here(queue.popleft())
            return "serial", f"serial in this process ({why})"
        # time the first runs here (they are results too) to size the chunks
        probe_start = time.perf_counter()
        times, cpus = self.times, self.cpu_times
        while queue and ((len(times) < 2 and sum(times) < 0.5) or (len(times) < 3 and sum(times) < 0.1)):
            self.run_here(queue.popleft())
        # the work of a run is its CPU time; the first run may also have waited for kernels
        # being compiled: the share of a CPU this process gets is judged from the others
        t_run = float(np.median(cpus)) if cpus else 0.0
        later = slice(1, None) if len(times) > 1 else slice(None)
        share = sum(cpus[later]) / max(sum(times[later]), 1e-12) if times else 1.0
        rest = len(queue)
        serial_est = rest * t_run
        w_eff = max(1, min(workers, rest))
        overhead, kept = _parallel_overhead(kind, self.model, w_eff)
        # this process sends the chunks and unpickles every result (~1 ms a run), the workers
        # run them
        parallel_est = overhead + max(rest * _RESULT_SECONDS, rest * (t_run + _RESULT_SECONDS) / w_eff)
        probe = (f"{len(times)} run{'s' if len(times) != 1 else ''} timed here first "
                 f"({t_run * 1e3:.3g} ms of CPU each, {time.perf_counter() - probe_start:.2g} s)")
        where = f"{workers} {'Dask worker threads' if kind == 'dask' else 'processes'}"
        busy = kind == "processes" and share < BUSY_SHARE and parallel is not True
        if busy or not (rest and (parallel is True or parallel_est < 0.9 * serial_est)):
            if busy:
                how = (f"serial in this process: {rest} more runs would not gain from {where}: "
                       f"the machine is busy (the runs here got {share:.0%} of a CPU, and more "
                       f"processes get no more); {probe}")
            elif rest:
                how = (f"serial in this process: {rest} more runs of ~{t_run * 1e3:.3g} ms "
                       f"({serial_est:.2g} s) would not gain from {where} (start-up and transfer "
                       f"~{parallel_est - serial_est / w_eff:.2g} s{kept}); {probe}")
            else:
                how = f"serial in this process ({probe})"
            while queue:
                self.run_here(queue.popleft())
            return "serial", how
        runner, how = self._run_workers(kind, workers, w_eff, t_run, probe)
        if parallel is True and parallel_est >= 0.9 * serial_est:
            how += f"; forced by parallel=True (serial estimate {serial_est:.2g} s)"
        return runner, how

    def _run_workers(self, kind: str, workers: int, w_eff: int, t_run: float,
                     probe: str) -> tuple[str, str]:
        """The rest of the queue on ``w_eff`` local processes or on Dask."""
        queue, rest = self.queue, len(self.queue)
        target = _CHUNK_SECONDS[kind]
        chunk = max(1, min(int(round(target / max(t_run, 1e-6))), math.ceil(rest / (2 * w_eff))))
        chunks = f"chunks of {chunk} run{'s' if chunk != 1 else ''} (~{chunk * t_run:.2g} s); {probe}"
        if kind == "processes":
            method = _start_method()
            if method != "fork":
                _check_main_guard()
            kept = min(kept_workers(self.model), w_eff)
            _run_processes(self.model, self.settings, queue, w_eff, chunk, self.cases,
                           self.on_result)
            kept_note = f" ({kept} kept from the last sweep)" if kept else ""
            return f"{w_eff} processes", f"{w_eff} processes ({method}){kept_note}, {chunks}"
        items = list(queue)
        queue.clear()
        _run_dask(self.execution.client, self.model, self.settings, items, chunk, self.cases,
                  self.on_result)
        return "dask", f"Dask, {workers} worker threads, {chunks}"

