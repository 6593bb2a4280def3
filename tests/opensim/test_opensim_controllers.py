"""OpenSim's PrescribedController (:mod:`symbody.opensim.controllers`) against OpenSim 4.6:
the controls at 20 times (``getControl`` after realizeVelocity) to 1e-14 and the state
derivatives with the controllers on to 1e-9 relative, on OpenSim's Tug of War (two Millard
muscles) with a CoordinateActuator and three PrescribedControllers of our own (two adding
on the same actuators, eight function types, a control beyond ``max_control``: OpenSim does
not clamp) and on the 2.x double pendulum with a 3.x-style controller (``isDisabled``,
unnamed functions); the controllers OpenSim refuses or symbody leaves out, by name."""

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

PUSH = """<CoordinateActuator name="push">
					<min_control>-0.5</min_control>
					<max_control>0.5</max_control>
					<coordinate>block_tz</coordinate>
					<optimal_force>20</optimal_force>
				</CoordinateActuator>
			</objects>
			<groups />
		</ForceSet>"""

CONTROLLERS = """<ControllerSet name="controllerset">
			<objects>
				<PrescribedController name="drive">
					<actuator_list>RightMuscle LeftMuscle push</actuator_list>
					<FunctionSet name="ControlFunctions">
						<objects>
							<PiecewiseLinearFunction name="a">
								<x>0 0.3 0.7 1</x>
								<y>0.1 0.6 0.2 0.5</y>
							</PiecewiseLinearFunction>
							<Sine name="b">
								<amplitude>0.3</amplitude>
								<omega>7</omega>
								<phase>0.4</phase>
								<offset>0.4</offset>
							</Sine>
							<StepFunction name="c">
								<transition_start_time>0.2</transition_start_time>
								<transition_end_time>0.6</transition_end_time>
								<start_value>-1</start_value>
								<end_value>2</end_value>
							</StepFunction>
						</objects>
						<groups />
					</FunctionSet>
				</PrescribedController>
				<PrescribedController name="extra">
					<actuator_list>push LeftMuscle</actuator_list>
					<FunctionSet name="ControlFunctions">
						<objects>
							<SimmSpline name="spline">
								<x>0 0.25 0.5 0.75 1</x>
								<y>0 0.3 -0.2 0.4 0.1</y>
							</SimmSpline>
							<MultiplierFunction name="scaled">
								<function>
									<PolynomialFunction name="function">
										<coefficients>0.2 -0.1 0.05</coefficients>
									</PolynomialFunction>
								</function>
								<scale>0.5</scale>
							</MultiplierFunction>
						</objects>
						<groups />
					</FunctionSet>
				</PrescribedController>
				<PrescribedController name="held">
					<actuator_list>RightMuscle push</actuator_list>
					<FunctionSet name="ControlFunctions">
						<objects>
							<PiecewiseConstantFunction name="hold">
								<x>0 0.4 0.8</x>
								<y>0.05 0.1 0.15</y>
							</PiecewiseConstantFunction>
							<LinearFunction name="ramp">
								<coefficients>0.7 -0.2</coefficients>
							</LinearFunction>
						</objects>
						<groups />
					</FunctionSet>
				</PrescribedController>
				<PrescribedController name="off">
					<enabled>false</enabled>
					<actuator_list>push</actuator_list>
					<FunctionSet name="ControlFunctions">
						<objects>
							<Constant name="big">
								<value>100</value>
							</Constant>
						</objects>
						<groups />
					</FunctionSet>
				</PrescribedController>
			</objects>
			<groups />
		</ControllerSet>"""

TIMES = np.linspace(0.0, 1.2, 20)


