"""Synthetic OpenSim 4.x models with the non-muscle forces the importer builds (no model of
opensim-models has most of them), on the star model of :mod:`systems.opensim_synthetic`:
bodies s0 (FreeJoint), s1 (BallJoint), s2 (GimbalJoint), s3 (PinJoint), s4 (SliderJoint),
each joined to the ground."""

from __future__ import annotations

import numpy as np

from systems.opensim_synthetic import star_model

OFFSET_FRAME = ('<PhysicalOffsetFrame name="{name}"><socket_parent>{parent}</socket_parent>'
           "<translation>{t}</translation><orientation>{o}</orientation></PhysicalOffsetFrame>")

#: the ForceSet's elements, one of each type (limits and transitions put every branch of
#: CoordinateLimitForce within the coordinates' ranges [-1, 1])
PASSIVE_FORCES = {
    "SpringGeneralizedForce": '<SpringGeneralizedForce name="spring_a"><coordinate>s3_a'
    "</coordinate><stiffness>12.5</stiffness><rest_length>0.2</rest_length><viscosity>0.7"
    "</viscosity></SpringGeneralizedForce>",
    "CoordinateLimitForce": '<CoordinateLimitForce name="limit_a"><coordinate>s3_a</coordinate>'
    "<upper_stiffness>3.0</upper_stiffness><upper_limit>10</upper_limit><lower_stiffness>5.0"
    "</lower_stiffness><lower_limit>-20</lower_limit><damping>0.05</damping><transition>25"
    "</transition></CoordinateLimitForce>"
    '<CoordinateLimitForce name="limit_s"><coordinate>s4_s</coordinate><upper_stiffness>300'
    "</upper_stiffness><upper_limit>0.1</upper_limit><lower_stiffness>200</lower_stiffness>"
    "<lower_limit>-0.2</lower_limit><damping>4</damping><transition>0.5</transition>"
    "</CoordinateLimitForce>",
    "ExpressionBasedCoordinateForce": '<ExpressionBasedCoordinateForce name="expr_g">'
    "<coordinate>s2_y</coordinate><expression>-3.5*q - 0.4*qdot + 2*sin(q)^2 - max(q, 0.1)*"
    "abs(qdot) + step(q)*exp(-q^2) + 1.5e-1/(2+cos(q)) - -2^3^0.5*0.01</expression>"
    "</ExpressionBasedCoordinateForce>",
    "PointToPointSpring": '<PointToPointSpring name="p2p"><socket_body1>/bodyset/s0'
    "</socket_body1><socket_body2>/bodyset/s1</socket_body2><point1>0.1 0.2 -0.05</point1>"
    "<point2>-0.03 0.1 0.2</point2><stiffness>80</stiffness><rest_length>0.3</rest_length>"
    "</PointToPointSpring>",
    "PointActuator": '<PointActuator name="push"><body>s0</body><point>0.05 -0.1 0.02</point>'
    "<direction>0.3 1 -0.2</direction><optimal_force>20</optimal_force></PointActuator>"
    '<PointActuator name="push_global"><body>s1</body><point>0.15 -0.3 0.1</point>'
    "<point_is_global>true</point_is_global><direction>1 0.5 0.2</direction>"
    "<force_is_global>true</force_is_global><optimal_force>15</optimal_force></PointActuator>",
    "BushingForce": '<BushingForce name="bush"><socket_frame1>s0_offset</socket_frame1>'
    "<socket_frame2>s2_offset</socket_frame2><frames>"
    + OFFSET_FRAME.format(name="s0_offset", parent="/bodyset/s0", t="0.1 -0.2 0.05", o="0.3 -0.2 0.1")
    + OFFSET_FRAME.format(name="s2_offset", parent="/bodyset/s2", t="-0.05 0.1 0.02",
                     o="-0.1 0.25 0.2")
    + "</frames><rotational_stiffness>20 30 40</rotational_stiffness><translational_stiffness>"
    "500 600 700</translational_stiffness><rotational_damping>0.5 0.6 0.7</rotational_damping>"
    "<translational_damping>5 6 7</translational_damping></BushingForce>",
}


def passive_force_model(forces: dict | None = None) -> str:
    """The star model with ``forces`` ({type: XML}, default :data:`PASSIVE_FORCES`)."""
    forces = PASSIVE_FORCES if forces is None else forces
    xml = star_model(only=("FreeJoint", "BallJoint", "GimbalJoint", "PinJoint", "SliderJoint"))
    return xml.replace("</Model>", '<ForceSet name="forceset"><objects>'
                       + "".join(forces.values()) + "</objects></ForceSet></Model>")


def limited_states(model, count: int, seed: int, limited: dict) -> list:
    """``count`` states (q, u, r) of ``model``: random coordinates within their ranges but the
    ``limited`` ones ({name: values, one per state}: beyond a limit, within its transition),
    u in [-2, 2], the specified inputs in [-1, 1]."""
    rng = np.random.default_rng(seed)
    n, m = len(model.coordinates), len(model.eom.specifieds)
    out = []
    for k in range(count):
        q = model.random_coordinates(rng)
        for name, values in limited.items():
            q[model.coordinate_names.index(name)] = values[k]
        out.append((q, rng.uniform(-2, 2, n), rng.uniform(-1, 1, m)))
    return out
