"""sweep(): many simulations of one compiled model -- Monte Carlo, parameter and design studies.

Each *case* is a dict that changes the base run ``simulate(model, t_span, x0, p, ...)``::

    {"q1": 0.3, "m": 2.0}                        # names of states, constants or specified inputs
    {"x0": {...} or array, "p": {...}, "specifieds": ...}   # or whole groups

A name of a state (coordinate or independent speed) replaces that entry of ``x0``, a name
of a constant that entry of ``p``, a name of a specified input its (constant) value.
:func:`grid_cases` builds the Cartesian product of value lists, :func:`sample_cases` a
seeded uniform sample from ranges.

**Assembly branch.** With holonomic constraints f_h(q, t) = 0 each case's dependent
coordinates are solved on the branch (assembly mode) of the base state: by continuation
from the nearest case already solved (Newton's method from its q_dep while the case's
independent coordinates and constants move to their values in sub-steps; see
:func:`~symbody.analysis.initial_state.continue_assembly`), starting from the base ``x0``
or from ``assembly_branch=`` (a state on the wanted branch).  A case that could only be
assembled elsewhere (a different sign of det ∂f_h/∂q_dep than the base, or not reached by
continuation) has ``branch_ok = False`` in the table and an :class:`AssemblyBranchWarning`
names it; ``result.initial_states`` holds the states the runs started from.

**Runs.** Every run is the same deterministic ``simulate`` call as a serial loop from
``result.initial_states`` would make, so the results equal the serial ones to the last
bit, in the order of the cases.  The first runs are timed in this process; when the rest
would gain from workers, they go in chunks of about 0.1 s of work (0.25 s on Dask) to
local worker processes (``fork`` on Linux: the model and the inputs are inherited, never
pickled; elsewhere ``spawn`` with the settings sent once by cloudpickle, so lambdas work)
or, given a ``dask.distributed.Client``, to its workers (model and settings sent once
per worker by a worker plugin, which also reaches workers restarted later).  A sweep
too small to gain runs serially; ``result.parallel`` says which and why.
A run that fails does not stop the sweep: its row of ``result.table`` has the status and
message.  A worker process that dies loses only the case it was running, which is retried
once and then recorded with status -101.  ``execution=Execution(checkpoint="file.jsonl")``
appends each finished row to the file and, run again, skips the cases already there.  Where
and how the runs go is one :class:`Execution` object; how each run integrates is the same
``constraints=`` / ``solver=Solver(...)`` as for ``simulate``.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import hashlib
import inspect
import itertools
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import cloudpickle
import numpy as np

from ..compilation import NumericModel
from ..errors import InputError
from ..formatting import symbol_name as _short
from ..progress import as_progress
from .initial_state import AssemblyBranchWarning, continue_assembly
from .initial_state import assembly_branch as _branch_sign
from .simulation import Solver, simulate
from .simulation.options import legacy_options, solver_type_message
from .trajectory import Trajectory

if TYPE_CHECKING:
    import pandas


__all__ = ["sweep", "Execution", "SweepResult", "grid_cases", "sample_cases", "AssemblyBranchWarning"]

_GROUPS = ("x0", "p", "specifieds")
#: seconds of work per chunk sent to a local process / a Dask worker
_CHUNK_SECONDS = {"processes": 0.1, "dask": 0.25}
#: status of a case whose worker process died twice while running it
WORKER_DIED = -101


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
    where a case could not start, for cases read back from a checkpoint, or for all when
    ``Execution(keep_trajectories=False)``);
    ``records``: one dict per case (the case's values, ``status``, ``success``,
    ``message``, ``nsteps``, ``wall_time``, ``warnings`` (the run's warnings), with
    holonomic constraints ``branch`` (sign det ∂f_h/∂q_dep of the initial state) and
    ``branch_ok`` (assembled on the base state's branch), and the ``final`` quantities);
    ``table``: the records as a pandas DataFrame (pandas is an optional dependency), with
    ``table.attrs["parallel"]``;
    ``initial_states``: per case the consistent state ``[q (N), u_ind (p), ...]`` the run
    started from (None where the case could not be assembled);
    ``parallel``: how the runs were spread and why (e.g. why a small sweep ran serially);
    ``wall_time``: seconds for the whole sweep.
    """

    cases: list[dict]
    trajectories: list[Trajectory | None]
    records: list[dict]
    wall_time: float = 0.0
    runner: str = "processes"
    initial_states: list[np.ndarray | None] = field(default_factory=list)
    parallel: str = ""
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
            self._table.attrs["parallel"] = self.parallel
        return self._table

    @property
    def failed(self) -> list[int]:
        """Indices of the cases whose run did not succeed."""
        return [i for i, r in enumerate(self.records) if not r["success"]]

    @property
    def off_branch(self) -> list[int]:
        """Indices of the cases not assembled on the base state's branch (``branch_ok`` False)."""
        return [i for i, r in enumerate(self.records) if r.get("branch_ok") is False]

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return (f"<SweepResult {len(self)} runs ({len(self.failed)} failed) on {self.runner}, "
                f"{self.wall_time:.3g} s>")


