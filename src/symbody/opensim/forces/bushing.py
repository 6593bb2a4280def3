"""``BushingForce`` (OpenSim's linear 6-dof bushing, Simbody's ``Force::LinearBushing``) and
``ExpressionBasedBushingForce`` (OpenSim's ``TwoFrameLinker`` with Lepton formulas).

Frame F (``frame1``) is fixed in body 1 and M (``frame2``) in body 2.  The deflections
q = (θ₁, θ₂, θ₃, x, y, z) are the body-fixed X-Y-Z angles of R_FM = R_GFᵀ R_GM and the
position of M's origin in F, p_FM = R_GFᵀ (p_GM - p_GF); their rates are

    θ' = N(θ) ω_FM,M    (ω_FM,M = R_GMᵀ (ω_M - ω_F), N the body-XYZ kinematic matrix),
    x' = R_GFᵀ (v_M - v_F - ω_F × (p_GM - p_GF)),

all linear in the speeds: q' = D(q) u.  The force in the deflection basis is
f = -(K q + C q') with K = diag(rotational_stiffness, translational_stiffness) and C the
dampings likewise (``BushingForce``), or f = -(k(q) + C q') with k = (Mx, My, Mz, Fx, Fy, Fz)
the file's formulas in ``theta_x theta_y theta_z delta_x delta_y delta_z``
(``ExpressionBasedBushingForce``, read by :mod:`.expression`).  OpenSim applies it as a moment
R_GM N(θ)ᵀ f_θ and a force R_GF f_x on body 2 at M (and their opposites on body 1 at F), whose
power is f · q', so the generalized forces are Q = Dᵀ f.  (θ₂ = ±π/2 is the angles'
singularity, as in OpenSim.)
"""

from __future__ import annotations

import numpy as np
import symengine as se

from ..model_spec import Placement, body_fixed_xyz
from . import register_force
from .base import ForceContext, ForceContribution
from .expression import parse_expression
from .point_forces import BodyTag, frame_in_ground, rotate, rotate_back
from .system_form import BodyTorque, PointLoad
from .vector3 import F, cross, sub

__all__ = ["bushing_force", "expression_based_bushing_force", "bushing_deflection",
           "body_xyz_angles", "body_xyz_rate_matrix"]


def body_xyz_angles(R) -> list:
    """(θ₁, θ₂, θ₃) with R = Rx(θ₁) Ry(θ₂) Rz(θ₃) (3x3 nested, symengine), |θ₂| < π/2."""
    return [se.atan2(-R[1][2], R[2][2]),
            se.atan2(R[0][2], se.sqrt(R[0][0] ** 2 + R[0][1] ** 2)),
            se.atan2(-R[0][1], R[0][0])]


def body_xyz_rate_matrix(theta) -> list:
    """N(θ) (3x3 nested): θ' = N ω with ω in the rotated frame (Simbody's
    ``calcNForBodyXYZInBodyFrame``)."""
    s1, c1, s2, c2 = se.sin(theta[1]), se.cos(theta[1]), se.sin(theta[2]), se.cos(theta[2])
    return [[c2 / c1, -s2 / c1, F(0.0)], [s2, c2, F(0.0)], [-s1 * c2 / c1, s1 * s2 / c1, F(1.0)]]


def _frames(element, ctx: ForceContext) -> tuple[Placement, Placement]:
    if element.find("body_1") is not None:           # 3.x: bodies with offsets
        out = []
        for k in (1, 2):
            body = ctx.spec.frame_of(BodyTag(element, f"body_{k}"), "body")
            R = body_fixed_xyz(element.numbers(f"orientation_body_{k}", 3, default=(0, 0, 0)))
            p = element.numbers(f"location_body_{k}", 3, default=(0, 0, 0))
            out.append(body.compose(R, p))
        return out[0], out[1]
    return ctx.frame(element, "frame1"), ctx.frame(element, "frame2")


def _speeds(ctx: ForceContext) -> list:
    u = [None] * ctx.o
    for name in ctx.coordinate_names:
        _, us, _, _, k = ctx.coordinate(name)
        u[k] = us
    return u


