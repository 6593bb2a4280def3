"""Which constraint equations are redundant, by name, at an assembled configuration.

A closed loop's closure equations can be dependent at every configuration the mechanism
reaches while independent almost everywhere else (Bricard's 6R loop: six equations of rank
five; Gruebler counts 0 degrees of freedom, the mechanism has 1).  No symbolic test at a
random point sees that; the rank of the Jacobian ∂f/∂q at a configuration that satisfies
f = 0 does.  :func:`redundant_constraints` evaluates it there and picks a maximal set of
independent equations by column-pivoted QR of (∂f/∂q)ᵀ (greedy on the rows' remaining
norms), so that the equations to leave out of ``KanesMethod`` are named::

    report = redundant_constraints({"loop_x": ..., "axis_y": ...}, q, {q1: 0.0, ..., l: 1.0})
    report.redundant          # ('axis_y',)
    report.rank, report.singular_values

The split of the constraint forces among redundant equations is not unique; symbody's
multipliers where the constraint matrix loses rank are the minimum-norm ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import sympy as sm
from scipy.linalg import qr

from ..errors import InputError

__all__ = ["RedundantConstraints", "redundant_constraints"]


class RedundantConstraints(NamedTuple):
    """The result of :func:`redundant_constraints`."""

    independent: tuple[str, ...]         #: names of a maximal independent set (kept)
    redundant: tuple[str, ...]           #: names of the equations that depend on those
    rank: int                            #: rank of ∂f/∂q at the configuration
    singular_values: np.ndarray          #: of ∂f/∂q, descending (len(equations),)
    residuals: dict                      #: name -> f at the configuration


def redundant_constraints(equations: Mapping[str, sm.Expr] | Sequence[sm.Expr],
                          coordinates: Sequence, values: Mapping, *, tol: float = 1e-9,
                          residual_tol: float = 1e-8) -> RedundantConstraints:
    """Name the redundant equations of ``equations`` (f(q) = 0) at a configuration.

    ``equations``: {name: expression} (or a list, named "f[0]", "f[1]", ...);
    ``coordinates``: the q to differentiate by (N); ``values``: numbers for every symbol
    and coordinate in the equations (a configuration that satisfies them: their residuals
    must be below ``residual_tol``, else InputError naming them).  The rank is the number of
    singular values of ∂f/∂q (k x N) above ``tol`` times the largest.
    """
    if isinstance(equations, Mapping):
        names = [str(k) for k in equations]
        exprs = [sm.sympify(e) for e in equations.values()]
    else:
        exprs = [sm.sympify(e) for e in equations]
        names = [f"f[{i}]" for i in range(len(exprs))]
    if not exprs:
        raise InputError("no equations given")
    q = list(coordinates)
    subs = {k: sm.Float(float(v)) for k, v in values.items()}
    f = sm.Matrix(exprs)
    J = f.jacobian(q)
    try:
        fv = np.array(f.xreplace(subs).evalf(), dtype=float).ravel()
        Jv = np.array(J.xreplace(subs).evalf(), dtype=float)
    except TypeError as exc:
        missing = sorted(map(str, (f.free_symbols | set().union(*(e.atoms(sm.Function) for e in exprs)))
                             - set(subs)))
        raise InputError(f"values must give a number for every symbol of the equations; missing: "
                         f"{', '.join(missing)}") from exc
    residuals = dict(zip(names, fv.tolist()))
    bad = [f"{n}: {r:.3g}" for n, r in residuals.items() if abs(r) > residual_tol]
    if bad:
        raise InputError("the configuration does not satisfy the equations (redundancy is a "
                         "property of configurations on the constraints): " + "; ".join(bad))
    sv = np.linalg.svd(Jv, compute_uv=False)
    rank = int(np.sum(sv > tol * max(float(sv[0]) if sv.size else 0.0, 1e-300)))
    _, _, piv = qr(Jv.T, mode="economic", pivoting=True)
    kept = sorted(int(i) for i in piv[:rank])
    independent = tuple(names[i] for i in kept)
    redundant = tuple(names[i] for i in range(len(names)) if i not in kept)
    return RedundantConstraints(independent, redundant, rank, sv, residuals)