# ----------------------------------------------------------------- one run (also in workers)

@dataclass(frozen=True)
class _SweepSettings:
    """What every run of one sweep shares (sent once to each worker)."""

    t_span: Any
    x0: Any
    p: Any
    specifieds: Any
    options: dict
    final: Any
    keep: bool


def _case_values(case: Mapping) -> dict:
    out = {}
    for key, val in case.items():
        name = key if isinstance(key, str) else _short(key)
        if name not in _GROUPS:
            out[name] = val
    return out


def _run_case(index: int, case: Mapping, settings: _SweepSettings, model: NumericModel,
              x_run: np.ndarray | None = None) -> tuple[int, Trajectory | None, dict]:
    """One run of the sweep: (index, trajectory or None, record).  ``x_run``: the case's
    assembled initial state (else the case's values merged into the base x0).  Never
    raises for the case's own problems: they go into the record."""
    t_span, x0, p, specifieds = settings.t_span, settings.x0, settings.p, settings.specifieds
    options, final, keep = settings.options, settings.final, settings.keep
    record: dict[str, Any] = _case_values(case)
    traj = None
    try:
        xs, ps, rs, groups = _split_case(model, case)
        if x_run is not None:
            x_case = x_run
        else:
            x_case = _merge(model, groups.get("x0", x0), xs, "initial state x0", model.states)
        p_case = _merge(model, groups.get("p", p), ps, "constants p", model.constants)
        r_case = groups.get("specifieds", specifieds)
        if rs:
            if callable(r_case):
                raise InputError("a case sets a specified input by name, but specifieds is a callable")
            r_case = _merge(model, r_case, rs, "specified inputs", model.specifieds)
        with warnings.catch_warnings(record=True) as caught:
            # kept in the table (one line per run) instead of a warning per run
            warnings.simplefilter("always")
            traj = simulate(model, t_span, x_case, p_case, specifieds=r_case, **options)
        record.update(status=traj.status, success=traj.success, message=traj.message,
                      nsteps=traj.nsteps, wall_time=traj.wall_time,
                      warnings="; ".join(str(w.message) for w in caught))
        if final is not None:
            record.update(_final_values(final, traj))
    except Exception as exc:       # a bad case: recorded, the sweep goes on
        record.update(status=-100, success=False, message=f"{type(exc).__name__}: {exc}",
                      nsteps=0, wall_time=0.0, warnings="")
    return index, (traj if keep else None), record


def _run_chunk(items: list, settings: _SweepSettings, model: NumericModel) -> list:
    """Runs of several cases (a Dask task): [(index, trajectory, record), ...]."""
    return [_run_case(i, case, settings, model, x_run) for i, case, x_run in items]


