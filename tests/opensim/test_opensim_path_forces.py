"""``PathActuator`` and ``PathSpring`` (symbody.opensim.forces.path_forces) against OpenSim
4.6: u' at random states of gait10dof18musc with its muscles replaced by the two path
forces of opensim-models' ``subject01_metabolics_path_actuator.osim`` (``PlantarFlexAssist``,
a tibia-to-heel actuator) and ``subject01_metabolics_path_spring.osim``
(``BiarticularSpringDamper``, a femur-to-heel spring-damper over a conditional point),
copied from those files (CC BY 3.0, Ajay Seth and the OpenSim team)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.errors import InputError
from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")

_POINT = ('<PathPoint name="{n}"><socket_parent_frame>/bodyset/{b}</socket_parent_frame>'
          '<location>{x}</location></PathPoint>')
_ACTUATOR = ('<PathActuator name="PlantarFlexAssist"><GeometryPath name="geometrypath">'
             '<PathPointSet><objects>'
             + _POINT.format(n="pfa_r-P1", b="tibia_r", x="-0.004 -0.1 0.01")
             + _POINT.format(n="pfa_r-P2", b="calcn_r", x="0 0.0318395 -0.00544352")
             + '</objects></PathPointSet></GeometryPath><optimal_force>10</optimal_force>'
             '</PathActuator>')
_SPRING = ('<PathSpring name="BiarticularSpringDamper"><GeometryPath name="geometrypath">'
           '<PathPointSet><objects>'
           + _POINT.format(n="med_gas_r-P1", b="femur_r", x="-0.0217976 -0.450751 -0.0269601")
           + '<ConditionalPathPoint name="med_gas_r-P2"><socket_parent_frame>/bodyset/femur_r'
             '</socket_parent_frame><location>-0.0344172 -0.46142 -0.0295988</location>'
             '<socket_coordinate>/jointset/knee_r/knee_angle_r</socket_coordinate>'
             '<range>-0.785398 0.174533</range></ConditionalPathPoint>'
           + _POINT.format(n="med_gas_r-P3", b="calcn_r", x="0 0.0318395 -0.00544352")
           + '</objects></PathPointSet></GeometryPath><resting_length>{rest}</resting_length>'
             '<stiffness>10000</stiffness><dissipation>0.01</dissipation></PathSpring>')
_MUSCLE = re.compile(r"\s*<Millard2012EquilibriumMuscle name=\"\w+\">.*?"
                     r"</Millard2012EquilibriumMuscle>", re.S)


def _model_file(tmp_path: Path, rest: float) -> Path:
    text = _MUSCLE.sub("", (DATA / "gait10dof18musc.osim").read_text())
    text = re.sub(r"(<ForceSet name=\"forceset\">\s*<objects>)",
                  lambda m: m.group(1) + _ACTUATOR + _SPRING.format(rest=rest), text, count=1)
    assert "PathSpring" in text
    tmp_path.mkdir(exist_ok=True)
    out = tmp_path / "path_forces.osim"
    out.write_text(text)
    return out


def _load(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)      # nothing is left out
        return load_opensim(path)


@needs_opensim
def test_path_actuator_and_path_spring_agree_with_opensim(tmp_path):
    path = _model_file(tmp_path / "a", rest=0.40)
    model = _load(path)
    slack = _load(_model_file(tmp_path / "b", rest=10.0))       # the spring never pulls
    assert model.muscle_names == ("PlantarFlexAssist",)
    assert model.input_names == ("control_PlantarFlexAssist",)
    assert set(model.forces) == {"PlantarFlexAssist", "BiarticularSpringDamper"}
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    rng = np.random.default_rng(2)
    states, queries = [], []
    for _ in range(6):
        q, u, e = model.random_coordinates(rng), rng.uniform(-2, 2, n), rng.uniform(-1, 1)
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": {}, "excitations": {"PlantarFlexAssist": float(e)}})
        queries.append({"kind": "muscles", "Q": Q.tolist(), "names": ["PlantarFlexAssist"],
                        "coordinates": list(model.simbody_coordinate_names)})
        states.append((q, u, e))
    answers = ask_opensim(path, queries, without_forces=False)
    stretched = 0
    for (q, u, e), ans, paths in zip(states, answers[::2], answers[1::2]):
        x = np.concatenate([q, u])
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        ours = nm.rhs(0.0, x, p, [e])[n:]
        assert np.abs(ours - udot).max() <= 1e-9 * np.abs(udot).max()
        # the actuator matters: without its control u' moves beyond round-off
        assert np.abs(nm.rhs(0.0, x, p, [0.0])[n:] - ours).max() > 1e-6 * np.abs(udot).max()
        assert np.allclose(model.musculotendon_lengths(q), paths["lengths"], rtol=1e-12)
        arms = np.array(paths["moment_arms"])[:, list(model.simbody_index)]
        assert np.abs(model.moment_arms(q) - arms).max() <= 1e-12
        no_spring = slack.numeric_model.rhs(0.0, x, p, [e])[n:]
        stretched += np.abs(no_spring - ours).max() > 1e-6 * np.abs(udot).max()
    assert 0 < stretched < len(states)        # both sides of the spring's kink are checked


def test_path_spring_with_a_negative_parameter_is_refused_by_name(tmp_path):
    """A negative stiffness is an error naming the element and its line, not a spring that
    pushes."""
    path = _model_file(tmp_path, rest=0.40)
    path.write_text(path.read_text().replace("<stiffness>10000</stiffness>",
                                             "<stiffness>-10000</stiffness>"))
    with pytest.raises(InputError, match=r"BiarticularSpringDamper.*line \d+.*stiffness"):
        load_opensim(path)
