"""Arm26's wrap routines per call: as built now against older ones (the frozen
tests/data/opensim/*_reference.c at their old flags, or a git revision's sources), over every
call of a 1 s Arm26 simulation.

Records (tests/systems/wrap_calls.py) the calls that the compiled steps make through
``symbody_path_parameters`` in ``bench_opensim_speed.py``'s run (OpenSim's equilibrated
start, excitations 0.3, RK45 at ``--rtol``, atol 1e-3 rtol unless ``--atol``): BIClong's
``ellipsoid_wrap`` calls (every candidate slot tried; not the ellipsoid calls inside
TRIlong's ``multi_path``) and TRIlong's ``multi_path`` calls; then replays them in a C loop
through both builds (no Python per call), checks that the outputs (ellipsoid: the wrap flag,
r1, r2, s; path: length, nodes, wrenches) are bitwise equal, and times them: CPU time
(``CLOCK_PROCESS_CPUTIME_ID``) per call, medians of ``--repeats`` interleaved passes.

    PYTHONPATH=src:tests python benchmarks/bench_wrap_calls.py [--routine ellipsoid|multi|both]
        [--rtol 1e-7] [--atol 1e-10] [--base 10b8fba] [--repeats 9] [--passes 20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests"), str(HERE)]

import bench_opensim_speed as B  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.opensim import load_opensim  # noqa: E402
from systems import wrap_calls as W  # noqa: E402

LABELS = {"ellipsoid": "BIClong ellipsoid (ellipsoid_wrap)", "multi": "TRIlong path (multi_path)"}


def opensim_start(model):
    """x0 at OpenSim's equilibrated start (bench_opensim_speed's)."""
    start = B.run_opensim(B.DATA / "arm26.osim", 1)["start"]
    q0, u0 = model.from_opensim_state(start["Q"], start["U"])
    return np.concatenate([q0, u0, model.extra_states_from_opensim(start["states"])])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--routine", choices=("ellipsoid", "multi", "both"), default="both")
    ap.add_argument("--rtol", type=float, default=1e-7)
    ap.add_argument("--atol", type=float, default=None)
    ap.add_argument("--base", default=None, help="git revision of the older routines "
                    "(default: the frozen references in tests/data/opensim)")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--passes", type=int, default=20, help="replays of all calls per timing")
    args = ap.parse_args()
    recorder = W.recording_build()
    if recorder is None:
        raise SystemExit("no C compiler")
    solver = sb.Solver(rtol=args.rtol, atol=args.atol if args.atol else 1e-3 * args.rtol,
                       dense_output=False, method="RK45")
    recorded, sol = W.record(recorder, lambda: load_opensim(B.DATA / "arm26.osim"),
                             opensim_start, B.TF, B.EXCITATION, solver)
    old_source, old_flags = W.frozen_source(args.base)
    old = W.build(old_source, "symbody_multi_wrap_old", old_flags)
    new = W.build(W.MW._SOURCE, "symbody_multi_wrap_new", W.WRAP_C_FLAGS)
    print(f"1 s Arm26, RK45 at rtol {args.rtol:g}: {getattr(sol, 'nfev', None)} rhs "
          f"evaluations; old: {args.base or 'frozen references'} ({old_flags}), new "
          f"({W.WRAP_C_FLAGS}); machine loaded: CPU times")
    for routine in W.ROUTINES if args.routine == "both" else (args.routine,):
        calls, data = recorded[routine]
        equal = W.replay(old, routine, data)[1] == W.replay(new, routine, data)[1]
        t_old, t_new = [], []
        for _ in range(args.repeats):        # (interleaved)
            t_old.append(W.replay(old, routine, data, args.passes, keep=False)[0])
            t_new.append(W.replay(new, routine, data, args.passes, keep=False)[0])
        per = 1e6 / (args.passes * calls)
        mo, mn = np.median(t_old) * per, np.median(t_new) * per
        print(f"| {LABELS[routine]} | {calls} calls | bitwise equal: {equal} | {mo:.3f} us | "
              f"{mn:.3f} us | {mo / mn:.2f}x |")


if __name__ == "__main__":
    main()
