"""A robot's frames, Jacobians, centre of mass, dynamics terms and joint wrenches against
Pinocchio; their batches, exports (CasADi, C) and use as simulation outputs."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import symbody as sb  # noqa: E402
from symbody.errors import InputError  # noqa: E402
from systems.pinocchio_control_oracle import compare_control  # noqa: E402
from systems.pinocchio_oracle import pinocchio_model, robots_dir  # noqa: E402

ROBOTS = robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

UR5 = "ur_description/urdf/ur5_robot.urdf"
CASES = [     # (file, free-flyer, frames checked)
    (UR5, False, 3),                                          # revolute chain, fixed joints
    ("panda_description/urdf/panda.urdf", False, 2),         # prismatic fingers, a mimic joint
]   # free-flyers: tests/robots/test_urdf_joints.py; every robot: bench_robot_control.py


@pytest.fixture(scope="module")
def ur5():
    return sb.load_urdf(ROBOTS / UR5)


@pytest.mark.parametrize(("path", "floating", "frames"), CASES,
                         ids=[c[0].split("/")[-1] for c in CASES])
def test_agrees_with_pinocchio(path, floating, frames):
    robot = sb.load_urdf(ROBOTS / path, floating_base=floating)
    pm = pinocchio_model(pin, ROBOTS / path, floating)
    err = compare_control(pin, robot, pm, np.random.default_rng(7), states=3, frames=frames)
    assert len(err) == 13 and max(err.values()) < 1e-9, err


def test_operational_frames_of_merged_fixed_joints(ur5):
    # UR5's tool0 hangs from wrist_3_link by the fixed joint wrist_3_link-tool0_fixed_joint:
    # the link, the joint and Pinocchio's frames of both are one placement
    pm = pin.buildModelFromUrdf(str(ROBOTS / UR5))
    pd = pm.createData()
    q = np.random.default_rng(0).uniform(-2, 2, 6)
    pin.framesForwardKinematics(pm, pd, q)
    for name in ("tool0", "wrist_3_link-tool0_fixed_joint", "ee_link", "base_link", "universe"):
        M = ur5.frame_placement(name, q)
        np.testing.assert_allclose(M, pd.oMf[pm.getFrameId(name)].homogeneous, atol=1e-12)
    assert {"tool0", "universe", "elbow_joint"} <= set(ur5.frame_names)


def test_batches_equal_single_states(ur5):
    rng = np.random.default_rng(1)
    Q, U, UD = rng.standard_normal((3, 5, 6))
    J = ur5.frame_jacobian("tool0", Q, "local_world_aligned")
    V = ur5.frame_velocity("tool0", Q, U, "local_world_aligned")
    assert J.shape == (5, 6, 6) and V.shape == (5, 6)
    for i in range(5):
        np.testing.assert_allclose(J[i] @ U[i], V[i], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(ur5.inverse_dynamics(Q[i], U[i], UD[i]),
                                      ur5.inverse_dynamics(Q, U, UD)[i])
    # a single q with many speeds broadcasts
    assert ur5.frame_velocity("tool0", Q[0], U).shape == (5, 6)
    # M u' + b = tau, and the gravity torques are tau at rest
    M, b = ur5.mass_matrix(Q[0]), ur5.bias(Q[0], U[0])
    np.testing.assert_allclose(M @ UD[0] + b, ur5.inverse_dynamics(Q[0], U[0], UD[0]), rtol=1e-12)
    np.testing.assert_allclose(ur5.gravity_torques(Q[0]),
                               ur5.inverse_dynamics(Q[0], 0 * U[0], 0 * U[0]), atol=1e-12)
    # the constants are an argument too: no gravity, no gravity torques
    assert np.abs(ur5.gravity_torques(Q[0], p=[0.0])).max() == 0


def test_bad_input_is_named(ur5):
    with pytest.raises(InputError, match="no frame 'tool1'.*closest: 'tool0'"):
        ur5.frame_placement("tool1", np.zeros(6))
    with pytest.raises(InputError, match="reference must be one of"):
        ur5.frame_jacobian("tool0", np.zeros(6), "global")
    with pytest.raises(InputError, match="q must have 6 values"):
        ur5.frame_placement("tool0", np.zeros(7))
    with pytest.raises(InputError, match=r"takes \(q, u, u_dot\), got 2"):
        ur5.inverse_dynamics(np.zeros(6), np.zeros(6))
    with pytest.raises(InputError, match="quantity must be one of"):
        ur5.frame_function("tool0", "pose")


def test_exports_to_casadi_and_c(ur5, tmp_path):
    ca = pytest.importorskip("casadi")
    rng = np.random.default_rng(2)
    q, u, ud = rng.standard_normal((3, 6))
    rnea = ur5.inverse_dynamics
    F = sb.to_casadi(rnea)
    assert F.name_in() == ["q", "u", "u_dot", "p"]
    np.testing.assert_allclose(np.array(F(q, u, ud, rnea.constants)).ravel(), rnea(q, u, ud),
                               rtol=1e-13, atol=1e-12)
    J = ur5.frame_function("tool0", "jacobian", "world")
    FJ = sb.to_casadi(J)
    np.testing.assert_allclose(np.array(FJ(q)), J(q), atol=1e-13)
    assert isinstance(FJ, ca.Function) and FJ.size_out(0) == (6, 6)
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    paths = sb.export_c({"rnea": rnea, "J": J}, tmp_path, name="ur5")
    exe = tmp_path / "example"
    subprocess.run([cc, "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(exe), str(paths.example),
                    str(paths.source), "-lm"], check=True)
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    got = {ln.split(":")[0]: np.array(ln.split(":")[1].split(), dtype=float) for ln in lines}
    z = np.zeros(6)
    np.testing.assert_allclose(got["ur5_rnea"], rnea(z, z, z), rtol=1e-14, atol=1e-12)
    np.testing.assert_allclose(got["ur5_J"], J(z).ravel(), atol=1e-14)


def test_joint_wrenches_as_simulation_outputs(ur5):
    model = sb.compile(ur5.eom)
    x0 = ur5.default_state()
    x0[:6] = [0.1, -0.5, 0.4, 0.2, 0.1, 0.0]
    sol = sb.simulate(model, (0, 0.2), x0, ur5.constants, specifieds=np.zeros(6),
                      t_eval=np.linspace(0, 0.2, 5),
                      outputs={"W": ur5.joint_wrenches, "tau": ur5.inverse_dynamics,
                               "tool": ur5.frame_function("tool0")})
    assert sol.outputs["W"].shape == (5, 6, 6) and sol.outputs["tool"].shape == (5, 4, 4)
    # no inputs: the inverse dynamics of the motion is zero
    assert np.abs(sol.outputs["tau"]).max() < 1e-9
    pm = pin.buildModelFromUrdf(str(ROBOTS / UR5))
    pd = pm.createData()
    for i in range(5):
        q, v = sol.q[i], sol.u[i]
        pin.rnea(pm, pd, q, v, pin.aba(pm, pd, q, v, np.zeros(6)))
        f = np.array([pd.f[j].vector for j in range(1, 7)])
        np.testing.assert_allclose(sol.outputs["W"][i], f, rtol=1e-9, atol=1e-9)
    other = sb.load_urdf(ROBOTS / "double_pendulum_description/urdf/double_pendulum.urdf")
    with pytest.raises(InputError, match="a function of another model"):
        sb.simulate(model, (0, 0.01), x0, ur5.constants, specifieds=np.zeros(6),
                    outputs={"W": other.joint_wrenches})


def test_classical_acceleration_agrees_with_pinocchio(ur5):
    pm = pin.buildModelFromUrdf(str(ROBOTS / UR5))
    pd = pm.createData()
    rng = np.random.default_rng(4)
    q, v, a = rng.standard_normal((3, 6))
    pin.forwardKinematics(pm, pd, q, v, a)
    pin.updateFramePlacements(pm, pd)
    fid = pm.getFrameId("tool0")
    for ref, rf in (("local", pin.LOCAL), ("world", pin.WORLD),
                    ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)):
        ours = ur5.frame_acceleration("tool0", q, v, a, ref, classical=True)
        theirs = pin.getFrameClassicalAcceleration(pm, pd, fid, rf).vector
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
