"""A compiled model as standalone C: ``name.h`` / ``name.c`` (C99, libm only).

The generated code is the model's own kernels (the straight-line programs of
:mod:`symbody.compilation.c_kernels`, regenerated from the expressions each kernel keeps,
whatever backend compiled it) plus the solves of the right-hand side written out in C:
a dense LU with partial pivoting (and a Cholesky factorization for a symmetric mass
matrix), no BLAS or LAPACK.  With ``z = [t, q, u, r, p, u', x_e]`` as in
:class:`~symbody.compilation.kernel_layout.KernelLayout`:

1. ``u_dep = -B_dep^{-1} (B_ind u_ind + b)`` (velocity constraints, m > 0);
2. ``S y = s``: ``[[M_d, -B_a^T], [B_a, 0]] [u'; λ] = [-g_d; -b_a]`` or ``M_d u' = -g_d``;
3. ``x' = [q', u_ind', x_e']``.

A model with a forward-dynamics kernel (a URDF robot's articulated-body recursion) gets
``name_rhs`` from it: ``[q', u']`` written out, no solve.

Projection onto the holonomic constraints ``f_h(q, t) = 0`` is the damped Newton iteration
of :func:`symbody.compilation.coordinate_projection.project_arguments` on q_dep (q_ind held).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sm

from ..compat.sympy import TIME
from ..compilation import c_kernels
from ..compilation.function_expansion import expand_functions
from ..errors import CompilationError, InputError
from ..formatting import symbol_name
from ..symengine_bridge import SympyConverter, to_symengine
from . import c_fused, c_linear_algebra, c_switching, directional
from .validation import OutputLocation, check_events, check_identifier, checked_constants

__all__ = ["export_c", "CExport", "GeneratedC", "generate_c", "check_exportable"]

#: work arrays larger than this (doubles) are taken from malloc, not the stack
STACK_DOUBLES = 16384



@dataclass(frozen=True)
class GeneratedC:
    """The text of the generated files and the names in their order.

    ``header``, ``source``, ``readme``, ``example`` (texts); ``name``; the names of the
    states (nx), coordinates (N), speeds (o), constants (c), inputs (s), outputs (ny) and
    holonomic residuals (M); ``layout`` (the model's KernelLayout)."""

    name: str
    header: str
    source: str
    readme: str
    example: str
    states: tuple[str, ...]
    coordinates: tuple[str, ...]
    speeds: tuple[str, ...]
    constants: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    layout: Any
    derivatives: bool = False


@dataclass(frozen=True)
class CExport:
    """Paths written by :func:`export_c`: ``header`` (name.h), ``source`` (name.c),
    ``readme`` (README.md) and ``example`` (name_example.c, the README's RK4 loop)."""

    header: Path
    source: Path
    readme: Path
    example: Path


# ----------------------------------------------------------------------------- checks
def check_name(name: Any) -> str:
    """``name`` as a C identifier prefix, or InputError (:func:`.validation.check_identifier`)."""
    return check_identifier(name)


def check_exportable(model: Any, what: str) -> None:
    """Refuse, naming the feature, a model the generated C cannot carry."""
    from ..compilation.redundant import RedundantModel
    if not hasattr(model, "layout") or not hasattr(model, "kernels"):
        raise InputError(f"{what} takes a compiled model (symbody.compile(eom)), "
                         f"got {type(model).__name__}")
    if isinstance(model, RedundantModel):
        raise InputError(f"{what}: the model has a redundant constraint set (more holonomic "
                         "equations than dependent coordinates); the exported code keeps one "
                         "fixed set of equations and cannot choose among them as simulate does. "
                         "Remove the redundant equations and compile again")


def check_not_callable(values: Any, what: str, argument: str) -> None:
    if callable(values):
        raise InputError(f"{what}: {argument} is a callable; the exported code cannot carry "
                         "Python functions as inputs (give numbers; the inputs are arguments "
                         "of the C functions / FMU inputs)")
    if isinstance(values, Mapping):
        for key, v in values.items():
            if callable(v):
                raise InputError(f"{what}: {argument}[{key!r}] is a callable; the exported code "
                                 "cannot carry Python functions as inputs (give a number)")


# ------------------------------------------------------------------ kernel expressions
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


# --------------------------------------------------------------------------- C text
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


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _doubles(values: Sequence[float]) -> str:
    return ", ".join(repr(float(v)) for v in values) if len(values) else "0.0"


_LINEAR_ALGEBRA = r"""
/* ---- dense linear algebra: A (n x n, row by row) is overwritten, b becomes the solution */
static int lu_solve(int n, double *A, double *b)
{
    int i, j, k;
    for (k = 0; k < n; k++) {
        int piv = k;
        double big = fabs(A[k * n + k]);
        for (i = k + 1; i < n; i++) {
            double a = fabs(A[i * n + k]);
            if (a > big) { big = a; piv = i; }
        }
        if (!(big > 0.0)) return 1;                 /* singular (or NaN) */
        if (piv != k) {
            double tmp;
            for (j = 0; j < n; j++) {
                tmp = A[k * n + j]; A[k * n + j] = A[piv * n + j]; A[piv * n + j] = tmp;
            }
            tmp = b[k]; b[k] = b[piv]; b[piv] = tmp;
        }
        for (i = k + 1; i < n; i++) {
            double f = A[i * n + k] / A[k * n + k];
            if (f != 0.0) {
                for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
                b[i] -= f * b[k];
            }
        }
    }
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (j = i + 1; j < n; j++) s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
    }
    return 0;
}

"""

_CHOLESKY = r"""
/* Cholesky A = U^T U of a symmetric positive definite A (upper triangle read; right-looking,
   row by row, so that the inner loops are independent updates); 1: not definite */
static int cholesky_solve(int n, double *A, double *b)
{
    int i, j, k;
    for (j = 0; j < n; j++) {
        double d = A[j * n + j];
        if (!(d > 0.0)) return 1;
        d = sqrt(d);
        A[j * n + j] = d;
        d = 1.0 / d;
        for (i = j + 1; i < n; i++) A[j * n + i] *= d;
        for (k = j + 1; k < n; k++) {
            double f = A[j * n + k];
            for (i = k; i < n; i++) A[k * n + i] -= f * A[j * n + i];
        }
    }
    for (k = 0; k < n; k++) {                       /* U^T y = b */
        b[k] /= A[k * n + k];
        for (i = k + 1; i < n; i++) b[i] -= A[k * n + i] * b[k];
    }
    for (i = n - 1; i >= 0; i--) {                  /* U x = y */
        double s = b[i];
        for (k = i + 1; k < n; k++) s -= A[i * n + k] * b[k];
        b[i] = s / A[i * n + i];
    }
    return 0;
}
"""

_MAX_ABS = r"""
static double max_abs(const double *v, int n)
{
    double mx = 0.0;
    int i;
    for (i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (a > mx || a != a) mx = a;
        if (mx != mx) return mx;
    }
    return mx;
}
"""


class _Writer:
    """Builds the C text of one model (see :func:`generate_c`)."""

    def __init__(self, model: Any, name: str, outputs: Mapping | None,
                 derivatives: bool = False) -> None:
        self.model, self.name, self.L = model, name, model.layout
        self.P = name.upper()
        kernels = model.kernels
        L = self.L
        self.programs: dict[str, c_kernels.StraightLineProgram] = {}
        #: sizes of the straight-line LU solves the C uses (c_linear_algebra.lu_function)
        self.lu_sizes: set[int] = set()
        slots = [("main", kernels.main)]
        if L.m:
            slots.append(("velocity", kernels.velocity))
        if L.M:
            slots.append(("holonomic", kernels.holonomic))
        if L.e:
            slots.append(("extra", kernels.extra))
        if getattr(kernels, "forward", None) is not None:
            slots.append(("forward", kernels.forward))    # [q', u'] of a tree's recursion
        self.output_names, out_exprs = _output_expressions(model, outputs)
        self.outputs_use_udot = any(
            int(str(s)[2:]) in range(L.iudot, L.iudot + L.o)
            for e in out_exprs for s in e.free_symbols)
        if self.outputs_use_udot and L.m and not L.augmented:
            slots.append(("acceleration", kernels.acceleration))
        expressions = {slot: _kernel_expressions(kernel) for slot, kernel in slots}
        if out_exprs:
            expressions["outputs"] = out_exprs
        for slot, exprs in expressions.items():
            self.programs[slot] = _program(exprs, L.nz, f"{slot} kernel")
        self.nout = {slot: len(p.outputs) for slot, p in self.programs.items()}
        #: the kernels' tangents (slot -> program of [z, dz]) when the export carries
        #: name_rhs_derivative, else empty
        #: name_rhs as one straight-line function (c_fused), or None
        self.fused = c_fused.fused_rhs(self)
        self.tangents = (directional.tangent_programs(self)
                         if derivatives and directional.provides_derivatives(self) else {})

    def tangent_kernel(self, slot: str) -> str:
        return f"{self.name}_tangent_{slot}"

    def k(self, slot: str) -> str:
        return f"{self.name}_kernel_{slot}"

    # ------------------------------------------------------------------ functions
    def fill(self) -> str:
        L = self.L
        lines = ["/* z = [t, q, u, r, p, u', x_e] of one state; u_dep solved (1: B_dep singular;",
                 "   watch: 5 where B_dep is near singular, see dependent_set_poor) */",
                 "static int fill_z(double *z, double t, const double *x, const double *p, "
                 "const double *r, int watch)", "{",
                 "    int i;",
                 f"    for (i = 0; i < {L.nz}; i++) z[i] = 0.0;",
                 "    z[0] = t;",
                 f"    for (i = 0; i < {L.nxm}; i++) z[1 + i] = x[i];"]
        if L.e:
            lines.append(f"    for (i = 0; i < {L.e}; i++) z[{L.ixe} + i] = x[{L.nxm} + i];")
        if L.c:
            lines.append(f"    for (i = 0; i < {L.c}; i++) z[{L.ic} + i] = p[i];")
        else:
            lines.append("    (void)p;")
        if L.s:
            lines.append(f"    for (i = 0; i < {L.s}; i++) z[{L.ir} + i] = r[i];")
        else:
            lines.append("    (void)r;")
        if not L.m:
            lines.append("    (void)watch;")
        if L.m:
            m, sb, sr = L.m, L.velocity_Bdep.start, L.velocity_rest.start
            lines += [
                "    {",
                f"        double v[{self.nout['velocity']}], A[{m * m}], b[{m}], d;",
                "        int j;",
                f"        {self.k('velocity')}(z, v);",
                f"        for (i = 0; i < {m}; i++) {{",
                f"            for (j = 0; j < {m}; j++) A[i * {m} + j] = v[{sb} + j * {m} + i];",
                f"            b[i] = v[{sr} + i];",
                "        }",
                *self.solve_with_det(m, "A", "b", "d", "return 1;"),
                f"        for (i = 0; i < {m}; i++) z[{L.iud} + i] = b[i];",
                *c_switching.dependent_gauge_check(self, "v", m, L.o, "d", watch=True),
                "    }"]
        lines += ["    return 0;", "}", ""]
        return "\n".join(lines)

    def solve_with_det(self, n: int, A: str, b: str, det: str, fail: str) -> list[str]:
        """C lines solving the n x n system A (row by row) in place in b, |det A| into
        ``det``; ``fail`` where it is singular (straight-line LU for small n)."""
        if n <= c_linear_algebra.UNROLL_MAX:
            self.lu_sizes.add(n)
            return [f"        if (lu_solve_{n}({A}, {b}, &{det})) {fail}"]
        return [f"        if (lu_solve({n}, {A}, {b})) {fail}",
                f"        for (i = 0, {det} = 1.0; i < {n}; i++) {det} *= fabs({A}[i * {n} + i]);"]

    def main_entry(self, k: int) -> c_linear_algebra.Entry:
        """Output k of the main kernel in C (``out[k]``), or its value when it is a literal."""
        ref = self.programs["main"].outputs[k]
        if ref[0] == "c":
            try:
                return float(ref[1])
            except ValueError:
                pass
        return f"out[{k}]"

    def fast_solve(self) -> list[str]:
        """Straight-line solve of S y = s from the kernel's output ``out`` into y (the Schur
        complement of the augmented system, L D L^T of a symmetric M_d, or LU), going to the
        label ``general`` where a factor is singular or not definite; [] for large systems."""
        L = self.L
        K, ms, mr = L.K, L.main_system.start, L.main_rhs.start
        by_column = L.augmented or L.mass_symmetric

        def S(i: int, j: int) -> c_linear_algebra.Entry:
            return self.main_entry(ms + j * K + i if by_column else ms + i * K + j)

        body: list[str] = []
        solved = c_linear_algebra.solve_statements(
            (K, L.o, L.m), L.augmented, L.mass_symmetric, S,
            [self.main_entry(mr + i) for i in range(K)], body, "goto general;")
        if solved is None:
            return []
        x, lu = solved
        if lu:
            self.lu_sizes.add(lu)
        body += [f"    y[{i}] = {v!r};" if isinstance(v, float) else f"    y[{i}] = {v};"
                 for i, v in enumerate(x)]
        return ["    {", *("    " + line for line in body), "    }"]

    def system(self) -> str:
        """S (row by row) and s from the main kernel's output."""
        L = self.L
        K, ms, mr = L.K, L.main_system.start, L.main_rhs.start
        by_column = L.augmented or L.mass_symmetric
        src = f"out[{ms} + j * {K} + i]" if by_column else f"out[{ms} + i * {K} + j]"
        return "\n".join([
            "static void system_of(const double *out, double *S, double *s)", "{",
            "    int i, j;",
            f"    for (i = 0; i < {K}; i++) {{",
            f"        for (j = 0; j < {K}; j++) S[i * {K} + j] = {src};",
            f"        s[i] = out[{mr} + i];",
            "    }", "}", ""])

    def dynamics(self) -> str:
        L = self.L
        K, nout = L.K, self.nout["main"]
        lines = ["/* main kernel at a filled z, S y = s solved: xdot (nx), y (K) (2: singular);",
                 "   out (the kernel's output) and S (K x K) are work space */",
                 "static int dynamics_in(double *z, double *xdot, double *y, double *out, "
                 "double *S)", "{",
                 "    int i;",
                 f"    {self.k('main')}(z, out);"]
        fast = self.fast_solve()
        if fast:
            # straight-line Cholesky (or Schur complement of the augmented system) from the
            # kernel's output; a factor that is not definite: LU of S, as model.rhs does
            lines += fast + ["    goto solved;", "general:",
                             "    system_of(out, S, y);",
                             f"    if (lu_solve({K}, S, y)) return 2;", "solved:"]
        elif L.mass_symmetric and not L.augmented:
            # M_d symmetric: factored in place in the kernel's output (row by row = column by
            # column); not definite: the kernel again and LU, as model.rhs does
            lines += [f"    for (i = 0; i < {K}; i++) y[i] = out[{L.main_rhs.start} + i];",
                      f"    if (cholesky_solve({K}, out + {L.main_system.start}, y)) {{",
                      f"        {self.k('main')}(z, out);",
                      "        system_of(out, S, y);",
                      f"        if (lu_solve({K}, S, y)) return 2;",
                      "    }"]
        else:
            lines += ["    system_of(out, S, y);",
                      f"    if (lu_solve({K}, S, y)) return 2;"]
        lines.append(f"    for (i = 0; i < {L.N}; i++) xdot[i] = out[{L.main_qdot.start} + i];")
        lines.append(f"    for (i = 0; i < {L.p}; i++) xdot[{L.N} + i] = y[i];")
        if L.e:
            lines.append(f"    {self.k('extra')}(z, xdot + {L.nxm});")
        lines += ["    return 0;", "}", "",
                  "static int dynamics(double *z, double *xdot, double *y)", "{"]
        size = nout + K * K
        if self.heap(size):
            lines += [f"    double *work = (double *)malloc({size} * sizeof(double));",
                      "    int st;",
                      "    if (!work) return 4;",
                      f"    st = dynamics_in(z, xdot, y, work, work + {nout});",
                      "    free(work);", "    return st;"]
        else:
            lines += [f"    double work[{size}];",
                      f"    return dynamics_in(z, xdot, y, work, work + {nout});"]
        lines += ["}", ""]
        return "\n".join(lines)

    @staticmethod
    def heap(size: int) -> bool:
        """Work space of more than STACK_DOUBLES numbers comes from malloc (importers may run
        the code on threads with small stacks)."""
        return size > STACK_DOUBLES

    def udot(self) -> str:
        """u' of all speeds into z from the solution y (for outputs that use it)."""
        L = self.L
        lines = ["static int fill_udot(double *z, const double *y)", "{", "    int i;"]
        if L.augmented or not L.m:
            lines.append(f"    for (i = 0; i < {L.o}; i++) z[{L.iudot} + i] = y[i];")
        else:      # reduced: u_dep' from B_a u' + b_a = 0
            m, o, p = L.m, L.o, L.p
            lines += [
                f"    double a[{self.nout['acceleration']}], A[{m * m}], b[{m}];",
                "    int j;",
                f"    for (i = 0; i < {p}; i++) z[{L.iudot} + i] = y[i];",
                f"    {self.k('acceleration')}(z, a);",
                f"    for (i = 0; i < {m}; i++) {{",
                f"        double s = a[{m * o} + i];",
                f"        for (j = 0; j < {p}; j++) s += a[i * {o} + j] * y[j];",
                "        b[i] = -s;",
                f"        for (j = 0; j < {m}; j++) A[i * {m} + j] = a[i * {o} + {p} + j];",
                "    }",
                f"    if (lu_solve({m}, A, b)) return 3;",
                f"    for (i = 0; i < {m}; i++) z[{L.iudot} + {p} + i] = b[i];"]
        lines += ["    return 0;", "}", ""]
        return "\n".join(lines)

    def public(self) -> str:
        L, n, K = self.L, self.name, self.L.K
        zdecl = f"    double z[{L.nz}];"
        f = []
        rhs = "static int rhs_general" if self.fused else f"int {n}_rhs"
        f += [f"{rhs}(double t, const double *x, const double *p, const double *r, "
              "double *xdot)", "{", zdecl]
        if "forward" in self.programs:     # the forward kernel writes [q', u']: no solve
            f += [f"    double out[{self.nout['forward']}];", "    int i;",
                  "    (void)dynamics;              /* (used by outputs of u') */",
                  "    { int fz = fill_z(z, t, x, p, r, 1); if (fz) return fz; }",
                  f"    {self.k('forward')}(z, out);",
                  f"    for (i = 0; i < {L.nx}; i++) xdot[i] = out[i];",
                  "    return 0;", "}", ""]
        else:
            f += [f"    double y[{K}];",
                  "    { int fz = fill_z(z, t, x, p, r, 1); if (fz) return fz; }",
                  "    return dynamics(z, xdot, y);", "}", ""]
        f += [f"int {n}_speeds(double t, const double *x, const double *p, const double *r, "
              "double *u)", "{", zdecl, "    int i;",
              "    { int fz = fill_z(z, t, x, p, r, 1); if (fz) return fz; }",
              f"    for (i = 0; i < {L.o}; i++) u[i] = z[{L.iu} + i];",
              "    return 0;", "}", ""]
        nmain = self.nout["main"]
        f += [f"int {n}_mass_forcing(double t, const double *x, const double *p, const double *r, "
              "double *S, double *s)", "{", zdecl]
        if self.heap(nmain):
            f += [f"    double *out = (double *)malloc({nmain} * sizeof(double));",
                  "    if (!out) return 4;",
                  "    { int fz = fill_z(z, t, x, p, r, 1); if (fz) { free(out); return fz; } }"]
        else:
            f += [f"    double out[{nmain}];", "    { int fz = fill_z(z, t, x, p, r, 1); if (fz) return fz; }"]
        f += [f"    {self.k('main')}(z, out);", "    system_of(out, S, s);"]
        if self.heap(nmain):
            f += ["    free(out);"]
        f += ["    return 0;", "}", ""]
        # holonomic constraints
        f += [f"void {n}_holonomic(double t, const double *q, const double *p, double *fh, "
              "double *J)", "{"]
        if L.M:
            f += [zdecl, f"    double out[{self.nout['holonomic']}];", "    int i;",
                  f"    for (i = 0; i < {L.nz}; i++) z[i] = 0.0;",
                  "    z[0] = t;",
                  f"    for (i = 0; i < {L.N}; i++) z[1 + i] = q[i];",
                  f"    for (i = 0; i < {L.c}; i++) z[{L.ic} + i] = p[i];",
                  f"    {self.k('holonomic')}(z, out);",
                  f"    for (i = 0; i < {L.M}; i++) fh[i] = out[i];",
                  f"    if (J) for (i = 0; i < {L.M * L.N}; i++) J[i] = out[{L.M} + i];"]
        else:
            f += ["    (void)t; (void)q; (void)p; (void)fh; (void)J;"]
        f += ["}", ""]
        # velocity constraints
        f += [f"void {n}_velocity_constraints(double t, const double *q, const double *p, "
              "const double *r, double *B, double *b)", "{"]
        if L.m:
            f += [zdecl, f"    double out[{self.nout['velocity']}];", "    int i;",
                  f"    for (i = 0; i < {L.nz}; i++) z[i] = 0.0;",
                  "    z[0] = t;",
                  f"    for (i = 0; i < {L.N}; i++) z[1 + i] = q[i];",
                  f"    for (i = 0; i < {L.c}; i++) z[{L.ic} + i] = p[i];"]
            f += ([f"    for (i = 0; i < {L.s}; i++) z[{L.ir} + i] = r[i];"] if L.s
                  else ["    (void)r;"])
            f += [f"    {self.k('velocity')}(z, out);",
                  f"    for (i = 0; i < {L.m * L.o}; i++) B[i] = out[i];",
                  f"    for (i = 0; i < {L.m}; i++) b[i] = out[{L.m * L.o} + i];"]
        else:
            f += ["    (void)t; (void)q; (void)p; (void)r; (void)B; (void)b;"]
        f += ["}", ""]
        # outputs
        f += [f"int {n}_outputs(double t, const double *x, const double *p, const double *r, "
              "double *y)", "{"]
        if "outputs" in self.programs:
            f += [zdecl, "    { int fz = fill_z(z, t, x, p, r, 1); if (fz) return fz; }"]
            if self.outputs_use_udot:
                f += [f"    {{ double xd[{L.nx}], sol[{K}]; int st = dynamics(z, xd, sol);",
                      "      if (st) return st;",
                      "      st = fill_udot(z, sol); if (st) return st; }"]
            f += [f"    {self.k('outputs')}(z, y);"]
        else:
            f += ["    (void)t; (void)x; (void)p; (void)r; (void)y;"]
        f += ["    return 0;", "}", ""]
        f += [self.project()]
        return "\n".join(f)

    def project(self) -> str:
        L, n = self.L, self.name
        head = [f"int {n}_project(double t, double *x, const double *p, double tol, int max_iter)",
                "{"]
        if not L.M:
            return "\n".join(head + ["    (void)t; (void)x; (void)p; (void)tol; (void)max_iter;",
                                     "    return 0;", "}", ""])
        M, N, nn = L.M, L.N, L.n
        body = [
            f"    double fh[{M}], J[{M * N}], A[{M * M}], dq[{M}], qdep[{M}];",
            "    double norm, scale, fresh;",
            "    int i, j, it = 0, converged, small;",
            f"    {n}_holonomic(t, x, p, fh, J);",
            f"    norm = max_abs(fh, {M});",
            "    converged = norm == 0.0;",
            "    while (!converged && it < max_iter && norm == norm && norm != HUGE_VAL) {",
            "        it++;",
            f"        for (i = 0; i < {M}; i++) {{",
            f"            for (j = 0; j < {M}; j++) A[i * {M} + j] = J[i * {N} + {nn} + j];",
            "            dq[i] = fh[i];",
            "        }",
            f"        if (lu_solve({M}, A, dq)) return 2;",
            f"        for (i = 0; i < {M}; i++) qdep[i] = x[{nn} + i];",
            f"        small = max_abs(dq, {M}) <= tol * (1.0 + max_abs(qdep, {M}));",
            "        scale = 1.0;",
            "        for (;;) {",
            f"            for (i = 0; i < {M}; i++) x[{nn} + i] = qdep[i] - scale * dq[i];",
            f"            {n}_holonomic(t, x, p, fh, J);",
            f"            fresh = max_abs(fh, {M});",
            "            if (small || fresh <= norm || scale < 1e-3) break;",
            "            scale *= 0.5;",
            "        }",
            "        converged = small;",
            "        norm = fresh;",
            "        if (norm == 0.0) converged = 1;",
            "    }",
            f"    for (i = 0; i < {M}; i++)",
            f"        for (j = 0; j < {M}; j++) A[i * {M} + j] = J[i * {N} + {nn} + j];",
            f"    if (!converged || !(max_abs(J, {M * N}) < HUGE_VAL)) return 1;",
            *c_switching.dependent_gauge_check(self, "J", M, N, f"abs_det({M}, A)", "    "),
            "    return 0;", "}", ""]
        return "\n".join(head + body)


def _header(w: _Writer, names: dict, has_constants: bool, has_state: bool) -> str:
    L, n, P = w.L, w.name, w.P
    ny = len(w.output_names)
    defs = [("NX", L.nx, "states x = [q (NQ), u_ind (NU_IND), x_e (NE)]"),
            ("NQ", L.N, "coordinates q = [q_ind, q_dep]"), ("NQ_IND", L.n, "independent coordinates"),
            ("NQ_DEP", L.M, "dependent coordinates (= holonomic constraints)"),
            ("NU", L.o, "speeds u = [u_ind, u_dep]"), ("NU_IND", L.p, "independent speeds"),
            ("NU_DEP", L.m, "dependent speeds (= velocity constraints)"),
            ("NE", L.e, "extra states"), ("NP", L.c, "constants p"),
            ("NR", L.s, "specified inputs r"), ("NY", ny, "outputs y"),
            ("NSYS", L.K, "size of the system S y = s solved for u'")]
    guard = f"{P}_H"
    lines = [f"/* {n}.h: generated by symbody from {names['model']}.  C99, link with -lm. */",
             f"#ifndef {guard}", f"#define {guard}", ""]
    lines += [f"#define {P}_{k} {v}   /* {doc} */" for k, v, doc in defs]
    lines += ["", "/* names in order, each list ended by a null pointer (also as initializers) */"]
    for key, plural in (("state", "states"), ("coordinate", "coordinates"), ("speed", "speeds"),
                        ("constant", "constants"), ("input", "inputs"), ("output", "outputs")):
        items = ", ".join([_c_string(v) for v in names[plural]] + ["0"])
        lines.append(f"#define {P}_{key.upper()}_NAMES {{{items}}}")
        lines.append(f"extern const char *const {n}_{key}_names[];")
    if has_constants:
        lines.append(f"extern const double {n}_default_constants[];   /* NP values */")
    if has_state:
        lines.append(f"extern const double {n}_default_state[];       /* NX values */")
    lines += ["", f"""/* x' = f(t, x) in the state order above; p (NP), r (NR, may be null when NR is 0).
   0 on success; 1: the velocity constraints are singular in u_dep; 2: S is singular;
   4: no memory for the work space (large models only); 5 ({P}_ERR_DEPENDENT_SET): u_dep is
   near singular (see {P}_DEPENDENT_SET_RATIO; the same for {n}_speeds, {n}_mass_forcing and
   {n}_outputs). */
int {n}_rhs(double t, const double *x, const double *p, const double *r, double *xdot);

/* all speeds u (NU): u_ind from x, u_dep from B u + b = 0 (1: singular) */
int {n}_speeds(double t, const double *x, const double *p, const double *r, double *u);

/* the system S y = s solved for u' (S: NSYS x NSYS row by row, s: NSYS), with u_dep solved:
   constrained  [[M_d, -B_a^T], [B_a, 0]] [u'; lambda] = [-g_d; -b_a]  (NSYS = NU + NU_DEP)
   otherwise    M_d u' = -g_d   (mass matrix and forcing)
   M_d u' + g_d = B_a^T lambda; returns 1 when B_dep is singular */
int {n}_mass_forcing(double t, const double *x, const double *p, const double *r,
                     double *S, double *s);

/* holonomic constraints f_h(q, t) (NQ_DEP) and their Jacobian df_h/dq (NQ_DEP x NQ, row by
   row; J may be null) at the coordinates q (NQ) */
void {n}_holonomic(double t, const double *q, const double *p, double *fh, double *J);

/* velocity constraints B u + b = 0: B (NU_DEP x NU, row by row) and b (NU_DEP) */
void {n}_velocity_constraints(double t, const double *q, const double *p, const double *r,
                              double *B, double *b);

/* the outputs y (NY) at (t, x); 0 on success (as {n}_rhs when they use u') */
int {n}_outputs(double t, const double *x, const double *p, const double *r, double *y);

/* positions back onto f_h(q, t) = 0: damped Newton on q_dep = x[NQ_IND .. NQ) with q_ind held,
   until a step is below tol * (1 + max|q_dep|) (tol = 1e-10 is a good choice).  Speeds need
   no projection: u_dep are not states and {n}_speeds solves them from the constraints.
   0: converged; 1: not converged in max_iter iterations; 2: singular Jacobian;
   5 ({P}_ERR_DEPENDENT_SET): converged, but the dependent coordinates are near singular. */
int {n}_project(double t, double *x, const double *p, double tol, int max_iter);
"""]
    if L.m or L.M:
        lines.append(c_switching.switching_defines(P))
    if switchable(L):
        lines.append(c_switching.full_state_header(w))
    if w.tangents:
        lines.append(directional.derivative_header(w))
    lines += ["#endif", ""]
    return "\n".join(lines)


def _source(w: _Writer, names: dict, constants: np.ndarray | None,
            state: np.ndarray | None) -> str:
    n = w.name
    parts = [f"/* {n}.c: generated by symbody from {names['model']}.  C99, link with -lm. */",
             "#include <math.h>", "#include <stdlib.h>", f'#include "{n}.h"',
             "#ifndef M_PI\n#define M_PI 3.14159265358979323846\n#endif",
             "#ifndef M_E\n#define M_E 2.7182818284590452354\n#endif", ""]
    for cname in ("state", "coordinate", "speed", "constant", "input", "output"):
        parts.append(f"const char *const {n}_{cname}_names[] = {w.P}_{cname.upper()}_NAMES;")
    if constants is not None:
        parts.append(f"const double {n}_default_constants[] = {{{_doubles(constants)}}};")
    if state is not None:
        parts.append(f"const double {n}_default_state[] = {{{_doubles(state)}}};")
    parts.append("")
    for slot, program in w.programs.items():
        parts.append(f"/* ---- kernel: {slot} ({len(program)} operations) */")
        parts.append(_kernel_text(program, w.k(slot)))
    bodies = [w.fill(), w.system(), w.dynamics()]
    if w.outputs_use_udot:
        bodies.append(w.udot())
    bodies.append(w.public())
    if w.fused:
        bodies.append(w.fused)
    if switchable(w.L):
        bodies.append(c_switching.full_state_c(w))
    if w.tangents:
        for slot, program in w.tangents.items():
            bodies.append(f"/* ---- tangent of the {slot} kernel ({len(program)} operations) */")
            bodies.append(_kernel_text(program, w.tangent_kernel(slot)))
        bodies.append(directional.derivative_c(w))
    parts.append(_LINEAR_ALGEBRA)
    parts += [c_linear_algebra.lu_function(n, f"lu_solve_{n}") for n in sorted(w.lu_sizes)]
    if any("cholesky_solve(" in b for b in bodies):
        parts.append(_CHOLESKY)
    if w.L.M:
        parts.append(_MAX_ABS)
    if w.L.m or w.L.M:
        parts.append(c_switching.GAUGE_C)
    return "\n".join(parts + bodies)


def switchable(L: Any) -> bool:
    """The export carries the full-state functions: the dependent speeds may be chosen
    freely (``partition_switchable``) and there are some."""
    return bool(L.partition_switchable and L.m)


def _example(w: _Writer, has_constants: bool, has_state: bool) -> str:
    n, P = w.name, w.P
    p_init = (f"    for (i = 0; i < {P}_NP; i++) p[i] = {n}_default_constants[i];" if has_constants
              else "    for (i = 0; i < NP1; i++) p[i] = 0.0;     /* set the constants here */")
    x_init = (f"    for (i = 0; i < {P}_NX; i++) x[i] = {n}_default_state[i];" if has_state
              else "    for (i = 0; i < NX1; i++) x[i] = 0.0;     /* set the initial state here */")
    return f"""/* RK4 with projection after each step: ./{n}_example [t_end [h]] */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "{n}.h"

#define NX1 ({P}_NX > 0 ? {P}_NX : 1)
#define NP1 ({P}_NP > 0 ? {P}_NP : 1)
#define NR1 ({P}_NR > 0 ? {P}_NR : 1)
#define NM1 ({P}_NQ_DEP > 0 ? {P}_NQ_DEP : 1)

int main(int argc, char **argv)
{{
    double t_end = argc > 1 ? atof(argv[1]) : 5.0, h = argc > 2 ? atof(argv[2]) : 1e-3;
    double x[NX1], p[NP1], r[NR1], k1[NX1], k2[NX1], k3[NX1], k4[NX1], xs[NX1], fh[NM1];
    double t = 0.0, worst = 0.0;
    long step, steps = (long)(t_end / h + 0.5);
    int i, st = 0;
{p_init}
{x_init}
    for (i = 0; i < NR1; i++) r[i] = 0.0;                 /* inputs held at zero */
    if ({n}_project(t, x, p, 1e-12, 50)) {{ fprintf(stderr, "cannot assemble\\n"); return 1; }}
    for (step = 0; step < steps && !st; step++) {{
        st |= {n}_rhs(t, x, p, r, k1);
        for (i = 0; i < {P}_NX; i++) xs[i] = x[i] + 0.5 * h * k1[i];
        st |= {n}_rhs(t + 0.5 * h, xs, p, r, k2);
        for (i = 0; i < {P}_NX; i++) xs[i] = x[i] + 0.5 * h * k2[i];
        st |= {n}_rhs(t + 0.5 * h, xs, p, r, k3);
        for (i = 0; i < {P}_NX; i++) xs[i] = x[i] + h * k3[i];
        st |= {n}_rhs(t + h, xs, p, r, k4);
        for (i = 0; i < {P}_NX; i++) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        t = (step + 1) * h;
        st |= {n}_project(t, x, p, 1e-12, 50);          /* the loop stays closed */
        {n}_holonomic(t, x, p, fh, 0);
        for (i = 0; i < {P}_NQ_DEP; i++) if (fabs(fh[i]) > worst) worst = fabs(fh[i]);
    }}
    if (st) {{ fprintf(stderr, "failed at t = %g (status %d)\\n", t, st); return 1; }}
    printf("t %.17g\\n", t);
    for (i = 0; i < {P}_NX; i++) printf("%s %.17g\\n", {n}_state_names[i], x[i]);
    printf("max_residual %.17g\\n", worst);
    return 0;
}}
"""


def _readme(w: _Writer, names: dict, example: str) -> str:
    n, L = w.name, w.L
    full = (f"; on the full state y = [q, u, x_e], `{n}_full_rhs` and `{n}_full_project` (the "
            "dependent set chosen afresh at each projection: they pass the positions where the "
            "model's own set is singular)" if switchable(L) else "")
    return f"""# {n}: standalone C of the symbody model {names['model']}

`{n}.h` / `{n}.c` compile alone (C99, only libm):

    cc -std=c99 -O2 -Wall -Werror -c {n}.c

| size | value | names |
|---|---|---|
| states x (`{w.P}_NX`) | {L.nx} | {', '.join(names['states']) or '-'} |
| speeds u (`{w.P}_NU`) | {L.o} | {', '.join(names['speeds']) or '-'} |
| constants p (`{w.P}_NP`) | {L.c} | {', '.join(names['constants']) or '-'} |
| inputs r (`{w.P}_NR`) | {L.s} | {', '.join(names['inputs']) or '-'} |
| outputs y (`{w.P}_NY`) | {len(names['outputs'])} | {', '.join(names['outputs']) or '-'} |
| holonomic constraints (`{w.P}_NQ_DEP`) | {L.M} | dependent coordinates {', '.join(names['coordinates'][L.n:]) or '-'} |

The functions (see `{n}.h`): `{n}_rhs` (x' in the state order above; 0 on success,
nonzero on a singular matrix, 5 where the model's dependent set is near singular),
`{n}_speeds`, `{n}_mass_forcing`, `{n}_holonomic`, `{n}_velocity_constraints`,
`{n}_outputs`, `{n}_project`{full}.  Every function takes the constants `p` and writes only
its own outputs (thread safe, no global state).

## Example: RK4 with projection (`{n}_example.c`)

    cc -std=c99 -O2 -o {n}_example {n}_example.c {n}.c -lm
    ./{n}_example 5 1e-3

```c
{example}```
"""


def generate_c(model: Any, name: str, *, outputs: Mapping | None = None,
               constants: Any = None, initial_state: Any = None,
               what: str = "export_c", derivatives: bool = False) -> GeneratedC:
    """The generated C of ``model`` (texts and names), without writing files; see
    :func:`export_c`.  ``derivatives``: also ``name_rhs_derivative`` (exact directional
    derivatives, :mod:`.directional`; ``GeneratedC.derivatives`` says whether it is there)."""
    check_name(name)
    check_exportable(model, what)
    check_not_callable(constants, what, "constants")
    check_not_callable(initial_state, what, "initial_state")
    P = checked_constants(model, constants)
    X = None if initial_state is None else model.state_array(initial_state)
    w = _Writer(model, name, outputs, derivatives)
    names = {
        "model": getattr(model.eom, "name", None) or repr(model).strip("<>"),
        "states": tuple(symbol_name(s) for s in model.states),
        "coordinates": tuple(symbol_name(s) for s in model.coordinates),
        "speeds": tuple(symbol_name(s) for s in model.speeds),
        "constants": tuple(symbol_name(s) for s in model.constants),
        "inputs": tuple(symbol_name(s) for s in model.specifieds),
        "outputs": tuple(w.output_names),
    }
    names["model"] = names["model"].replace("*/", "* /")
    header = _header(w, names, P is not None, X is not None)
    source = _source(w, names, P, X)
    example = _example(w, P is not None, X is not None)
    readme = _readme(w, names, example)
    return GeneratedC(name=name, header=header, source=source, readme=readme, example=example,
                      states=names["states"], coordinates=names["coordinates"],
                      speeds=names["speeds"], constants=names["constants"],
                      inputs=names["inputs"], outputs=names["outputs"], layout=model.layout,
                      derivatives=bool(w.tangents))


def export_c(model: Any, directory: str | Path, *, name: str = "model",
             outputs: Mapping | None = None, constants: Any = None,
             initial_state: Any = None, events: Any = None,
             derivatives: bool = False) -> CExport:
    """Write ``model`` as standalone C99 into ``directory``: ``name.h``, ``name.c``, a
    README.md and ``name_example.c`` (RK4 with projection).

    The C needs only libm.  ``name_rhs(t, x, p, r, xdot)`` is ``model.rhs``: x' (nx,) for
    x = [q (N), u_ind (p), x_e (e)], constants p (c,) and inputs r (s,); u_dep from
    ``B_dep u_dep = -(B_ind u_ind + b)`` and u' (with λ) from ``S y = s`` by LU with
    partial pivoting (Cholesky for a symmetric mass matrix).  Also exported: the speeds,
    the system S, s ("mass matrix and forcing"), f_h and ∂f_h/∂q, B and b, the ``outputs``
    (``{name: SymPy expression}`` in t, q, u, u', constants, inputs) and ``name_project``
    (Newton on q_dep).  ``constants`` / ``initial_state``: optional values written as
    ``name_default_constants`` / ``name_default_state`` (used by the example), checked as
    ``simulate`` checks them (finite; masses positive, inertias positive semidefinite).
    ``derivatives=True`` adds ``name_rhs_derivative``: the exact directional derivative of
    x' (and of the speeds, outputs and f_h) along a direction of the state and the inputs
    (forward mode, :mod:`symbody.export.directional`), what the FMU's
    ``fmi2GetDirectionalDerivative`` calls.

    Where the model's dependent set is near singular (``|det B_dep|`` below
    ``NAME_DEPENDENT_SET_RATIO`` = 0.01 of the best-conditioned choice) these functions
    return ``NAME_ERR_DEPENDENT_SET`` (5) rather than follow a branch they cannot tell apart;
    a model whose dependent set may change also gets the full-state functions
    ``name_full_rhs`` / ``name_full_project`` (y = [q, u, x_e], the dependent set chosen
    afresh at each projection), which pass those positions.

    Refused (InputError naming it): ``events`` (impacts), and a model whose equations come
    with events (the zoo's walkers) unless ``events=False`` says they are not wanted; a
    redundant constraint set, callables given as values, a ``name`` that is not a C
    identifier, a folder that cannot be written; CompilationError for an expression C
    cannot hold.

    ``model`` may also be a compiled function or ``{name: function}`` (``make_function``'s,
    a robot's ``robot.inverse_dynamics``, ``robot.frame_function(...)``): see
    :func:`symbody.export.functions.export_c_functions`.
    """
    from .functions import export_c_functions, is_function
    if is_function(model):
        return export_c_functions(model, directory, name)
    check_identifier(name)
    check_exportable(model, "export_c")
    check_events(model, events, "export_c")
    gen = generate_c(model, name, outputs=outputs, constants=constants,
                     initial_state=initial_state, derivatives=derivatives)
    d = Path(directory)
    paths = CExport(header=d / f"{name}.h", source=d / f"{name}.c", readme=d / "README.md",
                    example=d / f"{name}_example.c")
    with OutputLocation(d, "export_c"):
        d.mkdir(parents=True, exist_ok=True)
        paths.header.write_text(gen.header)
        paths.source.write_text(gen.source)
        paths.readme.write_text(gen.readme)
        paths.example.write_text(gen.example)
    return paths
