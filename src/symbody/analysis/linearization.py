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
numerically first.  The chain rule itself is ``symbody.analysis.chain_rule`` (shared with
the ODE Jacobian of the implicit integrators), taken here along ξ = [q_ind, u_ind, r].
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sm

from ..compilation import NumericModel
from ..compilation import compile as compile_model
from ..compilation.named_values import (
    InputValues,
    ParameterValues,
    StateValues,
    finite_number,
    symbol_index,
    values_by_symbol,
)
from ..errors import InputError, SingularConstraintError
from ..formatting import symbol_name
from .body_check import check_body_inertias
from .chain_rule import (
    PointRates,
    central_differences,
    point_rates,
    rate_derivatives,
    solve_or_raise,
)
from .inputs import derived_inputs

__all__ = ["linearize", "NotAnEquilibriumWarning"]

#: |x'_i| above this (times max(1, |x|)) is motion: the operating point is not an equilibrium
#: (the command line's test)
EQUILIBRIUM_TOL = 1e-8


class NotAnEquilibriumWarning(UserWarning):
    """:func:`linearize` about a state that is neither an equilibrium nor a steady motion:
    A and B are the Jacobians of the vector field there, but their eigenvalues say nothing
    about stability.  ``check_equilibrium=False`` when that is meant (along a trajectory)."""

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


