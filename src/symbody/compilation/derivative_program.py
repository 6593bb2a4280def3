"""Exact first derivatives of the canonical-form blocks, as a generated straight-line program.

Linearization needs the Jacobians of every block of the canonical form (f_h, B, b, K_qd,
K_u, k, M_d, g_d, B_a, b_a) with respect to q, u and the specified inputs r.  Forming
them symbolically would multiply the size of the expressions; instead
:class:`ForwardProgram` differentiates the common subexpressions in forward mode and
prints one straight-line Python function that returns the values and the Jacobian
together.  :class:`BlockProgram` builds it for one model's blocks; :func:`block_program`
caches it per EquationsOfMotion and argument ordering.  Use it through
:meth:`NumericModel.block_derivatives <symbody.compilation.NumericModel.block_derivatives>`.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import symengine as se

from ..compat.sympy import TIME
from ..errors import CompilationError, InputError
from ..symengine_bridge import SymbolTable

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion


__all__ = ["ForwardProgram", "BlockProgram", "BlockValues", "BLOCKS", "block_program"]

_t = TIME

_NAMESPACE = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "atan2": math.atan2, "sinh": math.sinh, "cosh": math.cosh,
    "tanh": math.tanh, "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh,
    "exp": math.exp, "log": math.log,
    # NaN below 0, as C's sqrt: the branch of a Piecewise that is not taken may hold the
    # square root of a negative number (a contact's depth**(1/2) while apart)
    "sqrt": lambda x: math.sqrt(x) if x >= 0.0 else math.nan, "abs": abs, "floor": math.floor,
    "ceiling": math.ceil, "gamma": math.gamma, "erf": math.erf, "erfc": math.erfc,
    "sign": lambda x: math.copysign(1.0, x) if x else 0.0,
    "cot": lambda x: 1.0 / math.tan(x), "sec": lambda x: 1.0 / math.cos(x),
    "csc": lambda x: 1.0 / math.sin(x), "E": math.e, "pi": math.pi,
    # Piecewise((e1, c1), (e2, c2), ...): the first true condition's value (contact forces)
    "Piecewise": lambda *pairs: next((v for v, c in pairs if c), math.nan),
    "And": lambda *a: all(a), "Or": lambda *a: any(a), "Not": lambda a: not a,
}
_SUPPORTED = {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
              "asinh", "acosh", "atanh", "exp", "log", "sqrt", "abs", "floor", "ceiling",
              "gamma", "erf", "erfc", "sign", "cot", "sec", "csc", "piecewise"}


class ForwardProgram:
    """Values and first derivatives of expressions, as one straight-line Python function.

    Forward-mode automatic differentiation done symbolically on the common
    subexpressions: with the expressions split by ``symengine.cse`` into
    assignments x_i = e_i(args, x_<i), each derivative follows the chain rule

        dx_i/dv = sum_a (de_i/da) (da/dv)        (a: the arguments and earlier x_j in e_i)

    with the small local partials de_i/da taken by symengine.  The program is
    printed as Python source (``math`` functions, floats printed exactly with
    ``repr``) and compiled once; calling it returns the values (V,) and the
    Jacobian (V, D) with respect to the ``directions``.  Derivatives are exact
    to round-off, and building is fast because nothing is ever expanded.
    """

    def __init__(self, args: Sequence, exprs: Sequence, directions: Sequence, name: str):
        pos = [se.Symbol(f"_a{i}") for i in range(len(args))]
        ren = dict(zip(args, pos))
        exprs = [se.sympify(e).xreplace(ren) for e in exprs]
        dirs = [ren[d] for d in directions]
        self.nargs, self.nout, self.ndir, self.name = len(args), len(exprs), len(dirs), name
        reps, reduced = se.cse(exprs)
        # floats printed exactly; functions checked (on the small cse pieces: cheap)
        floats: dict = {}
        pieces = [e for _, e in reps] + list(reduced)
        for e in pieces:
            if e.is_Number:
                continue
            for f in e.atoms(se.RealDouble):
                floats.setdefault(f, se.Symbol(f"_c{len(floats)}"))
            for fn in e.atoms(se.Function):
                if type(fn).__name__.lower() not in _SUPPORTED:
                    raise CompilationError(f"{name}: cannot generate code for the function {fn}")
        if floats:
            reps = [(x, e.xreplace(floats)) for x, e in reps]
            reduced = [e.xreplace(floats) for e in reduced]
        # deriv[symbol] = {direction: name of the variable holding d symbol / d direction, or "1"}
        deriv: dict = {d: {k: "1"} for k, d in enumerate(dirs)}
        lines = ["def _program(z, v, J):"]
        for i, a in enumerate(pos):
            lines.append(f"    {a} = z[{i}]")
        for f, sym in floats.items():
            lines.append(f"    {sym} = {float(f)!r}")
        counter = 0

        def derivative(e) -> dict:
            """Chain rule for e: {direction: Python expression (str)}; the partials are printed once."""
            partials = []
            for a in e.free_symbols:
                da = deriv.get(a)
                if not da:
                    continue
                pa = e.diff(a)
                if pa == 0:
                    continue
                if not pa.is_Number and pa.atoms(se.Derivative, se.Subs):
                    raise CompilationError(f"{name}: no closed-form derivative of {e} with "
                                           f"respect to {a}")
                partials.append((f"({pa})" if not (pa.is_Symbol or pa.is_Number) else str(pa), da))
            terms: dict = {}
            for ps, da in partials:
                for k, dak in da.items():
                    term = dak if ps == "1" else ps if dak == "1" else f"{ps}*{dak}"
                    terms.setdefault(k, []).append(term)
            return {k: " + ".join(ts) for k, ts in terms.items()}

        for x, e in reps:
            lines.append(f"    {x} = {e}")
            new = {}
            for k, ex in derivative(e).items():
                if ex.isidentifier() or ex == "1":
                    new[k] = ex
                    continue
                counter += 1
                lines.append(f"    _d{counter} = {ex}")
                new[k] = f"_d{counter}"
            if new:
                deriv[x] = new
        D = len(dirs)
        for j, e in enumerate(reduced):
            if e != 0:
                lines.append(f"    v[{j}] = {e}")
            for k, ex in derivative(e).items():
                lines.append(f"    J[{j * D + k}] = {ex}")
        source = "\n".join(lines) + "\n"
        namespace = dict(_NAMESPACE)
        try:
            exec(compile(source, f"<symbody linearization: {name}>", "exec"), namespace)
        except SyntaxError as exc:  # pragma: no cover - printing problem
            raise CompilationError(f"{name}: generated code does not compile: {exc}") from exc
        self._fn = namespace["_program"]
        self.lines = len(lines)

    def __call__(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = [0.0] * self.nout
        J = [0.0] * (self.nout * self.ndir)
        try:
            self._fn(z.tolist(), v, J)
            values = np.array(v, dtype=float)
            jac = np.array(J, dtype=float).reshape(self.nout, self.ndir)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError) as exc:
            raise InputError(f"the equations cannot be evaluated at the operating point ({exc})") from exc
        return values, jac


class BlockProgram:
    """One forward program for all blocks of a model's equations and their derivatives.

    Arguments z = [t, q (N), u (o), r (s), constants (c)]; derivatives with respect
    to [q, u, r].  Values: f_h, B, b, K_qd, K_u, k, M_d, g_d, B_a, b_a (flattened).
    """

    def __init__(self, eom: EquationsOfMotion, coordinates: Sequence, speeds: Sequence,
                 specifieds: Sequence, constants: Sequence) -> None:
        q, u = list(coordinates), list(speeds)
        N, o, M = len(q), len(u), len(eom.q_dep)
        m, p = len(eom.u_dep), len(eom.u_ind)
        r_atoms, consts = list(specifieds), list(constants)
        s = len(r_atoms)
        self.sizes = (N, o, p, m, M, s, len(consts))
        self.reduced = bool(eom.dynamic_reduced)
        syms = SymbolTable()
        qs = [syms.add(a) for a in q]
        us = [syms.add(a) for a in u]
        rs = [syms.add(a) for a in r_atoms]
        ts = se.Symbol(_t.name)
        cs = syms.to_se_many(consts)
        args = [ts, *qs, *us, *rs, *cs]
        self.nz = len(args)
        self.iq = slice(1, 1 + N)
        self.iu = slice(1 + N, 1 + N + o)
        self.ir = slice(1 + N + o, 1 + N + o + s)
        self.ic = slice(1 + N + o + s, 1 + N + o + s + len(cs))
        blocks = syms.matrices([eom.holonomic, eom.velocity_matrix, eom.velocity_rest,
                                eom.kinematic_qdot, eom.kinematic_u, eom.kinematic_rest,
                                eom.dynamic_mass, eom.dynamic_rest, eom.acceleration_matrix,
                                eom.acceleration_rest])
        known = set(args)
        for blk in blocks:
            for row in blk:
                for e in row:
                    extra = [x for x in e.free_symbols if x not in known]
                    if extra:
                        what = syms.to_sympy(extra[0])
                        raise InputError(f"the equations depend on {what}, which is not a coordinate, "
                                         "speed, specified input or constant of the model")
        Md = blocks[6]
        self.nd, self.ncol = len(Md), (len(Md[0]) if Md else 0)
        nd, ncol = self.nd, self.ncol
        shapes = [(M,), (m, o), (m,), (N, N), (N, o), (N,), (nd, ncol), (nd,), (m, o), (m,)]
        flat = [e for blk in blocks for row in blk for e in row]
        self.program = ForwardProgram(args, flat, qs + us + rs, "values and derivatives")
        self.D = N + o + s
        offsets, pos_ = [], 0
        for shp in shapes:
            size = int(np.prod(shp))
            offsets.append((pos_, pos_ + size, shp))
            pos_ += size
        self._offsets = offsets

    def __call__(self, z: np.ndarray) -> BlockValues:
        """Values and derivatives of the blocks (each derivative has a trailing axis of length D)."""
        v, J = self.program(z)
        vals = {name: v[a:b].reshape(shp) for name, (a, b, shp) in zip(BLOCKS, self._offsets)}
        ders = {name: J[a:b].reshape(shp + (self.D,)) for name, (a, b, shp) in zip(BLOCKS, self._offsets)}
        return BlockValues(vals, ders)

    def at(self, t: float, q: np.ndarray, u: np.ndarray, r: np.ndarray | None,
           constants: np.ndarray) -> BlockValues:
        """The blocks and their derivatives at t, q (N,), u (o,), r (s,; zeros when None) and
        the constants (c,)."""
        z = np.zeros(self.nz)
        z[0] = t
        z[self.iq] = np.asarray(q, dtype=float)
        z[self.iu] = np.asarray(u, dtype=float)
        if r is not None:
            z[self.ir] = np.asarray(r, dtype=float)
        z[self.ic] = constants
        return self(z)


class BlockValues(NamedTuple):
    """Values of the canonical-form blocks and their derivatives along [q (N), u (o), r (s)].

    ``values[name]``: the block (vector or matrix); ``derivatives[name]``: the same shape
    plus a trailing axis of length N + o + s.  Names: :data:`BLOCKS`.
    """

    values: dict[str, np.ndarray]
    derivatives: dict[str, np.ndarray]


#: the blocks of the canonical form, by their EquationsOfMotion attribute names
BLOCKS = ("holonomic", "velocity_matrix", "velocity_rest", "kinematic_qdot", "kinematic_u",
          "kinematic_rest", "dynamic_mass", "dynamic_rest", "acceleration_matrix",
          "acceleration_rest")

#: eom -> {(coordinates, speeds, specifieds, constants): BlockProgram}
_PROGRAMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PROGRAMS_BY_ID: dict[int, dict] = {}


def block_program(eom: EquationsOfMotion, coordinates: Sequence, speeds: Sequence,
                  specifieds: Sequence, constants: Sequence) -> BlockProgram:
    """The derivative program of ``eom``'s blocks for one argument ordering (built once, cached)."""
    try:
        per_eom = _PROGRAMS.setdefault(eom, {})
    except TypeError:  # not weak-referenceable
        per_eom = _PROGRAMS_BY_ID.setdefault(id(eom), {})
    key = (tuple(coordinates), tuple(speeds), tuple(specifieds), tuple(constants))
    got = per_eom.get(key)
    if got is None:
        got = per_eom[key] = BlockProgram(eom, coordinates, speeds, specifieds, constants)
    return got
