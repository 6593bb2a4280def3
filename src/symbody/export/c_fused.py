"""The right-hand side of a small model as one straight-line C function.

``name_rhs`` of the generated C fills the argument vector z, calls each kernel (which
stores its outputs), copies the system S out of the main kernel's output and solves it:
on a model of a few dozen operations those copies, loops and calls cost more than the
arithmetic.  For the models where it applies (every kernel one segment of straight-line
code, systems small enough for :func:`~.c_linear_algebra.solve_statements`) the
right-hand side is written instead as one function in which

* the kernels' operations read the state, constants and inputs where they are
  (``x[i]``, ``p[j]``, ``r[k]``; z is never formed) and their outputs stay local values;
* the entries the kernels write as literals (the structural zeros of M_d and B_a) take no
  part in the solve (:mod:`.c_linear_algebra`), the dependent speeds come from the
  velocity kernel's B_dep by a straight-line LU, and the watch of the dependent set
  (:mod:`.c_switching`) is its cheap test inline;
* anything out of the ordinary (a singular or not definite factor, a dependent set that
  fails the cheap test) goes to the general function (``rhs_general``: the loops of the
  module :mod:`.c_code`), which gives the same numbers and the documented status.

The same numbers as the general path to round-off (a different order of operations in
the factorizations); the tests compare both with ``model.rhs``.
"""

from __future__ import annotations

import re
from typing import Any

from ..compilation import c_kernels
from . import c_linear_algebra
from .c_linear_algebra import Entry

__all__ = ["fused_rhs"]

_DEFINITION = re.compile(r"^\s*const double (t\d+) = (.*);$")


def _body(w: Any, slot: str, prefix: str, zmap: dict[int, str]) -> tuple[list[str], list[Entry]]:
    """The statements of kernel ``slot`` with its temporaries renamed ``{prefix}tN`` and its
    arguments z[k] replaced by ``zmap[k]``; and its outputs as C expressions or literals."""
    program = w.programs[slot]
    text = "\n".join(c_kernels.c_source(program, "fused", segment_size=len(program) + 1))
    statements = []
    for line in text.splitlines():
        match = _DEFINITION.match(line)
        if match:
            statements.append(f"    const double {prefix}{match.group(1)} = {match.group(2)};")
    arg = re.compile(r"\bz\[(\d+)\]")
    temp = re.compile(r"\bt(\d+)\b")

    def rename(s: str) -> str:
        s = s.replace("pow(M_E, ", "exp(")          # e^x: exp is several times faster
        return arg.sub(lambda m: zmap[int(m.group(1))], temp.sub(rf"{prefix}t\1", s))

    statements = [rename(s) for s in statements]
    # 1/sqrt(y) where sqrt(y) is a value already: one square root (errno keeps the compiler
    # from sharing the two calls)
    roots = {}
    for k, line in enumerate(statements):
        match = re.match(r"^    const double (\w+) = sqrt\((\w+)\);$", line)
        if match:
            roots[match.group(2)] = match.group(1)
            continue
        for y, root in roots.items():
            line = line.replace(f"1.0/sqrt({y})", f"1.0/{root}")
        statements[k] = line
    outputs: list[Entry] = []
    for ref in program.outputs:
        if ref[0] == "t":
            outputs.append(f"{prefix}t{ref[1]}")
        elif ref[0] == "z":
            outputs.append(zmap[ref[1]])
        else:
            try:
                outputs.append(float(ref[1]))
            except ValueError:
                outputs.append(ref[1])
    return statements, outputs


def _applies(w: Any) -> bool:
    L = w.L
    slots = ["main"] + (["velocity"] if L.m else []) + (["extra"] if L.e else [])
    return (L.K > 0 and L.m <= c_linear_algebra.UNROLL_MAX
            and all(len(w.programs[s]) <= c_kernels.SEGMENT_SIZE for s in slots))


def _c(e: Entry) -> str:
    return repr(e) if isinstance(e, float) else e


