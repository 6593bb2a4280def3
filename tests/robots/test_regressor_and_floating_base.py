"""The regressor against Pinocchio, and the free-flyer in simulation (free fall invariants)."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import symbody as sb  # noqa: E402
from symbody.errors import InputError  # noqa: E402
from symbody.robots.pinocchio import tree_index  # noqa: E402
from systems.pinocchio_oracle import compare, pinocchio_model, random_state, robots_dir  # noqa: E402

ROBOTS = robots_dir()
needs_files = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def _check_regressor(robot, pm):
    pd = pm.createData()
    reg = robot.regressor()
    params = np.concatenate([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    np.testing.assert_allclose(reg.values, params, rtol=1e-12, atol=1e-15)
    rng = np.random.default_rng(5)
    _, ui = tree_index(robot)
    N = len(robot.coordinates)
    for _ in range(2):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        a = rng.standard_normal(pm.nv)
        Y = reg(x[:N], v[ui], a[ui])
        Yp = pin.computeJointTorqueRegressor(pm, pd, qp, v, a)
        assert np.abs(Y - Yp[ui]).max() <= 1e-9 * np.abs(Yp).max()
        tau = pin.rnea(pm, pd, qp, v, a)
        assert np.abs(Y @ reg.values - tau[ui]).max() <= 1e-9 * max(1.0, np.abs(tau).max())


@needs_files
def test_regressor_fixed_base():
    f = ROBOTS / "double_pendulum_description/urdf/double_pendulum.urdf"
    robot = sb.load_urdf(f, symbolic_inertia=True)
    assert len(robot.parameters) == 20 and robot.regressor().shape == (2, 20)
    _check_regressor(robot, pinocchio_model(pin, f, False))
    with pytest.raises(InputError, match="symbolic_inertia=True"):
        sb.load_urdf(f).regressor()


def test_regressor_floating_base_with_mimic_and_symbolic_equations():
    from test_system import URDF
    # a free base needs inertia of its own (else the base and j1 turn the same massless body)
    URDF = URDF.replace('<link name="base"/>', '<link name="base"><inertial><mass value="3"/>'
                        '<inertia ixx="0.1" iyy="0.2" izz="0.15" ixy="0" ixz="0" iyz="0"/>'
                        '</inertial></link>')
    robot = sb.load_urdf(URDF, floating_base=True, symbolic_inertia=True)
    pm = pin.buildModelFromXML(URDF, pin.JointModelFreeFlyer())
    _check_regressor(robot, pm)
    # the symbolic-inertia equations, with the file's values, are Pinocchio's
    err = compare(pin, robot, sb.compile(robot.eom), pm, np.random.default_rng(2), states=2)
    assert max(err["M"], err["bias"], err["aba"]) < 1e-9, err


@needs_files
def test_free_fall_keeps_the_quaternion_and_the_invariants():
    f = ROBOTS / "solo_description/robots/solo12.urdf"
    robot = sb.load_urdf(f, floating_base=True)
    model = sb.compile(robot.eom)
    N = len(robot.coordinates)
    x0 = robot.default_state()
    x0[N:N + 6] = [0.3, 0.1, 1.0, 0.5, -1.0, 2.0]      # thrown and spinning, no torques
    sol = sb.simulate(model, (0, 0.5), x0, robot.constants, specifieds=np.zeros(12),
                      solver=sb.Solver(rtol=1e-10, atol=1e-10))
    assert sol.success
    X = sol.x
    quat = [robot.coordinates.index(s) for s in robot.tree_coordinates[3:7]]
    assert np.abs(np.linalg.norm(X[:, quat], axis=1) - 1).max() < 1e-9
    pm = pinocchio_model(pin, f, True)
    pd = pm.createData()

    def centroidal(x):
        q, v = robot.to_pinocchio(x)
        pin.centerOfMass(pm, pd, q, v)
        h = pin.computeCentroidalMomentum(pm, pd, q, v)
        return pd.com[0].copy(), pd.vcom[0].copy(), np.array(h.angular)

    c0, v0, L0 = centroidal(X[0])
    c1, v1, L1 = centroidal(X[-1])
    T, g = sol.t[-1], np.array([0, 0, -9.81])
    np.testing.assert_allclose(c1, c0 + v0 * T + 0.5 * g * T ** 2, atol=1e-7)
    np.testing.assert_allclose(v1, v0 + g * T, atol=1e-7)
    np.testing.assert_allclose(L1, L0, atol=1e-7 * max(1.0, np.abs(L0).max()))


def test_a_floating_joint_from_the_world_is_the_free_flyer():
    from test_system import URDF
    text = URDF.replace('<link name="base"/>', '<link name="world"/><joint name="free" '
                        'type="floating"><parent link="world"/><child link="base"/></joint>'
                        '<link name="base"><inertial><mass value="3"/><inertia ixx="0.1" '
                        'iyy="0.2" izz="0.15" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    robot = sb.load_urdf(text, floating_base=True, mimic=False)
    plain = sb.load_urdf(text.split('<joint name="free"')[0].replace('<link name="world"/>', "")
                         + '<link name="base"' + text.split('<link name="base"', 1)[1],
                         floating_base=True, mimic=False)
    assert robot.joint_names == plain.joint_names and robot.link_frames["world"] is robot.world_frame
    pm = pin.buildModelFromXML(text)           # Pinocchio: the floating joint, a free-flyer
    assert pm.joints[1].shortname() == "JointModelFreeFlyer"
    err = compare(pin, robot, sb.compile(robot.eom), pm, np.random.default_rng(6), states=2)
    assert max(err["M"], err["bias"], err["aba"]) < 1e-9, err
