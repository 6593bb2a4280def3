"""
A large model: the 40-link pendulum on a cart
=============================================

The seed chapters stop at a few bodies, where ``sympy.lambdify`` and ``solve_ivp`` are
fast enough. Discretised cables and chains, gait models and robot arms have tens of
degrees of freedom, and there the chapters' approach runs out of time: SymPy's
``KanesMethod`` takes minutes, ``lambdify`` of the mass matrix many seconds, and every
right-hand-side call hundreds of microseconds.

This tutorial takes the n-link pendulum on a cart of PyDy's examples with n = 40 links
(82 states) from the equations to a 10 s simulation, checks the result against a
physical invariant (the energy, conserved because nothing dissipates), and saves the
compiled model for the next session. On a 2-core laptop-class machine the whole run takes
a few seconds; ``benchmarks/RESULTS.md`` ("Scale") has the timings up to n = 100.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import symbody as sb

# %%
# Equations
# ---------
# The zoo builds the model with symbody's own Kane's method; by hand it is the same
# ``sb.KanesMethod(N, q, u, kd_eqs=...).kanes_equations(particles, loads)`` as for a
# small model. Kane's sums over the links below each joint are collected, so a mass
# matrix entry is ``l_r l_s (m_s + ... + m_n) (sin q_r sin q_s + cos q_r cos q_s)``:
# n^2 terms in all, where SymPy's own forms hold n^3.

n = 40
start = time.perf_counter()
zoo = sb.models.n_link_pendulum_on_cart(n)
eom = zoo.eom
print(eom)
print(f"formed in {time.perf_counter() - start:.1f} s")

# %%
# The SymPy matrices are built only when asked for (``compile`` does not need them). One
# entry of the mass matrix, near the free end of the chain:

km = zoo.method
print(km.mass_matrix.shape)
print(km.mass_matrix[37, 38])

# %%
# Compiling
# ---------
# ``compile`` converts the equations (in symengine, without building SymPy matrices on
# the way) and generates the machine code on the first call. Kernels this large are
# written as C: the sums are factored so that the rows of Kane's equations share their
# partial sums, and gcc compiles the pieces in parallel. The result is kept in the
# kernel cache (``SYMBODY_CACHE_DIR``, by default in your user cache directory), so a
# second session skips this step.

start = time.perf_counter()
model = sb.compile(eom)
p = model.constants_array(zoo.constants)
x0 = model.state_array(zoo.initial_state)
xdot = model.rhs(0.0, x0, p)
print(f"compiled and first call in {time.perf_counter() - start:.1f} s")
print(model)

# %%
# Simulating
# ----------
# The model's kernels are generated C, so ``simulate`` takes scipy's DOP853 steps in
# compiled code as well (the same tables and step control as scipy, no Python per
# step). The energy is evaluated along the way with ``outputs=`` (compiled too).

start = time.perf_counter()
sol = sb.simulate(model, (0.0, 10.0), x0, p, outputs={"energy": zoo.energy})
print(f"{sol.message}: {sol.nsteps} steps, {sol.nfev} right-hand-side calls, "
      f"{time.perf_counter() - start:.1f} s")

# %%
# The energy is conserved by the equations, so its drift measures the integration error
# alone: at the default tolerances (rtol 1e-6, atol 1e-9) it stays at a few parts in
# 10^4 of the initial energy over the 10 s.

energy = sol.outputs["energy"]
drift = np.max(np.abs(energy - energy[0])) / abs(energy[0])
print(f"largest relative energy drift: {drift:.1e}")
assert drift < 1e-3

# %%
# Where the chain is: the links' ends from the coordinates (cart position q0, link
# angles q1..qn from the horizontal, all links 1/n long), at a few times read from the
# trajectory's dense output ``sol(t)``.

lengths = np.array([zoo.constants[c] for c in model.constants if str(c).startswith("l")])


def chain_points(x):
    q = x[: n + 1]
    px = q[0] + np.concatenate([[0.0], np.cumsum(lengths * np.cos(q[1:]))])
    py = np.concatenate([[0.0], np.cumsum(lengths * np.sin(q[1:]))])
    return px, py


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
for tk in (0.0, 0.4, 0.8, 1.2, 2.0):
    px, py = chain_points(sol(tk))
    ax1.plot(px, py, marker=".", markersize=3, label=f"t = {tk:.1f} s")
ax1.set_aspect("equal")
ax1.set_xlim(-1.05, 1.05)
ax1.set_ylim(-1.05, 1.05)
ax1.set_xlabel("x [m]")
ax1.set_ylabel("y [m]")
ax1.legend(fontsize=8, loc="upper right")
ax1.set_title("the chain falling from near upright")
ax2.plot(sol.t, (energy - energy[0]) / abs(energy[0]))
ax2.set_xlabel("t [s]")
ax2.set_ylabel("(E - E0) / |E0|")
ax2.set_title("energy drift")
fig.tight_layout()

# %%
# Saving the compiled model
# -------------------------
# ``model.save`` writes the compiled model (expressions and numbers; the C kernels are
# found again in the kernel cache, or rebuilt) and ``sb.load_model`` reads it back
# without forming anything: the same right-hand side (to round-off), ready to simulate.

import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    path = model.save(Path(tmp) / "chain40")
    start = time.perf_counter()
    again = sb.load_model(path)
    difference = np.max(np.abs(again.rhs(0.0, x0, p) - xdot))
    print(f"loaded and evaluated in {time.perf_counter() - start:.2f} s; "
          f"largest difference in x': {difference:.1e}")
    assert difference < 1e-9 * np.max(np.abs(xdot))
