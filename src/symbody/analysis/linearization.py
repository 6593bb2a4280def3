"""Numeric linearization of constrained equations of motion about an operating point.

For the state x = [q_ind (n), u_ind (p)] (the independent coordinates and speeds,
in model order) and the specified inputs r (s), :func:`linearize` returns the
exact Jacobians of the constrained dynamics x' = f(x, r)::

    dx' = A dx + B dr,      A = df/dx (n + p, n + p),  B = df/dr (n + p, s)

"Exact" means to round-off: every derivative comes from symbolic differentiation
of the equations (forward mode over their common subexpressions, see
:class:`_ForwardProgram`), compiled once per model into a straight-line numeric
kernel, never from finite differences.  The dependent coordinates and speeds are
eliminated numerically by the implicit function theorem:

    f_h(q) = 0            ->  dq = C_0 dq_ind,       C_0 = [I; -F_dep^-1 F_ind],  F = df_h/dq
    B(q) u + b(q) = 0     ->  du_dep = -B_dep^-1 (B_ind du_ind + d(Bu + b)/dq dq + d(Bu + b)/dr dr)
    K_qd q' + K_u u + k = 0           ->  dq' = -K_qd^-1 (d(K_qd q' + K_u u + k)/dq dq + K_u du + ...)
    M_d u' + g_d + B^T lam = 0,  B_a u' + b_a = 0   (unreduced dynamics with multipliers)

      [ M_d  B^T ] [ du'  ]     [ d(M_d u' + g_d + B^T lam)/dq dq + dg_d/du du + dg_d/dr dr ]
      [ B_a   0  ] [ dlam ] = - [ d(B_a u' + b_a)/dq dq + db_a/du du + db_a/dr dr           ]

(for a reduced, hand-derived dynamic block M_d u_ind' + g_d = 0 the multiplier
rows are absent).  The operating point need not be an equilibrium: the result is
the Jacobian of the vector field at that state; q', u' and lam there are solved
numerically first.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Mapping, Sequence

import numpy as np
import symengine as se
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..compilation.numeric_model import NumericModel, constants_values
from ..errors import CompilationError, InputError, SingularConstraintError
from ..formulation.symbolic_linearization import _Symbols

__all__ = ["linearize"]

_t = dynamicsymbols._t

#: eom -> {(constants, specifieds): program} (built on first use, shared by later calls)
_KERNELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KERNELS_BY_ID: dict[int, object] = {}


# --------------------------------------------------------------------------- kernels
_NAMESPACE = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "atan2": math.atan2, "sinh": math.sinh, "cosh": math.cosh,
    "tanh": math.tanh, "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh,
    "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "abs": abs, "floor": math.floor,
    "ceiling": math.ceil, "gamma": math.gamma, "erf": math.erf, "erfc": math.erfc,
    "sign": lambda x: math.copysign(1.0, x) if x else 0.0,
    "cot": lambda x: 1.0 / math.tan(x), "sec": lambda x: 1.0 / math.cos(x),
    "csc": lambda x: 1.0 / math.sin(x), "E": math.e, "pi": math.pi,
}
_SUPPORTED = {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
              "asinh", "acosh", "atanh", "exp", "log", "sqrt", "abs", "floor", "ceiling",
              "gamma", "erf", "erfc", "sign", "cot", "sec", "csc"}


class _ForwardProgram:
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


class _Kernels:
    """One forward program for all blocks of a model's equations and their derivatives.

    Arguments z = [t, q (N), u (o), r (s), constants (c)]; derivatives with respect
    to [q, u, r].  Values: f_h, B, b, K_qd, K_u, k, M_d, g_d, B_a, b_a (flattened).
    """

    def __init__(self, model) -> None:
        eom = model.eom
        q, u = list(model.coordinates), list(model.speeds)
        N, o, p, m, M = model.N, model.o, model.p, model.m, model.M
        r_atoms, consts = list(model.specifieds), list(model.constants)
        s = len(r_atoms)
        self.sizes = (N, o, p, m, M, s, len(consts))
        self.reduced = bool(eom.dynamic_reduced)
        syms = _Symbols()
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
        self.program = _ForwardProgram(args, flat, qs + us + rs, "values and derivatives")
        self.D = N + o + s
        offsets, pos_ = [], 0
        for shp in shapes:
            size = int(np.prod(shp))
            offsets.append((pos_, pos_ + size, shp))
            pos_ += size
        self._offsets = offsets

    def __call__(self, z: np.ndarray) -> tuple[list, list]:
        """Values and derivatives of the blocks (each derivative has a trailing D axis)."""
        v, J = self.program(z)
        vals = [v[a:b].reshape(shp) for a, b, shp in self._offsets]
        ders = [J[a:b].reshape(shp + (self.D,)) for a, b, shp in self._offsets]
        return vals, ders


def _kernels(model):
    """The program of a model's equations: one per EquationsOfMotion and argument ordering."""
    eom = model.eom
    try:
        per_eom = _KERNELS.setdefault(eom, {})
    except TypeError:  # not weak-referenceable
        per_eom = _KERNELS_BY_ID.setdefault(id(eom), {})
    key = (tuple(model.constants), tuple(model.specifieds))
    got = per_eom.get(key)
    if got is None:
        got = per_eom[key] = _Kernels(model)
    return got


