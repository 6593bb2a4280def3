"""The symbols, functions of time and derivatives an expression depends on, each shared
subexpression visited once.

SymPy's ``free_symbols``, ``atoms`` and ``has`` walk an expression as a tree.  The expressions
a loaded OpenSim model hands to ``simulate`` -- its contacts' event conditions, a reflex
controller's lengthening speeds -- share their subexpressions so deeply that those walks took
minutes (ToyLandingModel: > 5 min for the contact conditions, 172 s for the 70 reflex
controls) where one visit per distinct node takes a fraction of a second.
"""

from __future__ import annotations

import functools

import sympy as sm

__all__ = ["expression_atoms"]


@functools.lru_cache(maxsize=1024)
def expression_atoms(expr: sm.Basic) -> tuple[frozenset, frozenset]:
    """(the Symbols and applied functions, the Derivatives) of ``expr``: what
    ``expr.free_symbols | expr.atoms(AppliedUndef)`` and ``expr.atoms(Derivative)`` give,
    one walk per expression however many runs use it."""
    atoms: set = set()
    derivatives: set = set()
    seen: set = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if getattr(e, "bound_symbols", None):        # (an Integral, a Lambda: SymPy's own rules)
            atoms |= e.free_symbols | e.atoms(sm.core.function.AppliedUndef)
            derivatives |= e.atoms(sm.Derivative)
            continue
        if isinstance(e, sm.Derivative):
            derivatives.add(e)
        elif isinstance(e, (sm.core.function.AppliedUndef, sm.Symbol)):
            atoms.add(e)
        stack.extend(e.args)
    return frozenset(atoms), frozenset(derivatives)
