"""symbody.contact: the loads' generalized forces against SymPy's KanesMethod and a hand
computation, the records the equations collect, saved models (issue 37)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.compat.sympy import TIME
from symbody.errors import InputError
from systems.contact_systems import box_on_slope, kane, spinning_ball


def _random_values(s, rng, penetrating=True):
    """Numbers for the constants, coordinates and speeds of ``s`` (the contact pressed in)."""
    c = s.constants
    values = {c["m"]: 1.3, c["g"]: 9.81, c["k"]: 2.0e4, c["c"]: 0.4, c["mu"]: 0.7}
    for key, v in (("r", 0.1), ("a", 0.2), ("b", 0.15), ("h", 0.1), ("theta", 0.3)):
        if key in c and isinstance(c[key], sm.Symbol):
            values[c[key]] = v
    for q in s.q:
        values[q] = rng.uniform(-0.5, 0.5)
    if penetrating and len(s.q) == 6:            # the ball: its centre below z = r
        values[s.q[2]] = 0.1 - rng.uniform(0.002, 0.01)
    elif penetrating:                            # the box: a corner below the slope
        values[s.q[1]] = 0.05
    for u in s.u:
        values[u] = rng.uniform(-1.0, 1.0)
    return values


def _number(expr, values):
    return float(sm.sympify(sm.sympify(expr).xreplace(values)).evalf())


def _numbers(matrix, values):
    """A matrix expression at ``values`` (lambdified: SymPy's evalf of the box's forcing is slow)."""
    keys = list(values)
    plain = [sm.Symbol(f"_v{i}") for i in range(len(keys))]
    f = sm.lambdify(plain, sm.Matrix(matrix).xreplace(dict(zip(keys, plain))), "numpy", cse=True)
    with np.errstate(invalid="ignore"):          # numpy evaluates the Piecewise branches not taken
        return np.array(f(*[values[k] for k in keys]), dtype=float)


def _state_map(km):
    return {qd: sol for qd, sol in km.kindiffdict().items()}


@pytest.mark.parametrize("builder", [spinning_ball, box_on_slope], ids=["ball", "box on a slope"])
def test_generalized_forces_equal_sympys_kane(builder):
    """Fr + Fr* of symbody's KanesMethod with the contact's loads equals SymPy's KanesMethod's
    with the same loads (mass matrix and forcing) at random states with penetration."""
    s = builder()
    eom = kane(s)[0].to_eom()
    km_sympy, _ = kane(s, sympy_class=True)
    rng = np.random.default_rng(7)
    for _ in range(3):
        values = _random_values(s, rng)
        M, g, M_ref, f_ref = (_numbers(e, values) for e in (eom.dynamic_mass, eom.dynamic_rest,
                                                             km_sympy.mass_matrix, km_sympy.forcing))
        g, f_ref = g.ravel(), f_ref.ravel()
        assert np.abs(f_ref).max() > 1.0           # the contact pushes
        np.testing.assert_allclose(M, M_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(-g, f_ref, rtol=1e-10, atol=1e-10)


def test_ball_forces_equal_a_hand_computation():
    """The ball's record and its generalized active forces against numpy: F_n = k δ^1.5
    (1 + 3/2 c δ'), the contact point's velocity v + ω × (-r z), the regularized Coulomb force,
    and Fr = (F, (r_C × F) in B)."""
    s = spinning_ball()
    km = sb.KanesMethod(s.N, s.q, s.u, kd_eqs=s.kd)
    fr, _ = km.kanes_equations(s.bodies, s.contact.to_loads())
    rec = km.to_eom().contacts[0]
    rng = np.random.default_rng(3)
    c = s.constants
    for _ in range(3):
        values = _random_values(s, rng)
        k, damp, mu, r = values[c["k"]], values[c["c"]], values[c["mu"]], 0.1
        values[c["r"]] = r
        z = values[s.q[2]]
        v = np.array([values[u] for u in s.u[:3]])
        w_B = np.array([values[u] for u in s.u[3:]])
        C_NB = np.array(s.N.dcm(s.B).xreplace(values).evalf(), dtype=float)   # v_N = C_NB v_B
        w = C_NB @ w_B
        delta, delta_rate = r - z, -v[2]
        Fn = k * delta ** 1.5 * (1 + 1.5 * damp * delta_rate)
        vc = v + np.cross(w, [0.0, 0.0, -r])
        vt = vc[:2]
        Ft = -mu * Fn * vt / np.sqrt(vt @ vt + 1e-6)
        assert _number(rec.normal_force, values) == pytest.approx(Fn, rel=1e-12)
        assert _number(rec.gap, values) == pytest.approx(-delta, rel=1e-12)
        assert _number(rec.gap_rate, values) == pytest.approx(-delta_rate, rel=1e-12)
        np.testing.assert_allclose([_number(e, values) for e in rec.slip_velocity], vt, rtol=1e-12)
        np.testing.assert_allclose([_number(e, values) for e in rec.friction_force], Ft, rtol=1e-12)
        F = np.array([Ft[0], Ft[1], Fn])
        moment_B = C_NB.T @ np.cross([0.0, 0.0, -r], F)
        Fr = np.array([_number(e.xreplace(_state_map(km)), values) for e in fr])
        np.testing.assert_allclose(Fr, np.concatenate([F, moment_B]), rtol=1e-11, atol=1e-12)
        power = F @ vc
        assert _number(rec.power, values) == pytest.approx(power, rel=1e-11)


def test_records_reach_the_equations_by_every_path():
    """eom.contacts from Kane's method, Lagrange's method and a SymPy System; q' replaced."""
    s = spinning_ball()
    eom = kane(s)[0].to_eom()
    assert [r.name for r in eom.contacts] == ["ball"]
    rec = eom.contacts[0]
    qdots = {q.diff(TIME) for q in s.q}
    assert not (rec.gap_rate.atoms(sm.Derivative) & qdots)
    assert rec.gap_rate == s.u[2]
    system = me.System(s.N, s.O)
    system.add_bodies(*s.bodies)
    system.q_ind = s.q
    system.u_ind = s.u
    system.kdes = s.kd
    system.add_loads(*s.loads)
    model = sb.compile(system)
    assert [r.name for r in model.contacts] == ["ball"]
    # Lagrange: a planar ball (no friction), speeds u = q'
    x, z = me.dynamicsymbols("x z")
    m, g, k, r = sm.symbols("m g k r")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + z * N.z)
    P.set_vel(N, x.diff() * N.x + z.diff() * N.z)
    ball = me.Particle("ball", P, m)
    con = sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(P, r), stiffness=k, exponent=1)
    L = me.Lagrangian(N, ball) - m * g * z
    lm = sb.LagrangesMethod(L, [x, z], forcelist=con.to_loads(), frame=N)
    leom = lm.to_eom()
    assert [c.name for c in leom.contacts] == ["P_on_O"]
    assert leom.contacts[0].gap_rate == leom.u[1]


