"""A compiled model as an FMI 2.0 FMU: co-simulation always, model exchange where it fits.

The FMU holds the model's generated C (:mod:`.c_code`), a glue file implementing the FMI 2.0
C API (the declarations written here from the standard's interface; no third-party code),
``modelDescription.xml`` and the shared library built by the system's C compiler::

    modelDescription.xml
    binaries/<platform>/<id>.so        (linux64, darwin64 -> .dylib)
    sources/<id>.h, <id>.c, <id>_fmi2.c

Co-simulation integrates x = [q, u_ind, x_e] with an embedded Dormand-Prince 5(4) pair
(error control with the export's ``rtol``/``atol``) and, for closed loops, projects q_dep back
onto f_h(q, t) = 0 by Newton's method after every accepted step, so the loop never opens;
the residuals f_h are outputs (``loop_residual_<i>``).  Inputs may be interpolated linearly
inside a step (``canInterpolateInputs``: fmi2SetRealInputDerivatives of order 1).  Model
exchange is offered for models without holonomic constraints only: an importer's
integrator cannot be made to project, so a closed loop would drift open.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import uuid
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from ..compilation import c_kernels
from ..errors import CompilationError, InputError
from ..version import __version__
from . import c_switching
from .c_code import (
    GeneratedC,
    _c_string,
    check_exportable,
    check_not_callable,
    generate_c,
    switchable,
)
from .directional import DIRECTIONAL_C
from .fmu_messages import MESSAGES_C
from .fmu_state import CAPABILITIES, FMU_STATE_C
from .validation import (
    OutputLocation,
    check_distinct_names,
    check_events,
    check_identifier,
    check_stop_time,
    check_tolerances,
    identifier_from_path,
)

__all__ = ["export_fmu", "find_compiler"]


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` when set (it must exist), else cc, gcc or clang;
    CompilationError saying how to get one otherwise."""
    env = os.environ.get("CC", "").strip()
    if env:
        if shutil.which(env.split()[0]) is None:
            raise CompilationError(
                f"the C compiler CC={env!r} was not found: set CC to a working C compiler "
                "(e.g. gcc or clang) or unset it to use cc from the PATH")
        return env.split()
    for cc in ("cc", "gcc", "clang"):
        if shutil.which(cc):
            return [cc]
    raise CompilationError(
        "export_fmu needs a C compiler and none was found (cc, gcc, clang or $CC): install one, "
        "e.g. `apt-get install gcc` (Debian/Ubuntu), `dnf install gcc` (Fedora), "
        "`xcode-select --install` (macOS), or `conda install -c conda-forge c-compiler`")


def _platform() -> tuple[str, str]:
    system, machine = platform.system(), platform.machine().lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        return "linux64", ".so"
    if system == "Linux" and machine in ("aarch64", "arm64"):
        return "aarch64-linux", ".so"
    if system == "Darwin":
        return "darwin64", ".dylib"
    raise CompilationError(f"export_fmu builds binaries for Linux and macOS; this platform is "
                           f"{system} {machine}")


@dataclass(frozen=True)
class _Plan:
    """What the FMU's files are written from: the generated C, the model identifier and
    GUID, the start values (x (nx), constants (c), inputs (s)), the value-reference offsets
    ``vr`` (X, UDEP, P, R, Y, RES, DER, END), whether model exchange is offered, the
    integrator's tolerances and the DefaultExperiment's stop time."""

    gen: GeneratedC
    ident: str
    guid: str
    start_x: np.ndarray
    start_p: np.ndarray
    start_r: np.ndarray
    vr: dict
    has_me: bool
    rtol: float
    atol: float
    stop_time: float
    description: str

    @property
    def residual_names(self) -> list[str]:
        return [f"loop_residual_{i}" for i in range(self.gen.layout.M)]


