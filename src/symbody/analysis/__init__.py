"""Analysis layer: simulation (drift-free constrained integration), trajectories, linearization."""

from .linearization import linearize
from .simulate import MODES, STATUS, simulate
from .trajectory import Trajectory

__all__ = ["simulate", "Trajectory", "MODES", "STATUS", "linearize"]
