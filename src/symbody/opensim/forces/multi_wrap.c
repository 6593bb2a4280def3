/* OpenSim 4.6's path over several wrap objects on doubles: GeometryPath::applyWrapObjects
   (its passes, each wrap's range, the choice of segment, the order swap, and the cache of
   getLocationInGround that the later passes do not renew) over the cylinder routine of
   cylinder_wrap.c and the ellipsoid routine of ellipsoid_wrap.c, which precede this file in
   one source (multi_wrap.py joins them).  A CPython extension ("symbody_multi_wrap"):

       path(points, point_bodies, bodies, wraps) -> (0, length, path nodes, values)

   points: 3n floats (ground); point_bodies: each point's body (an index into bodies);
   bodies: 12 floats per body of the path (its points' and wrap objects'), its pose in ground
   R (9, row-major: ground = R x + o) and o (3); wraps: 24 floats per wrap object, in
   PathWrapSet order: kind (0 cylinder, 1 ellipsoid), active, start, end (0-based point
   indices), axis, sign, method, singleWrap, radius/a0, length/a1, -/a2, its body, its frame
   in the body R (9) and origin (3).  Values, for each segment i with c > 0 candidate wraps
   (active, range holding i) on the bodies B_i (ascending): c |B_i| slots (position-major)
   of 7 values, r1, r2 (body coordinates, where getLocationInGround has them) and s; then
   for each of its 2 c |B_i| + 1 sub-segments x -> x+1 between consecutive stations 12
   values, the points whose velocities count (x's and x+1's body coordinates) for the forces
   and for the lengthening speed.  The k-th wrap OpenSim puts on segment i fills slot (k, its
   body); an empty slot gets r1, r2 on the chord between its neighbouring stations and
   s = |r2 - r1|.  The path's nodes: i >= 0 point i, -(2j+1) and -(2j+2) wrap j's tangent points. */

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
            int best = -1;
            double best_r1[3], best_r2[3], best_s = 0.0, min_change = INFINITY;
            for (int pt1 = start; pt1 < end; pt1++) {
                int a = path[pt1], b = path[pt1 + 1];
                if (a < 0 && b < 0 && (-a - 1)/2 == (-b - 1)/2) continue;
                const double *ga = node_pos(a, pts, w), *gb = node_pos(b, pts, w);
                double pa[3], pb[3], r1[3], r2[3], s = 0.0;
                to_frame(wj, ga, pa);
                to_frame(wj, gb, pb);
                result[i] = wrap_line(wj, pa, pb, r1, r2, &s);
                if (result[i] == MANDATORY_WRAP) {
                    best = pt1 + 1; copy3(r1, best_r1); copy3(r2, best_r2); best_s = s;
                    break;
                }
                if (result[i] == WRAPPED) {
                    double g1[3], g2[3];
                    to_ground(wj, r1, g1);
                    to_ground(wj, r2, g2);
                    const double *sa = node_ground(a, pts, w), *sb = node_ground(b, pts, w);
                    double change = gdist(sa, sb);   /* (calcPathLengthChange's order) */
                    change = gdist(sa, g1) + s + gdist(sb, g2) - change;
                    if (change < min_change) {
                        best = pt1 + 1; copy3(r1, best_r1); copy3(r2, best_r2); best_s = s;
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
        last = L;
        if (kk == 0 && m > 1 && result[0] == NO_WRAP && result[1] == INSIDE_RADIUS) {
            order[0] = 1; order[1] = 0;
            remove_wrap(path, np, 0);
        }
    }
    return L;
}

static void frame_to_body(const wrap_t *w, const double *x, double *out) {
    for (int k = 0; k < 3; k++)
        out[k] = w->Rb[3*k]*x[0] + w->Rb[3*k + 1]*x[1] + w->Rb[3*k + 2]*x[2] + w->ob[k];
}

static void ground_to_body(const double *pose, const double *g, double *x) {
    double d[3] = {g[0] - pose[9], g[1] - pose[10], g[2] - pose[11]};
    for (int k = 0; k < 3; k++) x[k] = pose[k]*d[0] + pose[3 + k]*d[1] + pose[6 + k]*d[2];
}

/* the slots' and sub-segments' values (module comment) */
static int fill_slots(int n, const double *pts, const int *pbody, int m, wrap_t *w,
                      const double *bodies, const int *path, int np, double *out) {
    double *o = out;
    for (int i = 0; i + 1 < n; i++) {
        int c = 0, nb = 0, bl[MAX_WRAPS];
        for (int j = 0; j < m; j++) {
            if (!(w[j].active && w[j].start <= i && i < w[j].end)) continue;
            c++;
            int seen = 0;
            for (int q = 0; q < nb; q++) seen |= bl[q] == w[j].body;
            if (!seen) bl[nb++] = w[j].body;
        }
        if (c == 0) continue;
        for (int p = 0; p < nb; p++)             /* ascending */
            for (int q = p + 1; q < nb; q++)
                if (bl[q] < bl[p]) { int s = bl[p]; bl[p] = bl[q]; bl[q] = s; }
        int ns = c*nb, on[MAX_SLOTS], who[MAX_SLOTS];
        for (int t = 0; t < ns; t++) on[t] = 0;
        int a = -1, b = -1, pos = 0;
        for (int q = 0; q < np; q++) { if (path[q] == i) a = q; if (path[q] == i + 1) b = q; }
        for (int q = a + 1; q < b; q += 2, pos++) {
            int j = (-path[q] - 1)/2, t = 0;
            while (bl[t] != w[j].body) t++;
            on[pos*nb + t] = 1; who[pos*nb + t] = j;
        }
        /* stations: 0 = p_i, 2t+1 = r1 of slot t, 2t+2 = its r2, 2ns+1 = p_{i+1}; their
           bodies, stale (getLocationInGround) and fresh (getLocation) ground positions */
        int ms = 2*ns + 2, sb[2*MAX_SLOTS + 2], act[2*MAX_SLOTS + 2];
        double sg[2*MAX_SLOTS + 2][3], sf[2*MAX_SLOTS + 2][3], sl[MAX_SLOTS];
        sb[0] = pbody[i]; sb[ms - 1] = pbody[i + 1];
        copy3(pts + 3*i, sg[0]); copy3(pts + 3*i, sf[0]);
        copy3(pts + 3*(i + 1), sg[ms - 1]); copy3(pts + 3*(i + 1), sf[ms - 1]);
        act[0] = act[ms - 1] = 1;
        for (int t = 0; t < ns; t++) {
            sb[2*t + 1] = sb[2*t + 2] = bl[t % nb];
            act[2*t + 1] = act[2*t + 2] = on[t];
            sl[t] = 0.0;
            if (on[t]) {
                wrap_t *wj = &w[who[t]];
                copy3(wj->cg[0], sg[2*t + 1]); copy3(wj->cg[1], sg[2*t + 2]);
                copy3(wj->g1, sf[2*t + 1]); copy3(wj->g2, sf[2*t + 2]);
                sl[t] = wj->s;
            }
        }
        /* the unwrapped slots: their r1, r2 evenly on the chord between their active
           neighbours, s = |r2 - r1| (the chord's length) */
        for (int e = 0; e < ms - 1;) {             /* e: an active exit station */
            int f = e + 1;
            while (!act[f]) f++;                   /* f: the next active entry */
            int gaps = f - e;                      /* 2 (unwrapped slots) + 1 */
            for (int u = 1; u < gaps; u++) {
                double fr = (double)u/gaps;
                for (int q = 0; q < 3; q++) sg[e + u][q] = sg[e][q] + fr*(sg[f][q] - sg[e][q]);
                copy3(sg[e + u], sf[e + u]);
            }
            for (int u = 1; u < gaps; u += 2) sl[(e + u - 1)/2] = gdist(sg[e + u], sg[e + u + 1]);
            /* the sub-segments x -> x+1 of this chord: the points whose velocities count,
               for the forces (OpenSim's produceForces: nothing between two points of one
               body) and for the speed (every segment) */
            int same = sb[e] == sb[f];
            for (int x = e; x < f; x++) {
                double *r = o + 7*ns + 12*x;
                const double *fa = x == e ? sf[e] : sg[x], *fb = x + 1 == f ? sf[f] : sg[x + 1];
                ground_to_body(bodies + BODY_FIELDS*sb[x], same ? sf[e] : fa, r);
                ground_to_body(bodies + BODY_FIELDS*sb[x + 1], same ? sf[e] : fb, r + 3);
                ground_to_body(bodies + BODY_FIELDS*sb[x], fa, r + 6);
                ground_to_body(bodies + BODY_FIELDS*sb[x + 1], fb, r + 9);
            }
            if (f == ms - 1) break;
            /* the wrapped slot f -> f+1 (one body): no force; its speed (OpenSim's
               lengthening speed sums every pair of consecutive points) */
            double *r = o + 7*ns + 12*f;
            const double *pose = bodies + BODY_FIELDS*sb[f];
            ground_to_body(pose, sf[f], r);
            ground_to_body(pose, sf[f], r + 3);
            ground_to_body(pose, sf[f], r + 6);
            ground_to_body(pose, sf[f + 1], r + 9);
            e = f + 1;
        }
        for (int t = 0; t < ns; t++) {
            const double *pose = bodies + BODY_FIELDS*bl[t % nb];
            ground_to_body(pose, sg[2*t + 1], o + 7*t);
            ground_to_body(pose, sg[2*t + 2], o + 7*t + 3);
            o[7*t + 6] = sl[t];
        }
        o += 7*ns + 12*(2*ns + 1);
    }
    return (int)(o - out);
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

static PyObject *py_path(PyObject *self, PyObject *args) {
    PyObject *pts_obj, *pb_obj, *bodies_obj, *wraps_obj;
    double pts[3*MAX_POINTS], pbf[MAX_POINTS], bodies[BODY_FIELDS*MAX_BODIES];
    double spec[WRAP_FIELDS*MAX_WRAPS];
    int pbody[MAX_POINTS];
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
    for (int i = 0; i < n; i++) {
        pbody[i] = (int)pbf[i];
        if (pbody[i] < 0 || pbody[i] >= nb) {
            PyErr_SetString(PyExc_ValueError, "a point's body is out of range");
            return NULL;
        }
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
        if (x->start < 0 || x->end >= n || x->start > x->end || x->axis < 0 || x->axis > 2
            || x->kind < 0 || x->kind > 1 || x->method < 0 || x->method > 2 || x->body < 0
            || x->body >= nb) {
            PyErr_SetString(PyExc_ValueError, "a wrap object's fields are out of range");
            return NULL;
        }
        const double *B = bodies + BODY_FIELDS*x->body;     /* its frame in ground */
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                x->R[3*r + c] = B[3*r]*x->Rb[c] + B[3*r + 1]*x->Rb[3 + c] + B[3*r + 2]*x->Rb[6 + c];
            x->o[r] = B[3*r]*x->ob[0] + B[3*r + 1]*x->ob[1] + B[3*r + 2]*x->ob[2] + B[9 + r];
        }
    }
    int path[MAX_NODES], npath;
    double L = apply_wraps(n, pts, m, w, path, &npath);
    double *out = malloc(sizeof(double)*(size_t)n*(7*MAX_SLOTS + 12*(2*MAX_SLOTS + 1)));
    if (out == NULL) return PyErr_NoMemory();
    int nout = fill_slots(n, pts, pbody, m, w, bodies, path, npath, out);
    PyObject *nodes = PyTuple_New(npath), *vals = PyTuple_New(nout);
    if (nodes == NULL || vals == NULL) {
        Py_XDECREF(nodes); Py_XDECREF(vals); free(out); return NULL;
    }
    for (int k = 0; k < npath; k++) PyTuple_SET_ITEM(nodes, k, PyLong_FromLong(path[k]));
    for (int k = 0; k < nout; k++) PyTuple_SET_ITEM(vals, k, PyFloat_FromDouble(out[k]));
    free(out);
    return Py_BuildValue("(idNN)", 0, L, nodes, vals);
}

static PyMethodDef multi_methods[] = {
    {"path", py_path, METH_VARARGS, "OpenSim's path over several wrap objects on doubles."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef multi_module = {PyModuleDef_HEAD_INIT, "symbody_multi_wrap", NULL, -1,
                                          multi_methods};

PyMODINIT_FUNC PyInit_symbody_multi_wrap(void) { return PyModule_Create(&multi_module); }