def _died_record(case: Mapping, why: str) -> dict:
    record = _case_values(case)
    record.update(status=WORKER_DIED, success=False,
                  message=f"the worker running this case died ({why}), also when retried once",
                  nsteps=0, wall_time=0.0, warnings="")
    return record


# ----------------------------------------------------------------- assembly on one branch
@dataclass
class _Prepared:
    x: np.ndarray          # the case's state guess (state_array)
    P: np.ndarray          # its constants
    own_guess: bool        # the case gives its own dependent coordinates (or a whole x0)


def _prepare(model: NumericModel, case: Mapping, settings: _SweepSettings,
             base: tuple | None) -> _Prepared | None:
    """The case's state guess and constants as arrays (None when they are not valid: the
    run then reports why).  ``base``: (x, P) arrays of the base x0 and p, when valid."""
    try:
        xs, ps, _, groups = _split_case(model, case)
        if base is not None and "x0" not in groups and "p" not in groups:
            x, P = base[0].copy(), base[1].copy()
            index = base[2]
            for sym, v in xs.items():
                x[index[sym]] = float(v)
            for sym, v in ps.items():
                P[index[sym]] = float(v)
            if not (np.isfinite(x).all() and np.isfinite(P).all()):
                return None
        else:
            x_case = _merge(model, groups.get("x0", settings.x0), xs, "initial state x0", model.states)
            p_case = _merge(model, groups.get("p", settings.p), ps, "constants p", model.constants)
            x = model.state_array(x_case)
            P = model.constants_array(p_case)
    except Exception:      # the run reports it (with the same message) in the table
        return None
    dep = set(model.dependent_coordinates)
    own = "x0" in groups or any(s in dep for s in xs)
    return _Prepared(x, P, own)


def _assemble(model: NumericModel, cases: list, settings: _SweepSettings, t0: float,
              branch_from: Any) -> tuple[list, list, list]:
    """(initial states, branch signs, branch_ok flags) per case; see the module docstring."""
    n_cases = len(cases)
    try:
        index = {s: k for k, s in enumerate(model.states)}
        index.update({s: k for k, s in enumerate(model.constants)})
        base = (model.state_array(settings.x0), model.constants_array(settings.p), index)
    except Exception:
        base = None
    prepared = [_prepare(model, c, settings, base) for c in cases]
    states: list = [None if pr is None else pr.x for pr in prepared]
    if not model.M:
        return states, [None] * n_cases, [None] * n_cases
    n = model.n
    root = None                          # (q, P) of the branch's defining state
    independent = isinstance(branch_from, str) and branch_from == "independent"
    if not independent:
        ref = settings.x0 if branch_from is None or isinstance(branch_from, str) else branch_from
        try:
            P_root = model.constants_array(settings.p)
        except Exception:
            P_root = next((pr.P for pr in prepared if pr is not None), None)
        if ref is not None and P_root is not None:
            try:
                root = (model.consistent_state(ref, P_root, t0)[:model.N], P_root)
            except Exception as exc:
                if branch_from is not None and not isinstance(branch_from, str):
                    raise InputError(f"assembly_branch: the state could not be assembled: {exc}") from exc
    method = ["none"] * n_cases
    qs: list = [None] * n_cases
    signs: list = [None] * n_cases

    def by_newton(i: int) -> None:
        pr = prepared[i]
        try:
            qs[i] = model.consistent_state(pr.x, pr.P, t0)[:model.N]
            method[i] = "given"
        except Exception:
            pass

    todo = [i for i, pr in enumerate(prepared) if pr is not None]
    follow = [i for i in todo if not prepared[i].own_guess] if not independent else []
    for i in set(todo) - set(follow):
        by_newton(i)
    while follow and root is None:       # no base state: the first case solved defines it
        i = follow.pop(0)
        by_newton(i)
        if qs[i] is not None:
            root = (qs[i], prepared[i].P)
    if follow:
        # Prim's order: always the unsolved case nearest (in scaled q_ind and constants) to a
        # solved one, continued from that one
        V = np.array([np.concatenate([prepared[i].x[:n], prepared[i].P]) for i in follow])
        v_root = np.concatenate([root[0][:n], root[1]])
        span = np.ptp(np.vstack([V, v_root]), axis=0)
        w = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)
        seeds: list = [(root[0], root[1], _branch_sign(model, root[0], root[1], t0))]
        dist = np.sqrt((((V - v_root) * w) ** 2).sum(axis=1))
        parent = np.zeros(len(follow), dtype=int)
        left = np.ones(len(follow), dtype=bool)
        for _ in range(len(follow)):
            k = int(np.argmin(np.where(left, dist, np.inf)))
            left[k] = False
            i = follow[k]
            q_from, P_from, sign_from = seeds[parent[k]]
            q = continue_assembly(model, q_from, P_from, prepared[i].x[:n], prepared[i].P, t0,
                                  branch=sign_from)
            if q is None:
                by_newton(i)
                if method[i] == "given":
                    method[i] = "fallback"
                continue
            qs[i], method[i] = q, "continued"
            signs[i] = _branch_sign(model, q, prepared[i].P, t0)
            seeds.append((q, prepared[i].P, signs[i]))
            d_new = np.sqrt((((V - V[k]) * w) ** 2).sum(axis=1))
            closer = left & (d_new < dist)
            dist[closer] = d_new[closer]
            parent[closer] = len(seeds) - 1
    ref_branch = _branch_sign(model, root[0], root[1], t0) if root is not None else None
    ok: list = [None] * n_cases
    for i in range(n_cases):
        if qs[i] is None:
            if prepared[i] is not None:
                ok[i] = False
            continue
        x = prepared[i].x.copy()
        x[:model.N] = qs[i]
        states[i] = x
        if signs[i] is None:
            signs[i] = _branch_sign(model, qs[i], prepared[i].P, t0)
        if ref_branch is None:
            ref_branch = signs[i]
        ok[i] = bool(signs[i] == ref_branch and method[i] != "fallback")
    return states, signs, ok


