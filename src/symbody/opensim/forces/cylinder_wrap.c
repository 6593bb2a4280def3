/* OpenSim 4.6's WrapCylinder::wrapLine on doubles, with the WrapMath helpers it uses and its
   _make_spiral_path tangency iteration (with more than one wrap object on the path): the
   cylinder routine of the path over several wrap objects (multi_wrap.c follows this file in
   one source, after ellipsoid_wrap.c's functions; multi_wrap.py joins them). */

#define NO_WRAP 0
#define INSIDE_RADIUS 1
#define WRAPPED 2
#define MANDATORY_WRAP 3
#define ROUNDOFF_ERROR 0.0000000000002
#define LINE_EPS 0.00001
#define CYL_MAX_ITERATIONS 100
#define TANGENCY_THRESHOLD (0.1 * 0.017453292519943295)
#define CYCLE_WINDOW 8        /* the tangency iteration's cycles looked for: periods 1..8 */
#if defined(__GNUC__)         /* every helper inlined into the routine (the same operations) */
#define WRAP_FLATTEN __attribute__((flatten))
#else
#define WRAP_FLATTEN
#endif

static int dsign(double a) { return a >= 0.0 ? 1 : -1; }

static double normalize_or_zero(const double *a, double *out) {
    double mag = sqrt(dot3(a, a));
    if (mag >= 2.220446049250313e-16) { out[0] = a[0]/mag; out[1] = a[1]/mag; out[2] = a[2]/mag; }
    else { out[0] = 0.0; out[1] = 0.0; out[2] = 0.0; }
    return mag;
}

static double dist2(const double *a, const double *b) {
    double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return dot3(d, d);
}

static double det3(double m[3][3]) {
    return m[0][0]*(m[1][1]*m[2][2] - m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2] - m[1][2]*m[2][0])
         + m[0][2]*(m[1][0]*m[2][1] - m[1][1]*m[2][0]);
}

/* WrapMath::IntersectLines */
static int intersect_lines(const double *p1, const double *p2, const double *p3, const double *p4,
                           double *i1, double *s, double *i2, double *t) {
    double v1[3] = {p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]};
    double v2[3] = {p4[0] - p3[0], p4[1] - p3[1], p4[2] - p3[2]}, c[3];
    double mag1 = normalize_or_zero(v1, v1), mag2 = normalize_or_zero(v2, v2);
    cross3(v1, v2, c);
    double denom = dot3(c, c);
    if (fabs(denom) <= ROUNDOFF_ERROR) { *s = NAN; *t = NAN; return 0; }
    double m[3][3] = {{p3[0] - p1[0], p3[1] - p1[1], p3[2] - p1[2]}, {v1[0], v1[1], v1[2]},
                      {c[0], c[1], c[2]}};
    *t = det3(m)/denom;
    for (int k = 0; k < 3; k++) i2[k] = p3[k] + *t*v2[k];
    m[1][0] = v2[0]; m[1][1] = v2[1]; m[1][2] = v2[2];
    *s = det3(m)/denom;
    for (int k = 0; k < 3; k++) i1[k] = p1[k] + *s*v1[k];
    *s /= mag1; *t /= mag2;
    return 1;
}

/* the cylinder's axis (wrap frame): a point on it and its direction */
static const double P0[3] = {0.0, 0.0, -1.0}, DN[3] = {0.0, 0.0, 1.0};

/* WrapMath::GetClosestPointOnLineToPoint */
static void closest_on_line(const double *pt, const double *lp, const double *line, double *out) {
    double v1[3] = {pt[0] - lp[0], pt[1] - lp[1], pt[2] - lp[2]}, v2[3];
    double mag = normalize_or_zero(v1, v1);
    if (line == DN) copy3(DN, v2);     /* (DN is a unit vector: normalize_or_zero's result) */
    else normalize_or_zero(line, v2);
    double t = dot3(v1, v2)*mag;
    for (int k = 0; k < 3; k++) out[k] = lp[k] + t*v2[k];
}


