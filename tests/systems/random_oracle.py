"""Reference computations for the random-model tests, independent of symbody's numerics.

The reference right-hand side comes from SymPy's KanesMethod (``mass_matrix_full``
and ``forcing_full``, compiled once with ``sympy.lambdify(cse=True)``); dependent
speeds from SymPy's velocity-constraint matrices; dependent coordinates by the
random model's own Newton solve.  Nothing here goes through symbody's formulation,
compile or analysis layers.
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from symbody.testing import RandomModelOptions, random_model

t = me.dynamicsymbols._t


def plain_symbols(args: list) -> tuple[list, dict]:
    """Symbols standing for ``args`` (functions of time, derivatives, symbols)."""
    syms = [a if isinstance(a, sm.Symbol) else sm.Symbol(f"_ref{i}") for i, a in enumerate(args)]
    return syms, {a: s for a, s in zip(args, syms) if a is not s}


def lambdify(args: list, exprs: list):
    """sympy.lambdify(cse=True) of a list of matrices over ``args`` (may hold q(t), q'(t))."""
    syms, rep = plain_symbols(args)
    derivs = {a: s for a, s in rep.items() if isinstance(a, sm.Derivative)}
    funcs = {a: s for a, s in rep.items() if not isinstance(a, sm.Derivative)}
    mats = [sm.Matrix(e).xreplace(derivs).xreplace(funcs) for e in exprs]
    for M in mats:
        left = {a for e in M for a in e.atoms(sm.Derivative, sm.core.function.AppliedUndef)}
        assert not left, f"reference expressions depend on {left}, not among the arguments"
    f = sm.lambdify(syms, mats, modules="numpy", cse=True)

    def call(values) -> list[np.ndarray]:
        return [np.asarray(m, dtype=float) for m in f(*values)]
    return call


def evaluate(M, values: dict) -> np.ndarray:
    """A sympy matrix at ``values`` (keys: symbols, functions of time, derivatives).

    Numbers are substituted (derivatives first) and sympy folds the result: for a
    single evaluation of a large matrix this is faster than compiling it.
    """
    M = sm.Matrix(M)
    derivs = {k: v for k, v in values.items() if isinstance(k, sm.Derivative)}
    rest = {k: sm.Float(v) for k, v in values.items() if not isinstance(k, sm.Derivative)}
    out = M.xreplace({k: sm.Float(v) for k, v in derivs.items()}).xreplace(rest).evalf()
    try:
        return np.array(out.tolist(), dtype=float)
    except TypeError:
        left = {a for e in out for a in e.free_symbols | e.atoms(sm.Derivative, sm.core.function.AppliedUndef)}
        raise KeyError(f"no value for {sorted(map(str, left))}") from None


def kane_xdot(km, values: dict) -> np.ndarray:
    """[q' (N), u' (o)] = mass_matrix_full \\ forcing_full at ``values``."""
    return np.linalg.solve(evaluate(km.mass_matrix_full, values), evaluate(km.forcing_full, values).ravel())


def lagrange_qddot(lm, values: dict) -> np.ndarray:
    """q'' (n) from a formed LagrangesMethod: mass_matrix_full \\ forcing_full."""
    n = len(lm.q)
    x = np.linalg.solve(evaluate(lm.mass_matrix_full, values), evaluate(lm.forcing_full, values).ravel())
    return x[n:2 * n]


def canonical_udot(eom, values: dict) -> np.ndarray:
    """u' from the canonical form: [[M_d, B_a^T], [B_a, 0]] [u'; lam] = [-g_d; -b_a]."""
    M = evaluate(eom.dynamic_mass, values)
    g = evaluate(eom.dynamic_rest, values).ravel()
    m, o = len(eom.u_dep), len(eom.u)
    if not m:
        return np.linalg.solve(M, -g)
    Ba = evaluate(eom.acceleration_matrix, values)
    ba = evaluate(eom.acceleration_rest, values).ravel()
    K = np.block([[M, Ba.T], [Ba, np.zeros((m, m))]])
    return np.linalg.solve(K, np.concatenate([-g, -ba]))[:o]


def relative_error(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@functools.cache
def model(seed: int, kind: str, n_bodies: int, **options):
    """A random model, built once per session (its frames and points are reused)."""
    return random_model(seed, n_bodies=n_bodies, kind=kind, options=RandomModelOptions(**options))


def model_from(case: tuple):
    """``case`` = (kind, seed, n_bodies, options dict as a tuple of pairs)."""
    kind, seed, n_bodies, options = case
    return model(seed, kind, n_bodies, **dict(options))


@functools.cache
def _sympy_kane(case: tuple):
    return model_from(case).form(me.KanesMethod)


def sympy_kane(case: tuple):
    """SymPy's KanesMethod for the random model of ``case`` (formed once)."""
    return _sympy_kane(case)


@functools.cache
def _symbody_kane(case: tuple):
    return model_from(case).form()


def symbody_kane(case: tuple):
    """symbody's KanesMethod for the random model of ``case`` (formed once)."""
    return _symbody_kane(case)


@functools.cache
def reference_ode(case: tuple) -> ReferenceODE:
    return ReferenceODE(model_from(case), sympy_kane(case))


class ReferenceODE:
    """x' = f(t, x) for x = [q (N), u_ind (p)] built from SymPy's KanesMethod.

    u_dep from SymPy's velocity constraint matrices (B u + b = 0), then
    [q'; u'] = mass_matrix_full \\ forcing_full.  ``r``: values of the specified
    inputs (constant).
    """

    def __init__(self, rm, km, r=None):
        self.rm = rm
        self.q, self.u = list(km.q), list(km.u)
        assert self.q == rm.q and self.u == rm.u
        self.N, self.o, self.p = len(self.q), len(self.u), len(rm.u_ind)
        self.consts = list(rm.constants)
        self.c = np.array([rm.constants[k] for k in self.consts])
        self.r_syms = list(rm.specifieds)
        self.r = np.zeros(len(self.r_syms)) if r is None else np.asarray(r, dtype=float)
        args = self.q + self.u + self.r_syms + self.consts
        self._mf = lambdify(args, [km.mass_matrix_full, km.forcing_full])
        self._vel = None
        if rm.u_dep:
            self._vel = lambdify(self.q + self.consts, [km._k_nh, km._f_nh])

    def speeds(self, q, u_ind) -> np.ndarray:
        if self._vel is None:
            return np.asarray(u_ind, dtype=float)
        B, b = self._vel(list(q) + list(self.c))
        p = self.p
        u_dep = np.linalg.solve(B[:, p:], -(B[:, :p] @ u_ind + b.ravel()))
        return np.concatenate([u_ind, u_dep])

    def xdot_full(self, x, r=None) -> np.ndarray:
        """[q' (N), u' (o)] at x = [q, u_ind]."""
        q, u_ind = x[:self.N], x[self.N:]
        u = self.speeds(q, u_ind)
        rr = self.r if r is None else r
        MM, FF = self._mf(list(q) + list(u) + list(rr) + list(self.c))
        return np.linalg.solve(MM, FF.ravel())

    def rhs(self, t_, x, r=None) -> np.ndarray:
        full = self.xdot_full(np.asarray(x, dtype=float), r)
        return np.concatenate([full[:self.N], full[self.N:self.N + self.p]])

    def dependent_conditioning(self, x) -> float:
        """sigma_min(df_h/dq_dep) / |df_h/dq| at x (1 without holonomic constraints)."""
        rm = self.rm
        if not rm.q_dep:
            return 1.0
        J = rm.holonomic_jacobian(dict(zip(self.q, x[:self.N])))
        return float(np.linalg.svd(J[:, len(rm.q_ind):], compute_uv=False)[-1] / np.linalg.norm(J))

    # ------------------------------------------------------------ linearization
    def independent_rhs(self, z, r=None) -> np.ndarray:
        """[q_ind', u_ind'] as a function of z = [q_ind, u_ind] (q_dep solved by Newton)."""
        rm, n = self.rm, len(self.rm.q_ind)
        state = dict(zip(rm.q_ind, z[:n]))
        state.update(self._q_dep_guess)
        state.update(rm.solve_dependent_coordinates(state))
        x = np.concatenate([[state[qi] for qi in self.q], z[n:]])
        xd = self.rhs(0.0, x, r)
        return np.concatenate([xd[:n], xd[self.N:]])

    def finite_difference_linearization(self, state: dict, step: float = 1e-6):
        """Central differences (A, B) of [q_ind', u_ind'] in [q_ind, u_ind] and r."""
        rm = self.rm
        self._q_dep_guess = {qd: state[qd] for qd in rm.q_dep}
        z0 = np.array([state[s] for s in list(rm.q_ind) + list(rm.u_ind)], dtype=float)
        k = len(z0)
        A = np.empty((k, k))
        for j in range(k):
            dz = np.zeros(k)
            dz[j] = step
            A[:, j] = (self.independent_rhs(z0 + dz) - self.independent_rhs(z0 - dz)) / (2 * step)
        s = len(self.r_syms)
        B = np.empty((k, s))
        for j in range(s):
            dr = np.zeros(s)
            dr[j] = step
            B[:, j] = (self.independent_rhs(z0, self.r + dr) - self.independent_rhs(z0, self.r - dr)) / (2 * step)
        return A, B
