"""The controllers of opensim-models' ToyLanding models (the only files of the repository
with controllers) against OpenSim 4.6: ``model.controls(t, x)`` at random states against
OpenSim's controls (``getControl`` after realizeAcceleration, every muscle) and the state
derivatives (q', u', the activations' and fiber lengths' derivatives) with the controllers
on, against OpenSim's at the same state (random q within the ranges, u in [-2, 2],
activations in [0.01, 1], fiber lengths at OpenSim's equilibrium).

Each file twice: as it is (its ToyReflexController ``Reflexes`` on 70 muscles, gain 0.85,
runs; its two PrescribedControllers ``R-inverter-controls`` and ``R-everter-controls`` are
disabled) and with them enabled (``<enabled>true</enabled>``: constant controls 0.1 and 0.3
on nine muscles, added to the reflexes).

    python benchmarks/bench_opensim_controllers.py [--repo PATH]

``--repo``: a checkout or bare git mirror of github.com/opensim-org/opensim-models.  The
opensim package must be installed (the ``test`` extra); OpenSim answers in a process of its
own (``tests/systems/opensim_worker.py``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from symbody.opensim import OpenSimImportWarning, load_opensim  # noqa: E402
from symbody.opensim.muscle_states import opensim_state_names  # noqa: E402
from systems.opensim_oracle import ask_opensim  # noqa: E402

FILES = ("ToyLandingModel", "ToyLandingModel_AFO", "ToyLandingModel_activeAFO")
DERIVATIVE_TIMES = (0.1, 0.45, 0.9)


def _text(repo: str, name: str) -> str:
    rel = f"Models/ToyLanding/{name}.osim"
    if (Path(repo) / rel).exists():
        return (Path(repo) / rel).read_text()
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{rel}"], check=True,
                          capture_output=True, text=True).stdout


def _check(path: Path, rng) -> dict:
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OpenSimImportWarning)
        model = load_opensim(path)
    formation = time.perf_counter() - t0
    note = " | ".join(str(w.message) for w in caught if "controller" in str(w.message))
    names = list(model.muscle_names)
    inputs = [model.input_names.index(f"e_{m}") for m in names]
    t1 = time.perf_counter()
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    x0 = np.concatenate([model.default_state(), np.full(len(model.eom.extra_states), 0.5)])
    x0 = nm.consistent_state(x0, p) if model.q_dep else x0
    nm.rhs(0.0, x0, p, model.specified_values(x0[:len(model.coordinates)],
                                              model.controls(0.0, x0)))
    compile_time = time.perf_counter() - t1
    n, pi = len(model.coordinates), len(model.u_ind)
    queries, states = [], []
    for t in DERIVATIVE_TIMES:
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        if model.q_dep:         # on the constraints
            q, _, _ = nm.project_coordinates(q, p, tol=1e-13)
            u = nm.full_speeds(q, u[:pi], p)
        a = rng.uniform(0.01, 1, len(names))
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "controlled_derivatives", "t": t, "Q": Q.tolist(),
                        "U": U.tolist(), "activations": dict(zip(names, a.tolist())),
                        "fiber_length_factors": {}})
        states.append((t, q, u))
    answers = ask_opensim(path, queries, without_forces=False)
    ours, ref, reflexed, call = [], [], 0, 0.0
    for (t, q, u), ans in zip(states, answers):
        x = np.concatenate([q, u[:pi], model.extra_states_from_opensim(ans["states"])])
        t2 = time.perf_counter()
        c = model.controls(t, x)
        call = time.perf_counter() - t2
        ours.append(c[inputs])
        ref.append([ans["controls"][m] for m in names])
        reflexed += int(sum(v > 0 for v in ref[-1]))
    ours, ref = np.array(ours), np.array(ref)
    row = {"formation": formation, "compile": compile_time,
           "driven": len(model.controls.driven), "controls": float(np.abs(ours - ref).max()),
           "max_control": float(ref.max()), "note": note, "nonzero": reflexed,
           "call": call}
    state_names = opensim_state_names(model)
    a_rows = [i for i, k in enumerate(state_names) if k.endswith("/activation")]
    l_rows = [i for i, k in enumerate(state_names) if k.endswith("/fiber_length")]
    worst = {"qdot": 0.0, "udot": 0.0, "adot": 0.0, "fiber_velocity": 0.0}
    for (t, q, u), ans in zip(states, answers):
        z = model.extra_states_from_opensim(ans["states"])
        zdot = model.extra_states_from_opensim(ans["derivatives"])
        r = model.specified_values(q, model.controls(t, np.concatenate([q, u[:pi], z])))
        udot, _ = nm.accelerations(q, u, p, r=r, extra=z, t=t)
        xdot = nm.rhs(t, np.concatenate([q, u[:pi], z]), p, r)
        qdot = np.array(ans["qdot"])[list(model.simbody_q_slots)][list(model.simbody_index)]
        udot_os = np.array(ans["udot"])[list(model.simbody_index)]
        for key, mine, theirs in (("qdot", xdot[:n], qdot), ("udot", udot, udot_os),
                                  ("adot", xdot[n + pi:][a_rows], zdot[a_rows]),
                                  ("fiber_velocity", xdot[n + pi:][l_rows], zdot[l_rows])):
            worst[key] = max(worst[key],
                             float(np.abs(mine - theirs).max() / np.abs(theirs).max()))
    row.update(worst)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="*", default=list(FILES))
    ap.add_argument("--repo", default=os.environ.get(
        "OPENSIM_MODELS", "/work/.mirror/opensim-org+opensim-models/repo"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="toylanding-"))
    rng = np.random.default_rng(11)
    print("| file | controllers | inputs driven | controls max abs err (max control) | "
          "controls > 0 | q' | u' | a' | fiber length' | formation s | compile s | "
          "controls(t, x) s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    notes = []
    for name in args.files:
        text = _text(args.repo, name)
        assert text.count("<enabled>false</enabled>") == 2
        for label, variant in (("as in the file (disabled)", text),
                               ("enabled", text.replace("<enabled>false</enabled>",
                                                        "<enabled>true</enabled>"))):
            path = tmp / f"{name}_{label.split()[0]}.osim"
            path.write_text(variant)
            r = _check(path, rng)
            notes.append(f"{name} ({label}): {r['note']}")
            print(f"| {name}.osim | {label} | {r['driven']} | {r['controls']:.1e} "
                  f"({r['max_control']:g}) | {r['nonzero']} | {r['qdot']:.1e} | "
                  f"{r['udot']:.1e} | {r['adot']:.1e} | {r['fiber_velocity']:.1e} | "
                  f"{r['formation']:.2f} | {r['compile']:.2f} | {r['call']:.1e} |",
                  flush=True)
    print()
    for n in notes:
        print("-", n)


if __name__ == "__main__":
    main()