_NAMES: dict[int, tuple] = {}


def _name_maps(model: NumericModel) -> tuple[dict, dict, dict]:
    """name -> symbol of the states, constants and specified inputs (cached per model)."""
    hit = _NAMES.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    maps = ({_short(s): s for s in model.states}, {str(s): s for s in model.constants},
            {_short(s): s for s in model.specifieds})
    if len(_NAMES) > 8:
        _NAMES.clear()
    _NAMES[id(model)] = (model, maps)
    return maps


def _split_case(model: NumericModel, case: Mapping) -> tuple[dict, dict, dict, dict]:
    """(state overrides, constant overrides, specified overrides, whole groups) of one case."""
    if not isinstance(case, Mapping):
        raise InputError(f"a case must be a dict of names and values, got {type(case).__name__}")
    states, consts, specs = _name_maps(model)
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


# ----------------------------------------------------------------- local worker processes
def _dumps(obj: Any) -> bytes:
    """pickle (fast), else cloudpickle (lambdas, closures, objects defined in ``__main__``)."""
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return cloudpickle.dumps(obj)


def _worker_main(conn: Any, model: NumericModel, settings_blob: bytes | _SweepSettings) -> None:
    """A worker process: runs the chunks it receives, sending one result per case.
    ``settings_blob``: the settings (inherited by a forked worker) or their cloudpickle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)         # the parent stops the sweep
    settings = cloudpickle.loads(settings_blob) if isinstance(settings_blob, bytes) else settings_blob
    while True:
        try:
            items = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if items is None:
            return
        for i, case, x_run in items:
            out = _run_case(i, case, settings, model, x_run)
            try:
                blob = _dumps(out)
            except Exception as exc:      # a trajectory that does not pickle: keep the row
                rec = dict(out[2])
                rec["warnings"] = (rec.get("warnings", "") + f"; trajectory not sent back: {exc}").lstrip("; ")
                blob = _dumps((i, None, rec))
            conn.send_bytes(blob)


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class _Worker:
    def __init__(self, ctx: Any, model: NumericModel, settings_blob: bytes | _SweepSettings) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, model, settings_blob), daemon=True)
        self.proc.start()
        child.close()
        self.pending: collections.deque = collections.deque()     # items sent, in order

    def send(self, items: list) -> None:
        self.conn.send_bytes(_dumps(items))
        self.pending.extend(items)

    def stop(self) -> None:
        try:
            self.conn.send_bytes(_dumps(None))
        except (OSError, ValueError):
            pass
        self.proc.join(timeout=2.0)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()
        self.conn.close()


def _start_method() -> str:
    """fork on Linux (nothing pickled, no ``__main__`` guard needed) unless the user chose
    another start method; spawn elsewhere."""
    chosen = multiprocessing.get_start_method(allow_none=True)
    if chosen is not None:
        return chosen
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def _is_main_guard(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    if not isinstance(node, ast.If) or not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    consts = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and consts == ["__main__"]


def _check_main_guard() -> None:
    """With spawn/forkserver every worker imports the main script again: a script that calls
    sweep() at its top level, outside ``if __name__ == "__main__":``, would run again in each
    worker.  Raise InputError before any process starts."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path or not os.path.isfile(path):
        return                                   # interactive, -c, notebooks: nothing re-runs
    frame = inspect.currentframe()
    frame = frame.f_back if frame is not None else None
    line = None
    while frame is not None:
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
            break
        frame = frame.f_back
    if line is None:
        return                                   # called from a function: the guard is the user's
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return
    for node in ast.walk(tree):
        if _is_main_guard(node) and node.lineno <= line <= (node.end_lineno or node.lineno):
            return
    raise InputError(
        f"sweep() on local processes started by {_start_method()!r} imports the main script "
        f"{path} again in every worker, and the script calls sweep() at its top level (line "
        f"{line}), outside `if __name__ == \"__main__\":` -- each worker would run the whole "
        "script again.  Put the script's work under that guard (see docs/guides/sweeps.md), or pass "
        "execution=Execution(processes=1) / Execution(parallel=False)")


