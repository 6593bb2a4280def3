"""Exact directional derivatives of the exported right-hand side (forward mode, in C).

For a direction (dx, dr) of the state x = [q, u_ind, x_e] and the inputs r, the generated
``name_rhs_derivative`` gives d(x'), the derivatives of all speeds, of the outputs and of
f_h — what an FMU's ``fmi2GetDirectionalDerivative`` hands an importer (a Newton iteration
of an implicit solver, a linearization).  Each kernel's tangent is its expressions
differentiated in forward mode along a direction dz of the argument vector
``z = [t, q, u, r, p, u', x_e]`` (t and the constants held), ``dk = Σ_i ∂k/∂z_i dz_i``:
each operation of the kernel's straight-line program followed by its tangent (a product
rule, the derivative of sin, ...), so the tangent program is a few times the kernel's size
whatever the model; the solves are differentiated by hand:

    B_dep du_dep = -(∂(B u + b)/∂z dz)|_{du_dep = 0}               (velocity constraints)
    S dy = ds - dS y,  y = S⁻¹ s = [u'; λ] (or u')                   (the dynamics)
    d(q') from the main kernel's tangent, d(x_e') from the extra kernel's, d(f_h) = ∂f_h/∂q dq.

The same chain rule as ``symbody.analysis.simulation.jacobian.ode_jacobian`` (which the
tests use as the oracle), evaluated for one direction without forming a matrix.
"""

from __future__ import annotations

from typing import Any

from ..compilation import c_kernels

__all__ = ["tangent_programs", "derivative_c", "derivative_header", "provides_derivatives",
           "DIRECTIONAL_C"]


def provides_derivatives(w: Any) -> bool:
    """The export carries ``name_rhs_derivative``: every kernel's expressions are at hand and
    an output that reads u' can get d(u') (all speeds' accelerations come from the solve)."""
    L = w.L
    return not (w.outputs_use_udot and L.m and not L.augmented)


def tangent_programs(w: Any) -> dict[str, c_kernels.StraightLineProgram]:
    """The tangent straight-line programs of the writer's kernels (forward mode over the
    programs themselves, so their size is a few times the kernel's), in the arguments
    ``[z (nz), dz (nz)]``; t and the constants are held.  The velocity kernel's tangent
    gives d(B) and d(b) (B u from the primal B)."""
    L = w.L
    held = {0, *range(L.ic, L.iudot)}
    return {slot: _Tangent(program, L.nz, held).program for slot, program in w.programs.items()
            if slot in ("main", "velocity", "extra", "outputs")}


def _pruned(ops: list, outputs: list, nargs: int) -> c_kernels.StraightLineProgram:
    """The program without the operations no output depends on (primal values only the
    kernel's own outputs needed), temporaries renumbered."""
    live = [False] * len(ops)
    for ref in outputs:
        if ref[0] == "t":
            live[ref[1]] = True
    for i in range(len(ops) - 1, -1, -1):
        if live[i]:
            for a in ops[i][1]:
                if isinstance(a, tuple) and a[0] == "t":
                    live[a[1]] = True
    index: dict[int, int] = {}
    kept = []
    for i, (kind, operands) in enumerate(ops):
        if live[i]:
            index[i] = len(kept)
            kept.append((kind, [("t", index[a[1]]) if isinstance(a, tuple) and a[0] == "t"
                                else a for a in operands]))
    return c_kernels.StraightLineProgram(
        kept, [("t", index[r[1]]) if r[0] == "t" else r for r in outputs], nargs)


