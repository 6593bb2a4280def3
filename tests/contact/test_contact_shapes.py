"""symbody.contact's shapes against closed forms: a tilted box's, capsule's and cylinder's gaps,
two spheres colliding (momentum and restitution), a box settling on the ground (issue 37)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb


def _tilted_body():
    """A body B at P = (x, y, z), turned by body-fixed XYZ angles; the ground plane z = 0."""
    x, y, z, a, b, c = me.dynamicsymbols("x y z a b c")
    N = me.ReferenceFrame("N")
    B = me.ReferenceFrame("B")
    B.orient_body_fixed(N, (a, b, c), "XYZ")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y + z * N.z)
    values = {x: 0.3, y: -0.2, z: 0.25, a: 0.4, b: -0.7, c: 1.1}
    R = np.array(N.dcm(B).xreplace(values).evalf(), dtype=float)       # v_N = R v_B
    centre = np.array([0.3, -0.2, 0.25])
    return N, B, O, P, values, R, centre


def _gaps(contact, values):
    return sorted(float(sm.sympify(r.gap).xreplace(values)) for r in contact.records)


def test_gaps_of_a_tilted_box_capsule_and_cylinder_equal_closed_forms():
    N, B, O, P, values, R, centre = _tilted_body()
    ground = sb.contact.Plane(O, N.z)
    half = np.array([0.2, 0.1, 0.05])
    box = sb.contact.Contact(ground, sb.contact.Box(P, half, frame=B), stiffness=1.0, name="box")
    corners = [centre[2] + R[2] @ (np.array([sx, sy, sz]) * half)
               for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    np.testing.assert_allclose(_gaps(box, values), sorted(corners), rtol=1e-13)
    axis_z = R[2, 2]                                                  # the z component of B.z in N
    capsule = sb.contact.Contact(ground, sb.contact.Capsule(P, 0.05, 0.15, frame=B), stiffness=1.0,
                                 name="capsule")
    ends = [centre[2] + s * 0.15 * axis_z - 0.05 for s in (-1, 1)]
    np.testing.assert_allclose(_gaps(capsule, values), sorted(ends), rtol=1e-13)
    cylinder = sb.contact.Contact(ground, sb.contact.Cylinder(P, 0.08, 0.12, frame=B), stiffness=1.0,
                                  name="cylinder")
    # the deepest rim point of each end face: its centre's height minus R sqrt(1 - a_z²)
    rims = [centre[2] + s * 0.12 * axis_z - 0.08 * np.sqrt(1 - axis_z ** 2) for s in (-1, 1)]
    np.testing.assert_allclose(_gaps(cylinder, values), sorted(rims), rtol=1e-13)
    polygon = sb.contact.Contact(ground, sb.contact.Cylinder(P, 0.08, 0.12, frame=B, rim_points=16),
                                 stiffness=1.0, name="polygon")
    assert _gaps(polygon, values)[0] == pytest.approx(min(rims), abs=0.08 * (1 - np.cos(np.pi / 16)))
    assert [r.name for r in box.records][:2] == ["box[0]", "box[1]"]


def test_two_spheres_collide_with_the_given_restitution_and_keep_their_momentum():
    xa, xb, va, vb = me.dynamicsymbols("x_a x_b v_a v_b")
    ma, mb, k = sm.symbols("m_a m_b k")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    A = O.locatenew("A", xa * N.x)
    A.set_vel(N, va * N.x)
    Bp = O.locatenew("B", xb * N.x)
    Bp.set_vel(N, vb * N.x)
    con = sb.contact.Contact(sb.contact.Sphere(A, 0.05), sb.contact.Sphere(Bp, 0.08), stiffness=k,
                             restitution=0.6, impact_speed=2.0, name="pair")
    km = sb.KanesMethod(N, [xa, xb], [va, vb], kd_eqs=[xa.diff() - va, xb.diff() - vb])
    km.kanes_equations([me.Particle("a", A, ma), me.Particle("b", Bp, mb)], con.to_loads())
    numeric = sb.compile(km.to_eom())
    sol = sb.simulate(numeric, (0.0, 0.3), {xa: 0.0, xb: 0.2, va: 2.0, vb: 0.0}, {ma: 1.0, mb: 3.0, k: 1e6},
                      solver=sb.Solver(rtol=1e-12, atol=1e-14))
    assert [e.name for e in sol.events] == ["pair: touchdown", "pair: lift-off"]
    momentum = 1.0 * sol.u[:, 0] + 3.0 * sol.u[:, 1]
    np.testing.assert_allclose(momentum, 2.0, rtol=1e-10)
    separation = sol.u[-1, 1] - sol.u[-1, 0]
    assert separation == pytest.approx(0.6 * 2.0, rel=1e-8)


def test_a_box_settles_on_its_corners_carrying_its_weight():
    """A planar box dropped flat onto level ground comes to rest on its 8 corners (4 pairs in
    the plane of motion): the normal forces sum to m g."""
    from systems.contact_systems import box_on_slope, kane

    s = box_on_slope(theta=0)
    numeric = sb.compile(kane(s)[0].to_eom())
    c = s.constants
    p = {c["m"]: 2.0, c["g"]: 9.81, c["k"]: 1e5, c["c"]: 5.0, c["mu"]: 0.5, c["a"]: 0.2, c["h"]: 0.1}
    x0 = dict(zip(s.q + s.u, [0.0, 0.12, 0.02, 0.0, 0.0, 0.0]))
    sol = sb.simulate(numeric, (0.0, 1.5), x0, p, solver=sb.Solver(method="Radau", rtol=1e-8, atol=1e-10))
    assert sol.success, sol.message
    total = sum(rec.normal_force[-1] for rec in sol.contacts.values())
    assert total == pytest.approx(2.0 * 9.81, rel=1e-6)
    assert np.abs(sol.u[-1]).max() < 1e-4 and abs(sol.q[-1, 2]) < 1e-6


@pytest.mark.parametrize("normal", ["z", "-y", "tilted", "symbolic"])
def test_plane_tangent_basis_is_right_handed_and_orthonormal(normal):
    N = me.ReferenceFrame("N")
    alpha = sm.Symbol("alpha")
    n = {"z": N.z, "-y": -N.y, "tilted": (N.x + N.z) / sm.sqrt(2),
         "symbolic": sm.cos(alpha) * N.z + sm.sin(alpha) * N.x}[normal]
    t1, t2 = sb.contact.Plane(me.Point("O"), n).tangents()
    values = {alpha: 0.37}
    for a, b, expected in ((t1, t1, 1), (t2, t2, 1), (t1, t2, 0), (t1, n, 0), (t2, n, 0)):
        assert float(sm.sympify(a.dot(b)).xreplace(values)) == pytest.approx(expected, abs=1e-14)
    cross = t1.cross(t2) - n
    assert all(abs(float(sm.sympify(cross.dot(e)).xreplace(values))) < 1e-14 for e in (N.x, N.y, N.z))