/* the point at t of the helix from r1 (angle theta about z, rise axial) */
static void spiral_point(const double *r1, double sense, double theta, double axial, double t,
                         double *out) {
    double a = sense*t*theta, c = cos(a), s = sin(a);
    out[0] = c*r1[0] - s*r1[1];
    out[1] = s*r1[0] + c*r1[1];
    out[2] = r1[2] + t*axial;
}

/* WrapCylinder::_adjust_tangent_point */
static int adjust_tangent(const double *pt1, double *r1, const double *w1) {
    double pr[3] = {r1[0] - pt1[0], r1[1] - pt1[1], r1[2] - pt1[2]};
    double rw[3] = {w1[0] - r1[0], w1[1] - r1[1], w1[2] - r1[2]};
    normalize_or_zero(pr, pr);
    normalize_or_zero(rw, rw);
    double alpha = acos(dot3(pr, DN)), omega = acos(dot3(rw, DN));
    if (!(fabs(alpha - omega) > TANGENCY_THRESHOLD)) return 0;
    double p1a[3], w1a[3], i1[3], i2[3] = {NAN, NAN, NAN}, s, t;
    closest_on_line(pt1, r1, DN, p1a);
    closest_on_line(w1, r1, DN, w1a);
    intersect_lines(pt1, w1, p1a, w1a, i1, &s, i2, &t);
    for (int k = 0; k < 3; k++) r1[k] += 1.5*(i2[k] - r1[k]);
    return 1;
}

/* The tangency iteration maps (r1, r2) to the next (r1, r2) by a fixed function of them (P1,
   P2, R and the side fixed), so once a state repeats one of the last CYCLE_WINDOW bit for
   bit, it cycles (without returning: its states went on before) until the iteration limit:
   with S_j = S_i (j = i - p), the state at the limit is S_(j + (limit - j) mod p).  Records
   S_i; when it closes a cycle, puts the limit's state into r1, r2 and returns 1 (the caller
   then returns its length, as the iteration would after running on to the limit). */
static int jump_cycle(double seen[][6], int i, double *r1, double *r2) {
    double now[6] = {r1[0], r1[1], r1[2], r2[0], r2[1], r2[2]};
    for (int p = 1; p <= CYCLE_WINDOW && p <= i; p++)
        if (memcmp(seen[(i - p) % CYCLE_WINDOW], now, sizeof now) == 0) {
            int j = i - p;
            const double *end = seen[(j + (CYL_MAX_ITERATIONS - j) % p) % CYCLE_WINDOW];
            copy3(end, r1); copy3(end + 3, r2);
            return 1;
        }
    memcpy(seen[i % CYCLE_WINDOW], now, sizeof now);
    return 0;
}

/* WrapCylinder::_make_spiral_path: the helix length (and the tangency iteration when the
   path has more than one wrap object) */
static double spiral_path(double R, const double *P1, const double *P2, int far, int single,
                          double *r1, double *r2) {
    double sense = far ? -1.0 : 1.0, length = 0.0;
    int iterations = 0;
    double seen[CYCLE_WINDOW][6];    /* the last states (r1, r2) of the iteration */
    for (;;) {
        double r1a[3], r2a[3], uu[3], vv[3], c[3];
        closest_on_line(r1, P0, DN, r1a);
        closest_on_line(r2, P0, DN, r2a);
        double diff[3] = {r2a[0] - r1a[0], r2a[1] - r1a[1], r2a[2] - r1a[2]};
        double axial = dot3(diff, DN);
        for (int k = 0; k < 3; k++) { uu[k] = r1[k] - r1a[k]; vv[k] = r2[k] - r2a[k]; }
        cross3(uu, vv, c);
        double theta = atan2(dot3(c, DN), dot3(uu, vv));
        if (far) theta = 2.0*M_PI - theta;
        double x = R*theta;
        length = sqrt(x*x + axial*axial);
        if (single) return length;
        int nseg = (int)(length/0.002);
        if (nseg < 1) nseg = 1;
        if (nseg < 2 || iterations >= CYL_MAX_ITERATIONS) return length;
        if (jump_cycle(seen, iterations, r1, r2)) { iterations = CYL_MAX_ITERATIONS; continue; }
        double t = 1.0/nseg, w[3], w2[3];
        spiral_point(r1, sense, theta, axial, t, w);
        int adj1 = adjust_tangent(P1, r1, w);
        spiral_point(r1, sense, theta, axial, 1.0 - t, w2);    /* (r1 as just adjusted) */
        int adj2 = adjust_tangent(P2, r2, w2);
        if (!(adj1 || adj2)) return length;
        iterations++;
    }
}

