"""The collocation NLP solved by CasADi's IPOPT (``solver="ipopt-casadi"`` and
``"ipopt-casadi-sx"``).

The NLP is symbody's own (:class:`~.transcription.NLP`: the same unknowns, rows, bounds and
blocks); only the IPOPT it runs on is CasADi's (IPOPT 3.14.19 / MUMPS 5.8.2 in CasADi 3.8,
whose linear solves are several times faster than those of cyipopt-wheels' bundled build on
these banded KKT systems; see docs/optimize.md, "Solvers").  Two ways to hand it over:

* ``"ipopt-casadi"`` (:class:`KernelNLP`): symbody's compiled derivative kernels — values,
  the exact sparse Jacobian and the exact Hessian of the Lagrangian, all nodes per call —
  as ``casadi.Callback`` functions given to ``nlpsol`` as ``grad_f``, ``jac_g`` and
  ``hess_lag``; CasADi's buffers are read and written in place (``eval_buffer``), so a
  call costs the kernels and no conversion.  Built in milliseconds for any model.
* ``"ipopt-casadi-sx"`` (:class:`CasadiNLP`): each block ``F(v; a)`` rebuilt as an SX
  function (:func:`symbody.export.casadi_function.sx_expressions`) and mapped over its rows,

      c[start + r n_f + i] = F_i(w_ext[idx[r]]; args[r]),   f = Σ_objective blocks Σ_r F

  so CasADi's algorithmic differentiation forms the Jacobian and Hessian.  Slightly faster
  per iteration on small models (no Python in the loop), but CasADi's Hessian construction
  grows with the model (seconds for the 10-link cart).

The solver object is built once per NLP and options, and kept on it.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..export.casadi_function import import_casadi, sx_expressions

if TYPE_CHECKING:
    from .transcription import NLP

__all__ = ["CASADI_STATUS", "CasadiNLP", "KernelNLP", "casadi_solver"]

#: CasADi's IPOPT return_status -> IPOPT's ApplicationReturnStatus code (solve.IPOPT_STATUS)
CASADI_STATUS = {
    "Solve_Succeeded": 0, "Solved_To_Acceptable_Level": 1, "Infeasible_Problem_Detected": 2,
    "Search_Direction_Becomes_Too_Small": 3, "Diverging_Iterates": 4,
    "User_Requested_Stop": 5, "Feasible_Point_Found": 6, "Maximum_Iterations_Exceeded": -1,
    "Restoration_Failed": -2, "Error_In_Step_Computation": -3,
    "Maximum_CpuTime_Exceeded": -4, "Maximum_WallTime_Exceeded": -5,
    "Not_Enough_Degrees_Of_Freedom": -10, "Invalid_Problem_Definition": -11,
    "Invalid_Option": -12, "Invalid_Number_Detected": -13, "Unrecoverable_Exception": -100,
    "NonIpopt_Exception_Thrown": -101, "Insufficient_Memory": -102, "Internal_Error": -199,
}


class CasadiNLP:
    """The SX form of ``nlp``: ``w`` (n) the unknowns, ``f`` the objective, ``g`` (m) the
    constraints, in the rows of ``nlp`` (``setup_time``: seconds to build them)."""

    def __init__(self, nlp: NLP) -> None:
        t0 = _time.perf_counter()
        ca = self.ca = import_casadi()
        n = nlp.n
        X = ca.SX
        self.w = X.sym("w", n)
        w_ext = ca.vertcat(self.w, X(ca.DM(np.asarray(nlp.w_ext[n:], float))))
        functions: dict[int, Any] = {}

        def mapped(pl: Any) -> Any:
            """(n_f, R) values of a placed block."""
            blk = pl.block
            fn = functions.get(id(blk))
            if fn is None:
                v = ca.SX.sym("v", blk.n_v)
                a = ca.SX.sym("a", blk.n_a)
                leaves = {s.name: v[i] for i, s in enumerate(blk.variables)}
                leaves.update({s.name: a[i] for i, s in enumerate(blk.arguments)})
                out = sx_expressions(blk.outputs, leaves, f"the NLP block {blk.name}")
                fn = ca.Function(f"block_{blk.name}", [v, a], [ca.vertcat(*out)])
                functions[id(blk)] = fn
            V = ca.reshape(w_ext[pl.idx.ravel().tolist()], blk.n_v, pl.R)
            A = ca.DM(pl.args.T) if blk.n_a else ca.DM(0, pl.R)
            return fn.map(pl.R)(V, A)

        rows = [ca.vec(mapped(pl)) for pl, _ in sorted(nlp.constraint_blocks,
                                                         key=lambda item: item[1])]
        self.g = ca.vertcat(*rows) if rows else X(0, 1)
        f = X(0.0)
        for pl in nlp.objective_blocks:
            f = f + ca.sum2(ca.sum1(mapped(pl)))
        self.f = f
        if self.g.shape[0] != nlp.m:
            raise AssertionError(f"CasADi's constraint vector has {self.g.shape[0]} rows, the "
                                 f"NLP {nlp.m}")
        self.setup_time = _time.perf_counter() - t0


def casadi_solver(nlp: NLP, options: dict, derivatives: str = "kernels",
                  progress: bool = False) -> tuple[Any, float]:
    """(``casadi.nlpsol`` over ``nlp`` with IPOPT and ``options``, seconds spent building
    it); kept on ``nlp`` for the same options.  ``derivatives``: "kernels" (symbody's
    compiled kernels through callbacks, :class:`KernelNLP`) or "sx" (the blocks as SX,
    CasADi's AD, :class:`CasadiNLP`).  ``progress``: with an iteration callback calling
    ``nlp.casadi_progress[0](f, g)`` when set (5-10 % of a small problem's solve time, so
    only when the progress is shown)."""
    key = (derivatives, progress, repr(sorted(options.items())))
    cache = nlp.__dict__.setdefault("casadi_solvers", {})
    hit = cache.get(key)
    if hit is not None:
        return hit[0], 0.0
    t0 = _time.perf_counter()
    if derivatives == "kernels":
        form = KernelNLP(nlp)
        opts = dict(options, **form.options)
    else:
        form = nlp.__dict__.get("casadi_sx")
        if form is None:
            form = nlp.__dict__["casadi_sx"] = CasadiNLP(nlp)
        opts = options
    ca = form.ca
    hook = nlp.__dict__.setdefault("casadi_progress", [None])

    def report(w: np.ndarray, f: np.ndarray, g: np.ndarray, *_: Any) -> np.ndarray:
        """Each iteration: ``hook[0](f, g)`` (the solve's progress), 0 = go on."""
        if hook[0] is not None:
            hook[0](float(f[0]), g)
        return np.zeros(1)

    n, m = nlp.n, nlp.m
    dense = ca.Sparsity.dense
    callback = None
    if progress:
        callback = _callback_class(ca)(
            "symbody_progress", [dense(n, 1), dense(1, 1), dense(m, 1), dense(n, 1),
                                 dense(m, 1), ca.Sparsity(0, 1)], [(dense(1, 1), report)])
        opts = dict(opts, iteration_callback=callback)
    solver = ca.nlpsol("symbody_nlp", "ipopt", {"x": form.w, "f": form.f, "g": form.g}, opts)
    cache[key] = (solver, form, callback)
    return solver, _time.perf_counter() - t0


_EMPTY = np.zeros(0)


def _first_arguments(fn: Callable, k: int) -> Callable:
    """``fn`` of the first ``k`` arguments only."""
    return lambda *a: fn(*a[:k])


def _callback_class(ca: Any) -> type:
    """A ``casadi.Callback`` of dense inputs whose outputs (of given sparsities, values in
    CasADi's column-major nonzero order) are computed by one Python function each, only
    when CasADi asks for them."""

    class _Callback(ca.Callback):
        def __init__(self, name: str, sp_in: list, outputs: list,
                     jacobian: list | None = None) -> None:
            ca.Callback.__init__(self)
            self._sp_in = sp_in
            self._sp_out = [sp for sp, _ in outputs]
            self._out = [fn for _, fn in outputs]
            #: the outputs of CasADi's Jacobian of this callback (d out_i / d in_j,
            #: out-major), only needed for the multipliers CasADi computes at the end
            self._jacobian_outputs = jacobian
            self._jacobian_callback = None
            self.construct(name, {"enable_fd": False})

        def get_n_in(self) -> int:
            return len(self._sp_in)

        def get_n_out(self) -> int:
            return len(self._sp_out)

        def get_sparsity_in(self, i: int) -> Any:
            return self._sp_in[i]

        def get_sparsity_out(self, i: int) -> Any:
            return self._sp_out[i]

        def eval(self, args: list) -> list:
            a = [np.asarray(x, dtype=float).ravel() for x in args]
            return [ca.DM(sp, np.asarray(fn(*a), float).tolist())
                    for sp, fn in zip(self._sp_out, self._out)]

        def has_eval_buffer(self) -> bool:
            return True

        def eval_buffer(self, arg: list, res: list) -> int:
            # CasADi's own buffers: inputs read and outputs written in place, no DM copies
            a = [_EMPTY if x is None else np.frombuffer(x, dtype=float) for x in arg]
            for r, fn in zip(res, self._out):
                if r is not None:               # None: an output not asked for
                    np.frombuffer(r, dtype=float)[:] = fn(*a)
            return 0

        def has_jacobian(self) -> bool:
            return self._jacobian_outputs is not None

        def get_jacobian(self, name: str, inames: list, onames: list, opts: dict) -> Any:
            k = len(self._sp_in)
            outs = [(sp, _first_arguments(fn, k)) for sp, fn in self._jacobian_outputs]
            self._jacobian_callback = _Callback(name, self._sp_in + self._sp_out, outs)
            return self._jacobian_callback

    return _Callback


class KernelNLP:
    """``nlp``'s compiled derivative kernels as CasADi functions: ``f`` and ``g`` (MX calls
    of callbacks) and the ``grad_f``, ``jac_g`` and ``hess_lag`` functions ``nlpsol`` takes as
    options, so that CasADi's IPOPT runs on symbody's exact Jacobian and Hessian.

    The Jacobian's nonzeros (``nlp.jacobianstructure()``) and the Hessian's lower triangle
    (``nlp.hessianstructure()``, given to CasADi transposed: its upper triangle) are
    permuted once into CasADi's compressed-column order (``setup_time``: seconds)."""

    def __init__(self, nlp: NLP) -> None:
        t0 = _time.perf_counter()
        ca = self.ca = import_casadi()
        Cb = _callback_class(ca)
        n, m = nlp.n, nlp.m
        dense_n, scalar = ca.Sparsity.dense(n, 1), ca.Sparsity.dense(1, 1)
        dense_m, empty = ca.Sparsity.dense(m, 1), ca.Sparsity(0, 1)
        jr, jc = nlp.jacobianstructure()
        sp_j, perm_j = _ccs(ca, m, n, np.asarray(jr), np.asarray(jc))
        hr, hc = nlp.hessianstructure()
        sp_h, perm_h = _ccs(ca, n, n, np.asarray(hc), np.asarray(hr))   # upper triangle
        f: Callable = lambda w, *_: nlp.objective(w)                      # noqa: E731
        g: Callable = lambda w, *_: nlp.constraints(w)                    # noqa: E731
        grad: Callable = lambda w, *_: nlp.gradient(w)                    # noqa: E731
        jac: Callable = lambda w, *_: nlp.jacobian(w)[perm_j]             # noqa: E731
        none: Callable = lambda *_: _EMPTY                                # noqa: E731
        self.callbacks = [
            Cb("symbody_f", [dense_n, empty], [(scalar, f)],
               [(ca.Sparsity.dense(1, n), grad), (ca.Sparsity(1, 0), none)]),
            Cb("symbody_g", [dense_n, empty], [(dense_m, g)],
               [(sp_j, jac), (ca.Sparsity(m, 0), none)]),
            Cb("symbody_grad_f", [dense_n, empty], [(scalar, f), (dense_n, grad)]),
            Cb("symbody_jac_g", [dense_n, empty], [(dense_m, g), (sp_j, jac)]),
            Cb("symbody_hess_lag", [dense_n, empty, scalar, dense_m],
               [(sp_h, lambda w, p, lf, lg: nlp.hessian(w, lg, float(lf[0]))[perm_h])]),
        ]
        self.w = ca.MX.sym("w", n)
        self.f = self.callbacks[0](self.w, ca.MX(0, 1))
        self.g = self.callbacks[1](self.w, ca.MX(0, 1))
        self.options = {"grad_f": self.callbacks[2], "jac_g": self.callbacks[3],
                        "hess_lag": self.callbacks[4]}
        self.setup_time = _time.perf_counter() - t0


def _ccs(ca: Any, nrow: int, ncol: int, rows: np.ndarray, cols: np.ndarray) -> tuple:
    """(CasADi sparsity of the unique (rows, cols), the permutation taking values in that
    order to CasADi's column-major nonzero order)."""
    order = np.lexsort((rows, cols))
    sp = ca.Sparsity.triplet(nrow, ncol, rows[order].tolist(), cols[order].tolist())
    if sp.nnz() != len(rows):
        raise AssertionError("duplicate entries in a derivative structure")
    return sp, order
