/* A model's path parameters (ellipsoid_path.EllipsoidParameters) from the state x in one C
   call, for integrators whose steps run in compiled code (no Python between evaluations):

       int symbody_path_parameters(plan, t, x, out)     (0 done, 1 a path's fields are bad)

   The plan (path_parameters.py lays it out): `stage`, a generated kernel that writes the
   wraps' inputs from q (x's first entries) into `stage_out` -- first the end points of each
   single-ellipsoid candidate segment in its wrap frame (6 per slot), then each path over
   several wrap objects' points in ground and its bodies' poses; `calls`, per path over one
   ellipsoid: its radii (3), axis, sign, method, the number of its candidate slots and their
   indices (OpenSim's first mandatory wrap wins); `multi`, per path over several wrap
   objects: n, nb, m, the offset of its inputs in stage_out, its points' bodies (n) and its
   wrap objects (24 m, multi_wrap.c).  out: 7 per slot (r1, r2, s; the chord's midpoint and 0
   where the segment does not wrap), then per path over several objects L and 12 nb
   wrenches: the values, bit for bit, that EllipsoidParameters.values computes through the
   Python wrappers of the same routines. */

typedef void (*stage_fn)(const double *, double *);

typedef struct {
    stage_fn stage;
    double *stage_out;
    long nslots, ncalls, nmulti;
    const double *calls, *multi;
} path_plan;

int symbody_path_parameters(void *plan, double t, const double *x, double *out)
{
    path_plan *D = (path_plan *)plan;
    const double *E = D->stage_out, *c = D->calls, *mp = D->multi;
    long k, j, o;
    (void)t;
    D->stage(x, D->stage_out);
    for (k = 0; k < D->nslots; k++) {       /* (numpy's 0.5 * (a + b), as values() has it) */
        const double *e = E + 6*k;
        double *v = out + 7*k;
        for (j = 0; j < 3; j++) { v[j] = 0.5*(e[j] + e[3 + j]); v[3 + j] = v[j]; }
        v[6] = 0.0;
    }
    for (k = 0; k < D->ncalls; k++) {
        int axis = (int)c[3], sign = (int)c[4], method = (int)c[5];
        long count = (long)c[6];
        for (j = 0; j < count; j++) {
            long slot = (long)c[7 + j];
            const double *e = E + 6*slot;
            double r1[3], r2[3], s, *v = out + 7*slot;
            if (ellipsoid_wrap(c, axis, sign, method, e, e + 3, r1, r2, &s)) {
                copy3(r1, v); copy3(r2, v + 3); v[6] = s;
                break;
            }
        }
        c += 7 + count;
    }
    o = 7*D->nslots;
    for (k = 0; k < D->nmulti; k++) {
        int n = (int)mp[0], nb = (int)mp[1], m = (int)mp[2], path[MAX_NODES], npath;
        const double *pts = E + (long)mp[3];
        const char *error = NULL;
        if (multi_path(pts, n, mp + 4, pts + 3*n, nb, mp + 4 + n, m, out + o, path, &npath,
                       out + o + 1, &error))
            return 1;
        o += 1 + 12*nb;
        mp += 4 + n + WRAP_FIELDS*m;
    }
    return 0;
}