def test_hand_written_equations_take_contacts_in_compile(tmp_path):
    """compile(eom, contacts=[...]) for equations derived by hand; save/load keeps them."""
    z, w = me.dynamicsymbols("z w")
    m, g, k, c, r = sm.symbols("m g k c r")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", z * N.z)
    P.set_vel(N, w * N.z)
    con = sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(P, r), stiffness=k,
                             damping=c, name="drop")
    Fn = con.normal_force.xreplace({z.diff(): w})
    eom = sb.EquationsOfMotion([z], [w], [z.diff() - w], [m * w.diff() + m * g - Fn])
    model = sb.compile(eom, contacts=[con])
    assert [rec.name for rec in model.contacts] == ["drop"]
    assert model.contacts[0].gap_rate == w
    path = model.save(tmp_path / "drop")
    loaded = sb.load_model(path)
    assert [rec.name for rec in loaded.contacts] == ["drop"]
    a, b = model.contacts[0], loaded.contacts[0]
    for key, value in a.expressions().items():
        other = b.expressions()[key]
        if isinstance(value, tuple):
            assert all(sm.simplify(x - y) == 0 for x, y in zip(value, other))
        else:
            assert (value is None and other is None) or sm.simplify(value - other) == 0, key
    assert b.switching[0][0] == "contact" and b.friction_mode == "none"
    import pickle
    assert [rec.name for rec in pickle.loads(pickle.dumps(model)).contacts] == ["drop"]