# --------------------------------------------------------------------------- glue C
_FMI2_DECLARATIONS = r"""
/* The FMI 2.0 types and the functions exported (FMI 2.0 standard, section 2.1; written out
   here, no header of another package is copied). */
typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;
#define fmi2True 1
#define fmi2False 0
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime,
               fmi2Terminated } fmi2StatusKind;
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status,
                                   fmi2String, fmi2String, ...);
typedef void *(*fmi2CallbackAllocateMemory)(size_t, size_t);
typedef void (*fmi2CallbackFreeMemory)(void *);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment, fmi2Status);
typedef struct {
    fmi2CallbackLogger logger;
    fmi2CallbackAllocateMemory allocateMemory;
    fmi2CallbackFreeMemory freeMemory;
    fmi2StepFinished stepFinished;
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;
typedef struct {
    fmi2Boolean newDiscreteStatesNeeded;
    fmi2Boolean terminateSimulation;
    fmi2Boolean nominalsOfContinuousStatesChanged;
    fmi2Boolean valuesOfContinuousStatesChanged;
    fmi2Boolean nextEventTimeDefined;
    fmi2Real nextEventTime;
} fmi2EventInfo;
#if defined(_WIN32)
#define FMI2_EXPORT __declspec(dllexport)
#else
#define FMI2_EXPORT __attribute__((visibility("default")))
#endif
"""

