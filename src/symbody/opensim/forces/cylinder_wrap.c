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

/* WrapMath::IntersectLineSegPlane */
static int seg_plane(const double *a, const double *b, const double *n, double d, double *out) {
    double v[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double dp = dot3(v, n);
    if (fabs(dp) < LINE_EPS) return 0;
    double t = (-d - n[0]*a[0] - n[1]*a[1] - n[2]*a[2])/dp;
    if (t < -LINE_EPS || t > 1.0 + LINE_EPS) return 0;
    for (int k = 0; k < 3; k++) out[k] = a[k] + t*v[k];
    return 1;
}


static double line_dist2(const double *p) {    /* CalcDistanceSquaredPointToLine(p, p0, dn) */
    double d[3] = {P0[0] - p[0], P0[1] - p[1], P0[2] - p[2]};
    double k = dot3(d, DN);
    double e[3] = {d[0] - k*DN[0], d[1] - k*DN[1], d[2] - k*DN[2]};
    return dot3(e, e);
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

/* WrapCylinder::wrapLine: the return code; r1, r2, s where it wraps */
WRAP_FLATTEN static int cylinder_wrap(double R, double len, int axis, int sign, int single, const double *P1,
                         const double *P2, double *r1, double *r2, double *s) {
    double r_sq = R*R;
    int constrained = sign != 0, far_side = 0, long_wrap = 0, code = WRAPPED;
    if (line_dist2(P1) < r_sq || line_dist2(P2) < r_sq) return INSIDE_RADIUS;
    double cs[3] = {0.0, 0.0, -0.5*len}, ce[3] = {0.0, 0.0, 0.5*len}, near12[3], near00[3];
    double t12, t00;
    intersect_lines(P1, P2, cs, ce, near12, &t12, near00, &t00);
    int meets = dist2(near12, near00) < r_sq && t12 > 0.0 && t12 < 1.0;
    if (!constrained) {
        if (meets) code = MANDATORY_WRAP; else return NO_WRAP;
    }
    double p11[3], p22[3], vv[3], uu[3], pp[3], r1a[3], r1b[3], r2a[3], r2b[3];
    closest_on_line(P1, P0, DN, p11);
    closest_on_line(P2, P0, DN, p22);
    for (int k = 0; k < 3; k++) vv[k] = P1[k] - p11[k];
    double p11_dist = normalize_or_zero(vv, vv);
    double d = R*(R/p11_dist);
    for (int k = 0; k < 3; k++) pp[k] = p11[k] + d*vv[k];
    d = sqrt(r_sq - d*d);
    cross3(DN, vv, uu);
    for (int k = 0; k < 3; k++) { r1a[k] = pp[k] + d*uu[k]; r1b[k] = pp[k] - d*uu[k]; }
    for (int k = 0; k < 3; k++) vv[k] = P2[k] - p22[k];
    double p22_dist = normalize_or_zero(vv, vv);
    d = R*(R/p22_dist);
    for (int k = 0; k < 3; k++) pp[k] = p22[k] + d*vv[k];
    d = sqrt(r_sq - d*d);
    cross3(DN, vv, uu);
    for (int k = 0; k < 3; k++) { r2a[k] = pp[k] + d*uu[k]; r2b[k] = pp[k] - d*uu[k]; }
    double m1a[3], m1b[3], m2a[3], m2b[3];
    for (int k = 0; k < 3; k++) {
        m1a[k] = r1a[k] - p11[k]; m1b[k] = r1b[k] - p11[k];
        m2a[k] = r2a[k] - p22[k]; m2b[k] = r2b[k] - p22[k];
    }
    if (constrained) {
        if (dsign(P1[axis]) == sign || dsign(P2[axis]) == sign) {
            if (meets) code = MANDATORY_WRAP;
            else if (dsign(P1[axis]) != dsign(P2[axis]) && dsign(near12[axis]) != sign)
                code = WRAPPED;
            else return NO_WRAP;
        }
        int wider = acos_greater(dot3(m1a, m2b)/(sqrt(dot3(m1a, m1a))*sqrt(dot3(m2b, m2b))),
                                 dot3(m1b, m2a)/(sqrt(dot3(m1b, m1b))*sqrt(dot3(m2a, m2a))));
        int s1a = dsign(r1a[axis]) == sign, s1b = dsign(r1b[axis]) == sign;
        int s2a = dsign(r2a[axis]) == sign, s2b = dsign(r2b[axis]) == sign;
        int ab;     /* 1: r1a, r2b; 0: r1b, r2a */
        if (s1a && s1b) ab = !s2a;
        else if (s1a) ab = 1;
        else if (s1b) ab = 0;
        else if (s2a) ab = 0;
        else if (s2b) ab = 1;
        else ab = wider;
        if (ab) { copy3(r1a, r1); copy3(r2b, r2); far_side = wider; }
        else { copy3(r1b, r1); copy3(r2a, r2); far_side = !wider; }
        if (!s1a && !s1b && !s2a && !s2b) far_side = 1;
        double sum_musc[3], sum_r[3];
        for (int k = 0; k < 3; k++) {
            sum_musc[k] = (r1[k] - P1[k]) + (r2[k] - P2[k]);
            sum_r[k] = (r1[k] - p11[k]) + (r2[k] - p22[k]);
        }
        if (dot3(sum_r, sum_musc) < 0.0) long_wrap = 1;
    } else {
        normalize_or_zero(m1a, m1a); normalize_or_zero(m1b, m1b);
        normalize_or_zero(m2a, m2a); normalize_or_zero(m2b, m2b);
        double d1 = dot3(m1a, m2a), d2 = dot3(m1a, m2b), d3 = dot3(m1b, m2a), d4 = dot3(m1b, m2b);
        if (d1 > d2 && d1 > d3 && d1 > d4) { copy3(r1a, r1); copy3(r2a, r2); }
        else if (d2 > d3 && d2 > d4) { copy3(r1a, r1); copy3(r2b, r2); }
        else if (d3 > d4) { copy3(r1b, r1); copy3(r2a, r2); }
        else { copy3(r1b, r1); copy3(r2b, r2); }
    }
    /* the apex edge, and the tangent points slid along it onto the plane P1 P2 apex */
    double t = p11_dist/(p11_dist + p22_dist), mpt[3], axispt[3], l1[3], l2[3], pn[3];
    for (int k = 0; k < 3; k++) mpt[k] = P1[k] + t*(P2[k] - P1[k]);
    closest_on_line(mpt, P0, DN, axispt);
    for (int k = 0; k < 3; k++) { l1[k] = P1[k] - axispt[k]; l2[k] = P2[k] - axispt[k]; }
    normalize_or_zero(l1, l1); normalize_or_zero(l2, l2);
    cross3(l1, l2, pn); unit3(pn, pn); normalize_or_zero(pn, pn);
    double vert1[3], vert2[3], apex1[3], apex2[3], apex[3];
    cross3(DN, pn, vert1); normalize_or_zero(vert1, vert1);
    cross3(pn, DN, vert2); normalize_or_zero(vert2, vert2);
    for (int k = 0; k < 3; k++) { apex1[k] = axispt[k] + R*vert1[k]; apex2[k] = axispt[k] + R*vert2[k]; }
    int first = dist2(mpt, apex1) < dist2(mpt, apex2);
    copy3(far_side ? (first ? apex2 : apex1) : (first ? apex1 : apex2), apex);
    for (int k = 0; k < 3; k++) { uu[k] = P1[k] - apex[k]; vv[k] = P2[k] - apex[k]; }
    normalize_or_zero(uu, uu); normalize_or_zero(vv, vv);
    cross3(uu, vv, pn); unit3(pn, pn);
    double dd = -P1[0]*pn[0] - P1[1]*pn[1] - P1[2]*pn[2], lo1[3], hi1[3], lo2[3], hi2[3];
    double r1p[3], r2p[3], foot[3];
    for (int k = 0; k < 3; k++) {
        lo1[k] = r1[k] - 10.0*DN[k]; lo2[k] = r2[k] - 10.0*DN[k];
        hi1[k] = r1[k] + 10.0*DN[k]; hi2[k] = r2[k] + 10.0*DN[k];
    }
    int i1 = seg_plane(lo1, hi1, pn, dd, r1p), i2 = seg_plane(lo2, hi2, pn, dd, r2p);
    if (i1) {      /* (OpenSim passes p22 as the line's direction: the axis, up to sign) */
        closest_on_line(r1p, p11, p22, foot);
        if (dist2(foot, p22) < dist2(p11, p22)) copy3(r1p, r1);
    }
    if (i2) {
        closest_on_line(r2p, p11, p22, foot);
        if (dist2(foot, p11) < dist2(p22, p11)) copy3(r2p, r2);
    }
    double half = len/2.0;
    if ((r1[2] < -half || r1[2] > half) && (r2[2] < -half || r2[2] > half)) return NO_WRAP;
    *s = spiral_path(R, P1, P2, long_wrap, single, r1, r2);
    return code;
}