def _ball_parts():
    x, z, th = me.dynamicsymbols("x z theta")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (th, N.y))
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + z * N.z)
    return N, B, O, P


@pytest.mark.parametrize("options, words", [
    (dict(stiffness=-1.0), "stiffness must be >= 0"),
    (dict(stiffness=1e4, friction=-0.2), "friction coefficient must be >= 0"),
    (dict(stiffness=1e4, restitution=1.5, impact_speed=1.0), "restitution must be in [0, 1]"),
    (dict(stiffness=1e4, restitution=-0.1, impact_speed=1.0), "restitution must be in [0, 1]"),
    (dict(stiffness=1e4, exponent=0.5), "exponent must be >= 1"),
    (dict(stiffness=1e4, damping=-1.0), "damping must be >= 0"),
    (dict(stiffness=1e4, impact_speed=1.0), "impact_speed is used only with restitution"),
    (dict(stiffness=1e4, restitution=0.5, friction=0.3, friction_mode="exact"), "impact_speed=v"),
    (dict(stiffness=1e4, friction_mode="magic", friction=0.3), "friction_mode"),
    (dict(stiffness=1e4, smoothing=-1e-3), "smoothing's depth scale must be > 0"),
    (dict(stiffness=1e4, smoothing=sb.contact.SmoothNormal(1e-4, 0.0)), "rate scale must be > 0"),
    (dict(stiffness=1e4, damping=10.0, damping_law="linear", smoothing=True),
     "smoothing applies to the Hunt-Crossley law only"),
])
def test_bad_parameters_name_the_contact(options, words):
    N, B, O, P = _ball_parts()
    with pytest.raises(InputError, match="foot") as info:
        sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(P, 0.1, frame=B), name="foot",
                           **options)
    assert words in str(info.value)


def test_bad_geometry_names_the_contact():
    N, B, O, P = _ball_parts()
    plane = sb.contact.Plane(O, 2 * N.z)
    with pytest.raises(InputError, match=r"'tilted'.*not a unit vector"):
        sb.contact.Contact(plane, sb.contact.Sphere(P, 0.1), stiffness=1.0, name="tilted")
    Q = P.locatenew("Q", 0.3 * B.x)
    with pytest.raises(InputError, match=r"'self'.*fixed to each other"):
        sb.contact.Contact(sb.contact.Sphere(P, 0.1, frame=B), sb.contact.Sphere(Q, 0.1, frame=B),
                           stiffness=1.0, name="self")
    plane_on_body = sb.contact.Plane(P, B.z)
    with pytest.raises(InputError, match=r"'same body'.*fixed to each other"):
        sb.contact.Contact(plane_on_body, sb.contact.Box(Q, (0.1, 0.1, 0.1), frame=B), stiffness=1.0,
                           name="same body")
    from symbody.scene import Mesh
    mesh = Mesh("foot.stl")
    with pytest.raises(InputError, match=r"'mesh foot'.*mesh"):
        sb.contact.Contact(sb.contact.Plane(O, N.z), mesh, stiffness=1.0, name="mesh foot")
    with pytest.raises(InputError, match=r"'spin'.*frame"):
        sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(P, 0.1), stiffness=1.0,
                           friction=0.5, name="spin")


