"""Hand-written contact models for the exact Coulomb friction engine (issue 37).

Each builds Kane's equations with a compliant Hunt-Crossley normal force and, per contact, one
friction placeholder (a function of time, like a specified input) per tangent direction,
applied at the contact point along the tangent; the :class:`ContactRecord` of each contact is
written here by hand (independently of ``symbody.contact``), so that the engine is tested on
equations whose every term is visible.

Models (each returns ``(eom, constants dict, helpers)``):

- :func:`block_on_slope`: a particle on a plane inclined by theta (planar: 1 tangent; spatial:
  2 tangents, the block free to move across the slope too);
- :func:`sphere_on_ground`: a uniform sphere on a horizontal plane (planar: x, y, rotation
  about z; spatial: 3 translations, 3 rotations);
- :func:`planar_box`: a rectangular box in the vertical plane, its two bottom corners
  touching the ground (two contacts, one tangent each);
- :func:`spatial_box`: a box in space, its four bottom corners touching the ground;
- :func:`two_blocks`: two blocks on one slope with different friction coefficients.
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.formulation.contact_record import ContactRecord

__all__ = ["block_on_slope", "sphere_on_ground", "planar_box", "spatial_box", "two_blocks",
           "point_contact", "hunt_crossley"]


def hunt_crossley(gap, gap_rate, k, c):
    """F_n = k δ^(3/2) max(0, 1 + 3/2 c δ'), δ = -gap, zero when apart."""
    n = sm.Rational(3, 2)
    delta = -gap
    factor = 1 - sm.Rational(3, 2) * c * gap_rate
    return sm.Piecewise((k * delta**n * factor, sm.And(gap < 0, factor > 0)), (0, True))


def point_contact(name, point, frame, origin, normal, tangents, k, c, mu, placeholders,
                  mu_static=None):
    """(record, loads) of a contact between a point (the contact feature of body b) and a plane
    fixed in ``frame`` through ``origin`` with unit ``normal``: the normal force F_n n and the
    friction force sum(λ_i t_i) at the point."""
    gap = point.pos_from(origin).dot(normal)
    vel = point.vel(frame)
    gap_rate = vel.dot(normal)
    fn = hunt_crossley(gap, gap_rate, k, c)
    slip = tuple(vel.dot(t) for t in tangents)
    force = fn * normal + sum((lam * t for lam, t in zip(placeholders, tangents)), sm.S.Zero * normal)
    record = ContactRecord(
        name=name, gap=gap, gap_rate=gap_rate, normal_force=fn, friction_force=tuple(placeholders),
        slip_velocity=slip, friction_coefficient=mu, friction_mode="exact",
        friction_placeholders=tuple(placeholders), switching=(("contact", gap),),
        stiffness=k, exponent=sm.Rational(3, 2), damping=c,
        **({} if mu_static is None else {"static_friction_coefficient": mu_static}))
    return record, [(point, force)]


def _symbols():
    return sm.symbols("m g theta k c mu")


def block_on_slope(spatial: bool = False, static: bool = False, pushed: bool = False):
    """A particle of mass m on a plane inclined by theta (down the slope: +x of the slope frame S,
    S.y its normal).  Coordinates x (down the slope), y (height above the plane) and, spatial, z
    (across).  Constants m, g, theta, k, c, mu (and mu_s with ``static``); with ``pushed`` two
    specified inputs f_x, f_y: a force on the block along S.x and S.y."""
    m, g, th, k, c, mu = _symbols()
    mu_s = sm.Symbol("mu_s") if static else None
    N = me.ReferenceFrame("N")
    S = N.orientnew("S", "Axis", (-th, N.z))
    names = "x y z" if spatial else "x y"
    q = list(me.dynamicsymbols(names))
    u = list(me.dynamicsymbols(" ".join(f"v_{s}" for s in names.split())))
    O = me.Point("O")
    O.set_vel(N, 0)
    axes = [S.x, S.y, S.z]
    P = O.locatenew("P", sum((qi * a for qi, a in zip(q, axes)), 0 * S.x))
    P.set_vel(N, sum((ui * a for ui, a in zip(u, axes)), 0 * S.x))
    tangents = [S.z, S.x] if spatial else [S.x]
    lam = list(me.dynamicsymbols("F_1 F_2" if spatial else "F_1,"))
    rec, loads = point_contact("block", P, N, O, S.y, tangents, k, c, mu, lam, mu_s)
    km = sb.KanesMethod(N, q, u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
    extra = []
    if pushed:
        fx, fy = me.dynamicsymbols("f_x f_y")
        extra = [(P, fx * S.x + fy * S.y)]
    km.kanes_equations([me.Particle("pa", P, m)], loads + [(P, -m * g * N.y)] + extra)
    eom = km.to_eom().with_constants(*([mu, mu_s] if static else [mu])).with_contacts(rec)
    consts = dict(m=1.0, g=9.81, theta=0.5, k=1e5, c=0.5, mu=0.3)
    if static:
        consts["mu_s"] = 0.4
    return eom, consts


def sphere_on_ground(spatial: bool = False):
    """A uniform sphere (mass m, radius r) on the horizontal plane y = 0 (planar: x, y and the
    rotation angle about N.z; spatial: x, y, z and three integrated angular speeds, y up)."""
    m, g, _, k, c, mu = _symbols()
    r = sm.Symbol("r")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = me.ReferenceFrame("B")
    if spatial:
        x, y, z, a1, a2, a3 = me.dynamicsymbols("x y z a_1 a_2 a_3")
        vx, vy, vz, wx, wy, wz = me.dynamicsymbols("v_x v_y v_z w_x w_y w_z")
        q, u = [x, y, z, a1, a2, a3], [vx, vy, vz, wx, wy, wz]
        B.set_ang_vel(N, wx * N.x + wy * N.y + wz * N.z)
        G = O.locatenew("G", x * N.x + y * N.y + z * N.z)
        G.set_vel(N, vx * N.x + vy * N.y + vz * N.z)
        tangents = [N.z, N.x]       # t1 x t2 = N.y, the normal
        lam = list(me.dynamicsymbols("F_1 F_2"))
    else:
        x, y, a = me.dynamicsymbols("x y alpha")
        vx, vy, w = me.dynamicsymbols("v_x v_y omega")
        q, u = [x, y, a], [vx, vy, w]
        B.set_ang_vel(N, w * N.z)
        G = O.locatenew("G", x * N.x + y * N.y)
        G.set_vel(N, vx * N.x + vy * N.y)
        tangents = [N.x]
        lam = list(me.dynamicsymbols("F_1,"))
    C = G.locatenew("C", -r * N.y)
    C.v2pt_theory(G, N, B)
    I = 2 * m * r**2 / 5
    body = me.RigidBody("ball", G, B, m, (me.inertia(N, I, I, I), G))
    rec, loads = point_contact("ball", C, N, O, N.y, tangents, k, c, mu, lam)
    km = sb.KanesMethod(N, q, u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
    km.kanes_equations([body], loads + [(G, -m * g * N.y)])
    eom = km.to_eom().with_constants(mu).with_contacts(rec)
    return eom, dict(m=1.0, g=9.81, k=1e6, c=0.5, mu=0.2, r=0.1)


def planar_box():
    """A box (mass m, half width a, half height h) in the vertical plane: coordinates x, y (its
    centre) and its angle; its two bottom corners touch the ground (contacts "left", "right")."""
    m, g, _, k, c, mu = _symbols()
    a, h = sm.symbols("a h")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    x, y, th = me.dynamicsymbols("x y phi")
    vx, vy, w = me.dynamicsymbols("v_x v_y omega")
    B = N.orientnew("B", "Axis", (th, N.z))
    B.set_ang_vel(N, w * N.z)
    G = O.locatenew("G", x * N.x + y * N.y)
    G.set_vel(N, vx * N.x + vy * N.y)
    body = me.RigidBody("box", G, B, m, (me.inertia(B, 0, 0, m * (a**2 + h**2) / 3), G))
    records, loads = [], []
    for name, sx in (("left", -1), ("right", 1)):
        P = G.locatenew(name, sx * a * B.x - h * B.y)
        P.v2pt_theory(G, N, B)
        lam = [me.dynamicsymbols(f"F_{name}")]
        rec, ld = point_contact(name, P, N, O, N.y, [N.x], k, c, mu, lam)
        records.append(rec)
        loads += ld
    km = sb.KanesMethod(N, [x, y, th], [vx, vy, w], kd_eqs=[x.diff() - vx, y.diff() - vy, th.diff() - w])
    km.kanes_equations([body], loads + [(G, -m * g * N.y)])
    eom = km.to_eom().with_constants(mu).with_contacts(*records)
    return eom, dict(m=1.0, g=9.81, k=1e5, c=0.5, mu=0.4, a=0.2, h=0.1)


def spatial_box():
    """A box (mass m, half sides a, b, h) in space, body-fixed XYZ angles, angular velocity in
    the body frame; its four bottom corners touch the ground y = 0 (y up), contacts "c0".."c3"."""
    m, g, _, k, c, mu = _symbols()
    a, b, h = sm.symbols("a b h")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    x, y, z, q1, q2, q3 = me.dynamicsymbols("x y z q_1 q_2 q_3")
    vx, vy, vz, w1, w2, w3 = me.dynamicsymbols("v_x v_y v_z w_1 w_2 w_3")
    B = N.orientnew("B", "Body", (q1, q2, q3), "XYZ")
    kd_rot = (B.ang_vel_in(N) - (w1 * B.x + w2 * B.y + w3 * B.z)).to_matrix(B)
    B.set_ang_vel(N, w1 * B.x + w2 * B.y + w3 * B.z)
    G = O.locatenew("G", x * N.x + y * N.y + z * N.z)
    G.set_vel(N, vx * N.x + vy * N.y + vz * N.z)
    Ib = me.inertia(B, m * (b**2 + h**2) / 3, m * (a**2 + b**2) / 3, m * (a**2 + h**2) / 3)
    body = me.RigidBody("box", G, B, m, (Ib, G))
    records, loads = [], []
    for i, (sx, sz) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        P = G.locatenew(f"c{i}", sx * a * B.x - h * B.y + sz * b * B.z)
        P.v2pt_theory(G, N, B)
        lam = list(me.dynamicsymbols(f"F_{i}1 F_{i}2"))
        rec, ld = point_contact(f"c{i}", P, N, O, N.y, [N.z, N.x], k, c, mu, lam)
        records.append(rec)
        loads += ld
    kd = [x.diff() - vx, y.diff() - vy, z.diff() - vz] + list(kd_rot)
    km = sb.KanesMethod(N, [x, y, z, q1, q2, q3], [vx, vy, vz, w1, w2, w3], kd_eqs=kd)
    km.kanes_equations([body], loads + [(G, -m * g * N.y)])
    eom = km.to_eom().with_constants(mu).with_contacts(*records)
    return eom, dict(m=1.0, g=9.81, k=1e5, c=0.5, mu=0.4, a=0.2, b=0.15, h=0.1)


def two_blocks():
    """Two particles on one slope (angle theta), each with its own contact and coefficient
    (mu_1 below tan theta: slides; mu_2 above: sticks)."""
    m, g, th, k, c, _ = _symbols()
    mu1, mu2 = sm.symbols("mu_1 mu_2")
    N = me.ReferenceFrame("N")
    S = N.orientnew("S", "Axis", (-th, N.z))
    O = me.Point("O")
    O.set_vel(N, 0)
    x1, y1, x2, y2 = me.dynamicsymbols("x_1 y_1 x_2 y_2")
    v1, w1, v2, w2 = me.dynamicsymbols("v_1 w_1 v_2 w_2")
    records, loads, particles = [], [], []
    for name, (xx, yy, vv, ww, mu) in (("one", (x1, y1, v1, w1, mu1)), ("two", (x2, y2, v2, w2, mu2))):
        P = O.locatenew(name, xx * S.x + yy * S.y)
        P.set_vel(N, vv * S.x + ww * S.y)
        rec, ld = point_contact(name, P, N, O, S.y, [S.x], k, c, mu, [me.dynamicsymbols(f"F_{name}")])
        records.append(rec)
        loads += ld + [(P, -m * g * N.y)]
        particles.append(me.Particle(f"p_{name}", P, m))
    q, u = [x1, y1, x2, y2], [v1, w1, v2, w2]
    km = sb.KanesMethod(N, q, u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
    km.kanes_equations(particles, loads)
    eom = km.to_eom().with_constants(mu1, mu2).with_contacts(*records)
    return eom, dict(m=1.0, g=9.81, theta=0.5, k=1e5, c=0.5, mu_1=0.3, mu_2=0.7)
