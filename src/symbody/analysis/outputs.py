"""Quantities along a trajectory: user expressions (compiled), specified inputs, constraint
and auxiliary forces, and the state derivative the dense output uses.

``simulate(..., outputs=...)`` takes a dict ``{name: SymPy expression or Matrix}`` -- expressions in
t, the coordinates q, all speeds u (dependent ones included), their derivatives u', the
constants and the specified inputs (q' is replaced through the kinematic equations), compiled once with ``make_function`` and evaluated on
all samples at once -- and/or the names of built-in quantities, as a list mixing both::

    outputs={"E": kinetic + potential}
    outputs=["specifieds", "constraint_forces", "auxiliary_forces", {"E": energy}]

A value may also be a compiled function whose argument groups are named after the samples'
quantities (``argument_names`` among "t", "q", "u", "u_dot", "p", "r", each group the model's
own symbols), such as a robot's ``robot.joint_wrenches`` or ``robot.frame_function(...)``:
evaluated on all samples at once, ``trajectory.outputs[name]`` of shape (k, *its shape).

Built-ins (``trajectory.outputs[...]``):

``"specifieds"``         each specified input by name, (k,);
``"constraint_forces"``  the generalized constraint forces B^T λ, (k, o) (with the
                         multipliers λ, ``trajectory.multipliers``);
``"auxiliary_forces"``   each noncontributing force (Kane's auxiliary speeds) by name, (k,).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import sympy as sm

from ..compat.sympy import TIME
from ..compilation import NumericFunction, NumericModel, make_function
from ..errors import InputError, SymbodyError
from ..formatting import symbol_name as _short
from .trajectory import Trajectory

__all__ = ["BUILTIN_OUTPUTS", "parse_outputs", "attach_outputs"]

_t = TIME

BUILTIN_OUTPUTS = ("specifieds", "constraint_forces", "auxiliary_forces")



#: numbers per batch of samples evaluated at once for the trajectory's x' (about 16 MB)
BATCH_NUMBERS = 2_000_000

def _kinematics(model: NumericModel) -> dict:
    """q' -> its expression in q, u (the model's kinematic equations), when the model keeps
    its equations; else {}."""
    eom = getattr(model, "eom", None)
    return dict(eom.kindiffdict) if eom is not None and hasattr(eom, "kindiffdict") else {}


def parse_outputs(model: NumericModel, outputs: Mapping | Sequence | None) -> tuple[dict, list[str]]:
    """(expressions by name, built-in names) from ``outputs``; checks the symbols used."""
    if outputs is None:
        return {}, []
    items = [outputs] if isinstance(outputs, (Mapping, str)) else list(outputs)
    exprs: dict[str, sm.Expr] = {}
    builtins: list[str] = []
    kinematics = None                    # (formed once, when an output holds a derivative)
    for item in items:
        if isinstance(item, str):
            if item not in BUILTIN_OUTPUTS:
                raise InputError(f"unknown output {item!r}; built-in outputs are {', '.join(BUILTIN_OUTPUTS)} "
                                 "(or give {name: expression})")
            if item == "constraint_forces" and not model.m:
                raise InputError("outputs: 'constraint_forces' asked, but the model has no constraints")
            if item == "auxiliary_forces" and not model.noncontributing:
                raise InputError("outputs: 'auxiliary_forces' asked, but the model has no noncontributing "
                                 "forces (form the equations with u_auxiliary)")
            builtins.append(item)
        elif isinstance(item, Mapping):
            for name, e in item.items():
                if not isinstance(name, str) or not name:
                    raise InputError(f"output names must be non-empty strings, got {name!r}")
                if isinstance(e, NumericFunction):
                    _check_function(model, name, e)
                    exprs[name] = e
                    continue
                try:
                    # q' through the kinematic equations (a contact's gap_rate holds q')
                    e = sm.sympify(e)
                    if e.has(sm.Derivative):
                        kinematics = _kinematics(model) if kinematics is None else kinematics
                        e = e.xreplace(kinematics)
                    exprs[name] = e
                except (sm.SympifyError, TypeError) as exc:
                    raise InputError(f"output {name!r} is not a SymPy expression: {e!r}") from exc
        else:
            raise InputError(f"outputs must be a dict of expressions and/or built-in names, got {item!r}")
    allowed = {_t, *model.coordinates, *model.speeds, *model.constants, *model.specifieds,
               *(u.diff(_t) for u in model.speeds)}
    for name, e in exprs.items():
        if isinstance(e, NumericFunction):
            continue
        atoms = _free_atoms(e)
        bad = []
        for a in atoms:
            if a in allowed:
                continue
            if isinstance(a, sm.core.function.AppliedUndef) and any(
                    isinstance(d, sm.Derivative) and d.expr == a and d in allowed for d in atoms):
                continue
            bad.append(a)
        if bad:
            raise InputError(f"output {name!r} ({e}) depends on {sorted(map(str, bad))[0]}, which is not "
                             "t, a coordinate, a speed, a speed's derivative, a constant or a specified input")
    return exprs, builtins


def _free_atoms(e: sm.Basic) -> set:
    """e's free symbols, applied undefined functions and derivatives, each shared
    subexpression visited once (a contact force's long gap repeats its subtrees)."""
    out: set = set()
    seen: set = set()
    stack = [e]
    kinds = (sm.Symbol, sm.core.function.AppliedUndef, sm.Derivative)
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        if getattr(x, "bound_symbols", None):        # (integrals, lambdas: SymPy's own walk)
            out |= x.free_symbols | set(x.atoms(sm.core.function.AppliedUndef)) | \
                set(x.atoms(sm.Derivative))
            continue
        if isinstance(x, kinds):
            out.add(x)
        stack.extend(x.args)
    return out


#: the samples' quantities a compiled function may take, by argument name
SAMPLE_ARGUMENTS = ("t", "q", "u", "u_dot", "p", "r")


def _sample_symbols(model: NumericModel) -> dict:
    return {"t": [_t], "q": list(model.coordinates), "u": list(model.speeds),
            "u_dot": [u.diff(_t) for u in model.speeds], "p": list(model.constants),
            "r": list(model.specifieds)}


def _check_function(model: NumericModel, name: str, f: NumericFunction) -> None:
    """A compiled function as an output: its groups must be the model's quantities."""
    names = getattr(f, "argument_names", None)
    if not names or any(n not in SAMPLE_ARGUMENTS for n in names):
        raise InputError(f"output {name!r} is a compiled function whose arguments are not named "
                         f"after the samples' quantities ({', '.join(SAMPLE_ARGUMENTS)}); got "
                         f"{names}")
    if f.multi:
        raise InputError(f"output {name!r}: a function of several results; give one per output")
    symbols = _sample_symbols(model)
    for n, group in zip(names, f.groups):
        if list(group) != symbols[n]:
            raise InputError(f"output {name!r}: the function's {n!r} is not this model's "
                             f"({[str(s) for s in group][:4]}... vs "
                             f"{[str(s) for s in symbols[n]][:4]}...): a function of another model")


def _function_values(f: NumericFunction, samples: dict, k: int) -> np.ndarray:
    """A compiled function on all samples: (k, *shape)."""
    shape = tuple(f.shape)
    if not k:
        return np.empty((0, *shape))
    args = [samples[n] if n != "t" else samples[n].reshape(k, 1) for n in f.argument_names]
    out = np.full((k, *shape), np.nan)
    ok = np.all([np.isfinite(a).all(axis=1) for a in args], axis=0)
    if ok.any():
        out[ok] = np.asarray(NumericFunction.__call__(f, *(a[ok] for a in args))).reshape(-1, *shape)
    return out


def _accelerations(model: NumericModel, T, X, U, P, R) -> tuple[np.ndarray, np.ndarray]:
    k = len(T)
    UD = np.full((k, model.o), np.nan)
    L = np.full((k, model.m), np.nan)
    for i in range(k):
        try:
            ud, lam = model.accelerations(X[i, :model.N], U[i], P, T[i], None if R is None else R[i])
        except SymbodyError:
            continue
        UD[i], L[i] = ud, lam
    return UD, L


def _state_derivatives(model: NumericModel, T: np.ndarray, X: np.ndarray, P: np.ndarray,
                       R: np.ndarray | None) -> np.ndarray:
    """x' (k, N + p) at the samples: q' from the kinematics, u_ind' from the dynamics; NaN
    at a sample where the model cannot be evaluated."""
    k = len(T)
    xdot = np.full(X.shape, np.nan)
    # batches of samples (batch kernels, batched solves), sized so that the kernels' output
    # (which holds each sample's mass matrix) stays near 16 MB
    size = max(1, BATCH_NUMBERS // max(1, model.rhs_batch_outputs))
    for a in range(0, k, size):
        b = min(k, a + size)
        try:
            xdot[a:b] = model.rhs_many(T[a:b], X[a:b], P, None if R is None else R[a:b])
        except Exception:          # a singular or failed sample: one at a time, NaN there
            for i in range(a, b):
                try:
                    xdot[i] = model.rhs(T[i], X[i], P, None if R is None else R[i])
                except Exception:
                    pass
    return xdot


def attach_outputs(traj: Trajectory, model: NumericModel, P: np.ndarray,
                   r_fun: Callable[[float, np.ndarray], np.ndarray] | None,
                   outputs: Mapping | Sequence | None) -> None:
    """Evaluate ``outputs`` on the samples of ``traj`` into ``traj.outputs`` (in place), and
    set up the state derivative at the samples for the dense output ``traj(t)`` (evaluated
    on first access of ``traj.xdot``)."""
    exprs, builtins = parse_outputs(model, outputs)
    T, X, U = traj.t, traj.x, traj.u
    k = len(T)
    R = None
    if model.specifieds:
        R = np.full((k, len(model.specifieds)), np.nan)
        many = getattr(r_fun, "many", None)      # inputs that evaluate many states at once
        if many is not None and k:
            R[:] = np.asarray(many(T, X), dtype=float).reshape(k, -1)
        for i in range(k if many is None else 0):
            try:
                R[i] = np.asarray(r_fun(T[i], X[i]), dtype=float).ravel()
            except Exception:      # the input failed there (the run reports it): NaN
                pass
    # x' at the samples (for sol(t)), evaluated when first asked for
    traj.xdot = functools.partial(_state_derivatives, model, T, X, np.array(P, dtype=float), R)
    out: dict[str, np.ndarray] = {}
    udot = None
    functions = {n: e for n, e in exprs.items() if isinstance(e, NumericFunction)}
    exprs = {n: e for n, e in exprs.items() if n not in functions}
    # (the speeds' rates formed once, not once per output: SymPy's diff is slow)
    rates = tuple(u.diff(_t) for u in model.speeds) if exprs else ()
    needs_udot = "auxiliary_forces" in builtins or any(
        e.has(*rates) for e in exprs.values()) or any(
        "u_dot" in f.argument_names for f in functions.values())
    if needs_udot and k:
        udot, _ = _accelerations(model, T, X, U, P, R)
    if "specifieds" in builtins:
        for j, r in enumerate(model.specifieds):
            out[_short(r)] = R[:, j].copy() if k else np.empty(0)
    if "constraint_forces" in builtins:
        lam = traj.multipliers
        if lam is None:
            raise InputError("outputs: 'constraint_forces' needs the multipliers of the augmented system; "
                             "these equations are in reduced (hand-derived) form")
        F = np.full((k, model.o), np.nan)
        for i in range(k):
            try:
                B = model.velocity_constraint_matrix(X[i, :model.N], P, T[i], None if R is None else R[i])
            except SymbodyError:
                continue
            F[i] = B.T @ lam[i]
        out["constraint_forces"] = F
    if "auxiliary_forces" in builtins:
        A = np.full((k, len(model.noncontributing)), np.nan)
        for i in range(k):
            if not np.isfinite(udot[i]).all():
                continue
            A[i] = model.auxiliary_forces(X[i, :model.N], U[i], udot[i], P, T[i],
                                          None if R is None else R[i])
        for j, f in enumerate(model.noncontributing):
            out[_short(f)] = A[:, j]
    if exprs:
        names = list(exprs)
        shapes = [tuple(exprs[n].shape) if isinstance(exprs[n], sm.MatrixBase) else ()
                  for n in names]
        flat = [e for n in names for e in (list(exprs[n]) if isinstance(exprs[n], sm.MatrixBase)
                                           else [exprs[n]])]
        udots = [u.diff(_t) for u in model.speeds]
        f = make_function([_t, list(model.coordinates), list(model.speeds), udots, list(model.constants),
                           list(model.specifieds)], flat, name="outputs")
        if k:
            UD = udot if udot is not None else np.zeros((k, model.o))
            Rv = R if R is not None else np.zeros((k, 0))
            vals = np.asarray(f(T, X[:, :model.N], U, UD, np.broadcast_to(P, (k, len(P))), Rv))
            vals = vals.reshape(k, len(flat))
        else:
            vals = np.empty((0, len(flat)))
        j = 0
        for n, shape in zip(names, shapes):
            size = int(np.prod(shape, dtype=int))
            out[n] = vals[:, j].copy() if not shape else vals[:, j:j + size].reshape(-1, *shape)
            j += size
    if functions:
        samples = {"t": T, "q": X[:, :model.N], "u": U,
                   "u_dot": udot if udot is not None else np.zeros((k, model.o)),
                   "p": np.broadcast_to(np.asarray(P, dtype=float), (k, len(P))),
                   "r": R if R is not None else np.zeros((k, 0))}
        for n, f in functions.items():
            out[n] = _function_values(f, samples, k)
    traj.outputs.update(out)


def output_names(outputs: Mapping | Sequence | None) -> Sequence[str]:  # pragma: no cover - convenience
    return [] if outputs is None else list(outputs)
