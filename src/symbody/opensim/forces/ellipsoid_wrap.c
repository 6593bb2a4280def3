/* OpenSim 4.6's WrapEllipsoid::wrapLine on doubles: the loops of the fixed program in
   wrap_ellipsoid.py (see its docstring) as real loops, each stopped by OpenSim's own test
   at OpenSim's own iteration limit.  A CPython extension ("symbody_ellipsoid_wrap") with one
   function:

       wrap(a0, a1, a2, axis, sign, method, p1x, p1y, p1z, p2x, p2y, p2z)
           -> (wraps, r1x, r1y, r1z, r2x, r2y, r2z, s)

   radii a (ellipsoid frame), quadrant axis/sign (sign 0: all), method 0 hybrid, 1 axial,
   2 midpoint, P1 and P2 in the ellipsoid frame; r1, r2 (ellipsoid frame) and the length s
   over the surface are meaningful where wraps is 1 (OpenSim's mandatoryWrap). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#define NEWTON_LIMIT 64      /* findClosestPoint: up to 64 Newton steps to |f| < 1e-9 */
#define ELLIPSE_STEPS 63     /* closestPointToEllipse: its 64 passes (63 updates of t) */
#define TANGENT_LIMIT 50     /* calcTangentPoint: outer iterations to sum e^2 <= 1e-8 */
#define INNER_LIMIT 1000     /* its damping and step-doubling loops */
#define ROUNDOFF 2e-13
#define MU_MIN 0.7073
#define MU_MAX 0.9
#define SV_BLEND 0.3
#define FAN 300
#define SEG 0.001

static double dot3(const double *a, const double *b) { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2]; }

static void cross3(const double *a, const double *b, double *out) {
    double c0 = a[1]*b[2] - a[2]*b[1], c1 = a[2]*b[0] - a[0]*b[2], c2 = a[0]*b[1] - a[1]*b[0];
    out[0] = c0; out[1] = c1; out[2] = c2;
}

static void unit3(const double *a, double *out) {
    double n = sqrt(dot3(a, a));
    out[0] = a[0] / n; out[1] = a[1] / n; out[2] = a[2] / n;
}

static void copy3(const double *a, double *out) { out[0] = a[0]; out[1] = a[1]; out[2] = a[2]; }

/* closestPointToEllipse: the point (x, y) of (x/a)^2 + (y/b)^2 = 1 nearest (u, v) */
static void closest_on_ellipse(double a, double b, double u, double v, double *x, double *y) {
    double a2 = a*a, b2 = b*b, a2u2 = a2*u*u, b2v2 = b2*v*v;
    int near_u = fabs(u) <= ROUNDOFF, near_v = fabs(v) <= ROUNDOFF;
    if (near_u && near_v) {
        if (a < b) { *x = u < 0.0 ? -a : a; *y = v; }
        else { *x = u; *y = v < 0.0 ? -b : b; }
        return;
    }
    if (near_u) {
        double yu = b != a ? b2*v/(b2 - a2) : 0.0;
        int on_u = a >= b || fabs(v) >= b - a2/b;
        if (on_u) { *x = u; *y = v >= 0.0 ? b : -b; }
        else { *x = a*sqrt(fabs(1.0 - (yu/b)*(yu/b))); *y = yu; }
        return;
    }
    if (near_v) {
        double xv = b != a ? a2*u/(a2 - b2) : 0.0;
        int on_v = b >= a || fabs(u) >= a - b2/a;
        if (on_v) { *x = u >= 0.0 ? a : -a; *y = v; }
        else { *x = xv; *y = b*sqrt(fabs(1.0 - (xv/a)*(xv/a))); }
        return;
    }
    double t = (u/a)*(u/a) + (v/b)*(v/b) < 1.0 ? 0.0 : (a > b ? a : b) * sqrt(u*u + v*v);
    for (int i = 0; i < ELLIPSE_STEPS; i++) {
        double P = t + a2, Q = t + b2;
        double f = P*P*Q*Q - a2u2*Q*Q - b2v2*P*P;
        if (fabs(f) < 1e-9) break;
        double fp = 2.0*(P*Q*(P + Q) - a2u2*Q - b2v2*P);
        t -= f/fp;
    }
    *x = a2*u/(t + a2);
    *y = b2*v/(t + b2);
}

/* findClosestPoint's general case: Newton on Eberly's degree-6 polynomial */
static void closest_3d(const double *a, const double *p, double *out) {
    double a2[3] = {a[0]*a[0], a[1]*a[1], a[2]*a[2]};
    double k0 = a2[0]*p[0]*p[0], k1 = a2[1]*p[1]*p[1], k2 = a2[2]*p[2]*p[2];
    double e = 0.0, amax = a[0];
    for (int i = 0; i < 3; i++) { e += (p[i]/a[i])*(p[i]/a[i]); if (a[i] > amax) amax = a[i]; }
    double t = e < 1.0 ? 0.0 : amax * sqrt(dot3(p, p));
    for (int i = 0; i < NEWTON_LIMIT; i++) {
        double P = t + a2[0], Q = t + a2[1], R = t + a2[2];
        double P2 = P*P, Q2 = Q*Q, R2 = R*R;
        double f = P2*Q2*R2 - k0*Q2*R2 - k1*P2*R2 - k2*P2*Q2;
        if (fabs(f) < 1e-9) break;
        double PQ = P*Q, PR = P*R, QR = Q*R;
        double fp = 2.0*(PQ*R*(QR + PR + PQ) - k0*QR*(Q + R) - k1*PR*(P + R) - k2*PQ*(P + Q));
        t -= f/fp;
    }
    for (int i = 0; i < 3; i++) out[i] = a2[i]*p[i]/(t + a2[i]);
}

/* The fan's closest points: closest_3d of its FAN - 2 samples r1 + (i/FAN) (r2 - r1),
   i = 1 .. FAN - 2, all at once.  The samples are lanes of FAN_W-double vectors (GCC/Clang
   vector extensions: IEEE operations lane-wise, the scalar routine's operations in the
   scalar routine's order, no contraction), and each Newton step sweeps every chunk of lanes
   before the next, so the chunks' dependent chains (the division's latency) overlap.  A lane
   freezes once its |f| < 1e-9, as the scalar loop stops; a chunk whose lanes are all frozen
   is skipped.  Built for AVX-512 and AVX2 too where the compiler can (x86-64 Linux gcc: the
   variant is picked at load time by the processor, so a cached library is right on any
   x86-64; on AVX-512 the same program in intrinsics, fan_sum_avx512, runs instead);
   elsewhere the vectors are emulated by the baseline's registers. */
#define FAN_W 8
#define FAN_N (FAN - 2)
#define FAN_CHUNKS ((FAN_N + FAN_W - 1) / FAN_W)
typedef double vf __attribute__((vector_size(FAN_W * sizeof(double))));
typedef long long vfm __attribute__((vector_size(FAN_W * sizeof(long long))));