def tug_of_war_text() -> str:
    """Tug_of_War_Millard (tendons rigid: the activations are the muscles' states) with the
    actuator ``push`` and the controllers above."""
    text = (DATA / "Tug_of_War_Millard.osim").read_text()
    for name in ("RightMuscle", "LeftMuscle"):
        tag = f'<Millard2012EquilibriumMuscle name="{name}">'
        text = text.replace(tag, tag + "<ignore_tendon_compliance>true</ignore_tendon_compliance>")
    text = text.replace("</objects>\n\t\t\t<groups />\n\t\t</ForceSet>", PUSH, 1)
    start = text.index("<ControllerSet")
    end = text.index("</ControllerSet>") + len("</ControllerSet>")
    return text[:start] + CONTROLLERS + text[end:]


@pytest.fixture(scope="module")
def tug(tmp_path_factory):
    path = tmp_path_factory.mktemp("controllers") / "tug_of_war_controlled.osim"
    path.write_text(tug_of_war_text())
    with pytest.warns(OpenSimImportWarning, match="PrescribedController 'drive'"):
        model = load_opensim(path)
    return path, model


ACTUATORS = ("RightMuscle", "LeftMuscle", "push")


def _columns(model) -> list:
    return [model.input_names.index(n) for n in ("e_RightMuscle", "e_LeftMuscle",
                                                  "control_push")]


@needs_opensim
def test_controls_and_derivatives_agree_with_opensim(tug):
    path, model = tug
    assert list(model.controllers) == ["drive", "extra", "held", "off"]
    assert not model.controllers["off"].enabled
    assert any(x.name == "off" and x.reason.startswith("disabled") for x in model.left_out)
    controls = model.controls
    assert controls.driven == model.input_names
    rng = np.random.default_rng(3)
    n = len(model.coordinates)
    times = (0.15, 0.5, 0.95)
    states = [(rng.uniform(-0.05, 0.05, n), rng.uniform(-0.5, 0.5, n), rng.uniform(0.05, 1, 2))
              for _ in times]
    queries = [{"kind": "controls", "times": TIMES.tolist(), "names": list(ACTUATORS)}]
    for t, (q, u, a) in zip(times, states):
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "controlled_derivatives", "t": t, "Q": Q.tolist(),
                        "U": U.tolist(), "activations": dict(zip(model.muscle_names, a.tolist())),
                        "fiber_length_factors": {}})
    answers = ask_opensim(path, queries, without_forces=False)
    ours = np.array([controls(t) for t in TIMES])[:, _columns(model)]
    ref = np.array(answers[0])
    assert np.abs(ours - ref).max() <= 1e-14 * max(1.0, np.abs(ref).max())
    # OpenSim adds the controllers' controls and does not clamp them to min/max_control
    assert ref[:, 2].max() > 0.5 + 1.0 and ref[:, 2].min() < -0.5 - 0.5
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    for t, (q, u, a), ans in zip(times, states, answers[1:]):
        xe = model.extra_states_from_opensim(ans["states"])
        assert np.array_equal(xe, a)
        x = np.concatenate([q, u, xe])
        xdot = nm.rhs(t, x, p, controls(t))
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        adot = np.array([ans["derivatives"][f"/forceset/{m}/activation"]
                         for m in model.muscle_names])
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        assert np.abs(xdot[2 * n:] - adot).max() <= 1e-9 * np.abs(adot).max()
        # the controls matter: without them u' and a' move well beyond round-off
        other = nm.rhs(t, x, p, 0 * controls(t))
        assert np.abs(other[n:] - xdot[n:]).max() > 1e-3 * np.abs(xdot[n:]).max()


