"""model.system carries the contact forces: on OpenSim's dynamic walker (its left foot's
HuntCrossleyForce sphere on a platform welded to the ground; the other five spheres and the
CoordinateLimitForces taken out, for the test's time), the generalized active forces of the System's contact loads, Σ F · ∂v_P/∂u
by SymPy's vector algebra (partial velocities of the loads' points), equal the contacts'
generalized forces in model.eom at states whose lowest sphere sinks 0.3 radius into the
platform."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import symengine as se
from sympy.physics.mechanics import Force, partial_velocity

import symbody as sb
from symbody.compilation import make_function
from symbody.opensim import OpenSimImportWarning, load_opensim

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"


def _walker(tmp_path):
    text = re.sub(r"<CoordinateLimitForce name=.*?</CoordinateLimitForce>\s*", "",
                  (DATA / "dynamic_walker.osim").read_text(), flags=re.S)
    text = re.sub(r'<HuntCrossleyForce name="(RFoot|[LR]Knee|[LR]Hip)Force">.*?</HuntCrossleyForce>\s*',
                  "", text, flags=re.S)
    path = tmp_path / "walker_contacts_only.osim"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # nothing is left out
        return load_opensim(path)


def _contact_states(model, count: int) -> list:
    """(q, u) at random joint angles and speeds, the pelvis lowered until the lowest sphere
    is 0.3 radius deep (the depths are linear in the pelvis height)."""
    radii = [float(r.max_penetration) for r in model.eom.contacts]
    depths = [d for f in model.forces.values() for d in getattr(f, "depth", ())]
    k = model.coordinate_names.index("Pelvis_ty")
    rng = np.random.default_rng(8)
    out = []
    for _ in range(count):
        q, u = model.random_coordinates(rng), rng.uniform(-0.5, 0.5, len(model.coordinates))
        q[k] = 0.0
        Q, U = model.to_opensim_state(q, u)
        values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
        numbers = {se.Symbol(s): values[a] for s, a in model.sympy_converter.names.items()
                   if a in values}
        d = np.array([float(e.subs(numbers)) for e in depths])
        j = int(np.argmax(d))
        q[k] = d[j] - 0.3 * radii[j]
        out.append((q, u))
    return out


def _values(model, q, u) -> dict:
    Q, U = model.to_opensim_state(q, u)
    values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
    values.update(zip(model.tree_speeds, U))
    return {se.Symbol(k): values[a] for k, a in model.sympy_converter.names.items()
            if a in values}


def test_system_loads_carry_the_contacts(tmp_path):
    model = _walker(tmp_path)
    system = model.system
    N = system.frame
    bodies = [b for b in system.bodies if b.mass != 0]
    # gravity on each body with mass, then each sphere's force and the platform's reaction
    assert [r.name for r in model.eom.contacts] == ["LFootForce"]
    assert len(system.loads) == len(bodies) + 2 * len(model.eom.contacts)
    assert all(isinstance(f, Force) for f in system.loads)
    contact_loads = system.loads[len(bodies):]
    speeds = list(model.speeds)
    forces = [list(ld.force.to_matrix(N)) for ld in contact_loads]
    partials = [[list(v.to_matrix(N)) for v in partial_velocity([ld.point.vel(N)], speeds, N)[0]]
                for ld in contact_loads]
    f = make_function([list(model.coordinates) + speeds], [forces, partials], name="contacts")
    contributions = [c for c in model.force_contributions if c.contacts]
    perm = list(model.simbody_index)
    for q, u in _contact_states(model, 2):
        F, V = (np.asarray(a, dtype=float) for a in f(np.concatenate([q, u])))
        generalized = np.einsum("la,lka->k", F.reshape(len(forces), 3),
                                V.reshape(len(forces), len(speeds), 3))
        numbers = _values(model, q, u)
        expected = sum(np.array([float(se.sympify(e).subs(numbers)) for e in c.generalized])
                       for c in contributions)[perm]
        assert np.abs(expected).max() > 1.0
        np.testing.assert_allclose(generalized, expected, rtol=0,
                                   atol=1e-10 * np.abs(expected).max())


def test_system_eom_with_contacts_equals_eom(tmp_path):
    """Kane's equations of model.system with its contact loads (formed in symengine from the
    loads' SymPy expressions node by node: no SymPy rebuild of the force law's Piecewise)
    give model.eom's u' at states in contact."""
    model = _walker(tmp_path)
    other = sb.compile(model.system_eom(), constants=list(model.constants))
    nm = model.numeric_model
    n = len(model.coordinates)
    for q, u in _contact_states(model, 3):
        x = np.concatenate([q, u])
        a = nm.rhs(0.0, x, nm.constants_array(model.constants))
        b = other.rhs(0.0, x, other.constants_array(model.constants))
        assert np.abs(a[n:]).max() > 1.0
        assert np.abs(a - b).max() <= 1e-10 * np.abs(a).max()
