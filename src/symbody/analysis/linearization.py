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
    M_d u' + g_d - B^T lam = 0,  B_a u' + b_a = 0   (unreduced dynamics with multipliers)

      [ M_d  -B^T ] [ du'  ]     [ d(M_d u' + g_d - B^T lam)/dq dq + dg_d/du du + dg_d/dr dr ]
      [ B_a    0  ] [ dlam ] = - [ d(B_a u' + b_a)/dq dq + db_a/du du + db_a/dr dr           ]

(B^T lam are the generalized constraint forces: lam has the sign of SymPy's
``LagrangesMethod.rhs()`` and of :meth:`NumericModel.accelerations`.)

(for a reduced, hand-derived dynamic block M_d u_ind' + g_d = 0 the multiplier
rows are absent).  The operating point need not be an equilibrium: the result is
the Jacobian of the vector field at that state; q', u' and lam there are solved
numerically first.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sm

from ..compilation import NumericModel
from ..compilation import compile as compile_model
from ..compilation.linear_algebra import solve
from ..compilation.named_values import (
    InputValues,
    ParameterValues,
    StateValues,
    finite_number,
    symbol_index,
    values_by_symbol,
)
from ..compilation.numeric_model import solve_dependent, solve_dynamics
from ..errors import InputError, SingularConstraintError

__all__ = ["linearize"]

#: EquationsOfMotion -> NumericModel compiled for linearize(eom) (kernels are built lazily,
#: so only the small constraint kernels are ever generated on this path)
_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _as_model(model: Any) -> tuple[NumericModel, Mapping | None]:
    """(compiled model, default constants): a NumericModel as it is; an EquationsOfMotion or
    a zoo Model (its default constants) compiled once and cached."""
    from ..formulation import EquationsOfMotion

    if isinstance(model, NumericModel):
        return model, None
    defaults = None
    eom = model
    if not isinstance(model, EquationsOfMotion):
        eom = getattr(model, "eom", None)
        defaults = getattr(model, "constants", None)
        if not isinstance(eom, EquationsOfMotion) or not isinstance(defaults, Mapping):
            raise InputError(f"linearize needs a NumericModel (symbody.compile), an EquationsOfMotion "
                             f"or a zoo Model; got {type(model).__name__}")
    try:
        compiled = _COMPILED.get(eom)
    except TypeError:  # not weak-referenceable
        compiled = None
    if compiled is None:
        compiled = compile_model(eom)
        try:
            _COMPILED[eom] = compiled
        except TypeError:
            pass
    return compiled, defaults


# --------------------------------------------------------------------------- inputs
def _operating_point(model: NumericModel, op_point: Any, r: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q (N), u_ind (p), r (s)) from a dict keyed by symbol/name or an array in model order.

    In a dict, dependent coordinates are optional guesses (0 when absent), dependent speeds
    and derivatives are ignored, and specified inputs may be given too.
    """
    N, p, o = model.N, model.p, model.o
    s = len(model.specifieds)
    r_val = np.zeros(s)
    if isinstance(op_point, Mapping):
        inputs = symbol_index(tuple(model.specifieds))
        dep = symbol_index(tuple(model.dependent_speeds))
        given_r = {k: v for k, v in op_point.items() if k in inputs}
        states = {k: v for k, v in op_point.items() if k not in inputs}
        x = values_by_symbol(states, model.states, "operating-point entry", optional=range(model.n, N),
                             ignore=lambda key: key in dep or isinstance(key, sm.Derivative),
                             wording={"plural": "states",
                                      "missing": "the operating point has no value for {symbol}"})
        if given_r:                                     # (no guess for q_dep: 0)
            r_val = values_by_symbol(given_r, model.specifieds, "specified input", optional=range(s))
    else:
        x = op_point
        if np.ndim(op_point) == 1 and len(op_point) == N + o:
            x = np.asarray(op_point)[:N + p]          # all speeds given: the dependent ones follow
        x = values_by_symbol(x, model.states, "state", wording={
            "length": "op_point has {n} values but the state has {c}: {names}"})
    if r is not None:
        if isinstance(r, Mapping):
            r_val = values_by_symbol(r, model.specifieds, "specified input", optional=range(s))
        else:
            r_val = values_by_symbol(r, model.specifieds, "specified input", wording={
                "length": "r has {n} values but the model has {c} specified inputs"})
    return x[:N].copy(), x[N:].copy(), r_val


def _solve(A: np.ndarray, B: np.ndarray, what: str) -> np.ndarray:
    x, info = solve(np.array(A, dtype=float), np.asarray(B, dtype=float))
    if info != 0:
        raise SingularConstraintError(f"{what} is singular at the operating point")
    return x


# --------------------------------------------------------------------------- linearize
def _d(blockder: np.ndarray, sl: slice, vec: np.ndarray | None = None) -> np.ndarray:
    """Derivative of ``Mat @ vec`` (or of a vector block) along the directions ``sl``."""
    d = blockder[..., sl]
    if vec is None:
        return d
    return np.einsum("ijk,j->ik", d, vec)


def linearize(model: Any, op_point: StateValues, p: ParameterValues | None = None, *,
              r: InputValues = None, t: float = 0.0, return_point: bool = False) -> tuple:
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
        keys "q" (N), "u" (o), "qdot" (N), "udot" (o), "multipliers" (m), "r" (s);
        the multipliers λ in ``M_d u' + g_d = B^T λ`` (the sign of SymPy's
        ``LagrangesMethod.rhs()`` and of ``model.accelerations``; NaN for a reduced,
        hand-derived dynamic block, which has none).

    Returns
    -------
    A : ndarray (n + p, n + p), the state matrix for the state order
        ``x = [q_ind (model.independent_coordinates), u_ind (model.independent_speeds)]``.
    B : ndarray (n + p, s), the input matrix for ``model.specifieds`` (s may be 0).

    Models with extra first-order states x_e (e of them, e.g. muscle activations): the
    state is ``[q_ind, u_ind, x_e]`` (A is (n + p + e) square, B (n + p + e, s)), the
    operating point gives the extra states too, and A, B are central differences of the
    compiled right-hand side with the dependent coordinates re-solved at every
    perturbation (relative error about 1e-8 instead of round-off).

    The derivatives come from a forward-mode differentiation program generated
    from the equations on the first call for a model and reused afterwards.
    """
    model, defaults = _as_model(model)
    t = finite_number(t, "t, the time of the operating point,")
    if p is None:
        if defaults is None and model.constants:
            raise InputError("give the constants p (a dict keyed by symbol or name, or an array "
                             f"in the order {', '.join(map(str, model.constants))})")
        p = defaults
    P = model.constants_array(p)
    if getattr(model, "e", 0):
        return _linearize_with_extra_states(model, op_point, P, r, t, return_point)
    q, u_ind, r_val = _operating_point(model, op_point, r)
    q = _consistent_coordinates(model, q, P, t)
    u = model.full_speeds(q, u_ind, P, t, r_val) if model.m else u_ind.copy()
    blocks = model.block_derivatives(q, u, P, t, r_val)
    vals = blocks.values
    Kqd, Ku, kr = (vals[k] for k in ("kinematic_qdot", "kinematic_u", "kinematic_rest"))
    # q', u', lam at the operating point (the engine's solve of the dynamic block)
    qd = _solve(Kqd, -(Ku @ u + kr), "the kinematic coefficient matrix K_qd")
    ud, lam, S = _accelerations(model, vals)
    A, B = _state_space(model, blocks, u, qd, ud, lam, S)
    if return_point:
        point = {"q": q.copy(), "u": u.copy(), "qdot": qd, "udot": ud, "multipliers": lam, "r": r_val}
        return A, B, point
    return A, B


def _consistent_coordinates(model: Any, q: np.ndarray, P: np.ndarray, t: float) -> np.ndarray:
    """q with the dependent coordinates solved by Newton's method on f_h = 0 (q_ind held)."""
    if not model.M:
        return q
    dep = ", ".join(map(str, model.dependent_coordinates))
    try:
        q, _, _ = model.project_coordinates(q, P, t, tol=1e-14, max_iter=60)
    except SingularConstraintError as exc:
        raise SingularConstraintError(
            f"{exc}: the holonomic constraint Jacobian in the dependent coordinates {dep} is "
            "singular at the operating point (give the operating point a guess for them that is "
            "close to the solution)") from None
    fh = model.holonomic_residual(q, P, t)
    scale = 1.0 + float(np.max(np.abs(q)))
    if not np.all(np.isfinite(fh)) or np.max(np.abs(fh)) > 1e-9 * scale:
        raise InputError("could not solve the holonomic constraints for the dependent coordinates "
                         f"{dep} at the operating point (residual {np.max(np.abs(fh)):.3g}); give a "
                         "better guess for them")
    return q


def _accelerations(model: Any, vals: Mapping) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(u' (o,), λ (m,; NaN for a reduced block), S the augmented matrix [[M_d, -B_a^T], [B_a, 0]]
    or None) at the operating point, from the values of the blocks."""
    o, m, p_ = model.o, model.m, model.p
    Md, gd, Ba, ba = (vals[k] for k in ("dynamic_mass", "dynamic_rest", "acceleration_matrix",
                                        "acceleration_rest"))
    if model.has_multipliers:
        sol, info = solve_dynamics(Md, -gd, Ba, -ba)
        if info != 0:
            raise SingularConstraintError("the augmented dynamic matrix [[M_d, -B_a^T], [B_a, 0]] is "
                                          "singular at the operating point")
        S = np.zeros((o + m, o + m))
        S[:o, :o] = Md
        S[:o, o:] = -Ba.T                 # M_d u' + g_d - B_a^T lam = 0 (SymPy's sign of lam)
        S[o:, :o] = Ba
        return sol[:o], sol[o:], S
    ncol = Md.shape[1] if Md.ndim == 2 else 0
    ud = np.zeros(o)
    sol, info = solve_dynamics(Md, -gd)
    if info != 0:
        raise SingularConstraintError("the dynamic mass matrix M_d is singular at the operating point")
    ud[:ncol] = sol
    lam = np.full(m, np.nan)      # a reduced block has no multipliers (as model.accelerations)
    if m:  # reduced form: u_dep' from the acceleration constraints
        ud[p_:], info = solve_dependent(Ba, ba, ud[:p_])
        if info != 0:
            raise SingularConstraintError("the acceleration constraint matrix in the dependent "
                                          "accelerations is singular at the operating point")
    return ud, lam, None


def _state_space(model: Any, blocks: Any, u: np.ndarray, qd: np.ndarray, ud: np.ndarray,
                 lam: np.ndarray, S: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A, B from the derivatives of the blocks at the consistent operating point (q, u, q', u', λ)."""
    N, o, p_, m, M = model.N, model.o, model.p, model.m, model.M
    s = len(model.specifieds)
    n = N - M
    sq, su, sr = slice(0, N), slice(N, N + o), slice(N + o, N + o + s)
    vals, ders = blocks.values, blocks.derivatives
    Bv, Kqd, Ku, Md = (vals[k] for k in ("velocity_matrix", "kinematic_qdot", "kinematic_u",
                                         "dynamic_mass"))
    dfh, dBv, dbv, dKqd, dKu, dkr, dMd, dgd, dBa, dba = (ders[k] for k in (
        "holonomic", "velocity_matrix", "velocity_rest", "kinematic_qdot", "kinematic_u",
        "kinematic_rest", "dynamic_mass", "dynamic_rest", "acceleration_matrix", "acceleration_rest"))
    ncol = Md.shape[1] if Md.ndim == 2 else 0
    augmented = S is not None

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
    if augmented:   # - d(B_a^T lam)/d(.): the residual is M_d u' + g_d - B_a^T lam
        J_dq = J_dq - np.einsum("jik,j->ik", dBa[..., sq], lam)
        J_dr = J_dr - np.einsum("jik,j->ik", dBa[..., sr], lam)

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
        X = -_solve(S, np.vstack([dyn, acc]), "the augmented dynamic matrix [[M_d, -B^T], [B_a, 0]]")
    else:
        X = -_solve(Md, dyn, "the dynamic mass matrix M_d")
    ud_x, ud_r = X[:p_, :n + p_], X[:p_, n + p_:]

    A = np.vstack([qd_x[:n], ud_x]) + 0.0          # (+ 0.0: no negative zeros)
    B = np.vstack([qd_r[:n], ud_r]) + 0.0
    return A, B


def _linearize_with_extra_states(model, op_point, P, r, t: float, return_point: bool):
    """A, B in [q_ind, u_ind, x_e] by central differences of ``model.rhs`` (see linearize)."""
    N, n, p_, e, M = model.N, model.n, model.p, model.e, model.M
    s = len(model.specifieds)
    mech = _MechanicalView(model)
    if isinstance(op_point, Mapping):
        names = {x: x for x in model.extra_states}
        names.update({str(x): x for x in model.extra_states})
        names.update({x.func.__name__: x for x in model.extra_states})
        extra, rest = {}, {}
        for key, val in op_point.items():
            k = key.strip() if isinstance(key, str) else key
            if k in names:
                extra[names[k]] = val
            else:
                rest[key] = val
        missing = [str(x) for x in model.extra_states if x not in extra]
        if missing:
            raise InputError(f"the operating point has no value for the extra state {missing[0]}")
        xe = np.array([float(extra[x]) for x in model.extra_states])
        q, u_ind, r_val = _operating_point(mech, rest, r)
    else:
        x = np.asarray(op_point, dtype=float).ravel()
        if x.size != N + p_ + e:
            raise InputError(f"op_point has {x.size} values; the state has {N + p_ + e}: "
                             f"{', '.join(map(str, model.states))}")
        q, u_ind, r_val = _operating_point(mech, x[:N + p_], r)
        xe = x[N + p_:]
    if not np.all(np.isfinite(xe)):
        raise InputError("the operating point's extra states must be finite")

    def project(q_try):
        if not M:
            return q_try
        q_new, ok, norm = model.project_coordinates(q_try, P, t, tol=1e-14, max_iter=60)
        if not ok and norm > 1e-9 * (1.0 + float(np.max(np.abs(q_try)))):
            raise InputError("could not solve the holonomic constraints for the dependent "
                             f"coordinates at the operating point (residual {norm:.3g})")
        return q_new

    q = project(q)
    z0 = np.concatenate([q[:n], u_ind, xe])

    def f(zv, rv):
        qq = q.copy()
        qq[:n] = zv[:n]
        qq = project(qq)
        xdot = model.rhs(t, np.concatenate([qq, zv[n:]]), P, rv)
        return np.concatenate([xdot[:n], xdot[N:]])

    def central(fun, v0):
        cols = []
        for j in range(v0.size):
            # truncation ~ h^2 times the third derivative, rounding ~ 1e-16 / h: about 1e-9
            h = 1e-6 * max(1.0, abs(v0[j]))
            vp, vm = v0.copy(), v0.copy()
            vp[j] += h
            vm[j] -= h
            cols.append((fun(vp) - fun(vm)) / (2 * h))
        return np.column_stack(cols)

    A = central(lambda zv: f(zv, r_val), z0)
    B = central(lambda rv: f(z0, rv), r_val) if s else np.empty((n + p_ + e, 0))
    if return_point:
        u = model.full_speeds(q, u_ind, P, t, r_val) if model.m else u_ind.copy()
        return A, B, {"q": q, "u": u, "extra": xe, "r": r_val,
                      "xdot": model.rhs(t, np.concatenate([q, u_ind, xe]), P, r_val)}
    return A, B


class _MechanicalView:
    """The model seen without its extra states (to parse the q, u part of an operating point)."""

    def __init__(self, model):
        self._model = model
        self.states = tuple(s for s in model.states if s not in set(model.extra_states))

    def __getattr__(self, name):
        return getattr(self._model, name)
