"""The planar hopper's hop (:func:`symbody.optimize.examples.hopper_hop`) written by hand in
CasADi: an independent copy of the problem for tests/optimize/test_contact_optimize.py and
benchmarks/bench_contact_optimize.py.

The equations of motion come from Lagrange's equations through CasADi's differentiation of
T and V (not symbody's Kane equations); the smooth Hunt-Crossley force and the smooth
Coulomb friction are typed in from their formulas (symbody.contact.smooth_normal,
symbody.contact.friction); the Hermite-Simpson transcription (the state derivatives unknowns
at every point, the defects, Simpson's quadrature of the cost) from
symbody.optimize.transcription's description.  Unknowns and rows in symbody's order, so the
two NLPs compare entry by entry.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hopper_dynamics", "transcription", "hand_written", "symbody_columns"]


def hopper_dynamics(constants: dict, inputs: tuple = ("F", "tau")):
    """Φ(x, v, r) = [v_q - u; M(q) v_u + c(q, u) + ∂V/∂q - Q(q, u, r)] of the planar hopper
    by Lagrange's equations in CasADi (q = x, y, θ, φ, l; u = q'; r = the inputs F, τ in the
    order of their names ``inputs``); returns a casadi.Function of (x (10), v (10), r (2))."""
    import casadi as ca
    c = {str(k): float(v) for k, v in constants.items()}
    M, I, mf, g, k, damp, mu = (c[n] for n in ("M", "I", "m_f", "g", "k", "c", "mu"))
    eps_depth, eps_rate, eps_slip = 1e-3, 1e-2, 0.05          # planar_hopper's scales
    X, V, R = ca.SX.sym("x", 10), ca.SX.sym("v", 10), ca.SX.sym("r", 2)
    q, u, a = X[:5], X[5:], V[5:]
    x, y, theta, phi, length = (q[i] for i in range(5))
    F, tau = R[inputs.index("F")], R[inputs.index("tau")]
    angle = theta + phi
    foot = ca.vertcat(x + length * ca.sin(angle), y - length * ca.cos(angle))
    foot_jacobian = ca.jacobian(foot, q)
    foot_velocity = foot_jacobian @ u
    kinetic = (M * (u[0] ** 2 + u[1] ** 2) + I * u[2] ** 2 + mf * ca.sumsqr(foot_velocity)) / 2
    potential = g * (M * y + mf * foot[1])

    def positive(s, scale):                 # the smooth positive part (s + sqrt(s² + ε²))/2
        return (s + ca.sqrt(s ** 2 + scale ** 2)) / 2

    normal = k * positive(-foot[1], eps_depth) ** 1.5 \
        * positive(1 + 1.5 * damp * (-foot_velocity[1]), eps_rate)
    slip = foot_velocity[0]
    friction = -normal * mu * slip / ca.sqrt(slip ** 2 + eps_slip ** 2)
    Q = ca.vertcat(0, 0, 0, tau, F) + foot_jacobian.T @ ca.vertcat(friction, normal)
    p = ca.gradient(kinetic, u)
    lagrange = ca.jacobian(p, u) @ a + ca.jacobian(p, q) @ u - ca.gradient(kinetic, q) \
        + ca.gradient(potential, q) - Q
    return ca.Function("phi", [X, V, R], [ca.vertcat(V[:5] - u, lagrange)])


def transcription(problem, Xp, Rp, Vp, rise: float, stride: float):
    """The hop's Hermite-Simpson NLP from the points' states ``Xp``, inputs ``Rp`` and state
    derivatives ``Vp`` (lists of CasADi vectors, SX or MX): (cost, the equality rows in
    symbody's order, the bounds as (list, index, lower, upper))."""
    import casadi as ca
    N, T = problem.num_nodes, float(problem.duration)
    h, P = T / (N - 1), 2 * (N - 1) + 1
    inputs = tuple(r.func.__name__ for r in problem.specifieds)      # symbody's order
    iF, itau = inputs.index("F"), inputs.index("tau")
    phi = hopper_dynamics(problem.known_parameters, inputs)
    rows = [phi(Xp[j], Vp[j], Rp[j]) for j in range(P)]
    for i in range(N - 1):
        k0, kc, k1 = 2 * i, 2 * i + 1, 2 * i + 2
        rows.append(Xp[kc] - (Xp[k0] + Xp[k1]) / 2 - h / 8 * (Vp[k0] - Vp[k1]))
        rows.append(Xp[k1] - Xp[k0] - h / 6 * (Vp[k0] + 4 * Vp[kc] + Vp[k1]))
    # the instance constraints: standing at rest at t = 0; at the end the mass centre's
    # height and vertical speed, the hip's x
    start = np.array(_start_state())
    c = {str(k): float(v) for k, v in problem.known_parameters.items()}
    M, mf = c["M"], c["m_f"]

    def centre(x):
        return (M * x[1] + mf * (x[1] - x[4] * ca.cos(x[2] + x[3]))) / (M + mf)

    xe = Xp[-1]
    angle = xe[2] + xe[3]
    speed = (M * xe[6] + mf * (xe[6] - xe[9] * ca.cos(angle)
                                + xe[4] * ca.sin(angle) * (xe[7] + xe[8]))) / (M + mf)
    rows += [Xp[0] - start, centre(xe) - (float(centre(ca.DM(start))) + rise), speed,
             xe[0] - stride]
    bounds = [("x", 4, 0.3, 0.8), ("x", 3, -1.0, 1.0), ("x", 2, -0.5, 0.5),
              ("r", itau, -100.0, 100.0), ("r", iF, -500.0, 1500.0)]
    weights = np.full(P, 4.0 / 6.0)
    weights[0::2] = 2.0 / 6.0
    weights[0] = weights[-1] = 1.0 / 6.0
    cost = h * sum(weights[j] * ((Rp[j][iF] / 100) ** 2 + (Rp[j][itau] / 10) ** 2)
                   for j in range(P))
    return cost, rows, bounds


def hand_written(problem, guess, rise: float = 0.25, stride: float = 0.0):
    """The hop (``rise``, ``stride`` as in hopper_hop) in CasADi SX, unknowns (point by point:
    x (10), r (2), v (10)) and rows in symbody's order; returns (w, f, g, lbx, ubx, w0), w0
    symbody's initial vector of ``guess`` in this order."""
    import casadi as ca
    P = problem.nlp.iX.shape[0]
    w = ca.SX.sym("w", 22 * P)
    Z = [w[22 * j:22 * (j + 1)] for j in range(P)]
    cost, rows, bounds = transcription(problem, [z[:10] for z in Z], [z[10:12] for z in Z],
                                       [z[12:] for z in Z], rise, stride)
    lbx, ubx = np.full(22 * P, -np.inf), np.full(22 * P, np.inf)
    for part, i, lo, hi in bounds:
        cols = 22 * np.arange(P) + (i if part == "x" else 10 + i)
        lbx[cols], ubx[cols] = lo, hi
    w0 = problem.initial_vector(guess)[symbody_columns(problem)]
    return w, cost, ca.vertcat(*rows), lbx, ubx, w0


def _start_state():
    from symbody.models import planar_hopper
    model = planar_hopper()
    return [model.initial_state[s] for s in (*model.eom.q, *model.eom.u)]


def symbody_columns(problem) -> np.ndarray:
    """symbody's columns of the hand-written unknowns (point by point: x, r, v)."""
    nlp = problem.nlp
    return np.concatenate([np.concatenate([nlp.iX[j], nlp.iR[j], nlp.iV[j]])
                           for j in range(nlp.iX.shape[0])])
