"""Every model of opensim-models through symbody.load_opensim, checked against OpenSim 4.6.

For each ``.osim`` file of the opensim-models repository, in a fresh process with a cold
kernel cache: formation time (``load_opensim``), compile time (``model.numeric_model`` and
the first ``rhs``), and the largest relative error (|ours - theirs|_max / |theirs|_max) at
3 random states within the coordinate ranges (constrained models: q_dep and the dependent
speeds put on the constraints by symbody first) of M(q) (``SimbodyMatterSubsystem.calcM``),
the generalized forces of gravity and of the velocity terms, q' and u' (the forces and
controllers removed on both sides: muscles are not built here), and the markers' positions
(absolute error, m).  Files that OpenSim or symbody refuse are listed with the reason.
With ``--contacts``, a model with contact forces (HuntCrossleyForce,
SmoothSphereHalfSpaceForce) also gets the column "u' contacts": u' with its contact forces
only (every other force taken out of the file on both sides), at the same number of random
states lowered along the vertical translation of the root until the deepest sphere is 0.3
radius deep, speeds in [-0.3, 0.3].

A second table checks each model with every force symbody builds ON on both sides (the
forces it leaves out removed from OpenSim's model by name, OpenSim's controllers removed: the
controls are given): ``muscles`` (built / OpenSim's muscles in the file), the forces left out
(count; their types in the note), formation and compile of that model, and the largest
relative errors of q', u', the activations' and fiber lengths' derivatives (OpenSim's
``realizeAcceleration`` with the controls set, states drawn by
``systems.opensim_oracle.muscle_derivative_queries``), the musculotendon lengths and the
moment arms (``computeMomentArm``, every muscle and coordinate) at the same number of states.

    PYTHONPATH=src:tests python benchmarks/bench_opensim.py --repo PATH [--match NAME]
        [--contacts] [--states N] [--shard K/N] [--out table.md]

``--repo``: a checkout (or bare git mirror) of github.com/opensim-org/opensim-models.
Needs the ``test`` extra (opensim).  Times are wall-clock seconds of the child process (the C compiler runs in child processes of its own) on whatever the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))  # the shared oracle helpers


def _relative(a, b) -> float:
    import numpy as np
    b = np.asarray(b, dtype=float)
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300)) if b.size else 0.0


def _errors(model, nm, osim, m, s, states: int, row: dict) -> dict:
    """The largest errors against OpenSim over ``states`` random states."""
    import numpy as np

    from systems.opensim_oracle import opensim_markers, opensim_terms

    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(0)
    errs: dict = {k: 0.0 for k in ("M", "gravity", "velocity", "qdot", "udot", "markers")}
    n = len(model.coordinates)
    for _ in range(states):
        q = model.random_coordinates(rng)
        if model.q_dep:
            q, ok, _ = nm.project_coordinates(q, p, tol=1e-13)
            if not ok:
                row["note"] = (row.get("note", "") + "; projection failed at a random state")
                continue
        u = nm.full_speeds(q, rng.uniform(-1, 1, len(model.u_ind)), p)
        ref = opensim_terms(osim, model, m, s, q, u)
        M, g_full = model.dynamic_terms(q, u)
        _, g_static = model.dynamic_terms(q, np.zeros(n))
        udot, _ = nm.accelerations(q, u, p)
        ours = {"M": M, "gravity": -g_static, "velocity": g_full - g_static,
                "qdot": nm.qdot(q, u, p), "udot": udot}
        for k, v in ours.items():
            errs[k] = max(errs[k], _relative(v, ref[k]))
        if model.markers:
            pm = opensim_markers(osim, model, m, s, q)
            errs["markers"] = max(errs["markers"], float(np.abs(model.marker_positions(q)
                                                                - pm).max()))
    return errs


def _without_forces() -> dict:
    """Builders that leave every force family out (OpenSim's side is compared without its
    forces too); the forces are counted as left out, as unsupported ones are."""
    from symbody.opensim import ForceContribution
    from symbody.opensim.forces import FORCE_BUILDERS, builder_for

    builder_for("")                      # registers the families

    def skip(element, ctx):
        return ForceContribution(left_out="not built here: compared without forces")

    return dict.fromkeys(FORCE_BUILDERS, skip)


CONTACT_FORCES = ("HuntCrossleyForce", "SmoothSphereHalfSpaceForce")


def _contacts_only(path: str) -> str | None:
    """A copy of the file whose ForceSet holds only its contact forces (None: it has none)."""
    import xml.etree.ElementTree as ET

    # ("HuntCrossleyForce::ContactParameters" is no XML name: "::" is put back on writing)
    text = Path(path).read_text().replace("::", "__colons__")
    tree = ET.ElementTree(ET.fromstring(text))
    found = False
    for objects in tree.getroot().iterfind(".//ForceSet/objects"):
        for el in list(objects):
            if el.tag in CONTACT_FORCES:
                found = found or el.findtext("appliesForce", "true").strip() != "false"
            else:
                objects.remove(el)
    for controllers in tree.getroot().iterfind(".//ControllerSet/objects"):
        for el in list(controllers):
            controllers.remove(el)
    if not found:
        return None
    out = Path(tempfile.mkdtemp(prefix="contacts-only-")) / Path(path).name
    out.write_text(ET.tostring(tree.getroot(), encoding="unicode").replace("__colons__", "::"))
    return str(out)


def _contact_errors(path: str, states: int, row: dict) -> float | None:
    """The largest relative error of u' with the contact forces only (module docstring)."""
    import numpy as np
    import symengine as se

    import opensim as osim
    from symbody.opensim import load_opensim
    from systems.opensim_oracle import opensim_model, opensim_terms

    only = _contacts_only(path)
    if only is None:
        return None
    model = load_opensim(only)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    off = [x.name for x in model.left_out if x.tag.endswith("Constraint")]
    m, s = opensim_model(osim, only, without_forces=False, constraints_off=off)
    depths = [d for f in model.forces.values() if hasattr(f, "depth") for d in f.depth]
    radii = np.array([float(r.max_penetration or 0.0) for r in model.eom.contacts])

    def depth(q, u):
        Q, U = model.to_opensim_state(q, u)
        values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
        values.update(zip(model.tree_speeds, U))
        numbers = {se.Symbol(k): values[a] for k, a in model.sympy_converter.names.items()
                   if a in values}
        return np.array([float(e.subs(numbers)) for e in depths])

    rng = np.random.default_rng(1)
    n = len(model.coordinates)
    q0 = model.default_state()[:n]
    # the root's translation along the ground's normal: the half-space contacts' depths fall
    # by as much as it rises (the spheres' pairs keep theirs)
    vertical, ground = None, None
    for k in range(n):
        if model.coordinates[k] not in model.q_ind:
            continue
        change = depth(q0 + 0.01 * np.eye(n)[k], 0 * q0) - depth(q0, 0 * q0)
        moved = np.isclose(change, -0.01, rtol=0, atol=1e-12)
        if moved.any() and np.all(moved | np.isclose(change, 0.0, rtol=0, atol=1e-12)):
            vertical, ground = k, moved
            break
    if vertical is None:
        row["note"] = row.get("note", "") + "; no vertical translation to lower the contacts"
        return None
    k = vertical
    worst = 0.0
    for _ in range(states):
        q = model.random_coordinates(rng)
        if model.q_dep:
            q, ok, _ = nm.project_coordinates(q, p, tol=1e-13)
        d = np.where(ground, depth(q, 0 * q), -np.inf)
        j = int(np.argmax(d))
        q[k] += d[j] - 0.3 * radii[j]
        u = nm.full_speeds(q, rng.uniform(-0.3, 0.3, len(model.u_ind)), p)
        ref = opensim_terms(osim, model, m, s, q, u)["udot"]
        udot, _ = nm.accelerations(q, u, p)
        worst = max(worst, _relative(udot, ref))
    return worst


