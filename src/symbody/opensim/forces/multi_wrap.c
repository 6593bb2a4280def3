/* OpenSim 4.6's path over several wrap objects on doubles: GeometryPath::applyWrapObjects
   (its passes, each wrap's range, the choice of segment, the order swap, and the cache of
   getLocationInGround that the later passes do not renew) over the cylinder routine of
   cylinder_wrap.c and the ellipsoid routine of ellipsoid_wrap.c, which precede this file in
   one source (multi_wrap.py joins them).  A CPython extension ("symbody_multi_wrap"):

       path(points, point_bodies, bodies, wraps) -> (0, length, path nodes, wrenches)

   points: 3n floats (ground); point_bodies: each point's body (an index into bodies);
   bodies: 12 floats per body of the path (its points' and wrap objects'), its pose in ground
   R (9, row-major: ground = R x + o) and o (3); wraps: 24 floats per wrap object, in
   PathWrapSet order: kind (0 cylinder, 1 ellipsoid), active, start, end (0-based point
   indices), axis, sign, method, singleWrap, radius/a0, length/a1, -/a2, its body, its frame
   in the body R (9) and origin (3).  Wrenches: for each body, the net unit force F (3) and
   its moment M (3) about the body's origin (ground coordinates) of the path's forces
   (OpenSim's produceForces at unit tension, with the opposite sign), then the same of its
   lengthening speed: L' = Σ_B F_B · v_B + M_B · ω_B for each (v_B the velocity of B's
   origin).  The path's nodes: i >= 0 point i, -(2j+1) and -(2j+2) wrap j's tangent
   points. */

#define MAX_WRAPS 16          /* (multi_wrap.py refuses larger paths at load) */
#define MAX_POINTS 64
#define MAX_NODES (MAX_POINTS + 2 * MAX_WRAPS)
#define MAX_BODIES (MAX_POINTS + MAX_WRAPS)
#define WRAP_FIELDS 24
#define BODY_FIELDS 12
#define MEMO_SLOTS 8          /* wrapLine results kept per wrap object within one call */

/* one wrapLine call of a wrap object: its inputs (the segment's end points in the wrap
   frame) and its outputs */
typedef struct {
    double pa[3], pb[3], r1[3], r2[3], s;
    int result;
} memo_t;

typedef struct {
    int kind, active, start, end, axis, sign, method, single, body;
    double par[3], R[9], o[3];      /* the wrap frame in ground */
    double Rb[9], ob[3];             /* the wrap frame in its body */
    double r1[3], r2[3], s;          /* the current wrap (wrap frame) */
    double g1[3], g2[3];             /* its points in ground */
    /* OpenSim's Point::getLocationInGround: the ground position of each tangent point as
       first asked for in this state (a cache that setLocation does not renew) */
    int cached[2];
    double cg[2][3];
    /* the wrapLine calls of this evaluation: a call with bitwise-identical end points
       returns the stored outputs (the routine is a pure function of them and the object's
       fixed fields, so no number changes; OpenSim's later passes repeat most calls) */
    int nmemo;
    memo_t memo[MEMO_SLOTS];
} wrap_t;

static void to_frame(const wrap_t *w, const double *g, double *x) {
    double d[3] = {g[0] - w->o[0], g[1] - w->o[1], g[2] - w->o[2]};
    for (int k = 0; k < 3; k++) x[k] = w->R[k]*d[0] + w->R[3 + k]*d[1] + w->R[6 + k]*d[2];
}

static void to_ground(const wrap_t *w, const double *x, double *g) {
    for (int k = 0; k < 3; k++)
        g[k] = w->R[3*k]*x[0] + w->R[3*k + 1]*x[1] + w->R[3*k + 2]*x[2] + w->o[k];
}

static double gdist(const double *a, const double *b) { return sqrt(dist2(a, b)); }

/* a node: i >= 0 path point i; -(2j+1) wrap j's first point; -(2j+2) its second */
static const double *node_pos(int node, const double *pts, wrap_t *w) {
    if (node >= 0) return pts + 3*node;
    int j = (-node - 1)/2;
    return (-node - 1) % 2 == 0 ? w[j].g1 : w[j].g2;
}

/* the node's getLocationInGround (cached at the first call, as OpenSim's) */
static const double *node_ground(int node, const double *pts, wrap_t *w) {
    if (node >= 0) return pts + 3*node;
    int j = (-node - 1)/2, e = (-node - 1) % 2;
    if (!w[j].cached[e]) { copy3(e == 0 ? w[j].g1 : w[j].g2, w[j].cg[e]); w[j].cached[e] = 1; }
    return w[j].cg[e];
}