def _run_processes(model: NumericModel, settings: _SweepSettings, queue: collections.deque,
                   workers: int, chunk: int, cases: list, on_result: Callable) -> None:
    """Run the items of ``queue`` on ``workers`` local processes, ``chunk`` cases per message;
    ``on_result(i, traj, record)`` for each.  A worker that dies loses only the case it
    was running: retried once, then recorded as failed (status -101)."""
    ctx = multiprocessing.get_context(_start_method())
    # forked workers inherit the settings; spawned ones get them once, by cloudpickle
    blob = settings if ctx.get_start_method() == "fork" else cloudpickle.dumps(settings)
    attempts: collections.Counter = collections.Counter()
    pool: list[_Worker] = []

    def feed(w: _Worker) -> None:
        # up to two chunks queued per worker; the chunks shrink towards the end (guided
        # scheduling) so that the workers finish together
        while queue:
            size = max(1, min(chunk, len(queue), math.ceil(len(queue) / (2 * workers))))
            if len(w.pending) > size:
                break
            w.send([queue.popleft() for _ in range(size)])

    try:
        for _ in range(min(workers, len(queue))):
            pool.append(_Worker(ctx, model, blob))
        for w in pool:
            feed(w)
        while any(w.pending for w in pool):
            ready = multiprocessing.connection.wait(
                [w.conn for w in pool if w.pending] + [w.proc.sentinel for w in pool if w.pending])
            for w in list(pool):
                if w.conn not in ready and w.proc.sentinel not in ready:
                    continue
                dead = False
                try:
                    while w.pending and w.conn.poll():
                        i, traj, rec = pickle.loads(w.conn.recv_bytes())
                        item = w.pending.popleft()
                        assert item[0] == i, "results out of order"
                        on_result(i, traj, rec)
                except (EOFError, OSError):
                    dead = True
                if dead or not w.proc.is_alive():
                    w.proc.join()
                    why = _exit_reason(w.proc.exitcode)
                    lost = list(w.pending)
                    w.pending.clear()
                    w.conn.close()
                    pool.remove(w)
                    if lost:
                        first = lost[0]                       # the case it was running
                        attempts[first[0]] += 1
                        rest = lost[1:]
                        if attempts[first[0]] >= 2:
                            on_result(first[0], None, _died_record(cases[first[0]], why))
                        else:
                            rest = [first] + rest
                        queue.extendleft(reversed(rest))
                    if queue and len(pool) < workers:
                        pool.append(_Worker(ctx, model, blob))
                        feed(pool[-1])
                    if not pool and queue:                   # pragma: no cover - defensive
                        pool.append(_Worker(ctx, model, blob))
                        feed(pool[-1])
                else:
                    feed(w)
            for w in pool:
                feed(w)
    finally:
        for w in pool:
            w.stop()