def bushing_deflection(element, ctx: ForceContext) -> tuple:
    """``(f1, f2, q, q', D)``: the two frames, the deflections q (6), their rates q' (6) and
    the columns D[j] (6) of q' = D u (symengine; module docstring)."""
    f1, f2 = _frames(element, ctx)
    kin = ctx.kinematics
    R_GF, p_GF = frame_in_ground(ctx, f1)
    R_GM, p_GM = frame_in_ground(ctx, f2)
    R_FM = [[sum((R_GF[a][i] * R_GM[a][j] for a in range(3)), F(0.0)) for j in range(3)]
            for i in range(3)]
    theta = body_xyz_angles(R_FM)
    arm = sub(p_GM, p_GF)
    q = theta + rotate_back(R_GF, arm)
    N = body_xyz_rate_matrix(theta)
    w1, w2 = kin.angular_jacobian(f1.body), kin.angular_jacobian(f2.body)
    v1, v2 = kin.point_jacobian(f1.body, f1.p), kin.point_jacobian(f2.body, f2.p)
    D = []                                   # columns of q' = D u
    for j in range(ctx.o):
        w_rel = rotate_back(R_GM, [w2[a][j] - w1[a][j] for a in range(3)])
        wF = [w1[a][j] for a in range(3)]
        v_rel = sub(sub([v2[a][j] for a in range(3)], [v1[a][j] for a in range(3)]),
                    cross(wF, arm))
        D.append(rotate(N, w_rel) + rotate_back(R_GF, v_rel))
    u = _speeds(ctx)
    qdot = [sum((D[j][i] * u[j] for j in range(ctx.o)), F(0.0)) for i in range(6)]
    return f1, f2, q, qdot, D


def _dampings(element) -> np.ndarray:
    return np.concatenate([element.numbers("rotational_damping", 3, default=(0, 0, 0)),
                           element.numbers("translational_damping", 3, default=(0, 0, 0))])


def _generalized(ctx: ForceContext, D: list, f: list) -> list:
    return [sum((D[j][i] * f[i] for i in range(6)), F(0.0)) for j in range(ctx.o)]


def bushing_loads(ctx: ForceContext, f1: Placement, f2: Placement, q: list, f: list) -> tuple:
    """The bushing on ``model.system``: the moment R_GM N(θ)ᵀ f_θ and the force R_GF f_x on
    body 2 at M's origin, their opposites on body 1 (the force at its material point at M's
    origin), as OpenSim applies them (their power is f · q')."""
    R_GF, _ = frame_in_ground(ctx, f1)
    R_GM, p_GM = frame_in_ground(ctx, f2)
    N = body_xyz_rate_matrix(q[:3])
    moment = rotate(R_GM, rotate_back(N, f[:3]))
    force = rotate(R_GF, f[3:])
    R1, p1 = ctx.kinematics.pose(f1.body)
    minus = F(-1.0)
    return (PointLoad(f2.body, tuple(f2.p), tuple(force)), BodyTorque(f2.body, tuple(moment)),
            PointLoad(f1.body, tuple(rotate_back(R1, sub(p_GM, p1))),
                      tuple(minus * x for x in force)),
            BodyTorque(f1.body, tuple(minus * x for x in moment)))


@register_force("BushingForce")
def bushing_force(element, ctx: ForceContext) -> ForceContribution:
    """The linear bushing (module docstring)."""
    f1, f2, q, qdot, D = bushing_deflection(element, ctx)
    k = np.concatenate([element.numbers("rotational_stiffness", 3, default=(0, 0, 0)),
                        element.numbers("translational_stiffness", 3, default=(0, 0, 0))])
    c = _dampings(element)
    f = [-(F(k[i]) * q[i] + F(c[i]) * qdot[i]) for i in range(6)]
    return ForceContribution(generalized=_generalized(ctx, D, f),
                             system_loads=bushing_loads(ctx, f1, f2, q, f),
                             record=("BushingForce", f1.body, f2.body))


#: ExpressionBasedBushingForce's formulas, in the order of the deflections
_FORMULAS = ("Mx_expression", "My_expression", "Mz_expression", "Fx_expression",
             "Fy_expression", "Fz_expression")
_DEFLECTIONS = ("theta_x", "theta_y", "theta_z", "delta_x", "delta_y", "delta_z")


@register_force("ExpressionBasedBushingForce")
def expression_based_bushing_force(element, ctx: ForceContext) -> ForceContribution:
    """The bushing whose stiffness forces are the file's formulas (module docstring); a
    missing formula is 0, as in OpenSim."""
    f1, f2, q, qdot, D = bushing_deflection(element, ctx)
    variables = dict(zip(_DEFLECTIONS, q))
    texts = [element.text_of(tag) or "0.0" for tag in _FORMULAS]
    stiffness = [parse_expression(t, variables, element, f"<{tag}>")
                 for t, tag in zip(texts, _FORMULAS)]
    c = _dampings(element)
    f = [-(stiffness[i] + F(c[i]) * qdot[i]) for i in range(6)]
    return ForceContribution(generalized=_generalized(ctx, D, f),
                             system_loads=bushing_loads(ctx, f1, f2, q, f),
                             record=("ExpressionBasedBushingForce", f1.body, f2.body,
                                     tuple(texts)))
