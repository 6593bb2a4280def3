"""MuJoCo's versions of the contact scenes (the anchor of benchmarks/bench_contact.py and of
the quadruped test): a dropped ball, a sliding block, Solo12 dropped on the ground.

MuJoCo's contact is soft and convex (a constraint solved with a compliance: ``solref``
(time constant, damping ratio) and ``solimp``), not a force law: Hunt–Crossley's
k δ^1.5 (1 + 3/2 c δ') has no exact MuJoCo counterpart.  The scenes use MuJoCo's defaults
(solref 0.02 s, damping ratio 1; its recommended setting) with the same geometry, masses,
friction coefficient (``condim`` 3, elliptic cones off: MuJoCo's default pyramid) and PD
gains; ``timestep`` is swept by the benchmark (MuJoCo's default Euler integrator).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["ball_scene", "block_scene", "solo12_scene", "run", "normal_forces"]


def ball_scene(mujoco, *, radius: float, mass: float, height: float, timestep: float,
               friction: float = 0.5):
    """A free sphere (radius, mass; solid: I = 2/5 m r²) with its centre at ``height`` above
    the plane z = 0, gravity 9.81 along -z.  Returns (model, data) at the initial state."""
    xml = f"""<mujoco><option timestep="{timestep!r}" gravity="0 0 -9.81"/>
      <worldbody><geom name="floor" type="plane" size="0 0 1" friction="{friction!r} 0.005 0.0001"/>
        <body name="ball" pos="0 0 {height!r}"><freejoint/>
          <geom name="ball" type="sphere" size="{radius!r}" mass="{mass!r}"
                friction="{friction!r} 0.005 0.0001"/></body>
      </worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def block_scene(mujoco, *, half_extents: tuple, mass: float, speed: float, timestep: float,
                friction: float):
    """A box (half extents a, b, h) resting on the plane z = 0 with its centre at z = h,
    sliding along x at ``speed``; gravity 9.81 along -z.  Returns (model, data)."""
    a, b, h = half_extents
    xml = f"""<mujoco><option timestep="{timestep!r}" gravity="0 0 -9.81"/>
      <worldbody><geom name="floor" type="plane" size="0 0 1" friction="{friction!r} 0.005 0.0001"/>
        <body name="block" pos="0 0 {h!r}"><freejoint/>
          <geom name="block" type="box" size="{a!r} {b!r} {h!r}" mass="{mass!r}"
                friction="{friction!r} 0.005 0.0001"/></body>
      </worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qvel[0] = speed
    mujoco.mj_forward(model, data)
    return model, data


def solo12_scene(mujoco, urdf: str | Path, *, pose: dict, kp: float, kd: float, foot_radius: float,
                 height: float, timestep: float, friction: float = 1.0):
    """Solo12 from its URDF with a free base, a sphere of ``foot_radius`` at each foot link's
    origin (the only collision geometry), the plane z = 0, and a position servo on each joint
    (MuJoCo's ``<position>``: τ = kp (q_ref - q) - kd u, q_ref = ``pose``), the base at
    ``height`` and the joints at the pose, at rest.  Returns (model, data)."""
    text = Path(urdf).read_text()
    text = re.sub(r"<visual>.*?</visual>", "", text, flags=re.S)
    text = re.sub(r"<collision>.*?</collision>", "", text, flags=re.S)
    text = text.replace("</robot>", '<mujoco><compiler discardvisual="true" fusestatic="false" '
                                    'balanceinertia="false"/></mujoco></robot>')
    spec = mujoco.MjSpec.from_string(text)
    spec.option.timestep = timestep
    spec.option.gravity = [0.0, 0.0, -9.81]
    spec.body("base_link").add_freejoint()
    for leg in ("FL", "FR", "HL", "HR"):
        spec.body(f"{leg}_FOOT").add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[foot_radius, 0, 0],
                                          name=f"{leg}_foot", friction=[friction, 0.005, 0.0001])
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], name="floor",
                            friction=[friction, 0.005, 0.0001])
    for joint in pose:
        act = spec.add_actuator(name=joint, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gainprm[0] = kp
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.biasprm[0:3] = [0.0, -kp, -kd]
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qpos[2] = height
    for joint, value in pose.items():
        data.qpos[model.joint(joint).qposadr[0]] = value
        data.ctrl[model.actuator(joint).id] = value
    mujoco.mj_forward(model, data)
    return model, data


def run(mujoco, model, data, times: np.ndarray, record=lambda m, d: d.qpos.copy()) -> np.ndarray:
    """Step ``data`` through ``times`` (increasing, >= the current time; each rounded to a
    whole number of steps) and return the ``record(model, data)`` rows there; the steps
    between two samples are taken in one ``mj_step(..., nstep)`` call."""
    dt = model.opt.timestep
    done = int(round(data.time / dt))
    out = []
    for t in times:
        k = int(round(t / dt))
        if k > done:
            mujoco.mj_step(model, data, nstep=k - done)
            done = k
        out.append(record(model, data))
    return np.array(out)


def normal_forces(mujoco, model, data) -> dict:
    """{geom name: the normal force (N) of its contacts with the floor} at the current state."""
    mujoco.mj_forward(model, data)
    wrench = np.zeros(6)
    out: dict = {}
    floor = model.geom("floor").id
    for i in range(data.ncon):
        c = data.contact[i]
        other = c.geom2 if c.geom1 == floor else c.geom1
        mujoco.mj_contactForce(model, data, i, wrench)
        name = model.geom(other).name
        out[name] = out.get(name, 0.0) + float(wrench[0])
    return out
