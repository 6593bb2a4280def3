"""Rajagopal 2016 with its muscles' forces over wrap objects: formation, compile and the state
derivatives against OpenSim 4.6.

The model (``Models/Rajagopal/Rajagopal2016.osim`` of opensim-models, read from a bare git
mirror with ``--repo`` or given as a path) is loaded once to find the muscles that symbody
leaves out (none since paths over several wrap objects are built); those are removed from the file on both sides
and the rest is loaded again (``load_opensim`` and ``numeric_model``: CPU seconds of this
process; a cold compile also runs the C compiler in child processes, not counted).  Then, at
random coordinates within half the ranges, put on the constraints, u = 0 (Simbody's velocity
terms of the coupled knee differ from the exact ones: see the guide), random activations and
excitations and fiber lengths 0.97-1.03 times OpenSim's equilibrium: q'/u' (independent
speeds), a' and the compliant fibers' velocities against OpenSim's
(``systems.opensim_millard_worker``).

    PYTHONPATH=src:tests python benchmarks/bench_opensim_rajagopal_forces.py \\
        --repo /work/.mirror/opensim-org+opensim-models/repo [--states 2]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))  # the shared oracle helpers
FILE = "Models/Rajagopal/Rajagopal2016.osim"


def _load(path):
    from symbody.opensim import load_opensim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_opensim(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", help="bare git mirror of opensim-models")
    ap.add_argument("--file", default=FILE)
    ap.add_argument("--states", type=int, default=2)
    args = ap.parse_args()
    from systems.opensim_millard_worker import ask

    text = (subprocess.run(["git", "-C", args.repo, "show", f"HEAD:{args.file}"],
                           capture_output=True, text=True, check=True).stdout
            if args.repo else Path(args.file).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full.osim"
        full.write_text(text)
        removed = [x.name for x in _load(full).left_out if x.tag.endswith("Muscle")]
        for name in removed:
            text, k = re.subn(rf'\s*<(\w+Muscle) name="{name}">.*?</\1>', "", text, flags=re.S)
            assert k == 1, name
        path = Path(tmp) / "built.osim"
        path.write_text(text)
        c = time.process_time()
        model = _load(path)
        load = time.process_time() - c
        c = time.process_time()
        nm = model.numeric_model
        build = time.process_time() - c
        p = nm.constants_array(model.constants)
        n, ni = len(model.coordinates), len(model.u_ind)
        spec = [str(s.func) for s in model.eom.specifieds]
        names = [x[2:] for x in spec if x.startswith("e_")]
        extra = [str(s.func) for s in model.eom.extra_states]
        wrapped = [m for m in model.muscle_names if model.forces[m].path.wraps]
        print(f"removed on both sides: {removed}")
        print(f"dof {n} (independent {ni}), muscles with force {len(names)} "
              f"({len(wrapped)} over a wrap object), extra states {len(extra)}, "
              f"left out {[x.name for x in model.left_out]}")
        print(f"load_opensim {load:.1f} s CPU, numeric_model {build:.1f} s CPU")
        rng = np.random.default_rng(1)
        queries, states = [], []
        for _ in range(args.states):
            q, converged, _ = nm.project_coordinates(model.random_coordinates(rng) * 0.5, p)
            assert converged
            a, e = rng.uniform(0.05, 1, len(names)), rng.uniform(0, 1, len(names))
            Q, U = model.to_opensim_state(q, np.zeros(n))
            queries.append({"kind": "millard", "model": str(path), "Q": Q.tolist(),
                            "U": U.tolist(), "activations": dict(zip(names, a.tolist())),
                            "excitations": dict(zip(names, e.tolist())),
                            "fiber_scale": dict(zip(names,
                                                    rng.uniform(0.97, 1.03, len(names)).tolist()))})
            r = np.zeros(len(spec))
            r[[spec.index("e_" + m) for m in names]] = e
            if model.eom.derived_inputs is not None:       # stations placed at run time
                pp = model.path_parameters
                r[list(pp.indices)] = pp.values(q)
            states.append((q, r))
        scale = {el.name: el.number("optimal_fiber_length")
                 * el.number("max_contraction_velocity", 10.0) for el in model.spec.forces
                 if el.tag.endswith("Muscle")}
        for (q, r), ans in zip(states, ask(None, queries)):
            xe = model.extra_states_from_opensim(ans["state_values"])
            xd = nm.rhs(0.0, np.concatenate([q, np.zeros(ni), xe]), p, r)
            ud = np.array(ans["udot"])[list(model.simbody_index)][:ni]
            ours_a = [xd[n + ni + i] for i, x in enumerate(extra) if x.startswith("a_")]
            adot = np.array([ans["adot"][m] for m in names])
            ldot = max(abs(xd[n + ni + i] - ans["ldot"][x[3:]]) / scale[x[3:]]
                       for i, x in enumerate(extra) if x.startswith("lM_"))
            print(f"u' {np.abs(xd[n:n + ni] - ud).max() / np.abs(ud).max():.1e} relative, "
                  f"a' {np.abs(np.array(ours_a) - adot).max() / np.abs(adot).max():.1e}, "
                  f"fiber velocities {ldot:.1e} l_opt v_max")


if __name__ == "__main__":
    main()
