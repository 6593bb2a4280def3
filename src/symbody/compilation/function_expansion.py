"""SymPy functions in the equations: compiled as they are, expanded, or refused at compile time.

The kernels understand the elementary functions (sin, exp, tanh, atan2, Abs,
Piecewise, ...); ``Heaviside`` is written as the Piecewise it is.  Any other SymPy function -- e.g. the characteristic curves of
``sympy.physics.biomechanics`` (``TendonForceLengthDeGroote2016``, ...) -- is
replaced by its own definition, as ``f.doit()`` gives it, recursively.  A function
that is neither compilable nor expandable (an undefined ``f(x)``, or a class whose
``doit()`` returns itself) makes :func:`expand_functions` raise a CompilationError
naming it: ``compile`` refuses it, instead of failing at the first evaluation.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import sympy as sm

from ..compat.sympy import TIME
from ..errors import CompilationError
from . import c_kernels as _c

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion


__all__ = ["expand_functions", "expand_functions_in_eom"]

_t = TIME
_AppliedUndef = sm.core.function.AppliedUndef


@functools.cache
def _symengine_compiles(name: str, nargs: int, backend: str) -> bool:
    """Whether symengine has the function ``name`` and the backend evaluates it (probed once)."""
    try:
        import symengine as se
    except ImportError:  # pragma: no cover - symengine is a dependency
        return False
    f = getattr(se, name, None)
    if f is None:
        return False
    xs = [se.Symbol(f"_x{i}") for i in range(nargs)]
    try:
        expr = f(*xs)
        fn = se.Lambdify(xs, [expr], backend="lambda" if backend == "lambda" else "llvm")
        fn(np.full(nargs, 0.5))
    except Exception:
        return False
    return True


def _compilable(e: sm.Function, backend: str) -> bool:
    cls = type(e)
    if isinstance(e, sm.Piecewise):
        return True
    if not cls.__module__.startswith("sympy.functions"):
        return False           # user- or package-defined functions: expand them
    if backend == "numpy":
        return True            # sympy's numpy printer knows sympy's own functions
    # "auto", "c", "llvm": what symengine's LLVM code generator evaluates (the C backend
    # falls back to it for anything it does not emit itself)
    return _symengine_compiles(cls.__name__, len(e.args), backend)


def _describe(e, limit: int = 100) -> str:
    s = str(e)
    return s if len(s) <= limit else s[:limit] + " ..."


class _Expander:
    """Memoized walk that maps each function node that cannot be compiled to its expansion."""

    def __init__(self, backend: str, where: str):
        self.backend = backend
        self.where = where
        self.done: dict = {}
        self.replacements: dict = {}

    def visit(self, e):
        if e in self.done:
            return self.done[e]
        out = e
        if isinstance(e, _AppliedUndef):
            if e.args != (_t,):
                raise CompilationError(
                    f"{self.where} contain the undefined function {_describe(e)}, which has no "
                    "definition to compile; replace it by an expression (or make it a function of "
                    "time t only, a specified input)")
        elif isinstance(e, (sm.Derivative, sm.Subs)) or not e.args:
            pass
        elif isinstance(e, sm.Function) and not _compilable(e, self.backend):
            out = self._expand(e)
        else:
            args = [self.visit(a) for a in e.args]
            if any(a is not b for a, b in zip(args, e.args)):
                out = e.func(*args)
        self.done[e] = out
        return out

    def _expand(self, e):
        name = type(e).__name__
        rewrite = _REWRITES.get(type(e))
        try:
            expanded = rewrite(e) if rewrite is not None else e.doit(deep=False)
        except Exception as exc:
            raise CompilationError(f"{self.where} contain {name}{_describe(e.args)}, a SymPy function "
                                   f"that cannot be compiled; its doit() failed: {exc}") from exc
        if expanded == e or any(type(n) is type(e) for n in sm.preorder_traversal(expanded)
                                if isinstance(n, sm.Function)):
            backend = f"the {self.backend!r} backend"
            raise CompilationError(
                f"{self.where} contain the function {name} ({_describe(e)}), which {backend} cannot "
                f"compile and whose doit() does not expand into compilable functions; replace it by "
                "its expression (or try backend='numpy')")
        out = self.visit(expanded)
        self.replacements[e] = out
        return out


#: functions the compiled backends do not have, written in ones they do: Heaviside(x, H0) as
#: Piecewise((0, x < 0), (H0, Eq(x, 0)), (1, True)) (H0 = 1/2 unless given)
_REWRITES = {sm.Heaviside: lambda e: e.rewrite(sm.Piecewise)}


def expand_functions(exprs: Iterable, backend: str = "llvm", where: str = "the expressions") -> list:
    """The expressions with every non-compilable SymPy function replaced by its ``doit()``.

    Raises CompilationError naming a function that can be neither compiled nor expanded.
    """
    ex = _Expander(backend, where)
    return [ex.visit(sm.sympify(e)) for e in exprs]


_BLOCKS = (("kinematic_qdot", "the kinematic equations"), ("kinematic_u", "the kinematic equations"),
           ("kinematic_rest", "the kinematic equations"), ("qdot_solution", "the kinematic equations"),
           ("holonomic", "the holonomic constraints"),
           ("velocity_matrix", "the velocity constraints"), ("velocity_rest", "the velocity constraints"),
           ("acceleration_matrix", "the acceleration constraints"),
           ("acceleration_rest", "the acceleration constraints"),
           ("dynamic_mass", "the dynamic equations"), ("dynamic_rest", "the dynamic equations"),
           ("auxiliary", "the auxiliary equations"),
           ("extra_derivatives", "the extra states' derivatives"))


def expand_functions_in_eom(eom: EquationsOfMotion, backend: str = "llvm") -> EquationsOfMotion:
    """``eom`` itself when every function in it compiles, else a copy with the functions expanded."""
    import copy

    changed = {}
    dyn = eom.symengine_dynamics() if hasattr(eom, "symengine_dynamics") else None
    keep_symengine = dyn is not None and backend != "numpy" and _compilable_symengine(dyn)
    symengine_extra = keep_symengine and eom.symengine_extra_derivatives() is not None
    for attr, where in _BLOCKS:
        if keep_symengine and attr in ("dynamic_mass", "dynamic_rest"):
            continue              # compiled from symengine as the formulation formed it
        if symengine_extra and attr == "extra_derivatives":
            continue
        blk = getattr(eom, attr, None)
        if blk is None or not len(blk):
            continue
        ex = _Expander(backend, where)
        new = [ex.visit(e) for e in blk]
        if any(a is not b for a, b in zip(new, blk)):
            changed[attr] = sm.ImmutableMatrix(blk.rows, blk.cols, new)
    if dyn is not None and not keep_symengine:
        # compiled from the SymPy blocks: the copy forgets the symengine ones
        changed.setdefault("dynamic_mass", eom.dynamic_mass)
    if not changed:
        return eom
    out = copy.copy(eom)
    for attr, blk in changed.items():
        object.__setattr__(out, attr, blk)
    return out


#: symengine node types that every compiled backend takes as they are (c_kernels' own list)
_SYMENGINE_NODES = frozenset({"Add", "Mul", "Pow", "Symbol", "Integer", "Rational", "RealDouble",
                              "Zero", "One", "NegativeOne", "Half",
                              "BooleanTrue", "BooleanFalse"}    # (a Piecewise's last condition)
                             | _c.NATIVE_NODES)


def _compilable_symengine(dyn) -> bool:
    """True when the symengine dynamic block holds only nodes every compiled backend takes."""
    seen: set = set()
    stack = [e for row in dyn.mass for e in row] + list(dyn.rest) + list(dyn.extra.values())
    while stack:  # one walk over the DAG
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if type(e).__name__ not in _SYMENGINE_NODES:
            return False
        stack.extend(e.args)
    return True