@needs_opensim
def test_simulate_with_the_controls_moves_as_opensims_manager(tug):
    """``specifieds=model.controls`` drives a simulation to OpenSim's Manager's state
    (0.4 s from the default state, both at tight tolerances); ``with_inputs`` adds to it."""
    path, model = tug
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    Q, U = model.to_opensim_state(model.default_state()[:1], model.default_state()[1:])
    start, end = ask_opensim(path, [{"kind": "default_state"},
                                    {"kind": "integrate", "Q": Q.tolist(), "U": U.tolist(),
                                     "t": 0.4, "accuracy": 1e-10}], without_forces=False)
    x0 = np.concatenate([model.default_state(), model.extra_states_from_opensim(
        start["states"])])
    traj = sb.simulate(nm, (0.0, 0.4), x0, p, specifieds=model.controls,
                       solver=sb.Solver(rtol=1e-11, atol=1e-12), t_eval=[0.2, 0.4],
                       outputs=["specifieds"])
    assert traj.status == 0
    q_end, _ = model.from_opensim_state(end["Q"], end["U"])
    moved = abs(traj.q[-1, 0] - x0[0])
    assert moved > 1e-3 and abs(traj.q[-1, 0] - q_end[0]) <= 1e-6 * moved
    given = np.array([traj.outputs[n][-1] for n in model.input_names])
    assert np.array_equal(given, model.controls(0.4))
    more = model.controls.with_inputs(lambda t, x: np.array([0.0, 0.0, 3.0 * t]))
    assert np.abs(more(0.5) - model.controls(0.5) - [0.0, 0.0, 1.5]).max() <= 1e-15
    with pytest.raises(InputError, match="input_names"):
        model.controls.with_inputs([1.0, 2.0])


def test_controls_as_expressions_run_in_compiled_steps(tug, compiled_steps_taken):
    """``model.controls.expressions()``: the functions' exact expressions of t, equal to the
    controls to round-off at every knot and between them, and compiled by ``simulate``, whose
    steps then run in C: the same motion as with ``specifieds=model.controls``."""
    import sympy as sm

    from symbody.compat.sympy import TIME

    path, model = tug
    exprs = model.controls.expressions()
    f = sm.lambdify(TIME, [exprs[n] for n in model.input_names], "math")
    knots = {0.0, 0.25, 0.3, 0.4, 0.5, 0.7, 0.75, 0.8, 1.0}
    for t in sorted(knots | set(np.linspace(-0.2, 1.4, 81).tolist())):
        assert np.abs(np.array(f(t)) - model.controls(t)).max() <= 1e-13, t
    assert model.controls.with_inputs(lambda t, x: np.zeros(3)).expressions() is None
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    x0 = np.concatenate([model.default_state(), np.full(len(nm.eom.extra_states), 0.05)])
    used = compiled_steps_taken
    kw = dict(solver=sb.Solver(rtol=1e-10, atol=1e-12), t_eval=[0.2, 0.4])
    compiled = sb.simulate(nm, (0.0, 0.4), x0, p, specifieds=exprs, **kw)
    python = sb.simulate(nm, (0.0, 0.4), x0, p, specifieds=model.controls, **kw)
    assert used == [True] and compiled.status == 0 and python.status == 0
    moved = abs(python.q[-1, 0] - x0[0])
    assert moved > 1e-3 and np.abs(compiled.x - python.x).max() <= 1e-7 * moved


PENDULUM_3X = """<ControllerSet name="Controllers">
      <objects>
        <PrescribedController>
          <isDisabled> false </isDisabled>
          <actuator_list> ALL </actuator_list>
          <FunctionSet name="ControlFunctions">
            <objects>
              <PiecewiseLinearFunction>
                <x> 0 0.5 1 </x>
                <y> 1 -2 0.5 </y>
              </PiecewiseLinearFunction>
              <NaturalCubicSpline>
                <x> 0 0.3 0.6 1 </x>
                <y> 0 1.5 -0.5 1 </y>
              </NaturalCubicSpline>
            </objects>
          </FunctionSet>
        </PrescribedController>
        <PrescribedController>
          <isDisabled> true </isDisabled>
          <actuator_list> Torq1 </actuator_list>
          <FunctionSet name="ControlFunctions">
            <objects>
              <Constant> <value> 50 </value> </Constant>
            </objects>
          </FunctionSet>
        </PrescribedController>
      </objects>
      <groups/>
    </ControllerSet>"""


def pendulum_text(controllers: str = PENDULUM_3X) -> str:
    text = (DATA / "double_pendulum_20302.osim").read_text()
    start = text.index("<ControllerSet")
    end = text.index("</ControllerSet>") + len("</ControllerSet>")
    return text[:start] + controllers + text[end:]


