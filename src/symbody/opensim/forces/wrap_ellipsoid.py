"""OpenSim 4.6's ``WrapEllipsoid::wrapLine`` as one fixed program, exact to round-off.

OpenSim scales the segment P1-P2 (ellipsoid frame, radii a) by f = 3 / (a_x + a_y + a_z),
and, when the line P1P2 crosses the ellipsoid between P1 and P2 (and neither end is inside,
Σ(P/a)² - 1 < -1e-4, nor P1, P2 nearly collinear with the centre), always wraps
(``mandatoryWrap``):

1. c1, a point of the surface that fixes the wrap plane through P1, P2 and c1: Frans's
   ("axial": the closest surface point to where the chord r1r2 crosses the coordinate plane
   most normal to it, a 2-D point-to-ellipse problem), the fan's ("hybrid" when that axis is
   more than 26° off the chord: the mean direction of the closest-point vectors from 298
   samples of the chord) or a blend of both, or the chord midpoint's ("midpoint");
   flipped to the side of the quadrant, if any.  Closest points are Eberly's Newton on a
   degree-6 (3-D) or degree-4 (2-D) polynomial from a fixed guess, stopped at |f| < 1e-9.
2. The tangent points r1, r2 (``calcTangentPoint``): a damped Gauss-Newton (Levenberg-
   Marquardt with step doubling) on four residuals (in the plane, on the surface, tangent to
   the line from P) from r = c1, stopped when their sum of squares is below 1e-8.
3. s: the polyline of N = min(⌊|r1 - r2| / 1 mm⌋, 499) chords between the points where
   rays from the plane's axis point a0 at equal angle steps meet the ellipsoid (the far way
   round when the first or last chord points back at P1 or P2 with a quadrant set).

None of these stop at round-off, so the result depends on OpenSim's exact iterates: each
loop here is unrolled a fixed number of times with OpenSim's own stopping test as a freeze
(x <- x once the test holds), so the result is OpenSim's iterate, not the converged root.
The counts (``NEWTON_STEPS``, ``TANGENT_STEPS`` and the inner loops') exceed the most that
2 500 states of Arm26's BIClong needed (benchmarks/bench_wrap_ellipsoid.py); a state that
would need more gives NaN, never a different number.  The 2-D ellipse runs all of OpenSim's
64 passes (it keeps an unconverged result).  Not replicated: the fan's 298 closest points
use the 3-D Newton only, where OpenSim switches to the 2-D ellipse for a sample within 2e-13
of a coordinate plane (states of measure zero).  The polyline's N is a Piecewise on ⌊·⌋
bounded by the ellipsoid's diameter.  The same program runs on floats
(:class:`FloatArithmetic`; the tests check it against OpenSim's lengths) or builds symengine
expressions (:class:`SymbolicArithmetic`): with the hybrid method's fan some 380 000
operations, so the wrapped paths do not use it: they place their stations at run time with
the same program compiled from C (:mod:`.ellipsoid_native`, :mod:`.ellipsoid_path`).
"""

from __future__ import annotations

import math

import symengine as se

from .vector3 import F, choose

__all__ = ["ellipsoid_wrap", "SymbolicArithmetic", "FloatArithmetic", "NEWTON_STEPS",
           "TANGENT_STEPS"]

#: Eberly's Newton steps (OpenSim: up to 64, to |f| < 1e-9)
NEWTON_STEPS = 24
#: closestPointToEllipse's: all of them (its result stands whether or not it converged)
ELLIPSE_STEPS = 63
#: calcTangentPoint's outer iterations (OpenSim: up to 50, to Σe² <= 1e-8)
TANGENT_STEPS = 14
#: its inner loops: damping increases, step doublings (OpenSim: up to 1000 each)
DAMPING_STEPS, DOUBLING_STEPS = 4, 12
_ROUNDOFF = 2e-13                 # SimmMacros' ROUNDOFF_ERROR
_MU_MIN, _MU_MAX, _SV_BLEND = 0.7073, 0.9, 0.3
_FAN = 300
_SEG = 0.001


class SymbolicArithmetic:
    """The program's numbers as symengine expressions; branches are Piecewise."""

    true, false = se.true, se.false
    nan = F(math.nan)
    sqrt, acos, cos, sin, abs = (staticmethod(f) for f in (se.sqrt, se.acos, se.cos, se.sin,
                                                           se.Abs))
    lt, gt, le, ge = (staticmethod(f) for f in (se.Lt, se.Gt, se.Le, se.Ge))
    and_, or_, not_ = (staticmethod(f) for f in (se.And, se.Or, se.Not))

    def __init__(self):
        self._cache: dict = {}

    def c(self, x: float):
        return F(x)

    def where(self, cond, a, b):
        return choose(cond, a, b, self._cache)


