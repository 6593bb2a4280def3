"""Analysis layer: simulation (drift-free constrained integration) and trajectories."""

from .simulate import MODES, STATUS, simulate
from .trajectory import Trajectory

__all__ = ["simulate", "Trajectory", "MODES", "STATUS"]

try:  # linearize.py is owned by another module author; export it when present
    from .linearize import linearize  # noqa: F401
except ImportError:  # pragma: no cover
    pass
else:
    __all__.append("linearize")