#: per Dask worker process: sweep id -> (model, settings), set by _SweepPlugin
_DASK_STATE: dict[str, tuple] = {}


class _SweepPlugin:
    """A Dask worker plugin carrying the model and the settings of one sweep to every
    worker once -- also to workers started later (a nanny restarting a dead worker)."""

    def __init__(self, key: str, model: NumericModel, settings: _SweepSettings) -> None:
        self.key = key
        self.name = key
        self.model = model
        self.settings_blob = cloudpickle.dumps(settings)

    def setup(self, worker: Any = None) -> None:
        _DASK_STATE[self.key] = (self.model, cloudpickle.loads(self.settings_blob))

    def teardown(self, worker: Any = None) -> None:
        _DASK_STATE.pop(self.key, None)


def _run_chunk_on_worker(items: list, key: str) -> list:
    model, settings = _DASK_STATE[key]
    return _run_chunk(items, settings, model)


def _run_dask(client: Any, model: NumericModel, settings: _SweepSettings, items: list,
              chunk: int, cases: list, on_result: Callable) -> None:
    """Chunks of cases as Dask tasks; the model and the settings reach every worker once,
    by a worker plugin.  The cases of a chunk lost with its worker are run again one at a
    time (so that a death is the running case's own); a case lost twice is recorded with
    status -101."""
    from dask.distributed import WorkerPlugin, as_completed

    key = f"symbody-sweep-{os.getpid()}-{time.time_ns()}"
    plugin_cls = type("SymbodySweepPlugin", (_SweepPlugin, WorkerPlugin), {})
    client.register_plugin(plugin_cls(key, model, settings), name=key)
    try:
        owner = {}
        for k in range(0, len(items), chunk):
            c = items[k:k + chunk]
            owner[client.submit(_run_chunk_on_worker, c, key, pure=False)] = c
        suspects: list = []
        for fut in as_completed(list(owner)):
            c = owner.pop(fut)
            try:
                out = fut.result()
            except Exception:            # its worker died (or the task could not run)
                suspects.extend(c)
                continue
            for i, traj, rec in out:
                on_result(i, traj, rec)
        # the cases of lost chunks, one at a time: a death is then this case's own
        for item in suspects:
            for attempt in (1, 2):
                try:
                    out = client.submit(_run_chunk_on_worker, [item], key, pure=False).result()
                except Exception as exc:
                    if attempt == 2:
                        on_result(item[0], None,
                                  _died_record(cases[item[0]], f"{type(exc).__name__}: {exc}"))
                    continue
                on_result(*out[0])
                break
    finally:
        try:
            client.unregister_worker_plugin(key)
        except Exception:     # pragma: no cover - a cluster already gone
            pass


# ----------------------------------------------------------------- checkpoint file
def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