static int wrap_line(wrap_t *w, const double *P1, const double *P2, double *r1, double *r2,
                     double *s) {
    if (w->kind == 0)
        return cylinder_wrap(w->par[0], w->par[1], w->axis, w->sign, w->single, P1, P2, r1, r2, s);
    double factor = 3.0/(w->par[0] + w->par[1] + w->par[2]), p1e = -1.0, p2e = -1.0;
    for (int k = 0; k < 3; k++) {
        double a = w->par[k]*factor;
        p1e += (P1[k]*factor/a)*(P1[k]*factor/a);
        p2e += (P2[k]*factor/a)*(P2[k]*factor/a);
    }
    if (p1e < -0.0001 || p2e < -0.0001) return INSIDE_RADIUS;
    return ellipsoid_wrap(w->par, w->axis, w->sign, w->method, P1, P2, r1, r2, s)
           ? MANDATORY_WRAP : NO_WRAP;
}

/* wrap_line through the object's memo of this evaluation (wrap_t) */
static int memo_wrap_line(wrap_t *w, const double *P1, const double *P2, double *r1,
                          double *r2, double *s) {
    int n = w->nmemo < MEMO_SLOTS ? w->nmemo : MEMO_SLOTS;
    for (int k = 0; k < n; k++) {
        const memo_t *e = &w->memo[k];
        if (memcmp(e->pa, P1, sizeof e->pa) == 0 && memcmp(e->pb, P2, sizeof e->pb) == 0) {
            copy3(e->r1, r1); copy3(e->r2, r2); *s = e->s;
            return e->result;
        }
    }
    memo_t *e = &w->memo[w->nmemo % MEMO_SLOTS];
    w->nmemo++;
    for (int k = 0; k < 3; k++) { r1[k] = r2[k] = 0.0; }
    e->result = wrap_line(w, P1, P2, r1, r2, s);
    copy3(P1, e->pa); copy3(P2, e->pb); copy3(r1, e->r1); copy3(r2, e->r2); e->s = *s;
    return e->result;
}

/* memo_wrap_line of a cylinder for `count` segments at once: the calls not in the memo go
   through cylinder_lanes CYL_LANES at a time (the same numbers as one by one), then the
   tangency iteration of each that wraps */
static void cylinder_calls(wrap_t *w, int count, const double (*pa)[3], const double (*pb)[3],
                           double (*r1)[3], double (*r2)[3], double *s, int *res) {
    int miss[MAX_NODES], nmiss = 0;
    for (int q = 0; q < count; q++) {
        int n = w->nmemo < MEMO_SLOTS ? w->nmemo : MEMO_SLOTS, hit = 0;
        for (int k = 0; k < n && !hit; k++) {
            const memo_t *e = &w->memo[k];
            if (memcmp(e->pa, pa[q], sizeof e->pa) == 0
                && memcmp(e->pb, pb[q], sizeof e->pb) == 0) {
                copy3(e->r1, r1[q]); copy3(e->r2, r2[q]); s[q] = e->s; res[q] = e->result;
                hit = 1;
            }
        }
        if (!hit) miss[nmiss++] = q;
    }
    for (int k0 = 0; k0 < nmiss; k0 += CYL_LANES) {
        int lanes = nmiss - k0 < CYL_LANES ? nmiss - k0 : CYL_LANES, code[CYL_LANES];
        int long_wrap[CYL_LANES];
        double a[CYL_LANES][3], b[CYL_LANES][3], o1[CYL_LANES][3], o2[CYL_LANES][3];
        for (int l = 0; l < lanes; l++) {
            copy3(pa[miss[k0 + l]], a[l]); copy3(pb[miss[k0 + l]], b[l]);
            for (int k = 0; k < 3; k++) o1[l][k] = o2[l][k] = 0.0;
        }
        cylinder_lanes(w->par[0], w->par[1], w->axis, w->sign, lanes, a, b, code, o1, o2,
                       long_wrap);
        for (int l = 0; l < lanes; l++) {
            int q = miss[k0 + l];
            copy3(o1[l], r1[q]); copy3(o2[l], r2[q]);
            s[q] = 0.0;
            if (code[l] == WRAPPED || code[l] == MANDATORY_WRAP)
                s[q] = spiral_path(w->par[0], a[l], b[l], long_wrap[l], w->single, r1[q], r2[q]);
            res[q] = code[l];
            memo_t *e = &w->memo[w->nmemo % MEMO_SLOTS];
            w->nmemo++;
            e->result = code[l];
            copy3(a[l], e->pa); copy3(b[l], e->pb); copy3(r1[q], e->r1); copy3(r2[q], e->r2);
            e->s = s[q];
        }
    }
}

