"""The joints of OpenSim as Simbody mobilizers: X_FM(q), the joint velocity, q'(q, u).

A joint moves its child frame M relative to its parent frame F.  For each joint type this
module gives, in symengine, the rotation ``R_FM`` (M's axes in F) and the origin ``p_FM``
(in F), the joint's motion subspace in M coordinates at M's origin,

    ω_FM = H_w(q) u,    v_FM = H_v(q) u      (both expressed in M; 3 x n_u each),

and the kinematic equations q' = N(q) u, with Simbody's choice of q and u (so that the
states map one to one to OpenSim's):

| type | q | u |
|---|---|---|
| Pin | angle about F_z = M_z | q' |
| Slider | translation along F_x | q' |
| Universal | body-fixed X then Y angles | q' |
| Gimbal | body-fixed X-Y-Z angles | q' |
| Ball | body-fixed X-Y-Z angles (OpenSim sets Simbody's "use Euler angles") | ω_FM in F |
| Free | X-Y-Z angles, then the translation of M's origin in F | ω_FM in F, then v_FM in F |
| Planar | angle about Z, then x, y translation in F | q' |
| Weld | none | none |
| Custom | the joint's coordinates | q' |

A CustomJoint's ``SpatialTransform`` (Simbody's FunctionBased mobilizer) is
R_FM = R(θ1, a1) R(θ2, a2) R(θ3, a3) (each rotation about its unit axis in the frame
rotated by the ones before it: a body-fixed sequence) and p_FM = Σ f_k(q) b_k with the
translation axes b_k in F, θ_i = f_i(q) the axis functions (:mod:`.functions`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import symengine as se

from .model_spec import JointSpec

__all__ = ["Mobilizer", "make_mobilizer", "ZERO", "ONE", "num", "matmul", "transpose",
           "matvec", "axis_rotation"]

ZERO = se.Integer(0)
ONE = se.Integer(1)


def num(v: float):
    """A numeric constant: exact 0/±integers as Integers, |v| < 1e-15 as 0, else a double."""
    v = float(v)
    if abs(v) < 1e-15:
        return ZERO
    if v == round(v) and abs(v) < 1e6:
        return se.Integer(int(round(v)))
    return se.RealDouble(v)


def _is_zero(e) -> bool:
    return e == 0


def matmul(A, B) -> list:
    """The product of two 3x3 nested lists (symengine or numbers), skipping zero terms."""
    out = []
    for i in range(3):
        row = []
        for k in range(3):
            acc = ZERO
            for j in range(3):
                a, b = A[i][j], B[j][k]
                if _is_zero(a) or _is_zero(b):
                    continue
                acc = acc + (b if a == 1 else a if b == 1 else a * b)
            row.append(acc)
        out.append(row)
    return out


def transpose(A) -> list:
    return [[A[j][i] for j in range(3)] for i in range(3)]


def matvec(A, x) -> list:
    out = []
    for i in range(3):
        acc = ZERO
        for j in range(3):
            a, b = A[i][j], x[j]
            if _is_zero(a) or _is_zero(b):
                continue
            acc = acc + (b if a == 1 else a if b == 1 else a * b)
        out.append(acc)
    return out


def identity() -> list:
    return [[ONE if i == k else ZERO for k in range(3)] for i in range(3)]


def axis_rotation(axis: np.ndarray, angle) -> list:
    """Rodrigues: R = c 1 + s [a]x + (1 - c) a a^T about the unit ``axis`` (numbers) by
    ``angle`` (symengine); the coordinate axes give the usual three-term matrices."""
    a = np.asarray(axis, dtype=float)
    c, s = se.cos(angle), se.sin(angle)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    A = np.outer(a, a)
    out = []
    for i in range(3):
        row = []
        for k in range(3):
            e = num(A[i, k]) + (num(float(i == k)) - num(A[i, k])) * c + num(K[i, k]) * s
            row.append(e)
        out.append(row)
    return out


def _numeric_rotation(axis: np.ndarray, angle: float) -> list:
    a = np.asarray(axis, dtype=float)
    c, s = np.cos(angle), np.sin(angle)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    R = c * np.eye(3) + s * K + (1 - c) * np.outer(a, a)
    return [[num(R[i, k]) for k in range(3)] for i in range(3)]


@dataclass
class Mobilizer:
    """One joint's kinematics (see the module docstring): ``R`` (3x3), ``p`` (3), ``Hw``,
    ``Hv`` (3 rows of n_u), ``qdot`` (n_q), all symengine in the joint's ``q`` and ``u``."""

    R: list
    p: list
    Hw: list
    Hv: list
    qdot: list
    q: list
    u: list
    #: an angular acceleration (3, M frame) added to Ḣ u: Simbody's approximation of the
    #: FunctionBased mobilizer's Ḣ (see :func:`simbody_hdot_error`), or None
    hdot_error: list | None = None
    #: whether Simbody's approximation differs from the exact Ḣ u for this joint (a
    #: CustomJoint whose rotations share coordinates), whichever of the two is used
    simbody_hdot_differs: bool = False


