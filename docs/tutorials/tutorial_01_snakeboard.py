"""
Nonholonomic equations of motion: the snakeboard
================================================

Seed chapter 000 ("Equations of Motion with Nonholonomic Constraints") takes the
snakeboard -- a board with two steerable wheel trucks whose wheels cannot slip sideways --
and derives its equations by hand: five coordinates, five speeds, two motion constraints
that make two of the speeds dependent, a kinematic equation that is not simply q' = u
(u3 = l q3' / 2), and p = 3 dynamical equations. It then integrates them with
``solve_ivp``, animates the board, and recovers the dependent speeds after the run.

Here the same model goes through symbody twice: from the chapter's hand-derived matrices
(``EquationsOfMotion``) and from ``symbody.KanesMethod`` given the bodies. Both simulate
in one call, report the dependent speeds along the way, and agree.
"""

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb

# %%
# Kinematics
# ----------
# The board A (mass centre A_o at (q1, q2), heading q3) carries the trucks B and C at
# +-l/2 along A.x, steered by q4 and q5. Every body has mass m and moment of inertia I
# about the vertical.

q1, q2, q3, q4, q5 = me.dynamicsymbols("q1, q2, q3, q4, q5")
u1, u2, u3, u4, u5 = me.dynamicsymbols("u1, u2, u3, u4, u5")
l, I, m = sm.symbols("l, I, m")
t = me.dynamicsymbols._t

N, A, B, C = sm.symbols("N A B C", cls=me.ReferenceFrame)
A.orient_axis(N, q3, N.z)
B.orient_axis(A, q4, A.z)
C.orient_axis(A, q5, A.z)
O, Ao, Bo, Co = sm.symbols("O A_o B_o C_o", cls=me.Point)
Ao.set_pos(O, q1 * N.x + q2 * N.y)
Bo.set_pos(Ao, l / 2 * A.x)
Co.set_pos(Ao, -l / 2 * A.x)
O.set_vel(N, 0)
Bo.v2pt_theory(Ao, N, A)
_ = Co.v2pt_theory(Ao, N, A)    # (the velocity is stored in the point)

# %%
# The kinematic equations (u3 is a velocity: half the board length times its turning
# rate) and the two nonholonomic constraints, no sideways slip at either truck. The
# dependent speeds are u1 and u2, the independent ones u3, u4, u5.

fk = sm.Matrix([u1 - q1.diff(t), u2 - q2.diff(t), u3 - l * q3.diff(t) / 2,
                u4 - q4.diff(t), u5 - q5.diff(t)])
q = sm.Matrix([q1, q2, q3, q4, q5])
qd = q.diff(t)
qd_of_u = sm.solve(fk, list(qd))          # {q1': u1, ..., q3': 2 u3 / l, ...}
fn = sm.Matrix([Bo.vel(N).dot(B.y), Co.vel(N).dot(C.y)]).xreplace(qd_of_u)
fn

# %%
# Way 1: the chapter's hand derivation
# ------------------------------------
# Solve the constraints for the dependent speeds and their derivatives, express every
# velocity and acceleration in the independent speeds, take the nonholonomic partial
# velocities and form Fr* (there are no applied forces, so Fr = 0). The result is the
# reduced mass matrix M_d and forcing g_d over u3', u4', u5'.

us, ur = sm.Matrix([u3, u4, u5]), sm.Matrix([u1, u2])
usd, urd = us.diff(t), ur.diff(t)
ur_sol = fn.jacobian(ur).LUsolve(-fn.xreplace(dict.fromkeys(ur, 0)))
ur_of_us = dict(zip(ur, ur_sol))

fnd = fn.diff(t).xreplace(qd_of_u)
urd_sol = fnd.jacobian(urd).LUsolve(-fnd.xreplace(dict.fromkeys(urd, 0)).xreplace(ur_of_us))
urd_of_us = dict(zip(urd, urd_sol))
qdd_of_u = {k.diff(t): v.diff(t).xreplace(urd_of_us) for k, v in qd_of_u.items()}


def independent(vector):
    """A velocity in terms of q and the independent speeds only."""
    return vector.xreplace(qd_of_u).xreplace(ur_of_us)


velocities = [independent(v) for v in (A.ang_vel_in(N), B.ang_vel_in(N), C.ang_vel_in(N),
                                       Ao.vel(N), Bo.vel(N), Co.vel(N))]
w_A, w_B, w_C, v_Ao, v_Bo, v_Co = me.partial_velocity(velocities, us, N)

inertia_forces = [-m * P.acc(N).xreplace(qdd_of_u).xreplace(qd_of_u) for P in (Ao, Bo, Co)]
inertia_torques = [-F.ang_acc_in(N).dot(I * me.outer(F.z, F.z)).xreplace(qdd_of_u)
                   for F in (A, B, C)]
Frs = sm.Matrix([
    sum(v[i].dot(R) for v, R in zip((v_Ao, v_Bo, v_Co), inertia_forces))
    + sum(w[i].dot(T) for w, T in zip((w_A, w_B, w_C), inertia_torques))
    for i in range(3)])
Md = Frs.jacobian(usd)
gd = Frs.xreplace(dict.fromkeys(usd, 0))