#ifndef FAN_CLONES           /* (-DFAN_CLONES= builds the baseline only: tests) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && __GNUC__ >= 8
#define FAN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#ifndef FAN_NO_INTRINSICS    /* (-DFAN_NO_INTRINSICS: the clones only, tests) */
#define FAN_INTRINSICS 1     /* fan_sum_avx2 below, in intrinsics */
#ifndef FAN_NO_AVX512        /* (-DFAN_NO_AVX512: no fan_sum_avx512, tests) */
#define FAN_AVX512 1         /* and fan_sum_avx512, in intrinsics */
#endif
#endif
#else
#define FAN_CLONES
#endif
#endif

static inline __attribute__((always_inline)) vf splat(double x) {
    vf v;
    for (int l = 0; l < FAN_W; l++) v[l] = x;
    return v;
}

static inline __attribute__((always_inline)) vf vsqrt(vf x) {
    vf r;
    for (int l = 0; l < FAN_W; l++) r[l] = sqrt(x[l]);
    return r;
}

#define VBLEND(mask, x, y) ((vf)(((vfm)(x) & (mask)) | ((vfm)(y) & ~(mask))))

/* lanes where |x| < tol (fabs(x) < tol: the sign bit cleared) */
static inline __attribute__((always_inline)) vfm below(vf x, vf tol) {
    vfm magnitude = (vfm)x & ~(vfm)splat(-0.0);
    return (vf)magnitude < tol;
}

/* nonzero when any lane of the mask m is set (a shuffle tree, no lane extraction) */
#ifdef __clang__
#define SHUFFLE(m, a, b, c, d, e, f, g, h) __builtin_shufflevector(m, m, a, b, c, d, e, f, g, h)
#else
#define SHUFFLE(m, a, b, c, d, e, f, g, h) __builtin_shuffle(m, (vfm){a, b, c, d, e, f, g, h})
#endif
static inline __attribute__((always_inline)) long long any_lane(vfm m) {
    m = m | SHUFFLE(m, 4, 5, 6, 7, 0, 1, 2, 3);
    m = m | SHUFFLE(m, 2, 3, 0, 1, 6, 7, 4, 5);
    m = m | SHUFFLE(m, 1, 0, 3, 2, 5, 4, 7, 6);
    return m[0];
}

/* the samples' fractions i/FAN, i = 0 .. FAN - 1 (constants: the compiler's IEEE division) */
#define FRAC1(i) ((double)(i)/FAN),
#define FRAC10(i) FRAC1(i) FRAC1(i + 1) FRAC1(i + 2) FRAC1(i + 3) FRAC1(i + 4) FRAC1(i + 5) \
    FRAC1(i + 6) FRAC1(i + 7) FRAC1(i + 8) FRAC1(i + 9)
#define FRAC100(i) FRAC10(i) FRAC10(i + 10) FRAC10(i + 20) FRAC10(i + 30) FRAC10(i + 40) \
    FRAC10(i + 50) FRAC10(i + 60) FRAC10(i + 70) FRAC10(i + 80) FRAC10(i + 90)
static const double FAN_FRACTIONS[FAN] = {FRAC100(0) FRAC100(100) FRAC100(200)};

/* v_sum = Σ_i unit(closest_3d(q_i) - q_i), summed in order i = 1 .. FAN - 2 */
FAN_CLONES
static void fan_sum_vectors(const double *a, const double *r1, const double *r1r2,
                            double *v_sum) {
    double a2[3] = {a[0]*a[0], a[1]*a[1], a[2]*a[2]}, amax = a[0];
    for (int i = 1; i < 3; i++) if (a[i] > amax) amax = a[i];
    vf qx[FAN_CHUNKS], qy[FAN_CHUNKS], qz[FAN_CHUNKS], k0[FAN_CHUNKS], k1[FAN_CHUNKS],
        k2[FAN_CHUNKS], t[FAN_CHUNKS];
    const vf A0 = splat(a2[0]), A1 = splat(a2[1]), A2 = splat(a2[2]);
    const vf zero = splat(0.0), one = splat(1.0), two = splat(2.0), tol = splat(1e-9);
    /* e < 1 (inside: t starts at 0) decided without e's divisions where e's product form
       is more than 1e-12 from 1 (both agree to a few ulps); else e as closest_3d has it */
    const vf inside = splat(1.0 - 1e-12);
    const vf ia0 = splat(1.0/a2[0]), ia1 = splat(1.0/a2[1]), ia2 = splat(1.0/a2[2]);
    for (int c = 0; c < FAN_CHUNKS; c++) {   /* (spare lanes repeat the last sample) */
        vf f;
        for (int l = 0; l < FAN_W; l++) {
            int i = 1 + c*FAN_W + l;
            f[l] = FAN_FRACTIONS[i < FAN_N ? i : FAN_N];
        }
        vf x = splat(r1[0]) + f*splat(r1r2[0]), y = splat(r1[1]) + f*splat(r1r2[1]),
           z = splat(r1[2]) + f*splat(r1r2[2]);
        qx[c] = x; qy[c] = y; qz[c] = z;
        k0[c] = A0*x*x; k1[c] = A1*y*y; k2[c] = A2*z*z;
        vf rough = x*x*ia0 + y*y*ia1 + z*z*ia2;
        if (!any_lane(~(rough < inside))) { t[c] = zero; continue; }
        vf ex = x/splat(a[0]), ey = y/splat(a[1]), ez = z/splat(a[2]);
        vf e = zero + ex*ex;
        e = e + ey*ey;
        e = e + ez*ez;
        vf far = splat(amax)*vsqrt(x*x + y*y + z*z);
        t[c] = VBLEND(e < one, zero, far);
    }
    unsigned char active[FAN_CHUNKS];
    for (int c = 0; c < FAN_CHUNKS; c++) active[c] = 1;
    for (int i = 0; i < NEWTON_LIMIT; i++) {
        int any = 0;
        for (int c = 0; c < FAN_CHUNKS; c++) {
            if (!active[c]) continue;
            vf tc = t[c];
            vf P = tc + A0, Q = tc + A1, R = tc + A2;
            vf P2 = P*P, Q2 = Q*Q, R2 = R*R;
            vf f = P2*Q2*R2 - k0[c]*Q2*R2 - k1[c]*P2*R2 - k2[c]*P2*Q2;
            vfm done = below(f, tol);
            if (!any_lane(~done)) { active[c] = 0; continue; }
            any = 1;
            vf PQ = P*Q, PR = P*R, QR = Q*R;
            vf fp = two*(PQ*R*(QR + PR + PQ) - k0[c]*QR*(Q + R) - k1[c]*PR*(P + R)
                         - k2[c]*PQ*(P + Q));
            t[c] = VBLEND(done, tc, tc - f/fp);
        }
        if (!any) break;
    }
    double sx = 0.0, sy = 0.0, sz = 0.0;
    for (int c = 0; c < FAN_CHUNKS; c++) {   /* unit(closest - q), summed in sample order */
        vf x = qx[c], y = qy[c], z = qz[c];
        vf vx = A0*x/(t[c] + A0) - x, vy = A1*y/(t[c] + A1) - y, vz = A2*z/(t[c] + A2) - z;
        vf n = vsqrt(vx*vx + vy*vy + vz*vz);
        vx = vx/n; vy = vy/n; vz = vz/n;
        int lanes = FAN_N - c*FAN_W < FAN_W ? FAN_N - c*FAN_W : FAN_W;
        for (int l = 0; l < lanes; l++) { sx = sx + vx[l]; sy = sy + vy[l]; sz = sz + vz[l]; }
    }
    v_sum[0] = sx; v_sum[1] = sy; v_sum[2] = sz;
}