/* acos(a) > acos(b), OpenSim's comparison of the two tangent pairs' angles, without the two
   acos where the answer is sure: on [-1, 1] acos falls with slope <= -1, so b - a > 1e-9
   puts the exact acos(a) above acos(b) by more than 1e-9, and any acos within 5e-10 of
   exact (glibc's: 1 ulp, 2.2e-16 here) keeps that order; a - b > 1e-9 the reverse.  Closer
   arguments, and any outside [-1, 1] or NaN (acos NaN: false), go through acos as before. */
static int acos_greater(double a, double b) {
    if (a >= -1.0 && a <= 1.0 && b >= -1.0 && b <= 1.0) {
        if (b - a > 1e-9) return 1;
        if (a - b > 1e-9) return 0;
    }
    return acos(a) > acos(b);
}

/* WrapCylinder::wrapLine for up to CYL_LANES segments at once: the same operations, in the
   same order, on each lane (lane loops the compiler turns into vector instructions: each
   lane's IEEE results are the scalar ones), so the segments' chains of divisions and square
   roots overlap.  Every lane computes every step up to the end test; its return code is
   decided by OpenSim's tests in OpenSim's order (INSIDE_RADIUS, then the side and quadrant
   tests, then the tangent points beyond both ends), and r1, r2 are written where OpenSim
   writes them (not on the early returns).  The tangency iteration (spiral_path) then runs
   per wrapping lane.  A lane whose segment is parallel to the axis (intersect_lines' no
   solution) has NaN closest points where OpenSim's are unset. */
#define CYL_LANES 4
#define LANE for (int l = 0; l < CYL_LANES; l++)
typedef double lvec[3][CYL_LANES];
typedef double lsc[CYL_LANES];

static inline void l_sub(const lvec a, const lvec b, lvec out) {
    for (int k = 0; k < 3; k++) LANE out[k][l] = a[k][l] - b[k][l];
}
static inline void l_dot(const lvec a, const lvec b, lsc out) {
    LANE out[l] = a[0][l]*b[0][l] + a[1][l]*b[1][l] + a[2][l]*b[2][l];
}
static inline void l_cross(const lvec a, const lvec b, lvec out) {
    LANE {
        double c0 = a[1][l]*b[2][l] - a[2][l]*b[1][l], c1 = a[2][l]*b[0][l] - a[0][l]*b[2][l];
        double c2 = a[0][l]*b[1][l] - a[1][l]*b[0][l];
        out[0][l] = c0; out[1][l] = c1; out[2][l] = c2;
    }
}
static inline void l_normalize(const lvec a, lvec out, lsc mag) {    /* normalize_or_zero */
    lsc m;
    l_dot(a, a, m);
    LANE m[l] = sqrt(m[l]);
    for (int k = 0; k < 3; k++)
        LANE out[k][l] = m[l] >= 2.220446049250313e-16 ? a[k][l]/m[l] : 0.0;
    if (mag) LANE mag[l] = m[l];
}
static inline void l_unit(const lvec a, lvec out) {                 /* unit3 */
    lsc n;
    l_dot(a, a, n);
    LANE n[l] = sqrt(n[l]);
    for (int k = 0; k < 3; k++) LANE out[k][l] = a[k][l]/n[l];
}
static inline void l_dist2(const lvec a, const lvec b, lsc out) {
    lvec d;
    l_sub(a, b, d);
    l_dot(d, d, out);
}
static inline void l_const(const double *c, lvec out) {
    for (int k = 0; k < 3; k++) LANE out[k][l] = c[k];
}
/* WrapMath::GetClosestPointOnLineToPoint (closest_on_line): line DN (a unit vector, taken as
   it is) or any */