class FloatArithmetic:
    """The same program on Python floats (C's NaN for a domain error)."""

    true, false, nan = True, False, math.nan

    @staticmethod
    def sqrt(x):
        return math.sqrt(x) if x >= 0 else math.nan

    @staticmethod
    def acos(x):
        return math.acos(x) if -1 <= x <= 1 else math.nan

    cos, sin, abs = staticmethod(math.cos), staticmethod(math.sin), staticmethod(abs)
    lt, gt = staticmethod(lambda a, b: a < b), staticmethod(lambda a, b: a > b)
    le, ge = staticmethod(lambda a, b: a <= b), staticmethod(lambda a, b: a >= b)
    and_, or_ = staticmethod(lambda *a: all(a)), staticmethod(lambda *a: any(a))
    not_ = staticmethod(lambda a: not a)

    def c(self, x: float) -> float:
        return float(x)

    def where(self, cond, a, b):
        return a if cond else b


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _unit(o, a) -> list:
    n = o.sqrt(_dot(a, a))
    return [x / n for x in a]


def _pick(o, cond, a: list, b: list) -> list:
    return [o.where(cond, x, y) for x, y in zip(a, b)]


def _newton(o, residual, t, steps: int = 0):
    """Newton on residual(t) -> (f, f') frozen once |f| < 1e-9: (t, converged)."""
    tol = o.c(1e-9)
    for _ in range(steps or NEWTON_STEPS):
        f, fp = residual(t)
        t = o.where(o.lt(o.abs(f), tol), t, t - f / fp)
    return t, o.lt(o.abs(residual(t)[0]), tol)


def _closest_on_ellipse(o, a: float, b: float, u, v) -> tuple:
    """closestPointToEllipse: the point (x, y) of (x/a)² + (y/b)² = 1 nearest (u, v)."""
    a2, b2 = a * a, b * b
    a2u2, b2v2 = a2 * u * u, b2 * v * v
    zero = o.c(0.0)

    def residual(t):
        P, Q = t + a2, t + b2
        return (P * P * Q * Q - a2u2 * Q * Q - b2v2 * P * P,
                2.0 * (P * Q * (P + Q) - a2u2 * Q - b2v2 * P))
    inside = o.lt((u / a) ** 2 + (v / b) ** 2, o.c(1.0))
    # all of OpenSim's 64 passes: without convergence it keeps P, Q of the 64th (the 63rd t)
    t, _ = _newton(o, residual, o.where(inside, zero, max(a, b) * o.sqrt(u * u + v * v)),
                   ELLIPSE_STEPS)
    x, y = a2 * u / (t + a2), b2 * v / (t + b2)
    near_u, near_v = o.le(o.abs(u), o.c(_ROUNDOFF)), o.le(o.abs(v), o.c(_ROUNDOFF))
    # near an axis: the closed forms of OpenSim's special cases
    if a < b:
        xb, yb = o.where(o.lt(u, zero), o.c(-a), o.c(a)), v
    else:
        xb, yb = u, o.where(o.lt(v, zero), o.c(-b), o.c(b))
    yu = b2 * v / (b2 - a2) if b != a else zero
    on_u = o.true if a >= b else o.ge(o.abs(v), o.c(b - a2 / b))
    xu = o.where(on_u, u, a * o.sqrt(o.abs(1 - (yu / b) ** 2)))
    yu = o.where(on_u, o.where(o.ge(v, zero), o.c(b), o.c(-b)), yu)
    xv = a2 * u / (a2 - b2) if b != a else zero
    on_v = o.true if b >= a else o.ge(o.abs(u), o.c(a - b2 / a))
    yv = o.where(on_v, v, b * o.sqrt(o.abs(1 - (xv / a) ** 2)))
    xv = o.where(on_v, o.where(o.ge(u, zero), o.c(a), o.c(-a)), xv)
    both = o.and_(near_u, near_v)
    x = o.where(both, xb, o.where(near_u, xu, o.where(near_v, xv, x)))
    y = o.where(both, yb, o.where(near_u, yu, o.where(near_v, yv, y)))
    return x, y