#ifdef FAN_INTRINSICS
/* fan_sum_vectors on AVX-512 in intrinsics: the same IEEE operations on the same lanes in
   the same order (each statement below transcribes the one of fan_sum_vectors at the same
   place, parenthesized as C evaluates it), with the lane tests in mask registers (a compare
   and a mask test, where the generic vectors materialize 0/-1 lanes and reduce them with a
   shuffle tree: ~18 % of a Newton sweep), the fractions one aligned load per chunk, and the
   unit vectors' lanes summed from memory.  WRAP_C_FLAGS' -ffp-contract=off keeps every
   product and sum a separate rounding here too (GCC's intrinsics are vector operators). */
#include <immintrin.h>
#define V512 __attribute__((target("avx512f")))
typedef __m512d v8;

/* FAN_FRACTIONS of each chunk's lanes (the last chunk's spare lanes repeat sample FAN_N) */
#define FRAC_LANE(i) ((i) < FAN_N ? (double)(i)/FAN : (double)FAN_N/FAN)
#define FRAC_CHUNK(c) FRAC_LANE(1 + 8*(c)), FRAC_LANE(2 + 8*(c)), FRAC_LANE(3 + 8*(c)), \
    FRAC_LANE(4 + 8*(c)), FRAC_LANE(5 + 8*(c)), FRAC_LANE(6 + 8*(c)), FRAC_LANE(7 + 8*(c)), \
    FRAC_LANE(8 + 8*(c))
#define FRAC_CHUNK4(c) FRAC_CHUNK(c), FRAC_CHUNK(c + 1), FRAC_CHUNK(c + 2), FRAC_CHUNK(c + 3)
_Static_assert(FAN_CHUNKS <= 40 && FAN_W == 8, "the table below: 40 chunks of 8 lanes");
static const double FAN_LANE_FRACTIONS[40*8] __attribute__((aligned(64))) = {
    FRAC_CHUNK4(0), FRAC_CHUNK4(4), FRAC_CHUNK4(8), FRAC_CHUNK4(12), FRAC_CHUNK4(16),
    FRAC_CHUNK4(20), FRAC_CHUNK4(24), FRAC_CHUNK4(28), FRAC_CHUNK4(32), FRAC_CHUNK4(36)};

#ifdef FAN_AVX512
static inline __attribute__((always_inline)) V512 v8 mul(v8 x, v8 y) { return _mm512_mul_pd(x, y); }
static inline __attribute__((always_inline)) V512 v8 add(v8 x, v8 y) { return _mm512_add_pd(x, y); }
static inline __attribute__((always_inline)) V512 v8 sub(v8 x, v8 y) { return _mm512_sub_pd(x, y); }
static inline __attribute__((always_inline)) V512 v8 dvd(v8 x, v8 y) { return _mm512_div_pd(x, y); }

V512
static void fan_sum_avx512(const double *a, const double *r1, const double *r1r2, double *v_sum) {
    double a2[3] = {a[0]*a[0], a[1]*a[1], a[2]*a[2]}, amax = a[0];
    for (int i = 1; i < 3; i++) if (a[i] > amax) amax = a[i];
    v8 qx[FAN_CHUNKS], qy[FAN_CHUNKS], qz[FAN_CHUNKS], k0[FAN_CHUNKS], k1[FAN_CHUNKS],
       k2[FAN_CHUNKS], t[FAN_CHUNKS];
    const v8 A0 = _mm512_set1_pd(a2[0]), A1 = _mm512_set1_pd(a2[1]), A2 = _mm512_set1_pd(a2[2]);
    const v8 zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0), two = _mm512_set1_pd(2.0),
             tol = _mm512_set1_pd(1e-9), inside = _mm512_set1_pd(1.0 - 1e-12);
    const v8 ia0 = _mm512_set1_pd(1.0/a2[0]), ia1 = _mm512_set1_pd(1.0/a2[1]),
             ia2 = _mm512_set1_pd(1.0/a2[2]);
    const v8 R1x = _mm512_set1_pd(r1[0]), R1y = _mm512_set1_pd(r1[1]), R1z = _mm512_set1_pd(r1[2]),
             Dx = _mm512_set1_pd(r1r2[0]), Dy = _mm512_set1_pd(r1r2[1]),
             Dz = _mm512_set1_pd(r1r2[2]);
    for (int c = 0; c < FAN_CHUNKS; c++) {
        v8 f = _mm512_load_pd(FAN_LANE_FRACTIONS + 8*c);
        v8 x = add(R1x, mul(f, Dx)), y = add(R1y, mul(f, Dy)), z = add(R1z, mul(f, Dz));
        v8 xx = mul(x, x), yy = mul(y, y), zz = mul(z, z);
        qx[c] = x; qy[c] = y; qz[c] = z;
        k0[c] = mul(mul(A0, x), x); k1[c] = mul(mul(A1, y), y); k2[c] = mul(mul(A2, z), z);
        v8 rough = add(add(mul(xx, ia0), mul(yy, ia1)), mul(zz, ia2));
        if (_mm512_cmp_pd_mask(rough, inside, _CMP_LT_OQ) == 0xff) { t[c] = zero; continue; }
        v8 ex = dvd(x, _mm512_set1_pd(a[0])), ey = dvd(y, _mm512_set1_pd(a[1])),
           ez = dvd(z, _mm512_set1_pd(a[2]));
        v8 e = add(zero, mul(ex, ex));
        e = add(e, mul(ey, ey));
        e = add(e, mul(ez, ez));
        v8 far = mul(_mm512_set1_pd(amax), _mm512_sqrt_pd(add(add(xx, yy), zz)));
        t[c] = _mm512_mask_mov_pd(far, _mm512_cmp_pd_mask(e, one, _CMP_LT_OQ), zero);
    }
    unsigned char active[FAN_CHUNKS];
    for (int c = 0; c < FAN_CHUNKS; c++) active[c] = 1;
    for (int i = 0; i < NEWTON_LIMIT; i++) {
        int any = 0;
        for (int c = 0; c < FAN_CHUNKS; c++) {
            if (!active[c]) continue;
            v8 tc = t[c];
            v8 P = add(tc, A0), Q = add(tc, A1), R = add(tc, A2);
            v8 P2 = mul(P, P), Q2 = mul(Q, Q), R2 = mul(R, R);
            v8 f = sub(sub(sub(mul(mul(P2, Q2), R2), mul(mul(k0[c], Q2), R2)),
                           mul(mul(k1[c], P2), R2)), mul(mul(k2[c], P2), Q2));
            __mmask8 moving = _mm512_cmp_pd_mask(_mm512_abs_pd(f), tol, _CMP_NLT_UQ);
            if (!moving) { active[c] = 0; continue; }
            any = 1;
            v8 PQ = mul(P, Q), PR = mul(P, R), QR = mul(Q, R);
            v8 fp = mul(two, sub(sub(sub(mul(mul(PQ, R), add(add(QR, PR), PQ)),
                                         mul(mul(k0[c], QR), add(Q, R))),
                                     mul(mul(k1[c], PR), add(P, R))),
                                 mul(mul(k2[c], PQ), add(P, Q))));
            t[c] = _mm512_mask_mov_pd(tc, moving, sub(tc, dvd(f, fp)));
        }
        if (!any) break;
    }
    double sx = 0.0, sy = 0.0, sz = 0.0;
    for (int c = 0; c < FAN_CHUNKS; c++) {   /* unit(closest - q), summed in sample order */
        v8 x = qx[c], y = qy[c], z = qz[c];
        v8 vx = sub(dvd(mul(A0, x), add(t[c], A0)), x), vy = sub(dvd(mul(A1, y), add(t[c], A1)), y),
           vz = sub(dvd(mul(A2, z), add(t[c], A2)), z);
        v8 n = _mm512_sqrt_pd(add(add(mul(vx, vx), mul(vy, vy)), mul(vz, vz)));
        double ux[8] __attribute__((aligned(64))), uy[8] __attribute__((aligned(64))),
               uz[8] __attribute__((aligned(64)));
        _mm512_store_pd(ux, dvd(vx, n));
        _mm512_store_pd(uy, dvd(vy, n));
        _mm512_store_pd(uz, dvd(vz, n));
        int lanes = FAN_N - c*8 < 8 ? FAN_N - c*8 : 8;
        for (int l = 0; l < lanes; l++) { sx = sx + ux[l]; sy = sy + uy[l]; sz = sz + uz[l]; }
    }
    v_sum[0] = sx; v_sum[1] = sy; v_sum[2] = sz;
}
#endif

