"""The three parts a :class:`~.trajectory.Trajectory` is built from:
``Trajectory(SampleArrays(...), ModelInfo(...), RunReport(...))`` (frozen; the trajectory
keeps their fields as plain attributes, not the parts themselves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .dense_output import StepInterpolant

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True)
class SampleArrays:
    """The sampled values of a :class:`Trajectory` (k samples; arrays or array-likes).

    t (k,), x (k, N + p + e) = [q, u_ind, extra states], q (k, N), u (k, o),
    holonomic_residuals (k, M), velocity_residuals (k, m), multipliers (k, m) or None,
    specified_values (k, s) or None, xdot (k, N + p + e) or None (x' at the samples, for
    the cubic Hermite interpolant used without steps), outputs {name: array over t} or None,
    steps: the integrator's dense output (:class:`~.dense_output.StepInterpolant`) or None.
    """

    t: ArrayLike
    x: ArrayLike
    q: ArrayLike
    u: ArrayLike
    holonomic_residuals: ArrayLike
    velocity_residuals: ArrayLike
    multipliers: ArrayLike | None = None
    specified_values: ArrayLike | None = None
    xdot: ArrayLike | None = None
    outputs: Mapping[str, ArrayLike] | None = None
    steps: StepInterpolant | None = None


@dataclass(frozen=True)
class ModelInfo:
    """What names the columns of a :class:`Trajectory`: the symbols of the coordinates,
    speeds, states (default: the coordinates and the first p speeds) and specified inputs,
    and the constants used (dict Symbol -> value)."""

    coordinates: Sequence
    speeds: Sequence
    constants: Mapping
    states: Sequence | None = None
    specifieds: Sequence | None = None


@dataclass(frozen=True)
class RunReport:
    """How the run that made a :class:`Trajectory` went: ``status`` (0 success, < 0
    failure: see :func:`symbody.simulate`), ``message``, the ``constraints`` mode and
    ``method`` used, ``nfev``, ``nsteps``, ``wall_time`` (s), ``partition_changes``
    ((t, dependent coordinates, dependent speeds) each), ``events`` (records),
    ``segments`` ((t_start, t_end) between impacts; None: one segment over the samples) and
    ``projection_restarts`` (how many of the mode's corrections after a step were fed back
    into the integrator, restarting it from the corrected state; the other corrections
    moved only the recorded samples)."""

    status: int = 0
    message: str = ""
    constraints: str = "none"
    method: str = ""
    nfev: int = 0
    nsteps: int = 0
    wall_time: float = 0.0
    partition_changes: Sequence = ()
    events: Sequence = ()
    segments: Sequence[tuple[float, float]] | None = None
    projection_restarts: int = 0