_X, _Y, _Z = np.eye(3)


def _euler_xyz(q) -> tuple:
    """R = Rx(q0) Ry(q1) Rz(q2) and its pieces."""
    Rx, Ry, Rz = axis_rotation(_X, q[0]), axis_rotation(_Y, q[1]), axis_rotation(_Z, q[2])
    return Rx, Ry, Rz, matmul(matmul(Rx, Ry), Rz)


def _columns(*cols) -> list:
    """3 x k nested list from k column vectors."""
    return [[c[i] for c in cols] for i in range(3)]


def make_mobilizer(joint: JointSpec, q: list, u: list, simbody_hdot: bool = False) -> Mobilizer:
    """The mobilizer of ``joint`` with coordinate symbols ``q`` and speed symbols ``u``;
    ``simbody_hdot``: a CustomJoint's velocity terms as Simbody computes them
    (:func:`simbody_hdot_error`)."""
    t = joint.type
    Z3 = [ZERO, ZERO, ZERO]
    if t == "WeldJoint":
        return Mobilizer(identity(), Z3, _columns(), _columns(), [], q, u)
    if t == "PinJoint":
        return Mobilizer(axis_rotation(_Z, q[0]), Z3, _columns([ZERO, ZERO, ONE]),
                         _columns(Z3), [u[0]], q, u)
    if t == "SliderJoint":
        return Mobilizer(identity(), [q[0], ZERO, ZERO], _columns(Z3),
                         _columns([ONE, ZERO, ZERO]), [u[0]], q, u)
    if t == "UniversalJoint":
        Rx, Ry = axis_rotation(_X, q[0]), axis_rotation(_Y, q[1])
        c1, s1 = se.cos(q[1]), se.sin(q[1])
        return Mobilizer(matmul(Rx, Ry), Z3, _columns([c1, ZERO, s1], [ZERO, ONE, ZERO]),
                         _columns(Z3, Z3), list(u), q, u)
    if t == "GimbalJoint":
        Rx, Ry, Rz, R = _euler_xyz(q)
        RzT, RyT = transpose(Rz), transpose(Ry)
        c0 = matvec(RzT, matvec(RyT, [ONE, ZERO, ZERO]))
        c1 = matvec(RzT, [ZERO, ONE, ZERO])
        return Mobilizer(R, Z3, _columns(c0, c1, [ZERO, ZERO, ONE]), _columns(Z3, Z3, Z3),
                         list(u), q, u)
    if t in ("BallJoint", "FreeJoint"):
        Rx, Ry, Rz, R = _euler_xyz(q[:3])
        RT = transpose(R)
        Hw = _columns(*[[RT[i][k] for i in range(3)] for k in range(3)])
        ca, sa, cb, sb = se.cos(q[0]), se.sin(q[0]), se.cos(q[1]), se.sin(q[1])
        w0, w1, w2 = u[0], u[1], u[2]
        q2d = (-sa * w1 + ca * w2) / cb
        qdot = [w0 - sb * q2d, ca * w1 + sa * w2, q2d]
        if t == "BallJoint":
            return Mobilizer(R, Z3, Hw, _columns(Z3, Z3, Z3), qdot, q, u)
        Hw6 = [row + [ZERO] * 3 for row in Hw]
        Hv6 = [[ZERO] * 3 + [RT[i][k] for k in range(3)] for i in range(3)]
        return Mobilizer(R, [q[3], q[4], q[5]], Hw6, Hv6, qdot + [u[3], u[4], u[5]], q, u)
    if t == "PlanarJoint":
        R = axis_rotation(_Z, q[0])
        RT = transpose(R)
        Hv = [[ZERO, RT[i][0], RT[i][1]] for i in range(3)]
        return Mobilizer(R, [q[1], q[2], ZERO], _columns([ZERO, ZERO, ONE], Z3, Z3), Hv,
                         list(u), q, u)
    if t == "CustomJoint":
        return _custom(joint, q, u, simbody_hdot)
    raise joint.element.error(f"the joint type {t} is not supported")


def simbody_hdot_error(W: list, Fq: list, u: list) -> list:
    """What Simbody's FunctionBased mobilizer adds to the exact Ḣ u (angular, F frame).

    With W = [a1, R1 a2, R1 R2 a3] (the rotation axes in F, columns) and θ' = F_q u the
    rotation rates, the exact Ẇ has the columns (0, ω1 × W1, ω2 × W2) with
    ω1 = W0 θ0', ω2 = W0 θ0' + W1 θ1'.  Simbody (MobilizedBodyImpl.h, FunctionBasedImpl::
    buildHdot) uses V1 = W F_q u1 and V2 = W F_q u2 instead, u1 = u with every speed but
    the first set to 0, u2 = u with the third set to 0 (when there are more than two): the
    same when rotation i is a function of coordinate i alone (the usual joints), different
    when rotations share a coordinate (a knee whose three rotations are splines of the knee
    angle).  Returns (V1 - ω1) × W1 θ1' + (V2 - ω2) × W2 θ2'."""
    nu = len(u)
    rate = [sum((Fq[i][j] * u[j] for j in range(nu)), ZERO) for i in range(3)]

    def combo(speeds):
        out = [ZERO] * 3
        for i in range(3):
            r = sum((Fq[i][j] * speeds[j] for j in range(nu)), ZERO)
            if r != 0:
                out = [o + W[a][i] * r for a, o in enumerate(out)]
        return out

    u1 = [u[0]] + [ZERO] * (nu - 1)
    u2 = [ZERO if (j == 2 and nu > 2) else u[j] for j in range(nu)]
    V1, V2 = combo(u1), combo(u2)
    w1 = [W[a][0] * rate[0] for a in range(3)]
    w2 = [W[a][0] * rate[0] + W[a][1] * rate[1] for a in range(3)]

    def cross(a, b):
        return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]

    d1 = cross([x - y for x, y in zip(V1, w1)], [W[a][1] * rate[1] for a in range(3)])
    d2 = cross([x - y for x, y in zip(V2, w2)], [W[a][2] * rate[2] for a in range(3)])
    return [x + y for x, y in zip(d1, d2)]