/* fan_sum_vectors on AVX2 in intrinsics, four lanes a chunk: each lane's statements are those
   of fan_sum_avx512 (the same IEEE operations in the same order; a lane's Newton iterates do
   not depend on its chunk-mates: a lane that meets |f| < 1e-9 keeps its t, and the inside
   test is exact either way), with the lane tests as a compare and a movemask.  The clones'
   AVX2 variant, 8-lane generic vectors on 4-lane registers, lowered those tests to scalar
   compares and moves: ~half of its time. */
#define V256 __attribute__((target("avx2")))
typedef __m256d v4;
#define FAN_CHUNKS4 ((FAN_N + 3) / 4)
_Static_assert(FAN_CHUNKS4 * 4 <= 40 * 8, "the fractions table covers the 4-lane chunks");

static inline __attribute__((always_inline)) V256 v4 mul4(v4 x, v4 y) { return _mm256_mul_pd(x, y); }
static inline __attribute__((always_inline)) V256 v4 add4(v4 x, v4 y) { return _mm256_add_pd(x, y); }
static inline __attribute__((always_inline)) V256 v4 sub4(v4 x, v4 y) { return _mm256_sub_pd(x, y); }
static inline __attribute__((always_inline)) V256 v4 dvd4(v4 x, v4 y) { return _mm256_div_pd(x, y); }