_GLUE = r"""
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

/* ---------------------------------------------------------------- FMI 2.0 API */
FMI2_EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
FMI2_EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

FMI2_EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n,
                                           const fmi2String cats[])
{
    (void)n; (void)cats;
    if (!c) return fmi2Error;
    ((Instance *)c)->logging = on;
    return fmi2OK;
}

FMI2_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                                          fmi2String resources,
                                          const fmi2CallbackFunctions *functions,
                                          fmi2Boolean visible, fmi2Boolean logging)
{
    Instance *c;
    (void)resources; (void)visible;
    if (!guid || strcmp(guid, GUID) != 0) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, name, fmi2Error, "symbody",
                              "wrong GUID: this binary belongs to another modelDescription.xml");
        return 0;
    }
    if (type == fmi2ModelExchange && !HAS_ME) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, name, fmi2Error, "symbody",
                              "this FMU offers co-simulation only: its model has holonomic "
                              "constraints, which an importer's integrator would let drift open "
                              "(model exchange cannot project); instantiate it as fmi2CoSimulation");
        return 0;
    }
    c = (Instance *)calloc(1, sizeof(Instance));
    if (!c) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, name, fmi2Error, "symbody",
                              "no memory for the instance");
        return 0;
    }
    if (functions) c->cb = *functions;
    if (name) { strncpy(c->name, name, sizeof c->name - 1); }
    c->type = type;
    c->full = FULL && type == fmi2CoSimulation;
    c->logging = logging;
    set_start(c);
    return c;
}

FMI2_EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }

FMI2_EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined,
                                           fmi2Real tol, fmi2Real start, fmi2Boolean stop_defined,
                                           fmi2Real stop)
{
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    if (!c) return fmi2Error;
    ((Instance *)c)->time = start;
    ((Instance *)c)->dirty = 1;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    return c ? fmi2OK : fmi2Error;
}

FMI2_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c_)
{
    Instance *c = (Instance *)c_;
    if (!c) return fmi2Error;
    if (NM) {                      /* the start values assembled: q_dep solved, q_ind held */
        int st = MODEL_project(c->time, c->x, c->p, 1e-12, 100);
        if (st == ERR_DEPENDENT_SET && c->full) st = 0;    /* converged; the run may switch */
        if (st) {
            logf_(c, fmi2Error, st == 2 ? "cannot assemble: singular loop constraints"
                                : st == 1 ? "cannot assemble the loop from the start values"
                                : why(st));
            return fmi2Error;
        }
    }
    if (c->full && MODEL_full_state(c->time, c->x, c->p, c->r, c->yf)) {
        logf_(c, fmi2Error, "the start values' dependent speeds are singular in the model's "
              "dependent set");
        return fmi2Error;
    }
    c->initialized = 1;
    c->dirty = 1;
    return update(c) ? fmi2Error : fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Terminate(fmi2Component c)
{
    if (!c) return fmi2Error;
    ((Instance *)c)->terminated = 1;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Reset(fmi2Component c)
{
    if (!c) return fmi2Error;
    set_start((Instance *)c);
    ((Instance *)c)->initialized = 0;
    ((Instance *)c)->terminated = 0;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetReal(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                                   fmi2Real value[])
{
    Instance *c = (Instance *)c_;
    size_t k;
    if (!c) return fmi2Error;
    if (n && update(c)) return fmi2Error;
    for (k = 0; k < n; k++) {
        unsigned v = vr[k];
        if (v < VR_UDEP) value[k] = c->x[v - VR_X];
        else if (v < VR_P) value[k] = c->u[NU_IND + v - VR_UDEP];
        else if (v < VR_R) value[k] = c->p[v - VR_P];
        else if (v < VR_Y) value[k] = c->r[v - VR_R];
        else if (v < VR_RES) value[k] = c->y[v - VR_Y];
        else if (v < VR_DER) value[k] = c->fh[v - VR_RES];
        else if (v < VR_END) value[k] = c->xdot[v - VR_DER];
        else return refuse(c, "fmi2GetReal: no Real variable has the value reference %u", v);
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetReal(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                                   const fmi2Real value[])
{
    Instance *c = (Instance *)c_;
    size_t k;
    if (!c) return fmi2Error;
    for (k = 0; k < n; k++) {
        unsigned v = vr[k];
        if (v < VR_UDEP) {
            if (c->initialized && c->type == fmi2CoSimulation)
                return refuse(c, "fmi2SetReal: %s (value reference %u) is a state of the "
                              "co-simulation, set only before fmi2ExitInitializationMode",
                              vr_name(v), v);
            c->x[v - VR_X] = value[k];
        } else if (v >= VR_P && v < VR_R) {
            if (c->initialized)                      /* constants are fixed */
                return refuse(c, "fmi2SetReal: %s (value reference %u) is a fixed parameter, "
                              "set only before fmi2ExitInitializationMode", vr_name(v), v);
            c->p[v - VR_P] = value[k];
        } else if (v >= VR_R && v < VR_Y) {
            c->r[v - VR_R] = value[k];
        } else {
            return refuse(c, "fmi2SetReal: %s (value reference %u) is %s; it cannot be set",
                          vr_name(v), v, v < VR_END ? "calculated by the FMU" : "no variable");
        }
    }
    c->dirty = 1;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      fmi2Integer value[])
{
    (void)value;
    if (!c) return fmi2Error;
    return n ? refuse((Instance *)c, "fmi2GetInteger: the FMU has no Integer variables "
                      "(value reference %u)", vr[0]) : fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      fmi2Boolean value[])
{
    (void)value;
    if (!c) return fmi2Error;
    return n ? refuse((Instance *)c, "fmi2GetBoolean: the FMU has no Boolean variables "
                      "(value reference %u)", vr[0]) : fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     fmi2String value[])
{
    (void)value;
    if (!c) return fmi2Error;
    return n ? refuse((Instance *)c, "fmi2GetString: the FMU has no String variables "
                      "(value reference %u)", vr[0]) : fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      const fmi2Integer value[])
{
    (void)value;
    if (!c) return fmi2Error;
    return n ? refuse((Instance *)c, "fmi2SetInteger: the FMU has no Integer variables "
                      "(value reference %u)", vr[0]) : fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      const fmi2Boolean value[])
{
    (void)value;
    if (!c) return fmi2Error;
    return n ? refuse((Instance *)c, "fmi2SetBoolean: the FMU has no Boolean variables "
                      "(value reference %u)", vr[0]) : fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     const fmi2String value[])
{
    (void)value;
    if (!c) return fmi2Error;
    return n ? refuse((Instance *)c, "fmi2SetString: the FMU has no String variables "
                      "(value reference %u)", vr[0]) : fmi2OK;
}

@FMU_STATE@
@DIRECTIONAL@

/* ------------------------------------------------------------ co-simulation */
FMI2_EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c_,
        const fmi2ValueReference vr[], size_t n, const fmi2Integer order[], const fmi2Real value[])
{
    Instance *c = (Instance *)c_;
    size_t k;
    if (!c) return fmi2Error;
    for (k = 0; k < n; k++) {
        if (vr[k] < VR_R || vr[k] >= VR_Y)
            return refuse(c, "fmi2SetRealInputDerivatives: %s (value reference %u) is not an "
                          "input", vr_name(vr[k]), vr[k]);
        if (order[k] < 1)
            return refuse(c, "fmi2SetRealInputDerivatives: order %d of %s; the order is 1 or more",
                          (int)order[k], vr_name(vr[k]));
        if (order[k] == 1) c->dr[vr[k] - VR_R] = value[k];
        else if (value[k] != 0.0)                /* only linear interpolation */
            return refuse(c, "fmi2SetRealInputDerivatives: a derivative of order %d of %s; the "
                          "FMU interpolates its inputs linearly (maxInputDerivativeOrder 1)",
                          (int)order[k], vr_name(vr[k]));
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c,
        const fmi2ValueReference vr[], size_t n, const fmi2Integer order[], fmi2Real value[])
{
    (void)order; (void)value;
    if (!c) return fmi2Error;
    return n ? refuse((Instance *)c, "fmi2GetRealOutputDerivatives: the FMU gives no output "
                      "derivatives (maxOutputDerivativeOrder 0; %s asked)", vr_name(vr[0])) : fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2DoStep(fmi2Component c_, fmi2Real t, fmi2Real h,
                                  fmi2Boolean no_prior)
{
    Instance *c = (Instance *)c_;
    int i;
    (void)no_prior;
    if (!c) return fmi2Error;
    if (!c->initialized)
        return refuse(c, "fmi2DoStep before fmi2ExitInitializationMode");
    if (!(h > 0.0))
        return refuse(c, "fmi2DoStep: the communication step size is %g; it must be positive "
                      "(the FMU's time stays at %.17g)", h, c->time);
    if (fabs(t - c->time) > 1e-9 * (1.0 + fabs(t)))
        return refuse(c, "fmi2DoStep: the communication point %.17g is not the FMU's time %.17g",
                      t, c->time);
    c->time = t;
    if (integrate(c, h)) { c->status = fmi2Error; return fmi2Error; }
    for (i = 0; i < NR1; i++) c->r[i] += c->dr[i] * h;
    c->time = t + h;
    c->dirty = 1;
    c->status = update(c) ? fmi2Error : fmi2OK;
    return (fmi2Status)c->status;
}

FMI2_EXPORT fmi2Status fmi2CancelStep(fmi2Component c)
{
    if (!c) return fmi2Error;
    return refuse((Instance *)c, "fmi2CancelStep: the FMU steps synchronously (fmi2DoStep never "
                  "returns fmi2Pending), there is no step to cancel");
}
FMI2_EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v)
{ (void)s; if (!c) return fmi2Error; *v = (fmi2Status)((Instance *)c)->status; return fmi2OK; }
FMI2_EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v)
{
    if (!c || s != fmi2LastSuccessfulTime) return fmi2Discard;
    *v = ((Instance *)c)->time;
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s,
                                            fmi2Integer *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
FMI2_EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s,
                                            fmi2Boolean *v)
{
    if (!c || s != fmi2Terminated) return fmi2Discard;
    *v = fmi2False;
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s,
                                           fmi2String *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }

/* ------------------------------------------------------------ model exchange */
FMI2_EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { return c ? fmi2OK : fmi2Error; }
FMI2_EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *e)
{
    if (!c) return fmi2Error;
    e->newDiscreteStatesNeeded = fmi2False;
    e->terminateSimulation = fmi2False;
    e->nominalsOfContinuousStatesChanged = fmi2False;
    e->valuesOfContinuousStatesChanged = fmi2False;
    e->nextEventTimeDefined = fmi2False;
    e->nextEventTime = 0.0;
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{ return c ? fmi2OK : fmi2Error; }
FMI2_EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_prior,
                                                   fmi2Boolean *enter_event, fmi2Boolean *terminate)
{
    (void)no_prior;
    if (!c) return fmi2Error;
    *enter_event = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t)
{
    if (!c) return fmi2Error;
    ((Instance *)c)->time = t;
    ((Instance *)c)->dirty = 1;
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n)
{
    if (!c || n != NX) return fmi2Error;
    if (NX) memcpy(((Instance *)c)->x, x, NX * sizeof(double));
    ((Instance *)c)->dirty = 1;
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real d[], size_t n)
{
    if (!c || n != NX || update((Instance *)c)) return fmi2Error;
    if (NX) memcpy(d, ((Instance *)c)->xdot, NX * sizeof(double));
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real e[], size_t n)
{ (void)e; return (c && n == 0) ? fmi2OK : fmi2Error; }
FMI2_EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n)
{
    if (!c || n != NX) return fmi2Error;
    if (NX) memcpy(x, ((Instance *)c)->x, NX * sizeof(double));
    return fmi2OK;
}
FMI2_EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n)
{
    size_t i;
    if (!c || n != NX) return fmi2Error;
    for (i = 0; i < n; i++) x[i] = 1.0;
    return fmi2OK;
}
"""