# --------------------------------------------------------------------------- models
class _EomView:
    """What :func:`linearize` needs of a NumericModel, for a bare EquationsOfMotion."""

    def __init__(self, eom, constants: dict | None = None) -> None:
        self.eom = eom
        self.coordinates, self.speeds = tuple(eom.q), tuple(eom.u)
        self.independent_coordinates, self.dependent_coordinates = tuple(eom.q_ind), tuple(eom.q_dep)
        self.independent_speeds, self.dependent_speeds = tuple(eom.u_ind), tuple(eom.u_dep)
        self.states = self.coordinates + self.independent_speeds
        self.constants, self.specifieds = tuple(eom.constants), tuple(eom.specifieds)
        self.n, self.M, self.p, self.m = eom.n, eom.M, eom.p, eom.m
        self.N, self.o = self.n + self.M, self.p + self.m
        self.default_constants = constants

    def constants_array(self, p) -> np.ndarray:
        if p is None:
            if self.default_constants is None:
                raise InputError("give the constants p (a dict keyed by symbol or name, or an array "
                                 f"in the order {', '.join(map(str, self.constants))})")
            p = self.default_constants
        return constants_values(self.constants, NumericModel._name_index(self.constants), p)


def _as_model(model):
    """A NumericModel as it is; an EquationsOfMotion or a zoo Model wrapped in an _EomView."""
    from ..formulation import EquationsOfMotion

    if isinstance(model, EquationsOfMotion):
        return _view_of(model, None)
    eom = getattr(model, "eom", None)
    if isinstance(eom, EquationsOfMotion) and hasattr(model, "constants_array"):
        return model                                   # NumericModel
    if isinstance(eom, EquationsOfMotion) and isinstance(getattr(model, "constants", None), dict):
        return _view_of(eom, model.constants)          # zoo Model: its default constants
    raise InputError(f"linearize needs a NumericModel (symbody.compile), an EquationsOfMotion or a "
                     f"zoo Model; got {type(model).__name__}")


_VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _view_of(eom, constants):
    try:
        views = _VIEWS.setdefault(eom, {})
    except TypeError:
        return _EomView(eom, constants)
    key = None if constants is None else id(constants)
    got = views.get(key)
    if got is None or got.default_constants is not constants:
        got = views[key] = _EomView(eom, constants)
    return got


# --------------------------------------------------------------------------- inputs
@functools.lru_cache(maxsize=256)
def _index_of(symbols: tuple) -> dict:
    """Position of each symbol, also by its name ("q1(t)" and "q1" for a function of time)."""
    idx: dict = {}
    for i, s in enumerate(symbols):
        idx[s] = i
        idx.setdefault(str(s), i)
        if isinstance(s, sm.core.function.AppliedUndef):
            idx.setdefault(str(s.func), i)
    return idx


