"""Compatibility with SymPy's ``System`` (sympy.physics.mechanics, SymPy 1.13+).

``System.form_eoms(eom_method=...)`` accepts a class only if
``issubclass(eom_method, sympy's KanesMethod)`` (or ``LagrangesMethod``); it then
builds the method object from the system's coordinates, speeds, kinematic
equations, constraints, bodies and loads (actuators' ``to_loads()`` included)
and calls ``eom_method._form_eoms()``.  SymPy's method classes derive from an
abstract base class, so symbody's classes are registered as *virtual*
subclasses: the type checks pass, while the formation stays symbody's own
(nothing of SymPy's KanesMethod or LagrangesMethod runs)::

    system.form_eoms(eom_method=symbody.KanesMethod)
    system.mass_matrix_full, system.forcing_full, system.rhs()
    eom = system.eom_method.to_eom()

The registration happens once, when symbody is imported.
"""

from __future__ import annotations

from sympy.physics.mechanics import KanesMethod as _SympyKanesMethod
from sympy.physics.mechanics import LagrangesMethod as _SympyLagrangesMethod

from .kane import KanesMethod
from .lagrange import LagrangesMethod

__all__ = ["register_with_sympy"]


def register_with_sympy() -> None:
    """Register symbody's KanesMethod/LagrangesMethod as virtual subclasses of SymPy's."""
    if not issubclass(KanesMethod, _SympyKanesMethod):
        _SympyKanesMethod.register(KanesMethod)
    if not issubclass(LagrangesMethod, _SympyLagrangesMethod):
        _SympyLagrangesMethod.register(LagrangesMethod)


register_with_sympy()
