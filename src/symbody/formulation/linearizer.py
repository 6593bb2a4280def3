"""``KanesMethod.to_linearizer()``: symbody's object with the public interface of SymPy's
``Linearizer``, linearizing with symbody's own symbolic linearization.

SymPy's ``Linearizer`` holds the equations in the general form of Peterson, Gede and Hubbard
(2015)::

    f_c(q) = 0,  f_v(q, u) = 0,  f_a(q, u, u') = 0,
    f_0(q, q') + f_1(q, u) = 0,  f_2(q, u') + f_3(q, u, r) + f_4(q, lam) = 0

and ``linearize(op_point=..., A_and_B=..., simplify=...)`` returns ``(M, A, B)`` of
``M [q'; u'] = A [q_ind; u_ind] + B r`` or, with ``A_and_B=True``, ``(A, B)`` of
``[q_ind'; u_ind'] = A [q_ind; u_ind] + B r``.  :class:`Linearizer` shows the same
matrices (f_0 ... f_4, f_c, f_v, f_a, q, u, q_i, q_d, u_i, u_d, r, lams, perm_mat) and
returns the same results, computed by
:func:`~symbody.formulation.symbolic_linearization.linearize_kane` from the method's
:meth:`~symbody.KanesMethod.to_linearizer_data` (the unreduced equations of ``to_eom()``),
not by SymPy's class.  The f_* are the method's equations as SymPy writes them, for
reading; ``linearize`` always linearizes the method's equations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy as sm

from .linearization_data import KaneLinearizationData

__all__ = ["Linearizer"]


def _column(xs: Any) -> sm.Matrix:
    return sm.Matrix(list(xs)) if xs is not None and len(xs) else sm.Matrix()


class Linearizer:
    """The linearizer of a formed :class:`~symbody.KanesMethod` (``km.to_linearizer()``).

    Attributes (SymPy matrices, as SymPy's ``Linearizer``): ``f_0`` (N x 1, K_qd q'),
    ``f_1`` (N x 1, K_u u + k), ``f_2`` (p x 1, the u' part of Fr*), ``f_3`` (p x 1,
    Fr + the rest of Fr*), ``f_4`` (p x 1, zeros: Kane's method has no multipliers),
    ``f_c`` (M x 1), ``f_v`` (m x 1, B u + b), ``f_a`` (m x 1, B_a u' + b_a), ``q``, ``u``,
    ``q_i``, ``q_d``, ``u_i``, ``u_d``, ``r`` (the specified inputs, sorted canonically),
    ``lams`` (empty), ``perm_mat`` (the permutation with [q_ind; u_ind] = perm_mat^T [q; u]),
    ``linear_solver``.
    """

    def __init__(self, data: KaneLinearizationData, forms: dict[str, sm.MatrixBase], r: Sequence,
                 linear_solver: str | Callable = "LU") -> None:
        self._data = data
        self.linear_solver = linear_solver
        for name in ("f_0", "f_1", "f_2", "f_3", "f_4", "f_c", "f_v", "f_a"):
            setattr(self, name, sm.Matrix(forms[name]))
        self.q, self.u = _column(data.q), _column(data.u)
        self.q_i, self.q_d = _column(data.q_ind), _column(data.q_dep)
        self.u_i, self.u_d = _column(data.u_ind), _column(data.u_dep)
        self.r = _column(r)
        self.lams = sm.Matrix()
        order = list(self.q) + list(self.u)
        ind = list(self.q_i) + list(self.u_i)
        self.perm_mat = sm.zeros(len(order), len(ind))
        for j, x in enumerate(ind):
            self.perm_mat[order.index(x), j] = 1

    def linearize(self, op_point: dict | Sequence[dict] | None = None, A_and_B: bool = False,
                  simplify: bool = False) -> tuple:
        """Linearize about ``op_point`` (a dict or an iterable of dicts of values for q, u,
        q', u' and constants; what is not given stays symbolic).  Returns ``(M, A, B)``:
        M (N + o square) of ``M [q'; u'] = A [q_ind; u_ind] + B r`` with A of shape
        (N + o, n + p) and B (N + o, s); with ``A_and_B=True`` ``(A, B)`` of
        ``[q_ind'; u_ind'] = A [q_ind; u_ind] + B r`` (A (n + p) square).  B is an empty
        Matrix without inputs.  As SymPy's ``Linearizer.linearize`` (r is ``self.r``)."""
        from .symbolic_linearization import linearize_kane  # loads symengine: not at import
        out = linearize_kane(self._data, op_point=op_point, A_and_B=A_and_B,
                             linear_solver=self.linear_solver, simplify=simplify)
        return out[:-1]

    def __repr__(self) -> str:
        return (f"<symbody Linearizer: {len(self.q)} coordinates ({len(self.q_d)} dependent), "
                f"{len(self.u)} speeds ({len(self.u_d)} dependent), {len(self.r)} inputs>")