static inline void l_closest(const lvec pt, const lvec lp, const lvec line, int line_is_dn,
                             lvec out) {
    lvec v1, v2;
    lsc mag, t;
    l_sub(pt, lp, v1);
    l_normalize(v1, v1, mag);
    if (line_is_dn) l_const(DN, v2);
    else l_normalize(line, v2, NULL);
    l_dot(v1, v2, t);
    LANE t[l] = t[l]*mag[l];
    for (int k = 0; k < 3; k++) LANE out[k][l] = lp[k][l] + t[l]*v2[k][l];
}
static inline void l_det3(const lvec r0, const lvec r1, const lvec r2, lsc out) {
    LANE out[l] = r0[0][l]*(r1[1][l]*r2[2][l] - r1[2][l]*r2[1][l])
                - r0[1][l]*(r1[0][l]*r2[2][l] - r1[2][l]*r2[0][l])
                + r0[2][l]*(r1[0][l]*r2[1][l] - r1[1][l]*r2[0][l]);
}
/* WrapMath::IntersectLineSegPlane(a, b, n, d): hit 1 and out where the segment meets the plane */
static inline void l_seg_plane(const lvec a, const lvec b, const lvec n, const lsc d, lvec out,
                               int *hit) {
    lvec v;
    lsc dp, t;
    l_sub(b, a, v);
    l_dot(v, n, dp);
    LANE t[l] = (-d[l] - n[0][l]*a[0][l] - n[1][l]*a[1][l] - n[2][l]*a[2][l])/dp[l];
    LANE hit[l] = !(fabs(dp[l]) < LINE_EPS) && !(t[l] < -LINE_EPS || t[l] > 1.0 + LINE_EPS);
    for (int k = 0; k < 3; k++) LANE out[k][l] = a[k][l] + t[l]*v[k][l];
}

/* cylinder_wrap of the first `count` (1..CYL_LANES) segments P1[i], P2[i] (lanes beyond count
   repeat the first): code_out[i], and r1[i], r2[i] where OpenSim has written them by its
   return, long_out[i] (the spiral's side) where it wraps */
