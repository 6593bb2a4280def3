"""Exact sparse first and second derivatives of one symbolic block, compiled once.

A *block* is a small vector function ``F(v; a)`` of ``n_v`` local unknowns ``v`` and
``n_a`` numeric arguments ``a`` (known constants, the node's time fraction, a quadrature
weight).  A transcription writes every constraint and every objective term of the NLP as
a few blocks, each evaluated at many rows (one row per node, midpoint or interval):

    F_r = F(v_r; a_r),   v_r = w[idx_r]          r = 0 .. R-1

with ``idx`` (R, n_v) the global positions of the local unknowns in the NLP vector ``w``
(positions ``>= len(w)`` address fixed values, e.g. a fixed interval).  Differentiated
once symbolically (symengine), the block gives

- the Jacobian nonzeros ``dF_i/dv_j`` at the structurally nonzero ``(i, j)``, and
- the lower triangle of the Hessian of ``sum_i mu_i F_i`` in ``v`` (``mu``: the NLP's
  constraint multipliers or the objective factor),

each as one compiled kernel (:func:`symbody.compilation.codegen.compile_kernel`, cached on
disk by the structure of the expressions) evaluated for all rows in one call
(``Kernel.many``: ``(R, nargs) -> (R, nout)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import symengine as se
import sympy as sm

from ..compilation.codegen import compile_kernel

__all__ = ["BlockDerivatives", "BlockPlacement"]


class BlockDerivatives:
    """Compiled values, Jacobian and Hessian of ``F(v; a)``.

    ``variables``: the local unknowns v (symengine Symbols, n_v); ``arguments``: the numeric
    arguments a (symengine Symbols, n_a); ``outputs``: F (symengine expressions, n_f).
    Attributes: ``jac_rows``, ``jac_cols`` (nnz_J,) the local structure of dF/dv;
    ``hess_rows``, ``hess_cols`` (nnz_H,) with ``hess_rows >= hess_cols``.
    """

    def __init__(self, name: str, variables: Sequence, arguments: Sequence, outputs: Sequence,
                 hessian: bool = True, backend: str = "auto", cache: bool = True) -> None:
        self.name = name
        self.variables = list(variables)
        self.arguments = list(arguments)
        self.outputs = [se.sympify(f) for f in outputs]
        self.n_v, self.n_a, self.n_f = len(self.variables), len(self.arguments), len(self.outputs)
        jac_exprs, jr, jc = [], [], []
        for i, f in enumerate(self.outputs):
            free = f.free_symbols
            for j, v in enumerate(self.variables):
                if v in free:
                    d = f.diff(v)
                    if d != 0:
                        jac_exprs.append(d)
                        jr.append(i)
                        jc.append(j)
        self.jac_rows = np.array(jr, dtype=np.intp)
        self.jac_cols = np.array(jc, dtype=np.intp)
        mu = [se.Symbol(f"_mu{i}") for i in range(self.n_f)]
        self.multipliers = mu
        hess_exprs, hr, hc = [], [], []
        if hessian:
            # grad of L = sum_i mu_i F_i from the Jacobian entries already formed
            grad: dict[int, Any] = {}
            for e, i, j in zip(jac_exprs, jr, jc):
                grad[j] = grad.get(j, 0) + mu[i] * e
            for j in sorted(grad):
                g = grad[j]
                free = g.free_symbols
                for k in range(j + 1):
                    v = self.variables[k]
                    if v in free:
                        d = g.diff(v)
                        if d != 0:
                            hess_exprs.append(d)
                            hr.append(j)
                            hc.append(k)
        self.hess_rows = np.array(hr, dtype=np.intp)
        self.hess_cols = np.array(hc, dtype=np.intp)
        to_sp = [sm.Symbol(s.name) for s in self.variables + self.arguments]
        mu_sp = [sm.Symbol(s.name) for s in mu]
        self._values = compile_kernel(to_sp, self.outputs, backend=backend, cache=cache,
                                      name=f"{name}_values")
        self._jacobian = compile_kernel(to_sp, jac_exprs, backend=backend, cache=cache,
                                        name=f"{name}_jacobian")
        self._hessian = (compile_kernel(to_sp + mu_sp, hess_exprs, backend=backend, cache=cache,
                                        name=f"{name}_hessian") if hessian else None)

    def values(self, Z: np.ndarray) -> np.ndarray:
        """``Z`` (R, n_v + n_a) -> F (R, n_f)."""
        return self._values.many(Z)

    def jacobian(self, Z: np.ndarray) -> np.ndarray:
        """``Z`` (R, n_v + n_a) -> Jacobian nonzeros (R, nnz_J) in ``jac_rows/jac_cols`` order."""
        return self._jacobian.many(Z)

    def hessian(self, Z: np.ndarray, MU: np.ndarray) -> np.ndarray:
        """``Z`` (R, n_v + n_a), ``MU`` (R, n_f) -> lower-triangle nonzeros (R, nnz_H)."""
        return self._hessian.many(np.hstack([Z, MU]))


class BlockPlacement:
    """A block evaluated at R rows: where its unknowns, arguments and outputs live.

    ``idx`` (R, n_v): positions of the local unknowns in the extended vector
    ``[w, fixed values]`` (``>= n_w``: a fixed value, no derivative taken);
    ``args`` (R, n_a): the numeric arguments; ``rows`` (R, n_f): the NLP constraint rows of
    the outputs, or None for an objective block (its outputs are summed).
    """

    def __init__(self, block: BlockDerivatives, idx: np.ndarray, args: np.ndarray,
                 rows: np.ndarray | None, n_w: int) -> None:
        self.block = block
        self.idx = np.asarray(idx, dtype=np.intp).reshape(-1, block.n_v)
        R = self.idx.shape[0]
        self.args = np.asarray(args, dtype=float).reshape(R, block.n_a)
        self.rows = None if rows is None else np.asarray(rows, dtype=np.intp).reshape(R, block.n_f)
        self.n_w = n_w
        self.R = R
        Z = np.empty((R, block.n_v + block.n_a))
        Z[:, block.n_v:] = self.args
        self._Z = Z
        # Jacobian entries whose column is an unknown of the NLP
        cols = self.idx[:, block.jac_cols]                       # (R, nnz_J)
        self.jac_mask = cols < n_w
        self.jac_global_cols = cols[self.jac_mask]
        if self.rows is not None:
            self.jac_global_rows = self.rows[:, block.jac_rows][self.jac_mask]
        hr = self.idx[:, block.hess_rows]
        hc = self.idx[:, block.hess_cols]
        self.hess_mask = (hr < n_w) & (hc < n_w)
        self._jac_all = bool(self.jac_mask.all())
        self._hess_all = bool(self.hess_mask.all())
        a, b = hr[self.hess_mask], hc[self.hess_mask]
        self.hess_global_rows = np.maximum(a, b)
        self.hess_global_cols = np.minimum(a, b)

    def gather(self, w_ext: np.ndarray) -> np.ndarray:
        self._Z[:, :self.block.n_v] = w_ext[self.idx]
        return self._Z

    def values(self, w_ext: np.ndarray) -> np.ndarray:
        return self.block.values(self.gather(w_ext))

    def jacobian(self, w_ext: np.ndarray) -> np.ndarray:
        """The Jacobian nonzeros at NLP unknowns, in ``jac_global_rows/cols`` order."""
        J = self.block.jacobian(self.gather(w_ext))
        return J.ravel() if self._jac_all else J[self.jac_mask]

    def hessian(self, w_ext: np.ndarray, MU: np.ndarray) -> np.ndarray:
        H = self.block.hessian(self.gather(w_ext), MU)
        return H.ravel() if self._hess_all else H[self.hess_mask]
