"""sweep(): many simulations of one compiled model -- Monte Carlo, parameter and design studies.

Each *case* is a dict that changes the base run ``simulate(model, t_span, x0, p, ...)``::

    {"q1": 0.3, "m": 2.0}                        # names of states, constants or specified inputs
    {"x0": {...} or array, "p": {...}, "specifieds": ...}   # or whole groups

A name of a state (coordinate or independent speed) replaces that entry of ``x0``, a name
of a constant that entry of ``p``, a name of a specified input its (constant) value.
:func:`grid_cases` builds the Cartesian product of value lists, :func:`sample_cases` a
seeded uniform sample from ranges.

The runs go to local worker processes (``spawn``: safe on every OS; the model is pickled
once per worker, without its SymPy equations) or, given a ``dask.distributed.Client``, to
its workers (the model is scattered once).  Every run is the same deterministic
``simulate`` call as a serial loop would make, so the results equal the serial ones to
the last bit, and they come back in the order of the cases.  A run that fails (an
integration failure, or a bad value in its case) does not stop the sweep: its row of
``result.table`` has the status and message.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compilation import NumericModel
from ..errors import InputError
from ..formatting import symbol_name as _short
from ..progress import as_progress
from .simulation import simulate
from .trajectory import Trajectory

if TYPE_CHECKING:
    import pandas


__all__ = ["sweep", "SweepResult", "grid_cases", "sample_cases"]

_GROUPS = ("x0", "p", "specifieds")


# ----------------------------------------------------------------- building cases
def grid_cases(**values: Sequence[float]) -> list[dict]:
    """The Cartesian product of value lists: ``grid_cases(q1=[0.1, 0.2], m=[1, 2])`` -> 4 cases
    (the last name varies fastest)."""
    if not values:
        raise InputError("grid_cases() needs at least one name=values")
    names = list(values)
    lists = []
    for name, vals in values.items():
        arr = np.atleast_1d(np.asarray(vals, dtype=float))
        if arr.ndim != 1 or arr.size == 0:
            raise InputError(f"grid_cases: {name} must be a non-empty list of numbers")
        lists.append([float(v) for v in arr])
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def sample_cases(n: int, seed: int | None = 0, **ranges: tuple[float, float]) -> list[dict]:
    """``n`` cases drawn uniformly from ``name=(low, high)`` ranges with a seeded generator
    (``numpy.random.default_rng(seed)``), so the same call gives the same cases."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"sample_cases: n must be a positive integer, got {n!r}")
    if not ranges:
        raise InputError("sample_cases() needs at least one name=(low, high)")
    rng = np.random.default_rng(seed)
    cols = {}
    for name, rg in ranges.items():
        try:
            lo, hi = (float(v) for v in rg)
        except (TypeError, ValueError):
            raise InputError(f"sample_cases: {name} must be a (low, high) pair, got {rg!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise InputError(f"sample_cases: {name} = ({lo}, {hi}) is not a finite range with low <= high")
        cols[name] = rng.uniform(lo, hi, int(n))
    return [{name: float(cols[name][i]) for name in cols} for i in range(int(n))]


# ----------------------------------------------------------------- result
@dataclass
class SweepResult:
    """What :func:`sweep` returns.

    ``trajectories``: one :class:`Trajectory` per case, in the order of the cases (None
    where a case could not start, or for all when ``keep_trajectories=False``);
    ``records``: one dict per case (the case's values, ``status``, ``success``,
    ``message``, ``nsteps``, ``wall_time``, ``warnings`` (the run's warnings, e.g. an
    initial state made consistent) and the ``final`` quantities);
    ``table``: the records as a pandas DataFrame (pandas is an optional dependency);
    ``wall_time``: seconds for the whole sweep.
    """

    cases: list[dict]
    trajectories: list[Trajectory | None]
    records: list[dict]
    wall_time: float = 0.0
    runner: str = "processes"
    _table: Any = field(default=None, repr=False)

    @property
    def table(self) -> pandas.DataFrame:
        """One row per case (pandas DataFrame): case values, status, message, final quantities."""
        if self._table is None:
            try:
                import pandas as pd
            except ImportError as exc:  # pragma: no cover - optional dependency
                raise InputError("SweepResult.table needs pandas (pip install 'symbody[sweep]'); "
                                 "result.records holds the same rows as dicts") from exc
            self._table = pd.DataFrame.from_records(self.records)
            self._table.index.name = "case"
        return self._table

    @property
    def failed(self) -> list[int]:
        """Indices of the cases whose run did not succeed."""
        return [i for i, r in enumerate(self.records) if not r["success"]]

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return (f"<SweepResult {len(self)} runs ({len(self.failed)} failed) on {self.runner}, "
                f"{self.wall_time:.3g} s>")


# ----------------------------------------------------------------- one run (also in workers)
_WORKER_MODEL: NumericModel | None = None


def _init_worker(model: NumericModel) -> None:
    global _WORKER_MODEL
    _WORKER_MODEL = model


def _split_case(model: NumericModel, case: Mapping) -> tuple[dict, dict, dict, dict]:
    """(state overrides, constant overrides, specified overrides, whole groups) of one case."""
    if not isinstance(case, Mapping):
        raise InputError(f"a case must be a dict of names and values, got {type(case).__name__}")
    states = {_short(s): s for s in model.states}
    consts = {str(s): s for s in model.constants}
    specs = {_short(s): s for s in model.specifieds}
    xs, ps, rs, groups = {}, {}, {}, {}
    for key, val in case.items():
        name = key if isinstance(key, str) else _short(key)
        if name in _GROUPS:
            groups[name] = val
        elif name in states:
            xs[states[name]] = val
        elif name in consts:
            ps[consts[name]] = val
        elif name in specs:
            rs[specs[name]] = val
        else:
            known = list(states) + list(consts) + list(specs)
            raise InputError(f"case key {key!r} is not a state, constant or specified input of the "
                             f"model ({', '.join(known)}), nor one of {', '.join(_GROUPS)}")
    return xs, ps, rs, groups


def _merge(model: NumericModel, base, over: dict, what: str, names: Sequence):
    """``base`` (array or dict) with the entries ``over`` (symbol -> value) replaced."""
    if not over:
        return base
    if base is None:
        if len(over) == len(names):
            return dict(over)
        missing = [str(n) for n in names if n not in over]
        raise InputError(f"no base {what} given and the case does not set {', '.join(missing)}")
    if isinstance(base, Mapping):
        out = {}
        for k, v in base.items():
            out[k] = v
        by_name = {(_short(s) if not isinstance(s, str) else s): s for s in out}
        for sym, v in over.items():
            key = sym if sym in out else by_name.get(_short(sym), sym)
            out[key] = v
        return out
    arr = np.array(base, dtype=float).ravel().copy()
    for sym, v in over.items():
        arr[list(names).index(sym)] = float(v)
    return arr


@dataclass(frozen=True)
class _SweepSettings:
    """What every run of one sweep shares (sent once per case to a worker, so picklable)."""

    t_span: Any
    x0: Any
    p: Any
    specifieds: Any
    options: dict
    final: Any
    keep: bool


def _run_case(index: int, case: Mapping, settings: _SweepSettings,
              model: NumericModel | None = None) -> tuple[int, Trajectory | None, dict]:
    """One run of the sweep: (index, trajectory or None, record).  Never raises for the
    case's own problems: they go into the record."""
    model = _WORKER_MODEL if model is None else model
    t_span, x0, p, specifieds = settings.t_span, settings.x0, settings.p, settings.specifieds
    options, final, keep = settings.options, settings.final, settings.keep
    record: dict[str, Any] = {}
    for key, val in case.items():
        name = key if isinstance(key, str) else _short(key)
        if name not in _GROUPS:
            record[name] = val
    traj = None
    try:
        xs, ps, rs, groups = _split_case(model, case)
        x_case = _merge(model, groups.get("x0", x0), xs, "initial state x0", model.states)
        p_case = _merge(model, groups.get("p", p), ps, "constants p", model.constants)
        r_case = groups.get("specifieds", specifieds)
        if rs:
            if callable(r_case):
                raise InputError("a case sets a specified input by name, but specifieds is a callable")
            r_case = _merge(model, r_case, rs, "specified inputs", model.specifieds)
        with warnings.catch_warnings(record=True) as caught:
            # e.g. the base x0's dependent coordinates, now guesses for the case's q_ind: kept
            # in the table (one line per run) instead of a warning per run
            warnings.simplefilter("always")
            traj = simulate(model, t_span, x_case, p_case, specifieds=r_case, progress=False, **options)
        record.update(status=traj.status, success=traj.success, message=traj.message,
                      nsteps=traj.nsteps, wall_time=traj.wall_time,
                      warnings="; ".join(str(w.message) for w in caught))
        if final is not None:
            record.update(_final_values(final, traj))
    except Exception as exc:       # a bad case: recorded, the sweep goes on
        record.update(status=-100, success=False, message=f"{type(exc).__name__}: {exc}",
                      nsteps=0, wall_time=0.0, warnings="")
    return index, (traj if keep else None), record


def _final_values(final, traj: Trajectory) -> dict:
    if callable(final):
        vals = final(traj)
        if not isinstance(vals, Mapping):
            raise InputError("final= callable must return a dict of name -> value")
        return {f"final_{k}": v for k, v in vals.items()}
    out = {}
    for name in final:
        out[f"final_{name}"] = float(traj.column(name)[-1]) if len(traj.t) else float("nan")
    out["final_t"] = float(traj.t[-1]) if len(traj.t) else float("nan")
    return out


# ----------------------------------------------------------------- driver
def sweep(model: NumericModel, t_span: Sequence[float], cases: Sequence[Mapping],
          p: np.ndarray | Mapping | None = None, *, x0: np.ndarray | Mapping | None = None,
          specifieds: Any = None, client: Any = None, processes: int | None = None,
          final: Sequence[str] | Callable[[Trajectory], dict] | None = None,
          keep_trajectories: bool = True, progress: Any = None,
          **simulate_options: Any) -> SweepResult:
    """Simulate ``model`` once per case (see the module docstring); returns a :class:`SweepResult`.

    Parameters
    ----------
    model : NumericModel.
    t_span : (t0, tf) for every run.
    cases : list of dicts (names of states / constants / specified inputs -> value, or the
        groups "x0", "p", "specifieds"), e.g. from :func:`grid_cases` or :func:`sample_cases`.
    p, x0, specifieds : the base constants, initial state and inputs the cases change.
    client : a ``dask.distributed.Client``: run on its cluster.  Default: local processes.
    processes : number of local worker processes (default: the number of CPUs); 1 runs
        the cases one after another in this process.
    final : names of coordinates/speeds whose final values become table columns
        ``final_<name>`` (with ``final_t``), or a callable ``f(trajectory) -> dict``.
    keep_trajectories : False returns only the table (less data sent back by workers).
    progress : None (a progress bar on a terminal: tqdm when installed), False, True or
        a callable ``f(done, total, message)``.
    simulate_options : passed to :func:`symbody.simulate` (``constraints``, ``rtol``, ...).

    Each run is exactly ``simulate(model, t_span, x0_case, p_case, ...)``: the results
    equal a serial loop's to the last bit, in the order of the cases.
    """
    if not isinstance(model, NumericModel):
        raise InputError(f"sweep() needs a NumericModel (symbody.compile(eom)), got {type(model).__name__}")
    if isinstance(cases, Mapping) or not isinstance(cases, Sequence) or isinstance(cases, str):
        raise InputError("cases must be a list of dicts (see grid_cases / sample_cases)")
    cases = [dict(c) if isinstance(c, Mapping) else c for c in cases]
    for i, c in enumerate(cases):
        if not isinstance(c, Mapping):
            raise InputError(f"case {i} is a {type(c).__name__}, not a dict of names and values")
        _split_case(model, c)               # unknown names fail here, before any work
    for bad in ("progress", "raise_on_failure"):
        if bad in simulate_options:
            raise InputError(f"sweep() does not pass {bad}= to the runs (failed runs are recorded)")
    if final is not None and not callable(final):
        final = [str(f) if not hasattr(f, "func") else _short(f) for f in final]
    n = len(cases)
    args = (_SweepSettings(t_span, x0, p, specifieds, dict(simulate_options), final, bool(keep_trajectories)),)
    bar = as_progress(progress, "sweep", total=n)
    tq = None
    if bar.enabled and bar.callback is None:
        try:
            from tqdm.auto import tqdm
            tq = tqdm(total=n, desc="sweep", unit="run")
            bar.enabled = False
        except ImportError:   # pragma: no cover - tqdm is optional
            tq = None
    results: list[Any] = [None] * n
    done = 0

    def tick(rec):
        nonlocal done
        done += 1
        msg = f"{done}/{n} runs" + ("" if rec.get("success") else " (a run failed)")
        bar.set(done, msg)
        if tq is not None:
            tq.update(1)

    start = time.perf_counter()
    try:
        if client is not None:
            runner = "dask"
            from dask.distributed import as_completed
            remote_model = client.scatter(model, broadcast=True)
            futures = [client.submit(_run_case, i, c, *args, model=remote_model, pure=False)
                       for i, c in enumerate(cases)]
            for fut in as_completed(futures):
                i, traj, rec = fut.result()
                results[i] = (traj, rec)
                tick(rec)
        elif processes == 1 or n <= 1:
            runner = "serial"
            for i, c in enumerate(cases):
                _, traj, rec = _run_case(i, c, *args, model=model)
                results[i] = (traj, rec)
                tick(rec)
        else:
            workers = processes or os.cpu_count() or 1
            if not isinstance(workers, int) or workers < 1:
                raise InputError(f"processes={processes!r} must be a positive integer")
            runner = f"{min(workers, n)} processes"
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(workers, n), mp_context=ctx,
                                     initializer=_init_worker, initargs=(model,)) as pool:
                futures = [pool.submit(_run_case, i, c, *args) for i, c in enumerate(cases)]
                from concurrent.futures import as_completed as cf_completed
                for fut in cf_completed(futures):
                    i, traj, rec = fut.result()
                    results[i] = (traj, rec)
                    tick(rec)
    finally:
        if tq is not None:
            tq.close()
        bar.close()
    wall = time.perf_counter() - start
    return SweepResult(cases=cases, trajectories=[r[0] for r in results],
                       records=[r[1] for r in results], wall_time=wall, runner=runner)
