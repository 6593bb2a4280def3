"""The Dask path: a worker plugin carrying the model and settings, chunks as tasks, retries."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import cloudpickle

from ...compilation import NumericModel
from .runs import _died_record, _run_chunk, _SweepSettings

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