# %%
# ``EquationsOfMotion`` takes exactly these pieces: the kinematic equations, the reduced
# dynamical equations M_d u_s' + g_d = 0, the dependent speeds and the constraints that
# define them. No numerical function is written by hand.

eom_by_hand = sb.EquationsOfMotion(q_ind=q, u_ind=us, kinematic=fk, dynamic=(Md, gd),
                                   constraints=sb.ConstraintEquations(u_dep=ur, velocity=fn),
                                   constants=[l, I, m],
                                   name="snakeboard (by hand)")
model_by_hand = sb.compile(eom_by_hand)

# %%
# Way 2: symbody.KanesMethod
# --------------------------
# The same system described by its bodies; the library forms the equations (unreduced:
# all five dynamical equations, with the constraints handled numerically).

bodies = [me.RigidBody(name, P, F, m, (I * me.outer(F.z, F.z), P))
          for name, P, F in (("board", Ao, A), ("truck B", Bo, B), ("truck C", Co, C))]
Ao.set_vel(N, Ao.pos_from(O).dt(N))
kane = sb.KanesMethod(N, q, us, kd_eqs=fk, u_dependent=ur, velocity_constraints=fn)
kane.kanes_equations(bodies, [])
model = sb.compile(kane.to_eom())

# %%
# Simulation
# ----------
# The chapter's numbers: l = 0.7 m, I = 0.1 kg m^2, m = 1 kg; the board at the origin
# with the trucks steered +5 and -5 degrees, moving with u3 = 0.1 m/s, the trucks turning
# at +-0.01 rad/s. The dependent speeds u1, u2 are not given: they follow from the
# constraints.

p_vals = {l: 0.7, I: 0.1, m: 1.0}
x0 = {q1: 0.0, q2: 0.0, q3: 0.0, q4: np.deg2rad(5.0), q5: -np.deg2rad(5.0),
      u3: 0.1, u4: 0.01, u5: -0.01}
t_eval = np.linspace(0.0, 8.0, 161)
sol = sb.simulate(model, (0.0, 8.0), x0, p_vals, t_eval=t_eval)
sol

# %%
# The wheels do not slip: the constraint residual stays at round-off. The two
# formulations agree to the integration tolerance (both run again at a tight one):

print(f"largest sideways wheel speed: {sol.max_velocity_residual:.1e} m/s")
tight = dict(t_eval=t_eval, solver=sb.Solver(rtol=1e-10, atol=1e-12))
difference = np.max(np.abs(sb.simulate(model, (0.0, 8.0), x0, p_vals, **tight).q
                           - sb.simulate(model_by_hand, (0.0, 8.0), x0, p_vals, **tight).q))
print(f"largest difference between the two formulations: {difference:.1e}")
assert sol.max_velocity_residual < 1e-12
assert difference < 1e-7                     # rtol=1e-10 over an 8 s run, with margin

# %%
# The dependent speeds come with the trajectory: the chapter computes u1 and u2 after the
# run from the independent ones; here they are columns like any other.

print("u1 at t = 0, 4, 8 s:", np.round(sol["u1"][[0, 80, 160]], 6))
print("u2 at t = 0, 4, 8 s:", np.round(sol["u2"][[0, 80, 160]], 6))

# %%
# No force acts on the snakeboard, so its kinetic energy is conserved:

kinetic = sum(m / 2 * P.vel(N).dot(P.vel(N)) + I / 2 * F.ang_vel_in(N).dot(F.ang_vel_in(N))
              for P, F in ((Ao, A), (Bo, B), (Co, C)))
kinetic = kinetic.xreplace(qd_of_u)
fig = sb.plot(sol, model, energy=kinetic, figure=sb.FigureOptions(title="snakeboard"))

# %%
# Coordinates and speeds are split by kind: the board's position in metres, its heading
# and the steering angles in degrees; u1, u2 (dashed: dependent) and u3 in m/s, u4 and u5
# in deg/s.
#
# Animation
# ---------
# A drawing is a set of named points (positions in the inertial frame) and the lines
# through them; ``animate`` evaluates them along the trajectory.

half_axle = 0.15
points = {
    "board rear": Co.pos_from(O).to_matrix(N), "board front": Bo.pos_from(O).to_matrix(N),
    "B left": (Bo.pos_from(O) + half_axle * B.y).to_matrix(N),
    "B right": (Bo.pos_from(O) - half_axle * B.y).to_matrix(N),
    "C left": (Co.pos_from(O) + half_axle * C.y).to_matrix(N),
    "C right": (Co.pos_from(O) - half_axle * C.y).to_matrix(N),
}
drawing = sb.models.Drawing(points=points,
                            lines=[["board rear", "board front"], ["B left", "B right"],
                                   ["C left", "C right"]],
                            traces=["board front", "board rear"])
anim = sb.animate(sol, drawing, fps=6, figure=sb.FigureOptions(title="snakeboard, 8 s", dpi=60))
anim

# %%
# In 3D, in the browser
# ---------------------
# ``sb.view`` draws a scene of shapes attached to the model's frames and points with
# three.js, in one self-contained page (``.save("snakeboard.html")``; here it is embedded).
# The zoo's snakeboard carries such a scene; its symbols are the ones used above (SymPy
# symbols with the same names are the same symbols), so it draws this trajectory.

sb.view(sol, sb.models.get("snakeboard").scene, title="snakeboard")