# --------------------------------------------------------------------------- linearize
def linearize(model: Any, op_point: StateValues, p: ParameterValues | None = None, *,
              r: InputValues = None, t: float = 0.0, return_point: bool = False,
              check_equilibrium: bool = True) -> tuple:
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
    check_equilibrium : warn (:class:`NotAnEquilibriumWarning`, naming the states that move)
        when the operating point is not an equilibrium or a steady motion: some independent
        state's rate x'_i is not zero (``|x'_i| > 1e-8 max(1, |x|)``) although the dynamics
        depend on that state (column i of A not zero; a coordinate they do not depend on,
        as a vehicle's position, may move).  False along a trajectory.
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
    derived = derived_inputs(model)
    if derived is not None:
        names = ", ".join(str(model.specifieds[i]) for i in derived.indices[:3])
        raise InputError(f"the model computes the inputs {names}, ... from the state at run "
                         "time (eom.derived_inputs, e.g. the stations of a path over an "
                         "ellipsoid) and its equations hold no derivative of them: "
                         "linearizing it is not supported")
    t = finite_number(t, "t, the time of the operating point,")
    if p is None:
        if defaults is None and model.constants:
            raise InputError("give the constants p (a dict keyed by symbol or name, or an array "
                             f"in the order {', '.join(map(str, model.constants))})")
        p = defaults
    P = model.constants_array(p)
    check_body_inertias(model, P)
    if getattr(model, "e", 0):
        return _linearize_with_extra_states(model, op_point, P, r, t, return_point,
                                            check_equilibrium)
    q, u_ind, r_val = _operating_point(model, op_point, r)
    q = _consistent_coordinates(model, q, P, t)
    u = model.full_speeds(q, u_ind, P, t, r_val) if model.m else u_ind.copy()
    blocks = model.block_derivatives(q, u, P, t, r_val)
    # q', u', lam at the operating point (the engine's solve of the dynamic block)
    rates = point_rates(model, blocks.values, u)
    A, B = _state_space(model, blocks, rates)
    if check_equilibrium:
        n = model.n
        _warn_unless_equilibrium(model, A, np.concatenate([q[:n], u_ind]),
                                 np.concatenate([rates.qdot[:n], rates.udot[:model.p]]),
                                 tuple(model.independent_coordinates) + tuple(model.independent_speeds))
    if return_point:
        point = {"q": q.copy(), "u": u.copy(), "qdot": rates.qdot, "udot": rates.udot,
                 "multipliers": rates.multipliers, "r": r_val}
        return A, B, point
    return A, B


def _warn_unless_equilibrium(model: Any, A: np.ndarray, x: np.ndarray, xdot: np.ndarray,
                             states: tuple, stacklevel: int = 3) -> None:
    """NotAnEquilibriumWarning naming the states whose rate is not zero although A depends
    on them (see ``check_equilibrium`` of :func:`linearize`)."""
    import warnings

    scale = max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    column_scale = max(1.0, float(np.max(np.abs(A))) if A.size else 1.0)
    moving = [f"{symbol_name(s)}' = {rate:.3g}" for j, (s, rate) in enumerate(zip(states, xdot))
              if abs(rate) > EQUILIBRIUM_TOL * scale
              and np.any(np.abs(A[:, j]) > 1e-12 * column_scale)]
    if moving:
        warnings.warn(f"linearize: the operating point is not an equilibrium or a steady motion "
                      f"({', '.join(moving)}): A and B are the Jacobians of the vector field "
                      "there, and their eigenvalues say nothing about stability (pass "
                      "check_equilibrium=False when this is meant)", NotAnEquilibriumWarning,
                      stacklevel=stacklevel)


def _names(symbols: Any) -> str:
    return ", ".join(symbol_name(s) for s in symbols)


def _singular_point_error(model: Any, q: np.ndarray, P: np.ndarray, t: float) -> SingularConstraintError:
    """Why the dependent coordinates cannot be solved for at q, and what to do: a guess
    that is not close; a point of the mechanism where ∂f_h/∂q loses rank; or a dead centre
    of the independent coordinates, with the dependent set that is regular there."""
    dep, ind = model.dependent_coordinates, model.independent_coordinates
    where = f"at q = {np.array2string(np.asarray(q), precision=4)}"
    fh = model.holonomic_residual(q, P, t)
    if not (np.all(np.isfinite(fh)) and np.max(np.abs(fh)) <= 1e-9 * (1.0 + np.max(np.abs(q)))):
        return SingularConstraintError(
            f"the holonomic constraint Jacobian in the dependent coordinates {_names(dep)} is "
            f"singular {where} (give the operating point a guess for them that is close to the "
            "solution)")
    F = model.holonomic_jacobian(q, P, t)
    sv = np.linalg.svd(F, compute_uv=False)
    rank = int(np.sum(sv > 1e-10 * max(sv[0], 1e-300))) if sv.size else 0
    if rank < model.M:
        return SingularConstraintError(
            f"the operating point {where} satisfies the holonomic constraints, but their Jacobian "
            f"∂f_h/∂q has rank {rank} < {model.M} there (a change point of the mechanism): no "
            "choice of independent coordinates is regular there; linearize at a point nearby")
    dep_new = model.partition_names(model.choose_partition(q, P, t))[0]
    ind_new = [x for x in model.states[:model.N] if x not in set(dep_new)]
    plural = "s" if len(ind) > 1 else ""
    return SingularConstraintError(
        f"the operating point {where} satisfies the holonomic constraints, but the independent "
        f"coordinate{plural} {_names(ind)} cannot be varied there: ∂f_h/∂q in the dependent "
        f"coordinates {_names(dep)} is singular (a dead centre of {_names(ind)}, not a bad "
        f"guess). Choose {_names(ind_new)} as independent instead ({_names(dep_new)} dependent): "
        f"form the equations with q_ind = [{_names(ind_new)}]")


def _consistent_coordinates(model: Any, q: np.ndarray, P: np.ndarray, t: float) -> np.ndarray:
    """q with the dependent coordinates solved by Newton's method on f_h = 0 (q_ind held);
    SingularConstraintError where ∂f_h/∂q_dep is singular there (:func:`_singular_point_error`)."""
    if not model.M:
        return q
    dep = ", ".join(map(str, model.dependent_coordinates))
    scale = 1.0 + float(np.max(np.abs(q)))          # of the guess (Newton may run away)
    fh = model.holonomic_residual(q, P, t)
    if np.all(np.isfinite(fh)) and np.max(np.abs(fh)) <= 1e-12 * scale:
        _check_dependent_block(model, q, P, t)      # an exact guess at a dead centre
    try:
        q, _, _ = model.project_coordinates(q, P, t, tol=1e-14, max_iter=60)
    except SingularConstraintError:
        raise _singular_point_error(model, q, P, t) from None
    fh = model.holonomic_residual(q, P, t)
    if not np.all(np.isfinite(fh)) or np.max(np.abs(fh)) > 1e-9 * scale:
        raise InputError("could not solve the holonomic constraints for the dependent coordinates "
                         f"{dep} at the operating point (residual {np.max(np.abs(fh)):.3g}); give a "
                         "better guess for them")
    _check_dependent_block(model, q, P, t)
    return q


def _check_dependent_block(model: Any, q: np.ndarray, P: np.ndarray, t: float) -> None:
    """SingularConstraintError when ∂f_h/∂q_dep is singular at q (relative to ∂f_h/∂q)."""
    F = model.holonomic_jacobian(q, P, t)
    sv_dep = np.linalg.svd(F[:, model.n:], compute_uv=False)
    sv_all = np.linalg.svd(F, compute_uv=False)
    if sv_dep.size and sv_dep[-1] <= 1e-10 * max(sv_all[0], 1e-300):
        raise _singular_point_error(model, q, P, t)


def _state_space(model: Any, blocks: Any, rates: PointRates) -> tuple[np.ndarray, np.ndarray]:
    """A (n + p, n + p), B (n + p, s) at the consistent operating point: the chain rule
    (:func:`.chain_rule.rate_derivatives`) along ξ = [q_ind, u_ind, r] with

        dq/dξ = [C_0 0 0],  C_0 = [I_n; -F_dep⁻¹ F_ind] (F = ∂f_h/∂q, N x n),
        du_ind/dξ = [0 I_p 0],  dr/dξ = [0 0 I_s],

    and the rows of q_ind' and u_ind'.
    """
    N, p_, M = model.N, model.p, model.M
    s = len(model.specifieds)
    n = N - M
    C0 = np.zeros((N, n))
    C0[:n] = np.eye(n)
    if M:
        Fq = blocks.derivatives["holonomic"][:, :N]
        C0[n:] = -solve_or_raise(Fq[:, n:], Fq[:, :n],
                                 "the holonomic constraint Jacobian in the dependent coordinates")
    k = n + p_ + s
    dq = np.zeros((N, k))
    dq[:, :n] = C0
    du_ind = np.zeros((p_, k))
    du_ind[:, n:n + p_] = np.eye(p_)
    dr = np.zeros((s, k))
    dr[:, n + p_:] = np.eye(s)
    qd_xi, ud_xi = rate_derivatives(model, blocks, rates, dq, du_ind, dr)
    A = np.vstack([qd_xi[:n, :n + p_], ud_xi[:, :n + p_]]) + 0.0   # (+ 0.0: no negative zeros)
    B = np.vstack([qd_xi[:n, n + p_:], ud_xi[:, n + p_:]]) + 0.0
    return A, B


def _linearize_with_extra_states(model, op_point, P, r, t: float, return_point: bool,
                                 check_equilibrium: bool = True):
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

    # h = 1e-6 max(1, |x_j|): truncation ~ h^2 times the third derivative, rounding ~ 1e-16 / h,
    # about 1e-9
    A = central_differences(lambda zv: f(zv, r_val), z0, 1e-6)
    B = central_differences(lambda rv: f(z0, rv), r_val, 1e-6) if s else np.empty((n + p_ + e, 0))
    if check_equilibrium:
        states = (tuple(model.independent_coordinates) + tuple(model.independent_speeds)
                  + tuple(model.extra_states))
        _warn_unless_equilibrium(model, A, z0, f(z0, r_val), states, stacklevel=4)
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