def fused_rhs(w: Any) -> str | None:
    """``int name_rhs(t, x, p, r, xdot)`` as one straight-line function that falls back on
    ``rhs_general`` (the caller renames the general one), or None where it does not apply."""
    if not _applies(w):
        return None
    L, n = w.L, w.name
    N, o, p, m, e, K = L.N, L.o, L.p, L.m, L.e, L.K
    zmap: dict[int, str] = {0: "t"}
    zmap.update({L.iq + i: f"x[{i}]" for i in range(N)})
    zmap.update({L.iu + i: f"x[{N + i}]" for i in range(p)})
    zmap.update({L.iud + j: f"ud{j}" for j in range(m)})
    zmap.update({L.ir + i: f"r[{i}]" for i in range(L.s)})
    zmap.update({L.ic + i: f"p[{i}]" for i in range(L.c)})
    zmap.update({L.iudot + i: "0.0" for i in range(o)})
    zmap.update({L.ixe + i: f"x[{L.nxm + i}]" for i in range(e)})
    lines = [f"int {n}_rhs(double t, const double *x, const double *p, const double *r, "
             "double *xdot)", "{"]
    unused: list[str] = []
    if m:
        body, v = _body(w, "velocity", "v", zmap)
        lines += body
        vb, vr = L.velocity_Bdep.start, L.velocity_rest.start
        unused += [x for x in v if isinstance(x, str) and x.startswith("vt")]
        if m == 1:
            lines += [f"    const double bd = {_c(v[vb])};",
                      "    if (!(fabs(bd) > 0.0)) goto general;",
                      f"    const double ud0 = {_c(v[vr])} / bd;"]
            det = "fabs(bd)"
        else:
            lines += [f"    double A[{m * m}], b[{m}], d;",
                      *(f"    A[{i * m + j}] = {_c(v[vb + j * m + i])};"
                        for i in range(m) for j in range(m)),
                      *(f"    b[{i}] = {_c(v[vr + i])};" for i in range(m)),
                      f"    if (lu_solve_{m}(A, b, &d)) goto general;",
                      *(f"    const double ud{j} = b[{j}];" for j in range(m))]
            w.lu_sizes.add(m)
            det = "d"
        # the watch: the cheap test |det B_dep|^2 >= ratio^2 det(B B^T) inline
        gram = {(i, j): " + ".join(f"{_c(v[i * o + c])}*{_c(v[j * o + c])}" for c in range(o)
                                   if not (isinstance(v[i * o + c], float) and v[i * o + c] == 0)
                                   and not (isinstance(v[j * o + c], float) and v[j * o + c] == 0))
                or "0.0" for i in range(m) for j in range(i, m)}
        ratio = f"{w.P}_DEPENDENT_SET_RATIO"
        if m == 1:
            lines.append(f"    if ({ratio} > 0.0 && !({det}*{det} >= {ratio}*{ratio}*"
                         f"({gram[0, 0]}))) goto general;")
        elif m == 2:
            lines += [f"    const double g00 = {gram[0, 0]}, g01 = {gram[0, 1]}, g11 = {gram[1, 1]};",
                      f"    if ({ratio} > 0.0 && !({det}*{det} >= {ratio}*{ratio}*"
                      "(g00*g11 - g01*g01))) goto general;"]
        else:
            lines += [f"    double G[{m * m}];",
                      *(f"    G[{i * m + j}] = {gram[i, j]};" if i == j else
                        f"    G[{i * m + j}] = G[{j * m + i}] = {gram[i, j]};"
                        for i in range(m) for j in range(i, m)),
                      f"    if ({ratio} > 0.0 && !({det}*{det} >= {ratio}*{ratio}*"
                      f"abs_det({m}, G))) goto general;"]
    body, out = _body(w, "main", "k", zmap)
    lines += body
    unused += [x for x in out if isinstance(x, str) and x.startswith("kt")]
    K_, ms, mr = K, L.main_system.start, L.main_rhs.start

    by_column = L.augmented or L.mass_symmetric

    def S(i: int, j: int) -> Entry:
        return out[ms + j * K_ + i] if by_column else out[ms + i * K_ + j]

    rhs = [out[mr + i] for i in range(K)]
    solve: list[str] = []
    solved = c_linear_algebra.solve_statements((K, o, m), L.augmented, L.mass_symmetric, S, rhs,
                                               solve, "goto general;", independent_only=True)
    if solved is None:
        return None
    y, lu = solved
    if lu:
        w.lu_sizes.add(lu)
    lines += solve
    unused += [v for v in y[p:] if isinstance(v, str)]     # u_dep' and λ: not states
    if e:
        body, xe = _body(w, "extra", "e", zmap)
        lines += body
        unused += [x for x in xe if isinstance(x, str) and x.startswith("et")]
    lines += [f"    xdot[{i}] = {_c(out[L.main_qdot.start + i])};" for i in range(N)]
    lines += [f"    xdot[{N + i}] = {_c(y[i])};" for i in range(p)]
    if e:
        lines += [f"    xdot[{L.nxm + i}] = {_c(xe[i])};" for i in range(e)]
    lines += [f"    (void){u};" for u in dict.fromkeys(unused)]
    lines = _shared(lines)
    lines += ["    return 0;", "general:", "    return rhs_general(t, x, p, r, xdot);", "}", ""]
    return "\n".join(lines)


_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_LOCAL = re.compile(r"^    const double (\w+) = (.*);$")


def _shared(lines: list[str]) -> list[str]:
    """The statements with a value computed twice (the kernels are separate programs: cos q
    in the velocity kernel and again in the main kernel) defined once: a later definition
    whose right-hand side is the text of an earlier one becomes a second name for it."""
    alias: dict[str, str] = {}
    seen: dict[str, str] = {}
    out = []
    for line in lines:
        if alias:
            line = _NAME.sub(lambda m: alias.get(m.group(0), m.group(0)), line)
        match = _LOCAL.match(line)
        if match:
            name, value = match.groups()
            first = seen.get(value)
            if first is not None:
                alias[name] = first
                continue
            seen[value] = name
        out.append(line)
    return out
