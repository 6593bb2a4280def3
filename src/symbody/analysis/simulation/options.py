"""The options of simulate(), checked and turned into what the driver uses.

Each function takes what the user gave and returns the checked value, or raises an
InputError that names the argument: the constraint mode (a name from MODES or a
ConstraintMode object), the dependent-set switch threshold, the time span and the
output times.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...compilation import NumericModel
from ...errors import InputError
from .baumgarte import Baumgarte
from .dae import DAE
from .plain import Plain
from .projection import Projection
from .strategy import ConstraintMode

__all__ = ["MODES", "constraint_mode", "switch_threshold_value", "time_span", "output_times"]

MODES = ("auto", "none", "baumgarte", "project", "dae")


def constraint_mode(model: NumericModel, constraints: Any, alpha: float, polish: bool) -> ConstraintMode:
    """The ConstraintMode object for ``constraints`` (a name or an object)."""
    if isinstance(constraints, ConstraintMode):
        return constraints
    if not isinstance(constraints, str) or constraints.lower() not in MODES:
        raise InputError(f"constraints={constraints!r}; choose one of {', '.join(map(repr, MODES))} "
                         "or pass a constraint-mode object (e.g. Baumgarte(alpha=20.0))")
    name = constraints.lower()
    if name == "auto":
        name = "project" if model.M else "none"
    if name == "baumgarte":
        return Baumgarte(alpha)
    if name == "dae":
        return DAE(polish)
    return Projection() if name == "project" else Plain()


def switch_threshold_value(value: Any) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"switch_threshold={value!r} must be a number in [0, 1)") from exc
    if not (value == 0.0 or 1e-3 <= value < 1.0):
        raise InputError(f"switch_threshold={value} must be 0 (no switching) or in [0.001, 1): "
                         "a smaller value would integrate too close to the singular configuration")
    return value


def time_span(t_span: Any) -> tuple[float, float]:
    try:
        t0, tf = (float(v) for v in t_span)
    except (TypeError, ValueError) as exc:
        raise InputError(f"t_span must be (t0, tf), got {t_span!r}") from exc
    if not (np.isfinite(t0) and np.isfinite(tf)) or t0 == tf:
        raise InputError(f"t_span = ({t0}, {tf}) must be two different finite times")
    return t0, tf


def output_times(t_eval: Any, t0: float, tf: float) -> np.ndarray | None:
    if t_eval is None:
        return None
    t_eval = np.asarray(t_eval, dtype=float).ravel()
    if not np.isfinite(t_eval).all():
        raise InputError(f"t_eval contains a non-finite value ({t_eval[~np.isfinite(t_eval)][0]})")
    d = np.sign(tf - t0)
    if t_eval.size and (np.any(d * np.diff(t_eval) <= 0) or d * (t_eval[0] - t0) < 0
                        or d * (t_eval[-1] - tf) > 0):
        raise InputError("t_eval must be strictly monotonic in the direction of integration "
                         f"and lie within t_span = ({t0}, {tf})")
    return t_eval