V256
static void fan_sum_avx2(const double *a, const double *r1, const double *r1r2, double *v_sum) {
    double a2[3] = {a[0]*a[0], a[1]*a[1], a[2]*a[2]}, amax = a[0];
    for (int i = 1; i < 3; i++) if (a[i] > amax) amax = a[i];
    v4 qx[FAN_CHUNKS4], qy[FAN_CHUNKS4], qz[FAN_CHUNKS4], k0[FAN_CHUNKS4], k1[FAN_CHUNKS4],
       k2[FAN_CHUNKS4], t[FAN_CHUNKS4];
    const v4 A0 = _mm256_set1_pd(a2[0]), A1 = _mm256_set1_pd(a2[1]), A2 = _mm256_set1_pd(a2[2]);
    const v4 zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0),
             tol = _mm256_set1_pd(1e-9), inside = _mm256_set1_pd(1.0 - 1e-12),
             sign = _mm256_set1_pd(-0.0);
    const v4 ia0 = _mm256_set1_pd(1.0/a2[0]), ia1 = _mm256_set1_pd(1.0/a2[1]),
             ia2 = _mm256_set1_pd(1.0/a2[2]);
    const v4 R1x = _mm256_set1_pd(r1[0]), R1y = _mm256_set1_pd(r1[1]), R1z = _mm256_set1_pd(r1[2]),
             Dx = _mm256_set1_pd(r1r2[0]), Dy = _mm256_set1_pd(r1r2[1]),
             Dz = _mm256_set1_pd(r1r2[2]);
    for (int c = 0; c < FAN_CHUNKS4; c++) {
        v4 f = _mm256_load_pd(FAN_LANE_FRACTIONS + 4*c);
        v4 x = add4(R1x, mul4(f, Dx)), y = add4(R1y, mul4(f, Dy)), z = add4(R1z, mul4(f, Dz));
        v4 xx = mul4(x, x), yy = mul4(y, y), zz = mul4(z, z);
        qx[c] = x; qy[c] = y; qz[c] = z;
        k0[c] = mul4(mul4(A0, x), x); k1[c] = mul4(mul4(A1, y), y); k2[c] = mul4(mul4(A2, z), z);
        v4 rough = add4(add4(mul4(xx, ia0), mul4(yy, ia1)), mul4(zz, ia2));
        if (_mm256_movemask_pd(_mm256_cmp_pd(rough, inside, _CMP_LT_OQ)) == 0xf) {
            t[c] = zero;
            continue;
        }
        v4 ex = dvd4(x, _mm256_set1_pd(a[0])), ey = dvd4(y, _mm256_set1_pd(a[1])),
           ez = dvd4(z, _mm256_set1_pd(a[2]));
        v4 e = add4(zero, mul4(ex, ex));
        e = add4(e, mul4(ey, ey));
        e = add4(e, mul4(ez, ez));
        v4 far = mul4(_mm256_set1_pd(amax), _mm256_sqrt_pd(add4(add4(xx, yy), zz)));
        t[c] = _mm256_blendv_pd(far, zero, _mm256_cmp_pd(e, one, _CMP_LT_OQ));
    }
    unsigned char active[FAN_CHUNKS4];
    for (int c = 0; c < FAN_CHUNKS4; c++) active[c] = 1;
    for (int i = 0; i < NEWTON_LIMIT; i++) {
        int any = 0;
        for (int c = 0; c < FAN_CHUNKS4; c++) {
            if (!active[c]) continue;
            v4 tc = t[c];
            v4 P = add4(tc, A0), Q = add4(tc, A1), R = add4(tc, A2);
            v4 P2 = mul4(P, P), Q2 = mul4(Q, Q), R2 = mul4(R, R);
            v4 f = sub4(sub4(sub4(mul4(mul4(P2, Q2), R2), mul4(mul4(k0[c], Q2), R2)),
                             mul4(mul4(k1[c], P2), R2)), mul4(mul4(k2[c], P2), Q2));
            v4 moving = _mm256_cmp_pd(_mm256_andnot_pd(sign, f), tol, _CMP_NLT_UQ);
            if (!_mm256_movemask_pd(moving)) { active[c] = 0; continue; }
            any = 1;
            v4 PQ = mul4(P, Q), PR = mul4(P, R), QR = mul4(Q, R);
            v4 fp = mul4(two, sub4(sub4(sub4(mul4(mul4(PQ, R), add4(add4(QR, PR), PQ)),
                                             mul4(mul4(k0[c], QR), add4(Q, R))),
                                        mul4(mul4(k1[c], PR), add4(P, R))),
                                   mul4(mul4(k2[c], PQ), add4(P, Q))));
            t[c] = _mm256_blendv_pd(tc, sub4(tc, dvd4(f, fp)), moving);
        }
        if (!any) break;
    }
    double sx = 0.0, sy = 0.0, sz = 0.0;
    for (int c = 0; c < FAN_CHUNKS4; c++) {  /* unit(closest - q), summed in sample order */
        v4 x = qx[c], y = qy[c], z = qz[c];
        v4 vx = sub4(dvd4(mul4(A0, x), add4(t[c], A0)), x),
           vy = sub4(dvd4(mul4(A1, y), add4(t[c], A1)), y),
           vz = sub4(dvd4(mul4(A2, z), add4(t[c], A2)), z);
        v4 n = _mm256_sqrt_pd(add4(add4(mul4(vx, vx), mul4(vy, vy)), mul4(vz, vz)));
        double ux[4] __attribute__((aligned(32))), uy[4] __attribute__((aligned(32))),
               uz[4] __attribute__((aligned(32)));
        _mm256_store_pd(ux, dvd4(vx, n));
        _mm256_store_pd(uy, dvd4(vy, n));
        _mm256_store_pd(uz, dvd4(vz, n));
        int lanes = FAN_N - c*4 < 4 ? FAN_N - c*4 : 4;
        for (int l = 0; l < lanes; l++) { sx = sx + ux[l]; sy = sy + uy[l]; sz = sz + uz[l]; }
    }
    v_sum[0] = sx; v_sum[1] = sy; v_sum[2] = sz;
}
#endif

/* v_sum of the fan: fan_sum_avx512 where the processor has AVX-512, fan_sum_avx2 where it has
   AVX2, else the clones */
static void fan_sum(const double *a, const double *r1, const double *r1r2, double *v_sum) {
#ifdef FAN_INTRINSICS
    static int level = -1;              /* 2 AVX-512, 1 AVX2, 0 neither */
    if (level < 0) {
        __builtin_cpu_init();
        level = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
    }
#ifdef FAN_AVX512
    if (level == 2) { fan_sum_avx512(a, r1, r1r2, v_sum); return; }
#endif
    if (level >= 1) { fan_sum_avx2(a, r1, r1r2, v_sum); return; }
#endif
    fan_sum_vectors(a, r1, r1r2, v_sum);
}

/* findClosestPoint with specialCaseAxis = axis: the ellipse in that coordinate plane */
static void closest_in_plane(const double *a, const double *p, int axis, double *out) {
    static const int I[3] = {1, 2, 0}, J[3] = {2, 0, 1};
    int i = I[axis], j = J[axis];
    double x, y;
    closest_on_ellipse(a[i], a[j], p[i], p[j], &x, &y);
    double pa = p[axis];
    out[axis] = pa; out[i] = x; out[j] = y;
}

/* findClosestPoint(specialCaseAxis = -1): a plane case near a coordinate plane (the axis of
   the narrowest cross-section first), else the 3-D Newton */
static void closest(const double *a, const double *p, double *out) {
    int order[3] = {0, 1, 2};
    double sum = a[0] + a[1] + a[2];
    for (int i = 0; i < 3; i++)          /* sorted by (sum - a_i, i) */
        for (int j = i + 1; j < 3; j++) {
            double ki = sum - a[order[i]], kj = sum - a[order[j]];
            if (kj < ki || (kj == ki && order[j] < order[i])) {
                int s = order[i]; order[i] = order[j]; order[j] = s;
            }
        }
    for (int k = 0; k < 3; k++)
        if (fabs(p[order[k]]) <= ROUNDOFF) { closest_in_plane(a, p, order[k], out); return; }
    closest_3d(a, p, out);
}

/* x with H x = v (4x4, symmetric positive definite: elimination without pivots) */
static void solve4(double H[4][4], const double *v, double *x) {
    double A[4][5];
    for (int i = 0; i < 4; i++) { for (int j = 0; j < 4; j++) A[i][j] = H[i][j]; A[i][4] = v[i]; }
    for (int k = 0; k < 4; k++)
        for (int r = k + 1; r < 4; r++) {
            double m = A[r][k]/A[k][k];
            for (int c = k + 1; c < 5; c++) A[r][c] = A[r][c] - m*A[k][c];
        }
    for (int k = 3; k >= 0; k--) {
        double acc = 0.0;
        for (int c = k + 1; c < 4; c++) acc = acc + A[k][c]*x[c];
        x[k] = (A[k][4] - acc)/A[k][k];
    }
}

typedef struct { const double *a, *vs, *p; double vs4, a2[3]; } tangent_ctx;

/* (inlined with tangent_step into tangent_points: ~5 % of a BIClong call, the same operations) */
static inline __attribute__((always_inline)) double residuals(const tangent_ctx *c,
                                                              const double *r, double d,
                                                              double *e) {
    double nr[3], q = 0.0;
    for (int i = 0; i < 3; i++) { nr[i] = 2.0*r[i]/c->a2[i]; }
    for (int i = 0; i < 3; i++) q += (r[i]/c->a[i])*(r[i]/c->a[i]);
    e[0] = dot3(c->vs, r) + c->vs4;
    e[1] = q - 1.0;
    e[2] = dot3(nr, r) + d;
    e[3] = dot3(nr, c->p) + d;
    return e[0]*e[0] + e[1]*e[1] + e[2]*e[2] + e[3]*e[3];
}