@needs_opensim
def test_old_format_controller_agrees_with_opensim(tmp_path):
    """A 3.x-style controller (``isDisabled``, ``ALL``, unnamed functions) in a 2.x file,
    which OpenSim upgrades."""
    path = tmp_path / "pendulum_controlled.osim"
    path.write_text(pendulum_text())
    with pytest.warns(OpenSimImportWarning, match="PrescribedController"):
        model = load_opensim(path)
    assert model.input_names == ("control_Torq1", "control_Torq2")
    rng = np.random.default_rng(4)
    q, u = rng.uniform(-1, 1, 2), rng.uniform(-1, 1, 2)
    Q, U = model.to_opensim_state(q, u)
    queries = [{"kind": "controls", "times": TIMES.tolist(), "names": ["Torq1", "Torq2"]}]
    queries += [{"kind": "controlled_derivatives", "t": t, "Q": Q.tolist(), "U": U.tolist(),
                 "activations": {}, "fiber_length_factors": {}} for t in (0.2, 0.8)]
    answers = ask_opensim(path, queries, without_forces=False)
    ours = np.array([model.controls(t) for t in TIMES])
    assert np.abs(ours - np.array(answers[0])).max() <= 1e-14 * np.abs(ours).max()
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    for t, ans in zip((0.2, 0.8), answers[1:]):
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        xdot = nm.rhs(t, np.concatenate([q, u]), p, model.controls(t))
        assert np.abs(xdot[2:] - udot).max() <= 1e-9 * np.abs(udot).max()


def _controller(body: str, tag: str = "PrescribedController") -> str:
    return f"""<ControllerSet name="Controllers"><objects>
        <{tag} name="c">{body}</{tag}></objects></ControllerSet>"""


def test_controllers_left_out_or_refused_by_name():
    other = _controller("<actuator_list>Torq1</actuator_list>"
                        "<controls_file>controls.xml</controls_file>", "ControlSetController")
    with pytest.warns(OpenSimImportWarning, match=r"not built: ControlSetController 'c' "
                      r"\(line \d+\): controller type not supported"):
        model = load_opensim(pendulum_text(other))
    assert model.controllers == {} and model.controls.driven == ()
    with pytest.raises(InputError, match="ControlSetController 'c'"):
        load_opensim(pendulum_text(other), unsupported="error")
    gcv = _controller("""<actuator_list>Torq1</actuator_list><FunctionSet><objects>
        <GCVSpline><half_order>3</half_order><x>0 1</x><y>0 1</y></GCVSpline>
        </objects></FunctionSet>""")
    with pytest.warns(OpenSimImportWarning, match="GCVSpline of half_order 3 .degree 5"):
        load_opensim(pendulum_text(gcv))
    from_file = _controller("<actuator_list></actuator_list>"
                            "<controls_file>controls.sto</controls_file>")
    with pytest.warns(OpenSimImportWarning, match="'controls.sto' is not found next to the"):
        load_opensim(pendulum_text(from_file))
    for body, match in (("<actuator_list>Torq1 Torq2</actuator_list><FunctionSet><objects>"
                         "<Constant><value>1</value></Constant></objects></FunctionSet>",
                         "1 control function"),
                        ("<actuator_list>elbow</actuator_list><FunctionSet><objects>"
                         "<Constant><value>1</value></Constant></objects></FunctionSet>",
                         "'elbow', which is not an actuator")):
        with pytest.raises(InputError, match=match):
            load_opensim(pendulum_text(_controller(body)))