def _closest_3d(o, a: list, p: list, ok: list) -> list:
    """findClosestPoint's general case: Newton on Eberly's degree-6 polynomial."""
    a2 = [x * x for x in a]
    k = [a2[i] * p[i] * p[i] for i in range(3)]

    def residual(t):
        P, Q, R = t + a2[0], t + a2[1], t + a2[2]
        P2, Q2, R2 = P * P, Q * Q, R * R
        f = P2 * Q2 * R2 - k[0] * Q2 * R2 - k[1] * P2 * R2 - k[2] * P2 * Q2
        PQ, PR, QR = P * Q, P * R, Q * R
        fp = 2.0 * (PQ * R * (QR + PR + PQ) - k[0] * QR * (Q + R) - k[1] * PR * (P + R)
                    - k[2] * PQ * (P + Q))
        return f, fp
    inside = o.lt(sum((p[i] / a[i]) ** 2 for i in range(3)), o.c(1.0))
    t0 = o.where(inside, o.c(0.0), max(a) * o.sqrt(_dot(p, p)))
    t, conv = _newton(o, residual, t0)
    ok.append(conv)
    return [a2[i] * p[i] / (t + a2[i]) for i in range(3)]


def _closest_in_plane(o, a: list, p: list, axis: int) -> list:
    """findClosestPoint with specialCaseAxis = axis: the ellipse in that coordinate plane."""
    i, j = {0: (1, 2), 1: (2, 0), 2: (0, 1)}[axis]
    x, y = _closest_on_ellipse(o, a[i], a[j], p[i], p[j])
    out = [None, None, None]
    out[axis], out[i], out[j] = p[axis], x, y
    return out


def _closest(o, a: list, p: list, ok: list, used=True) -> list:
    """findClosestPoint(specialCaseAxis = -1): the plane cases near a coordinate plane (the
    one of the narrowest cross-section first), else the 3-D Newton (which must have
    converged where ``used`` and no plane case applies)."""
    conv: list = []
    out = _closest_3d(o, a, p, conv)
    order = sorted(range(3), key=lambda i: (sum(a) - a[i], i))
    nears = []
    for axis in reversed(order):
        near = o.le(o.abs(p[axis]), o.c(_ROUNDOFF))
        nears.append(near)
        out = _pick(o, near, _closest_in_plane(o, a, p, axis), out)
    ok.append(o.or_(o.not_(used), *nears, conv[0]))
    return out


def _solve4(H: list, v: list) -> list:
    """x with H x = v (4x4, symmetric positive definite: elimination without pivots)."""
    A = [list(row) + [rhs] for row, rhs in zip(H, v)]
    for k in range(4):
        for r in range(k + 1, 4):
            m = A[r][k] / A[k][k]
            A[r] = [A[r][c] - m * A[k][c] if c > k else A[r][c] for c in range(5)]
    x = [None] * 4
    for k in reversed(range(4)):
        x[k] = (A[k][4] - sum((A[k][c] * x[c] for c in range(k + 1, 4)), 0.0)) / A[k][k]
    return x


