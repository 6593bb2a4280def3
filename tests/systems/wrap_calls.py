"""Every wrap-routine call an OpenSim model's compiled steps make, recorded and replayed in C.

``record`` runs ``sb.simulate`` through a build of the library's path source
(``multi_wrap._SOURCE``: ``ellipsoid_wrap.c``, ``cylinder_wrap.c``, ``multi_wrap.c``,
``path_parameters.c``) with recorders in ``symbody_path_parameters``: each
``ellipsoid_wrap`` call of a path over one ellipsoid (every candidate slot tried: radii (3),
axis, sign, method, P1 (3), P2 (3), in the wrap frame; the ellipsoid calls that
``multi_path`` makes inside a path over several wrap objects are *not* recorded here, they
are part of the ``multi_path`` calls) and each ``multi_path`` call (n, nb, m, the points
(3 n), their bodies (n), the bodies' poses (12 nb), the wrap objects (24 m)).  ``replay``
runs the recorded calls through a build in a C loop (no Python per call) and returns the
CPU time (``CLOCK_PROCESS_CPUTIME_ID``) and the outputs as bytes: per ellipsoid call the
wrap flag, r1, r2, s; per path L, the node count, the nodes (padded to MAX_NODES) and
12 nb wrenches.  ``build(frozen_source())`` is the anchor: the frozen routines of
tests/data/opensim/*_reference.c with the flags of then (``FROZEN_FLAGS``; ``frozen_build``,
one build shared by the tests).  Used by benchmarks/bench_wrap_calls.py,
tests/opensim/test_multi_wrap_bits.py and test_opensim_multi_wrap.py.
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import symbody as sb
from symbody.compilation.python_extension import PythonExtension
from symbody.opensim.forces import multi_wrap as MW
from symbody.opensim.forces.ellipsoid_native import WRAP_C_FLAGS

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "opensim"
FROZEN_FLAGS = "-O2 -ffp-contract=off"
ROUTINES = ("ellipsoid", "multi")
ELLIPSOID_FIELDS = 12        # radii, axis, sign, method, P1, P2

RECORDER = r"""
typedef struct { double *buf; long n, cap, calls; } recording;
static recording rec[2];
static double *rec_reserve(recording *r, long need) {
    if (r->n + need > r->cap) {
        r->cap = 2*(r->n + need) + 100000;
        r->buf = realloc(r->buf, r->cap*sizeof(double));
    }
    double *b = r->buf + r->n;
    r->n += need; r->calls++;
    return b;
}
static void record_ellipsoid(const double *dims, int axis, int sign, int method,
                             const double *P1, const double *P2) {
    double *b = rec_reserve(&rec[0], 12);
    memcpy(b, dims, 3*sizeof(double));
    b[3] = axis; b[4] = sign; b[5] = method;
    memcpy(b + 6, P1, 3*sizeof(double));
    memcpy(b + 9, P2, 3*sizeof(double));
}
static void record_multi(const double *pts, int n, const double *pbf, const double *bodies,
                         int nb, const double *spec, int m) {
    double *b = rec_reserve(&rec[1], 3 + 4*n + 12*nb + 24*m);
    b[0] = n; b[1] = nb; b[2] = m;
    memcpy(b + 3, pts, 3*n*sizeof(double));
    memcpy(b + 3 + 3*n, pbf, n*sizeof(double));
    memcpy(b + 3 + 4*n, bodies, 12*nb*sizeof(double));
    memcpy(b + 3 + 4*n + 12*nb, spec, 24*m*sizeof(double));
}
/* recorded(routine) -> (calls, their inputs as doubles); routine 0 ellipsoid, 1 multi */
static PyObject *py_recorded(PyObject *self, PyObject *args) {
    int k;
    if (!PyArg_ParseTuple(args, "i", &k)) return NULL;
    return Py_BuildValue("(ly#)", rec[k].calls, (const char *)rec[k].buf,
                         (Py_ssize_t)(rec[k].n*sizeof(double)));
}
"""

REPLAY = r"""
#include <time.h>
typedef struct { double *buf; long n, cap; } outputs;
static double *out_reserve(outputs *o, long need) {
    if (o->n + need > o->cap) { o->cap = 2*(o->n + need); o->buf = realloc(o->buf, o->cap*sizeof(double)); }
    double *b = o->buf + o->n;
    o->n += need;
    return b;
}
/* run(routine, records, passes, keep) -> (CPU s, the first pass's outputs if keep) */
static PyObject *py_run(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int routine, passes, keep;
    if (!PyArg_ParseTuple(args, "iy*ii", &routine, &buf, &passes, &keep)) return NULL;
    const double *d = buf.buf;
    long nd = buf.len/sizeof(double);
    outputs outs = {NULL, 0, 0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (int r = 0; r < passes; r++)
        if (routine == 0)
            for (long k = 0; k + 12 <= nd; k += 12) {
                double r1[3], r2[3], s;
                int w = ellipsoid_wrap(d + k, (int)d[k + 3], (int)d[k + 4], (int)d[k + 5],
                                       d + k + 6, d + k + 9, r1, r2, &s);
                if (keep && r == 0) {
                    double *o = out_reserve(&outs, 8);
                    o[0] = w; memcpy(o + 1, r1, 3*sizeof(double));
                    memcpy(o + 4, r2, 3*sizeof(double)); o[7] = s;
                }
            }
        else
            for (long k = 0; k < nd;) {
                int n = (int)d[k], nb = (int)d[k + 1], m = (int)d[k + 2], path[MAX_NODES], np;
                const double *pts = d + k + 3, *pbf = pts + 3*n, *bodies = pbf + n;
                double L, out[12*MAX_BODIES];
                const char *error = NULL;
                multi_path(pts, n, pbf, bodies, nb, bodies + 12*nb, m, &L, path, &np, out,
                           &error);
                if (keep && r == 0) {
                    double *o = out_reserve(&outs, 2 + MAX_NODES + 12*nb);
                    o[0] = L; o[1] = np;
                    for (int q = 0; q < MAX_NODES; q++) o[2 + q] = q < np ? path[q] : 999;
                    memcpy(o + 2 + MAX_NODES, out, 12*nb*sizeof(double));
                }
                k += 3 + 4*n + 12*nb + 24*m;
            }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    PyBuffer_Release(&buf);
    PyObject *res = Py_BuildValue("(dy#)", (t1.tv_sec - t0.tv_sec) + 1e-9*(t1.tv_nsec - t0.tv_nsec),
                                  (const char *)outs.buf, (Py_ssize_t)(outs.n*sizeof(double)));
    free(outs.buf);
    return res;
}
"""

ENTRY = '{"entry", py_entry, METH_NOARGS, "The address of symbody_path_parameters."},'
CALLS = {"ellipsoid": "if (ellipsoid_wrap(c, axis, sign, method, e, e + 3, r1, r2, &s)) {",
         "multi": "if (multi_path(pts, n, mp + 4, pts + 3*n, nb, mp + 4 + n, m, out + o, path, "
                  "&npath,"}
RECORD_CALLS = {"ellipsoid": "record_ellipsoid(c, axis, sign, method, e, e + 3);",
                "multi": "record_multi(pts, n, mp + 4, pts + 3*n, nb, mp + 4 + n, m);"}


def build(source: str, name: str, opt: str, record: bool = False) -> Any:
    """The source (a whole ``symbody_multi_wrap`` module) as module ``name`` with ``run``
    (and, with ``record``, ``recorded`` and the recorders in symbody_path_parameters); None
    without a C compiler."""
    extra, methods = REPLAY, '{"run", py_run, METH_VARARGS, ""},'
    if record:
        for routine, call in CALLS.items():
            assert source.count(call) == 1, routine
            source = source.replace(call, RECORD_CALLS[routine] + "\n        " + call)
        extra += RECORDER
        methods += '{"recorded", py_recorded, METH_VARARGS, ""},'
    i = source.index("static PyMethodDef multi_methods[]")
    source = (source[:i] + extra + source[i:]).replace(ENTRY, ENTRY + methods)
    return PythonExtension(name, source.replace("symbody_multi_wrap", name),
                           f"wrap-calls-{name}", opt=opt).module()


def frozen_source(rev: str | None = None) -> tuple:
    """(the older routines' source, its flags): the frozen references (tests/data/opensim,
    ``FROZEN_FLAGS``) or the sources at git revision ``rev`` (``WRAP_C_FLAGS``); with today's
    path_parameters.c (which calls them)."""
    if rev is None:
        ell, cyl, multi = ((DATA / f"{k}_reference.c").read_text()
                           for k in ("ellipsoid_wrap", "cylinder_wrap", "multi_wrap"))
        flags = FROZEN_FLAGS
    else:
        def show(name: str) -> str:
            return subprocess.run(["git", "-C", str(ROOT), "show",
                                   f"{rev}:src/symbody/opensim/forces/{name}"],
                                  check=True, capture_output=True, text=True).stdout

        ell, cyl, multi = show("ellipsoid_wrap.c"), show("cylinder_wrap.c"), show("multi_wrap.c")
        flags = WRAP_C_FLAGS
    pp = (Path(MW.__file__).parent / "path_parameters.c").read_text()
    return ell[:ell.index("static PyObject *py_wrap")] + cyl + multi + pp, flags


def frozen_build() -> Any:
    """The frozen routines (``frozen_source()``) as ``symbody_multi_wrap_reference``, with
    ``path`` and ``run``; None without a C compiler."""
    source, flags = frozen_source()
    return build(source, "symbody_multi_wrap_reference", flags)


def recording_build(opt: str = WRAP_C_FLAGS) -> Any:
    """Today's routines (``multi_wrap._SOURCE``, the library's flags unless ``opt``) with
    the recorders."""
    return build(MW._SOURCE, "symbody_multi_wrap_rec", opt, record=True)


def record(recorder: Any, load: Any, x0: Any, tf: float, excitation: float,
           solver: Any) -> tuple:
    """({routine: (calls, their inputs as bytes)}, the solution) of ``sb.simulate`` over
    (0, tf) from ``x0(model)`` at constant ``excitation``, the model built by ``load()``
    while ``recorder`` stands for the library's path module."""
    saved = MW._module
    MW._module = lambda: recorder            # (native_path_parameters takes its entry here)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load()
        nm = model.numeric_model
        p = nm.constants_array(model.constants)
        r = np.full(len(model.input_names), excitation)
        sol = sb.simulate(nm, (0.0, tf), x0(model), p, specifieds=r, solver=solver,
                          t_eval=[0.0, tf])
    finally:
        MW._module = saved
    return {k: recorder.recorded(i) for i, k in enumerate(ROUTINES)}, sol


def replay(module: Any, routine: str, data: bytes, passes: int = 1,
           keep: bool = True) -> tuple:
    """(CPU seconds, outputs as bytes) of ``passes`` replays of the recorded calls."""
    return module.run(ROUTINES.index(routine), data, passes, int(keep))
