"""The FMI 2.0 C API of the FMU (part of the glue file): instantiation, initialization,
get/set of reals, co-simulation's fmi2DoStep and the model-exchange functions."""

#: The FMI 2.0 C API over the instance: instantiation, get/set, co-simulation's fmi2DoStep
#: and model exchange's functions.
FMI2_API_C = r"""/* ---------------------------------------------------------------- FMI 2.0 API */
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
