"""TRIlong's path over three wrap objects, per call: the routine as built now against an older
one (the frozen tests/data/opensim/*_reference.c, or a git revision's sources), over every
call of a 1 s Arm26 simulation.

Records the inputs of every ``multi_path`` call (``forces/multi_wrap.c``) that the compiled
steps make through ``symbody_path_parameters`` in ``bench_opensim_speed.py``'s run
(OpenSim's equilibrated start, excitations 0.3, RK45 at ``--rtol``, atol 1e-3 rtol unless
``--atol``), by a build of the library's source with a recorder in ``path_parameters.c``;
then replays them in a C loop through both builds (no Python per call), checks that the
outputs (length, path nodes, wrenches) are bitwise equal, and times them: CPU time
(``CLOCK_PROCESS_CPUTIME_ID``) per call, medians of ``--repeats`` interleaved passes.

    PYTHONPATH=src:tests python benchmarks/bench_multi_wrap_calls.py [--rtol 1e-7]
        [--atol 1e-10] [--base 10b8fba] [--repeats 9]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests"), str(HERE)]

import bench_opensim_speed as B  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.compilation.python_extension import PythonExtension  # noqa: E402
from symbody.opensim import load_opensim  # noqa: E402
from symbody.opensim.forces import multi_wrap as MW  # noqa: E402
from symbody.opensim.forces.ellipsoid_native import WRAP_C_FLAGS  # noqa: E402

RECORDER = r"""
static double *rec_buf = NULL;
static long rec_n = 0, rec_cap = 0, rec_calls = 0;
static void record_call(const double *pts, int n, const double *pbf, const double *bodies,
                        int nb, const double *spec, int m) {
    long need = 3 + 4*n + 12*nb + 24*m;
    if (rec_n + need > rec_cap) {
        rec_cap = 2*(rec_n + need) + 100000;
        rec_buf = realloc(rec_buf, rec_cap*sizeof(double));
    }
    double *b = rec_buf + rec_n;
    b[0] = n; b[1] = nb; b[2] = m;
    memcpy(b + 3, pts, 3*n*sizeof(double));
    memcpy(b + 3 + 3*n, pbf, n*sizeof(double));
    memcpy(b + 3 + 4*n, bodies, 12*nb*sizeof(double));
    memcpy(b + 3 + 4*n + 12*nb, spec, 24*m*sizeof(double));
    rec_n += need; rec_calls++;
}
static PyObject *py_recorded(PyObject *self, PyObject *args) {
    return Py_BuildValue("(ly#)", rec_calls, (const char *)rec_buf,
                         (Py_ssize_t)(rec_n*sizeof(double)));
}
"""

REPLAY = r"""
#include <time.h>
/* run(records, passes, keep) -> (CPU s, outputs: per call L, node count, the nodes padded
   to MAX_NODES, 12 nb wrenches, as doubles, from the first pass if keep) */
