"""symbody: multibody dynamics with constraints, compiled, simulated without drift.

The public API (DESIGN.md section 4)::

    km = symbody.KanesMethod(...); km.kanes_equations(bodies, loads)
    eom = km.to_eom()
    model = symbody.compile(eom)
    sol = symbody.simulate(model, (t0, tf), x0, p)

``import symbody`` loads the formulation layer only; the compilation layer (scipy.linalg),
the analysis layer (scipy.integrate, scipy.optimize), the model zoo and the presentation
layer (matplotlib) are imported on first use of one of their names (module ``__getattr__``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    CompilationError,
    FormulationError,
    InputError,
    ModelFileError,
    NonlinearityError,
    SimulationError,
    SimulationFailedWarning,
    SingularConstraintError,
    SymbodyError,
    SymbodyFileError,
    TrajectoryFileError,
)
from .formulation import (
    AuxiliaryEquations,
    ConstraintEquations,
    EquationsOfMotion,
    KanesMethod,
    LagrangesMethod,
)
from .version import __version__ as __version__

#: public name -> (module, attribute or None for the module itself), imported when first used
_LAZY: dict[str, tuple[str, str | None]] = {
    "models": (".models", None),
    "plot": (".presentation", "plot"),
    "animate": (".presentation", "animate"),
    "view": (".presentation", "view"),
    "linearize": (".analysis.linearization", "linearize"),
    "simulate": (".analysis", "simulate"),
    "Trajectory": (".analysis", "Trajectory"),
    "compile": (".compilation", "compile"),
    "NumericModel": (".compilation", "NumericModel"),
    "make_function": (".compilation", "make_function"),
    "load_model": (".compilation.numeric_model", "load_model"),
    "Event": (".analysis.events", "Event"),
    "Tabulated": (".analysis.inputs", "Tabulated"),
    "sweep": (".analysis.sweep", "sweep"),
    "SweepResult": (".analysis.sweep", "SweepResult"),
    "grid_cases": (".analysis.sweep", "grid_cases"),
    "sample_cases": (".analysis.sweep", "sample_cases"),
    "optimize": (".optimize", None),
    "OptimalControlProblem": (".optimize", "OptimalControlProblem"),
    "AssemblyBranchWarning": (".analysis.initial_state", "AssemblyBranchWarning"),
    "redundant_constraints": (".formulation.constraint_rank", "redundant_constraints"),
    "Solver": (".analysis.simulation", "Solver"),
    "Projection": (".analysis.simulation", "Projection"),
    "Baumgarte": (".analysis.simulation", "Baumgarte"),
    "DAE": (".analysis.simulation", "DAE"),
    "Plain": (".analysis.simulation", "Plain"),
    "Execution": (".analysis.sweep", "Execution"),
    "FigureOptions": (".presentation.options", "FigureOptions"),
    "Camera": (".presentation.options", "Camera"),
    "RedundantConstraintWarning": (".compilation.redundant", "RedundantConstraintWarning"),
    "export_c": (".export", "export_c"),
    "export_fmu": (".export", "export_fmu"),
    "load_urdf": (".robots", "load_urdf"),
    "robots": (".robots", None),
    "contact": (".contact", None),
    "load_opensim": (".opensim", "load_opensim"),
    "opensim": (".opensim", None),
    "to_casadi": (".export.casadi_function", "to_casadi"),
    "joint_wrenches": (".formulation.joint_wrenches", "joint_wrenches"),
}

if TYPE_CHECKING:  # for type checkers and IDEs: the names __getattr__ provides
    from . import models
    from .analysis import Trajectory, simulate
    from .analysis.events import Event
    from .analysis.initial_state import AssemblyBranchWarning
    from .analysis.inputs import Tabulated
    from .analysis.linearization import linearize
    from .analysis.sweep import SweepResult, grid_cases, sample_cases, sweep
    from .compilation import NumericModel, compile, make_function
    from .compilation.numeric_model import load_model
    from .compilation.redundant import RedundantConstraintWarning
    from .formulation.constraint_rank import redundant_constraints
    from .presentation import animate, plot, view
    from .presentation.options import Camera, FigureOptions

if TYPE_CHECKING:  # simulate()'s option objects
    from .analysis.simulation import DAE, Baumgarte, Plain, Projection, Solver
    from .analysis.sweep import Execution

if TYPE_CHECKING:  # exporting a model as C and as an FMU (symbody.export)
    from .export import export_c, export_fmu

if TYPE_CHECKING:  # trajectory optimization (symbody.optimize)
    from . import optimize
    from .optimize import OptimalControlProblem

if TYPE_CHECKING:  # contact and friction (symbody.contact)
    from . import contact

if TYPE_CHECKING:  # URDF robots (symbody.robots)
    from . import robots
    from .robots import load_urdf

if TYPE_CHECKING:  # OpenSim models (symbody.opensim)
    from . import opensim
    from .opensim import load_opensim

if TYPE_CHECKING:  # export to CasADi (symbody.export)
    from .export.casadi_function import to_casadi

if TYPE_CHECKING:  # the joints' wrenches of a SymPy System (auxiliary speeds)
    from .formulation.joint_wrenches import joint_wrenches

__all__ = [
    "models",
    "load_urdf",
    "robots",
    "contact",
    "load_opensim",
    "opensim",
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
    "Event",
    "Tabulated",
    "sweep",
    "SweepResult",
    "grid_cases",
    "sample_cases",
    "AssemblyBranchWarning",
    "redundant_constraints",
    "RedundantConstraintWarning",
    "to_casadi",
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
    "optimize",
    "OptimalControlProblem",
    "SimulationFailedWarning",
    "SymbodyFileError",
    "ModelFileError",
    "TrajectoryFileError",
    "ConstraintEquations",
    "AuxiliaryEquations",
    "Solver",
    "Projection",
    "Baumgarte",
    "DAE",
    "Plain",
    "Execution",
    "FigureOptions",
    "Camera",
    "export_c",
    "export_fmu",
    "joint_wrenches",
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'symbody' has no attribute {name!r}")
    module = importlib.import_module(target[0], __name__)
    value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value          # later look-ups are plain attribute reads
    return value


def __dir__() -> list[str]:
    """The public names (``__all__``, the lazily imported ones) and the version, not the
    helpers this module imports for itself."""
    loaded = {name for name, value in globals().items()
              if getattr(value, "__name__", "").startswith("symbody.") and hasattr(value, "__path__")}
    return sorted(set(__all__) | set(_LAZY) | loaded | {"__version__"})
