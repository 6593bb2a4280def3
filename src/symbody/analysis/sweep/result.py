"""The sweep's result: SweepResult (trajectories, records, the table)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import InputError
from ..trajectory import Trajectory

if TYPE_CHECKING:
    import pandas


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