static void lm_step(double H[4][4], const double *v, double alpha, double dd, double *vt) {
    double Hd[4][4], x[4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) Hd[i][j] = i == j ? H[i][j]*(1.0 + alpha) : H[i][j];
    solve4(Hd, v, x);
    for (int i = 0; i < 4; i++) vt[i] = dd*x[i]/16.0;
}

/* calcTangentPoint: r on the surface, in the plane (vs, vs4), with P - r tangent.  Its loops
   as a resumable run (tangent_begin, then tangent_step until it returns 0), so that the two
   tangent points' runs, independent of each other, alternate step by step and the
   processor overlaps their dependent chains (each run's operations are the loops' own) */
typedef struct {
    tangent_ctx c;
    double *r;
    double d, e[4], pm[3], ssq, ssqo, alpha, fakt, dd, H[4][4], v[4], vt[4];
    int it, n, phase;    /* phase 0: an outer iteration's start, 1: more damping,
                            2: double the step, 3: done */
} tangent_run;

static void tangent_begin(tangent_run *s, double pe, double *r, const double *p,
                          const double *a, const double *vs, double vs4) {
    s->phase = 3;
    if (fabs(pe) < 1e-4) { copy3(p, r); return; }
    tangent_ctx c = {a, vs, p, vs4, {a[0]*a[0], a[1]*a[1], a[2]*a[2]}};
    s->c = c;
    s->r = r;
    double d = 0.0;
    for (int i = 0; i < 3; i++) d -= 2.0*r[i]*r[i]/c.a2[i];
    s->d = d;
    s->ssq = residuals(&s->c, r, d, s->e);
    s->ssqo = s->ssq;
    s->alpha = 0.01;
    unit3(p, s->pm);
    s->it = 0;
    s->phase = 0;
}

/* the run up to its next residual evaluation; 0 once it has ended */
static inline __attribute__((always_inline)) int tangent_step(tangent_run *s) {
    const tangent_ctx *c = &s->c;
    double *r = s->r, e_new[4], r_new[3];
    for (;;) {
        if (s->phase == 0) {
            if (!(s->it < TANGENT_LIMIT && s->ssq > 1e-8)) { s->phase = 3; return 0; }
            const double *p = c->p, *vs = c->vs;
            double J[4][4], pr[3];
            for (int i = 0; i < 3; i++) {
                J[i][0] = vs[i]; J[i][1] = 2.0*r[i]/c->a2[i]; J[i][2] = 4.0*r[i]/c->a2[i];
                J[i][3] = 2.0*p[i]/c->a2[i];
            }
            J[3][0] = 0.0; J[3][1] = 0.0; J[3][2] = 1.0; J[3][3] = 1.0;
            for (int i = 0; i < 3; i++) pr[i] = p[i] - r[i];
            unit3(pr, pr);
            double pcos = dot3(pr, s->pm);
            s->dd = pcos > 0.1 ? 1.0 - pow(pcos, 100) : 1.0;
            for (int i = 0; i < 4; i++) {
                double acc = 0.0;
                for (int j = 0; j < 4; j++) acc = acc + J[i][j]*s->e[j];
                s->v[i] = -acc;
            }
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    s->H[i][j] = J[i][0]*J[j][0] + J[i][1]*J[j][1] + J[i][2]*J[j][2]
                                 + J[i][3]*J[j][3];
            lm_step(s->H, s->v, s->alpha, s->dd, s->vt);
            s->n = 0;
            s->phase = 1;
        }
        if (s->phase == 1) {                                      /* more damping */
            if (s->n < INNER_LIMIT && s->ssq >= s->ssqo) {
                if (s->n > 0) lm_step(s->H, s->v, s->alpha, s->dd, s->vt);
                for (int i = 0; i < 3; i++) r_new[i] = r[i] + s->vt[i];
                double ssq_new = residuals(c, r_new, s->d + s->vt[3], e_new);
                copy3(r_new, r); s->d = s->d + s->vt[3];
                s->ssqo = s->ssq; s->ssq = ssq_new;
                for (int i = 0; i < 4; i++) s->e[i] = e_new[i];
                s->alpha = s->alpha*4.0;
                s->n++;
                return 1;
            }
            s->alpha = s->alpha/8.0;
            s->fakt = 0.5;
            s->n = 0;
            s->phase = 2;
        }
        if (s->phase == 2) {                                      /* double the step */
            if (s->n < INNER_LIMIT && s->ssq <= s->ssqo) {
                double f2 = s->fakt*2.0;
                for (int i = 0; i < 3; i++) r_new[i] = r[i] + s->vt[i]*f2;
                double ssq_new = residuals(c, r_new, s->d + s->vt[3]*f2, e_new);
                copy3(r_new, r); s->d = s->d + s->vt[3]*f2;
                s->ssqo = s->ssq; s->ssq = ssq_new;
                for (int i = 0; i < 4; i++) s->e[i] = e_new[i];
                s->fakt = f2;
                s->n++;
                return 1;
            }
            for (int i = 0; i < 3; i++) r[i] = r[i] - s->vt[i]*s->fakt;
            s->d = s->d - s->vt[3]*s->fakt;
            s->ssq = residuals(c, r, s->d, s->e);
            s->ssqo = s->ssq;
            s->it++;
            s->phase = 0;
            return 1;
        }
        return 0;
    }
}

/* both tangent points (r1 from P1, r2 from P2), their runs alternating */
static void tangent_points(double p1e, double *r1, const double *p1, double p2e, double *r2,
                           const double *p2, const double *a, const double *vs, double vs4) {
    tangent_run A, B;
    tangent_begin(&A, p1e, r1, p1, a, vs, vs4);
    tangent_begin(&B, p2e, r2, p2, a, vs, vs4);
    int run_a = A.phase != 3, run_b = B.phase != 3;
    while (run_a || run_b) {
        if (run_a) run_a = tangent_step(&A);
        if (run_b) run_b = tangent_step(&B);
    }
}

typedef struct { const double *a, *a0, *ar1, *vsy; double cc; } ray_ctx;

static void surface_point(const ray_ctx *c, double phi, double *out) {
    double cs = cos(phi), sn = sin(phi), ray[3], f1[3], f2[3];
    for (int i = 0; i < 3; i++) {
        ray[i] = cs*c->ar1[i] + sn*c->vsy[i];
        f1[i] = ray[i]/c->a[i];
        f2[i] = c->a0[i]/c->a[i];
    }
    double aa = dot3(f1, f1), bb = 2.0*dot3(f1, f2);
    double mu3 = (-bb + sqrt(bb*bb - 4.0*aa*c->cc))/(2.0*aa);
    for (int i = 0; i < 3; i++) out[i] = c->a0[i] + mu3*ray[i];
}