def _glue(plan: _Plan) -> str:
    gen, ident, guid, vr = plan.gen, plan.ident, plan.guid, plan.vr
    L, ny = gen.layout, len(plan.gen.outputs)

    def arr(v):
        return ", ".join(repr(float(a)) for a in v) if len(v) else "0.0"

    defs = {"NX": L.nx, "NX1": max(L.nx, 1), "NP1": max(L.c, 1), "NR1": max(L.s, 1),
            "NU1": max(L.o, 1), "NY": ny, "NY1": max(ny, 1), "NM": L.M, "NM1": max(L.M, 1),
            "NU_IND": L.p, "HAS_ME": int(plan.has_me), "MAX_STEPS": 10_000_000,
            "RTOL": repr(float(plan.rtol)), "ATOL": repr(float(plan.atol)),
            "FULL": int(switchable(L)), "NF": L.N + L.o + L.e, "NF1": max(L.N + L.o + L.e, 1),
            "NS1": max(L.nx, L.N + L.o + L.e, 1), "NQ": L.N, "NU": L.o, "NE": L.e,
            "ERR_DEPENDENT_SET": c_switching.ERR_DEPENDENT_SET, "ERR_RANK": c_switching.ERR_RANK,
            "HAS_DERIVATIVE": int(gen.derivatives)}
    defs.update({f"VR_{k}": v for k, v in vr.items()})
    lines = [f"/* {ident}_fmi2.c: the FMI 2.0 interface of {ident}.c, generated by symbody. */",
             "#include <stdarg.h>", "#include <stddef.h>", "#include <stdio.h>",
             "#include <stdlib.h>", "#include <string.h>",
             "#include <math.h>", f'#include "{ident}.h"', _FMI2_DECLARATIONS]
    lines += [f"#define {k} {v}" for k, v in defs.items()]
    lines.append(f'#define GUID "{guid}"')
    for fn in ("rhs", "speeds", "outputs", "holonomic", "project", "full_rhs", "full_project",
               "full_state", "full_outputs", "rhs_derivative"):
        lines.append(f"#define MODEL_{fn} {ident}_{fn}")
    defs["VR_END1"] = max(vr["END"], 1)
    lines += [f"#define {k} {v}" for k, v in {"VR_END1": defs["VR_END1"]}.items()]
    names = [*gen.states, *gen.speeds[L.p:], *gen.constants, *gen.inputs, *gen.outputs,
             *plan.residual_names, *(f"der({n})" for n in gen.states)]
    vr_names = ", ".join(_c_string(n) for n in names) or "0"
    glue = _GLUE.replace("@START_X@", arr(plan.start_x)) \
        .replace("@START_P@", arr(plan.start_p)).replace("@START_R@", arr(plan.start_r)) \
        .replace("@FMU_STATE@", FMU_STATE_C).replace("@DIRECTIONAL@", DIRECTIONAL_C) \
        .replace("@MESSAGES@", MESSAGES_C.replace("@VR_NAMES@", vr_names))
    lines.append(glue)
    return "\n".join(lines)