static double path_length(const int *path, int np, const double *pts, wrap_t *w) {
    double L = 0.0;
    for (int k = 1; k < np; k++) {
        int a = path[k - 1], b = path[k];
        if (a < 0 && b < 0 && (-a - 1)/2 == (-b - 1)/2) L += w[(-b - 1)/2].s;
        else {
            const double *ga = node_ground(a, pts, w);
            L += gdist(ga, node_ground(b, pts, w));
        }
    }
    return L;
}

static void remove_wrap(int *path, int *np, int j) {
    for (int k = 0; k < *np; k++)
        if (path[k] == -(2*j + 1)) {
            for (int q = k; q + 2 < *np; q++) path[q] = path[q + 2];
            *np -= 2;
            return;
        }
}

/* GeometryPath::applyWrapObjects and the path's length */
static double apply_wraps(int n, const double *pts, int m, wrap_t *w, int *path, int *np) {
    int order[MAX_WRAPS], result[MAX_WRAPS];
    for (int i = 0; i < n; i++) path[i] = i;
    *np = n;
    for (int i = 0; i < m; i++) { order[i] = i; w[i].cached[0] = w[i].cached[1] = 0; }
    int passes = m < 2 ? 1 : 8;
    double last = INFINITY, L = 0.0;
    for (int kk = 0; kk < passes; kk++) {
        for (int i = 0; i < m; i++) {
            result[i] = NO_WRAP;
            int j = order[i];
            wrap_t *wj = &w[j];
            remove_wrap(path, np, j);
            if (!wj->active) continue;
            int start = -1, end = -1;
            for (int k = 0; k < *np; k++) {
                if (path[k] == wj->start) start = k;
                if (path[k] == wj->end) end = k;
            }
            /* the candidate segments, their end points in the wrap frame, and (a cylinder)
               all their wrapLine calls at once (OpenSim's loop takes them in order, and its
               break after a mandatory wrap leaves the later ones unused) */
            int nseg = 0, seg[MAX_NODES], res[MAX_NODES];
            double pa[MAX_NODES][3], pb[MAX_NODES][3], r1[MAX_NODES][3], r2[MAX_NODES][3];
            double s[MAX_NODES];
            for (int pt1 = start; pt1 < end; pt1++) {
                int a = path[pt1], b = path[pt1 + 1];
                if (a < 0 && b < 0 && (-a - 1)/2 == (-b - 1)/2) continue;
                to_frame(wj, node_pos(a, pts, w), pa[nseg]);
                to_frame(wj, node_pos(b, pts, w), pb[nseg]);
                seg[nseg++] = pt1;
            }
            if (wj->kind == 0) cylinder_calls(wj, nseg, pa, pb, r1, r2, s, res);
            int best = -1;
            double best_r1[3], best_r2[3], best_s = 0.0, min_change = INFINITY;
            for (int q = 0; q < nseg; q++) {
                int pt1 = seg[q], a = path[pt1], b = path[pt1 + 1];
                if (wj->kind != 0) {
                    s[q] = 0.0;
                    res[q] = memo_wrap_line(wj, pa[q], pb[q], r1[q], r2[q], &s[q]);
                }
                result[i] = res[q];
                if (result[i] == MANDATORY_WRAP) {
                    best = pt1 + 1; copy3(r1[q], best_r1); copy3(r2[q], best_r2); best_s = s[q];
                    break;
                }
                if (result[i] == WRAPPED) {
                    double g1[3], g2[3];
                    to_ground(wj, r1[q], g1);
                    to_ground(wj, r2[q], g2);
                    const double *sa = node_ground(a, pts, w), *sb = node_ground(b, pts, w);
                    double change = gdist(sa, sb);   /* (calcPathLengthChange's order) */
                    change = gdist(sa, g1) + s[q] + gdist(sb, g2) - change;
                    if (change < min_change) {
                        best = pt1 + 1; copy3(r1[q], best_r1); copy3(r2[q], best_r2);
                        best_s = s[q];
                        min_change = change;
                    }
                }
            }
            if (best >= 0) {
                copy3(best_r1, wj->r1); copy3(best_r2, wj->r2); wj->s = best_s;
                to_ground(wj, best_r1, wj->g1);
                to_ground(wj, best_r2, wj->g2);
                for (int q = *np - 1; q >= best; q--) path[q + 2] = path[q];
                path[best] = -(2*j + 1);
                path[best + 1] = -(2*j + 2);
                *np += 2;
            }
        }
        L = path_length(path, *np, pts, w);
        if (fabs(L - last) < 0.0005) break;
        /* no object wrapped in the first pass: every later pass repeats it bit for bit (the
           same path, so the same calls and outputs, with the order swapped or not), and
           OpenSim's loop would end after the second (or, L not finite, the eighth) with
           this L and this path */
        if (kk == 0 && *np == n) break;
        last = L;
        if (kk == 0 && m > 1 && result[0] == NO_WRAP && result[1] == INSIDE_RADIUS) {
            order[0] = 1; order[1] = 0;
            remove_wrap(path, np, 0);
        }
    }
    return L;
}

