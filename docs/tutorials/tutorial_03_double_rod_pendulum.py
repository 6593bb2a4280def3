"""
Kane's equations by hand: the double-rod pendulum
=================================================

Seed chapter 002 ("Equations of Motion") forms Kane's equations Fr + Fr* = 0 for a
three-dimensional pendulum of two rods with a particle sliding on the second rod, pulls
out the mass matrix and the forcing vector, evaluates them numerically and integrates
them, first with a hand-written Euler loop and then with ``solve_ivp``.

This tutorial keeps the hand derivation -- it is the point of the chapter -- and hands the
result to symbody: ``EquationsOfMotion`` takes the matrices as they are, ``compile`` makes
the numerical function the chapter writes by hand, and ``simulate`` replaces the
integration loop. Along the way it checks the hand-derived equations against
``symbody.KanesMethod`` applied to the same bodies and loads.
"""

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb

# %%
# Kinematics
# ----------
# Rod A hangs from O and turns by q1 about N.z; rod B is welded to the end of A and
# twists by q2 about A.x; the particle Q slides a distance q3 along B.y. The generalized
# speeds are the simple ones: u1 and u2 are the relative angular rates, u3 the sliding
# speed.

m, g, kt, kl, l = sm.symbols("m, g, k_t, k_l, l")
q1, q2, q3 = me.dynamicsymbols("q1, q2, q3")
u1, u2, u3 = me.dynamicsymbols("u1, u2, u3")
t = me.dynamicsymbols._t

N, A, B = sm.symbols("N A B", cls=me.ReferenceFrame)
A.orient_axis(N, q1, N.z)
B.orient_axis(A, q2, A.x)
A.set_ang_vel(N, u1 * N.z)
B.set_ang_vel(A, u2 * A.x)

O, Ao, Bo, Q = sm.symbols("O A_O B_O Q", cls=me.Point)
Ao.set_pos(O, l / 2 * A.x)
Bo.set_pos(O, l * A.x)
Q.set_pos(Bo, q3 * B.y)
O.set_vel(N, 0)
Ao.v2pt_theory(O, N, A)
Bo.v2pt_theory(O, N, A)
Q.set_vel(B, u3 * B.y)
_ = Q.v1pt_theory(Bo, N, B)      # (the velocity is stored in the point)

# %%
# Loads: gravity along N.x (the pendulum hangs "down" the x axis), a linear spring k_l
# between the particle and the rod, torsional springs k_t at both joints. Both rods are
# slender, of mass m and length l; the particle also has mass m.

R_Ao = m * g * N.x
R_Bo = m * g * N.x + kl * q3 * B.y
R_Q = m * g * N.x - kl * q3 * B.y
T_A = -kt * q1 * N.z + kt * q2 * A.x
T_B = -kt * q2 * A.x
I_rod = m * l**2 / 12
I_A_Ao = I_rod * me.outer(A.y, A.y) + I_rod * me.outer(A.z, A.z)
I_B_Bo = I_rod * me.outer(B.x, B.x) + I_rod * me.outer(B.z, B.z)

# %%
# Fr and Fr*, term by term
# ------------------------
# For every speed u_r: the partial velocities of the points and the partial angular
# velocities of the rods, dotted with the applied forces and torques (Fr) and with the
# inertia forces -m a and inertia torques -(alpha . I + omega x I . omega) (Fr*).

points, forces = [Ao, Bo, Q], [R_Ao, R_Bo, R_Q]
frames, torques, inertias = [A, B], [T_A, T_B], [I_A_Ao, I_B_Bo]
qd_to_u = {q1.diff(t): u1, q2.diff(t): u2, q3.diff(t): u3}

Fr, Frs = [], []
for ur in (u1, u2, u3):
    active, inertial = 0, 0
    for point, force in zip(points, forces):
        v_r = point.vel(N).diff(ur, N)
        active += v_r.dot(force)
        inertial += v_r.dot(-m * point.acc(N).xreplace(qd_to_u))
    for frame, torque, inertia in zip(frames, torques, inertias):
        w_r = frame.ang_vel_in(N).diff(ur, N)
        w = frame.ang_vel_in(N)
        active += w_r.dot(torque)
        inertial += w_r.dot(-(frame.ang_acc_in(N).dot(inertia) + me.cross(w, inertia).dot(w)))
    Fr.append(active)
    Frs.append(inertial.xreplace(qd_to_u))
Fr, Frs = sm.Matrix(Fr), sm.Matrix(Frs)

# %%
# Fr + Fr* is linear in the accelerations u': its Jacobian is the mass matrix and what is
# left at u' = 0 is the forcing, so the dynamical equations read M u' + F = 0.

u = sm.Matrix([u1, u2, u3])
ud = u.diff(t)
M = Frs.jacobian(ud)
F = (Frs + Fr).xreplace(dict.fromkeys(ud, 0))
M

# %%
# From the hand-derived matrices to a simulation
# -----------------------------------------------
# ``EquationsOfMotion`` takes the kinematic equations q' - u = 0 and the dynamic block as
# the pair (M, F) meaning M u' + F = 0. ``compile`` generates the numerical right-hand
# side x' = f(t, x, p) for x = [q, u] -- the function the chapter writes by hand around
# ``lambdify`` and ``np.linalg.solve``.

q = sm.Matrix([q1, q2, q3])
eom = sb.EquationsOfMotion(q_ind=q, u_ind=u, kinematic=q.diff(t) - u, dynamic=(M, F),
                           constants=[m, g, kt, kl, l], name="double-rod pendulum (by hand)")