def _checkpoint_key(cases: list, t_span: Any) -> str:
    text = json.dumps({"t_span": t_span, "cases": [{str(k): v for k, v in c.items()} for c in cases]},
                      sort_keys=True, default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()


def _read_checkpoint(path: str, key: str, n: int) -> dict[int, dict]:
    """Records already in the checkpoint file (case index -> record); {} when it is new."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return {}
    done: dict[int, dict] = {}
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    try:
        header = json.loads(lines[0])
    except (json.JSONDecodeError, IndexError):
        header = None
    if not isinstance(header, dict) or "symbody_sweep" not in header:
        raise InputError(f"checkpoint={path!r} exists and is not a symbody sweep checkpoint; "
                         "remove it or choose another file")
    if header.get("key") != key or header.get("n_cases") != n:
        raise InputError(f"checkpoint={path!r} was written by a sweep with other cases or t_span "
                         f"({header.get('n_cases')} cases); remove it or choose another file")
    for k, line in enumerate(lines[1:], start=2):
        try:
            row = json.loads(line)
            done[int(row["case"])] = row["record"]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            if k == len(lines):           # a row cut short when the sweep was killed: redone
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write("\n".join(lines[:-1]) + "\n")
                continue
            raise InputError(f"checkpoint={path!r}: line {k} is not a sweep row") from None
    return done


# ----------------------------------------------------------------- driver
def _workers_available() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # pragma: no cover - not Linux
        return os.cpu_count() or 1


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


def _check_cases(model: NumericModel, cases: Any) -> list:
    if isinstance(cases, Mapping) or not isinstance(cases, Sequence) or isinstance(cases, str):
        raise InputError("cases must be a list of dicts (see grid_cases / sample_cases)")
    cases = [dict(c) if isinstance(c, Mapping) else c for c in cases]
    for i, c in enumerate(cases):
        if not isinstance(c, Mapping):
            raise InputError(f"case {i} is a {type(c).__name__}, not a dict of names and values")
        _split_case(model, c)               # unknown names fail here, before any work
    return cases


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
        self.times: list[float] = []

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
        t_a = time.perf_counter()
        i, traj, rec = _run_case(item[0], item[1], self.settings, self.model, item[2])
        self.times.append(time.perf_counter() - t_a)
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
        times = self.times
        while queue and len(times) < 3 and (not times or max(times) < 0.05):
            self.run_here(queue.popleft())
        t_run = float(np.median(times)) if times else 0.0
        rest = len(queue)
        serial_est = rest * t_run
        w_eff = max(1, min(workers, rest))
        if kind == "processes":
            # fork: a copy of this process; spawn/forkserver: a new interpreter imports
            # symbody and unpickles the model
            overhead = (0.03 + 0.02 * w_eff if _start_method() == "fork" else 1.0 + 0.3 * w_eff)
            overhead += 2e-4 * rest
        else:       # plugin with model and settings, per-task latency, results' transfer
            overhead = 0.1 + 5e-4 * rest
        parallel_est = overhead + serial_est / w_eff
        probe = (f"{len(times)} run{'s' if len(times) != 1 else ''} timed here first "
                 f"({t_run * 1e3:.3g} ms each, {time.perf_counter() - probe_start:.2g} s)")
        if not (rest and (parallel is True or parallel_est < 0.9 * serial_est)):
            where = f"{workers} {'Dask worker threads' if kind == 'dask' else 'processes'}"
            how = (f"serial in this process: {rest} more runs of ~{t_run * 1e3:.3g} ms "
                   f"({serial_est:.2g} s) would not gain from {where} (start-up and transfer "
                   f"~{overhead:.2g} s); {probe}" if rest else f"serial in this process ({probe})")
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
            _run_processes(self.model, self.settings, queue, w_eff, chunk, self.cases,
                           self.on_result)
            return f"{w_eff} processes", f"{w_eff} processes ({method}), {chunks}"
        items = list(queue)
        queue.clear()
        _run_dask(self.execution.client, self.model, self.settings, items, chunk, self.cases,
                  self.on_result)
        return "dask", f"Dask, {workers} worker threads, {chunks}"