def _opensim_with_forces(osim, path: str, model):
    """OpenSim's model of ``path`` with the forces symbody left out removed (by name), its
    controllers removed (the controls are given) and the constraints symbody leaves out not
    enforced; (m, s, the forces left out as (tag, name), OpenSim's muscle count)."""
    from systems.opensim_oracle import quiet

    quiet(osim)
    m = osim.Model(str(path))
    fs = m.updForceSet()
    in_set = {fs.get(i).getName() for i in range(fs.getSize())}
    left = [(x.tag, x.name) for x in model.left_out if x.name in in_set]
    for _tag, name in left:
        fs.remove(fs.getIndex(name))
    m.updControllerSet().clearAndDestroy()
    for x in model.left_out:
        if x.tag.endswith("Constraint"):
            m.updConstraintSet().get(x.name).set_isEnforced(False)
    s = m.initSystem()
    return m, s, left, m.getMuscles().getSize()


def _finite_relative(a, b) -> tuple:
    """(:func:`_relative` over the entries finite on both sides, how many entries are finite
    on one side only: OpenSim's 0/0 moment arms about a coupler's coordinate)."""
    import numpy as np
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    fa, fb = np.isfinite(a), np.isfinite(b)
    both = fa & fb
    return _relative(a[both], b[both]), int((fa != fb).sum())