static PyObject *py_run(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int passes, keep;
    if (!PyArg_ParseTuple(args, "y*ii", &buf, &passes, &keep)) return NULL;
    const double *d = buf.buf;
    long nd = buf.len/sizeof(double), no = 0, cap = 0;
    double *outs = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (int r = 0; r < passes; r++)
        for (long k = 0; k < nd;) {
            int n = (int)d[k], nb = (int)d[k + 1], m = (int)d[k + 2], path[MAX_NODES], np;
            const double *pts = d + k + 3, *pbf = pts + 3*n, *bodies = pbf + n;
            double L, out[12*MAX_BODIES];
            const char *error = NULL;
            multi_path(pts, n, pbf, bodies, nb, bodies + 12*nb, m, &L, path, &np, out, &error);
            if (keep && r == 0) {
                long need = 2 + MAX_NODES + 12*nb;
                if (no + need > cap) { cap = 2*(no + need); outs = realloc(outs, cap*sizeof(double)); }
                double *o = outs + no;
                o[0] = L; o[1] = np;
                for (int q = 0; q < MAX_NODES; q++) o[2 + q] = q < np ? path[q] : 999;
                memcpy(o + 2 + MAX_NODES, out, 12*nb*sizeof(double));
                no += need;
            }
            k += 3 + 4*n + 12*nb + 24*m;
        }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    PyBuffer_Release(&buf);
    PyObject *res = Py_BuildValue("(dy#)", (t1.tv_sec - t0.tv_sec) + 1e-9*(t1.tv_nsec - t0.tv_nsec),
                                  (const char *)outs, (Py_ssize_t)(no*sizeof(double)));
    free(outs);
    return res;
}
"""

ENTRY = '{"entry", py_entry, METH_NOARGS, "The address of symbody_path_parameters."},'
CALL = "if (multi_path(pts, n, mp + 4, pts + 3*n, nb, mp + 4 + n, m, out + o, path, &npath,"


def build(source: str, name: str, opt: str, record: bool = False):
    """The source (a whole symbody_multi_wrap module) as module ``name`` with ``run`` (and,
    with ``record``, ``recorded`` and the recorder in symbody_path_parameters)."""
    marker = "static PyMethodDef multi_methods[]"
    extra, methods = REPLAY, '{"run", py_run, METH_VARARGS, ""},'
    if record:
        assert source.count(CALL) == 1
        source = source.replace(CALL, "record_call(pts, n, mp + 4, pts + 3*n, nb, mp + 4 + n, m);"
                                "\n        " + CALL)
        extra += RECORDER
        methods += '{"recorded", py_recorded, METH_NOARGS, ""},'
    i = source.index(marker)
    source = (source[:i] + extra + source[i:]).replace(ENTRY, ENTRY + methods)
    module = PythonExtension(name, source.replace("symbody_multi_wrap", name),
                             f"bench-{name}", opt=opt).module()
    if module is None:
        raise SystemExit("no C compiler")
    return module


def base_source(rev: str | None) -> tuple:
    """(the older routine's source, its flags): the frozen references (tests/data) or the
    sources at git revision ``rev``."""
    here = "src/symbody/opensim/forces/"
    if rev is None:
        parts = [B.DATA / f for f in ("ellipsoid_wrap_reference.c", "cylinder_wrap_reference.c",
                                      "multi_wrap_reference.c")]
        ell, cyl, multi = (p.read_text() for p in parts)
        flags = "-O2 -ffp-contract=off"
    else:
        def show(name: str) -> str:
            return subprocess.run(["git", "-C", str(HERE.parent), "show", f"{rev}:{here}{name}"],
                                  check=True, capture_output=True, text=True).stdout

        ell, cyl, multi = show("ellipsoid_wrap.c"), show("cylinder_wrap.c"), show("multi_wrap.c")
        flags = WRAP_C_FLAGS
    pp = (Path(MW.__file__).parent / "path_parameters.c").read_text()
    return ell[:ell.index("static PyObject *py_wrap")] + cyl + multi + pp, flags


def record(rtol: float, atol: float) -> tuple:
    """(the recorded calls as bytes, their number, the run's rhs evaluations)."""
    recorder = build(MW._SOURCE, "symbody_multi_wrap_rec", WRAP_C_FLAGS, record=True)
    saved = MW._module
    MW._module = lambda: recorder            # (native_path_parameters takes its entry here)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load_opensim(B.DATA / "arm26.osim")
        start = B.run_opensim(B.DATA / "arm26.osim", 1)["start"]
        q0, u0 = model.from_opensim_state(start["Q"], start["U"])
        x0 = np.concatenate([q0, u0, model.extra_states_from_opensim(start["states"])])
        nm = model.numeric_model
        p = nm.constants_array(model.constants)
        r = np.full(len(model.input_names), B.EXCITATION)
        solver = sb.Solver(rtol=rtol, atol=atol, dense_output=False, method="RK45")
        sol = sb.simulate(nm, (0.0, B.TF), x0, p, specifieds=r, solver=solver,
                          t_eval=[0.0, B.TF])
    finally:
        MW._module = saved
    calls, data = recorder.recorded()
    return data, calls, getattr(sol, "nfev", None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtol", type=float, default=1e-7)
    ap.add_argument("--atol", type=float, default=None)
    ap.add_argument("--base", default=None, help="git revision of the older routine "
                    "(default: the frozen references in tests/data/opensim)")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--passes", type=int, default=20, help="replays of all calls per timing")
    args = ap.parse_args()
    data, calls, nfev = record(args.rtol, args.atol if args.atol else 1e-3 * args.rtol)
    old_source, old_flags = base_source(args.base)
    old = build(old_source, "symbody_multi_wrap_old", old_flags)
    new = build(MW._SOURCE, "symbody_multi_wrap_new", WRAP_C_FLAGS)
    equal = old.run(data, 1, 1)[1] == new.run(data, 1, 1)[1]
    t_old, t_new = [], []
    for _ in range(args.repeats):            # (interleaved)
        t_old.append(old.run(data, args.passes, 0)[0])
        t_new.append(new.run(data, args.passes, 0)[0])
    per = 1e6 / (args.passes * calls)
    mo, mn = np.median(t_old) * per, np.median(t_new) * per
    print(f"1 s Arm26, RK45 at rtol {args.rtol:g}: {nfev} rhs evaluations, {calls} TRIlong path "
          f"calls; old: {args.base or 'frozen references'} ({old_flags}), new ({WRAP_C_FLAGS})")
    print(f"| TRIlong path (multi_path) | {calls} | bitwise equal: {equal} | {mo:.3f} us | "
          f"{mn:.3f} us | {mo / mn:.2f}x |")


if __name__ == "__main__":
    main()
