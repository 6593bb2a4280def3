"""Models built the modern SymPy way (System, joints, actuators on pathways), after the
examples of SymPy 1.14's own documentation.

Each builder returns a fresh, not yet formed ``System`` plus a dict with its symbols
and numbers ("p": constants, "x0": initial state of q and u (all speeds), "r": values
of the specified inputs, "extra": initial values of extra states).  Sources:

- ``double_pendulum``: two PinJoints (the joints' docstrings chain bodies this way);
- ``cart_pole`` / ``cart_pole_constrained``: the example of the ``System`` docstring,
  with its force input F(t) and, in the second, its holonomic constraint
  (the bob held on the rail's vertical through the origin);
- ``four_bar``: three PinJoints and the loop-closure constraints added to the system
  (velocity constraints then come from System, written in q');
- ``spring_damper_duffing``: ``LinearSpring``, ``LinearDamper``, ``DuffingSpring``
  and a ``TorqueActuator`` (the actuators' docstrings) on two sliders and a pendulum;
- ``muscle_arm``: the zoo's elbow with two DeGroote 2016 musculotendons.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

t = me.dynamicsymbols._t


def _body(name: str, frame, mass, izz):
    """A planar rigid body: mass centre ``name_o``, central inertia izz about frame.z."""
    center = me.Point(name + "_o")
    return me.RigidBody(name, masscenter=center, frame=frame, mass=mass,
                        inertia=(me.inertia(frame, 0, 0, izz), center))


def double_pendulum(lagrange: bool = False):
    q1, q2 = me.dynamicsymbols("q1, q2")
    u1, u2 = (q1.diff(t), q2.diff(t)) if lagrange else me.dynamicsymbols("u1, u2")
    l1, l2, m1, m2, g = sm.symbols("l1, l2, m1, m2, g")
    ceiling = me.RigidBody("ceiling")
    system = me.System.from_newtonian(ceiling)
    U, L = me.ReferenceFrame("U"), me.ReferenceFrame("L")
    upper = _body("upper", U, m1, m1 * l1**2 / 12)
    lower = me.Particle("lower", mass=m2)
    system.add_joints(
        me.PinJoint("J1", ceiling, upper, q1, u1, child_point=l1 / 2 * U.y, joint_axis=ceiling.z),
        me.PinJoint("J2", upper, lower, q2, u2, parent_point=-l1 / 2 * U.y,
                    child_interframe=L, child_point=l2 * L.y, joint_axis=U.z))
    system.apply_uniform_gravity(-g * ceiling.y)
    p = {l1: 1.0, l2: 0.7, m1: 1.2, m2: 0.8, g: 9.81, ceiling.mass: 0.0}
    x0 = {q1: 0.6, q2: -0.4, u1: 0.3, u2: -0.2}
    return system, {"p": p, "x0": x0, "r": {}, "extra": {}, "q": [q1, q2], "u": [u1, u2]}


def _cart_pole_parts():
    g, l = sm.symbols("g l")
    F = me.dynamicsymbols("F")
    rail = me.RigidBody("rail")
    cart = me.RigidBody("cart")
    bob = me.Particle("bob")
    bob_frame = me.ReferenceFrame("bob_frame")
    system = me.System.from_newtonian(rail)
    system.add_joints(
        me.PrismaticJoint("slider", rail, cart, joint_axis=rail.x),
        me.PinJoint("pin", cart, bob, joint_axis=cart.z, child_interframe=bob_frame,
                    child_point=l * bob_frame.y))
    system.apply_uniform_gravity(-g * system.y)
    system.add_loads((cart.masscenter, F * rail.x))
    return system, g, l, F, rail, cart, bob


def cart_pole():
    system, g, l, F, rail, cart, bob = _cart_pole_parts()
    q_s, q_p = system.q
    u_s, u_p = system.u
    p = {g: 9.81, l: 0.9, cart.mass: 2.0, bob.mass: 0.5, rail.mass: 0.0}
    # the rail's inertia symbols appear in no equation (it does not move)
    x0 = {q_s: 0.1, q_p: 0.5, u_s: -0.2, u_p: 0.4}
    return system, {"p": p, "x0": x0, "r": {F: 1.5}, "extra": {}, "q": [q_s, q_p], "u": [u_s, u_p],
                    "specifieds": [F]}


def cart_pole_constrained():
    """The System docstring's second part: the bob kept on the vertical x = 0."""
    system, g, l, F, rail, cart, bob = _cart_pole_parts()
    system.add_holonomic_constraints(bob.masscenter.pos_from(rail.masscenter).dot(system.x))
    system.q_ind = system.get_joint("pin").coordinates
    system.q_dep = system.get_joint("slider").coordinates
    system.u_ind = system.get_joint("pin").speeds
    system.u_dep = system.get_joint("slider").speeds
    q_p, q_s = system.q
    u_p, u_s = system.u
    p = {g: 9.81, l: 0.9, cart.mass: 2.0, bob.mass: 0.5, rail.mass: 0.0}
    # consistent: x_bob = q_s + l sin(q_p) = 0 and its derivative
    qp0, up0 = 0.5, 0.4
    x0 = {q_p: qp0, q_s: -0.9 * np.sin(qp0), u_p: up0, u_s: -0.9 * np.cos(qp0) * up0}
    return system, {"p": p, "x0": x0, "r": {F: 1.5}, "extra": {}, "q": [q_p, q_s], "u": [u_p, u_s],
                    "specifieds": [F]}


