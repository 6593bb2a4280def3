"""symbody: multibody dynamics with constraints, compiled, simulated without drift.

The public API (DESIGN.md section 4)::

    km = symbody.KanesMethod(...); km.kanes_equations(bodies, loads)
    eom = km.to_eom()
    model = symbody.compile(eom)
    sol = symbody.simulate(model, (t0, tf), x0, p)
"""

from . import models
from .analysis import Trajectory, simulate
from .analysis.linearization import linearize
from .compilation import NumericModel, compile, make_function
from .compilation.persistence import load_model
from .errors import (
    CompilationError,
    FormulationError,
    InputError,
    NonlinearityError,
    SimulationError,
    SingularConstraintError,
    SymbodyError,
)
from .formulation import EquationsOfMotion, KanesMethod, LagrangesMethod
from .presentation import animate, plot, view

__version__ = "0.1.0"

__all__ = [
    "models",
    "plot",
    "animate",
    "view",
    "linearize",
    "compile",
    "simulate",
    "NumericModel",
    "Trajectory",
    "make_function",
    "load_model",
    "EquationsOfMotion",
    "KanesMethod",
    "LagrangesMethod",
    "SymbodyError",
    "FormulationError",
    "NonlinearityError",
    "SingularConstraintError",
    "CompilationError",
    "InputError",
    "SimulationError",
]
