"""Simulation: a driver (:mod:`.driver`) plus one module per constraint mode.

``simulate(model, t_span, x0, p, constraints=...)`` takes a mode name ("auto", "none",
"baumgarte", "project", "dae") or a mode object with options::

    from symbody.analysis.simulation import Baumgarte, Solver
    sol = simulate(model, (0, 10), x0, p, constraints=Baumgarte(alpha=50.0),
                   solver=Solver(rtol=1e-8))

How to integrate (integrator, tolerances, step limits, ...) is one :class:`Solver`
(:mod:`.options`).

A new mode is a :class:`ConstraintMode` subclass in a module of its own (see
:mod:`.strategy` for the interface, :mod:`.baumgarte` for a short example).
"""

from .baumgarte import Baumgarte
from .dae import DAE, IDAStepper
from .driver import MODES, STATUS, simulate
from .options import Solver
from .plain import Plain
from .projection import Projection
from .strategy import ConstraintMode, Stepper

__all__ = ["simulate", "MODES", "STATUS", "ConstraintMode", "Stepper", "Plain", "Baumgarte",
           "Projection", "DAE", "IDAStepper", "Solver"]
