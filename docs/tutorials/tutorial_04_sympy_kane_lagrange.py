"""
SymPy's KanesMethod and LagrangesMethod examples, with symbody's classes
=========================================================================

SymPy's mechanics documentation introduces ``KanesMethod`` and ``LagrangesMethod`` with a
handful of small examples (seed chapter 004 of this project). ``symbody.KanesMethod`` and
``symbody.LagrangesMethod`` take the same arguments and return the same matrices, so each
example runs here with one changed import -- and then goes one step further than the
documentation: into a simulation whose answer is known in closed form.

Every result below is compared with SymPy's own classes, which stay the reference.
"""

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb

me.mechanics_printing(pretty_print=False)

# %%
# Kane's method: coordinates, speeds and the kinematic equations
# ---------------------------------------------------------------
# The constructor takes the inertial frame, the independent coordinates and speeds and
# the kinematic differential equations (each an expression equal to zero). Dependent
# coordinates and speeds come with the constraints that make them dependent: here
# ``q2 = q1`` (a configuration constraint), ``u2 = u1`` and ``u3 = u1 + u4`` (motion
# constraints).

N = me.ReferenceFrame("N")
q1, q2, q3, q4 = me.dynamicsymbols("q1 q2 q3 q4")
q1d, q2d, q3d, q4d = me.dynamicsymbols("q1 q2 q3 q4", 1)
u1, u2, u3, u4 = me.dynamicsymbols("u1 u2 u3 u4")
kd = [q1d - u1, q2d - u2, q3d - u3, q4d - u4]
options = dict(q_dependent=[q2], configuration_constraints=[q2 - q1],
               u_dependent=[u2, u3], velocity_constraints=[u2 - u1, u3 - u1 - u4])

KM = sb.KanesMethod(N, [q1, q3, q4], [u1, u4], kd, **options)
KM.kindiffdict()

# %%
# The solved kinematic equations are SymPy's:
assert KM.kindiffdict() == me.KanesMethod(N, [q1, q3, q4], [u1, u4], kd, **options).kindiffdict()

# %%
# A particle pushed along a line
# ------------------------------
# A particle of mass 5 at point P moves with speed u along N.x and a force of 7 N pushes
# it. ``kanes_equations`` takes the bodies and the loads (symbody also accepts SymPy's old
# order, loads first, as the documentation writes it).

q, u = me.dynamicsymbols("q u")
qd = me.dynamicsymbols("q", 1)
P = me.Point("P")
P.set_vel(N, u * N.x)
Pa = me.Particle("Pa", P, 5)
KM = sb.KanesMethod(N, [q], [u], [qd - u])
fr, frstar = KM.kanes_equations([Pa], [(P, 7 * N.x)])
KM.mass_matrix, KM.forcing

# %%
# The "full" forms add the kinematic equation, so they cover every state:
KM.mass_matrix_full, KM.forcing_full

# %%
# and the linearization about any state is the documentation's ``[[0, 1], [0, 0]]``:
A = KM.linearize(A_and_B=True)[0]
A

# %%
assert KM.mass_matrix == sm.Matrix([[5]]) and KM.forcing == sm.Matrix([[7]])
assert KM.mass_matrix_full == sm.Matrix([[1, 0], [0, 5]]) and KM.forcing_full == sm.Matrix([u, 7])
assert A == sm.Matrix([[0, 1], [0, 0]])

# %%
# From here SymPy stops; symbody goes on. ``to_eom`` gives the canonical blocks,
# ``compile`` turns them into numerical kernels and ``simulate`` integrates: starting at
# rest, the particle must follow q(t) = 7 t^2 / (2 * 5).

model = sb.compile(KM.to_eom())
sol = sb.simulate(model, (0.0, 2.0), {q: 0.0, u: 0.0}, {}, t_eval=np.linspace(0.0, 2.0, 21))
exact = 7 * sol.t**2 / 10
print(f"largest error against 7 t^2 / 10: {np.max(np.abs(sol['q'] - exact)):.2e} m")
assert np.allclose(sol["q"], exact, rtol=1e-6, atol=1e-9)  # the integrator's tolerances

# %%
# Lagrange's method
# -----------------
# The Lagrangian L = q1'^2 + q2'^2 (two free coordinates, kinetic energy only) gives the
# equations 2 q1'' = 0 and 2 q2'' = 0.

L = q1d**2 + q2d**2
LM = sb.LagrangesMethod(L, [q1, q2])
LM.form_lagranges_equations()

# %%
LM.mass_matrix, LM.forcing

# %%
# A constraint q1' - q2' = 0 brings in a Lagrange multiplier ``lam1``; the "full" mass
# matrix then also holds the kinematic rows and the constraint row. (SymPy's older
# keyword ``coneqs`` is accepted next to ``nonhol_coneqs``.)

LM = sb.LagrangesMethod(L, [q1, q2], coneqs=[q1d - q2d])
LM.form_lagranges_equations()

# %%
LM.mass_matrix_full, LM.forcing_full

# %%
reference = me.LagrangesMethod(L, [q1, q2], nonhol_coneqs=[q1d - q2d])
reference.form_lagranges_equations()
assert sm.simplify(LM.mass_matrix_full - reference.mass_matrix_full) == sm.zeros(5, 5)
assert sm.simplify(LM.forcing_full - reference.forcing_full) == sm.zeros(5, 1)

# %%
# Non-conservative forces come in ``forcelist`` with the frame their velocities are taken
# in: a force of 7 at a point moving with q1' along N.x.

P = me.Point("P")
P.set_vel(N, q1d * N.x)
FL = [(P, 7 * N.x)]
LM = sb.LagrangesMethod(L, [q1, q2], forcelist=FL, frame=N)
LM.form_lagranges_equations()

# %%
# Simulating the constrained, forced system
# -----------------------------------------
# Put both together: the force on q1 and the constraint q1' = q2'. The constraint makes
# the two coordinates accelerate together, 2 q'' + 2 q'' = 7, so from rest
# q1 = q2 = 7 t^2 / 8, and the multiplier carries half of the force (its magnitude is 7/2;
# its sign follows the convention of ``Trajectory.multipliers``).

LM = sb.LagrangesMethod(L, [q1, q2], forcelist=FL, frame=N, nonhol_coneqs=[q1d - q2d])
LM.form_lagranges_equations()
model = sb.compile(LM.to_eom())
print("states:", model.states)

# %%
x0 = {name: 0.0 for name in model.states}
sol = sb.simulate(model, (0.0, 2.0), x0, {}, t_eval=np.linspace(0.0, 2.0, 21))
for name in ("q1", "q2"):
    error = np.max(np.abs(sol[name] - 7 * sol.t**2 / 8))
    print(f"{name}: largest error against 7 t^2 / 8: {error:.2e}")
    assert error < 1e-6 * 3.5                  # rtol=1e-6 of the final value, 3.5
print(f"constraint residual q1' - q2' stays below {sol.max_velocity_residual:.1e}")
if sol.multipliers is not None:
    print("multiplier lam1 along the run:", np.unique(np.round(sol.multipliers, 12)))
    assert np.allclose(np.abs(sol.multipliers), 3.5)
