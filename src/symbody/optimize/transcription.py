"""Transcriptions of an optimal control problem into a sparse NLP.

Notation: ``N_n`` nodes ``t_k = t0 + k h``; the state at a point ``X = [q (N), u (o), x_e (e)]``,
inputs ``R (s)``, unknown parameters ``P``; the differential states ``D = [q_ind, u_ind, x_e]``
(``n_D`` of them) with derivatives ``V``; with an unreduced constrained dynamic block also the
dependent accelerations ``A (m)`` and multipliers ``Λ (m)``.  The pointwise residual
(one row block per collocation point)::

    Φ(X, V, A, Λ, R, P, t) = [ V_q - qdot_solution_ind(X, R, t)             (n)
                               M_d [V_u; A] + g_d - B_a^T Λ                 (o, or p reduced)
                               B_a [V_u; A] + b_a                           (m, unreduced only)
                               V_e - f_e(X, R, t)                           (e) ]

and the configuration/velocity constraints ``G(X, t) = [f_h(q, t); B u + b]`` (M + m).

``backward-euler`` (as opty): per interval k, ``Φ(X_{k+1}, (D_{k+1} - D_k)/h, A_k, Λ_k,
R_{k+1}, P, t_{k+1}) = 0``; cost ``h Σ_{k=1}^{N_n-1} L_k``.

``midpoint`` (as opty): ``Φ((X_k + X_{k+1})/2, (D_{k+1} - D_k)/h, A_k, Λ_k,
(R_k + R_{k+1})/2, P, t_k + h/2) = 0``; cost ``h Σ_k L(midpoint)``.

With dependent speeds (unreduced form) these two collocate the dependent accelerations
``A_k`` through the acceleration constraints (the derivative of ``B u + b = 0``, exact at
the collocation point).  opty, given the same equations, differences the dependent speeds
instead: ``Collocation(..., dependent_speeds="differenced")`` sets ``A_k = (u_dep,k+1 -
u_dep,k)/h`` and drops the acceleration-constraint rows (``B u + b = 0`` still holds at
every node, so the difference quotient is consistent with the constraints between the
nodes rather than with their derivative at one point).  The two NLPs differ by O(h): on
opty's parallel-parking car with 501 nodes the optima are 320249.46 and opty's 320226.90.

``hermite-simpson`` (separated form): unknowns X, R, V, A, Λ at the nodes and the interval
midpoints c; ``Φ = 0`` at every point and per interval the defects
``D_c - (D_k + D_{k+1})/2 - h/8 (V_k - V_{k+1}) = 0`` and
``D_{k+1} - D_k - h/6 (V_k + 4 V_c + V_{k+1}) = 0``; cost Simpson's rule
``h/6 Σ_k (L_k + 4 L_c + L_{k+1})``.

``radau`` (Legendre-Gauss-Radau, ``s`` = 3, 4 or 5 points per interval, order ``2s - 1`` at
the nodes, stiffly accurate: Radau IIA): the points of interval k are ``t_k + c_j h`` with
``0 < c_1 < ... < c_s = 1`` the roots of ``P_s(2c - 1) - P_{s-1}(2c - 1)``; unknowns X, R, V,
A, Λ at every point (``(N_n - 1) s + 1`` of them, the node t_k the start of its interval);
``Φ = 0`` at every point and per interval the differential defects
``Σ_{i=0}^{s} 𝒟_{ji} D_i - h V_j = 0`` (j = 1..s) of the degree-s polynomial through ``D_0`` (at
``t_k``) and the ``D_j``, ``𝒟_{ji} = ℓ_i'(c_j)``; cost ``h Σ_k Σ_j b_j L_{kj}``
(``b_j = ∫_0^1 ℓ̃_j``, the Radau weights).  The inputs are a polynomial of degree s - 1 through
the collocation points of each interval; the input at t0 (point 0, where the scheme does not
collocate) is that of the first interval extrapolated, ``R_0 = Σ_j ℓ̃_j(0) R_j``, within the
inputs' bounds like every other point's.

With ``quadrature="rectangle"`` the cost is ``h Σ_{k=0}^{N_n-1} L(t_k)`` over all nodes (as
opty's examples write it by hand, ``interval * sum(F**2)``), with ``"trapezoidal"`` the
trapezoidal rule over the nodes, whatever the transcription.

``G = 0`` holds at every point with a state.  Every block is a :class:`.BlockDerivatives`
(symbolic Jacobian and Hessian, compiled once) evaluated for all its rows in one call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm
from sympy.core.function import AppliedUndef

from ..compat.sympy import TIME
from ..compilation.function_expansion import expand_functions
from ..errors import InputError
from .derivatives import BlockDerivatives, BlockPlacement

if TYPE_CHECKING:
    from .statement import ProblemStatement

__all__ = ["NLP", "build_transcription", "radau_points"]

_t = TIME
_INF = 1e20


def radau_points(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The Legendre-Gauss-Radau (Radau IIA) scheme with ``s`` points on [0, 1].

    Returns ``c`` (s,) the points, the roots of ``P_s(2c - 1) - P_{s-1}(2c - 1)`` (``c_s = 1``);
    ``b`` (s,) the quadrature weights ``∫_0^1 ℓ̃_j`` (exact for degree 2s - 2); ``D`` (s, s+1)
    the derivatives ``ℓ_i'(c_j)`` of the Lagrange basis on ``[0, c_1, ..., c_s]``; ``e0`` (s,)
    ``ℓ̃_j(0)``, the basis on the c alone at 0 (ℓ̃: degree s - 1, ℓ: degree s).
    """
    from numpy.polynomial import legendre as leg
    from numpy.polynomial import polynomial as poly
    coef = np.zeros(s + 1)
    coef[s], coef[s - 1] = 1.0, -1.0
    x = np.sort(np.real(leg.legroots(coef)))
    c = (x + 1.0) / 2.0
    c[-1] = 1.0
    tau = np.concatenate([[0.0], c])

    def basis(nodes: np.ndarray, j: int) -> np.ndarray:
        others = np.delete(nodes, j)
        p = poly.polyfromroots(others)
        return p / poly.polyval(nodes[j], p)

    D = np.array([[poly.polyval(cj, poly.polyder(basis(tau, i))) for i in range(s + 1)]
                  for cj in c])
    b = np.array([poly.polyval(1.0, poly.polyint(basis(c, j))) for j in range(s)])
    e0 = np.array([poly.polyval(0.0, basis(c, j)) for j in range(s)])
    return c, b, D, e0