def four_bar(lagrange: bool = False):
    """Crank A, coupler B, rocker C joined by PinJoints; the rocker's end on the ground
    pivot P4 = (l_n, 0): two holonomic loop constraints, q2, q3 dependent.
    ``lagrange``: the joints' speeds are the coordinates' derivatives (for LagrangesMethod)."""
    q1, q2, q3 = me.dynamicsymbols("q1:4")
    if lagrange:
        u1, u2, u3 = (qi.diff(t) for qi in (q1, q2, q3))
    else:
        u1, u2, u3 = me.dynamicsymbols("u1:4")
    la, lb, lc, ln, m, g = sm.symbols("l_a, l_b, l_c, l_n, m, g")
    ground = me.RigidBody("ground")
    system = me.System.from_newtonian(ground)
    A, B, C = (me.ReferenceFrame(n) for n in "ABC")
    bodies = []
    for name, frame, length in (("crank", A, la), ("coupler", B, lb), ("rocker", C, lc)):
        bodies.append(_body(name, frame, m, m * length**2 / 12))
    crank, coupler, rocker = bodies
    system.add_joints(
        me.PinJoint("J1", ground, crank, q1, u1, child_point=-la / 2 * A.x, joint_axis=ground.z),
        me.PinJoint("J2", crank, coupler, q2, u2, parent_point=la / 2 * A.x,
                    child_point=-lb / 2 * B.x, joint_axis=A.z),
        me.PinJoint("J3", coupler, rocker, q3, u3, parent_point=lb / 2 * B.x,
                    child_point=-lc / 2 * C.x, joint_axis=B.z))
    end = me.Point("P4")
    end.set_pos(rocker.masscenter, lc / 2 * C.x)
    loop = end.pos_from(ground.masscenter) - ln * ground.x
    system.add_holonomic_constraints(loop.dot(ground.x), loop.dot(ground.y))
    system.q_ind, system.q_dep = [q1], [q2, q3]
    if not lagrange:
        system.u_ind, system.u_dep = [u1], [u2, u3]
    system.apply_uniform_gravity(-g * ground.y)
    p = {la: 0.8, lb: 2.0, lc: 1.0, ln: 2.0, m: 1.0, g: 9.81, ground.mass: 0.0}
    # a consistent configuration: solve the loop for q2, q3 from guesses (seed 001's numbers)
    fh = sm.lambdify([q2, q3], system.holonomic_constraints.xreplace({q1: np.deg2rad(10.0)})
                     .xreplace(p), "numpy")
    from scipy.optimize import fsolve
    q23 = fsolve(lambda v: np.asarray(fh(*v), float).ravel(), [np.deg2rad(10.0), np.deg2rad(-150.0)],
                 xtol=1e-12)
    w1, w2, w3 = sm.symbols("w1:4")      # plain stand-ins for the speeds
    vc = system.velocity_constraints.xreplace({q1.diff(t): w1, q2.diff(t): w2, q3.diff(t): w3})
    if not lagrange:
        vc = vc.xreplace({u1: w1, u2: w2, u3: w3})
    subs = {q1: np.deg2rad(10.0), q2: q23[0], q3: q23[1], w1: 0.5}
    sol = sm.solve([e.xreplace(p).xreplace(subs) for e in vc], [w2, w3])
    sol = {u2: sol[w2], u3: sol[w3]}
    x0 = {q1: np.deg2rad(10.0), q2: float(q23[0]), q3: float(q23[1]), u1: 0.5,
          u2: float(sol[u2]), u3: float(sol[u3])}
    return system, {"p": p, "x0": x0, "r": {}, "extra": {}, "q": [q1, q2, q3], "u": [u1, u2, u3]}


