"""Exceptions raised by symbody.

Every error names the equation, symbol or argument at fault, so that a user can
fix the input without reading a traceback into sympy or numpy.
"""

from __future__ import annotations

from typing import Any

# SymPy's error for equations not linear in the unknowns (sympy is imported by `import symbody`)
from sympy.solvers.solveset import NonlinearError as _SympyNonlinearError


class SymbodyError(Exception):
    """Base class of all symbody errors."""


class FormulationError(SymbodyError, ValueError):
    """The equations or symbols given to a formulation object are inconsistent."""


class NonlinearityError(FormulationError, _SympyNonlinearError):
    """An equation that must be linear in some variables is not.  Also a
    ``sympy.solvers.solveset.NonlinearError`` (what SymPy's KanesMethod raises there), so
    code written for SymPy's classes catches it."""


class SingularConstraintError(FormulationError):
    """The constraint Jacobian with respect to the dependent variables is singular."""


class CompilationError(SymbodyError, ValueError):
    """The equations cannot be compiled with the symbols given."""


class InputError(SymbodyError, ValueError):
    """A numeric input (state, parameter, option) is missing, malformed or non-finite."""


class SimulationError(SymbodyError, RuntimeError):
    """A simulation failed; the partial trajectory is attached as ``.trajectory``."""

    def __init__(self, message: str, trajectory: Any = None) -> None:
        super().__init__(message)
        self.trajectory = trajectory


class SimulationFailedWarning(UserWarning):
    """:func:`symbody.simulate` returned a trajectory with ``status != 0`` (not raised:
    ``Solver(raise_on_failure=False)``); ``.status`` is the trajectory's status."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class SymbodyFileError(InputError, ValueError):
    """A file given to a symbody loader is missing, damaged, of another kind or version;
    the message names the file and what is wrong.  Base of :class:`ModelFileError` and
    :class:`TrajectoryFileError`."""


class ModelFileError(SymbodyFileError):
    """A saved model (``symbody.load_model``) or a kernel-cache entry cannot be used."""


class TrajectoryFileError(SymbodyFileError):
    """A saved trajectory (``Trajectory.load``) cannot be read."""
