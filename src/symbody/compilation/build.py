"""``symbody.compile``: equations (or a SymPy ``System``) -> NumericModel.

Accepted sources:

- an :class:`~symbody.EquationsOfMotion`;
- a ``sympy.physics.mechanics.System``: its equations are formed with symbody's
  KanesMethod when they were not formed yet, or were formed with SymPy's class
  (``LagrangesMethod`` -> symbody's LagrangesMethod), through
  ``system.form_eoms(eom_method=...)`` (so ``system.eom_method`` becomes
  symbody's).  The system's actuators that carry their own first-order dynamics
  (SymPy biomechanics musculotendons and activation models: ``x``, ``r``,
  ``rhs()``) become extra states, their inputs specified inputs, unless
  ``extra_states`` says otherwise.  Every other function of time must be
  declared in ``specifieds``.

Before the kernels are built, every SymPy function the backend cannot compile is
replaced by its own definition (``doit()``) or refused with an error naming it
(:mod:`.function_expansion`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import CompilationError
from .codegen import resolve_backend
from .function_expansion import expand_functions_in_eom
from .numeric_model import NumericModel

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion


__all__ = ["compile", "equations_of"]


def _system_actuators_with_states(system) -> list:
    return [act for act in system.actuators
            if hasattr(act, "rhs") and hasattr(act, "x") and hasattr(act, "r")]


def equations_of(source: Any, extra_states: Any = None,
                 specifieds: Sequence | None = None) -> EquationsOfMotion:
    """The EquationsOfMotion of ``source`` (see the module docstring), with extra states."""
    from sympy.physics.mechanics import KanesMethod as SympyKane
    from sympy.physics.mechanics import LagrangesMethod as SympyLagrange
    from sympy.physics.mechanics import System

    from ..formulation import EquationsOfMotion, KanesMethod, LagrangesMethod

    if isinstance(source, EquationsOfMotion):
        if extra_states is None:
            return source             # NumericModel checks the ordering of specifieds
        return source.with_extra_states(extra_states, specifieds=specifieds)
    if isinstance(source, System):
        method = source.eom_method
        if not isinstance(method, (KanesMethod, LagrangesMethod)):
            cls = LagrangesMethod if isinstance(method, SympyLagrange) else KanesMethod
            source.form_eoms(eom_method=cls)
            method = source.eom_method
        if extra_states is None:
            extra_states = _system_actuators_with_states(source)
        return method.to_eom(extra_states=extra_states, specifieds=list(specifieds or []))
    if isinstance(source, (KanesMethod, LagrangesMethod)):
        raise CompilationError(f"compile() needs an EquationsOfMotion or a SymPy System, got a "
                               f"symbody {type(source).__name__}; pass method.to_eom()")
    if isinstance(source, (SympyKane, SympyLagrange)):
        name = type(source).__name__
        raise CompilationError(
            f"compile() needs an EquationsOfMotion or a SymPy System, got SymPy's own {name}, "
            f"which has no to_eom(): form the equations with symbody.{name} instead (the same "
            f"arguments: replace sympy.physics.mechanics.{name} by symbody.{name}) and pass "
            "method.to_eom(), or pass a sympy.physics.mechanics System (compile forms it with "
            "symbody's class)")
    raise CompilationError(f"compile() needs an EquationsOfMotion or a sympy.physics.mechanics "
                           f"System, got {type(source).__name__}")


def compile(eom: Any, constants: Sequence | None = None, specifieds: Sequence | None = None,
            backend: str = "auto", cache: bool = True, progress: Any = None, *,
            extra_states: Any = None, contacts: Sequence | None = None,
            forward_dynamics: str = "auto") -> NumericModel:
    """Compile equations of motion into a :class:`NumericModel`.

    ``eom``: an EquationsOfMotion or a SymPy ``System`` (see :mod:`symbody.compilation.build`).  ``constants`` /
    ``specifieds``: optional orderings (default: the equations', sorted by name);
    every symbol the equations use must be included.  ``extra_states``: extra
    first-order states ``{a: a'}`` or SymPy biomechanics objects (their ``x``,
    ``r``, ``rhs()``).  ``contacts``: ``symbody.contact.Contact`` objects (or their
    records) held by hand-derived equations whose dynamic block contains their generalized
    forces (equations formed from the contacts' loads hold them already:
    ``eom.contacts``).  ``backend``: "auto" (the model's kernels as generated C when a C
    compiler works, built in background threads; else symengine LLVM, else numpy), "c",
    "llvm", "lambda" or "numpy".  ``cache``: reuse compiled kernels from
    the on-disk cache ($SYMBODY_CACHE_DIR or ~/.cache/symbody).  ``forward_dynamics``: how
    ``rhs``, ``rhs_many`` and the compiled steps get u' when the equations also carry a
    recursion for it (URDF robots: the articulated-body algorithm, O(n) in the joints):
    "auto" (the recursion from ``kernel_assembly.RECURSION_MIN_SPEEDS`` speeds on, where it
    costs fewer operations than the mass matrix and its factorization), "recursion" (always)
    or "solve" (M_d and a dense solve).  Every other member (accelerations, multipliers,
    derivatives, linearization, export) reads the canonical blocks either way.
    """
    eq = equations_of(eom, extra_states=extra_states, specifieds=specifieds)
    if eq is not eom:
        specifieds = None             # declared while forming eq: eq.specifieds is the ordering
    if contacts:
        eq = eq.with_contacts(*contacts)
    eq = expand_functions_in_eom(eq, resolve_backend(backend))
    if getattr(eq, "constraint_excess", 0) > 0:
        # more configuration constraints than dependent coordinates: named and checked at the
        # assembled configuration when simulated (compilation/redundant.py)
        from .redundant import RedundantModel
        return RedundantModel(eq, constants=constants, specifieds=specifieds, backend=backend,
                              cache=cache, progress=progress)
    return NumericModel(eq, constants=constants, specifieds=specifieds, backend=backend,
                        cache=cache, progress=progress, forward_dynamics=forward_dynamics)