static void cylinder_lanes(double R, double len, int axis, int sign, int count,
                           const double (*P1in)[3], const double (*P2in)[3], int *code_out,
                           double (*r1out)[3], double (*r2out)[3], int *long_out) {
    int code[CYL_LANES], long_wrap[CYL_LANES];
    lvec P1, P2, P0v, DNv, cs, ce, near12, near00, v1, v2, c, m, d, e;
    lsc mag1, mag2, denom, t12, t00, q, dl1, dl2, d12;
    double r_sq = R*R;
    int constrained = sign != 0, parallel[CYL_LANES], meets[CYL_LANES], early[CYL_LANES];
    for (int k = 0; k < 3; k++) LANE {
        int i = l < count ? l : 0;
        P1[k][l] = P1in[i][k]; P2[k][l] = P2in[i][k];
    }
    l_const(P0, P0v);
    l_const(DN, DNv);
    /* CalcDistanceSquaredPointToLine(P, p0, dn) of both ends */
    l_sub(P0v, P1, d); l_dot(d, DNv, q);
    for (int k = 0; k < 3; k++) LANE e[k][l] = d[k][l] - q[l]*DNv[k][l];
    l_dot(e, e, dl1);
    l_sub(P0v, P2, d); l_dot(d, DNv, q);
    for (int k = 0; k < 3; k++) LANE e[k][l] = d[k][l] - q[l]*DNv[k][l];
    l_dot(e, e, dl2);
    /* intersect_lines(P1, P2, cs, ce) */
    LANE { cs[0][l] = 0.0; cs[1][l] = 0.0; cs[2][l] = -0.5*len;
           ce[0][l] = 0.0; ce[1][l] = 0.0; ce[2][l] = 0.5*len; }
    l_sub(P2, P1, v1); l_sub(ce, cs, v2);
    l_normalize(v1, v1, mag1); l_normalize(v2, v2, mag2);
    l_cross(v1, v2, c);
    l_dot(c, c, denom);
    LANE parallel[l] = fabs(denom[l]) <= ROUNDOFF_ERROR;
    l_sub(cs, P1, m);
    l_det3(m, v1, c, t00);
    LANE t00[l] = t00[l]/denom[l];
    for (int k = 0; k < 3; k++) LANE near00[k][l] = cs[k][l] + t00[l]*v2[k][l];
    l_det3(m, v2, c, t12);
    LANE t12[l] = t12[l]/denom[l];
    for (int k = 0; k < 3; k++) LANE near12[k][l] = P1[k][l] + t12[l]*v1[k][l];
    LANE { t12[l] /= mag1[l]; t00[l] /= mag2[l]; }
    LANE if (parallel[l]) {
        t12[l] = NAN; t00[l] = NAN;
        for (int k = 0; k < 3; k++) near12[k][l] = near00[k][l] = NAN;
    }
    l_dist2(near12, near00, d12);
    LANE meets[l] = d12[l] < r_sq && t12[l] > 0.0 && t12[l] < 1.0;
    LANE {
        early[l] = 1;
        if (dl1[l] < r_sq || dl2[l] < r_sq) code[l] = INSIDE_RADIUS;
        else if (!constrained) {
            if (meets[l]) { code[l] = MANDATORY_WRAP; early[l] = 0; }
            else code[l] = NO_WRAP;
        } else {
            double a1 = P1[axis][l], a2 = P2[axis][l];
            early[l] = 0;
            code[l] = WRAPPED;
            if (dsign(a1) == sign || dsign(a2) == sign) {
                if (meets[l]) code[l] = MANDATORY_WRAP;
                else if (dsign(a1) != dsign(a2) && dsign(near12[axis][l]) != sign)
                    code[l] = WRAPPED;
                else { code[l] = NO_WRAP; early[l] = 1; }
            }
        }
    }
    int all_early = 1;
    for (int l = 0; l < count; l++) { all_early &= early[l]; code_out[l] = code[l]; }
    if (all_early) return;
    /* the tangent points' candidates */
    lvec p11, p22, vv, uu, pp, r1a, r1b, r2a, r2b, m1a, m1b, m2a, m2b, r1, r2;
    lsc p11_dist, p22_dist, dd;
    l_closest(P1, P0v, DNv, 1, p11);
    l_closest(P2, P0v, DNv, 1, p22);
    l_sub(P1, p11, vv);
    l_normalize(vv, vv, p11_dist);
    LANE dd[l] = R*(R/p11_dist[l]);
    for (int k = 0; k < 3; k++) LANE pp[k][l] = p11[k][l] + dd[l]*vv[k][l];
    LANE dd[l] = sqrt(r_sq - dd[l]*dd[l]);
    l_cross(DNv, vv, uu);
    for (int k = 0; k < 3; k++) LANE { r1a[k][l] = pp[k][l] + dd[l]*uu[k][l];
                                       r1b[k][l] = pp[k][l] - dd[l]*uu[k][l]; }
    l_sub(P2, p22, vv);
    l_normalize(vv, vv, p22_dist);
    LANE dd[l] = R*(R/p22_dist[l]);
    for (int k = 0; k < 3; k++) LANE pp[k][l] = p22[k][l] + dd[l]*vv[k][l];
    LANE dd[l] = sqrt(r_sq - dd[l]*dd[l]);
    l_cross(DNv, vv, uu);
    for (int k = 0; k < 3; k++) LANE { r2a[k][l] = pp[k][l] + dd[l]*uu[k][l];
                                       r2b[k][l] = pp[k][l] - dd[l]*uu[k][l]; }
    l_sub(r1a, p11, m1a); l_sub(r1b, p11, m1b); l_sub(r2a, p22, m2a); l_sub(r2b, p22, m2b);
    int far_side[CYL_LANES];
    if (constrained) {
        lsc n1a, n1b, n2a, n2b, xa, xb;
        l_dot(m1a, m1a, n1a); l_dot(m1b, m1b, n1b); l_dot(m2a, m2a, n2a); l_dot(m2b, m2b, n2b);
        l_dot(m1a, m2b, xa); l_dot(m1b, m2a, xb);
        LANE {
            xa[l] = xa[l]/(sqrt(n1a[l])*sqrt(n2b[l]));
            xb[l] = xb[l]/(sqrt(n1b[l])*sqrt(n2a[l]));
        }
        LANE {
            int wider = acos_greater(xa[l], xb[l]);
            int s1a = dsign(r1a[axis][l]) == sign, s1b = dsign(r1b[axis][l]) == sign;
            int s2a = dsign(r2a[axis][l]) == sign, s2b = dsign(r2b[axis][l]) == sign;
            int ab;     /* 1: r1a, r2b; 0: r1b, r2a */
            if (s1a && s1b) ab = !s2a;
            else if (s1a) ab = 1;
            else if (s1b) ab = 0;
            else if (s2a) ab = 0;
            else if (s2b) ab = 1;
            else ab = wider;
            for (int k = 0; k < 3; k++) {
                r1[k][l] = ab ? r1a[k][l] : r1b[k][l];
                r2[k][l] = ab ? r2b[k][l] : r2a[k][l];
            }
            far_side[l] = ab ? wider : !wider;
            if (!s1a && !s1b && !s2a && !s2b) far_side[l] = 1;
            double sum_musc[3], sum_r[3];
            for (int k = 0; k < 3; k++) {
                sum_musc[k] = (r1[k][l] - P1[k][l]) + (r2[k][l] - P2[k][l]);
                sum_r[k] = (r1[k][l] - p11[k][l]) + (r2[k][l] - p22[k][l]);
            }
            long_wrap[l] = dot3(sum_r, sum_musc) < 0.0;
        }
    } else {
        lsc d1, d2, d3, d4;
        l_normalize(m1a, m1a, NULL); l_normalize(m1b, m1b, NULL);
        l_normalize(m2a, m2a, NULL); l_normalize(m2b, m2b, NULL);
        l_dot(m1a, m2a, d1); l_dot(m1a, m2b, d2); l_dot(m1b, m2a, d3); l_dot(m1b, m2b, d4);
        LANE {
            int one_a, two_a;
            if (d1[l] > d2[l] && d1[l] > d3[l] && d1[l] > d4[l]) { one_a = 1; two_a = 1; }
            else if (d2[l] > d3[l] && d2[l] > d4[l]) { one_a = 1; two_a = 0; }
            else if (d3[l] > d4[l]) { one_a = 0; two_a = 1; }
            else { one_a = 0; two_a = 0; }
            for (int k = 0; k < 3; k++) {
                r1[k][l] = one_a ? r1a[k][l] : r1b[k][l];
                r2[k][l] = two_a ? r2a[k][l] : r2b[k][l];
            }
            far_side[l] = 0;
            long_wrap[l] = 0;
        }
    }
    /* the apex edge, and the tangent points slid along it onto the plane P1 P2 apex */
    lvec mpt, axispt, l1, l2, pn, vert1, vert2, apex1, apex2, apex, lo1, hi1, lo2, hi2, r1p, r2p;
    lvec foot;
    lsc t, da1, da2, dpl, fa, fb;
    int i1[CYL_LANES], i2[CYL_LANES];
    LANE t[l] = p11_dist[l]/(p11_dist[l] + p22_dist[l]);
    for (int k = 0; k < 3; k++) LANE mpt[k][l] = P1[k][l] + t[l]*(P2[k][l] - P1[k][l]);
    l_closest(mpt, P0v, DNv, 1, axispt);
    l_sub(P1, axispt, l1); l_sub(P2, axispt, l2);
    l_normalize(l1, l1, NULL); l_normalize(l2, l2, NULL);
    l_cross(l1, l2, pn); l_unit(pn, pn); l_normalize(pn, pn, NULL);
    l_cross(DNv, pn, vert1); l_normalize(vert1, vert1, NULL);
    l_cross(pn, DNv, vert2); l_normalize(vert2, vert2, NULL);
    for (int k = 0; k < 3; k++) LANE { apex1[k][l] = axispt[k][l] + R*vert1[k][l];
                                       apex2[k][l] = axispt[k][l] + R*vert2[k][l]; }
    l_dist2(mpt, apex1, da1); l_dist2(mpt, apex2, da2);
    LANE {
        int first = da1[l] < da2[l], one = far_side[l] ? !first : first;
        for (int k = 0; k < 3; k++) apex[k][l] = one ? apex1[k][l] : apex2[k][l];
    }
    l_sub(P1, apex, uu); l_sub(P2, apex, vv);
    l_normalize(uu, uu, NULL); l_normalize(vv, vv, NULL);
    l_cross(uu, vv, pn); l_unit(pn, pn);
    LANE dpl[l] = -P1[0][l]*pn[0][l] - P1[1][l]*pn[1][l] - P1[2][l]*pn[2][l];
    for (int k = 0; k < 3; k++) LANE {
        lo1[k][l] = r1[k][l] - 10.0*DN[k]; lo2[k][l] = r2[k][l] - 10.0*DN[k];
        hi1[k][l] = r1[k][l] + 10.0*DN[k]; hi2[k][l] = r2[k][l] + 10.0*DN[k];
    }
    l_seg_plane(lo1, hi1, pn, dpl, r1p, i1);
    l_seg_plane(lo2, hi2, pn, dpl, r2p, i2);
    /* (OpenSim passes p22 as the line's direction: the axis, up to sign) */
    l_closest(r1p, p11, p22, 0, foot);
    l_dist2(foot, p22, fa); l_dist2(p11, p22, fb);
    LANE if (i1[l] && fa[l] < fb[l]) for (int k = 0; k < 3; k++) r1[k][l] = r1p[k][l];
    l_closest(r2p, p11, p22, 0, foot);
    l_dist2(foot, p11, fa); l_dist2(p22, p11, fb);
    LANE if (i2[l] && fa[l] < fb[l]) for (int k = 0; k < 3; k++) r2[k][l] = r2p[k][l];
    double half = len/2.0;
    for (int l = 0; l < count; l++) {
        if (early[l]) continue;
        for (int k = 0; k < 3; k++) { r1out[l][k] = r1[k][l]; r2out[l][k] = r2[k][l]; }
        long_out[l] = long_wrap[l];
        if ((r1[2][l] < -half || r1[2][l] > half) && (r2[2][l] < -half || r2[2][l] > half))
            code_out[l] = NO_WRAP;
    }
}

/* WrapCylinder::wrapLine: the return code; r1, r2, s where it wraps */
static int cylinder_wrap(double R, double len, int axis, int sign, int single, const double *P1,
                         const double *P2, double *r1, double *r2, double *s) {
    int code, long_wrap;
    double a[1][3] = {{P1[0], P1[1], P1[2]}}, b[1][3] = {{P2[0], P2[1], P2[2]}};
    double o1[1][3] = {{r1[0], r1[1], r1[2]}}, o2[1][3] = {{r2[0], r2[1], r2[2]}};
    cylinder_lanes(R, len, axis, sign, 1, a, b, &code, o1, o2, &long_wrap);
    copy3(o1[0], r1); copy3(o2[0], r2);
    if (code == WRAPPED || code == MANDATORY_WRAP)
        *s = spiral_path(R, P1, P2, long_wrap, single, r1, r2);
    return code;
}