# ------------------------------------------------------------------ modelDescription
def _variable(name: str, vr: int, causality: str, variability: str, initial: str | None,
              start: float | None = None, description: str = "", derivative: int | None = None) -> str:
    attrs = f"name={quoteattr(name)} valueReference=\"{vr}\""
    if description:
        attrs += f" description={quoteattr(description)}"
    attrs += f" causality=\"{causality}\" variability=\"{variability}\""
    if initial:
        attrs += f" initial=\"{initial}\""
    real = ""
    if start is not None:
        real += f" start=\"{float(start)!r}\""
    if derivative is not None:
        real += f" derivative=\"{derivative}\""
    return f"    <ScalarVariable {attrs}>\n      <Real{real}/>\n    </ScalarVariable>"


def _model_description(plan: _Plan) -> tuple[str, list[str]]:
    gen, ident, guid, vr, has_me = plan.gen, plan.ident, plan.guid, plan.vr, plan.has_me
    start_x, start_p, start_r = plan.start_x, plan.start_p, plan.start_r
    residual_names = plan.residual_names
    L = gen.layout
    variables: list[str] = []
    index: dict[str, int] = {}
    names_used: list[str] = []

    def add(text: str, key: str, name: str) -> None:
        variables.append(text)
        index[key] = len(variables)
        names_used.append(name)

    for i, name in enumerate(gen.states):
        kind = ("coordinate" if i < L.N else "independent speed" if i < L.nxm else "extra state")
        # q_dep: a start guess, solved from f_h = 0 at initialization
        initial = "approx" if L.n <= i < L.N else "exact"
        add(_variable(name, vr["X"] + i, "output", "continuous", initial, start_x[i], kind),
            f"x{i}", name)
    for j in range(L.m):
        name = gen.speeds[L.p + j]
        add(_variable(name, vr["UDEP"] + j, "output", "continuous", "calculated",
                      description="dependent speed (from the velocity constraints)"), f"ud{j}", name)
    for i, name in enumerate(gen.constants):
        add(_variable(name, vr["P"] + i, "parameter", "fixed", "exact", start_p[i], "constant"),
            f"p{i}", name)
    for i, name in enumerate(gen.inputs):
        add(_variable(name, vr["R"] + i, "input", "continuous", None, start_r[i],
                      "specified input"), f"r{i}", name)
    for i, name in enumerate(gen.outputs):
        add(_variable(name, vr["Y"] + i, "output", "continuous", "calculated",
                      description="output expression"), f"y{i}", name)
    for i, name in enumerate(residual_names):
        add(_variable(name, vr["RES"] + i, "output", "continuous", "calculated",
                      description="holonomic constraint residual f_h (closed loop)"),
            f"res{i}", name)
    if has_me:
        for i, name in enumerate(gen.states):
            add(_variable(f"der({name})", vr["DER"] + i, "local", "continuous", "calculated",
                          derivative=index[f"x{i}"]), f"der{i}", f"der({name})")
    outputs = [index[k] for k in index if k.startswith(("x", "ud", "y", "res"))]
    derivatives = [index[f"der{i}"] for i in range(L.nx)] if has_me else []
    initial_unknowns = sorted([index[k] for k in index if k.startswith(("ud", "y", "res"))]
                              + [index[f"x{i}"] for i in range(L.n, L.N)] + derivatives)

    def unknowns(tag: str, items: list[int]) -> str:
        if not items:
            return ""
        rows = "\n".join(f'      <Unknown index="{i}"/>' for i in sorted(items))
        return f"    <{tag}>\n{rows}\n    </{tag}>\n"

    sources = (f'      <SourceFiles>\n        <File name="{ident}.c"/>\n'
               f'        <File name="{ident}_fmi2.c"/>\n      </SourceFiles>\n')
    derivative = f'providesDirectionalDerivative="{"true" if gen.derivatives else "false"}"'
    me = (f'  <ModelExchange modelIdentifier="{ident}" canNotUseMemoryManagementFunctions="true" '
          f'{CAPABILITIES} {derivative}>\n{sources}'
          "  </ModelExchange>\n") if has_me else ""
    cs = (f'  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true" '
          'canInterpolateInputs="true" maxOutputDerivativeOrder="0" '
          f'canNotUseMemoryManagementFunctions="true" {CAPABILITIES} {derivative}>\n{sources}'
          '  </CoSimulation>\n')
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<fmiModelDescription fmiVersion="2.0" modelName={quoteattr(ident)} guid="{guid}" '
        f'description={quoteattr(plan.description)} generationTool="symbody {__version__}" '
        f'generationDateAndTime="{now}" variableNamingConvention="flat" '
        'numberOfEventIndicators="0">\n'
        + me + cs
        + f'  <DefaultExperiment startTime="0.0" stopTime="{float(plan.stop_time)!r}" '
          f'tolerance="{float(plan.rtol)!r}"/>\n'
        + "  <ModelVariables>\n" + "\n".join(variables) + "\n  </ModelVariables>\n"
        + "  <ModelStructure>\n" + unknowns("Outputs", outputs)
        + unknowns("Derivatives", derivatives) + unknowns("InitialUnknowns", initial_unknowns)
        + "  </ModelStructure>\n</fmiModelDescription>\n")
    return text, names_used


