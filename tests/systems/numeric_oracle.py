"""Plain numeric evaluation of symbolic matrices for the formulation tests.

Independent of symbody's compile layer on purpose: sympy.lambdify after
replacing functions of time by symbols.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

t = me.dynamicsymbols._t


def evaluate(exprs, values: dict) -> np.ndarray:
    """Evaluate a sympy matrix (or expression) at ``values`` (keys: symbols, functions, derivatives)."""
    M = sm.Matrix(exprs) if not isinstance(exprs, sm.MatrixBase) else exprs
    derivs = sorted({d for e in M for d in e.atoms(sm.Derivative)}, key=str)
    funcs = sorted({f for e in M for f in e.atoms(sm.core.function.AppliedUndef)}, key=str)
    rep = {}
    for i, d in enumerate(derivs):
        rep[d] = sm.Symbol(f"_d{i}")
    for i, f in enumerate(funcs):
        rep[f] = sm.Symbol(f"_f{i}")
    Ms = M.xreplace(rep)
    keys = list(rep.keys()) + sorted(Ms.free_symbols - set(rep.values()), key=str)
    args = [rep.get(k, k) for k in keys]
    missing = [k for k in keys if k not in values and k != t]
    if missing:
        raise KeyError(f"no value for {missing}")
    f = sm.lambdify(args, Ms, modules="numpy", cse=True)
    vals = [values.get(k, 0.0) for k in keys]
    return np.array(f(*vals), dtype=float)


def dependent_speeds(B, b, u, u_dep, values) -> dict:
    """Solve B u + b = 0 for u_dep at ``values`` (which hold q, u_ind, constants)."""
    Bn = evaluate(B, values)
    bn = evaluate(b, values).ravel()
    idx = [list(u).index(x) for x in u_dep]
    ind = [i for i in range(len(u)) if i not in idx]
    uind = np.array([values[u[i]] for i in ind])
    sol = np.linalg.solve(Bn[:, idx], -(Bn[:, ind] @ uind + bn))
    return dict(zip(u_dep, sol))


def augmented_accelerations(eom, values) -> np.ndarray:
    """u' from the canonical form: [[M_d, B_a^T], [B_a, 0]] [u'; lam] = [-g_d; -b_a]."""
    M = evaluate(eom.dynamic_mass, values)
    g = evaluate(eom.dynamic_rest, values).ravel()
    o, m = len(eom.u), len(eom.u_dep)
    if eom.dynamic_reduced:
        p = len(eom.u_ind)
        uind_dot = np.linalg.solve(M, -g)
        if not m:
            return uind_dot
        Ba = evaluate(eom.acceleration_matrix, values)
        ba = evaluate(eom.acceleration_rest, values).ravel()
        udep_dot = np.linalg.solve(Ba[:, p:], -(Ba[:, :p] @ uind_dot + ba))
        return np.concatenate([uind_dot, udep_dot])
    if not m:
        return np.linalg.solve(M, -g)
    Ba = evaluate(eom.acceleration_matrix, values)
    ba = evaluate(eom.acceleration_rest, values).ravel()
    K = np.block([[M, Ba.T], [Ba, np.zeros((m, m))]])
    sol = np.linalg.solve(K, np.concatenate([-g, -ba]))
    return sol[:o]
