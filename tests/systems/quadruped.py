"""Solo12 (example-robot-data) dropped on the ground: the quadruped scene of the contact tests,
benchmarks/bench_contact.py and docs/guides/contact_robots.md (MuJoCo's version:
systems/mujoco_scenes.solo12_scene).

Spheres of 16 mm at the feet (the URDF's feet are mesh discs of that radius), Hunt–Crossley
contact with the ground (k = 1e5 N/m^1.5, restitution 0.5 at 1 m/s, smooth Coulomb friction
μ = 1, the URDF's ``lateral_friction``, regularized at 1e-4 m/s: standing, the feet creep at
about that speed times the ratio of tangential to normal load), a PD controller holding the "straight_standing"
pose of the package's SRDF on every joint, the base 0.4 m above the ground at rest.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

import symbody as sb
from systems.pinocchio_oracle import robots_dir

__all__ = ["SOLO12_POSE", "FEET", "solo12_urdf", "solo12_drop"]

#: the "straight_standing" pose of example-robot-data's solo.srdf
SOLO12_POSE = {"FL_HAA": 0.0, "FL_HFE": 0.8, "FL_KFE": -1.6, "FR_HAA": 0.0, "FR_HFE": 0.8,
               "FR_KFE": -1.6, "HL_HAA": 0.0, "HL_HFE": -0.8, "HL_KFE": 1.6, "HR_HAA": 0.0,
               "HR_HFE": -0.8, "HR_KFE": 1.6}
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
KP, KD = 10.0, 0.2
FOOT_RADIUS = 0.016
HEIGHT = 0.4


def solo12_urdf():
    """The package's solo12.urdf, or None when example-robot-data is not installed."""
    root = robots_dir()
    return None if root is None else root / "solo_description/robots/solo12.urdf"


def solo12_drop(stiffness: float = 1e5, friction: object = None, compile_model: bool = True):
    """The scene as a namespace: ``robot``, ``model`` (compiled), ``x0`` (the drop),
    ``p`` (robot.constants), ``r`` (zero joint inputs: the PD controller is in the equations),
    ``mass`` (kg)."""
    if friction is None:
        friction = sb.contact.Friction(1.0, velocity_scale=1e-4)
    robot = sb.load_urdf(solo12_urdf(), floating_base=True)
    # (as docs/guides/contact_robots.md does it: the same equations, the same compiled kernels)
    robot.add_ground_contact(links=list(FEET), spheres={foot: FOOT_RADIUS for foot in FEET},
                             stiffness=stiffness, restitution=0.5, impact_speed=1.0, friction=friction)
    robot.add_pd_control(kp=KP, kd=KD, pose=SOLO12_POSE)
    x0 = robot.default_state()
    names = list(robot.joint_names)
    for joint, value in SOLO12_POSE.items():
        x0[names.index(joint)] = value
    x0[names.index("base.z")] = HEIGHT
    mass = sum(b.mass for b in robot.tree.bodies)
    model = sb.compile(robot.eom) if compile_model else None
    return SimpleNamespace(robot=robot, model=model, x0=x0, p=robot.constants,
                           r=np.zeros(len(robot.inputs)), mass=mass)
