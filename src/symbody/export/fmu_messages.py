"""What the FMU says: refused calls and failed evaluations, through the importer's logger.

Every FMI function that returns ``fmi2Error`` says why first (``refuse``: a printf-style
message naming the call, the variable by name and value reference, and the rule it breaks;
``why``: what a nonzero status of the model's C functions means), so a master that sees an
error can tell a step size that is not positive from a parameter set after initialization
or a singular position of the model's dependent set.  The stand-ins for the model's
functions that an FMU does not have (no full state, no directional derivatives) are here
too: they are never called (the flags keep the glue from it) but keep the glue one text.
"""

from __future__ import annotations

__all__ = ["MESSAGES_C"]

#: C after the Instance struct and ``logf_``: ``refuse``, ``vr_name``, ``why`` and the stubs
MESSAGES_C = r"""
/* a refused call: fmi2Error, and why through the logger (printf-style message) */
static fmi2Status refuse(Instance *c, const char *fmt, ...)
{
    char msg[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    logf_(c, fmi2Error, msg);
    return fmi2Error;
}

/* the variable of a value reference, for the messages */
static const char *const vr_names[VR_END1] = {@VR_NAMES@};
static const char *vr_name(unsigned v) { return v < VR_END ? vr_names[v] : "(none)"; }

/* what a nonzero status of the model's C functions means */
static const char *why(int st)
{
    switch (st) {
    case 1: return "the velocity constraints are singular in the dependent speeds";
    case 2: return "the system solved for the accelerations is singular (mass matrix or constraints)";
    case 4: return "no memory for the work space";
    case ERR_DEPENDENT_SET: return "the model's dependent coordinates or speeds are near singular "
        "here (|det| below DEPENDENT_SET_RATIO of the best-conditioned choice): this interface "
        "keeps one dependent set and cannot pass this position on the right branch";
    case ERR_RANK: return "the constraint Jacobian loses rank: no choice of dependent coordinates "
        "and speeds is regular here (a change point of the mechanism)";
    default: return "the model's equations failed";
    }
}

#if !HAS_DERIVATIVE
static int MODEL_rhs_derivative(double t, const double *x, const double *p, const double *r,
                                const double *dx, const double *dr, double *dxdot, double *du,
                                double *dy, double *dfh)
{
    (void)t; (void)x; (void)p; (void)r; (void)dx; (void)dr; (void)dxdot; (void)du; (void)dy;
    (void)dfh;
    return 2;
}
#endif

#if !FULL
/* (no full state: the model's dependent set cannot change) */
static int MODEL_full_rhs(double t, const double *y, const double *p, const double *r, double *d)
{ (void)t; (void)y; (void)p; (void)r; (void)d; return 2; }
static int MODEL_full_project(double t, double *y, const double *p, const double *r, double tol,
                              int max_iter)
{ (void)t; (void)y; (void)p; (void)r; (void)tol; (void)max_iter; return 2; }
static int MODEL_full_state(double t, const double *x, const double *p, const double *r,
                            double *y)
{ (void)t; (void)x; (void)p; (void)r; (void)y; return 2; }
static int MODEL_full_outputs(double t, const double *y, const double *p, const double *r,
                              double *out)
{ (void)t; (void)y; (void)p; (void)r; (void)out; return 2; }
#endif
"""
