"""Trajectory optimization by direct collocation on symbody models.

:class:`OptimalControlProblem` states the problem with the model's own symbols (costs,
instance and path constraints as SymPy expressions, bounds; :class:`Cost` for a Mayer term,
:class:`Collocation` for the transcription's options); the dynamics, kinematic equations
and constraints are stacked automatically; exact sparse Jacobians and Hessians come from the
symbolic differentiation of one block per kind of constraint, compiled once and evaluated for
all nodes in one call; IPOPT (``pip install symbody[optimize]``) solves the NLP and the result
is a :class:`~symbody.Trajectory`; ``result.simulate()`` replays it through
:func:`symbody.simulate` (:class:`Replay`).  :class:`ModelPredictiveController` re-solves a
horizon problem every control period (receding-horizon control, closed with ``simulate``).
"""

from .mpc import ClosedLoop, ModelPredictiveController
from .problem import OptimalControlProblem
from .replay import Replay
from .solve import IPOPT_STATUS, OptimalControlResult, OptimizationDependencyError
from .statement import TRANSCRIPTIONS, Collocation, Cost, periodic

__all__ = ["OptimalControlProblem", "OptimalControlResult", "OptimizationDependencyError",
           "TRANSCRIPTIONS", "IPOPT_STATUS", "periodic", "Collocation", "Cost",
           "ModelPredictiveController", "ClosedLoop", "Replay"]
