"""The FMU's state saved and restored: fmi2GetFMUstate / SetFMUstate and their serialization.

Co-simulation masters (step rejection, iterative coupling) save an FMU's state and go back
to it.  An instance of the generated glue is one plain C struct of numbers (time, states,
the full state of a switchable model, constants, inputs and their slopes, the integrator's
step size, the mode flags), so its state is a copy of that struct; the callbacks and the
instance name stay those of the instance it is restored into.  The serialized form is a
header (a tag, the GUID of the modelDescription.xml and the struct's size) and the struct's
bytes: it is read back only by a binary of the same FMU on the same platform (the GUID
and size are checked, and a mismatch is an error saying so).
"""

from __future__ import annotations

__all__ = ["FMU_STATE_C", "CAPABILITIES"]

#: the modelDescription.xml attributes of both interfaces
CAPABILITIES = 'canGetAndSetFMUstate="true" canSerializeFMUstate="true"'

FMU_STATE_C = r"""
/* ---------------------------------------------------------------- FMU state */
#define STATE_TAG "symbody-fmu-state-1"
typedef struct {
    char tag[24];
    char guid[48];
    unsigned long size;
} StateHeader;

/* the saved numbers into an instance, keeping its own callbacks and name */
static void restore(Instance *c, const Instance *saved)
{
    fmi2CallbackFunctions cb = c->cb;
    char name[sizeof c->name];
    memcpy(name, c->name, sizeof name);
    memcpy(c, saved, sizeof *c);
    c->cb = cb;
    memcpy(c->name, name, sizeof name);
}

FMI2_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c_, fmi2FMUstate *s)
{
    Instance *c = (Instance *)c_, *copy;
    if (!c) return fmi2Error;
    if (!s) return refuse(c, "fmi2GetFMUstate: no place for the state (null pointer)");
    copy = *s ? (Instance *)*s : (Instance *)malloc(sizeof(Instance));
    if (!copy) return refuse(c, "fmi2GetFMUstate: no memory for the state");
    memcpy(copy, c, sizeof *copy);
    *s = copy;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c_, fmi2FMUstate s)
{
    Instance *c = (Instance *)c_;
    if (!c) return fmi2Error;
    if (!s) return refuse(c, "fmi2SetFMUstate: no state given (null pointer)");
    restore(c, (const Instance *)s);
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    if (!c) return fmi2Error;
    if (s && *s) { free(*s); *s = 0; }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n)
{
    if (!c) return fmi2Error;
    if (!s || !n) return refuse((Instance *)c, "fmi2SerializedFMUstateSize: null pointer");
    *n = sizeof(StateHeader) + sizeof(Instance);
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[],
                                             size_t n)
{
    StateHeader h;
    if (!c) return fmi2Error;
    if (!s || !b) return refuse((Instance *)c, "fmi2SerializeFMUstate: null pointer");
    if (n < sizeof h + sizeof(Instance))
        return refuse((Instance *)c, "fmi2SerializeFMUstate: %lu bytes given, %lu needed "
                      "(fmi2SerializedFMUstateSize)", (unsigned long)n,
                      (unsigned long)(sizeof h + sizeof(Instance)));
    memset(&h, 0, sizeof h);
    strncpy(h.tag, STATE_TAG, sizeof h.tag - 1);
    strncpy(h.guid, GUID, sizeof h.guid - 1);
    h.size = (unsigned long)sizeof(Instance);
    memcpy(b, &h, sizeof h);
    memcpy(b + sizeof h, s, sizeof(Instance));
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n,
                                               fmi2FMUstate *s)
{
    StateHeader h;
    Instance *copy;
    if (!c) return fmi2Error;
    if (!b || !s) return refuse((Instance *)c, "fmi2DeSerializeFMUstate: null pointer");
    if (n < sizeof h) return refuse((Instance *)c, "fmi2DeSerializeFMUstate: %lu bytes are too "
                                    "few for a state of this FMU", (unsigned long)n);
    memcpy(&h, b, sizeof h);
    if (strncmp(h.tag, STATE_TAG, sizeof h.tag) != 0 || strncmp(h.guid, GUID, sizeof h.guid) != 0
            || h.size != sizeof(Instance) || n != sizeof h + sizeof(Instance))
        return refuse((Instance *)c, "fmi2DeSerializeFMUstate: the bytes are not a state of this "
                      "FMU (another FMU, GUID, version or platform wrote them)");
    copy = (Instance *)malloc(sizeof(Instance));
    if (!copy) return refuse((Instance *)c, "fmi2DeSerializeFMUstate: no memory for the state");
    memcpy(copy, b + sizeof h, sizeof *copy);
    copy->cb = ((Instance *)c)->cb;
    *s = copy;
    return fmi2OK;
}
"""