class _Tangent:
    """Forward mode over a straight-line program: each operation's tangent written after the
    primal operations, in the arguments ``[z (nz), dz (nz)]`` (``None``: a zero tangent)."""

    def __init__(self, program: c_kernels.StraightLineProgram, nz: int, held: set[int]) -> None:
        self.nz, self.held = nz, held
        self.ops = [(kind, list(operands)) for kind, operands in program.ops]
        self.tan: list = []
        for i, (kind, operands) in enumerate(program.ops):
            self.tan.append(self.rule(kind, operands, ("t", i)))
        outs = [self.d(r) for r in program.outputs]
        self.program = _pruned(self.ops, [o if o is not None else ("c", "0.0") for o in outs],
                               2 * nz)

    # -- building blocks
    def emit(self, kind: str, operands: list) -> tuple:
        self.ops.append((kind, operands))
        return ("t", len(self.ops) - 1)

    def d(self, a: Any) -> tuple | None:
        if not isinstance(a, tuple) or a[0] == "c":
            return None
        if a[0] == "z":
            return None if a[1] in self.held else ("z", self.nz + a[1])
        return self.tan[a[1]]

    def mul(self, *factors: Any) -> tuple | None:
        if any(f is None for f in factors):
            return None
        return factors[0] if len(factors) == 1 else self.emit("*", list(factors))

    def add(self, terms: list) -> tuple | None:
        terms = [t for t in terms if t is not None]
        if not terms:
            return None
        return terms[0] if len(terms) == 1 else self.emit("+", terms)

    @staticmethod
    def lit(value: float) -> tuple:
        return ("c", repr(float(value)))

    def power(self, a: tuple, k: float) -> tuple:
        return self.emit("pow", [a, int(k) if float(k).is_integer() else float(k)])

    def neg(self, a: tuple | None) -> tuple | None:
        return self.mul(self.lit(-1.0), a)

    def one_minus_square(self, a: tuple) -> tuple:
        return self.add([self.lit(1.0), self.neg(self.power(a, 2))])

    # -- d(op) = f'(operands) d(operands)
    def rule(self, kind: str, ops: list, t: tuple) -> tuple | None:
        d = [self.d(a) if isinstance(a, tuple) else None for a in ops]
        if all(x is None for x in d):
            return None
        a = ops[0]
        if kind == "+":
            return self.add(d)
        if kind == "*":
            return self.add([self.mul(*[o for j, o in enumerate(ops) if j != k], d[k])
                             for k in range(len(ops)) if d[k] is not None])
        if kind == "pow":
            k = ops[1]
            if k == 1:
                return d[0]
            return self.mul(self.lit(k), self.power(a, k - 1), d[0])
        if kind == "cpow":             # b^e (e' log b + e b'/b)
            b, e = ops
            inner = self.add([self.mul(d[1], self.emit("log", [b])) if d[1] is not None else None,
                              self.mul(e, d[0], self.power(b, -1)) if d[0] is not None else None])
            return self.mul(t, inner)
        if kind == "sqrt":
            return self.mul(self.lit(0.5), self.power(t, -1), d[0])
        if kind == "isqrt":
            return self.mul(self.lit(-0.5), self.power(t, 3), d[0])
        unary = {
            "sin": lambda: self.emit("cos", [a]),
            "cos": lambda: self.neg(self.emit("sin", [a])),
            "tan": lambda: self.add([self.lit(1.0), self.power(t, 2)]),
            "asin": lambda: self.emit("isqrt", [self.one_minus_square(a)]),
            "acos": lambda: self.neg(self.emit("isqrt", [self.one_minus_square(a)])),
            "atan": lambda: self.power(self.add([self.lit(1.0), self.power(a, 2)]), -1),
            "sinh": lambda: self.emit("cosh", [a]),
            "cosh": lambda: self.emit("sinh", [a]),
            "tanh": lambda: self.one_minus_square(t),
            "asinh": lambda: self.emit("isqrt", [self.add([self.power(a, 2), self.lit(1.0)])]),
            "acosh": lambda: self.emit("isqrt", [self.add([self.power(a, 2), self.lit(-1.0)])]),
            "atanh": lambda: self.power(self.one_minus_square(a), -1),
            "exp": lambda: t,
            "log": lambda: self.power(a, -1),
            "fabs": lambda: self.emit("sign", [a]),
        }
        if kind in unary:
            return self.mul(unary[kind](), d[0])
        if kind == "atan2":            # (x dy - y dx) / (x^2 + y^2)
            y, x = ops
            num = self.add([self.mul(x, d[0]) if d[0] is not None else None,
                            self.neg(self.mul(y, d[1])) if d[1] is not None else None])
            return self.mul(num, self.power(self.add([self.power(x, 2), self.power(y, 2)]), -1))
        if kind in ("floor", "ceil", "sign", "and", "or", "not", "lt", "le", "eq", "ne"):
            return None
        zero = ("c", "0.0")
        if kind in ("max", "min") and len(ops) == 2:   # the tangent of the operand taken
            first = self.emit("le", [ops[1], ops[0]] if kind == "max" else [ops[0], ops[1]])
            return self.emit("piecewise", [d[0] or zero, first, d[1] or zero, ("c", "1.0")])
        if kind == "piecewise":        # the tangent of the branch taken
            return self.emit("piecewise", [x if k % 2 else (d[k] or zero)
                                           for k, x in enumerate(ops)])
        raise c_kernels.UnsupportedExpression(f"no derivative rule for {kind!r}")