def _syms(prefix: str, n: int) -> list:
    return [se.Symbol(f"{prefix}{i}") for i in range(n)]


class NLP:
    """The sparse NLP ``min f(w)  s.t.  cl <= c(w) <= cu,  lb <= w <= ub`` (IPOPT's form).

    ``n`` unknowns, ``m`` constraints; layout arrays ``iX`` (P, nx), ``iR`` (P, s), ``iV``,
    ``iA``, ``iL``, ``ip`` (unknown parameters), ``ih`` (the interval; ``n`` when fixed).
    """

    def __init__(self) -> None:
        self.constraint_blocks: list[tuple[BlockPlacement, int]] = []   # (placement, first row)
        self.objective_blocks: list[BlockPlacement] = []
        self.m = 0
        self.reset_bounds()

    def reset_bounds(self) -> None:
        """Start the constraint bounds cl, cu afresh (filled block by block)."""
        self._cl: list[np.ndarray] = []
        self._cu: list[np.ndarray] = []

    # ------------------------------------------------------------- evaluation
    def _ext(self, w: np.ndarray) -> np.ndarray:
        self.w_ext[:self.n] = w
        return self.w_ext

    def objective(self, w: np.ndarray) -> float:
        we = self._ext(w)
        return float(sum(pl.values(we).sum() for pl in self.objective_blocks))

    def gradient(self, w: np.ndarray) -> np.ndarray:
        we = self._ext(w)
        if not self.objective_blocks:
            return np.zeros(self.n)
        vals = np.concatenate([pl.jacobian(we) for pl in self.objective_blocks])
        return np.bincount(self._grad_cols, weights=vals, minlength=self.n)

    def constraints(self, w: np.ndarray) -> np.ndarray:
        we = self._ext(w)
        out = np.empty(self.m)
        for pl, start in self.constraint_blocks:
            out[start:start + pl.R * pl.block.n_f] = pl.values(we).ravel()
        return out

    def jacobianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return self._jac_rows, self._jac_cols

    def jacobian(self, w: np.ndarray) -> np.ndarray:
        we = self._ext(w)
        if not self.constraint_blocks:
            return np.zeros(0)
        return np.concatenate([pl.jacobian(we) for pl, _ in self.constraint_blocks])

    def hessianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return self._hess_rows, self._hess_cols

    def hessian(self, w: np.ndarray, lagrange: np.ndarray, obj_factor: float) -> np.ndarray:
        we = self._ext(w)
        parts = []
        for pl, start in self.constraint_blocks:
            MU = lagrange[start:start + pl.R * pl.block.n_f].reshape(pl.R, pl.block.n_f)
            parts.append(pl.hessian(we, MU))
        for pl in self.objective_blocks:
            parts.append(pl.hessian(we, np.full((pl.R, 1), obj_factor)))
        vals = np.concatenate(parts) if parts else np.zeros(0)
        return np.bincount(self._hess_inverse, weights=vals, minlength=len(self._hess_rows))

    # ------------------------------------------------------------- assembly
    def add_constraints(self, pl: BlockPlacement, lower: Any = 0.0, upper: Any = 0.0) -> None:
        start = self.m
        k = pl.R * pl.block.n_f
        pl.rows = start + np.arange(k, dtype=np.intp).reshape(pl.R, pl.block.n_f)
        pl.jac_global_rows = pl.rows[:, pl.block.jac_rows][pl.jac_mask]
        self.constraint_blocks.append((pl, start))
        self._cl.append(np.broadcast_to(np.asarray(lower, float), (pl.R, pl.block.n_f)).ravel())
        self._cu.append(np.broadcast_to(np.asarray(upper, float), (pl.R, pl.block.n_f)).ravel())
        self.m += k

    def finish(self) -> None:
        self.cl = np.concatenate(self._cl) if self._cl else np.zeros(0)
        self.cu = np.concatenate(self._cu) if self._cu else np.zeros(0)
        cb = [pl for pl, _ in self.constraint_blocks]
        self._jac_rows = (np.concatenate([pl.jac_global_rows for pl in cb]) if cb
                          else np.zeros(0, np.intp))
        self._jac_cols = (np.concatenate([pl.jac_global_cols for pl in cb]) if cb
                          else np.zeros(0, np.intp))
        self._grad_cols = (np.concatenate([pl.jac_global_cols for pl in self.objective_blocks])
                           if self.objective_blocks else np.zeros(0, np.intp))
        allp = cb + self.objective_blocks
        hr = np.concatenate([pl.hess_global_rows for pl in allp]) if allp else np.zeros(0, np.intp)
        hc = np.concatenate([pl.hess_global_cols for pl in allp]) if allp else np.zeros(0, np.intp)
        key = hr.astype(np.int64) * self.n + hc
        uniq, inverse = np.unique(key, return_inverse=True)
        self._hess_rows = (uniq // self.n).astype(np.intp)
        self._hess_cols = (uniq % self.n).astype(np.intp)
        self._hess_inverse = inverse.ravel()


class _Model:
    """The model's blocks Φ and G in placeholder symbols (symengine)."""

    def __init__(self, problem: ProblemStatement) -> None:
        eom = problem.eom
        q, u = list(eom.q), list(eom.u)
        xe = list(problem.extra_states)
        self.N, self.o, self.e = len(q), len(u), len(xe)
        self.n, self.p = len(eom.q_ind), len(eom.u_ind)
        self.M, self.m = self.N - self.n, self.o - self.p
        self.reduced = bool(eom.dynamic_reduced)
        self.mm = self.m if (not self.reduced and self.m) else 0
        self.nx = self.N + self.o + self.e
        self.s = len(problem.specifieds)
        self.np = len(problem.unknown_parameters)
        self.D = (list(range(self.n)) + list(range(self.N, self.N + self.p))
                  + list(range(self.N + self.o, self.nx)))
        self.nD = len(self.D)
        # placeholders (SymPy, for the substitution) and their symengine twins
        X = [sm.Symbol(f"sbX{i}") for i in range(self.nx)]
        V = [sm.Symbol(f"sbV{i}") for i in range(self.nD)]
        A = [sm.Symbol(f"sbA{i}") for i in range(self.mm)]
        L = [sm.Symbol(f"sbL{i}") for i in range(self.mm)]
        R = [sm.Symbol(f"sbR{i}") for i in range(self.s)]
        P = [sm.Symbol(f"sbP{i}") for i in range(self.np)]
        T = sm.Symbol("sbT")
        self.ph = {"X": X, "V": V, "A": A, "L": L, "R": R, "P": P, "T": T}
        repl: dict = {}
        repl.update(zip(q + u + xe, X))
        repl.update(zip(problem.specifieds, R))
        repl.update(zip(problem.unknown_parameters, P))
        repl.update({k: sm.Float(v) for k, v in problem.known_parameters.items()})
        repl[_t] = T
        self.repl = repl
        udot = [ui.diff(_t) for ui in u]
        dot_repl = dict(zip(udot[:self.p], V[self.n:self.n + self.p]))
        dot_repl.update(zip(udot[self.p:], A))
        allowed = set(X) | set(V) | set(A) | set(L) | set(R) | set(P) | {T}
        self.allowed = allowed

        def conv(exprs, what):
            out = []
            for i, ex in enumerate(exprs):
                # (unevaluated: re-evaluating the muscles' powers asks SymPy for their real
                # and imaginary parts, which took most of an Arm26 problem's setup)
                with sm.evaluate(False):
                    ex = sm.sympify(ex).xreplace(dot_repl).xreplace(repl)
                    # functions the kernels do not know (muscle curves) by their definitions
                    ex, = expand_functions([ex], where=f"{what}[{i}]")
                self.check(ex, f"{what}[{i}]")
                out.append(ex)
            return out

        qd = list(eom.qdot_solution)[:self.n]
        kin = [V[i] - qd[i] for i in range(self.n)]
        Md, gd = sm.Matrix(eom.dynamic_mass), sm.Matrix(eom.dynamic_rest)
        if self.reduced:
            ud = sm.Matrix(udot[:self.p])
            dyn = list(Md * ud + gd)
        else:
            ud = sm.Matrix(udot)
            dyn = Md * ud + gd
            if self.mm:
                Ba = sm.Matrix(eom.acceleration_matrix)
                dyn = dyn - Ba.T * sm.Matrix(L)
                acc = list(Ba * ud + sm.Matrix(eom.acceleration_rest))
            dyn = list(dyn)
        if not self.mm:
            acc = []
        ext = []
        if self.e:
            fe = list(eom.extra_derivatives)
            ext = [V[self.n + self.p + i] - fe[i] for i in range(self.e)]
        self.phi = conv(kin, "kinematic") + conv(dyn, "dynamic") + conv(acc, "acceleration") + \
            conv(ext, "extra states")
        #: the rows of Φ that are acceleration constraints
        self.acceleration_rows = range(len(kin) + len(dyn), len(kin) + len(dyn) + len(acc))
        G = list(eom.holonomic)
        if self.m:
            G += list(sm.Matrix(eom.velocity_matrix) * sm.Matrix(u) + sm.Matrix(eom.velocity_rest))
        self.G = conv(G, "constraints")

    def check(self, ex: sm.Expr, what: str) -> None:
        bad = [s for s in ex.free_symbols if s not in self.allowed]
        if bad:
            raise InputError(f"{what} depends on {bad[0]}, which is neither a state, an input, a "
                             "constant of the model nor the time")
        fun = [f for f in ex.atoms(AppliedUndef, sm.Derivative)]
        if fun:
            raise InputError(f"{what} contains {fun[0]}: only the model's states, inputs, constants "
                             "and t may appear")

    def user(self, ex: sm.Expr, what: str) -> sm.Expr:
        ex = sm.sympify(ex)
        derivs = [d for d in ex.atoms(sm.Derivative)]
        if derivs:
            raise InputError(f"{what}: {derivs[0]} is not allowed; use the speeds u instead of q'")
        ex = ex.xreplace(self.repl)
        self.check(ex, what)
        ex, = expand_functions([ex], where=what)
        return ex


def _to_se(exprs: list, mapping: dict) -> list:
    """SymPy expressions in placeholders -> symengine with the placeholders substituted."""
    out = []
    se_map = {se.Symbol(k.name): v for k, v in mapping.items()}
    for ex in exprs:
        out.append(se.sympify(ex).xreplace(se_map) if se_map else se.sympify(ex))
    return out


def build_transcription(problem: ProblemStatement) -> NLP:
    """Lay out the unknowns, build and compile the blocks; returns the :class:`NLP`.

    The blocks, in the order of their rows: the dynamics (Φ at the points, with the
    Hermite–Simpson defects, or per interval), the configuration/velocity constraints ``G``
    and the path constraints at the points, the instance constraints; the objective's
    blocks: the Lagrange term (:meth:`_Transcriber.lagrange_term`) and the Mayer term.
    """
    build = _Transcriber(problem)
    build.layout()
    build.unknown_bounds()
    if build.hs:
        build.hermite_simpson_dynamics()
    elif build.radau:
        build.radau_dynamics()
    else:
        build.interval_dynamics()
    build.pointwise_constraints()
    build.lagrange_term()
    build.instance_terms()
    build.nlp.finish()
    return build.nlp


class _Transcriber:
    """The steps of :func:`build_transcription`, sharing the layout of the unknowns and the
    symbols of the blocks: ``P`` unknowns of each parameter, ``H`` the interval h, ``kappa``
    the point's index (time ``t0 + kappa h``)."""

    def __init__(self, problem: ProblemStatement) -> None:
        self.problem = problem
        self.mdl = _Model(problem)
        self.ph = self.mdl.ph
        self.tr = problem.transcription
        self.hs = self.tr == "hermite-simpson"
        self.radau = self.tr == "radau"
        self.separated = self.hs or self.radau       # state derivatives V at every point
        self.S = 2 if self.hs else (problem.collocation.points if self.radau else 1)
        #: opty's form: the dependent accelerations as difference quotients (no A unknowns)
        self.differenced = problem.collocation.dependent_speeds == "differenced" and self.mdl.m > 0
        if self.differenced and self.mdl.reduced:
            raise InputError("dependent_speeds='differenced' needs the dynamic equations in the "
                             "unreduced form (every speed's derivative in them, with the "
                             "multipliers); these were reduced to the independent speeds")
        self.nlp = NLP()
        self.nlp.model = self.mdl
        self.nlp.reset_bounds()
        collocation = problem.collocation
        self.backend_kw = dict(backend=collocation.backend, cache=collocation.cache,
                               hessian=problem.hessian == "exact")
        self.Pv, self.Hv = _syms("p", self.mdl.np), se.Symbol("h")
        self.kappa = se.Symbol("kappa")

    def common(self, mapping: dict) -> dict:
        """``mapping`` with the parameters and the time ``t0 + kappa h`` of a point."""
        mapping.update(zip(self.ph["P"], self.Pv))
        mapping[self.ph["T"]] = self.problem.t0 + self.kappa * self.Hv
        return mapping

    def add(self, name: str, variables: list, params: list, exprs: list, idx: np.ndarray,
            values: np.ndarray, bounds: tuple = (0.0, 0.0)) -> BlockPlacement:
        """A block of constraint rows ``exprs`` in ``variables`` (columns ``idx`` of w, one row
        of idx per instance) and ``params`` (their ``values``), between ``bounds``."""
        blk = BlockDerivatives(name, variables, params, exprs, **self.backend_kw)
        placement = BlockPlacement(blk, idx, values, None, self.nlp.n)
        self.nlp.add_constraints(placement, *bounds)
        return placement

    def add_objective(self, name: str, variables: list, params: list, exprs: list,
                      idx: np.ndarray, values: np.ndarray) -> None:
        blk = BlockDerivatives(name, variables, params, exprs, **self.backend_kw)
        self.nlp.objective_blocks.append(BlockPlacement(blk, idx, values, None, self.nlp.n))

    # ---- layout
    def layout(self) -> None:
        """The columns of the unknowns: ``iX`` (P, nx), ``iR`` (P, s), ``iV``, ``iA``, ``iL``,
        ``ip``, ``ih`` (the interval; ``n``, after w in the extended vector, when fixed)."""
        problem, mdl, nlp, hs = self.problem, self.mdl, self.nlp, self.separated
        Nn = problem.num_nodes
        nx, s, nD, mm, npar = mdl.nx, mdl.s, mdl.nD, mdl.mm, mdl.np
        P = self.S * (Nn - 1) + 1
        width = nx + s + ((nD + 2 * mm) if hs else 0)
        base = np.arange(P * width, dtype=np.intp).reshape(P, width)
        iX, iR = base[:, :nx], base[:, nx:nx + s]
        pos = P * width
        if hs:
            iV = base[:, nx + s:nx + s + nD]
            iA = base[:, nx + s + nD:nx + s + nD + mm]
            iL = base[:, nx + s + nD + mm:]
        else:
            C = Nn - 1
            na = 0 if self.differenced else mm      # collocated dependent accelerations
            colloc = pos + np.arange(C * (na + mm), dtype=np.intp).reshape(C, na + mm)
            iV = np.zeros((0, nD), np.intp)
            iA, iL = colloc[:, :na], colloc[:, na:]
            pos += C * (na + mm)
        ip = pos + np.arange(npar, dtype=np.intp)
        pos += npar
        free_time = problem.duration_symbol is not None
        if free_time:
            ih = pos
            pos += 1
        n = pos
        if not free_time:
            ih = n                   # the fixed interval lives after w in the extended vector
        nlp.n = n
        nlp.w_ext = np.zeros(n + 1)
        h_fixed = (problem.duration / (Nn - 1)) if not free_time else 0.0
        nlp.w_ext[n] = h_fixed
        nlp.layout = dict(P=P, iX=iX, iR=iR, iV=iV, iA=iA, iL=iL, ip=ip, ih=ih,
                          free_time=free_time, hs=self.hs, separated=hs)
        nlp.iX, nlp.iR, nlp.iV, nlp.iA, nlp.iL, nlp.ip, nlp.ih = iX, iR, iV, iA, iL, ip, ih
        nlp.node_points = np.arange(0, P, self.S)
        # the time of every point in intervals from t0: t = t0 + point_kappa h
        if self.radau:
            self.scheme = radau_points(self.S)
            frac = np.concatenate([[0.0], self.scheme[0]])[:-1]
            kap = (np.arange(Nn - 1)[:, None] + frac[None, :]).ravel()
            nlp.point_kappa = np.concatenate([kap, [Nn - 1.0]])
        else:
            nlp.point_kappa = np.arange(P) / float(self.S)
        self.P = P
        self.cols_PH = list(ip) + [ih]

    def unknown_bounds(self) -> None:
        """``lb``, ``ub`` of the unknowns from the problem's bounds."""
        problem, nlp = self.problem, self.nlp
        Nn, n = problem.num_nodes, nlp.n
        lb, ub = np.full(n, -_INF), np.full(n, _INF)
        states = list(problem.states)
        for k, (lo, hi) in problem.bounds.items():
            if k in states:
                j = states.index(k)
                lb[nlp.iX[:, j]], ub[nlp.iX[:, j]] = lo, hi
            elif k in problem.specifieds:
                j = problem.specifieds.index(k)
                lb[nlp.iR[:, j]], ub[nlp.iR[:, j]] = lo, hi
            elif k in problem.unknown_parameters:
                j = problem.unknown_parameters.index(k)
                lb[nlp.ip[j]], ub[nlp.ip[j]] = lo, hi
        if problem.duration_symbol is not None:
            lo, hi = problem.bounds.get(problem.duration_symbol, (0.0, _INF))
            lb[nlp.ih] = max(lo, 0.0) / (Nn - 1) if lo > 0 else 1e-9
            ub[nlp.ih] = hi / (Nn - 1) if hi < _INF else _INF
        nlp.lb, nlp.ub = lb, ub

    # ---- the dynamics
    def collocation_points(self, kappa: np.ndarray) -> None:
        """Φ = 0 at every point of the grid (nodes and interior collocation points), the
        point's place in its interval ``kappa`` (P, 1) given."""
        mdl, ph, nlp = self.mdl, self.ph, self.nlp
        Xv, Rv, Vv = _syms("x", mdl.nx), _syms("r", mdl.s), _syms("v", mdl.nD)
        Av, Lv = _syms("a", mdl.mm), _syms("l", mdl.mm)
        mp = self.common({})
        for key, values in (("X", Xv), ("R", Rv), ("V", Vv), ("A", Av), ("L", Lv)):
            mp.update(zip(ph[key], values))
        vars_pt = Xv + Rv + Vv + Av + Lv + self.Pv + [self.Hv]
        idx_pt = np.hstack([nlp.iX, nlp.iR, nlp.iV, nlp.iA, nlp.iL,
                            np.tile(self.cols_PH, (self.P, 1))])
        self.add("collocation_point", vars_pt, [self.kappa], _to_se(mdl.phi, mp), idx_pt, kappa)

    def hermite_simpson_dynamics(self) -> None:
        """Φ = 0 at every point (nodes and midpoints) and the defects of each interval."""
        mdl, nlp, P = self.mdl, self.nlp, self.P
        nD = mdl.nD
        Nn, Hv = self.problem.num_nodes, self.Hv
        self.collocation_points((np.arange(P) / 2.0)[:, None])
        # defects
        Dk, Dc, D1 = _syms("dk", nD), _syms("dc", nD), _syms("dn", nD)
        Vk, Vc, V1 = _syms("vk", nD), _syms("vc", nD), _syms("vn", nD)
        out = [Dc[i] - (Dk[i] + D1[i]) / 2 - Hv / 8 * (Vk[i] - V1[i]) for i in range(nD)]
        out += [D1[i] - Dk[i] - Hv / 6 * (Vk[i] + 4 * Vc[i] + V1[i]) for i in range(nD)]
        Dcols = np.array(mdl.D, dtype=np.intp)
        k0, kc, k1 = np.arange(0, P - 1, 2), np.arange(1, P, 2), np.arange(2, P, 2)
        iX, iV = nlp.iX, nlp.iV
        idx_def = np.hstack([iX[k0][:, Dcols], iX[kc][:, Dcols], iX[k1][:, Dcols],
                             iV[k0], iV[kc], iV[k1], np.full((Nn - 1, 1), nlp.ih)])
        self.add("hermite_simpson_defects", Dk + Dc + D1 + Vk + Vc + V1 + [Hv], [], out, idx_def,
                 np.zeros((Nn - 1, 0)))

    def radau_dynamics(self) -> None:
        """Φ = 0 at every point, the Radau defects of each interval and the input at t0 as the
        first interval's input polynomial extrapolated (see the module's docstring)."""
        mdl, nlp, S = self.mdl, self.nlp, self.S
        s, nD = mdl.s, mdl.nD
        Nn, Hv = self.problem.num_nodes, self.Hv
        self.collocation_points(nlp.point_kappa[:, None])
        _, _, Dm, e0 = self.scheme
        Ds = [_syms(f"d{i}_", nD) for i in range(S + 1)]       # D at t_k and the S points
        Vs = [_syms(f"v{j}_", nD) for j in range(S)]
        out = [sum(float(Dm[j, i]) * Ds[i][d] for i in range(S + 1)) - Hv * Vs[j][d]
               for j in range(S) for d in range(nD)]
        Dcols = np.array(mdl.D, dtype=np.intp)
        first = np.arange(Nn - 1) * S
        idx_def = np.hstack([nlp.iX[first + i][:, Dcols] for i in range(S + 1)]
                            + [nlp.iV[first + 1 + j] for j in range(S)]
                            + [np.full((Nn - 1, 1), nlp.ih)])
        self.add(f"radau{S}_defects", sum(Ds, []) + sum(Vs, []) + [Hv], [], out, idx_def,
                 np.zeros((Nn - 1, 0)))
        if s:
            R0, Rc = _syms("r0_", s), [_syms(f"r{j + 1}_", s) for j in range(S)]
            out = [R0[i] - sum(float(e0[j]) * Rc[j][i] for j in range(S)) for i in range(s)]
            idx = np.hstack([nlp.iR[0]] + [nlp.iR[1 + j] for j in range(S)])[None, :]
            self.add("radau_initial_input", R0 + sum(Rc, []), [], out, idx, np.zeros((1, 0)))

    def interval_dynamics(self) -> None:
        """Φ = 0 once per interval, at its end (backward Euler) or its midpoint; also the
        variables ``vars_iv``, columns ``idx_iv``, times ``kap_iv`` and substitution
        ``mp_iv`` of an interval, for the midpoint/backward-Euler Lagrange term."""
        mdl, ph, nlp = self.mdl, self.ph, self.nlp
        nx, s, mm, Hv = mdl.nx, mdl.s, mdl.mm, self.Hv
        Xa, Xb = _syms("xa", nx), _syms("xb", nx)
        Ra, Rb = _syms("ra", s), _syms("rb", s)
        Av, Lv = _syms("a", 0 if self.differenced else mm), _syms("l", mm)
        be = self.tr == "backward-euler"
        mp = self.common({})
        for i in range(nx):
            mp[ph["X"][i]] = Xb[i] if be else (Xa[i] + Xb[i]) / 2
        for i in range(s):
            mp[ph["R"][i]] = Rb[i] if be else (Ra[i] + Rb[i]) / 2
        for i, d in enumerate(mdl.D):
            mp[ph["V"][i]] = (Xb[d] - Xa[d]) / Hv
        if self.differenced:           # opty's form: u_dep' by the difference quotient
            first = mdl.N + mdl.p
            mp.update({a: (Xb[first + i] - Xa[first + i]) / Hv for i, a in enumerate(ph["A"])})
        else:
            mp.update(zip(ph["A"], Av))
        mp.update(zip(ph["L"], Lv))
        self.vars_iv = Xa + Xb + Ra + Rb + Av + Lv + self.Pv + [Hv]
        C = self.problem.num_nodes - 1
        iX, iR = nlp.iX, nlp.iR
        self.idx_iv = np.hstack([iX[:-1], iX[1:], iR[:-1], iR[1:], nlp.iA, nlp.iL,
                                 np.tile(self.cols_PH, (C, 1))])
        self.kap_iv = (np.arange(C) + (1.0 if be else 0.5))[:, None]
        self.mp_iv = mp
        phi = mdl.phi
        if self.differenced:
            phi = [r for i, r in enumerate(phi) if i not in mdl.acceleration_rows]
        self.add(f"collocation_{self.tr.replace('-', '_')}", self.vars_iv, [self.kappa],
                 _to_se(phi, mp), self.idx_iv, self.kap_iv)

    # ---- pointwise constraints G and path constraints (X, R, P, h at a point)
    def pointwise_constraints(self) -> None:
        """G = 0 at every point and the path constraints at the nodes; also the variables
        ``vars_xr``, columns ``idx_xr``, times ``kap_all`` and substitution ``mp_pt`` of a
        point, for the Lagrange term."""
        mdl, ph, nlp, problem = self.mdl, self.ph, self.nlp, self.problem
        Xv, Rv = _syms("x", mdl.nx), _syms("r", mdl.s)
        mp_pt = self.common({})
        mp_pt.update(zip(ph["X"], Xv))
        mp_pt.update(zip(ph["R"], Rv))
        self.mp_pt = mp_pt
        self.vars_xr = Xv + Rv + self.Pv + [self.Hv]
        self.idx_xr = np.hstack([nlp.iX, nlp.iR, np.tile(self.cols_PH, (self.P, 1))])
        self.kap_all = nlp.point_kappa[:, None]
        kappa, nodes = [self.kappa], nlp.node_points
        if mdl.G:
            self.add("configuration_constraints", self.vars_xr, kappa, _to_se(mdl.G, mp_pt),
                     self.idx_xr, self.kap_all)
        nlp.G_block = nlp.constraint_blocks[-1][0] if mdl.G else None
        if problem.path_constraints:
            exprs = [mdl.user(e, f"path_constraints[{i}]")
                     for i, (e, _, _) in enumerate(problem.path_constraints)]
            lo = np.array([c[1] for c in problem.path_constraints])
            hi = np.array([c[2] for c in problem.path_constraints])
            self.add("path_constraints", self.vars_xr, kappa, _to_se(exprs, mp_pt),
                     self.idx_xr[nodes], self.kap_all[nodes], (lo, hi))

    # ---- the Lagrange term
    def lagrange_term(self) -> None:
        """``∫ L dt`` by the problem's quadrature: at the nodes (rectangle, trapezoidal), at
        every point with Simpson's weights, or per interval (midpoint, backward Euler)."""
        problem = self.problem
        if problem.objective == 0:
            return
        L = self.mdl.user(problem.objective, "objective")
        c, Hv, kappa, nodes = se.Symbol("c"), self.Hv, self.kappa, self.nlp.node_points
        Nn, P = problem.num_nodes, self.P
        if problem.quadrature != "transcription":
            wts = np.ones(Nn)
            if problem.quadrature == "trapezoidal":
                wts[0] = wts[-1] = 0.5
            out = [c * Hv * _to_se([L], self.mp_pt)[0]]
            self.add_objective("objective_nodes", self.vars_xr, [kappa, c], out,
                               self.idx_xr[nodes], np.hstack([self.kap_all[nodes], wts[:, None]]))
        elif self.separated:
            if self.hs:
                wts = np.full(P, 4.0 / 6.0)
                wts[0::2] = 2.0 / 6.0
                wts[0] = wts[-1] = 1.0 / 6.0
            else:                          # Radau: b_j at the collocation points
                wts = np.concatenate([[0.0], np.tile(self.scheme[1], Nn - 1)])
            out = [c * Hv * _to_se([L], self.mp_pt)[0]]
            self.add_objective("objective_points", self.vars_xr, [kappa, c], out, self.idx_xr,
                               np.hstack([self.kap_all, wts[:, None]]))
        else:
            out = [Hv * _to_se([L], self.mp_iv)[0]]
            self.add_objective("objective_intervals", self.vars_iv, [kappa], out, self.idx_iv,
                               self.kap_iv)

    # ---- instance constraints and the Mayer term
    def instance_terms(self) -> None:
        """The instance constraints (one block over the instance values they use) and the
        Mayer term."""
        problem = self.problem
        inst = _Instances(problem, self.mdl, self.nlp)
        inst_exprs = [inst.convert(e, f"instance_constraints[{i}]")
                      for i, (e, _, _) in enumerate(problem.instance_constraints)]
        mayer = inst.convert(problem.mayer, "mayer") if problem.mayer != 0 else None
        if inst_exprs:
            lo = np.array([c[1] for c in problem.instance_constraints])
            hi = np.array([c[2] for c in problem.instance_constraints])
            self.add("instance_constraints", inst.variables(), [], inst_exprs, inst.idx(),
                     np.zeros((1, 0)), (lo, hi))
        if mayer is not None:
            self.add_objective("mayer", inst.variables(), [], [mayer], inst.idx(),
                               np.zeros((1, 0)))


class _Instances:
    """Instance values ``x_i(t_k)`` in user expressions -> local unknowns of one global block."""

    def __init__(self, problem: ProblemStatement, mdl: _Model, nlp: NLP) -> None:
        self.problem, self.mdl, self.nlp = problem, mdl, nlp
        self.funcs = {f.func: ("X", j) for j, f in enumerate(problem.states)}
        self.funcs.update({f.func: ("R", j) for j, f in enumerate(problem.specifieds)})
        self.slots: dict = {}          # (kind, j, k) -> symengine symbol
        self.cols: list = []
        self.exprs: list = []
        self._pending: list = []

    def _node(self, arg: sm.Expr, what: str) -> int:
        pr = self.problem
        Nn = pr.num_nodes
        T = pr.duration_symbol
        if T is not None and arg.has(T):
            if sm.simplify(arg - (pr.t0 + T)) == 0:
                return Nn - 1
            raise InputError(f"{what}: with a free duration an instance time must be t0 or t0 + "
                             f"{T}, got {arg}")
        try:
            val = float(arg)
        except TypeError as exc:
            raise InputError(f"{what}: the instance time {arg} is not a number") from exc
        if T is not None:
            if abs(val - pr.t0) > 1e-12 * max(1.0, abs(pr.t0)):
                raise InputError(f"{what}: with a free duration an instance time must be t0 or "
                                 f"t0 + {T}, got {arg}")
            return 0
        k = (val - pr.t0) / pr.duration * (Nn - 1)
        kr = int(round(k))
        if abs(k - kr) > 1e-6 or not 0 <= kr <= Nn - 1:
            raise InputError(f"{what}: the instance time {val} is not a node time "
                             f"(nodes every {pr.duration / (Nn - 1):.6g} from {pr.t0})")
        return kr

    def convert(self, ex: Any, what: str) -> Any:
        ex = sm.sympify(ex)
        rep = {}
        for f in ex.atoms(AppliedUndef):
            if f.args == (_t,):
                raise InputError(f"{what}: {f} is a function of t; give its value at an instant, "
                                 f"e.g. {f.func}(0.0)")
            if f.func not in self.funcs:
                raise InputError(f"{what}: {f.func} is not a state or input of the model")
            kind, j = self.funcs[f.func]
            k = self._node(f.args[0], what)
            key = (kind, j, k)
            if key not in self.slots:
                self.slots[key] = sm.Symbol(f"sbI{len(self.slots)}")
                pt = int(self.nlp.node_points[k])
                self.cols.append(int((self.nlp.iX if kind == "X" else self.nlp.iR)[pt, j]))
            rep[f] = self.slots[key]
        ex = ex.xreplace(rep)
        pr = self.problem
        sub = dict(zip(pr.unknown_parameters, self.mdl.ph["P"]))
        sub.update({k: sm.Float(v) for k, v in pr.known_parameters.items()})
        H = sm.Symbol("sbH")
        if pr.duration_symbol is not None:
            sub[pr.duration_symbol] = (pr.num_nodes - 1) * H
        ex = ex.xreplace(sub)
        allowed = set(self.slots.values()) | set(self.mdl.ph["P"]) | {H}
        bad = [s for s in ex.free_symbols if s not in allowed]
        if bad:
            raise InputError(f"{what} depends on {bad[0]}, which is not an instance value, an "
                             "unknown parameter or the duration")
        return ex

    def variables(self) -> list:
        self._frozen = (list(self.slots.values()), list(self.cols))
        return [se.Symbol(s.name) for s in self._frozen[0]] + \
            [se.Symbol(p.name) for p in self.mdl.ph["P"]] + [se.Symbol("sbH")]

    def idx(self) -> np.ndarray:
        return np.array(self._frozen[1] + list(self.nlp.ip) + [self.nlp.ih], dtype=np.intp)[None, :]
