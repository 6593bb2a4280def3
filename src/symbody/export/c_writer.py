"""The writer of one model's C functions (``_Writer``): the straight-line programs of its
kernels, their work space (stack or malloc) and the C of fill, system, dynamics, speeds,
outputs, projection and the public entry points."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..compilation import c_kernels
from . import c_fused, c_linear_algebra, c_switching, directional
from .c_program import _kernel_expressions, _output_expressions, _program

#: work arrays larger than this (doubles) are taken from malloc, not the stack
STACK_DOUBLES = 16384


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