def _forces_errors(path: str, states: int, row: dict) -> None:
    """Every force symbody builds ON on both sides (those it leaves out removed on both):
    the columns ``muscles``, ``forces_left_out``, the formation and compile times, and the
    largest relative errors of q', u', the activations' and fiber lengths' derivatives, the
    musculotendon lengths and the moment arms (``computeMomentArm``, every muscle and
    coordinate) over ``states`` random states drawn by
    :func:`systems.opensim_oracle.muscle_derivative_queries` (speeds in [-2, 2],
    activations and excitations in [0.01, 1], fiber lengths 0.97-1.03 times OpenSim's
    equilibrium; q_dep and the dependent speeds put on the constraints; the controls of the
    other actuators in [0.01, 1])."""
    from collections import Counter

    import numpy as np

    import opensim as osim
    from symbody.opensim import load_opensim
    from symbody.opensim.model import _ident
    from symbody.opensim.muscle_states import opensim_state_names
    from systems.opensim_oracle import muscle_derivative_queries
    from systems.opensim_worker import _muscle_derivatives, _muscles

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_opensim(path)
    row["formation_forces"] = time.perf_counter() - t0
    m, s, left, in_file = _opensim_with_forces(osim, path, model)
    muscles = {m.getMuscles().get(i).getName() for i in range(in_file)}
    row["muscles"] = f"{len(muscles & set(model.muscle_names))}/{in_file}"
    row["forces_left_out"] = len(left)
    if left:
        kinds = Counter(tag for tag, _ in left)
        row["forces_note"] = "left out: " + ", ".join(f"{k} x{v}" for k, v in kinds.items())
    t0 = time.perf_counter()
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    # (default_state is [q, u_ind]; the muscles' states follow)
    x0 = np.concatenate([model.default_state(), np.full(len(model.eom.extra_states), 0.5)])
    x0 = nm.consistent_state(x0, p) if model.q_dep else x0
    r0 = (model.specified_values(x0[:len(model.coordinates)])
          if model.eom.derived_inputs is not None else np.zeros(len(model.eom.specifieds)))
    nm.rhs(0.0, x0, p, r0)
    row["compile_forces"] = time.perf_counter() - t0

    names = opensim_state_names(model)
    with_a = {n.split("/")[2] for n in names if n.endswith("/activation")}
    with_l = {n.split("/")[2] for n in names if n.endswith("/fiber_length")}
    arr = m.getStateVariableNames()
    theirs = [arr.get(i) for i in range(arr.size()) if arr.get(i).startswith("/forceset/")]
    missing = [x for x in theirs if x not in names]
    if missing:
        row["forces_note"] = (row.get("forces_note", "") + f"; OpenSim states symbody has not: "
                              f"{len(missing)} ({missing[0]})").lstrip("; ")
    actuators = m.getActuators()
    controls = [actuators.get(i).getName() for i in range(actuators.getSize())]
    inputs = list(model.input_names)
    # symbody's input of actuator k: e_<k> (muscles) or control_<k> (other actuators)
    by_input = {f"{pre}{_ident(k)}": k for k in controls for pre in ("e_", "control_")}
    rng = np.random.default_rng(0)
    queries, drawn = muscle_derivative_queries(model, rng, states)
    n, pi = len(model.coordinates), len(model.u_ind)
    errs = dict.fromkeys(("qdot_f", "udot_f", "adot", "ldot", "lengths", "arms"), 0.0)
    path_names = [k for k in model.muscle_names
                  if osim.PathActuator.safeDownCast(m.getForceSet().get(k)) is not None]
    rows = [list(model.muscle_names).index(k) for k in path_names]
    nan_arms = 0
    for qy, (q, u, e) in zip(queries, drawn):
        if model.q_dep:
            q, ok, _ = nm.project_coordinates(q, p, tol=1e-13)
            u = nm.full_speeds(q, u[:pi], p)
            Q, U = model.to_opensim_state(q, u)
            qy["Q"], qy["U"] = Q.tolist(), U.tolist()
        qy["activations"] = {k: v for k, v in qy["activations"].items() if k in with_a}
        qy["fiber_length_factors"] = {k: v for k, v in qy["fiber_length_factors"].items()
                                      if k in with_l}
        given = dict(zip(model.muscle_names, e))
        given.update((k, float(rng.uniform(0.01, 1))) for k in controls if k not in given)
        qy["excitations"] = {k: v for k, v in given.items() if k in controls}
        ans = _muscle_derivatives(osim, m, s, qy)
        z = model.extra_states_from_opensim(ans["states"])
        zdot = model.extra_states_from_opensim(ans["derivatives"])
        missing_inputs = [k for k in inputs if by_input.get(k) not in given]
        if missing_inputs:
            raise RuntimeError(f"input {missing_inputs[0]!r} is no OpenSim actuator")
        e_in = np.array([given[by_input[k]] for k in inputs])
        r = model.specified_values(q, e_in) if model.eom.derived_inputs is not None else e_in
        udot, _ = nm.accelerations(q, u, p, r=r, extra=z)
        xdot = nm.rhs(0.0, np.concatenate([q, u[:pi], z]), p, r)
        qdot_os = np.array(ans["qdot"])[list(model.simbody_q_slots)][list(model.simbody_index)]
        udot_os = np.array(ans["udot"])[list(model.simbody_index)]
        a_rows = [i for i, k in enumerate(names) if k.endswith("/activation")]
        l_rows = [i for i, k in enumerate(names) if k.endswith("/fiber_length")]
        for key, ours, ref in (("qdot_f", xdot[:n], qdot_os), ("udot_f", udot, udot_os),
                               ("adot", xdot[n + pi:][a_rows], zdot[a_rows]),
                               ("ldot", xdot[n + pi:][l_rows], zdot[l_rows])):
            errs[key] = max(errs[key], _relative(ours, ref))
        if path_names:
            Q, _ = model.to_opensim_state(q, u)
            geo = _muscles(osim, m, s, {"Q": Q.tolist(), "names": path_names,
                                        "coordinates": list(model.coordinate_names)})
            L = model.musculotendon_lengths(q)[rows]
            A = model.moment_arms(q)[rows]
            errs["lengths"] = max(errs["lengths"], _relative(L, geo["lengths"]))
            err, one_sided = _finite_relative(A, geo["moment_arms"])
            errs["arms"] = max(errs["arms"], err)
            nan_arms += one_sided
    if nan_arms:
        row["forces_note"] = (row.get("forces_note", "") + f"; {nan_arms} moment arms finite "
                              "on one side only").lstrip("; ")
    if not path_names:
        errs["lengths"] = errs["arms"] = "-"
    if not names:
        errs["adot"] = errs["ldot"] = "-"
    elif not any(k.endswith("/fiber_length") for k in names):
        errs["ldot"] = "-"
    row.update(errs)