SOCKETS = """<ControllerSet name="controllerset"><objects>
    <PrescribedController name="first">
        <socket_actuators>/forceset/Torq2 /forceset/Torq1</socket_actuators>
        <FunctionSet name="ControlFunctions"><objects>
            <Sine name="a"><amplitude>2</amplitude><omega>3</omega></Sine>
            <PiecewiseConstantFunction name="b"><x>0 0.5 1</x><y>1 -1 2</y></PiecewiseConstantFunction>
        </objects></FunctionSet>
    </PrescribedController>
    <PrescribedController name="table">
        <socket_actuators></socket_actuators>
        <FunctionSet name="ControlFunctions"><objects /></FunctionSet>
        <controls_file>CONTROLS</controls_file>
    </PrescribedController>
    <PrescribedController name="held">
        <socket_actuators>/forceset/Torq2</socket_actuators>
        <FunctionSet name="ControlFunctions"><objects>
            <GCVSpline name="g"><half_order>1</half_order><error_variance>0</error_variance>
                <x>0 0.3 0.8</x><y>0.5 -1 2</y><weights>1 1 1</weights>
                <coefficients>0 0 0</coefficients></GCVSpline>
        </objects></FunctionSet>
        <controls_file>CONTROLS</controls_file>
        <interpolation_method>0</interpolation_method>
    </PrescribedController>
</objects></ControllerSet>"""

#: a controller among the model's <components> (OpenSim 4 runs those too)
COMPONENT = """<components>
    <PrescribedController name="second">
        <socket_actuators>/forceset/Torq2</socket_actuators>
        <FunctionSet name="ControlFunctions"><objects>
            <LinearFunction name="c"><coefficients>-4 1</coefficients></LinearFunction>
        </objects></FunctionSet>
    </PrescribedController>
</components>"""

TABLE = """controls
version=1
nRows=5
nColumns=3
inDegrees=no
endheader
time\tTorq1\t/forceset/Torq2
0.1\t0.5\t-1
0.3\t1.5\t2
0.45\t-0.5\t0.25
0.7\t2\t1
0.9\t1\t-3
"""


@needs_opensim
def test_socket_list_of_46_files_agrees_with_opensim(tmp_path):
    """OpenSim 4.6's own format (40600: ``socket_actuators``, paths), four controllers
    adding on Torq2 (one among the model's ``<components>``), two of them with a controls file (a table beside the model, its
    columns interpolated linearly and piecewise constant; a listed actuator keeps its
    function): the controls only (no compile)."""
    (tmp_path / "controls.sto").write_text(TABLE)
    text = (DATA / "double_pendulum.osim").read_text().replace('Version="40000"',
                                                                'Version="40600"', 1)
    start = text.index("<ControllerSet")
    end = text.index("</ControllerSet>") + len("</ControllerSet>")
    path = tmp_path / "pendulum_40600.osim"
    text = text[:start] + SOCKETS.replace("CONTROLS", str(tmp_path / "controls.sto")) \
        + text[end:]
    path.write_text(text.replace("\t</Model>", COMPONENT + "\n\t</Model>", 1))
    with pytest.warns(OpenSimImportWarning, match="'first'"):
        model = load_opensim(path)
    assert model.controllers["first"].actuators == ("Torq2", "Torq1")
    assert model.controllers["table"].actuators == ("Torq1", "Torq2")
    assert model.controllers["held"].actuators == ("Torq2", "Torq1")
    assert model.controllers["second"].actuators == ("Torq2",)
    ref = ask_opensim(path, [{"kind": "controls", "times": TIMES.tolist(),
                              "names": ["Torq1", "Torq2"]}], without_forces=False)[0]
    ours = np.array([model.controls(t) for t in TIMES])
    assert model.input_names == ("control_Torq1", "control_Torq2")
    assert np.abs(ours - np.array(ref)).max() <= 1e-14 * np.abs(ours).max()
    # a relative controls_file is looked for beside the model file
    beside = tmp_path / "pendulum_relative.osim"
    beside.write_text(path.read_text().replace(str(tmp_path / "controls.sto"), "controls.sto"))
    with pytest.warns(OpenSimImportWarning):
        relative = load_opensim(beside)
    assert np.array_equal([relative.controls(t) for t in TIMES], ours)