def test_a_moving_plane_gives_the_relative_velocity_of_the_material_points():
    """A ball on a tilting plate (the plane turns with the plate's frame F): the record's slip
    velocity and gap rate equal v_C,ball - v_C,plate in N (SymPy's two-point theorem in the
    inertial frame; the record forms them in F), and Kane's generalized forces equal SymPy's."""
    s = spinning_ball()
    beta, ub = me.dynamicsymbols("beta u_beta")
    F = me.ReferenceFrame("F")
    F.orient_axis(s.N, beta, s.N.y)
    F.set_ang_vel(s.N, ub * s.N.y)
    plate = sb.contact.Plane(s.O, F.z)
    r = s.constants["r"]
    con = sb.contact.Contact(plate, sb.contact.Sphere(s.ball, r), stiffness=s.constants["k"],
                             damping=s.constants["c"], friction=s.constants["mu"], name="plate")
    plate_body = me.RigidBody("plate", s.O, F, sm.Symbol("m_p"), (me.inertia(F, 1, 1, 1), s.O))
    s.bodies = [s.ball, plate_body]
    s.loads = con.to_loads() + [me.Force(s.P, -s.constants["m"] * s.constants["g"] * s.N.z)]
    s.q, s.u = s.q + [beta], s.u + [ub]
    s.kd = s.kd + [beta.diff() - ub]
    km, _ = kane(s)
    rec = km.to_eom().contacts[0]
    C = s.P.locatenew("C", -r * F.z)
    v_ball = s.P.vel(s.N) + s.B.ang_vel_in(s.N).cross(C.pos_from(s.P))
    v_plate = F.ang_vel_in(s.N).cross(C.pos_from(s.O))
    rel = v_ball - v_plate
    rng = np.random.default_rng(11)
    km_sympy, _ = kane(s, sympy_class=True)
    eom = km.to_eom()
    for _ in range(2):
        values = _random_values(s, rng, penetrating=False)
        values[sm.Symbol("m_p")] = 2.0
        values[s.q[2]] = 0.0
        values[beta] = 0.2
        assert _number(rec.gap, values) == pytest.approx(_number(s.P.pos_from(s.O).dot(F.z) - r, values))
        expected = [_number(rel.dot(F.x), values), _number(rel.dot(F.y), values)]
        np.testing.assert_allclose([_number(e, values) for e in rec.slip_velocity], expected, rtol=1e-12)
        assert _number(rec.gap_rate, values) == pytest.approx(_number(rel.dot(F.z), values), rel=1e-12)
        values[s.q[2]] = -0.5                                     # push the ball into the plate
        M, g, M_ref, f_ref = (_numbers(e, values) for e in (eom.dynamic_mass, eom.dynamic_rest,
                                                             km_sympy.mass_matrix, km_sympy.forcing))
        assert np.abs(f_ref).max() > 1.0
        np.testing.assert_allclose(M, M_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(-g.ravel(), f_ref.ravel(), rtol=1e-10, atol=1e-10)


def test_a_contact_given_twice_is_kept_once_and_two_of_one_name_are_refused():
    s = spinning_ball()
    eom = kane(s)[0].to_eom()
    assert [r.name for r in eom.with_contacts(s.contact).contacts] == ["ball"]
    other = sb.contact.Contact(sb.contact.Plane(s.O, s.N.z), sb.contact.Sphere(s.P, 0.3), stiffness=1.0,
                               name="ball")
    with pytest.raises(sb.FormulationError, match="two contacts are named 'ball'"):
        eom.with_contacts(other)


def test_smooth_normal_force_within_its_documented_error():
    """SmoothNormal: never pulls, above the exact Hunt-Crossley force by at most the
    documented bounds (n ε²/(4δ²) relative in contact, k (ε/2)ⁿ at touchdown)."""
    from symbody.contact.smooth_normal import SmoothNormal, smooth_hunt_crossley
    from symbody.errors import InputError
    g, gd = sm.symbols("g gd")
    k, n, c, eps = 1e5, 1.5, 1.0, 1e-3
    force, _ = smooth_hunt_crossley(k, n, c, g, gd, SmoothNormal(eps, 1e-2))
    F = sm.lambdify([g, gd], force)
    for depth in (0.01, 0.05, 0.1):
        exact = k * depth ** n * (1 + 1.5 * c * 0.2)
        assert exact < F(-depth, -0.2) <= exact * (1 + n * eps ** 2 / (4 * depth ** 2) + 1e-2)
    assert F(0.0, 0.0) == pytest.approx(k * (eps / 2) ** n * (1 + np.sqrt(1 + 1e-4)) / 2, rel=1e-12)
    assert min(F(gap, rate) for gap in (-0.1, 0.0, 0.1) for rate in (-10.0, 0.0, 10.0)) > 0.0
    with pytest.raises(InputError, match="'foot'.*depth"):
        SmoothNormal(-1.0).checked("foot")
