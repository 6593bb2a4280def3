"""Analysis layer: simulation (drift-free constrained integration), trajectories, linearization."""

from .linearization import linearize
from .simulation import (
    DAE,
    MODES,
    STATUS,
    Baumgarte,
    ConstraintMode,
    Plain,
    Projection,
    Solver,
    simulate,
)
from .trajectory import ModelInfo, RunReport, SampleArrays, Trajectory

__all__ = ["simulate", "Trajectory", "MODES", "STATUS", "linearize", "ConstraintMode", "Plain",
           "Baumgarte", "Projection", "DAE", "Solver", "SampleArrays", "ModelInfo", "RunReport"]
