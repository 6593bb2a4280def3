"""HuntCrossleyForce (OpenSim's dynamic walker: six foot/knee/hip spheres on a platform, and
its CoordinateLimitForce joint stops; a 3.x bouncing block with a heel sphere, a joint limit
and a 3.x BushingForce, held on its two PointOnLineConstraints) and SmoothSphereHalfSpaceForce (OpenSim Moco's 2D walking model: heel
and toe spheres on the floor) against OpenSim 4.6: u' at random states
whose lowest sphere sinks 0.3 radius into the ground (to 1e-9 relative), the contacts'
generalized forces far from zero there, and one ContactRecord per contact in eom.contacts."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import symengine as se

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


def _without_muscles(text: str) -> str:
    """Moco's 2D walking model without its 18 muscles (the contacts are what is checked)."""
    return re.sub(r"<DeGrooteFregly2016Muscle name=.*?</DeGrooteFregly2016Muscle>\s*", "",
                  text, flags=re.S)


@pytest.fixture(scope="module", params=["walker", "gait2d", "block30000"])
def contact_model(request, tmp_path_factory):
    if request.param == "walker":
        path, height = DATA / "dynamic_walker.osim", "Pelvis_ty"
    elif request.param == "block30000":
        path, height = DATA / "bouncing_block_30000.osim", "yTranslation"
    else:
        path = tmp_path_factory.mktemp("gait2d") / "2D_gait_no_muscles.osim"
        path.write_text(_without_muscles((DATA / "2D_gait.osim").read_text()))
        height = "pelvis_ty"
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # nothing is left out
        model = load_opensim(path)
    return request.param, path, height, model


def _numbers(model, q, u) -> dict:
    """{symengine symbol: value} of the tree's coordinates and speeds at (q, u) (our order)."""
    Q, U = model.to_opensim_state(q, u)
    values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
    values.update(zip(model.tree_speeds, U))
    return {se.Symbol(k): values[a] for k, a in model.sympy_converter.names.items()
            if a in values}


def _contact_states(model, height: str, seed: int, count: int = 3) -> list:
    """(q, u) with random joint angles and speeds, the model lowered until its lowest sphere
    is 0.3 radius deep (the ground's normal is +y: the depths are linear in the height).
    A constrained model (the bouncing block) is put on its constraints first: their lines
    are vertical, so lowering it keeps it there."""
    records = model.eom.contacts
    radii = np.array([float(r.max_penetration) for r in records])
    depths = [d for f in model.forces.values() if hasattr(f, "depth") for d in f.depth]
    k = model.coordinate_names.index(height)
    rng = np.random.default_rng(seed)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    out = []
    for _ in range(count):
        q, u = model.random_coordinates(rng), rng.uniform(-0.1, 0.1, len(model.coordinates))
        q[k] = 0.0
        if model.q_dep:
            q, ok, _ = nm.project_coordinates(q, p)
            assert ok
            u = nm.full_speeds(q, u[:len(model.u_ind)], p)
        numbers = _numbers(model, q, u)
        d = np.array([float(e.subs(numbers)) for e in depths])
        j = int(np.argmax(d))                     # the lowest sphere, δ = d - q[k]
        q[k] = d[j] - 0.3 * radii[j]
        out.append((q, u))
    return out


@needs_opensim
def test_contact_forces_agree_with_opensim(contact_model):
    kind, path, height, model = contact_model
    expected = {"walker": ["LFootForce", "RFootForce", "LKneeForce", "RKneeForce", "LHipForce",
                           "RHipForce"],
                "gait2d": ["contactHeel_r", "contactHeel_l", "contactFront_r",
                           "contactFront_l"], "block30000": ["foot_contact_force"]}[kind]
    assert [r.name for r in model.eom.contacts] == expected
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    states = _contact_states(model, height, seed=4)
    queries = []
    for q, u in states:
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": {}, "excitations": {}})
    answers = ask_opensim(path, queries, without_forces=False)
    perm = list(model.simbody_index)
    r = np.zeros(len(model.eom.specifieds))
    contacts = [c for c in model.force_contributions if c.contacts]
    for (q, u), ans in zip(states, answers):
        udot = np.array(ans["udot"])[perm]
        if model.q_dep:                 # still on the constraints after lowering
            assert np.abs(nm.holonomic_residual(q, p)).max() < 1e-12
        ours = nm.accelerations(q, u, p, r=r)[0]
        assert np.abs(ours - udot).max() <= 1e-9 * np.abs(udot).max()
        # the contacts push: their generalized forces are far from zero at this state
        numbers = _numbers(model, q, u)
        push = max(abs(float(se.sympify(e).subs(numbers))) for c in contacts
                   for e in c.generalized)
        assert push > 1.0