def derivative_header(w: Any) -> str:
    n = w.name
    return f"""
/* the directional derivative of x' = f(t, x, r) along (dx (NX), dr (NR; may be null when NR
   is 0)): dxdot (NX), du of all speeds (NU), dy of the outputs (NY), dfh of f_h (NQ_DEP); any
   of the last three may be null.  Exact (the equations differentiated symbolically); 0 on
   success, 1 or 2: a singular B_dep or S (the dependent set is not watched here) */
int {n}_rhs_derivative(double t, const double *x, const double *p, const double *r,
                       const double *dx, const double *dr, double *dxdot, double *du,
                       double *dy, double *dfh);
"""


def derivative_c(w: Any) -> str:
    """``name_rhs_derivative`` (see :func:`derivative_header`)."""
    L, n = w.L, w.name
    N, o, p, m, e, s, K, nz = L.N, L.o, L.p, L.m, L.e, L.s, L.K, L.nz
    tk = w.tangent_kernel
    lines = [f"int {n}_rhs_derivative(double t, const double *x, const double *p, const double *r,",
             "                       const double *dx, const double *dr, double *dxdot, double *du,",
             "                       double *dy, double *dfh)", "{",
             f"    double zz[{2 * nz}], xd[{L.nx}], y[{K}], dsol[{K}], dmain[{w.nout['main']}];",
             f"    double *z = zz, *dz = zz + {nz};",
             "    int i, j, st;"]
    size = w.nout["main"] + K * K
    lines += [f"    double *work = (double *)malloc({size} * sizeof(double)), *S;",
              "    if (!work) return 4;",
              f"    S = work + {w.nout['main']};",
              "    st = fill_z(z, t, x, p, r, 0);",
              "    if (st) { free(work); return st; }",
              f"    for (i = 0; i < {nz}; i++) dz[i] = 0.0;",
              f"    for (i = 0; i < {N}; i++) dz[{L.iq} + i] = dx[i];",
              f"    for (i = 0; i < {p}; i++) dz[{L.iu} + i] = dx[{N} + i];"]
    if s:
        lines.append(f"    if (dr) for (i = 0; i < {s}; i++) dz[{L.ir} + i] = dr[i];")
    else:
        lines.append("    (void)dr;")
    if e:
        lines.append(f"    for (i = 0; i < {e}; i++) dz[{L.ixe} + i] = dx[{L.nxm} + i];")
    if m:
        vb = L.velocity_Bdep.start
        lines += [
            "    {                    /* B_dep du_dep = -d(B u + b) with du_dep = 0 */",
            f"        double v[{w.nout['velocity']}], dv[{w.nout['velocity']}], A[{m * m}], b[{m}];",
            f"        {w.k('velocity')}(z, v);",
            f"        {tk('velocity')}(zz, dv);",
            f"        for (i = 0; i < {m}; i++) {{",
            f"            double acc = dv[{m * o} + i];",
            f"            for (j = 0; j < {o}; j++) acc += dv[i * {o} + j] * z[{L.iu} + j];",
            f"            for (j = 0; j < {p}; j++) acc += v[i * {o} + j] * dz[{L.iu} + j];",
            f"            for (j = 0; j < {m}; j++) A[i * {m} + j] = v[{vb} + j * {m} + i];",
            "            b[i] = -acc;",
            "        }",
            f"        if (lu_solve({m}, A, b)) {{ free(work); return 1; }}",
            f"        for (i = 0; i < {m}; i++) dz[{L.iud} + i] = b[i];",
            "    }"]
    lines += [
        "    st = dynamics_in(z, xd, y, work, S);          /* y = S^-1 s */",
        "    if (st) { free(work); return st; }",
        f"    {w.k('main')}(z, work);                        /* S again (factored above) */",
        "    system_of(work, S, dsol);",
        f"    {tk('main')}(zz, dmain);",
        f"    for (i = 0; i < {K}; i++) {{                  /* ds - dS y */",
        f"        double acc = dmain[{L.main_rhs.start} + i];",
        f"        for (j = 0; j < {K}; j++) acc -= {_dS(L)} * y[j];",
        "        dsol[i] = acc;",
        "    }",
        f"    st = lu_solve({K}, S, dsol);",
        "    free(work);",
        "    if (st) return 2;",
        f"    for (i = 0; i < {N}; i++) dxdot[i] = dmain[{L.main_qdot.start} + i];",
        f"    for (i = 0; i < {p}; i++) dxdot[{N} + i] = dsol[i];"]
    if e:
        lines += [f"    {{ double de[{e}]; {tk('extra')}(zz, de);",
                  f"      for (i = 0; i < {e}; i++) dxdot[{L.nxm} + i] = de[i]; }}"]
    lines += [f"    if (du) for (i = 0; i < {o}; i++) du[i] = dz[{L.iu} + i];"]
    if "outputs" in w.programs:
        if w.outputs_use_udot:
            lines += ["    { int f = fill_udot(z, y); if (f) return f; }",
                      f"    for (i = 0; i < {o}; i++) dz[{L.iudot} + i] = dsol[i];"]
        lines += [f"    if (dy) {tk('outputs')}(zz, dy);"]
    else:
        lines.append("    (void)dy;")
    if L.M:
        M = L.M
        lines += ["    if (dfh) {",
                  f"        double fh[{M}], J[{M * N}];",
                  f"        {n}_holonomic(t, x, p, fh, J);",
                  f"        for (i = 0; i < {M}; i++) {{",
                  "            double acc = 0.0;",
                  f"            for (j = 0; j < {N}; j++) acc += J[i * {N} + j] * dx[j];",
                  "            dfh[i] = acc;",
                  "        }",
                  "    }"]
    else:
        lines.append("    (void)dfh;")
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