/* the polyline r1, surface_point(k dphi) for k = 1 .. N - 1, r2 and its length: the points
   FAN_W at a time, surface_point's operations lane-wise in its order (its cosines and sines
   by the same scalar calls), the segments' lengths likewise, summed in order */
#define POLY_MAX 512           /* N <= 499 points after r1, and a chunk's spare lanes */
FAN_CLONES
static double polyline(const ray_ctx *c, const double *r1, const double *r2, int N, double dphi) {
    double px[POLY_MAX], py[POLY_MAX], pz[POLY_MAX], len[POLY_MAX], f2[3];
    for (int i = 0; i < 3; i++) f2[i] = c->a0[i]/c->a[i];
    const vf ar1x = splat(c->ar1[0]), ar1y = splat(c->ar1[1]), ar1z = splat(c->ar1[2]),
             vsyx = splat(c->vsy[0]), vsyy = splat(c->vsy[1]), vsyz = splat(c->vsy[2]);
    for (int k = 1; k < N; k += FAN_W) {
        vf cs, sn;
        for (int l = 0; l < FAN_W; l++) {
            double phi = (double)(k + l)*dphi;
            cs[l] = k + l < N ? cos(phi) : 0.0;
            sn[l] = k + l < N ? sin(phi) : 0.0;
        }
        vf rx = cs*ar1x + sn*vsyx, ry = cs*ar1y + sn*vsyy, rz = cs*ar1z + sn*vsyz;
        vf f1x = rx/splat(c->a[0]), f1y = ry/splat(c->a[1]), f1z = rz/splat(c->a[2]);
        vf aa = f1x*f1x + f1y*f1y + f1z*f1z;
        vf bb = splat(2.0)*(f1x*splat(f2[0]) + f1y*splat(f2[1]) + f1z*splat(f2[2]));
        vf mu3 = (-bb + vsqrt(bb*bb - splat(4.0)*aa*splat(c->cc)))/(splat(2.0)*aa);
        vf ox = splat(c->a0[0]) + mu3*rx, oy = splat(c->a0[1]) + mu3*ry,
           oz = splat(c->a0[2]) + mu3*rz;
        __builtin_memcpy(px + k, &ox, sizeof ox);
        __builtin_memcpy(py + k, &oy, sizeof oy);
        __builtin_memcpy(pz + k, &oz, sizeof oz);
    }
    px[0] = r1[0]; py[0] = r1[1]; pz[0] = r1[2];
    px[N] = r2[0]; py[N] = r2[1]; pz[N] = r2[2];
    for (int k = N + 1; k < N + 1 + FAN_W; k++) { px[k] = 0.0; py[k] = 0.0; pz[k] = 0.0; }
    for (int k = 1; k <= N; k += FAN_W) {
        vf x0, y0, z0, x1, y1, z1;
        __builtin_memcpy(&x0, px + k - 1, sizeof x0); __builtin_memcpy(&x1, px + k, sizeof x1);
        __builtin_memcpy(&y0, py + k - 1, sizeof y0); __builtin_memcpy(&y1, py + k, sizeof y1);
        __builtin_memcpy(&z0, pz + k - 1, sizeof z0); __builtin_memcpy(&z1, pz + k, sizeof z1);
        vf sx = x1 - x0, sy = y1 - y0, sz = z1 - z0;
        vf l = vsqrt(sx*sx + sy*sy + sz*sz);
        __builtin_memcpy(len + k, &l, sizeof l);
    }
    double total = 0.0;
    for (int k = 1; k <= N; k++) total = total + len[k];
    return total;
}

/* CalcDistanceOnEllipsoid (normalized units): the polyline from r1 to r2, the far way round
   when OpenSim's wrong-way test asks for it */
static double surface_length(const double *r1, const double *r2, const double *a,
                             const double *vs, double vs4, double factor, const double *p1,
                             const double *p2, int sign) {
    double dr[3] = {r1[0] - r2[0], r1[1] - r2[1], r1[2] - r2[2]};
    double chord = sqrt(dot3(dr, dr));
    double nseg = chord/factor/SEG;
    if (!(nseg >= 1.0)) return chord;
    int N = nseg >= 499.0 ? 499 : (int)floor(nseg);
    if (N < 1) N = 1;
    int big1 = fabs(vs[1]) > fabs(vs[0]);
    int big2 = fabs(vs[2]) > (big1 ? fabs(vs[1]) : fabs(vs[0]));
    double a0[3] = {0.0, 0.0, 0.0};
    if (big2) a0[2] = -vs4/vs[2]; else if (big1) a0[1] = -vs4/vs[1]; else a0[0] = -vs4/vs[0];
    double ar1[3], ar2[3], vsz[3], vsy[3], f2[3];
    for (int i = 0; i < 3; i++) { ar1[i] = r1[i] - a0[i]; ar2[i] = r2[i] - a0[i]; }
    unit3(ar1, ar1); unit3(ar2, ar2);
    double phi0 = acos(dot3(ar1, ar2));
    cross3(ar1, ar2, vsz); unit3(vsz, vsz);
    cross3(vsz, ar1, vsy);
    for (int i = 0; i < 3; i++) f2[i] = a0[i]/a[i];
    ray_ctx c = {a, a0, ar1, vsy, dot3(f2, f2) - 1.0};
    double near_dphi = phi0/N, far_dphi = -(2.0*M_PI - phi0)/N;
    if (sign != 0 && N >= 2) {    /* OpenSim's wrong-way test on the first and last chords */
        double w1[3], w2[3], u1[3], u2[3], v1[3], v2[3];
        surface_point(&c, near_dphi, w1);
        surface_point(&c, ((double)N - 1.0)*near_dphi, w2);
        for (int i = 0; i < 3; i++) {
            u1[i] = p1[i] - r1[i]; v1[i] = w1[i] - r1[i];
            u2[i] = p2[i] - r2[i]; v2[i] = w2[i] - r2[i];
        }
        unit3(u1, u1); unit3(v1, v1); unit3(u2, u2); unit3(v2, v2);
        if (dot3(u1, v1) > 0.0 || dot3(u2, v2) > 0.0) return polyline(&c, r1, r2, N, far_dphi);
    }
    return polyline(&c, r1, r2, N, near_dphi);
}

