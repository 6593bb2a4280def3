"""Solo12 dropped on the ground (systems/quadruped.py): it stands, the normal forces carry its
weight, the default method finds the stiffness and converges; MuJoCo's version of the scene
(systems/mujoco_scenes.py) stands at about the same height on the same foot forces."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from systems.quadruped import (
    FEET,
    FOOT_RADIUS,
    HEIGHT,
    KD,
    KP,
    SOLO12_POSE,
    solo12_drop,
    solo12_urdf,
)

pytestmark = pytest.mark.skipif(solo12_urdf() is None, reason="example-robot-data is not installed")

G = 9.81


@pytest.fixture(scope="module")
def drop():
    scene = solo12_drop()
    outputs = {r.name: r.normal_force for r in scene.robot.eom.contacts}
    times = np.linspace(0.0, 2.0, 201)
    sol = sb.simulate(scene.model, (0.0, 2.0), scene.x0, scene.p, specifieds=scene.r, t_eval=times,
                      outputs=outputs, solver=sb.Solver(rtol=1e-3, atol=1e-5))
    return scene, sol


def test_stands_on_its_feet(drop):
    """After 2 s the normal forces sum to m g and the base is at rest (up to the creep of the
    smooth friction, regularized at 1e-4 m/s)."""
    scene, sol = drop
    assert sol.status == 0, sol.message
    assert "stiff from t = 0.1" in sol.message      # touchdown at 0.18 s: Radau from there
    forces = np.array([sol.outputs[foot][-1] for foot in FEET])
    assert forces.sum() == pytest.approx(scene.mass * G, rel=1e-3)
    np.testing.assert_allclose(forces, forces.mean(), rtol=1e-3)   # the pose is symmetric
    v_base, w_base = sol.u[-1][:3], sol.u[-1][3:6]
    assert np.abs(v_base).max() < 1e-4 and np.abs(w_base).max() < 1e-4
    assert np.abs(sol.u[-1]).max() < 5e-4
    names = list(scene.robot.joint_names)
    z = sol.q[:, names.index("base.z")]
    assert z.min() > 0.15 and 0.2 < z[-1] < 0.25


def test_converged_to_a_tight_reference(drop):
    """The run at rtol 1e-3 (the speed benchmark's) is within 1e-4 m of one at rtol 1e-9 over the
    whole drop (the base's position on a 10 ms grid)."""
    scene, sol = drop
    ref = sb.simulate(scene.model, (0.0, 2.0), scene.x0, scene.p, specifieds=scene.r, t_eval=sol.t,
                      solver=sb.Solver(method="Radau", rtol=1e-9, atol=1e-11))
    assert np.abs(sol.q[:, :3] - ref.q[:, :3]).max() < 1e-4


def test_stands_as_in_mujoco(drop):
    """MuJoCo's scene (its soft contact at its defaults, Euler at 1 ms): the same foot forces and
    standing height within 1 cm (the contacts' compliances and the landings differ: MuJoCo's
    feet sink 3 mm and slide outwards)."""
    mujoco = pytest.importorskip("mujoco")
    from systems.mujoco_scenes import normal_forces, run, solo12_scene

    scene, sol = drop
    model, data = solo12_scene(mujoco, solo12_urdf(), pose=SOLO12_POSE, kp=KP, kd=KD,
                               foot_radius=FOOT_RADIUS, height=HEIGHT, timestep=1e-3)
    run(mujoco, model, data, [2.0])
    forces = normal_forces(mujoco, model, data)
    ours = {foot: sol.outputs[foot][-1] for foot in FEET}
    for foot in FEET:
        assert forces[foot.replace("_FOOT", "_foot")] == pytest.approx(ours[foot], rel=1e-3)
    assert abs(data.qpos[2] - sol.q[-1][list(scene.robot.joint_names).index("base.z")]) < 0.01


def test_recursion_with_contacts_equals_the_solve(drop):
    """The default model's forward kernel (the articulated-body recursion, the contact and PD
    forces entering as generalized forces) gives the right-hand side of M_d and g_d solved, to
    round-off, with the feet in contact: standing at the end of the drop, and there with the
    speeds disturbed (sliding, sinking feet)."""
    scene, sol = drop
    dense = sb.compile(scene.robot.eom, forward_dynamics="solve")
    assert scene.model.kernels.forward is not None and dense.kernels.forward is None
    P = scene.model.constants_array(scene.p)
    x_stand = np.concatenate([sol.q[-1], sol.u[-1]])
    assert all(sol.outputs[foot][-1] > 1.0 for foot in FEET)
    rng = np.random.default_rng(7)
    x_moving = x_stand.copy()
    x_moving[len(sol.q[-1]):] += rng.normal(scale=0.05, size=len(sol.u[-1]))
    for x in (x_stand, x_moving):
        a = scene.model.rhs(0.0, x, P, scene.r)
        b = dense.rhs(0.0, x, P, scene.r)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * max(1.0, np.abs(b).max()))


def test_recursion_with_exact_friction_equals_the_solve():
    """Exact friction: the placeholders' forces (inputs of the equations, the multipliers of
    stick) enter the recursion as they enter g_d: u' the same to round-off, feet ~1 cm deep,
    random speeds, joint torques and friction forces."""
    robot = sb.load_urdf(solo12_urdf(), floating_base=True)
    robot.add_ground_contact(links=list(FEET), spheres={foot: FOOT_RADIUS for foot in FEET},
                             stiffness=1e5, restitution=0.5, impact_speed=1.0, friction=1.0,
                             friction_mode="exact")
    robot.add_pd_control(kp=KP, kd=KD, pose=SOLO12_POSE)
    tree, dense = sb.compile(robot.eom), sb.compile(robot.eom, forward_dynamics="solve")
    assert tree.kernels.forward is not None and dense.kernels.forward is None
    assert sum("friction" in str(s) for s in tree.specifieds) == 2 * len(FEET)
    rng = np.random.default_rng(1)
    P = tree.constants_array(robot.constants)
    x = robot.default_state()
    names = list(robot.joint_names)
    for joint, angle in SOLO12_POSE.items():
        x[names.index(joint)] = angle
    x[names.index("base.z")] = 0.2236          # the feet ~1 cm into the ground
    x[len(names):] = rng.normal(scale=0.1, size=len(x) - len(names))
    r = rng.normal(size=len(tree.specifieds))
    a, b = tree.rhs(0.0, x, P, r), dense.rhs(0.0, x, P, r)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
    assert np.abs(b).max() > 1e3           # (the contact forces are in it)
