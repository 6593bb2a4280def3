"""The derivatives of a tree's forward dynamics as one emitted program (one-speed joints).

With τ = ID(q, u, u') the inverse dynamics and u' = FD(q, u, τ) its inverse, the
implicit-function theorem gives (Carpentier and Mansard, RSS 2018; Pinocchio's
``computeABADerivatives``)::

    ∂u'/∂τ = M⁻¹,   ∂u'/∂q = -M⁻¹ ∂τ/∂q,   ∂u'/∂u = -M⁻¹ ∂τ/∂u      (at u' = FD(q, u, τ))

Every stage is written out here as expressions with the robot's constants folded, so the
compiler makes one straight-line kernel of (q, u, τ): u' by the articulated-body recursion
(:mod:`.articulated_body`), ∂τ/∂q and ∂τ/∂u by the emitted RNEA derivatives at that u'
(:mod:`.rnea_derivatives`), M⁻¹ column by column by the same recursion's response to unit
forces (O(n) each: O(n²) in all, only the lower triangle emitted), and the two products
-M⁻¹ D with D's structural zeros (entries of unrelated joints) folded away.  No
factorization is left to run time.
"""

from __future__ import annotations

from dataclasses import dataclass

import symengine as se

from .articulated_body import ArticulatedBody
from .dynamics import ZERO, num
from .rnea_derivatives import rnea_derivatives
from .spatial import SYMENGINE, interned_sums
from .tree import KinematicTree

__all__ = ["AbaDerivatives", "ForwardDerivativeTerms", "aba_derivatives", "forward_derivative_terms"]


@dataclass
class AbaDerivatives:
    """In tree order (o speeds), nested lists of symengine expressions: ``udot`` (o),
    ``dudot_dq`` (o x o, columns the coordinates' tangents in the speeds' order),
    ``dudot_du`` (o x o), ``inverse_mass`` (o x o, symmetric)."""

    udot: list
    dudot_dq: list
    dudot_du: list
    inverse_mass: list


def _inverse_mass(body: ArticulatedBody, o: int) -> list:
    """M⁻¹ by columns: column j is the response u' to a unit force on speed j alone (no
    velocity, no gravity); entry (i, j) taken from column min(i, j), so only the lower
    triangle of each column is kept in the program."""
    box = SYMENGINE.box
    one = se.Integer(1)
    cols = []
    for j in range(o):
        tau = [ZERO] * o
        tau[j] = one
        cols.append([box(x) for x in body.inverse_mass_times(tau)])
    return [[cols[min(i, j)][max(i, j)] for j in range(o)] for i in range(o)]


def _minus_product(A: list, D: list) -> list:
    """-A D for o x o nested lists, the exact zeros of D skipped."""
    o = len(A)
    box = SYMENGINE.box
    nonzero = [[k for k in range(o) if D[k][c] != 0] for c in range(o)]
    Db = [[box(x) for x in row] for row in D]
    return [[-sum((A[i][k] * Db[k][c] for k in nonzero[c]), ZERO) for c in range(o)]
            for i in range(o)]


@dataclass
class ForwardDerivativeTerms:
    """The right-hand sides of the implicit-function identity, in tree order: ``udot`` (o,
    u' by the articulated-body recursion, boxed), ``dtau_dq``, ``dtau_du`` (o x o, ∂τ/∂x at
    that u', the joints' damping included in ∂τ/∂u), ``mass`` (o x o, M(q)), and ``body``
    (the recursion, for M⁻¹'s unit responses)."""

    udot: list
    dtau_dq: list
    dtau_du: list
    mass: list
    body: ArticulatedBody | None
    #: M = Lᵀ D L when u' came from the tree-sparse solve: {(k, j): L_kj for j an ancestor
    #: of k, D_k at (k, k)} (the factor the same kernel forms for u')
    factor: dict | None = None


