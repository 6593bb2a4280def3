"""One run of a sweep (in this process or a worker): the shared settings, the case's run and
its record."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...compilation import NumericModel
from ...errors import InputError
from ..simulation import simulate
from ..trajectory import Trajectory
from .cases import _case_values, _merge, _split_case

#: status of a case whose worker process died twice while running it
WORKER_DIED = -101


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

