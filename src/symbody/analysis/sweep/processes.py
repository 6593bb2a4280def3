"""Local worker processes: fork (or spawn with cloudpickle), chunks, retries of a dead worker's
case, the __main__ guard check.

The workers are kept after a sweep (:class:`_Pool`): the next sweep of the same model
reuses them, sending each only its settings (cloudpickle), so that a study of many small
sweeps pays for starting processes once -- the fork of a large interpreter and the
copy-on-write faults of its first runs, in the workers and in this process, cost tens of
milliseconds per worker, as much as a few runs.  :func:`stop_workers` ends them (they are
daemons: they end with this process in any case).
"""

from __future__ import annotations

import ast
import atexit
import collections
import inspect
import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import weakref
from collections.abc import Callable
from typing import Any

import cloudpickle

from ...compilation import NumericModel
from ...errors import InputError
from .runs import _died_record, _run_case, _SweepSettings


def _dumps(obj: Any) -> bytes:
    """pickle (fast), else cloudpickle (lambdas, closures, objects defined in ``__main__``)."""
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return cloudpickle.dumps(obj)


def _worker_main(conn: Any, model: NumericModel, settings_blob: bytes | _SweepSettings) -> None:
    """A worker process: runs the chunks it receives, sending one result per case.
    ``settings_blob``: the settings (inherited by a forked worker) or their cloudpickle; a
    message ``("settings", blob)`` replaces them (the next sweep of a kept worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)         # the parent stops the sweep
    settings = cloudpickle.loads(settings_blob) if isinstance(settings_blob, bytes) else settings_blob
    while True:
        try:
            items = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if items is None:
            return
        if isinstance(items, tuple):                     # ("settings", blob)
            settings = cloudpickle.loads(items[1])
            continue
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

    def send_settings(self, blob: bytes) -> bool:
        """The next sweep's settings (cloudpickle); False when the worker is gone."""
        try:
            self.conn.send_bytes(_dumps(("settings", blob)))
        except (OSError, ValueError):
            return False
        return True

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


class _Pool:
    """The worker processes kept between sweeps of one model (one start method)."""

    def __init__(self) -> None:
        self.model: Callable[[], NumericModel | None] = lambda: None    # a weak reference
        self.method = ""
        self.idle: list[_Worker] = []

    def take(self, model: NumericModel, settings: _SweepSettings, count: int) -> list[_Worker]:
        """Up to ``count`` kept workers of ``model``, each sent the settings (none when they
        do not pickle: new workers inherit them by fork)."""
        self.idle = [w for w in self.idle if w.proc.is_alive()]
        if self.model() is not model or self.method != _start_method() or not self.idle:
            return []
        try:
            blob = cloudpickle.dumps(settings)
        except Exception:       # noqa: BLE001 - unpicklable inputs: fresh forked workers
            return []
        taken = []
        while self.idle and len(taken) < count:
            w = self.idle.pop()
            if w.send_settings(blob):
                taken.append(w)
            else:
                w.stop()
        return taken

    def keep(self, model: NumericModel, workers: list[_Worker]) -> None:
        """Keep ``workers`` (idle, nothing pending) for the next sweep of ``model``."""
        if self.model() is not model or self.method != _start_method():
            self.stop()
            self.model, self.method = weakref.ref(model), _start_method()
        self.idle.extend(w for w in workers if w.proc.is_alive() and not w.pending)

    def size(self, model: NumericModel) -> int:
        """How many kept workers ``model``'s next sweep would find."""
        if self.model() is not model or self.method != _start_method():
            return 0
        return sum(w.proc.is_alive() for w in self.idle)

    def stop(self) -> None:
        idle, self.idle = self.idle, []
        for w in idle:
            w.stop()


_POOL = _Pool()


def kept_workers(model: NumericModel) -> int:
    """The number of worker processes kept from an earlier sweep of ``model``."""
    return _POOL.size(model)


def stop_workers() -> None:
    """End the worker processes kept between sweeps (:mod:`this module's doc <.processes>`)."""
    _POOL.stop()


atexit.register(stop_workers)


def _run_processes(model: NumericModel, settings: _SweepSettings, queue: collections.deque,
                   workers: int, chunk: int, cases: list, on_result: Callable,
                   keep: bool = True) -> None:
    """Run the items of ``queue`` on ``workers`` local processes, ``chunk`` cases per message;
    ``on_result(i, traj, record)`` for each.  A worker that dies loses only the case it
    was running: retried once, then recorded as failed (status -101).  The workers kept
    from the last sweep of ``model`` are used first; with ``keep`` they are kept again when
    the sweep ends normally (see :class:`_Pool`)."""
    ctx = multiprocessing.get_context(_start_method())
    # forked workers inherit the settings; spawned ones get them once, by cloudpickle
    blob = settings if ctx.get_start_method() == "fork" else cloudpickle.dumps(settings)
    attempts: collections.Counter = collections.Counter()
    pool: list[_Worker] = _POOL.take(model, settings, min(workers, len(queue)))
    finished = False

    def feed(w: _Worker) -> None:
        # up to two chunks queued per worker; the chunks shrink towards the end (guided
        # scheduling) so that the workers finish together
        while queue:
            size = max(1, min(chunk, len(queue), math.ceil(len(queue) / (2 * workers))))
            if len(w.pending) > size:
                break
            w.send([queue.popleft() for _ in range(size)])

    try:
        while len(pool) < min(workers, len(queue)):
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
        finished = True
    finally:
        if finished and keep:
            _POOL.keep(model, pool)
        else:
            for w in pool:
                w.stop()


def _workers_available() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # pragma: no cover - not Linux
        return os.cpu_count() or 1