def _tangent_point(o, pe, r: list, p: list, a: list, vs: list, vs4, ok: list) -> list:
    """calcTangentPoint: r on the surface, in the plane (vs, vs4), with P-r tangent."""
    a2 = [x * x for x in a]

    def residuals(r, d):
        nr = [2.0 * r[i] / a2[i] for i in range(3)]
        e = [_dot(vs, r) + vs4, sum((r[i] / a[i]) ** 2 for i in range(3)) - 1.0,
             _dot(nr, r) + d, _dot(nr, p) + d]
        return sum(x * x for x in e), e
    d = -sum(2.0 * r[i] * r[i] / a2[i] for i in range(3))
    ssq, e = residuals(r, d)
    ssqo, alpha = ssq, o.c(0.01)
    pm = _unit(o, p)
    tiny = o.c(1e-8)
    for _ in range(TANGENT_STEPS):
        run = o.gt(ssq, tiny)
        J = [[vs[i], 2.0 * r[i] / a2[i], 4.0 * r[i] / a2[i], 2.0 * p[i] / a2[i]]
             for i in range(3)] + [[0.0, 0.0, 1.0, 1.0]]
        pcos = _dot(_unit(o, [p[i] - r[i] for i in range(3)]), pm)
        dd = o.where(o.gt(pcos, o.c(0.1)), 1.0 - pcos ** 100, o.c(1.0))
        v = [-sum(J[i][j] * e[j] for j in range(4)) for i in range(4)]
        H = [[sum(J[i][k] * J[j][k] for k in range(4)) for j in range(4)] for i in range(4)]
        vt = None
        for _ in range(DAMPING_STEPS):      # more damping while the step does not help
            go = o.and_(run, o.ge(ssq, ssqo))
            Hd = [[H[i][j] * (1.0 + alpha) if i == j else H[i][j] for j in range(4)]
                  for i in range(4)]
            step = [dd * x / 16.0 for x in _solve4(Hd, v)]
            vt = step if vt is None else _pick(o, go, step, vt)
            r_new = [r[i] + vt[i] for i in range(3)]
            ssq_new, e_new = residuals(r_new, d + vt[3])
            r, d = _pick(o, go, r_new, r), o.where(go, d + vt[3], d)
            ssqo, ssq = o.where(go, ssq, ssqo), o.where(go, ssq_new, ssq)
            e = _pick(o, go, e_new, e)
            alpha = o.where(go, alpha * 4.0, alpha)
        ok.append(o.not_(o.and_(run, o.ge(ssq, ssqo))))
        alpha = o.where(run, alpha / 8.0, alpha)
        fakt = o.c(0.5)
        for _ in range(DOUBLING_STEPS):     # double the step while it helps
            go = o.and_(run, o.le(ssq, ssqo))
            f2 = fakt * 2.0
            r_new = [r[i] + vt[i] * f2 for i in range(3)]
            ssq_new, e_new = residuals(r_new, d + vt[3] * f2)
            r, d = _pick(o, go, r_new, r), o.where(go, d + vt[3] * f2, d)
            ssqo, ssq = o.where(go, ssq, ssqo), o.where(go, ssq_new, ssq)
            e, fakt = _pick(o, go, e_new, e), o.where(go, f2, fakt)
        ok.append(o.not_(o.and_(run, o.le(ssq, ssqo))))
        r = _pick(o, run, [r[i] - vt[i] * fakt for i in range(3)], r)
        d = o.where(run, d - vt[3] * fakt, d)
        ssq_back, e_back = residuals(r, d)
        ssq, e = o.where(run, ssq_back, ssq), _pick(o, run, e_back, e)
        ssqo = o.where(run, ssq, ssqo)
    ok.append(o.not_(o.gt(ssq, tiny)))
    return _pick(o, o.lt(o.abs(pe), o.c(1e-4)), list(p), r)


def _surface_length(o, r1, r2, a, vs, vs4, n_max: int, factor: float, p1, p2,
                    sign: int) -> object:
    """CalcDistanceOnEllipsoid (normalized units): the polyline from r1 to r2, taken the far
    way round when OpenSim's wrong-way test asks for it."""
    dr = [r1[i] - r2[i] for i in range(3)]
    chord = o.sqrt(_dot(dr, dr))
    nseg = chord / factor / _SEG
    at_least = [o.ge(nseg, o.c(float(k))) for k in range(n_max + 2)]   # N >= k
    if n_max == 499:                         # OpenSim's cap
        at_least[500] = o.false
    N = o.c(1.0)
    for k in range(2, n_max + 1):
        N = N + o.where(at_least[k], o.c(1.0), o.c(0.0))
    ok = o.not_(at_least[n_max + 1]) if n_max < 499 else o.true
    # the plane's axis point a0 (on the axis of the largest |vs_i|) and the frame at it
    big1 = o.gt(o.abs(vs[1]), o.abs(vs[0]))
    big2 = o.gt(o.abs(vs[2]), o.where(big1, o.abs(vs[1]), o.abs(vs[0])))
    zero = o.c(0.0)
    a0 = _pick(o, big2, [zero, zero, -vs4 / vs[2]],
               _pick(o, big1, [zero, -vs4 / vs[1], zero], [-vs4 / vs[0], zero, zero]))
    ar1 = _unit(o, [r1[i] - a0[i] for i in range(3)])
    ar2 = _unit(o, [r2[i] - a0[i] for i in range(3)])
    phi0 = o.acos(_dot(ar1, ar2))
    vsz = _unit(o, _cross(ar1, ar2))
    vsy = _cross(vsz, ar1)
    f2 = [a0[i] / a[i] for i in range(3)]
    cc = _dot(f2, f2) - 1.0

    def point(phi) -> list:
        c, s = o.cos(phi), o.sin(phi)
        ray = [c * ar1[i] + s * vsy[i] for i in range(3)]
        f1 = [ray[i] / a[i] for i in range(3)]
        aa, bb = _dot(f1, f1), 2.0 * _dot(f1, f2)
        mu3 = (-bb + o.sqrt(bb * bb - 4.0 * aa * cc)) / (2.0 * aa)
        return [a0[i] + mu3 * ray[i] for i in range(3)]

    def polyline(dphi):
        total, prev = o.c(0.0), list(r1)
        for k in range(1, n_max + 1):
            last = o.and_(at_least[k], o.not_(at_least[k + 1])) if k > 1 else \
                o.not_(at_least[2])
            nxt = _pick(o, last, list(r2), point(float(k) * dphi))
            seg = [nxt[i] - prev[i] for i in range(3)]
            total = total + o.where(at_least[k], o.sqrt(_dot(seg, seg)), o.c(0.0))
            prev = nxt
        return total

    near_dphi, far_dphi = phi0 / N, -(2.0 * math.pi - phi0) / N
    length = polyline(near_dphi)
    if sign != 0:      # OpenSim's wrong-way test on the first and last chords
        w1, w2 = point(near_dphi), point((N - 1.0) * near_dphi)
        back1 = _dot(_unit(o, [p1[i] - r1[i] for i in range(3)]),
                     _unit(o, [w1[i] - r1[i] for i in range(3)]))
        back2 = _dot(_unit(o, [p2[i] - r2[i] for i in range(3)]),
                     _unit(o, [w2[i] - r2[i] for i in range(3)]))
        wrong = o.and_(at_least[2], o.or_(o.gt(back1, zero), o.gt(back2, zero)))
        length = o.where(wrong, polyline(far_dphi), length)
    length = o.where(at_least[1], length, chord)
    return o.where(ok, length, o.nan)


