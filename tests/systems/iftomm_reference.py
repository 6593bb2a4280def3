"""Independent reference solutions of the IFToMM benchmark problems A01, A02, A04, A05.

Nothing here calls symbody: the references are exact (A01, A02) or come from another
formulation integrated by SciPy at rtol = atol = 1e-12 (A04: numeric joint-coordinate
Newton-Euler with a minimum-norm multiplier split; A05: SymPy's LagrangesMethod), so they
can judge symbody and its peers.  The problem data are in tests/data/iftomm_group_a.json.

API (times ``t`` are 1-D arrays in seconds, increasing, starting at 0):

- ``a01_exact(t, g=9.81, length=1.0) -> (x, y)``: P1 of the simple pendulum, arrays (len(t),).
- ``a02_exact(t, n=40, g=9.81) -> dict`` with "theta", "omega" (rocker angle and rate),
  "x", "y", "vx", "vy" (point B0, A0 at the origin), "energy", arrays (len(t),).
- ``a02_parameter(n, g)``: c in theta'' = -c cos(theta).
- ``a04_reference(t, rtol=1e-12) -> dict`` with "q", "qd" (5 joint angles/rates, (len(t), 5)),
  "P3" ((len(t), 3)), "energy", "residual" (loop closure, max abs per time).
- ``a05_reference(t, rtol=1e-12) -> dict`` with "s" (slider height), "phi_dot" (shaft rate),
  "beta" ((len(t), 2) rod angles below the horizontal), arrays.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import ellipj, ellipk

__all__ = ["a01_exact", "a02_exact", "a02_parameter", "a04_reference", "a05_reference",
           "A04_CORNERS", "A04_AXES"]


# --------------------------------------------------------------------------- A01
def a01_exact(t, g: float = 9.81, length: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Exact motion of the A01 pendulum released at rest from the horizontal (x = +L).

    With theta the angle from the downward vertical (x = L sin theta, y = -L cos theta) and
    amplitude theta0 = pi/2, the solution is sin(theta/2) = k sn(K - w t | k^2) with
    k = sin(theta0/2), w = sqrt(g/L), K = K(k^2).  Hence
    x = 2 L k sn dn and y = -L (1 - 2 k^2 sn^2) (cos(theta/2) = dn >= 0).
    The argument is reduced modulo the period 4K first (sn has period 4K).
    """
    t = np.asarray(t, dtype=float)
    k = math.sin(math.pi / 4.0)
    m = k * k
    K = float(ellipk(m))
    u = np.mod(K - math.sqrt(g / length) * t, 4.0 * K)
    sn, _cn, dn, _ph = ellipj(u, m)
    return 2.0 * length * k * sn * dn, -length * (1.0 - 2.0 * m * sn * sn)


# --------------------------------------------------------------------------- A02
def a02_parameter(n: int = 40, g: float = 9.81) -> float:
    """c in theta'' = -c cos(theta) for the N-four-bar on its parallelogram branch.

    Derivation (all links L = 1 m, m = 1 kg, uniform thin bars).  On the parallelogram
    branch every rocker A_i B_i has the same angle theta from the ground line, and every
    coupler B_i B_(i+1) translates with the velocity of B_i (|v| = L theta').  Then

        T = 1/2 [(N+1) m L^2/3 + N m L^2] theta'^2        (rockers about A_i; couplers)
        V = m g L sin(theta) [(N+1)/2 + N]                (centres at L/2 sin, L sin)

    and Lagrange's equation, I_eff theta'' = -dV/dtheta, gives theta'' = -c cos(theta) with
    c = (g/L) * 3 (3N+1) / (2 (4N+1)).  I_eff does not depend on theta, so the reduction is
    exact through the flat positions theta = 0, pi (where the full mechanism gains N dof).
    """
    return g * 3.0 * (3 * n + 1) / (2.0 * (4 * n + 1))


