"""The pendulum swing-up of opty's gallery written by hand in CasADi SX: the NLP that
symbody's ``examples.pendulum_swing_up`` transcribes (tests/optimize/test_same_nlp.py checks
that they are the same; benchmarks/bench_same_nlp.py compares IPOPT's paths on them)."""

from __future__ import annotations

import numpy as np


def swing_up_nlp(order: str, nodes: int, duration: float):
    """(w, f, g, lbx, ubx) of the swing-up: θ' = ω, ω' = -9.81 sin θ + T (I = m = d = 1),
    backward Euler on ``nodes`` nodes over ``duration``, cost h Σ_{k>=1} T_k², |T| <= 2, at
    rest hanging at t = 0 and upright at the end.  ``order``: "symbody" (w node by node
    [θ, ω, T], the defects interval by interval) or "opty" (all θ, all ω, all T; the
    kinematic defects, then the dynamic ones).  w: SX (3 nodes,), g: the defects then the
    four end conditions."""
    import casadi as ca

    N, h = nodes, duration / (nodes - 1)
    w = ca.SX.sym("w", 3 * N)
    Z = ca.reshape(w, N, 3).T if order == "opty" else ca.reshape(w, 3, N)
    th, om, T = Z[0, :], Z[1, :], Z[2, :]
    kin = (th[1:] - th[:-1]) / h - om[1:]
    dyn = (om[1:] - om[:-1]) / h + 9.81 * ca.sin(th[1:]) - T[1:]
    rows = ca.horzcat(kin, dyn).T if order == "opty" else ca.vec(ca.vertcat(kin, dyn))
    g = ca.vertcat(rows, th[0], th[-1] - np.pi, om[0], om[-1])
    f = h * ca.sumsqr(T[1:])
    bound = np.array([np.inf, np.inf, 2.0])
    ub = np.repeat(bound, N) if order == "opty" else np.tile(bound, N)
    return w, f, g, -ub, ub