def _build(cc: list[str], sources: list[Path], out: Path, include: Path, large: bool) -> None:
    opt = c_kernels.OPT_FLAGS.split() if large else ["-O2"]
    cmd = [*cc, "-std=c99", *opt, "-fPIC", "-shared", "-fvisibility=hidden",
           f"-I{include}", *map(str, sources), "-o", str(out), "-lm"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except OSError as exc:
        raise CompilationError(f"the C compiler {cc[0]!r} could not be run: {exc}") from exc
    if r.returncode != 0:
        raise CompilationError(f"building the FMU's binary failed ({' '.join(cmd[:3])} ...): "
                               f"{r.stderr[:2000]}")


def _without_repeated_variables(model: Any, outputs: Mapping | None) -> Mapping | None:
    """``outputs`` without the entries that are a variable of the FMU already: the name of a
    coordinate or speed whose expression is that very symbol (``{"s": s(t)}``)."""
    if not isinstance(outputs, Mapping):
        return outputs
    from ..formatting import symbol_name
    own = {symbol_name(v): v for v in (*model.coordinates, *model.speeds)}
    return {k: e for k, e in outputs.items() if not (k in own and e == own[k])}


def export_fmu(model: Any, path: str | Path, *, constants: Any = None, initial_state: Any = None,
               inputs: Any = None, specifieds: Any = None, outputs: Mapping | None = None,
               name: str | None = None,
               rtol: float = 1e-10, atol: float = 1e-12, stop_time: float = 10.0,
               events: Any = None) -> Path:
    """Write ``model`` as an FMI 2.0 FMU at ``path`` (a ``.fmu`` zip); returns the path.

    Variables carry the model's names: coordinates and independent speeds (outputs with
    start values ``initial_state``; the FMU's continuous states), dependent speeds (outputs),
    constants (parameters, values ``constants``), specified inputs (inputs, start values
    ``inputs``, or ``specifieds`` as simulate names them), the ``outputs`` ``{name: SymPy
    expression}`` (an entry that is a coordinate or speed under its own name is that
    variable already) and, for closed loops, the
    residuals ``loop_residual_<i>`` of f_h(q, t) = 0.  Co-simulation integrates with a
    Dormand-Prince 5(4) pair at ``rtol``/``atol`` and projects q_dep onto f_h = 0 after every
    step (also at initialization: q_ind held, q_dep solved from the start values); model
    exchange is offered when the model has no holonomic constraints.  The binary is built
    by the system's C compiler (``$CC``, cc, gcc or clang) for this platform; the C sources
    are included under ``sources/``.

    A model whose dependent set may change (unreduced dynamics with velocity constraints)
    is integrated in co-simulation in the full state [q, u, x_e], the dependent coordinates
    and speeds chosen afresh (best conditioned) at each projection, so the FMU passes the
    singular positions of any one set; model exchange keeps the model's set and reports an
    error where it is near singular.  The FMU saves, restores and serializes its state
    (``canGetAndSetFMUstate``, ``canSerializeFMUstate``), and every refused call says why
    through the importer's logger.

    The model identifier is ``name`` or the file name's stem (other characters than letters,
    digits and _ replaced by _, ``m_`` before a leading digit: '1pend.fmu' -> m_1pend).
    The constants and start values are checked as ``simulate`` checks them (finite,
    positive masses, positive semidefinite inertias); ``stop_time`` (the DefaultExperiment's
    end, after its start 0), ``rtol`` and ``atol`` must be positive.

    Refused with a message naming the feature: ``events`` (impacts and other events cannot
    be carried), a model whose equations come with events (the zoo's walkers) unless
    ``events=False`` says they are not wanted, a redundant constraint set, callables as
    inputs, constants or initial state, two variables of the same name, a path that cannot
    be written; a missing C compiler (CompilationError saying how to get one).
    """
    check_exportable(model, "export_fmu")
    check_events(model, events, "export_fmu")
    if specifieds is not None:
        if inputs is not None:
            raise InputError("export_fmu: give the inputs' start values once, as inputs= or as "
                             "specifieds= (the same thing, simulate's name), not both")
        inputs = specifieds
    for value, arg in ((constants, "constants"), (initial_state, "initial_state"),
                       (inputs, "inputs")):
        check_not_callable(value, "export_fmu", arg)
    path = Path(path)
    OutputLocation(path, "export_fmu").check_file()
    ident = check_identifier(name) if name is not None else identifier_from_path(path)
    rtol, atol = check_tolerances(rtol, atol)
    stop_time = check_stop_time(stop_time)
    L = model.layout
    if L.c and constants is None:
        raise InputError("export_fmu needs the constants' values (constants=, a dict by symbol or "
                         "name): they are the FMU's parameter start values")
    outputs = _without_repeated_variables(model, outputs)
    check_distinct_names(_variable_names(model, outputs), "export_fmu")
    gen = generate_c(model, ident, outputs=outputs, constants=constants,
                     initial_state=initial_state, what="export_fmu", derivatives=True)
    L = gen.layout
    P = model.constants_array(constants) if L.c else np.empty(0)
    X = model.state_array(initial_state) if initial_state is not None else np.zeros(L.nx)
    R = model.specifieds_array(inputs) if L.s and inputs is not None else np.zeros(L.s)
    if L.M and initial_state is not None:
        model.consistent_state(X, P)     # the start values assemble (InputError saying why not)
    cc = find_compiler()
    plat, ext = _platform()
    ny = len(gen.outputs)
    vr = {"X": 0}
    vr["UDEP"] = vr["X"] + L.nx
    vr["P"] = vr["UDEP"] + L.m
    vr["R"] = vr["P"] + L.c
    vr["Y"] = vr["R"] + L.s
    vr["RES"] = vr["Y"] + ny
    vr["DER"] = vr["RES"] + L.M
    vr["END"] = vr["DER"] + L.nx
    guid = "{" + str(uuid.UUID(hashlib.sha256(
        (gen.source + repr((X.tolist(), P.tolist(), R.tolist(), rtol, atol))).encode())
        .hexdigest()[:32])) + "}"
    description = f"symbody model {getattr(model.eom, 'name', None) or ident}"
    plan = _Plan(gen=gen, ident=ident, guid=guid, start_x=X, start_p=P, start_r=R, vr=vr,
                 has_me=L.M == 0, rtol=rtol, atol=atol, stop_time=stop_time,
                 description=description)
    xml, _ = _model_description(plan)
    glue = _glue(plan)
    large = len(gen.source) > 400_000
    with tempfile.TemporaryDirectory(prefix="symbody-fmu-") as tmp:
        root = Path(tmp)
        src = root / "sources"
        src.mkdir()
        (src / f"{ident}.h").write_text(gen.header)
        (src / f"{ident}.c").write_text(gen.source)
        (src / f"{ident}_fmi2.c").write_text(glue)
        (src / "README.md").write_text(gen.readme)
        binary = root / "binaries" / plat / f"{ident}{ext}"
        binary.parent.mkdir(parents=True)
        _build(cc, [src / f"{ident}.c", src / f"{ident}_fmi2.c"], binary, src, large)
        (root / "modelDescription.xml").write_text(xml)
        staged = Path(tmp + ".fmu")                 # beside the tree, not inside it
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(root.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(root).as_posix())
        partial = path.with_name(path.name + ".partial")   # then renamed: never half written
        try:
            with OutputLocation(path, "export_fmu"):
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(staged, partial)
                os.replace(partial, path)
        finally:
            staged.unlink()
            if partial.exists() and not partial.is_dir():
                partial.unlink()
    return path


def _variable_names(model: Any, outputs: Mapping | None) -> list[tuple[str, str]]:
    """(FMU variable name, what it is) of every variable ``export_fmu`` writes."""
    from ..formatting import symbol_name
    L = model.layout
    named = [("coordinate", model.coordinates), ("speed", model.speeds),
             ("extra state", model.extra_states), ("constant", model.constants),
             ("input", model.specifieds)]
    kinds = [(symbol_name(s), f"the {kind} {s}") for kind, symbols in named for s in symbols]
    kinds += [(str(k), f"the output {k!r}") for k in (outputs or {})]
    kinds += [(f"loop_residual_{i}", "a loop residual") for i in range(L.M)]
    if L.M == 0:
        kinds += [(f"der({symbol_name(s)})", f"the derivative of {s}") for s in model.states]
    return kinds