def _tree_solve(M: list, rhs: list, parent: list) -> tuple[list, dict]:
    """M⁻¹ rhs as expressions, by the tree-sparse M = Lᵀ D L along ``parent`` (λ(i) < i,
    -1 at the root; Featherstone's LTDL): O(n d²) operations for a tree of depth d; and the
    factor {(k, j): L_kj (j an ancestor of k), D_k at (k, k)}."""
    box, n = SYMENGINE.box, len(rhs)
    H = {}
    for k in range(n):
        j = k
        while j >= 0:
            H[k, j] = box(M[k][j])
            j = parent[j]
    for k in range(n - 1, -1, -1):
        inv = box(1 / H[k, k])
        i = parent[k]
        while i >= 0:
            a = box(H[k, i] * inv)
            j = i
            while j >= 0:
                H[i, j] = box(H[i, j] - a * H[k, j])
                j = parent[j]
            H[k, i] = a
            i = parent[i]
    y = list(rhs)
    for i in range(n - 1, -1, -1):
        y[i] = box(y[i])
        j = parent[i]
        while j >= 0:
            y[j] = y[j] - H[i, j] * y[i]
            j = parent[j]
    x = [box(y[i] / H[i, i]) for i in range(n)]
    for i in range(n):
        j = parent[i]
        while j >= 0:
            x[i] = x[i] - H[i, j] * x[j]
            j = parent[j]
        x[i] = box(x[i])
    return x, H


def forward_derivative_terms(tree: KinematicTree, q: list, u: list, tau: list, gravity: tuple,
                             inertias: list, floating: bool, damping: dict | None = None,
                             friction: dict | None = None,
                             parent: list | None = None) -> ForwardDerivativeTerms:
    """u' = FD(q, u, τ) and ∂τ/∂q, ∂τ/∂u, M at it (arguments as :func:`aba_derivatives`),
    O(n d) expressions: what the products -M⁻¹ ∂τ/∂x are made of.  ``parent``: each speed's
    parent speed (one-speed joints): u' then solves M u' = τ - b(q, u) by the tree-sparse
    Lᵀ D L of the M the RNEA derivatives form anyway (no articulated-body recursion; ``body``
    None; ``factor`` that Lᵀ D L), else u' by the articulated-body recursion."""
    with interned_sums():     # the two formations share one DAG (see interned_sums)
        return _forward_derivative_terms(tree, q, u, tau, gravity, inertias, floating,
                                         damping or {}, friction or {}, parent)


def _forward_derivative_terms(tree, q, u, tau, gravity, inertias, floating, damping, friction,
                              parent) -> ForwardDerivativeTerms:
    Q = list(tau)
    for k, d in damping.items():
        Q[k] = Q[k] - num(d) * u[k]
    for k, f in friction.items():
        Q[k] = Q[k] - num(f) * se.sign(u[k])
    if parent is not None:
        zero = rnea_derivatives(tree, q, u, [ZERO] * len(u), gravity, inertias, floating)
        body = None
        udot, factor = _tree_solve(zero.mass, [Q[k] - zero.tau[k] for k in range(len(u))], parent)
    else:
        body, factor = ArticulatedBody(tree, q, u, gravity, inertias, floating), None
        udot = [SYMENGINE.box(x) for x in body.accelerations(Q)]
    d = rnea_derivatives(tree, q, u, udot, gravity, inertias, floating)
    du = [list(row) for row in d.dtau_du]
    for k, c in damping.items():
        du[k][k] = du[k][k] + num(c)
    return ForwardDerivativeTerms(udot, d.dtau_dq, du, d.mass, body, factor)


def aba_derivatives(tree: KinematicTree, q: list, u: list, tau: list, gravity: tuple,
                    inertias: list, floating: bool, damping: dict | None = None,
                    friction: dict | None = None) -> AbaDerivatives:
    """u' = FD(q, u, τ) and its derivatives (see the module docstring).

    ``q``, ``u``, ``tau``: expressions in tree order (the free-flyer's 7 and 6 first; its six
    forces (force, moment) in its frame); ``gravity``, ``inertias``, ``floating`` as
    :func:`.rnea_derivatives.rnea_derivatives`; ``damping``, ``friction``: {tree speed index:
    coefficient} of the joints' D u and F sign(u), which the generalized forces lose
    (Q = τ - D u - F sign(u), so ∂u'/∂u gains -M⁻¹ D).  The products are O(n³) written out:
    for small trees (``robot.forward_dynamics_derivatives`` takes it up to 18 speeds; above,
    :func:`forward_derivative_terms` and the tree-sparse solve of :mod:`.dynamics_derivatives`).
    """
    t = forward_derivative_terms(tree, q, u, tau, gravity, inertias, floating, damping, friction)
    Minv = _inverse_mass(t.body, len(u))
    return AbaDerivatives(t.udot, _minus_product(Minv, t.dtau_dq), _minus_product(Minv, t.dtau_du),
                          Minv)
