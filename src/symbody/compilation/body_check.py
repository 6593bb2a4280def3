"""Masses and inertias checked against the constants of a run (issue 34): a body whose mass is
not positive, or whose inertia is not positive semidefinite, with the numbers given, is an
InputError naming the body and the constants, before any step is taken.

The bodies come with the equations (``model.eom.body_inertias``, set by ``to_eom`` of the
formulation classes; hand-derived equations and models loaded from files have none).  Their
masses and inertia entries are compiled once per model into one small numpy function of the
constants (``sympy.lambdify``), so a check costs one call per ``simulate``/``linearize``.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef

from ..errors import InputError

__all__ = ["check_body_inertias"]

#: model -> (function of the constants, the bodies it evaluates), or None (nothing to check)
_CHECKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _compiled(model: Any) -> tuple | None:
    """(function of the constants, checks): each check is (kind, body, expression, size) with
    kind "mass", "inertia" (all 9 entries known) or "moment" (one diagonal entry of an
    inertia whose other entries hold symbols that are not constants of the model)."""
    try:
        if model in _CHECKS:
            return _CHECKS[model]
    except TypeError:           # not weak-referenceable: no cache
        pass
    eom = getattr(model, "eom", None)
    bodies = tuple(getattr(eom, "body_inertias", ()) or ())
    constants = tuple(model.constants)
    known = set(constants)

    def determined(e) -> bool:    # by the constants alone (not a function of time, ...)
        e = sm.sympify(e)
        return e.free_symbols <= known and not e.atoms(AppliedUndef, sm.Derivative)

    checks, exprs = [], []
    for b in bodies:
        if determined(b.mass):
            checks.append(("mass", b, b.mass, 1))
            exprs.append(b.mass)
        if b.inertia is None:
            continue
        if all(determined(e) for e in b.inertia):
            checks.append(("inertia", b, b.inertia, 9))
            exprs.extend(b.inertia)
        else:
            for i in range(3):
                if determined(b.inertia[i, i]) and b.inertia[i, i] != 0:
                    checks.append(("moment", b, b.inertia[i, i], 1))
                    exprs.append(b.inertia[i, i])
    entry = None
    if checks:
        entry = (sm.lambdify([list(constants)], exprs, modules="numpy"), tuple(checks))
    try:
        _CHECKS[model] = entry
    except TypeError:
        pass
    return entry


def _given(expr: Any, model: Any, P: np.ndarray) -> str:
    """'m1 = -1' for the constants ``expr`` depends on."""
    index = {c: i for i, c in enumerate(model.constants)}
    syms = sorted(sm.sympify(expr).free_symbols, key=str)
    return ", ".join(f"{s} = {P[index[s]]:g}" for s in syms if s in index)


def check_body_inertias(model: Any, P: np.ndarray) -> None:
    """InputError when a body's mass (m > 0) or central inertia (positive semidefinite: its
    smallest eigenvalue >= -1e-12 times the largest magnitude) is not physical with the
    constants ``P`` (array in ``model.constants`` order); the message names the body, the
    expression and the constants it depends on."""
    entry = _compiled(model)
    if entry is None:
        return
    f, checks = entry
    values = np.asarray(f(np.asarray(P, dtype=float)), dtype=float).ravel()
    k = 0
    for kind, b, expr, size in checks:
        v = values[k:k + size]
        k += size
        given = _given(expr if kind != "inertia" else sum(expr), model, P)
        if kind == "mass" and not (np.isfinite(v[0]) and v[0] > 0):
            raise InputError(f"body {b.name}: its mass {expr} = {v[0]:g}"
                             + (f" with {given}" if given and str(expr) != given.split(" =")[0]
                                else "")
                             + " is not positive; give the constant a positive value")
        if kind == "moment" and not (np.isfinite(v[0]) and v[0] >= 0):
            raise InputError(f"body {b.name}: its central inertia (in its frame) has the diagonal "
                             f"entry {expr} = {v[0]:g} < 0 with {given}: a moment of inertia is "
                             "never negative; check the inertia constants' values")
        if kind == "inertia":
            if not np.all(np.isfinite(v)):
                raise InputError(f"body {b.name}: its inertia is not finite with {given}")
            inertia = v.reshape(3, 3)
            eig = np.linalg.eigvalsh((inertia + inertia.T) / 2)
            if eig[0] < -1e-12 * float(np.max(np.abs(eig))):
                raise InputError(
                    f"body {b.name}: its central inertia (in its frame) has the principal moment "
                    f"{eig[0]:g} < 0 with {given}: it is not positive semidefinite; check the "
                    "inertia constants' values")
