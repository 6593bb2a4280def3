"""From a model's kernels to C's straight-line programs: the kernels' expressions, the outputs'
expressions in the kernels' argument layout, each as a ``StraightLineProgram`` and its C
function text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import sympy as sm

from ..compat.sympy import TIME
from ..compilation import c_kernels
from ..compilation.function_expansion import expand_functions
from ..errors import CompilationError, InputError
from ..symengine_bridge import SympyConverter, to_symengine


def _kernel_expressions(kernel: Any) -> list:
    """The symengine expressions (in the positional ``_a0 .. _a{nargs-1}``) a kernel was
    built from, whatever its backend."""
    k = kernel.realize() if hasattr(kernel, "realize") else kernel
    if k.nout == 0:
        return []
    src = getattr(k, "source", None) or {}
    exprs = src.get("exprs")
    if src.get("kind") == "sympy" and exprs is not None:
        return to_symengine(exprs)
    if exprs is None and src.get("serialized") is not None:
        from ..compilation.codegen import deserialize_expressions
        exprs = deserialize_expressions(src["serialized"])
    if exprs is None:
        raise CompilationError(f"the kernel {k.name!r} keeps no expressions to generate C from")
    return list(exprs)


def _program(exprs: list, nargs: int, what: str) -> c_kernels.StraightLineProgram:
    try:
        return c_kernels.straight_line_program(exprs, nargs)
    except c_kernels.UnsupportedExpression:
        pass
    # functions that symengine's LLVM compiles but C does not: expanded as compile(backend="c")
    names = {f"_a{i}": sm.Symbol(f"_a{i}") for i in range(nargs)}
    to_sympy = SympyConverter(names)
    try:
        expanded = expand_functions([to_sympy(e) for e in exprs], backend="c", where=what)
        return c_kernels.straight_line_program(to_symengine(expanded), nargs)
    except c_kernels.UnsupportedExpression as exc:
        raise CompilationError(f"{what}: {exc}; this expression cannot be written in C") from exc


def _output_expressions(model: Any, outputs: Mapping | None) -> tuple[list[str], list]:
    """(names, symengine expressions in the positional z arguments) of ``outputs``."""
    if not outputs:
        return [], []
    if not isinstance(outputs, Mapping):
        raise InputError(f"outputs must be a dict {{name: SymPy expression}}, got {outputs!r}")
    L = model.layout
    index: dict = {TIME: 0}
    for i, q in enumerate(model.coordinates):
        index[q] = L.iq + i
    for i, u in enumerate(model.speeds):
        index[u] = L.iu + i
        index[u.diff(TIME)] = L.iudot + i
    for i, r in enumerate(model.specifieds):
        index[r] = L.ir + i
    for i, c in enumerate(model.constants):
        index[c] = L.ic + i
    for i, xe in enumerate(model.extra_states):
        index[xe] = L.ixe + i
    names, exprs = [], []
    for name, e in outputs.items():
        if not isinstance(name, str) or not name:
            raise InputError(f"output names must be non-empty strings, got {name!r}")
        if callable(e) and not isinstance(e, sm.Basic):
            raise InputError(f"output {name!r} is a callable; give a SymPy expression")
        try:
            e = sm.sympify(e)
        except (sm.SympifyError, TypeError) as exc:
            raise InputError(f"output {name!r} is not a SymPy expression: {e!r}") from exc
        atoms = (e.free_symbols | set(e.atoms(sm.core.function.AppliedUndef))
                 | set(e.atoms(sm.Derivative)))
        for a in sorted(atoms, key=str):
            if a not in index and not (isinstance(a, sm.core.function.AppliedUndef)
                                       and any(a in d.args for d in atoms
                                               if isinstance(d, sm.Derivative) and d in index)):
                raise InputError(f"output {name!r} depends on {a}, which is not a coordinate, "
                                 "speed, speed derivative, constant, specified input or t")
        e = e.xreplace({a: sm.Symbol(f"_a{k}") for a, k in index.items()
                        if isinstance(a, sm.Derivative)})
        e = e.xreplace({a: sm.Symbol(f"_a{k}") for a, k in index.items()
                        if not isinstance(a, sm.Derivative)})
        e, = expand_functions([e], backend="c", where=f"output {name!r}")
        names.append(name)
        exprs.append(e)
    return names, to_symengine(exprs)


def _kernel_text(program: c_kernels.StraightLineProgram, fname: str) -> str:
    """The program as static C functions ``fname(z, out)`` (and its segments)."""
    parts = c_kernels.c_source(program, fname)
    main = parts[-1].split(f"void {fname}_many(")[0]
    text = "\n".join(parts[:-1] + [main])
    text = re.sub(r"^#include <math.h>\n|^#ifndef M_PI\n#define M_PI [^\n]*\n#endif\n"
                  r"|^#ifndef M_E\n#define M_E [^\n]*\n#endif\n|^#include <stdlib.h>\n", "",
                  text, flags=re.M)
    text = re.sub(r"^void ", "static void ", text, flags=re.M)
    text = text.replace("pow(M_E, ", "exp(")       # e^x: exp is several times faster than pow
    # segments that share no temporaries leave the workspace unused (-Wextra)
    return re.sub(r"^(static void \w+_s\d+\(.*\) \{)$", r"\1\n  (void)w;", text, flags=re.M)
