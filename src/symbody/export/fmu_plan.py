"""What an FMU's files are written from (``_Plan``): the generated C, identifier, GUID,
start values, value references, tolerances."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .c_code import GeneratedC


@dataclass(frozen=True)
class _Plan:
    """What the FMU's files are written from: the generated C, the model identifier and
    GUID, the start values (x (nx), constants (c), inputs (s)), the value-reference offsets
    ``vr`` (X, UDEP, P, R, Y, RES, DER, END), whether model exchange is offered, the
    integrator's tolerances and the DefaultExperiment's stop time."""

    gen: GeneratedC
    ident: str
    guid: str
    start_x: np.ndarray
    start_p: np.ndarray
    start_r: np.ndarray
    vr: dict
    has_me: bool
    rtol: float
    atol: float
    stop_time: float
    description: str

    @property
    def residual_names(self) -> list[str]:
        return [f"loop_residual_{i}" for i in range(self.gen.layout.M)]