model = sb.compile(eom)
model

# %%
# The chapter's numbers: 5 degrees at both joints, the particle 0.1 m out, small initial
# rates; m = 1 kg, g = 9.81 m/s^2, k_t = 0.01 N m/rad, k_l = 2 N/m, l = 0.6 m.

p_vals = {m: 1.0, g: 9.81, kt: 0.01, kl: 2.0, l: 0.6}
x0 = {q1: np.deg2rad(5.0), q2: np.deg2rad(5.0), q3: 0.1, u1: 0.1, u2: 0.2, u3: 0.3}
xdot = model.rhs(0.0, model.state_array(x0), model.constants_array(p_vals))
print("x' at the initial state:", np.array2string(xdot, precision=4))

# %%
# The same system through symbody.KanesMethod
# -------------------------------------------
# Kane's method done by the library: the rods as rigid bodies, the particle, the same
# loads. At the chapter's state and at a random one both formulations give the same x'.

bodies = [me.RigidBody("A", Ao, A, m, (I_A_Ao, Ao)), me.RigidBody("B", Bo, B, m, (I_B_Bo, Bo)),
          me.Particle("Q", Q, m)]
loads = [(Ao, R_Ao), (Bo, R_Bo), (Q, R_Q), (A, T_A), (B, T_B)]
kane = sb.KanesMethod(N, [q1, q2, q3], [u1, u2, u3], kd_eqs=list(q.diff(t) - u))
kane.kanes_equations(bodies, loads)
kane_model = sb.compile(kane.to_eom())
rng = np.random.default_rng(2)
for x in (model.state_array(x0), rng.uniform(-1, 1, 6)):
    p = model.constants_array(p_vals)
    difference = kane_model.rhs(0.0, x, kane_model.constants_array(p_vals)) - model.rhs(0.0, x, p)
    print(f"largest difference in x': {np.max(np.abs(difference)):.1e}")
    assert np.max(np.abs(difference)) < 1e-12       # round-off of two orders of evaluation

# %%
# Euler's method against an adaptive integrator
# ---------------------------------------------
# The chapter's Euler loop with a step of 0.01 s, written with the compiled right-hand
# side, and symbody's ``simulate`` (an adaptive Runge-Kutta method with error control).
# The system has no damping, so its energy -- kinetic plus gravity and spring
# potential -- must stay constant: it measures how far each answer is from the truth.

def euler(rhs, t_span, x_start, p, step=0.01):
    ts = np.arange(t_span[0], t_span[1] + step / 2, step)
    xs = np.empty((len(ts), len(x_start)))
    xs[0] = x_start
    for i in range(len(ts) - 1):
        xs[i + 1] = xs[i] + step * rhs(ts[i], xs[i], p)
    return ts, xs


p = model.constants_array(p_vals)
ts, xs = euler(model.rhs, (0.0, 2.0), model.state_array(x0), p)
sol = sb.simulate(model, (0.0, 2.0), x0, p_vals)

kinetic = sum(m / 2 * P.vel(N).dot(P.vel(N)) for P in points) + sum(
    F_.ang_vel_in(N).dot(I_.dot(F_.ang_vel_in(N))) / 2 for F_, I_ in zip(frames, inertias))
potential = (-sum(m * g * P.pos_from(O).dot(N.x) for P in points)
             + kt * q1**2 / 2 + kt * q2**2 / 2 + kl * q3**2 / 2)
energy = sm.lambdify((q, u, [m, g, kt, kl, l]), kinetic + potential)
E_euler = np.array([energy(x[:3], x[3:], p) for x in xs])
E_sim = np.array([energy(qi, ui, p) for qi, ui in zip(sol.q, sol.u)])
print(f"Euler, {len(ts) - 1} steps:    energy drift {np.max(np.abs(E_euler - E_euler[0])):.2e} J")
print(f"simulate, {sol.nfev} evaluations: energy drift {np.max(np.abs(E_sim - E_sim[0])):.2e} J")
assert np.max(np.abs(E_sim - E_sim[0])) < 1e-3 * np.max(np.abs(E_euler - E_euler[0]))

# %%
# The time histories, grouped as the chapter groups them by hand: angles in degrees, the
# particle's distance in metres, angular rates in deg/s, its speed in m/s. symbody reads
# which is which off the equations (q1 and q2 sit inside sines and cosines, q3 does not).
# Without ``t_eval`` the integrator's steps are few; the curves are drawn through a cubic
# interpolant of them.

fig = sb.plot(sol, model, energy=kinetic + potential,
              figure=sb.FigureOptions(title="double-rod pendulum, symbody.simulate"))

# %%
# The Euler solution on the same axes shows where it departs:

import matplotlib.pyplot as plt  # noqa: E402

fig, axes = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
axes[0].plot(ts, np.rad2deg(xs[:, 0]), label="Euler, h = 0.01 s")
axes[0].plot(sol.t, np.rad2deg(sol["q1"]), "o", ms=3, label="simulate (steps)")
axes[0].set_ylabel("q1 [deg]")
axes[0].legend()
axes[1].plot(ts, E_euler - E_euler[0], label="Euler")
axes[1].plot(sol.t, E_sim - E_sim[0], label="simulate")
axes[1].set_ylabel("E - E0 [J]")
axes[1].set_xlabel("time [s]")
axes[1].legend()
fig.tight_layout()