def ellipsoid_wrap(o, dims, axis: int, sign: int, method: str, P1: list, P2: list) -> tuple:
    """(wraps, r1, r2, s): OpenSim's wrapLine of segment P1-P2 (ellipsoid frame, lists of 3)
    over the ellipsoid of radii ``dims``; ``axis``/``sign`` its quadrant (sign 0: all),
    ``method`` hybrid/axial/midpoint.  ``wraps``: OpenSim's ``mandatoryWrap``; r1, r2 and s
    (NaN when a loop would need more steps than unrolled) are meaningful where it holds."""
    factor = 3.0 / sum(dims)
    a = [float(x) * factor for x in dims]
    p1, p2 = [x * factor for x in P1], [x * factor for x in P2]
    ok: list = []
    zero, one = o.c(0.0), o.c(1.0)
    p1e = sum((p1[i] / a[i]) ** 2 for i in range(3)) - 1.0
    p2e = sum((p2[i] / a[i]) ** 2 for i in range(3)) - 1.0
    inside = o.or_(o.lt(p1e, o.c(-1e-4)), o.lt(p2e, o.c(-1e-4)))
    p1p2 = [p1[i] - p2[i] for i in range(3)]
    ppm = _dot(_unit(o, p1), _unit(o, p2)) - 1.0
    collinear = o.lt(o.abs(ppm), o.c(1e-4))
    f1 = [p1p2[i] / a[i] for i in range(3)]
    f2 = [p2[i] / a[i] for i in range(3)]
    aa, bb, cc = _dot(f1, f1), 2.0 * _dot(f1, f2), _dot(f2, f2) - 1.0
    disc = bb * bb - 4.0 * aa * cc
    l1 = (-bb + o.sqrt(disc)) / (2.0 * aa)
    l2 = (-bb - o.sqrt(disc)) / (2.0 * aa)
    crosses = o.and_(o.ge(disc, zero), o.gt(l1, zero), o.lt(l1, one), o.gt(l2, zero),
                     o.lt(l2, one))
    wraps = o.and_(o.not_(inside), o.not_(collinear), crosses)
    r1 = [p2[i] + l1 * p1p2[i] for i in range(3)]
    r2 = [p2[i] + l2 * p1p2[i] for i in range(3)]
    r1r2 = [r2[i] - r1[i] for i in range(3)]
    # (1) Frans: the chord's crossing of each coordinate plane, its nearest surface point
    mu = [o.abs(x) for x in _unit(o, p1p2)]
    t = [-r1[i] / r1r2[i] for i in range(3)]
    t_sv = [[r1[j] + t[i] * r1r2[j] for j in range(3)] for i in range(3)]
    t_c1 = [_closest_in_plane(o, a, t_sv[i], i) for i in range(3)]
    b1 = o.gt(mu[1], mu[0])
    b2 = o.gt(mu[2], o.where(b1, mu[1], mu[0]))

    def best(vals):
        return o.where(b2, vals[2], o.where(b1, vals[1], vals[0]))
    mu_b, t_b = best(mu), best(t)
    c1 = [best([t_c1[k][j] for k in range(3)]) for j in range(3)]
    fan_weight = None                        # OpenSim's -Infinity: no fan
    if method == "hybrid":
        s = o.where(o.or_(o.lt(t_b, zero), o.gt(t_b, one)), zero,
                    o.where(o.lt(t_b, o.c(_SV_BLEND)), t_b / _SV_BLEND,
                            o.where(o.gt(t_b, o.c(1 - _SV_BLEND)), (1.0 - t_b) / _SV_BLEND,
                                    one)))
        mu_b = o.where(o.and_(o.gt(mu_b, o.c(_MU_MIN)), o.lt(s, one)),
                       _MU_MIN + s * (mu_b - _MU_MIN), mu_b)
        # (2) the fan: the mean closest-point direction from samples of the chord
        only_fan = o.le(mu_b, o.c(_MU_MIN))
        use_fan = o.lt(mu_b, o.c(_MU_MAX))
        v_sum, fan_ok = [zero, zero, zero], []
        for i in range(1, _FAN - 1):
            sv = [r1[j] + (i / _FAN) * r1r2[j] for j in range(3)]
            c = _closest_3d(o, a, sv, fan_ok)
            v = _unit(o, [c[j] - sv[j] for j in range(3)])
            v_sum = [v_sum[j] + v[j] for j in range(3)]
        v_sum = _unit(o, v_sum)
        mid = [r1[j] + 0.5 * r1r2[j] for j in range(3)]
        ok.append(o.or_(o.not_(use_fan), o.and_(*fan_ok)))
        c_fan = _closest(o, a, [mid[j] + v_sum[j] for j in range(3)], ok, use_fan)
        tt = (mu_b - _MU_MIN) / (_MU_MAX - _MU_MIN)
        blend = _closest(o, a, [tt * c1[j] + (1.0 - tt) * c_fan[j] for j in range(3)], ok,
                         o.and_(use_fan, o.not_(only_fan)))
        c1 = _pick(o, use_fan, _pick(o, only_fan, c_fan, blend), c1)
        fan_weight = o.where(use_fan, o.where(only_fan, one, 1.0 - tt), o.c(-1.0))
    elif method == "midpoint":
        c1 = _closest(o, a, [r1[j] + 0.5 * r1r2[j] for j in range(3)], ok)
    if method == "axial":
        keep = o.and_(o.gt(t_b, zero), o.lt(t_b, one))
        r1, r2 = _pick(o, keep, c1, r1), _pick(o, keep, c1, r2)
    else:
        r1, r2 = list(c1), list(c1)
    if sign != 0:                            # c1 to the quadrant's side
        flip = o.lt(c1[axis], zero) if sign > 0 else o.ge(c1[axis], zero)
        flipped = list(c1)
        flipped[axis] = -c1[axis]
        r1, r2 = _pick(o, flip, flipped, r1), _pick(o, flip, flipped, r2)
        if fan_weight is not None:           # toward the plane by the fan's weight
            pulled = list(flipped)
            pulled[axis] = flipped[axis] + fan_weight * (0.0 - flipped[axis])
            pulled = _closest(o, a, pulled, ok, o.and_(flip, o.gt(fan_weight, zero)))
            flipped = _pick(o, o.gt(fan_weight, zero), pulled, flipped)
        c1 = _pick(o, flip, flipped, c1)
    vs = _unit(o, _cross(p1p2, [p1[i] - c1[i] for i in range(3)]))
    vs4 = -_dot(vs, c1)
    r1 = _tangent_point(o, p1e, r1, p1, a, vs, vs4, ok)
    r2 = _tangent_point(o, p2e, r2, p2, a, vs, vs4, ok)
    n_max = min(499, int(2.0 * max(dims) * 1.01 / _SEG) + 1)
    s = _surface_length(o, r1, r2, a, vs, vs4, n_max, factor, p1, p2, sign)
    s = o.where(o.and_(*ok), s / factor, o.nan)
    return wraps, [x / factor for x in r1], [x / factor for x in r2], s
