"""The C text of scipy's Radau IIA step (order 5), for :mod:`.native_radau`.

``symbody_radau_step`` is scipy's ``Radau._step_impl`` (Hairer & Wanner, *Solving ODEs II*,
sec. IV.8): the collocation system solved by simplified Newton iterations in the
eigenbasis of the Radau matrix (one real and one complex LU of (μ/h) I - J: hand-written, or
LAPACK's getrf/getrs from ``native_radau.LAPACK_MIN_N`` states), the embedded
third-order error estimate, the predictive (Gustafsson) step control, the Jacobian kept
while Newton converges fast, the LU factors kept while the step does not change.  The
tables come from scipy (``compat.scipy.radau_tables``).  The Jacobian J (n x n, row by row)
is evaluated by a function pointer: ``symbody_fd_jacobian`` (forward differences of the
compiled right-hand side, here) or a compiled exact one.
"""

from __future__ import annotations

__all__ = ["RADAU_SOURCE", "WORK_SIZE"]

#: doubles of scratch per state entry (the ``work`` buffer holds WORK_SIZE * n)
WORK_SIZE = 20

RADAU_SOURCE = r"""
#include <math.h>
#include <string.h>
#include <complex.h>
typedef int (*rhs_fn)(void *, double, const double *, double *);
typedef int (*jac_fn)(void *, double, const double *, const double *, double *);
typedef void (*getrf_fn)(int *, int *, void *, int *, int *, int *);
typedef void (*dgetrs_fn)(char *, int *, int *, double *, int *, int *, double *, int *, int *);
typedef void (*zgetrs_fn)(char *, int *, int *, double complex *, int *, int *, double complex *,
                          int *, int *);
typedef struct {
    rhs_fn rhs; void *plan;
    jac_fn jac; void *jplan;
    long n, newton_maxiter;
    const double *atol;
    double rtol, newton_tol, max_step, t_bound, direction, min_factor, max_factor;
    const double *C, *E, *T, *TI, *P;          /* 3, 3, 3x3, 3x3, 3x3 row by row */
    double mu_real, mu_re, mu_im;
    double *J, *LUr, *LUc;                      /* n*n; LUc: 2*n*n (complex) */
    int *pr, *pc;
    double *Z, *Q, *y_old, *work, *yfail;       /* 3n, 3n (n x 3), n, 20n (WORK_SIZE), n */
    /* state between steps */
    double t, h_abs, h_abs_old, error_norm_old, t_old, h_sol;
    long have_h_old, have_err_old, have_sol, lu_valid, current_jac;
    long nfev, njev, nlu;
    double t_fail;
    long jac_pending;   /* the Jacobian at the state, owed: evaluated when the next step starts */
    /* LAPACK (scipy's; Fortran convention, column-major) for n >= lapack_min_n when all four
       are given: the row-major buffer is the transpose, factored as is and solved with 'T' */
    getrf_fn dgetrf; dgetrs_fn dgetrs; getrf_fn zgetrf; zgetrs_fn zgetrs;
    long lapack_min_n, nlu_lapack;
} radau;

static int use_lapack(const radau *R)
{
    return R->n >= R->lapack_min_n && R->dgetrf && R->dgetrs && R->zgetrf && R->zgetrs;
}

/* LU with partial pivoting in place, row by row (the pivot: the largest |a| of the column). */
static int lu_real(long n, double *A, int *piv)
{
    long i, j, k;
    for (k = 0; k < n; k++) {
        long p = k;
        double mx = fabs(A[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > mx) { mx = fabs(A[i * n + k]); p = i; }
        piv[k] = (int)p;
        if (A[p * n + k] == 0.0) return 1;
        if (p != k)
            for (j = 0; j < n; j++) { double w = A[k * n + j]; A[k * n + j] = A[p * n + j]; A[p * n + j] = w; }
        {
            double d = 1.0 / A[k * n + k];
            for (i = k + 1; i < n; i++) {
                double f = A[i * n + k] * d;
                A[i * n + k] = f;
                if (f != 0.0) {
                    double *ri = A + i * n, *rk = A + k * n;
                    for (j = k + 1; j < n; j++) ri[j] -= f * rk[j];
                }
            }
        }
    }
    return 0;
}

static void solve_real(long n, const double *A, const int *piv, double *b)
{
    long i, j;
    for (i = 0; i < n; i++) {
        long p = piv[i];
        if (p != i) { double w = b[i]; b[i] = b[p]; b[p] = w; }
    }
    for (i = 1; i < n; i++) {
        double s = b[i];
        const double *ri = A + i * n;
        for (j = 0; j < i; j++) s -= ri[j] * b[j];
        b[i] = s;
    }
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        const double *ri = A + i * n;
        for (j = i + 1; j < n; j++) s -= ri[j] * b[j];
        b[i] = s / ri[i];
    }
}

static double cabs1(double complex z) { return fabs(creal(z)) + fabs(cimag(z)); }

/* the same for a complex matrix (pivot: the largest |re| + |im|, as LAPACK's zgetrf) */
static int lu_complex(long n, double complex *A, int *piv)
{
    long i, j, k;
    for (k = 0; k < n; k++) {
        long p = k;
        double mx = cabs1(A[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (cabs1(A[i * n + k]) > mx) { mx = cabs1(A[i * n + k]); p = i; }
        piv[k] = (int)p;
        if (A[p * n + k] == 0.0) return 1;
        if (p != k)
            for (j = 0; j < n; j++) { double complex w = A[k * n + j]; A[k * n + j] = A[p * n + j]; A[p * n + j] = w; }
        {
            double complex d = 1.0 / A[k * n + k];
            for (i = k + 1; i < n; i++) {
                double complex f = A[i * n + k] * d;
                A[i * n + k] = f;
                if (f != 0.0) {
                    double complex *ri = A + i * n, *rk = A + k * n;
                    for (j = k + 1; j < n; j++) ri[j] -= f * rk[j];
                }
            }
        }
    }
    return 0;
}

static void solve_complex(long n, const double complex *A, const int *piv, double complex *b)
{
    long i, j;
    for (i = 0; i < n; i++) {
        long p = piv[i];
        if (p != i) { double complex w = b[i]; b[i] = b[p]; b[p] = w; }
    }
    for (i = 1; i < n; i++) {
        double complex s = b[i];
        const double complex *ri = A + i * n;
        for (j = 0; j < i; j++) s -= ri[j] * b[j];
        b[i] = s;
    }
    for (i = n - 1; i >= 0; i--) {
        double complex s = b[i];
        const double complex *ri = A + i * n;
        for (j = i + 1; j < n; j++) s -= ri[j] * b[j];
        b[i] = s / ri[i];
    }
}

/* A x = b with A's factors (hand-written or LAPACK's of A^T: solved transposed, 'T' the
   plain transpose for the complex one too) */
static void solve_real_lu(radau *R, double *b)
{
    if (use_lapack(R)) {
        int m = (int)R->n, one = 1, info = 0;
        char tr = 'T';
        R->dgetrs(&tr, &m, &one, R->LUr, &m, R->pr, b, &m, &info);
    } else {
        solve_real(R->n, R->LUr, R->pr, b);
    }
}

static void solve_complex_lu(radau *R, double complex *b)
{
    if (use_lapack(R)) {
        int m = (int)R->n, one = 1, info = 0;
        char tr = 'T';
        R->zgetrs(&tr, &m, &one, (double complex *)R->LUc, &m, R->pc, b, &m, &info);
    } else {
        solve_complex(R->n, (const double complex *)R->LUc, R->pc, b);
    }
}

/* (mu_real/h) I - J and (mu_complex/h) I - J factorized; nonzero when singular */
static int factorize(radau *R, double h)
{
    long n = R->n, i, k;
    double complex mc = (R->mu_re + I * R->mu_im) / h, *Ac = (double complex *)R->LUc;
    double mr = R->mu_real / h;
    for (i = 0; i < n * n; i++) { R->LUr[i] = -R->J[i]; Ac[i] = -R->J[i]; }
    for (k = 0; k < n; k++) { R->LUr[k * n + k] += mr; Ac[k * n + k] += mc; }
    R->nlu += 2;
    if (use_lapack(R)) {    /* (A^T) = P L U column by column: info > 0 an exact zero pivot */
        int m = (int)n, info = 0;
        R->dgetrf(&m, &m, R->LUr, &m, R->pr, &info);
        if (info) return 1;
        R->zgetrf(&m, &m, Ac, &m, R->pc, &info);
        if (info) return 1;
        R->nlu_lapack += 2;
        return 0;
    }
    if (lu_real(n, R->LUr, R->pr)) return 1;
    if (lu_complex(n, Ac, R->pc)) return 1;
    return 0;
}

static double rms_scaled(const double *v, const double *scale, long n, long rows)
{
    long i, r;
    double s = 0.0;
    for (r = 0; r < rows; r++)
        for (i = 0; i < n; i++) { double a = v[r * n + i] / scale[i]; s += a * a; }
    return sqrt(s / (double)(n * rows));
}

/* scipy's solve_collocation_system: 1 converged, 0 not, -1 the rhs failed */
static int collocation(radau *R, double t, const double *y, double h, const double *Z0,
                       const double *scale, long *n_iter, double *Z, double *rate, int *rate_valid)
{
    long n = R->n, i, s, k, r;
    double *W = R->work, *F = W + 3 * n, *dW = F + 3 * n, *tmp = dW + 3 * n, *fr = tmp + n;
    double complex *fc = (double complex *)(fr + n);
    double mr = R->mu_real / h;
    double complex mc = (R->mu_re + I * R->mu_im) / h;
    const double *T = R->T, *TI = R->TI;
    double dW_norm, dW_norm_old = 0.0;
    int old_valid = 0, converged = 0;
    for (r = 0; r < 3; r++)
        for (i = 0; i < n; i++)
            W[r * n + i] = TI[r * 3] * Z0[i] + TI[r * 3 + 1] * Z0[n + i] + TI[r * 3 + 2] * Z0[2 * n + i];
    memcpy(Z, Z0, (size_t)(3 * n) * sizeof(double));
    *rate_valid = 0;
    for (k = 0; k < R->newton_maxiter; k++) {
        int finite = 1;
        for (s = 0; s < 3; s++) {
            for (i = 0; i < n; i++) tmp[i] = y[i] + Z[s * n + i];
            R->nfev++;
            if (R->rhs(R->plan, t + h * R->C[s], tmp, F + s * n)) {
                R->t_fail = t + h * R->C[s];
                memcpy(R->yfail, tmp, (size_t)n * sizeof(double));
                return -1;
            }
        }
        for (i = 0; i < 3 * n; i++) if (!isfinite(F[i])) { finite = 0; break; }
        if (!finite) {   /* the first non-finite value at a finite state: (t_fail, yfail) */
            s = i / n;
            for (i = 0; i < n; i++) if (!isfinite(y[i] + Z[s * n + i])) break;
            if (i == n && isnan(R->t_fail)) {
                R->t_fail = t + h * R->C[s];
                for (i = 0; i < n; i++) R->yfail[i] = y[i] + Z[s * n + i];
            }
            break;
        }
        for (i = 0; i < n; i++) {
            fr[i] = F[i] * TI[0] + F[n + i] * TI[1] + F[2 * n + i] * TI[2] - mr * W[i];
            fc[i] = F[i] * (TI[3] + I * TI[6]) + F[n + i] * (TI[4] + I * TI[7])
                    + F[2 * n + i] * (TI[5] + I * TI[8]) - mc * (W[n + i] + I * W[2 * n + i]);
        }
        solve_real_lu(R, fr);
        solve_complex_lu(R, fc);
        for (i = 0; i < n; i++) { dW[i] = fr[i]; dW[n + i] = creal(fc[i]); dW[2 * n + i] = cimag(fc[i]); }
        dW_norm = rms_scaled(dW, scale, n, 3);
        if (old_valid) { *rate = dW_norm / dW_norm_old; *rate_valid = 1; }
        if (*rate_valid && (*rate >= 1.0 ||
                            pow(*rate, (double)(R->newton_maxiter - k)) / (1.0 - *rate) * dW_norm > R->newton_tol))
            break;
        for (i = 0; i < 3 * n; i++) W[i] += dW[i];
        for (r = 0; r < 3; r++)
            for (i = 0; i < n; i++)
                Z[r * n + i] = T[r * 3] * W[i] + T[r * 3 + 1] * W[n + i] + T[r * 3 + 2] * W[2 * n + i];
        if (dW_norm == 0.0 || (*rate_valid && *rate / (1.0 - *rate) * dW_norm < R->newton_tol)) {
            converged = 1;
            break;
        }
        dW_norm_old = dW_norm;
        old_valid = 1;
    }
    *n_iter = (k < R->newton_maxiter ? k : R->newton_maxiter - 1) + 1;
    return converged;
}

static double predict_factor(double h_abs, double h_abs_old, int have_old, double error_norm,
                             double error_norm_old, int have_err_old)
{
    double multiplier;
    if (!have_err_old || !have_old || error_norm == 0.0) multiplier = 1.0;
    else multiplier = h_abs / h_abs_old * pow(error_norm_old / error_norm, 0.25);
    return fmin(1.0, multiplier) * pow(error_norm, -0.25);
}

/* one step of scipy's Radau._step_impl: 0 accepted (y_new, f_new, state updated), 1 step too
   small, 2 the rhs could not evaluate (at t_fail, the state in yfail), 3 the Jacobian
   could not, 4 a singular iteration matrix */
int symbody_radau_step(radau *R, const double *y, const double *f, double *y_new, double *f_new)
{
    long n = R->n, i, s;
    double t = R->t, h_abs, h_abs_old = 0.0, error_norm_old = 0.0, h = 0.0, t_new = t;
    double error_norm = 0.0, safety = 0.0, rate = 0.0, factor;
    double *Z0 = R->work + 13 * n;     /* after collocation's W, F, dW (3n each), tmp, fr, fc (4n) */
    double *scale = Z0 + 3 * n, *err = scale + n, *ZE = err + n, *tmp = ZE + n;   /* 20n */
    int have_old = 0, have_err_old = 0, rejected = 0, accepted = 0, converged = 0, rate_valid = 0;
    long n_iter = 0;
    double min_step = 10.0 * fabs(nextafter(t, R->direction * INFINITY) - t);
    int current_jac = (int)R->current_jac, lu_valid = (int)R->lu_valid;
    if (R->jac_pending) {    /* the last step's recomputed Jacobian, at this step's start */
        R->njev++;
        if (R->jac(R->jplan, t, y, f, R->J)) { R->lu_valid = 0; R->t_fail = t; return 3; }
        R->jac_pending = 0;
        current_jac = 1;
        lu_valid = 0;
    }
    if (R->h_abs > R->max_step) h_abs = R->max_step;
    else if (R->h_abs < min_step) h_abs = min_step;
    else {
        h_abs = R->h_abs;
        h_abs_old = R->h_abs_old; have_old = (int)R->have_h_old;
        error_norm_old = R->error_norm_old; have_err_old = (int)R->have_err_old;
    }
    while (!accepted) {
        if (h_abs < min_step) { R->lu_valid = 0; return 1; }
        h = h_abs * R->direction;
        t_new = t + h;
        if (R->direction * (t_new - R->t_bound) > 0) t_new = R->t_bound;
        h = t_new - t;
        h_abs = fabs(h);
        if (!R->have_sol) memset(Z0, 0, (size_t)(3 * n) * sizeof(double));
        else
            for (s = 0; s < 3; s++) {
                double x = (t + h * R->C[s] - R->t_old) / R->h_sol, x2 = x * x, x3 = x2 * x;
                for (i = 0; i < n; i++)
                    Z0[s * n + i] = R->y_old[i] + R->Q[i * 3] * x + R->Q[i * 3 + 1] * x2
                                    + R->Q[i * 3 + 2] * x3 - y[i];
            }
        for (i = 0; i < n; i++) scale[i] = R->atol[i] + fabs(y[i]) * R->rtol;
        converged = 0;
        while (!converged) {
            int c;
            if (!lu_valid) {
                if (factorize(R, h)) { R->lu_valid = 0; return 4; }
                lu_valid = 1;
            }
            c = collocation(R, t, y, h, Z0, scale, &n_iter, R->Z, &rate, &rate_valid);
            if (c < 0) { R->lu_valid = 0; return 2; }
            converged = c;
            if (!converged) {
                if (current_jac) break;
                R->njev++;
                if (R->jac(R->jplan, t, y, f, R->J)) { R->lu_valid = 0; R->t_fail = t; return 3; }
                current_jac = 1;
                lu_valid = 0;
            }
        }
        if (!converged) { h_abs *= 0.5; lu_valid = 0; continue; }
        for (i = 0; i < n; i++) {
            y_new[i] = y[i] + R->Z[2 * n + i];
            ZE[i] = (R->Z[i] * R->E[0] + R->Z[n + i] * R->E[1] + R->Z[2 * n + i] * R->E[2]) / h;
            err[i] = f[i] + ZE[i];
        }
        solve_real_lu(R, err);
        for (i = 0; i < n; i++) scale[i] = R->atol[i] + fmax(fabs(y[i]), fabs(y_new[i])) * R->rtol;
        error_norm = rms_scaled(err, scale, n, 1);
        safety = 0.9 * (2.0 * R->newton_maxiter + 1.0) / (2.0 * R->newton_maxiter + (double)n_iter);
        if (rejected && error_norm > 1.0) {
            double *F = f_new;   /* f_new as scratch */
            for (i = 0; i < n; i++) tmp[i] = y[i] + err[i];
            R->nfev++;
            if (R->rhs(R->plan, t, tmp, F)) {
                memcpy(R->yfail, tmp, (size_t)n * sizeof(double));
                R->t_fail = t; R->lu_valid = 0;
                return 2;
            }
            for (i = 0; i < n; i++) err[i] = F[i] + ZE[i];
            solve_real_lu(R, err);
            error_norm = rms_scaled(err, scale, n, 1);
        }
        if (error_norm > 1.0) {
            factor = predict_factor(h_abs, h_abs_old, have_old, error_norm, error_norm_old, have_err_old);
            h_abs *= fmax(R->min_factor, safety * factor);
            lu_valid = 0;
            rejected = 1;
        } else {
            accepted = 1;
        }
    }
    {
        int recompute_jac = n_iter > 2 && rate_valid && rate > 1e-3;
        factor = predict_factor(h_abs, h_abs_old, have_old, error_norm, error_norm_old, have_err_old);
        factor = fmin(R->max_factor, safety * factor);
        if (!recompute_jac && factor < 1.2) factor = 1.0;
        else lu_valid = 0;
        R->nfev++;
        if (R->rhs(R->plan, t_new, y_new, f_new)) {
            memcpy(R->yfail, y_new, (size_t)n * sizeof(double));
            R->t_fail = t_new; R->lu_valid = 0;
            return 2;
        }
        if (recompute_jac) {
            /* owed, not evaluated: the next step starts from (t_new, y_new, f_new) and takes
               it there (the same J); a run that leaves Radau here never pays for it */
            R->jac_pending = 1;
            current_jac = 1;
        } else {
            current_jac = 0;
        }
    }
    R->h_abs_old = R->h_abs; R->have_h_old = 1;
    R->error_norm_old = error_norm; R->have_err_old = 1;
    R->h_abs = h_abs * factor;
    memcpy(R->y_old, y, (size_t)n * sizeof(double));
    R->t_old = t;
    R->t = t_new;
    R->h_sol = t_new - t;
    for (i = 0; i < n; i++)
        for (s = 0; s < 3; s++)
            R->Q[i * 3 + s] = R->Z[i] * R->P[s] + R->Z[n + i] * R->P[3 + s] + R->Z[2 * n + i] * R->P[6 + s];
    R->have_sol = 1;
    R->lu_valid = lu_valid;
    R->current_jac = current_jac;
    return 0;
}

/* forward differences of the compiled rhs: J[i][j] = (f_i(y + d_j e_j) - f_i(y)) / d_j with
   d_j = sqrt(eps) max(|y_j|, 1) (the perturbed entry rounded to a representable step) */
typedef struct { rhs_fn rhs; void *plan; long n; double *ytmp, *ftmp; long nfev; } fd_plan;

int symbody_fd_jacobian(fd_plan *D, double t, const double *y, const double *f, double *J)
{
    long n = D->n, i, j;
    double *yt = D->ytmp, *ft = D->ftmp;
    memcpy(yt, y, (size_t)n * sizeof(double));
    for (j = 0; j < n; j++) {
        double d = 1.4901161193847656e-08 * fmax(fabs(y[j]), 1.0);
        yt[j] = y[j] + d;
        d = yt[j] - y[j];
        D->nfev++;
        if (D->rhs(D->plan, t, yt, ft)) return 1;
        for (i = 0; i < n; i++) J[i * n + j] = (ft[i] - f[i]) / d;
        yt[j] = y[j];
    }
    return 0;
}
"""
