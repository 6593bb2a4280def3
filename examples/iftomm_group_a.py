"""The IFToMM benchmark problems of the model zoo, simulated and checked in one run.

Builds the zoo models of the IFToMM multibody benchmark library, group A, simulates each in
symbody's default constraint mode and prints the benchmark's output quantity at the end of
the run, the largest loop-closure residual (redundant equations included) and the energy
change::

    .venv/bin/python examples/iftomm_group_a.py

A01 "iftomm-pendulum": 20 s of the 2000 s problem; P1 against the exact (Jacobi elliptic)
solution.  A03 "andrews-squeezer": 0.03 s; the angles against the Test Set reference
(beta(0.03) = 15.81077119629904).  A04 "bricard": 10 s; the loop's redundant sixth equation
(``model.redundant_constraints``) is satisfied although the model is formed without it.
A05 "flyball-governor": 10 s with Radau (stiff: spring-dampers of 8e5 N/m, 4e4 N s/m); the
energy falls through the damping.  A02 (the N-four-bar) is ``sb.models.get("n-four-bar")``.
"""

from __future__ import annotations

import math
import time

import numpy as np
import sympy as sm
from scipy.special import ellipj, ellipk

import symbody as sb


def evaluate(model, expr, sol) -> np.ndarray:
    """``expr`` (in q, u and the constants) along the trajectory ``sol``."""
    f = sm.lambdify([list(model.eom.q), list(model.eom.u)], sm.sympify(expr).xreplace(model.constants))
    return np.array([float(f(q, u)) for q, u in zip(np.asarray(sol.q), np.asarray(sol.u), strict=True)])


def run(name: str, t_end: float, method: str | None = None, rtol: float = 1e-8):
    model = sb.models.get(name)
    compiled = sb.compile(model.eom)
    t = np.linspace(0.0, t_end, 201)
    start = time.perf_counter()
    sol = sb.simulate(compiled, (0.0, t_end), model.initial_state, model.constants,
                      solver=sb.Solver(rtol=rtol, atol=rtol, method=method), t_eval=t)
    wall = time.perf_counter() - start
    energy = evaluate(model, model.energy, sol)
    print(f"{name}: {sol.message}; {wall:.3f} s; energy {energy[0]:.6g} -> {energy[-1]:.6g} J")
    return model, sol


def main() -> None:
    model, sol = run("iftomm-pendulum", 20.0)
    k = math.sin(math.pi / 4)
    u = np.mod(ellipk(k * k) - math.sqrt(9.81) * np.asarray(sol.t), 4 * ellipk(k * k))
    sn, _, dn, _ = ellipj(u, k * k)
    x = evaluate(model, model.outputs["x_P1"], sol)
    print(f"  P1: largest deviation from the exact solution {np.max(np.abs(x - 2 * k * sn * dn)):.2e} m")

    model, sol = run("andrews-squeezer", 0.03, rtol=1e-10)
    print(f"  beta(0.03) = {np.asarray(sol.q)[-1, 0]:.12f} (Test Set: 15.81077119629904)")

    model, sol = run("bricard", 10.0)
    p3 = np.column_stack([evaluate(model, model.outputs[k], sol) for k in ("x_P3", "y_P3", "z_P3")])
    redundant = {k: np.max(np.abs(evaluate(model, e, sol))) for k, e in model.redundant_constraints.items()}
    print(f"  P3(10 s) = {np.round(p3[-1], 6)}; redundant equations left out: "
          + ", ".join(f"{k} (largest residual {v:.1e})" for k, v in redundant.items()))

    model, sol = run("flyball-governor", 10.0, method="Radau")
    s = np.asarray(sol.q)[:, 1]
    print(f"  s: from {s[0]:.3f} m, between {s.min():.4f} and {s.max():.4f} m, at 10 s {s[-1]:.6f} m")


if __name__ == "__main__":
    main()