def a02_exact(t, n: int = 40, g: float = 9.81, theta0: float = math.pi / 2,
              vx0: float = 1.0) -> dict:
    """B0 of the A02 N-four-bar from the exact 1-dof reduction (see :func:`a02_parameter`).

    Initial state: rockers at ``theta0`` (vertical), B0 = (cos theta, sin theta) moving with
    x-velocity ``vx0`` (theta' = -vx0 / sin theta0).  Integrated by DOP853 at
    rtol = atol = 1e-12 (energy 1/2 theta'^2 + c sin theta is kept to ~1e-12).
    """
    t = np.asarray(t, dtype=float)
    c = a02_parameter(n, g)
    w0 = -vx0 / math.sin(theta0)
    sol = solve_ivp(lambda _t, y: [y[1], -c * math.cos(y[0])], (0.0, float(t[-1])), [theta0, w0],
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    if not sol.success:
        raise RuntimeError(sol.message)
    th, om = sol.y
    inertia = (n + 1) / 3.0 + n
    energy = 0.5 * inertia * om ** 2 + g * np.sin(th) * ((n + 1) / 2.0 + n)
    return {"theta": th, "omega": om, "x": np.cos(th), "y": np.sin(th),
            "vx": -np.sin(th) * om, "vy": np.cos(th) * om, "energy": energy}


# --------------------------------------------------------------------------- A04
#: corners of the Bricard loop at the initial (reference) configuration; body k spans
#: corner k -> corner k+1 (k = 0..4), the ground closes corner 5 -> corner 0
A04_CORNERS = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, -1.0, 0.0],
                        [1.0, -1.0, 1.0], [0.0, -1.0, 1.0], [0.0, 0.0, 1.0]])
