"""A compiled function (``make_function``'s :class:`~symbody.compilation.NumericFunction`, a
robot's :class:`~symbody.robots.functions.RobotFunction`) exported like a model.

* :func:`function_to_casadi`: a ``casadi.Function`` of SX, one input per argument group (named
  after ``argument_names``: ``q``, ``u``, ``u_dot``, ``p`` for a robot's), one output of the
  function's shape (a column for 1-D results, a matrix for 2-D ones);
* :func:`export_c_functions`: standalone C99 (libm only), ``void name_f(const double *q, ...,
  double *out)`` per function, ``out`` row-major, the straight-line programs of
  :mod:`symbody.compilation.c_kernels` regenerated from the expressions the kernel keeps.

``sb.to_casadi(f)`` and ``sb.export_c(f, directory)`` (or a dict ``{name: f}``) come here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..compilation.codegen import NumericFunction
from ..errors import InputError
from .c_code import CExport, _kernel_expressions, _kernel_text, _program, check_name
from .casadi_function import SXConverter, import_casadi

__all__ = ["function_to_casadi", "export_c_functions", "is_function"]


def is_function(obj: Any) -> bool:
    """A compiled function, or a dict of them by name."""
    if isinstance(obj, Mapping):
        return bool(obj) and all(isinstance(f, NumericFunction) for f in obj.values())
    return isinstance(obj, NumericFunction)


def _argument_names(f: NumericFunction) -> list[str]:
    names = getattr(f, "argument_names", None)
    return list(names) if names else [f"x{i}" for i in range(len(f.groups))]


def _shape(f: NumericFunction, what: str) -> tuple:
    if f.multi:
        raise InputError(f"{what}: a function of several results (a tuple) cannot be exported "
                         "as one; make one function per result")
    return tuple(f.shape)


def function_to_casadi(f: NumericFunction, name: str | None = None) -> Any:
    """``f`` as a ``casadi.Function`` (see the module docstring); ``name``: the function's
    name (default: ``f.name`` or "function")."""
    ca = import_casadi()
    shape = _shape(f, "to_casadi")
    name = name or getattr(f, "name", None) or "function"
    names = _argument_names(f)
    syms = [ca.SX.sym(n, len(g)) for n, g in zip(names, f.groups)]
    leaves, k = {}, 0
    for s, g in zip(syms, f.groups):
        for i in range(len(g)):
            leaves[f"_a{k}"] = s[i]
            k += 1
    out = ca.vertcat(*SXConverter(leaves, f"the function {name}").many(_kernel_expressions(f.kernel)))
    if len(shape) == 2:
        out = ca.reshape(out, shape[1], shape[0]).T         # row-major values
    elif len(shape) > 2:
        raise InputError(f"to_casadi: {name} has {len(shape)} dimensions; CasADi has matrices")
    return ca.Function(name, syms, [out], names, [name])


def _c_function(f: NumericFunction, fname: str) -> tuple[str, str]:
    """(declaration, definition) of one function in C."""
    names = _argument_names(f)
    sizes = [len(g) for g in f.groups]
    nargs, nout = sum(sizes), int(np.prod(_shape(f, "export_c"), dtype=int))
    program = _program(_kernel_expressions(f.kernel), nargs, f"export_c of {fname}")
    params = ", ".join(f"const double *{n}" for n in names)
    decl = f"void {fname}({params}, double *out)"
    lines = [_kernel_text(program, f"{fname}_kernel"), decl, "{",
             f"    double z[{max(1, nargs)}];", "    int i;", "    (void)i;"]
    k = 0
    for n, s in zip(names, sizes):
        lines.append(f"    for (i = 0; i < {s}; i++) z[{k} + i] = {n}[i];")
        k += s
    lines += [f"    {fname}_kernel(z, out);" if nout else "    (void)out; (void)z;", "}", ""]
    return decl, "\n".join(lines)


def export_c_functions(functions: Any, directory: str | Path, name: str = "functions") -> CExport:
    """Write compiled functions as C99: ``name.h``, ``name.c``, README.md and
    ``name_example.c`` (prints each function at its default constants and zeros).

    ``functions``: one function (exported as ``name``) or ``{c_name: function}`` (each as
    ``name_c_name``).  Signatures: ``void name_f(const double *q, ..., double *out)`` with the
    function's argument groups in order and ``out`` its values row-major; a function that
    takes a robot's constants also gets ``name_f_default_p[]``."""
    check_name(name)
    items = {"": functions} if not isinstance(functions, Mapping) else dict(functions)
    decls, defs, docs, example = [], [], [], []
    for key, f in items.items():
        if not isinstance(f, NumericFunction):
            raise InputError(f"export_c: {key or name!r} is not a compiled function")
        fname = f"{name}_{check_name(key)}" if key else name
        decl, body = _c_function(f, fname)
        args = _argument_names(f)
        shape = _shape(f, "export_c")
        sizes = dict(zip(args, (len(g) for g in f.groups)))
        decls.append(f"/* {getattr(f, 'name', fname)}: "
                     + ", ".join(f"{a} ({s})" for a, s in sizes.items())
                     + f" -> out {shape or '(1,)'} row-major */\n{decl};")
        defs.append(body)
        const = getattr(f, "constants", None)
        if const is not None and "p" in sizes:
            values = ", ".join(repr(float(v)) for v in const) or "0.0"
            defs.append(f"const double {fname}_default_p[{max(1, len(const))}] = {{{values}}};")
            decls.append(f"extern const double {fname}_default_p[{max(1, len(const))}];")
        docs.append(f"- `{decl}`: {', '.join(f'`{a}` ({s})' for a, s in sizes.items())} -> "
                    f"`out` {shape or (1,)} row-major")
        example.append(_example_call(fname, sizes, shape, const is not None and "p" in sizes))
    guard = f"{name.upper()}_H"
    header = f"#ifndef {guard}\n#define {guard}\n\n" + "\n\n".join(decls) + "\n\n#endif\n"
    source = "#include <math.h>\n#include \"" + name + ".h\"\n\n" + "\n".join(defs) + "\n"
    main = ("#include <stdio.h>\n#include \"" + name + ".h\"\n\nint main(void)\n{\n"
            + "\n".join(example) + "    return 0;\n}\n")
    readme = (f"# {name}: functions generated by symbody\n\nC99, needs only libm:\n\n"
              + "\n".join(docs) + f"\n\nBuild the example: `cc -O2 {name}_example.c {name}.c -lm`.\n")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = CExport(header=d / f"{name}.h", source=d / f"{name}.c", readme=d / "README.md",
                    example=d / f"{name}_example.c")
    paths.header.write_text(header)
    paths.source.write_text(source)
    paths.readme.write_text(readme)
    paths.example.write_text(main)
    return paths


def _example_call(fname: str, sizes: dict, shape: tuple, default_p: bool) -> str:
    nout = int(np.prod(shape, dtype=int)) if shape else 1
    lines = ["    {", "        int i;"]
    args = []
    for a, s in sizes.items():
        if a == "p" and default_p:
            args.append(f"{fname}_default_p")
            continue
        lines.append(f"        double {a}[{max(1, s)}] = {{0}};")
        args.append(a)
    lines += [f"        double out[{nout}];", f"        {fname}({', '.join(args)}, out);",
              f"        printf(\"{fname}:\");",
              f"        for (i = 0; i < {nout}; i++) printf(\" %.17g\", out[i]);",
              "        printf(\"\\n\");", "    }"]
    return "\n".join(lines)
