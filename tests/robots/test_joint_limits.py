"""Issue 38: URDF joint limits acting on the motion (load_urdf(..., limits=True)): effort
saturation of the inputs, position limits as one-sided stiff spring-dampers or events,
velocity (and all other) limits reported on trajectories."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.robots.limits import LIMIT_STIFFNESS, JointLimitWarning

#: an arm turning about the vertical z axis (no gravity torque): I = 0.2 + 2 * 0.5^2 = 0.7
ARM = """<robot name="arm">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.2"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-0.5" upper="0.5" effort="2" velocity="1.5"/></joint>
</robot>"""
INERTIA, EFFORT, UPPER = 0.7, 2.0, 0.5


@pytest.fixture(scope="module")
def arm():
    robot = sb.load_urdf(ARM, limits=True)
    return robot, sb.compile(robot.eom)


def test_the_inputs_saturate_at_their_effort(arm):
    robot, model = arm
    free = sb.compile(sb.load_urdf(ARM).eom)
    for tau in (5.0, -5.0, 1.5):
        x = [0.1, 0.3]                                  # inside the range: no stop force
        sat = float(np.clip(tau, -EFFORT, EFFORT))
        assert model.rhs(0.0, x, robot.constants, [tau])[1] == pytest.approx(sat / INERTIA, rel=1e-12)
        assert free.rhs(0.0, x, {"g": 9.81}, [tau])[1] == pytest.approx(tau / INERTIA, rel=1e-12)


def test_an_arm_driven_into_its_limit_stops_there(arm):
    """A torque of 5 (saturated at 2) drives the arm to its upper limit: q = t^2 effort / (2 I)
    until t_c = sqrt(2 upper I / effort) = 0.5916 s, then it rests on the stop at
    upper + effort / k; without limits it would be at 8 rad at t = 1.5."""
    robot, model = arm
    sol = sb.simulate(model, (0.0, 1.5), [0.0, 0.0], robot.constants, specifieds=[5.0],
                      solver=sb.Solver(method="Radau", rtol=1e-9, atol=1e-11))
    assert sol.success
    t_c = np.sqrt(2 * UPPER * INERTIA / EFFORT)
    before = np.linspace(0.0, 0.95 * t_c, 7)
    np.testing.assert_allclose(sol(before)[:, 0], EFFORT / INERTIA * before ** 2 / 2, atol=1e-8)
    rest = UPPER + EFFORT / LIMIT_STIFFNESS
    assert sol.q[-1, 0] == pytest.approx(rest, abs=1e-7) and abs(sol.u[-1, 0]) < 1e-6
    assert sol.q[:, 0].max() < UPPER + 0.02                   # the stop holds within 2 cm-rad
    # the report: the upper stop (entered at t_c), the speed at impact above 1.5, the input
    found = {v.kind: v for v in robot.check_limits(sol)}
    assert set(found) == {"upper", "velocity", "effort"}
    assert found["upper"].t_first == pytest.approx(t_c, abs=1e-3)
    assert found["velocity"].worst == pytest.approx(EFFORT / INERTIA * t_c, rel=1e-3)
    assert found["effort"].worst == 5.0 and found["effort"].limit == EFFORT
    with pytest.warns(JointLimitWarning, match=r"joint 'j' upper limit 0.5"):
        robot.check_limits(sol, warn=True)
    # a stiffer stop (values in p) holds the arm closer to the limit
    stiff = sb.simulate(model, (0.0, 1.5), [0.0, 0.0],
                        {**robot.constants, "limit_stiffness": 1e6, "limit_damping": 1e3},
                        specifieds=[5.0], solver=sb.Solver(method="Radau"))
    assert stiff.q[-1, 0] == pytest.approx(UPPER + EFFORT / 1e6, abs=1e-7)


def test_the_limits_as_events(arm):
    """Without the springs (limits=False) the limits are events: the run stops at t_c."""
    robot = sb.load_urdf(ARM)
    model = sb.compile(robot.eom)
    events = robot.limit_events()
    assert [e.name for e in events] == ["j lower", "j upper"]
    sol = sb.simulate(model, (0.0, 2.0), [0.0, 0.0], robot.constants, specifieds=[EFFORT],
                      events=events, solver=sb.Solver(rtol=1e-10, atol=1e-12))
    assert sol.success and sol.events[-1].name == "j upper"
    assert sol.t[-1] == pytest.approx(np.sqrt(2 * UPPER * INERTIA / EFFORT), abs=1e-9)
    # it reached the limit (to 1e-9) at 1.69 rad/s, above the velocity limit 1.5
    assert [v.kind for v in robot.check_limits(sol, tolerance=1e-9)] == ["velocity"]


def test_joints_without_a_range_get_no_stop():
    """A continuous joint, and lower >= upper (Bullet's "no limit"), have no position stop."""
    text = ARM.replace('type="revolute"', 'type="continuous"')
    robot = sb.load_urdf(text, limits=True)
    assert robot.limits[0].lower is None and robot.limits[0].effort == EFFORT
    model = sb.compile(robot.eom)
    assert model.rhs(0.0, [3.0, 0.0], robot.constants, [1.0])[1] == pytest.approx(1.0 / INERTIA)