/* adds ±e at the point g of body k: F_k += sign e, M_k += sign (g - o_k) × e (ground) */
static void add_unit_force(double *out, const double *bodies, int k, const double *g,
                           const double *e, double sign) {
    const double *o = bodies + BODY_FIELDS*k + 9;
    double arm[3] = {g[0] - o[0], g[1] - o[1], g[2] - o[2]}, m[3];
    cross3(arm, e, m);
    for (int q = 0; q < 3; q++) { out[12*k + q] += sign*e[q]; out[12*k + 3 + q] += sign*m[q]; }
}

/* the path's rows as body wrenches (module comment): for each pair a -> b of consecutive
   points, e the unit vector between their getLocationInGround positions; the forces'
   (produceForces: pairs on two bodies) and the speed's (every pair) -e at a, +e at b, at
   the points' getLocation positions */
WRAP_FLATTEN static void path_wrenches(const double *pts, const int *pbody, wrap_t *w,
                                       const double *bodies, int nb, const int *path, int np,
                                       double *out) {
    for (int k = 0; k < 12*nb; k++) out[k] = 0.0;
    for (int q = 0; q + 1 < np; q++) {
        int a = path[q], b = path[q + 1];
        int ka = a >= 0 ? pbody[a] : w[(-a - 1)/2].body, kb = b >= 0 ? pbody[b] : w[(-b - 1)/2].body;
        const double *sa = node_ground(a, pts, w), *sb = node_ground(b, pts, w);
        const double *fa = node_pos(a, pts, w), *fb = node_pos(b, pts, w);
        double e[3] = {sb[0] - sa[0], sb[1] - sa[1], sb[2] - sa[2]};
        double d = sqrt(dot3(e, e));
        for (int k = 0; k < 3; k++) e[k] /= d;
        add_unit_force(out + 6, bodies, ka, fa, e, -1.0);      /* (speed: out + 6 ...) */
        add_unit_force(out + 6, bodies, kb, fb, e, 1.0);
        if (ka != kb) {
            add_unit_force(out, bodies, ka, fa, e, -1.0);
            add_unit_force(out, bodies, kb, fb, e, 1.0);
        }
    }
}

static int read_doubles(PyObject *seq, double *out, Py_ssize_t max, Py_ssize_t *count) {
    PyObject *fast = PySequence_Fast(seq, "a sequence of floats is expected");
    if (fast == NULL) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > max) { Py_DECREF(fast); PyErr_SetString(PyExc_ValueError, "too many values"); return -1; }
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < len; i++) {
        out[i] = PyFloat_AsDouble(items[i]);
        if (out[i] == -1.0 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
    }
    Py_DECREF(fast);
    *count = len;
    return 0;
}

/* the path from its points (3n, ground), their bodies (n, indices into bodies, as floats),
   the poses of its bodies (12 nb) and its wrap objects (24 m, module comment): its length
   *L, its nodes (*npath of them) and the wrenches (12 nb); 0, or 1 for sizes or fields out
   of range (the message in *error) */