def _operating_point(model, op_point, r) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(q (N), u_ind (p), r (s)) from a dict keyed by symbol/name or an array in model order."""
    N, p, o = model.N, model.p, model.o
    s = len(model.specifieds)
    q = np.zeros(N)
    u_ind = np.zeros(p)
    r_val = np.zeros(s)
    q_given = np.zeros(N, bool)
    if isinstance(op_point, Mapping):
        iq = _index_of(tuple(model.coordinates))
        iu = _index_of(tuple(model.independent_speeds))
        idep = _index_of(tuple(model.dependent_speeds))
        ir = _index_of(tuple(model.specifieds))
        seen_u = np.zeros(p, bool)
        for key, val in op_point.items():
            k = key.strip() if isinstance(key, str) else key
            try:
                v = float(val)
            except (TypeError, ValueError) as exc:
                raise InputError(f"operating point value for {key} = {val!r} is not a number") from exc
            if not np.isfinite(v):
                raise InputError(f"operating point value for {key} is not finite ({v})")
            if k in iq:
                q[iq[k]] = v
                q_given[iq[k]] = True
            elif k in iu:
                u_ind[iu[k]] = v
                seen_u[iu[k]] = True
            elif k in idep:
                continue                                  # follows from the constraints
            elif k in ir:
                r_val[ir[k]] = v
            elif isinstance(k, sm.Derivative):
                continue                                  # q', u' are computed, not given
            else:
                raise InputError(f"unknown operating-point entry {key!r}; the states are "
                                 f"{', '.join(map(str, model.states))}")
        missing = [str(model.coordinates[i]) for i in range(model.n) if not q_given[i]]
        missing += [str(model.independent_speeds[i]) for i in range(p) if not seen_u[i]]
        if missing:
            raise InputError(f"the operating point has no value for {missing[0]} "
                             f"(needed: {', '.join(map(str, model.states))})")
    else:
        try:
            x = np.asarray(op_point, dtype=float).ravel()
        except (TypeError, ValueError) as exc:
            raise InputError(f"op_point must be a dict keyed by symbol or an array in model order "
                             f"({', '.join(map(str, model.states))}), got {op_point!r}") from exc
        if x.size == N + o:
            x = np.concatenate([x[:N + p]])
        if x.size != N + p:
            raise InputError(f"op_point has {x.size} values but the state has {N + p}: "
                             f"{', '.join(map(str, model.states))}")
        if not np.isfinite(x).all():
            raise InputError("op_point contains a non-finite value")
        q[:] = x[:N]
        u_ind[:] = x[N:]
        q_given[:] = True
    if r is not None:
        if isinstance(r, Mapping):
            ir = _index_of(tuple(model.specifieds))
            for key, val in r.items():
                k = key.strip() if isinstance(key, str) else key
                if k not in ir:
                    raise InputError(f"unknown specified input {key!r}; the model's specifieds are "
                                     f"{', '.join(map(str, model.specifieds)) or '(none)'}")
                r_val[ir[k]] = float(val)
        else:
            arr = np.asarray(r, dtype=float).ravel()
            if arr.shape != (s,):
                raise InputError(f"r has {arr.size} values but the model has {s} specified inputs")
            r_val[:] = arr
        if not np.isfinite(r_val).all():
            raise InputError("the specified inputs r contain a non-finite value")
    return q, u_ind, r_val


def _solve(A: np.ndarray, B: np.ndarray, what: str) -> np.ndarray:
    try:
        return np.linalg.solve(A, B)
    except np.linalg.LinAlgError as exc:
        raise SingularConstraintError(f"{what} is singular at the operating point") from exc


# --------------------------------------------------------------------------- linearize
def _d(blockder: np.ndarray, sl: slice, vec: np.ndarray | None = None) -> np.ndarray:
    """Derivative of ``Mat @ vec`` (or of a vector block) along the directions ``sl``."""
    d = blockder[..., sl]
    if vec is None:
        return d
    return np.einsum("ijk,j->ik", d, vec)


def linearize(model, op_point, p=None, *, r=None, t: float = 0.0, return_point: bool = False):
    """Linearize a compiled model about an operating point: ``dx' = A dx + B dr``.

    Parameters
    ----------
    model : NumericModel (from :func:`symbody.compile`), or an EquationsOfMotion, or a
        zoo Model (``symbody.models``; its default constants are used when ``p`` is None).
    op_point : dict keyed by symbol (or name) giving every independent coordinate
        and independent speed (values for dependent coordinates are initial
        guesses for Newton's method on f_h = 0, 0 when absent; dependent speeds
        follow from the velocity constraints, given values are ignored; specified
        inputs may be given here too), or an array in model order: the state
        ``[q (N), u_ind (p)]`` (or ``[q (N), u (o)]``).
    p : constants, dict keyed by symbol/name or array in ``model.constants`` order
        (``eom.constants`` order for an EquationsOfMotion).
    r : values of the specified inputs at the operating point (array in
        ``model.specifieds`` order or dict); zeros by default.
    t : time of the operating point (for explicitly time-dependent equations).
    return_point : also return the consistent operating point as a dict with
        keys "q" (N), "u" (o), "qdot" (N), "udot" (o), "multipliers" (m), "r" (s).

    Returns
    -------
    A : ndarray (n + p, n + p), the state matrix for the state order
        ``x = [q_ind (model.independent_coordinates), u_ind (model.independent_speeds)]``.
    B : ndarray (n + p, s), the input matrix for ``model.specifieds`` (s may be 0).

    The derivatives come from a forward-mode differentiation program generated
    from the equations on the first call for a model and reused afterwards.
    """
    model = _as_model(model)
    try:
        t = float(t)
    except (TypeError, ValueError) as exc:
        raise InputError(f"t = {t!r}: the time of the operating point must be a number") from exc
    if not np.isfinite(t):
        raise InputError(f"t = {t}: the time of the operating point must be finite")
    K = _kernels(model)
    N, o, p_, m, M, s, c = K.sizes
    n = N - M
    q, u_ind, r_val = _operating_point(model, op_point, r)
    z = np.zeros(K.nz)
    z[0] = float(t)
    z[K.ic] = model.constants_array(p)
    z[K.ir] = r_val
    sq, su, sr = slice(0, N), slice(N, N + o), slice(N + o, N + o + s)

    # dependent coordinates: Newton on f_h(q) = 0 with q_ind held
    u = np.zeros(o)
    u[:p_] = u_ind
    z[K.iq] = q
    z[K.iu] = u
    vals, ders = K(z)
    if M:
        scale = 1.0 + float(np.max(np.abs(q)))
        for _ in range(60):
            fh = vals[0]
            if not np.all(np.isfinite(fh)) or np.max(np.abs(fh)) <= 1e-15 * scale:
                break
            dq = _solve(ders[0][:, sq][:, n:], fh,
                        "the holonomic constraint Jacobian in the dependent coordinates "
                        f"{', '.join(map(str, model.dependent_coordinates))} (give the operating "
                        "point a guess for them that is close to the solution)")
            q[n:] -= dq
            z[K.iq] = q
            vals, ders = K(z)
            if np.max(np.abs(dq)) <= 1e-16 * scale:
                break
        fh = vals[0]
        if not np.all(np.isfinite(fh)) or np.max(np.abs(fh)) > 1e-9 * scale:
            raise InputError("could not solve the holonomic constraints for the dependent coordinates "
                             f"{', '.join(map(str, model.dependent_coordinates))} at the operating point "
                             f"(residual {np.max(np.abs(fh)):.3g}); give a better guess for them")
    # dependent speeds (B and b do not depend on u)
    if m:
        Bv, bv = vals[1], vals[2]
        u[p_:] = _solve(Bv[:, p_:], -(Bv[:, :p_] @ u_ind + bv),
                        "the velocity constraint matrix in the dependent speeds")
        z[K.iu] = u
        vals, ders = K(z)
    fh, Bv, bv, Kqd, Ku, kr, Md, gd, Ba, ba = vals
    dfh, dBv, dbv, dKqd, dKu, dkr, dMd, dgd, dBa, dba = ders

    # q', u', lam at the operating point
    qd = _solve(Kqd, -(Ku @ u + kr), "the kinematic coefficient matrix K_qd")
    ncol = K.ncol
    augmented = bool(m) and not K.reduced
    if augmented:
        S = np.zeros((o + m, o + m))
        S[:o, :o] = Md
        S[:o, o:] = Bv.T
        S[o:, :o] = Ba
        sol = _solve(S, -np.concatenate([gd, ba]), "the augmented dynamic matrix [[M_d, B^T], [B_a, 0]]")
        ud, lam = sol[:o], sol[o:]
    else:
        S = None
        ud = np.zeros(o)
        ud[:ncol] = _solve(Md, -gd, "the dynamic mass matrix M_d")
        lam = np.zeros(m)
        if m:  # reduced form: u_dep' from the acceleration constraints
            ud[p_:] = _solve(Ba[:, p_:], -(Ba[:, :p_] @ ud[:p_] + ba),
                             "the acceleration constraint matrix in the dependent accelerations")

    # Jacobians of the residuals at the operating point
    def jac(Mat_d, vec, rest_d, sl):
        out = _d(rest_d, sl)
        if Mat_d is not None and vec is not None and Mat_d.size:
            out = out + _d(Mat_d, sl, vec)
        return out

    J_kq = jac(dKqd, qd, dkr, sq) + _d(dKu, sq, u)
    J_kr = jac(dKqd, qd, dkr, sr) + _d(dKu, sr, u)
    if m:
        J_vq = jac(dBv, u, dbv, sq)
        J_vr = jac(dBv, u, dbv, sr)
        J_aq = jac(dBa, ud, dba, sq)
        J_au = jac(dBa, ud, dba, su)
        J_ar = jac(dBa, ud, dba, sr)
    udn = ud[:ncol]
    J_dq = jac(dMd, udn, dgd, sq)
    J_du = jac(dMd, udn, dgd, su)
    J_dr = jac(dMd, udn, dgd, sr)
    if augmented:   # + d(B^T lam)/d(.)
        J_dq = J_dq + np.einsum("jik,j->ik", dBv[..., sq], lam)
        J_dr = J_dr + np.einsum("jik,j->ik", dBv[..., sr], lam)

    # dq = Dq_x dx ; du = Du_x dx + Du_r dr
    Dq_x = np.zeros((N, n + p_))
    Dq_x[:n, :n] = np.eye(n)
    if M:
        Fq = dfh[:, sq]
        Dq_x[n:, :n] = -_solve(Fq[:, n:], Fq[:, :n],
                               "the holonomic constraint Jacobian in the dependent coordinates")
    Du_x = np.zeros((o, n + p_))
    Du_x[:p_, n:] = np.eye(p_)
    Du_r = np.zeros((o, s))
    if m:
        rhs_x = J_vq @ Dq_x
        rhs_x[:, n:] += Bv[:, :p_]
        Du_x[p_:] = -_solve(Bv[:, p_:], rhs_x, "the velocity constraint matrix in the dependent speeds")
        if s:
            Du_r[p_:] = -_solve(Bv[:, p_:], J_vr, "the velocity constraint matrix in the dependent speeds")

    # kinematics: dq'
    qd_x = -_solve(Kqd, J_kq @ Dq_x + Ku @ Du_x, "the kinematic coefficient matrix K_qd")
    qd_r = (-_solve(Kqd, Ku @ Du_r + J_kr, "the kinematic coefficient matrix K_qd")
            if s else np.zeros((N, 0)))

    # dynamics: du_ind'
    dyn = np.hstack([J_dq @ Dq_x + J_du @ Du_x, J_du @ Du_r + J_dr])
    if augmented:
        acc = np.hstack([J_aq @ Dq_x + J_au @ Du_x, J_au @ Du_r + J_ar])
        X = -_solve(S, np.vstack([dyn, acc]), "the augmented dynamic matrix [[M_d, B^T], [B_a, 0]]")
    else:
        X = -_solve(Md, dyn, "the dynamic mass matrix M_d")
    ud_x, ud_r = X[:p_, :n + p_], X[:p_, n + p_:]

    A = np.vstack([qd_x[:n], ud_x]) + 0.0          # (+ 0.0: no negative zeros)
    B = np.vstack([qd_r[:n], ud_r]) + 0.0
    if return_point:
        point = {"q": q.copy(), "u": u.copy(), "qdot": qd, "udot": ud, "multipliers": lam, "r": r_val}
        return A, B, point
    return A, B
