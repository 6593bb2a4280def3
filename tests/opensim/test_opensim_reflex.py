"""OpenSim's ToyReflexController (:mod:`symbody.opensim.reflex`) against OpenSim 4.6, on
Tug of War (two Millard muscles, rigid tendons, one slider) with two reflex controllers
(one listing both muscles, one ``ALL``) and a PrescribedController on one of the same
muscles: the controls at random states (``getControl`` after realizeAcceleration) to 1e-12,
the state derivatives to 1e-9 relative, and a 1 s simulation in compiled steps against
OpenSim's Manager; what OpenSim refuses, by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError
from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")

CONTROLLERS = """<ControllerSet name="controllerset">
			<objects>
				<ToyReflexController name="stretch">
					<actuator_list>LeftMuscle RightMuscle</actuator_list>
					<gain>0.85</gain>
				</ToyReflexController>
				<ToyReflexController name="everyone">
					<actuator_list>ALL</actuator_list>
					<gain>0.3</gain>
				</ToyReflexController>
				<ToyReflexController name="off">
					<enabled>false</enabled>
					<actuator_list>RightMuscle</actuator_list>
					<gain>50</gain>
				</ToyReflexController>
				<PrescribedController name="drive">
					<actuator_list>RightMuscle</actuator_list>
					<FunctionSet name="ControlFunctions">
						<objects>
							<Sine name="a">
								<amplitude>0.2</amplitude>
								<omega>6</omega>
								<phase>0.3</phase>
								<offset>0.3</offset>
							</Sine>
						</objects>
					</FunctionSet>
				</PrescribedController>
			</objects>
			<groups />
		</ControllerSet>"""


def reflex_text() -> str:
    """Tug_of_War_Millard, tendons rigid, LeftMuscle with its own l_opt and v_max (so that
    the two normalisations differ), and the controllers above."""
    text = (DATA / "Tug_of_War_Millard.osim").read_text()
    for name in ("RightMuscle", "LeftMuscle"):
        tag = f'<Millard2012EquilibriumMuscle name="{name}">'
        text = text.replace(tag, tag + "<ignore_tendon_compliance>true</ignore_tendon_compliance>")
    left = text.index('<Millard2012EquilibriumMuscle name="LeftMuscle">')
    text = text[:left] + text[left:].replace(
        "<optimal_fiber_length>0.10000000000000001</optimal_fiber_length>",
        "<optimal_fiber_length>0.12</optimal_fiber_length>", 1).replace(
        "<max_contraction_velocity>10</max_contraction_velocity>",
        "<max_contraction_velocity>8</max_contraction_velocity>", 1)
    start = text.index("<ControllerSet")
    end = text.index("</ControllerSet>") + len("</ControllerSet>")
    return text[:start] + CONTROLLERS + text[end:]


@pytest.fixture(scope="module")
def tug(tmp_path_factory):
    path = tmp_path_factory.mktemp("reflex") / "tug_of_war_reflex.osim"
    path.write_text(reflex_text())
    with pytest.warns(OpenSimImportWarning, match=r"ToyReflexController 'stretch' \(line \d+, "
                      r"2 muscle\(s\), gain 0.85\)"):
        model = load_opensim(path)
    return path, model


@needs_opensim
def test_reflex_controls_and_derivatives_agree_with_opensim(tug):
    path, model = tug
    assert list(model.controllers) == ["stretch", "everyone", "off", "drive"]
    assert model.controllers["everyone"].actuators == ("RightMuscle", "LeftMuscle")
    assert any(x.name == "off" and x.reason.startswith("disabled") for x in model.left_out)
    controls = model.controls
    rng = np.random.default_rng(7)
    times = (0.1, 0.35, 0.6, 0.9)
    states = [(rng.uniform(-0.1, 0.1, 1), np.array([s * rng.uniform(0.05, 2)]),
               rng.uniform(0.05, 1, 2)) for s in (1, -1, 1, -1)]
    queries = []
    for t, (q, u, a) in zip(times, states):
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "controlled_derivatives", "t": t, "Q": Q.tolist(),
                        "U": U.tolist(), "activations": dict(zip(model.muscle_names, a.tolist())),
                        "fiber_length_factors": {}})
    answers = ask_opensim(path, queries, without_forces=False)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    exprs = model.controls.expressions()
    import sympy as sm
    f = sm.lambdify([sm.Symbol("t"), list(model.eom.states)],
                    [exprs[n] for n in model.input_names], "math")
    reflex_seen = set()
    for t, (q, u, a), ans in zip(times, states, answers):
        xe = model.extra_states_from_opensim(ans["states"])
        assert np.array_equal(xe, a)
        x = np.concatenate([q, u, xe])
        ours = controls(t, x)
        ref = np.array([ans["controls"][n[2:]] for n in model.input_names])
        assert np.abs(ours - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())
        assert np.abs(np.array(f(t, x)) - ours).max() <= 1e-13
        # the stretched muscle gets the reflex (both controllers), the other none
        drive = 0.3 + 0.2 * np.sin(6 * t + 0.3)
        reflex = ref - np.array([0.0, drive])[[model.input_names.index("e_LeftMuscle"),
                                              model.input_names.index("e_RightMuscle")]]
        reflex_seen |= {i for i in range(2) if reflex[i] > 1e-3}
        assert (np.abs(reflex) < 1e-15).sum() == 1
        xdot = nm.rhs(t, x, p, ours)
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        adot = np.array([ans["derivatives"][f"/forceset/{m}/activation"]
                         for m in model.muscle_names])
        assert np.abs(xdot[1:2] - udot).max() <= 1e-9 * np.abs(udot).max()
        assert np.abs(xdot[2:] - adot).max() <= 1e-9 * np.abs(adot).max()
    assert reflex_seen == {0, 1}
    with pytest.raises(InputError, match="ToyReflexController 'stretch'.*give x"):
        controls(0.5)


@needs_opensim
def test_reflex_simulation_in_compiled_steps_moves_as_opensims_manager(tug,
                                                                         compiled_steps_taken):
    """1 s from a moving start with the reflexes running: ``model.controls.expressions()``
    in compiled steps, to OpenSim's Manager's end state (both at tight tolerances)."""
    path, model = tug
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    q0, u0 = np.array([0.02]), np.array([0.8])
    Q, U = model.to_opensim_state(q0, u0)
    start, end = ask_opensim(path, [{"kind": "default_state"},
                                    {"kind": "integrate", "Q": Q.tolist(), "U": U.tolist(),
                                     "t": 1.0, "accuracy": 1e-10}],
                             without_forces=False)
    # (OpenSim's Manager starts from the default activations, the coordinates set)
    x0 = np.concatenate([q0, u0, model.extra_states_from_opensim(start["states"])])
    traj = sb.simulate(nm, (0.0, 1.0), x0, p, specifieds=model.controls.expressions(),
                       solver=sb.Solver(rtol=1e-11, atol=1e-12), t_eval=[0.5, 1.0])
    assert compiled_steps_taken == [True] and traj.status == 0
    q_end, u_end = model.from_opensim_state(end["Q"], end["U"])
    z_end = model.extra_states_from_opensim(end["states"])
    moved = abs(traj.q[-1, 0] - x0[0])
    assert moved > 1e-3
    assert abs(traj.q[-1, 0] - q_end[0]) <= 1e-6 * moved
    assert np.abs(traj.x[-1, 2:] - z_end).max() <= 1e-6


def test_reflex_controllers_refused_by_name():
    """OpenSim refuses a ToyReflexController driving a non-muscle actuator; so does symbody."""
    text = (DATA / "double_pendulum_20302.osim").read_text()
    start = text.index("<ControllerSet")
    end = text.index("</ControllerSet>") + len("</ControllerSet>")
    bad = """<ControllerSet name="Controllers"><objects>
        <ToyReflexController name="c"><actuator_list>Torq1</actuator_list><gain>0.85</gain>
        </ToyReflexController></objects></ControllerSet>"""
    with pytest.raises(InputError, match=r"ToyReflexController name=.c.*'Torq1'.*not a muscle"):
        load_opensim(text[:start] + bad + text[end:])