def spring_damper_duffing():
    """Two sliders on a wall: the first on a LinearSpring and a LinearDamper, the second
    tied to the first by a DuffingSpring; a pendulum on the first slider driven by a
    TorqueActuator with torque T(t) (reacting on the slider)."""
    x1, x2, th = me.dynamicsymbols("x1, x2, theta")
    v1, v2, w = me.dynamicsymbols("v1, v2, omega")
    m1, m2, mp, l, k, c, beta, alpha, g, L0 = sm.symbols("m1, m2, m_p, l, k, c, beta, alpha, g, L0")
    T = me.dynamicsymbols("T")
    wall = me.RigidBody("wall")
    system = me.System.from_newtonian(wall)
    s2 = me.Particle("s2", mass=m2)
    F1, P = me.ReferenceFrame("F1"), me.ReferenceFrame("P")
    body1 = _body("body1", F1, m1, 0)
    bob = _body("bob", P, mp, mp * l**2 / 12)
    system.add_joints(
        me.PrismaticJoint("slide1", wall, body1, x1, v1, joint_axis=wall.x),
        me.PrismaticJoint("slide2", wall, s2, x2, v2, joint_axis=wall.x,
                          parent_point=L0 * wall.x),
        me.PinJoint("hinge", body1, bob, th, w, child_point=l / 2 * P.y, joint_axis=F1.z))
    system.add_actuators(
        me.LinearSpring(k, me.LinearPathway(wall.masscenter, body1.masscenter)),
        me.LinearDamper(c, me.LinearPathway(wall.masscenter, body1.masscenter)),
        me.DuffingSpring(alpha, beta, me.LinearPathway(body1.masscenter, s2.masscenter), L0 / 2),
        me.TorqueActuator(T, F1.z, bob, body1))
    system.apply_uniform_gravity(-g * wall.y)
    p = {m1: 1.0, m2: 0.6, mp: 0.4, l: 0.5, k: 20.0, c: 0.7, alpha: 15.0, beta: 40.0, g: 9.81,
         L0: 1.0, wall.mass: 0.0}
    x0 = {x1: 0.3, x2: 0.8, th: 0.4, v1: 0.0, v2: 0.2, w: -0.3}
    return system, {"p": p, "x0": x0, "r": {T: 0.25}, "extra": {}, "q": [x1, x2, th], "u": [v1, v2, w],
                    "specifieds": [T]}


def muscle_arm():
    """The zoo's musculoskeletal arm (one PinJoint, two DeGroote 2016 musculotendons)."""
    from symbody.models.musculoskeletal_arm import default_constants, musculoskeletal_arm_system

    system, ex = musculoskeletal_arm_system()
    b, tr = ex["biceps"], ex["triceps"]
    p = default_constants(ex)
    p[system.bodies[0].mass] = 0.0
    x0 = {ex["q"]: np.deg2rad(75.0), ex["u"]: 0.0}
    return system, {"p": p, "x0": x0, "r": {b.e: 0.8, tr.e: 0.1}, "extra": {b.a: 0.2, tr.a: 0.05},
                    "q": [ex["q"]], "u": [ex["u"]], "actuators": [b, tr]}


BUILDERS = {"double_pendulum": double_pendulum, "cart_pole": cart_pole,
            "cart_pole_constrained": cart_pole_constrained, "four_bar": four_bar,
            "spring_damper_duffing": spring_damper_duffing, "muscle_arm": muscle_arm}
