"""Assembly on one branch: each case's dependent coordinates by continuation from the nearest
case already solved (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...compilation import NumericModel
from ...errors import InputError
from ..initial_state import assembly_branch as _branch_sign
from ..initial_state import continue_assembly
from .cases import _merge, _split_case
from .runs import _SweepSettings


@dataclass
class _Prepared:
    x: np.ndarray          # the case's state guess (state_array)
    P: np.ndarray          # its constants
    own_guess: bool        # the case gives its own dependent coordinates (or a whole x0)


def _prepare(model: NumericModel, case: Mapping, settings: _SweepSettings,
             base: tuple | None) -> _Prepared | None:
    """The case's state guess and constants as arrays (None when they are not valid: the
    run then reports why).  ``base``: (x, P) arrays of the base x0 and p, when valid."""
    try:
        xs, ps, _, groups = _split_case(model, case)
        if base is not None and "x0" not in groups and "p" not in groups:
            x, P = base[0].copy(), base[1].copy()
            index = base[2]
            for sym, v in xs.items():
                x[index[sym]] = float(v)
            for sym, v in ps.items():
                P[index[sym]] = float(v)
            if not (np.isfinite(x).all() and np.isfinite(P).all()):
                return None
        else:
            x_case = _merge(model, groups.get("x0", settings.x0), xs, "initial state x0", model.states)
            p_case = _merge(model, groups.get("p", settings.p), ps, "constants p", model.constants)
            x = model.state_array(x_case)
            P = model.constants_array(p_case)
    except Exception:      # the run reports it (with the same message) in the table
        return None
    dep = set(model.dependent_coordinates)
    own = "x0" in groups or any(s in dep for s in xs)
    return _Prepared(x, P, own)


def _assemble(model: NumericModel, cases: list, settings: _SweepSettings, t0: float,
              branch_from: Any) -> tuple[list, list, list]:
    """(initial states, branch signs, branch_ok flags) per case; see the module docstring."""
    n_cases = len(cases)
    try:
        index = {s: k for k, s in enumerate(model.states)}
        index.update({s: k for k, s in enumerate(model.constants)})
        base = (model.state_array(settings.x0), model.constants_array(settings.p), index)
    except Exception:
        base = None
    prepared = [_prepare(model, c, settings, base) for c in cases]
    states: list = [None if pr is None else pr.x for pr in prepared]
    if not model.M:
        return states, [None] * n_cases, [None] * n_cases
    n = model.n
    root = None                          # (q, P) of the branch's defining state
    independent = isinstance(branch_from, str) and branch_from == "independent"
    if not independent:
        ref = settings.x0 if branch_from is None or isinstance(branch_from, str) else branch_from
        try:
            P_root = model.constants_array(settings.p)
        except Exception:
            P_root = next((pr.P for pr in prepared if pr is not None), None)
        if ref is not None and P_root is not None:
            try:
                root = (model.consistent_state(ref, P_root, t0)[:model.N], P_root)
            except Exception as exc:
                if branch_from is not None and not isinstance(branch_from, str):
                    raise InputError(f"assembly_branch: the state could not be assembled: {exc}") from exc
    method = ["none"] * n_cases
    qs: list = [None] * n_cases
    signs: list = [None] * n_cases

    def by_newton(i: int) -> None:
        pr = prepared[i]
        try:
            qs[i] = model.consistent_state(pr.x, pr.P, t0)[:model.N]
            method[i] = "given"
        except Exception:
            pass

    todo = [i for i, pr in enumerate(prepared) if pr is not None]
    follow = [i for i in todo if not prepared[i].own_guess] if not independent else []
    for i in set(todo) - set(follow):
        by_newton(i)
    while follow and root is None:       # no base state: the first case solved defines it
        i = follow.pop(0)
        by_newton(i)
        if qs[i] is not None:
            root = (qs[i], prepared[i].P)
    if follow:
        # Prim's order: always the unsolved case nearest (in scaled q_ind and constants) to a
        # solved one, continued from that one
        V = np.array([np.concatenate([prepared[i].x[:n], prepared[i].P]) for i in follow])
        v_root = np.concatenate([root[0][:n], root[1]])
        span = np.ptp(np.vstack([V, v_root]), axis=0)
        w = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)
        seeds: list = [(root[0], root[1], _branch_sign(model, root[0], root[1], t0))]
        dist = np.sqrt((((V - v_root) * w) ** 2).sum(axis=1))
        parent = np.zeros(len(follow), dtype=int)
        left = np.ones(len(follow), dtype=bool)
        for _ in range(len(follow)):
            k = int(np.argmin(np.where(left, dist, np.inf)))
            left[k] = False
            i = follow[k]
            q_from, P_from, sign_from = seeds[parent[k]]
            q = continue_assembly(model, q_from, P_from, prepared[i].x[:n], prepared[i].P, t0,
                                  branch=sign_from)
            if q is None:
                by_newton(i)
                if method[i] == "given":
                    method[i] = "fallback"
                continue
            qs[i], method[i] = q, "continued"
            signs[i] = _branch_sign(model, q, prepared[i].P, t0)
            seeds.append((q, prepared[i].P, signs[i]))
            d_new = np.sqrt((((V - V[k]) * w) ** 2).sum(axis=1))
            closer = left & (d_new < dist)
            dist[closer] = d_new[closer]
            parent[closer] = len(seeds) - 1
    ref_branch = _branch_sign(model, root[0], root[1], t0) if root is not None else None
    ok: list = [None] * n_cases
    for i in range(n_cases):
        if qs[i] is None:
            if prepared[i] is not None:
                ok[i] = False
            continue
        x = prepared[i].x.copy()
        x[:model.N] = qs[i]
        states[i] = x
        if signs[i] is None:
            signs[i] = _branch_sign(model, qs[i], prepared[i].P, t0)
        if ref_branch is None:
            ref_branch = signs[i]
        ok[i] = bool(signs[i] == ref_branch and method[i] != "fallback")
    return states, signs, ok