def one(path: str, states: int, contacts: bool = False) -> dict:
    """Check one model in this process; a dict of the row."""
    import opensim as osim
    from symbody.errors import SymbodyError
    from symbody.opensim import load_opensim
    from systems.opensim_oracle import opensim_model, quiet

    quiet(osim)
    row: dict = {}
    try:
        opensim_model(osim, path)
    except Exception as exc:  # noqa: BLE001 (OpenSim's own refusal, reported as it is)
        row["error"] = f"OpenSim: {str(exc).splitlines()[0][:150]}"
        return row
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = load_opensim(path, force_builders=_without_forces())
    except SymbodyError as exc:
        row["error"] = f"refused: {str(exc)[:200]}"
        return row
    row["formation"] = time.perf_counter() - t0
    if model.kinematics_only:       # no dynamics to compare (bench_opensim_wrist.py: paths)
        row["error"] = (f"kinematics only: {len(model.massless_bodies)} bodies move without "
                        "mass (model.massless_bodies); lengths and moment arms: "
                        "bench_opensim_wrist.py")
        return row
    row["left_out"] = len([x for x in model.left_out if not x.reason.startswith(("disabled",
                                                                                 "not enforced"))])
    row["warnings"] = len(caught)
    row["dof"] = len(model.coordinates)
    row["dep"] = len(model.q_dep)
    row["bodies"] = len(model.tree.nodes) - 1
    # constraints symbody leaves out are switched off in OpenSim too (named in the table)
    off = [x.name for x in model.left_out if x.tag.endswith("Constraint")]
    if off:
        row["note"] = "not enforced on both sides: " + ", ".join(
            f"{x.tag} {x.name}" for x in model.left_out if x.tag.endswith("Constraint"))
    m, s = opensim_model(osim, path, constraints_off=off)
    t0 = time.perf_counter()
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    x0 = nm.consistent_state(model.default_state(), p) if model.q_dep else model.default_state()
    nm.rhs(0.0, x0, p)
    row["compile"] = time.perf_counter() - t0
    row.update(_errors(model, nm, osim, m, s, states, row))
    if max(row["velocity"], row["udot"]) > 1e-9:
        # Simbody's approximate velocity terms of CustomJoints whose rotations share a
        # coordinate: reproduced, the rest must agree to round-off
        sim = load_opensim(path, custom_joint_bias="simbody", force_builders=_without_forces())
        errs = _errors(sim, sim.numeric_model, osim, m, s, states, row)
        row["velocity_simbody"], row["udot_simbody"] = errs["velocity"], errs["udot"]
    if contacts:
        err = _contact_errors(path, states, row)
        if err is not None:
            row["udot_contacts"] = err
    try:
        _forces_errors(path, states, row)
    except Exception as exc:  # noqa: BLE001 (reported in the forces table, the rest stands)
        row["forces_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return row


def _files(repo: Path) -> tuple[Path, list[str]]:
    """(a folder holding the files, their relative paths): a checkout as it is, a bare mirror
    through ``git archive``."""
    if (repo / "Models").is_dir():
        return repo, sorted(str(p.relative_to(repo)) for p in repo.rglob("*.osim"))
    tmp = Path(tempfile.mkdtemp(prefix="opensim-models-"))
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    names = [n for n in names if n.endswith(".osim")]
    for n in names:
        data = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{n}"], capture_output=True,
                              check=True).stdout
        (tmp / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp / n).write_bytes(data)
    return tmp, sorted(names)