def _custom(joint: JointSpec, q: list, u: list, simbody_hdot: bool = False) -> Mobilizer:
    names = [c.name for c in joint.coordinates]
    sym = dict(zip(names, q))
    values = []
    for ax in joint.axes:
        args = [sym[c] for c in ax.coordinates]
        if ax.function.nargs == 0:
            values.append(ax.function.expression([]))
        else:
            values.append(ax.function.expression(args))
    # rotations
    rots = []
    for k in range(3):
        v = values[k]
        if v.is_Number:
            rots.append(None if float(v) == 0.0 else _numeric_rotation(joint.axes[k].axis, float(v)))
        else:
            rots.append(axis_rotation(joint.axes[k].axis, v))
    R = identity()
    for r in rots:
        if r is not None:
            R = matmul(R, r)
    # translations in F
    p = [ZERO, ZERO, ZERO]
    for k in range(3):
        v = values[3 + k]
        if v == 0:
            continue
        b = joint.axes[3 + k].axis
        for i in range(3):
            if b[i] != 0:
                p[i] = p[i] + num(b[i]) * v
    # angular velocity in M: R3^T R2^T a1 θ1' + R3^T a2 θ2' + a3 θ3'
    after = [identity(), identity(), identity()]     # R_(k+1) ... R_3, transposed use below
    acc = identity()
    for k in (2, 1, 0):
        after[k] = acc          # product of the rotations after k
        if rots[k] is not None:
            acc = matmul(rots[k], acc)
    nu = len(u)
    Hw = [[ZERO] * nu for _ in range(3)]
    for k in range(3):
        v = values[k]
        if v.is_Number:
            continue
        a_M = matvec(transpose(after[k]), [num(x) for x in joint.axes[k].axis])
        for j, qj in enumerate(q):
            d = v.diff(qj)
            if d == 0:
                continue
            for i in range(3):
                if a_M[i] != 0:
                    Hw[i][j] = Hw[i][j] + a_M[i] * d
    Hv = [[ZERO] * nu for _ in range(3)]
    RT = transpose(R)
    dp = [[p[i].diff(qj) for qj in q] for i in range(3)]      # ∂p/∂q in F
    for j in range(nu):
        col = matvec(RT, [dp[0][j], dp[1][j], dp[2][j]])
        for i in range(3):
            Hv[i][j] = col[i]
    error = None
    differs = False
    if sum(not values[k].is_Number for k in range(3)) >= 2:
        # W = [a1, R1 a2, R1 R2 a3] in F; F_q the rotation angles' partial derivatives
        R1 = rots[0] if rots[0] is not None else identity()
        R12 = matmul(R1, rots[1]) if rots[1] is not None else R1
        cols = [[num(x) for x in joint.axes[0].axis], matvec(R1, [num(x) for x in joint.axes[1].axis]),
                matvec(R12, [num(x) for x in joint.axes[2].axis])]
        W = [[cols[c][a] for c in range(3)] for a in range(3)]
        Fq = [[ZERO if values[k].is_Number else values[k].diff(qj) for qj in q] for k in range(3)]
        raw = simbody_hdot_error(W, Fq, list(u))
        differs = _nonzero_somewhere(raw, list(q) + list(u))
        if simbody_hdot:
            error = matvec(transpose(R), raw)
    return Mobilizer(R, p, Hw, Hv, list(u), q, u, error, differs)


def _nonzero_somewhere(expressions: list, symbols: list) -> bool:
    """Whether any of ``expressions`` (symengine, in ``symbols``) is nonzero at one of two
    fixed pseudo-random points (|value| > 1e-12): a cheap test that an expression which is
    not identically zero in form is not zero in value either."""
    if all(e == 0 for e in expressions):
        return False
    rng = np.random.default_rng(20261128)
    for _ in range(2):
        point = {s: float(v) for s, v in zip(symbols, rng.uniform(-1.0, 1.0, len(symbols)))}
        if any(abs(float(se.sympify(e).subs(point))) > 1e-12 for e in expressions):
            return True
    return False