static int ellipsoid_wrap(const double *dims, int axis, int sign, int method, const double *P1,
                          const double *P2, double *r1_out, double *r2_out, double *s_out) {
    double factor = 3.0/(dims[0] + dims[1] + dims[2]);
    double a[3], p1[3], p2[3], p1p2[3], f1[3], f2[3], u1[3], u2[3];
    for (int i = 0; i < 3; i++) { a[i] = dims[i]*factor; p1[i] = P1[i]*factor; p2[i] = P2[i]*factor; }
    double p1e = 0.0, p2e = 0.0;
    for (int i = 0; i < 3; i++) { p1e += (p1[i]/a[i])*(p1[i]/a[i]); p2e += (p2[i]/a[i])*(p2[i]/a[i]); }
    p1e = p1e - 1.0; p2e = p2e - 1.0;
    for (int i = 0; i < 3; i++) p1p2[i] = p1[i] - p2[i];
    unit3(p1, u1); unit3(p2, u2);
    double ppm = dot3(u1, u2) - 1.0;
    for (int i = 0; i < 3; i++) { f1[i] = p1p2[i]/a[i]; f2[i] = p2[i]/a[i]; }
    double aa = dot3(f1, f1), bb = 2.0*dot3(f1, f2), cc = dot3(f2, f2) - 1.0;
    double disc = bb*bb - 4.0*aa*cc;
    *s_out = NAN;
    for (int i = 0; i < 3; i++) { r1_out[i] = NAN; r2_out[i] = NAN; }
    if (p1e < -1e-4 || p2e < -1e-4 || fabs(ppm) < 1e-4 || !(disc >= 0.0)) return 0;
    double l1 = (-bb + sqrt(disc))/(2.0*aa), l2 = (-bb - sqrt(disc))/(2.0*aa);
    if (!(l1 > 0.0 && l1 < 1.0 && l2 > 0.0 && l2 < 1.0)) return 0;
    double r1[3], r2[3], r1r2[3], mu[3], t[3], c1[3], dir[3];
    for (int i = 0; i < 3; i++) { r1[i] = p2[i] + l1*p1p2[i]; r2[i] = p2[i] + l2*p1p2[i]; }
    for (int i = 0; i < 3; i++) r1r2[i] = r2[i] - r1[i];
    /* (1) Frans: the chord's crossing of the coordinate plane most normal to it */
    unit3(p1p2, dir);
    for (int i = 0; i < 3; i++) { mu[i] = fabs(dir[i]); t[i] = -r1[i]/r1r2[i]; }
    int best = mu[1] > mu[0] ? 1 : 0;
    if (mu[2] > mu[best]) best = 2;
    double mu_b = mu[best], t_b = t[best], sv[3];
    for (int j = 0; j < 3; j++) sv[j] = r1[j] + t_b*r1r2[j];
    closest_in_plane(a, sv, best, c1);
    double fan_weight = -1.0;
    int have_fan_weight = 0;
    if (method == 0) {
        double s = (t_b < 0.0 || t_b > 1.0) ? 0.0
                   : t_b < SV_BLEND ? t_b/SV_BLEND
                   : t_b > 1.0 - SV_BLEND ? (1.0 - t_b)/SV_BLEND : 1.0;
        if (mu_b > MU_MIN && s < 1.0) mu_b = MU_MIN + s*(mu_b - MU_MIN);
        have_fan_weight = 1;
        if (mu_b < MU_MAX) {    /* (2) the fan: mean closest-point direction along the chord */
            double v_sum[3], q[3], mid[3], c_fan[3];
            fan_sum(a, r1, r1r2, v_sum);
            unit3(v_sum, v_sum);
            for (int j = 0; j < 3; j++) { mid[j] = r1[j] + 0.5*r1r2[j]; q[j] = mid[j] + v_sum[j]; }
            closest(a, q, c_fan);
            if (mu_b <= MU_MIN) { copy3(c_fan, c1); fan_weight = 1.0; }
            else {
                double tt = (mu_b - MU_MIN)/(MU_MAX - MU_MIN);
                for (int j = 0; j < 3; j++) q[j] = tt*c1[j] + (1.0 - tt)*c_fan[j];
                closest(a, q, c1);
                fan_weight = 1.0 - tt;
            }
        }
    } else if (method == 2) {
        double q[3];
        for (int j = 0; j < 3; j++) q[j] = r1[j] + 0.5*r1r2[j];
        closest(a, q, c1);
    }
    if (method == 1) {
        if (t_b > 0.0 && t_b < 1.0) { copy3(c1, r1); copy3(c1, r2); }
    } else {
        copy3(c1, r1); copy3(c1, r2);
    }
    if (sign != 0) {                 /* c1 to the quadrant's side */
        int flip = sign > 0 ? c1[axis] < 0.0 : c1[axis] >= 0.0;
        if (flip) {
            double flipped[3];
            copy3(c1, flipped);
            flipped[axis] = -c1[axis];
            copy3(flipped, r1); copy3(flipped, r2);
            if (have_fan_weight && fan_weight > 0.0) {   /* toward the plane by the fan's weight */
                double pulled[3];
                copy3(flipped, pulled);
                pulled[axis] = flipped[axis] + fan_weight*(0.0 - flipped[axis]);
                closest(a, pulled, flipped);
            }
            copy3(flipped, c1);
        }
    }
    double vs[3], w[3];
    for (int i = 0; i < 3; i++) w[i] = p1[i] - c1[i];
    cross3(p1p2, w, vs);
    unit3(vs, vs);
    double vs4 = -dot3(vs, c1);
    tangent_points(p1e, r1, p1, p2e, r2, p2, a, vs, vs4);
    double s = surface_length(r1, r2, a, vs, vs4, factor, p1, p2, sign);
    *s_out = s/factor;
    for (int i = 0; i < 3; i++) { r1_out[i] = r1[i]/factor; r2_out[i] = r2[i]/factor; }
    return 1;
}

static PyObject *py_wrap(PyObject *self, PyObject *args) {
    double dims[3], P1[3], P2[3], r1[3], r2[3], s;
    int axis, sign, method;
    if (!PyArg_ParseTuple(args, "dddiiidddddd", &dims[0], &dims[1], &dims[2], &axis, &sign,
                          &method, &P1[0], &P1[1], &P1[2], &P2[0], &P2[1], &P2[2]))
        return NULL;
    if (axis < 0 || axis > 2 || method < 0 || method > 2) {
        PyErr_SetString(PyExc_ValueError, "axis must be 0..2 and method 0..2");
        return NULL;
    }
    int wraps = ellipsoid_wrap(dims, axis, sign, method, P1, P2, r1, r2, &s);
    return Py_BuildValue("(Nddddddd)", PyBool_FromLong(wraps), r1[0], r1[1], r1[2], r2[0],
                         r2[1], r2[2], s);
}

static PyMethodDef methods[] = {
    {"wrap", py_wrap, METH_VARARGS, "OpenSim's WrapEllipsoid::wrapLine on doubles."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "symbody_ellipsoid_wrap", NULL, -1,
                                    methods};

PyMODINIT_FUNC PyInit_symbody_ellipsoid_wrap(void) { return PyModule_Create(&module); }
