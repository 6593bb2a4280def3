"""The FMU instance in C (part of the glue file): its fields, start values, the inputs inside a
communication step, and co-simulation's Dormand-Prince 5(4) integrator with error control
(``rtol``/``atol``) that projects q_dep onto f_h(q, t) = 0 after every accepted step."""

#: The FMU's instance in C: its state, start values, inputs inside a step, and the
#: co-simulation integrator (Dormand-Prince 5(4), projecting onto f_h = 0 after each step).
FMI2_INSTANCE_C = r"""
typedef struct {
    fmi2CallbackFunctions cb;
    char name[256];
    int type, initialized, terminated, dirty, logging;
    double time, h;
    double x[NX1], p[NP1], r[NR1], dr[NR1];
    double u[NU1], y[NY1], fh[NM1], xdot[NX1];
    double yf[NF1];        /* co-simulation of a switchable model: [q, u, x_e] (full state) */
    int status, full;
} Instance;

static const double start_x[NX1] = {@START_X@};
static const double start_p[NP1] = {@START_P@};
static const double start_r[NR1] = {@START_R@};

static void logf_(Instance *c, fmi2Status s, const char *msg)
{
    if (c && c->cb.logger) c->cb.logger(c->cb.componentEnvironment, c->name, s, "symbody", msg);
}

@MESSAGES@

static void set_start(Instance *c)
{
    memcpy(c->x, start_x, sizeof c->x);
    memcpy(c->p, start_p, sizeof c->p);
    memcpy(c->r, start_r, sizeof c->r);
    memset(c->dr, 0, sizeof c->dr);
    c->time = 0.0;
    c->h = 0.0;
    c->dirty = 1;
}

/* the inputs at time t inside a communication step (linear from their derivatives) */
static void inputs_at(const Instance *c, double t, double *r)
{
    int i;
    for (i = 0; i < NR1; i++) r[i] = c->r[i] + c->dr[i] * (t - c->time);
}

static int rhs_at(Instance *c, double t, const double *x, double *f)
{
    double r[NR1];
    inputs_at(c, t, r);
    return c->full ? MODEL_full_rhs(t, x, c->p, r, f) : MODEL_rhs(t, x, c->p, r, f);
}

static int update(Instance *c)
{
    int st = 0, i;
    if (!c->dirty) return 0;
    if (c->full) {               /* x = [q, u_ind, x_e] and all speeds from the full state */
        double yd[NF1];
        for (i = 0; i < NQ; i++) c->x[i] = c->yf[i];
        for (i = 0; i < NU; i++) c->u[i] = c->yf[NQ + i];
        for (i = 0; i < NU_IND; i++) c->x[NQ + i] = c->yf[NQ + i];
        for (i = 0; i < NE; i++) c->x[NQ + NU_IND + i] = c->yf[NQ + NU + i];
        if (NY) st = MODEL_full_outputs(c->time, c->yf, c->p, c->r, c->y);
        if (!st) st = MODEL_full_rhs(c->time, c->yf, c->p, c->r, yd);
        if (!st) {
            for (i = 0; i < NQ; i++) c->xdot[i] = yd[i];
            for (i = 0; i < NU_IND; i++) c->xdot[NQ + i] = yd[NQ + i];
            for (i = 0; i < NE; i++) c->xdot[NQ + NU_IND + i] = yd[NQ + NU + i];
        }
    } else {
        st = MODEL_speeds(c->time, c->x, c->p, c->r, c->u);
        if (!st && NY) st = MODEL_outputs(c->time, c->x, c->p, c->r, c->y);
        if (!st) st = MODEL_rhs(c->time, c->x, c->p, c->r, c->xdot);
    }
    if (NM) MODEL_holonomic(c->time, c->x, c->p, c->fh, 0);
    if (st) { logf_(c, fmi2Error, why(st)); return 1; }
    c->dirty = 0;
    return 0;
}

/* Dormand-Prince 5(4): from c->time over h with error control, projecting after each step */
static int integrate(Instance *c, double h_total)
{
    static const double a21 = 1.0 / 5, a31 = 3.0 / 40, a32 = 9.0 / 40, a41 = 44.0 / 45,
        a42 = -56.0 / 15, a43 = 32.0 / 9, a51 = 19372.0 / 6561, a52 = -25360.0 / 2187,
        a53 = 64448.0 / 6561, a54 = -212.0 / 729, a61 = 9017.0 / 3168, a62 = -355.0 / 33,
        a63 = 46732.0 / 5247, a64 = 49.0 / 176, a65 = -5103.0 / 18656, a71 = 35.0 / 384,
        a73 = 500.0 / 1113, a74 = 125.0 / 192, a75 = -2187.0 / 6784, a76 = 11.0 / 84,
        e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
        e6 = 22.0 / 525, e7 = -1.0 / 40;
    double k1[NS1], k2[NS1], k3[NS1], k4[NS1], k5[NS1], k6[NS1], k7[NS1], xs[NS1], xn[NS1];
    double t = c->time, t_end = c->time + h_total, h = c->h;
    double *x = c->full ? c->yf : c->x;          /* the integrated state, NS values */
    const int NS = c->full ? NF : NX;
    long steps = 0;
    int i, st;
    if (!(h > 0.0)) {                                /* first step: a small fraction */
        h = fabs(h_total) * 1e-3;
        if (h > 1e-3) h = 1e-3;
    }
    while (t < t_end) {
        double err = 0.0, fac;
        int last = 0;
        if (t + h >= t_end || t + 1.01 * h >= t_end) { h = t_end - t; last = 1; }
        if (++steps > MAX_STEPS) { logf_(c, fmi2Error, "too many steps"); return 1; }
        st = rhs_at(c, t, x, k1);
        for (i = 0; i < NS; i++) xs[i] = x[i] + h * a21 * k1[i];
        st |= rhs_at(c, t + h / 5, xs, k2);
        for (i = 0; i < NS; i++) xs[i] = x[i] + h * (a31 * k1[i] + a32 * k2[i]);
        st |= rhs_at(c, t + 3 * h / 10, xs, k3);
        for (i = 0; i < NS; i++) xs[i] = x[i] + h * (a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
        st |= rhs_at(c, t + 4 * h / 5, xs, k4);
        for (i = 0; i < NS; i++)
            xs[i] = x[i] + h * (a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
        st |= rhs_at(c, t + 8 * h / 9, xs, k5);
        for (i = 0; i < NS; i++)
            xs[i] = x[i] + h * (a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i]
                                   + a65 * k5[i]);
        st |= rhs_at(c, t + h, xs, k6);
        for (i = 0; i < NS; i++)
            xn[i] = x[i] + h * (a71 * k1[i] + a73 * k3[i] + a74 * k4[i] + a75 * k5[i]
                                   + a76 * k6[i]);
        st |= rhs_at(c, t + h, xn, k7);
        if (st) { logf_(c, fmi2Error, why(st)); return 1; }
        for (i = 0; i < NS; i++) {
            double sc = ATOL + RTOL * (fabs(x[i]) > fabs(xn[i]) ? fabs(x[i]) : fabs(xn[i]));
            double e = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i]
                            + e7 * k7[i]) / sc;
            err += e * e;
        }
        err = NS ? sqrt(err / NS) : 0.0;
        if (err != err) { logf_(c, fmi2Error, "the state is not finite"); return 1; }
        if (err <= 1.0) {
            t = last ? t_end : t + h;
            memcpy(x, xn, NS * sizeof(double));
            if (c->full) {              /* q and u back on the constraints, best-conditioned set */
                double r[NR1];
                inputs_at(c, t, r);
                st = MODEL_full_project(t, x, c->p, r, 1e-12, 50);
            } else {
                st = NM ? MODEL_project(t, x, c->p, 1e-12, 50) : 0;
            }
            if (st >= 2) { logf_(c, fmi2Error, why(st)); return 1; }
            fac = err > 0.0 ? 0.9 * pow(err, -0.2) : 5.0;
            if (fac > 5.0) fac = 5.0;
            if (!last) h *= fac;                        /* keep the step of the last full step */
        } else {
            fac = 0.9 * pow(err, -0.2);
            if (fac < 0.2) fac = 0.2;
            h *= fac;
            if (h < 1e-14 * (1.0 + fabs(t))) { logf_(c, fmi2Error, "step size too small"); return 1; }
        }
    }
    c->h = h;
    return 0;
}

"""