static int multi_path(const double *pts, int n, const double *pbf, const double *bodies, int nb,
                      const double *spec, int m, double *L, int *path, int *npath, double *out,
                      const char **error) {
    int pbody[MAX_POINTS];
    if (n < 2 || n > MAX_POINTS || m > MAX_WRAPS || nb < 1 || nb > MAX_BODIES) {
        *error = "3 floats and a body per point (2 to 64 points), 12 per body, 24 per wrap "
                 "object (at most 16)";
        return 1;
    }
    for (int i = 0; i < n; i++) {
        pbody[i] = (int)pbf[i];
        if (pbody[i] < 0 || pbody[i] >= nb) { *error = "a point's body is out of range"; return 1; }
    }
    wrap_t w[MAX_WRAPS];
    for (int j = 0; j < m; j++) {
        const double *f = spec + WRAP_FIELDS*j;
        wrap_t *x = &w[j];
        x->kind = (int)f[0]; x->active = (int)f[1]; x->start = (int)f[2]; x->end = (int)f[3];
        x->axis = (int)f[4]; x->sign = (int)f[5]; x->method = (int)f[6]; x->single = (int)f[7];
        for (int k = 0; k < 3; k++) x->par[k] = f[8 + k];
        x->body = (int)f[11];
        for (int k = 0; k < 9; k++) x->Rb[k] = f[12 + k];
        for (int k = 0; k < 3; k++) x->ob[k] = f[21 + k];
        x->s = 0.0;
        x->nmemo = 0;
        if (x->start < 0 || x->end >= n || x->start > x->end || x->axis < 0 || x->axis > 2
            || x->kind < 0 || x->kind > 1 || x->method < 0 || x->method > 2 || x->body < 0
            || x->body >= nb) {
            *error = "a wrap object's fields are out of range";
            return 1;
        }
        const double *B = bodies + BODY_FIELDS*x->body;     /* its frame in ground */
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                x->R[3*r + c] = B[3*r]*x->Rb[c] + B[3*r + 1]*x->Rb[3 + c] + B[3*r + 2]*x->Rb[6 + c];
            x->o[r] = B[3*r]*x->ob[0] + B[3*r + 1]*x->ob[1] + B[3*r + 2]*x->ob[2] + B[9 + r];
        }
    }
    *L = apply_wraps(n, pts, m, w, path, npath);
    path_wrenches(pts, pbody, w, bodies, nb, path, *npath, out);
    return 0;
}

static PyObject *py_path(PyObject *self, PyObject *args) {
    PyObject *pts_obj, *pb_obj, *bodies_obj, *wraps_obj;
    double pts[3*MAX_POINTS], pbf[MAX_POINTS], bodies[BODY_FIELDS*MAX_BODIES];
    double spec[WRAP_FIELDS*MAX_WRAPS];
    Py_ssize_t np3, npb, nbf, nw;
    if (!PyArg_ParseTuple(args, "OOOO", &pts_obj, &pb_obj, &bodies_obj, &wraps_obj)) return NULL;
    if (read_doubles(pts_obj, pts, 3*MAX_POINTS, &np3) < 0) return NULL;
    if (read_doubles(pb_obj, pbf, MAX_POINTS, &npb) < 0) return NULL;
    if (read_doubles(bodies_obj, bodies, BODY_FIELDS*MAX_BODIES, &nbf) < 0) return NULL;
    if (read_doubles(wraps_obj, spec, WRAP_FIELDS*MAX_WRAPS, &nw) < 0) return NULL;
    if (np3 % 3 || nw % WRAP_FIELDS || nbf % BODY_FIELDS || np3 < 6 || npb != np3/3) {
        PyErr_SetString(PyExc_ValueError, "3 floats and a body per point, 12 per body, 24 per "
                        "wrap object");
        return NULL;
    }
    int n = (int)(np3/3), m = (int)(nw/WRAP_FIELDS), nb = (int)(nbf/BODY_FIELDS);
    int path[MAX_NODES], npath;
    double L, out[12*MAX_BODIES];
    const char *error = NULL;
    if (multi_path(pts, n, pbf, bodies, nb, spec, m, &L, path, &npath, out, &error)) {
        PyErr_SetString(PyExc_ValueError, error);
        return NULL;
    }
    PyObject *nodes = PyTuple_New(npath), *vals = PyTuple_New(12*nb);
    if (nodes == NULL || vals == NULL) { Py_XDECREF(nodes); Py_XDECREF(vals); return NULL; }
    for (int k = 0; k < npath; k++) PyTuple_SET_ITEM(nodes, k, PyLong_FromLong(path[k]));
    for (int k = 0; k < 12*nb; k++) PyTuple_SET_ITEM(vals, k, PyFloat_FromDouble(out[k]));
    return Py_BuildValue("(idNN)", 0, L, nodes, vals);
}

/* the address of symbody_path_parameters (path_parameters.c, later in this source) */
int symbody_path_parameters(void *plan, double t, const double *x, double *out);

static PyObject *py_entry(PyObject *self, PyObject *args) {
    return PyLong_FromVoidPtr((void *)&symbody_path_parameters);
}

static PyMethodDef multi_methods[] = {
    {"path", py_path, METH_VARARGS, "OpenSim's path over several wrap objects on doubles."},
    {"entry", py_entry, METH_NOARGS, "The address of symbody_path_parameters."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef multi_module = {PyModuleDef_HEAD_INIT, "symbody_multi_wrap", NULL, -1,
                                          multi_methods};

PyMODINIT_FUNC PyInit_symbody_multi_wrap(void) { return PyModule_Create(&multi_module); }