def _dS(L: Any) -> str:
    """dS[i][j] in the main kernel's tangent (S column by column when augmented or
    symmetric, as :meth:`_Writer.system` reads it)."""
    K, ms = L.K, L.main_system.start
    return (f"dmain[{ms} + j * {K} + i]" if (L.augmented or L.mass_symmetric)
            else f"dmain[{ms} + i * {K} + j]")


#: fmi2GetDirectionalDerivative over the model's rhs_derivative (knowns: states and inputs)
DIRECTIONAL_C = r"""
FMI2_EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c_,
        const fmi2ValueReference vz[], size_t nz, const fmi2ValueReference vv[], size_t nv,
        const fmi2Real dv[], fmi2Real dz[])
{
    Instance *c = (Instance *)c_;
    double dx[NX1], dr[NR1], dxdot[NX1], du[NU1], dy[NY1], dfh[NM1];
    size_t k;
    int st;
    if (!c) return fmi2Error;
    if (!HAS_DERIVATIVE)
        return refuse(c, "fmi2GetDirectionalDerivative: this FMU gives no directional derivatives");
    if (update(c)) return fmi2Error;
    memset(dx, 0, sizeof dx);
    memset(dr, 0, sizeof dr);
    for (k = 0; k < nv; k++) {
        unsigned v = vv[k];
        if (v < VR_UDEP) dx[v - VR_X] += dv[k];
        else if (v >= VR_R && v < VR_Y) dr[v - VR_R] += dv[k];
        else return refuse(c, "fmi2GetDirectionalDerivative: %s (value reference %u) is neither "
                           "a continuous state nor an input (the knowns of a directional "
                           "derivative)", vr_name(v), v);
    }
    st = MODEL_rhs_derivative(c->time, c->x, c->p, c->r, dx, dr, dxdot, du, dy, dfh);
    if (st) { logf_(c, fmi2Error, why(st)); return fmi2Error; }
    for (k = 0; k < nz; k++) {
        unsigned v = vz[k];
        if (v < VR_UDEP) dz[k] = dx[v - VR_X];
        else if (v < VR_P) dz[k] = du[NU_IND + v - VR_UDEP];
        else if (v >= VR_Y && v < VR_RES) dz[k] = dy[v - VR_Y];
        else if (v >= VR_RES && v < VR_DER) dz[k] = dfh[v - VR_RES];
        else if (v >= VR_DER && v < VR_END) dz[k] = dxdot[v - VR_DER];
        else return refuse(c, "fmi2GetDirectionalDerivative: %s (value reference %u) is not an "
                           "unknown (an output or a state derivative)", vr_name(v), v);
    }
    return fmi2OK;
}
"""
