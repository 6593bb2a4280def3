"""symbody: multibody dynamics with constraints, compiled, simulated without drift.

The public API (DESIGN.md section 4)::

    km = symbody.KanesMethod(...); km.kanes_equations(bodies, loads)
    eom = km.to_eom()
    model = symbody.compile(eom)
    sol = symbody.simulate(model, (t0, tf), x0, p)
"""

from .errors import (
    CompilationError,
    FormulationError,
    InputError,
    NonlinearityError,
    SimulationError,
    SingularConstraintError,
    SymbodyError,
)
from .formulation import EquationsOfMotion, KanesMethod

__version__ = "0.1.0"

__all__ = [
    "EquationsOfMotion",
    "KanesMethod",
    "SymbodyError",
    "FormulationError",
    "NonlinearityError",
    "SingularConstraintError",
    "CompilationError",
    "InputError",
    "SimulationError",
]
