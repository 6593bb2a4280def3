"""Small systems with contacts for the tests of symbody.contact (issue 37).

Each builder returns a namespace with the frames, points, bodies, symbols, the contact and
the loads; ``kane(system)`` forms the equations with symbody's KanesMethod.
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb


def spinning_ball(friction=None, friction_mode="smooth", damping=None, **contact_options):
    """A free rigid ball (6 dof: position x, y, z, body-fixed XYZ angles; speeds v and ω in
    the ball's frame) above the ground plane z = 0, gravity along -N.z."""
    x, y, z, q1, q2, q3 = me.dynamicsymbols("x y z q1 q2 q3")
    vx, vy, vz, w1, w2, w3 = me.dynamicsymbols("v_x v_y v_z w1 w2 w3")
    m, g, r, k, c, mu = sm.symbols("m g r k c mu")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = me.ReferenceFrame("B")
    B.orient_body_fixed(N, (q1, q2, q3), "XYZ")
    kd = [x.diff() - vx, y.diff() - vy, z.diff() - vz,
          w1 - B.ang_vel_in(N).dot(B.x), w2 - B.ang_vel_in(N).dot(B.y), w3 - B.ang_vel_in(N).dot(B.z)]
    B.set_ang_vel(N, w1 * B.x + w2 * B.y + w3 * B.z)
    P = O.locatenew("P", x * N.x + y * N.y + z * N.z)
    P.set_vel(N, vx * N.x + vy * N.y + vz * N.z)
    ball = me.RigidBody("ball", P, B, m, (me.inertia(B, 1, 1, 1) * 2 * m * r ** 2 / 5, P))
    options = dict(stiffness=k, friction=mu if friction is None else friction,
                   friction_mode=friction_mode, name="ball")
    options["damping"] = c if damping is None else damping
    options.update(contact_options)
    contact = sb.contact.Contact(sb.contact.Sphere(ball, r), sb.contact.Plane(O, N.z), **options)
    loads = contact.to_loads() + [me.Force(P, -m * g * N.z)]
    return SimpleNamespace(N=N, O=O, B=B, P=P, ball=ball, bodies=[ball], loads=loads, contact=contact,
                           q=[x, y, z, q1, q2, q3], u=[vx, vy, vz, w1, w2, w3], kd=kd,
                           constants=dict(m=m, g=g, r=r, k=k, c=c, mu=mu))


def kane(s, sympy_class=False):
    """(method, Fr + Fr*) of the system ``s`` with symbody's (or SymPy's) KanesMethod."""
    cls = me.KanesMethod if sympy_class else sb.KanesMethod
    km = cls(s.N, s.q, s.u, kd_eqs=s.kd)
    fr, frstar = km.kanes_equations(s.bodies, s.loads)
    return km, fr + frstar


def point_on_slope():
    """A block as a point P of mass m at (s, h) in the axes S of a slope tilted by -θ about
    N.z, on a Hunt-Crossley contact (stiffness k, damping c) with exact Coulomb friction μ
    ("slope"), gravity along -N.y."""
    s, h, us, uh = me.dynamicsymbols("s h u_s u_h")
    m, g, theta, k, c, mu = sm.symbols("m g theta k c mu")
    N = me.ReferenceFrame("N")
    S = N.orientnew("S", "Axis", (-theta, N.z))
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", s * S.x + h * S.y)
    P.set_vel(N, us * S.x + uh * S.y)
    slope = sb.contact.Contact(sb.contact.Plane(O, S.y), sb.contact.Sphere(P, 0), stiffness=k,
                               damping=c, friction=mu, friction_mode="exact", name="slope")
    block = me.Particle("block", P, m)
    return SimpleNamespace(N=N, S=S, O=O, P=P, bodies=[block], contact=slope,
                           loads=slope.to_loads() + [(P, -m * g * N.y)],
                           q=[s, h], u=[us, uh], kd=[s.diff() - us, h.diff() - uh],
                           constants=dict(m=m, g=g, theta=theta, k=k, c=c, mu=mu))


def box_on_slope(friction=None, theta=None):
    """A planar box (half extents a, b, h; coordinates x, z of its centre and its pitch θ_b
    about N.y) on the plane through O tilted by θ about N.y (its 8 corners, 4 of them
    distinct in the plane of motion)."""
    x, z, qb = me.dynamicsymbols("x z q_b")
    vx, vz, wb = me.dynamicsymbols("v_x v_z w_b")
    m, g, k, c, mu, a, b, h = sm.symbols("m g k c mu a b h")
    theta = sm.Symbol("theta") if theta is None else theta
    N = me.ReferenceFrame("N")
    S = N.orientnew("S", "Axis", (theta, N.y))
    O = me.Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", (qb, N.y))
    B.set_ang_vel(N, wb * N.y)
    P = O.locatenew("P", x * N.x + z * N.z)
    P.set_vel(N, vx * N.x + vz * N.z)
    I = me.inertia(B, m * (b ** 2 + h ** 2) / 3, m * (a ** 2 + h ** 2) / 3, m * (a ** 2 + b ** 2) / 3)
    box = me.RigidBody("box", P, B, m, (I, P))
    contact = sb.contact.Contact(sb.contact.Plane(O, S.z), sb.contact.Box(box, (a, b, h)), stiffness=k,
                                 damping=c, friction=mu if friction is None else friction, name="box")
    loads = contact.to_loads() + [me.Force(P, -m * g * N.z)]
    return SimpleNamespace(N=N, S=S, O=O, B=B, P=P, box=box, bodies=[box], loads=loads, contact=contact,
                           q=[x, z, qb], u=[vx, vz, wb],
                           kd=[x.diff() - vx, z.diff() - vz, qb.diff() - wb],
                           constants=dict(m=m, g=g, k=k, c=c, mu=mu, a=a, b=b, h=h, theta=theta))


def rolling_ball(rolling_resistance):
    """A ball in the x-z plane (x, z, pitch θ about N.y) on the ground z = 0 with smooth
    friction and rolling resistance ``rolling_resistance`` (a length)."""
    x, z, th = me.dynamicsymbols("x z theta")
    vx, vz, w = me.dynamicsymbols("v_x v_z omega")
    m, g, r, k, c, mu = sm.symbols("m g r k c mu")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (th, N.y))
    B.set_ang_vel(N, w * N.y)
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + z * N.z)
    P.set_vel(N, vx * N.x + vz * N.z)
    ball = me.RigidBody("ball", P, B, m, (me.inertia(B, 1, 1, 1) * 2 * m * r ** 2 / 5, P))
    contact = sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(ball, r), stiffness=k,
                                 damping=c, friction=mu, rolling_resistance=rolling_resistance,
                                 name="ground")
    loads = contact.to_loads() + [me.Force(P, -m * g * N.z)]
    return SimpleNamespace(N=N, O=O, B=B, P=P, ball=ball, bodies=[ball], loads=loads, contact=contact,
                           q=[x, z, th], u=[vx, vz, w], kd=[x.diff() - vx, z.diff() - vz, th.diff() - w],
                           constants=dict(m=m, g=g, r=r, k=k, c=c, mu=mu))