#: joint axes at the corners (reference configuration)
A04_AXES = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0],
                     [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix about the unit ``axis`` by ``angle`` (Rodrigues)."""
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    C = 1.0 - c
    return np.array([[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                     [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                     [z * x * C - y * s, z * y * C + x * s, c + z * z * C]])


class _Bricard:
    """Joint-coordinate Newton-Euler model of the A04 loop, numeric (numpy only).

    Coordinates q_k (k = 0..4): rotation of body k relative to body k-1 (ground for k = 0)
    about joint k.  R_k = R_(k-1) Rot(a_k, q_k); joint points p_(k+1) = p_k + R_k (C_(k+1) - C_k).
    Closing joint 5 at C5: p_5 = C5 (3 equations) and body 4's copy of axis a_5 stays
    normal to y and z (2 equations): 5 equations of rank 4 (one redundant).
    Dynamics: M q'' + h = Phi_q^T lambda, Phi_q q'' = -gamma - 2 alpha Phi' - alpha^2 Phi,
    solved by the SVD of Phi_q: q'' = minimum-norm particular part + null-space part.
    """

    def __init__(self, mass: float = 1.0, length: float = 1.0, side: float = 0.1, g: float = 9.81,
                 alpha: float = 10.0):
        self.m, self.g, self.alpha = mass, g, alpha
        C = A04_CORNERS * length
        self.C = C
        self.e = [C[k + 1] - C[k] for k in range(5)]
        it = mass * (length ** 2 + side ** 2) / 12.0
        ia = mass * side ** 2 / 6.0
        self.I0 = []
        for k in range(5):
            d = self.e[k] / np.linalg.norm(self.e[k])
            self.I0.append(it * (np.eye(3) - np.outer(d, d)) + ia * np.outer(d, d))
        self.a0 = A04_AXES

    def kinematics(self, q, qd):
        R = np.eye(3)
        w = np.zeros(3)
        al = np.zeros(3)          # angular acceleration with q'' = 0
        p = self.C[0].copy()
        ap = np.zeros(3)          # acceleration of the joint point with q'' = 0
        axes, points, out = [], [], []
        for k in range(5):
            a = R @ self.a0[k]
            al = al + np.cross(w, a) * qd[k]
            w = w + a * qd[k]
            R = R @ _rot(self.a0[k], q[k])
            axes.append(a)
            points.append(p)
            r = R @ self.e[k]
            rc = 0.5 * r
            c = p + rc
            ac = ap + np.cross(al, rc) + np.cross(w, np.cross(w, rc))
            out.append((R, w.copy(), al.copy(), c, ac))
            ap = ap + np.cross(al, r) + np.cross(w, np.cross(w, r))
            p = p + r
        return axes, points, out, p, ap

    def rhs(self, _t, x):
        q, qd = x[:5], x[5:]
        axes, points, bodies, p5, ap5 = self.kinematics(q, qd)
        M = np.zeros((5, 5))
        h = np.zeros(5)
        grav = np.array([0.0, -self.g, 0.0])
        for k, (R, w, al, c, ac) in enumerate(bodies):
            Jv = np.zeros((3, 5))
            Jw = np.zeros((3, 5))
            for j in range(k + 1):
                Jw[:, j] = axes[j]
                Jv[:, j] = np.cross(axes[j], c - points[j])
            Iw = R @ self.I0[k] @ R.T
            M += self.m * Jv.T @ Jv + Jw.T @ Iw @ Jw
            h += Jv.T @ (self.m * ac - self.m * grav) + Jw.T @ (Iw @ al + np.cross(w, Iw @ w))
        R4, w4, al4 = bodies[4][0], bodies[4][1], bodies[4][2]
        b = R4 @ self.a0[5]
        phi, J, gam = self._closure(axes, points, p5, ap5, b, w4, al4)
        rhs_c = -gam - 2.0 * self.alpha * (J @ qd) - self.alpha ** 2 * phi
        U, S, Vt = np.linalg.svd(J)
        r = int(np.sum(S > 1e-9 * S[0]))
        qdd_p = Vt[:r].T @ ((U[:, :r].T @ rhs_c) / S[:r])
        Nb = Vt[r:].T
        z = np.linalg.solve(Nb.T @ M @ Nb, Nb.T @ (-h - M @ qdd_p))
        return np.concatenate([qd, qdd_p + Nb @ z])

    def _closure(self, axes, points, p5, ap5, b, w4, al4):
        phi = np.concatenate([p5 - self.C[5], [b[1], b[2]]])
        J = np.zeros((5, 5))
        for j in range(5):
            J[:3, j] = np.cross(axes[j], p5 - points[j])
            db = np.cross(axes[j], b)
            J[3, j], J[4, j] = db[1], db[2]
        bdd = np.cross(al4, b) + np.cross(w4, np.cross(w4, b))
        gam = np.concatenate([ap5, [bdd[1], bdd[2]]])
        return phi, J, gam

    def energy(self, q, qd):
        axes, points, bodies, _p5, _ap5 = self.kinematics(q, qd)
        T = V = 0.0
        for k, (R, w, _al, c, _ac) in enumerate(bodies):
            vc = np.zeros(3)
            for j in range(k + 1):
                vc += np.cross(axes[j], c - points[j]) * qd[j]
            T += 0.5 * self.m * vc @ vc + 0.5 * w @ (R @ self.I0[k] @ R.T) @ w
            V += self.m * self.g * c[1]
        return T + V

    def residual(self, q):
        axes, points, bodies, p5, ap5 = self.kinematics(q, np.zeros(5))
        b = bodies[4][0] @ self.a0[5]
        return np.concatenate([p5 - self.C[5], [b[1], b[2]]])

    def joint_point(self, q, i):
        return self.kinematics(q, np.zeros(5))[1][i]


@functools.lru_cache(maxsize=8)
def _a04_solution(t_end: float, rtol: float):
    model = _Bricard()
    sol = solve_ivp(model.rhs, (0.0, t_end), np.zeros(10), method="DOP853", rtol=rtol,
                    atol=rtol, dense_output=True)
    if not sol.success:
        raise RuntimeError(sol.message)
    return model, sol


def a04_reference(t, rtol: float = 1e-12) -> dict:
    """The A04 Bricard mechanism from rest (see :class:`_Bricard`): P3 = corner (1, -1, 0).

    Bodies are uniform 1 x 0.1 x 0.1 m bars of 1 kg, gravity 9.81 in -y.  Returns "q", "qd"
    (joint angles 0..4 and rates), "P3", "energy", "residual" (max |loop closure|).
    """
    t = np.asarray(t, dtype=float)
    model, sol = _a04_solution(float(t[-1]), float(rtol))
    X = sol.sol(t).T
    q, qd = X[:, :5], X[:, 5:]
    return {"q": q, "qd": qd,
            "P3": np.array([model.joint_point(qi, 2) for qi in q]),
            "energy": np.array([model.energy(qi, vi) for qi, vi in zip(q, qd, strict=True)]),
            "residual": np.array([np.max(np.abs(model.residual(qi))) for qi in q])}


# --------------------------------------------------------------------------- A05
@functools.lru_cache(maxsize=1)
def _a05_rhs():
    """A05 by SymPy's LagrangesMethod (an oracle formulation, not symbody's Kane).

    Generalized coordinates: phi (shaft angle about the vertical z), s (slider centre height
    above the shaft's bottom), beta1, beta2 (rods below the horizontal, pivots at
    (+-0.05, 0, 1) in the shaft frame).  Springs from the slider's sides (+-0.05, 0, s) to
    the rod midpoints, K (l - 0.5) + C l'.  Returns a numeric f(x) for x = [q, q'].
    """
    import sympy as sm
    import sympy.physics.mechanics as me

    phi, s, b1, b2 = me.dynamicsymbols("phi s beta1 beta2")
    q = [phi, s, b1, b2]
    qd = [x.diff() for x in q]
    rho, K, C, L0, g = 3000.0, 8e5, 4e4, 0.5, 9.81
    N = me.ReferenceFrame("N")
    S = N.orientnew("S", "Axis", (phi, N.z))
    R1 = S.orientnew("R1", "Axis", (b1, S.y))
    R2 = S.orientnew("R2", "Axis", (-b2, S.y))
    O = me.Point("O")
    O.set_vel(N, 0)
    m_rod = rho * 0.01 * 0.01 * 1.0
    m_sl = rho * 0.1 ** 3
    shaft_c = O.locatenew("Sc", 0.5 * S.z)
    shaft_c.v2pt_theory(O, N, S)
    top1 = O.locatenew("T1", 0.05 * S.x + 1.0 * S.z)
    top2 = O.locatenew("T2", -0.05 * S.x + 1.0 * S.z)
    top1.v2pt_theory(O, N, S)
    top2.v2pt_theory(O, N, S)
    mid1 = top1.locatenew("M1", 0.5 * R1.x)
    mid2 = top2.locatenew("M2", -0.5 * R2.x)
    end1 = top1.locatenew("E1", 1.0 * R1.x)
    end2 = top2.locatenew("E2", -1.0 * R2.x)
    for P, T, F in ((mid1, top1, R1), (mid2, top2, R2), (end1, top1, R1), (end2, top2, R2)):
        P.v2pt_theory(T, N, F)
    sl = O.locatenew("Sl", s * S.z)
    sl.set_vel(N, sl.pos_from(O).dt(N))
    foot1 = sl.locatenew("F1", 0.05 * S.x)
    foot2 = sl.locatenew("F2", -0.05 * S.x)
    foot1.set_vel(N, foot1.pos_from(O).dt(N))
    foot2.set_vel(N, foot2.pos_from(O).dt(N))

    def brick(frame, mass, a, b, c):
        return me.inertia(frame, mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12,
                          mass * (a * a + b * b) / 12)

    shaft = me.RigidBody("shaft", shaft_c, S, m_rod, (brick(S, m_rod, 0.01, 0.01, 1.0), shaft_c))
    slider = me.RigidBody("slider", sl, S, m_sl, (brick(S, m_sl, 0.1, 0.1, 0.1), sl))
    rod1 = me.RigidBody("rod1", mid1, R1, m_rod, (brick(R1, m_rod, 1.0, 0.01, 0.01), mid1))
    rod2 = me.RigidBody("rod2", mid2, R2, m_rod, (brick(R2, m_rod, 1.0, 0.01, 0.01), mid2))
    ball1 = me.Particle("ball1", end1, 5.0)
    ball2 = me.Particle("ball2", end2, 5.0)
    bodies = [shaft, slider, rod1, rod2, ball1, ball2]
    for b in bodies:
        b.potential_energy = b.mass * g * b.masscenter.pos_from(O).dot(N.z)
    Lag = me.Lagrangian(N, *bodies)
    forces = []
    for mid, foot in ((mid1, foot1), (mid2, foot2)):
        r = mid.pos_from(foot)
        ell = sm.sqrt(r.dot(r))
        ell_d = (mid.vel(N) - foot.vel(N)).dot(r) / ell
        f = -(K * (ell - L0) + C * ell_d) / ell
        forces += [(mid, f * r), (foot, -f * r)]
    lm = me.LagrangesMethod(Lag, q, forcelist=forces, frame=N)
    lm.form_lagranges_equations()
    syms = q + qd
    xs = sm.symbols("x0:8")
    sub = dict(zip(syms, xs, strict=True))
    Mf = sm.lambdify([xs], lm.mass_matrix.subs(sub), "numpy")
    ff = sm.lambdify([xs], lm.forcing.subs(sub), "numpy")
    return Mf, ff


def a05_reference(t, rtol: float = 1e-12, beta0_deg: float = 30.0,
                  shaft_rate: float = 2.0 * math.pi) -> dict:
    """The A05 stiff flyball governor (see :func:`_a05_rhs`) integrated by Radau at ``rtol``.

    Initial state: s = 0.5, both rods 30 deg below the horizontal (springs at rest length),
    shaft turning at 2 pi rad/s, everything else at rest.  Returns "s", "phi_dot",
    "beta" ((len(t), 2)) and "t".
    """
    t = np.asarray(t, dtype=float)
    Mf, ff = _a05_rhs()

    def rhs(_t, x):
        qdd = np.linalg.solve(np.asarray(Mf(x), dtype=float), np.asarray(ff(x), dtype=float).ravel())
        return np.concatenate([x[4:], qdd])

    b0 = math.radians(beta0_deg)
    x0 = np.array([0.0, 0.5, b0, b0, shaft_rate, 0.0, 0.0, 0.0])
    sol = solve_ivp(rhs, (0.0, float(t[-1])), x0, method="Radau", rtol=rtol, atol=rtol, t_eval=t)
    if not sol.success:
        raise RuntimeError(sol.message)
    return {"t": sol.t, "s": sol.y[1], "phi_dot": sol.y[4], "beta": sol.y[2:4].T}
