"""The wrap routines of Arm26's 1 s simulation, as built now against the frozen copies before
they were made faster (tests/data/opensim/*_wrap_reference.c, built with the flags of then).

Records every call of the 1 s Arm26 simulation of ``bench_opensim_speed.py`` (OpenSim's
equilibrated start, excitations 0.3, ``sb.simulate`` at ``--rtol``): BIClong's WrapEllipsoid
calls (``module.wrap``, :mod:`symbody.opensim.forces.ellipsoid_path`) and TRIlong's path over
three wrap objects (``module.path``, :mod:`symbody.opensim.forces.multi_wrap`); then replays
them through both builds, checks that every output is bitwise equal, and times them (CPU
time per call through the Python call, medians of ``--repeats`` interleaved passes).

    PYTHONPATH=src:tests python benchmarks/bench_wrap_routines.py [--rtol 1e-6] [--repeats 7]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests"), str(HERE)]

import bench_opensim_speed as B  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.compilation.python_extension import PythonExtension  # noqa: E402
from symbody.opensim import load_opensim  # noqa: E402
from symbody.opensim.forces import ellipsoid_native as EN  # noqa: E402
from symbody.opensim.forces import ellipsoid_path as EP  # noqa: E402
from symbody.opensim.forces import multi_wrap as MW  # noqa: E402

OLD_FLAGS = "-O2 -ffp-contract=off"


def frozen_modules():
    """(ellipsoid module, multi-wrap module) built from the frozen reference sources."""
    ell = (B.DATA / "ellipsoid_wrap_reference.c").read_text()
    cyl = (B.DATA / "cylinder_wrap_reference.c").read_text()
    multi = (Path(MW.__file__).parent / "multi_wrap.c").read_text()
    one = PythonExtension("symbody_ellipsoid_wrap_ref",
                          ell.replace("symbody_ellipsoid_wrap", "symbody_ellipsoid_wrap_ref"),
                          "bench-ellipsoid-ref", opt=OLD_FLAGS).module()
    source = ell[:ell.index("static PyObject *py_wrap")] + cyl + multi
    path = PythonExtension("symbody_multi_wrap_ref",
                           source.replace("symbody_multi_wrap", "symbody_multi_wrap_ref"),
                           "bench-multi-ref", opt=OLD_FLAGS).module()
    return one, path


def record(rtol: float) -> tuple:
    """(the ellipsoid calls' arguments, the path calls' arguments, rhs evaluations)."""
    path = B.DATA / "arm26.osim"
    osim = B.run_opensim(path, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_opensim(path)
    nm = model.numeric_model
    start = osim["start"]
    q0, u0 = model.from_opensim_state(start["Q"], start["U"])
    x0 = np.concatenate([q0, u0, model.extra_states_from_opensim(start["states"])])
    p = nm.constants_array(model.constants)
    r = np.full(len(model.input_names), B.EXCITATION)
    nm.rhs(0.0, x0, p, model.specified_values(q0, r))
    single, multi = [], []
    one, many = EP._module(), MW._module()

    class OneProxy:
        def wrap(self, *a):
            single.append(a)
            return one.wrap(*a)

    class PathProxy:
        def path(self, *a):
            multi.append(tuple(list(x) for x in a))
            return many.path(*a)

    saved = EP._module, MW._module
    EP._module, MW._module = OneProxy, PathProxy
    try:
        solver = sb.Solver(rtol=rtol, atol=rtol * 1e-3, dense_output=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = sb.simulate(nm, (0.0, B.TF), x0, p, specifieds=r, solver=solver,
                              t_eval=[0.0, B.TF])
    finally:
        EP._module, MW._module = saved
    return single, multi, getattr(sol, "nfev", None)


def bits(out) -> bytes:
    flat = [out[0]] + [v for x in out[1:] for v in (x if isinstance(x, (list, tuple)) else [x])]
    return np.array(flat, dtype=float).tobytes()


def timed(fn, calls, repeats) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        for a in calls:
            fn(*a)
        times.append((time.process_time() - t0) / len(calls))
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    single, multi, nfev = record(args.rtol)
    old_one, old_path = frozen_modules()
    new_one, new_path = EN._module(), MW._module()
    print(f"1 s Arm26 at rtol {args.rtol:g}: {nfev} rhs evaluations, {len(single)} BIClong "
          f"ellipsoid calls, {len(multi)} TRIlong path calls; flags now: {EN.WRAP_C_FLAGS!r}")
    for label, calls, old, new in (("BIClong WrapEllipsoid (module.wrap)", single, old_one.wrap,
                                    new_one.wrap),
                                   ("TRIlong path over 3 objects (module.path)", multi,
                                    old_path.path, new_path.path)):
        equal = all(bits(old(*a)) == bits(new(*a)) and old(*a)[2:3] == new(*a)[2:3]
                    for a in calls)
        t_old, t_new = [], []
        for _ in range(args.repeats):    # (interleaved)
            t_old += timed(old, calls, 1)
            t_new += timed(new, calls, 1)
        mo, mn = np.median(t_old) * 1e6, np.median(t_new) * 1e6
        print(f"| {label} | {len(calls)} | {equal} | {mo:.2f} us | {mn:.2f} us | {mo / mn:.2f}x |")


if __name__ == "__main__":
    main()