def _note(r: dict) -> str:
    out = r.get("note", "")
    if "udot_contacts" in r:
        out += f"{'; ' if out else ''}u' contacts {r['udot_contacts']:.1e}"
    if "velocity_simbody" in r:
        out += (f"{'; ' if out else ''}with custom_joint_bias=\"simbody\": velocity "
                f"{r['velocity_simbody']:.1e}, u' {r['udot_simbody']:.1e}")
    return out


def _fmt(v) -> str:
    return f"{v:.1e}" if isinstance(v, float) else str(v)



def _forces_table(rows: list) -> str:
    """The table of the models with every force symbody builds (``_forces_errors``)."""
    head = ("| file | muscles | forces left out | formation s | compile s | q' | u' | a' | "
            "fiber length' | lengths | moment arms | note |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    lines = [head]
    for r in rows:
        if "error" in r or "forces_error" in r:
            lines.append(f"| {r['file']} | {r.get('error') or r['forces_error']} |||||||||||")
            continue
        lines.append(f"| {r['file']} | {r['muscles']} | {r['forces_left_out']} | "
                     f"{r['formation_forces']:.2f} | {r['compile_forces']:.2f} | " + " | ".join(
                         _fmt(r[k]) for k in ("qdot_f", "udot_f", "adot", "ldot", "lengths",
                                              "arms")) + f" | {r.get('forces_note', '')} |")
    return "\n".join(lines) + "\n"

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=os.environ.get("OPENSIM_MODELS",
                                                     "/work/.mirror/opensim-org+opensim-models/repo"))
    ap.add_argument("--match", default="")
    ap.add_argument("--states", type=int, default=3)
    ap.add_argument("--contacts", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--shard", default="0/1", help="K/N: only the files k with k %% N == K "
                    "(run N shards side by side, join their --out tables)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.states, args.contacts)))
        return
    folder, names = _files(Path(args.repo))
    rows = []
    shard, shards = (int(x) for x in args.shard.split("/"))
    names = [n for k, n in enumerate(names) if k % shards == shard]
    for name in names:
        if args.match and args.match not in name:
            continue
        env = dict(os.environ, SYMBODY_CACHE_DIR=tempfile.mkdtemp(prefix="sb-cache-"),
                   PYTHONPATH=f"{HERE.parents[0] / 'src'}:{HERE.parents[0] / 'tests'}")
        try:
            out = subprocess.run([sys.executable, __file__, "--one", str(folder / name),
                                  "--states", str(args.states)]
                                 + (["--contacts"] if args.contacts else []),
                                 capture_output=True, text=True,
                                 env=env, timeout=1800, cwd=tempfile.gettempdir())
            lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            err = out.stderr.strip().splitlines() or ["?"]
            row = json.loads(lines[-1]) if lines else {"error": "crashed: " + err[-1][:150],
                                                       "traceback": err[-8:]}
        except subprocess.TimeoutExpired:
            row = {"error": "timed out (30 min)"}
        row["file"] = name
        rows.append(row)
        print(json.dumps(row), flush=True)
    head = ("| file | dof (dep.) | bodies | left out | formation s | compile s | M | gravity | "
            "velocity | q' | u' | markers m | note |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
            "---:|---:|---:|---|")
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['file']} | {r['error']} ||||||||||||")
            continue
        lines.append(f"| {r['file']} | {r['dof']} ({r['dep']}) | {r['bodies']} | {r['left_out']} | "
                     f"{r['formation']:.2f} | {r['compile']:.2f} | " + " | ".join(
                         _fmt(r[k]) for k in ("M", "gravity", "velocity", "qdot", "udot",
                                              "markers")) + f" | {_note(r)} |")
    text = "\n".join(lines) + "\n\n" + _forces_table(rows)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
