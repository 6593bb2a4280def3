"""Analysis layer: simulation (drift-free constrained integration), trajectories, linearization."""

from .linearization import linearize
from .simulation import DAE, MODES, STATUS, Baumgarte, ConstraintMode, Plain, Projection, simulate
from .trajectory import Trajectory

__all__ = ["simulate", "Trajectory", "MODES", "STATUS", "linearize", "ConstraintMode", "Plain",
           "Baumgarte", "Projection", "DAE"]
