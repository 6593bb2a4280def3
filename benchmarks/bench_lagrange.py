"""Formation time of symbody.LagrangesMethod against sympy.physics.mechanics.LagrangesMethod.

Timed: construction + form_lagranges_equations() + mass_matrix_full + forcing_full,
with fresh kinematics (and Lagrangian, built by sympy's ``Lagrangian`` outside
the timing) for each method, symbody first.  The results are checked to agree:
mass_matrix_full \\ forcing_full at a random state, relative difference printed.

Systems:
  chain  n-link pendulum of uniform rods (relative joint angles, rigid bodies,
         gravity, a damping torque in every joint)
  cart   n-link pendulum on a cart (absolute angles, particles, a specified
         force on the cart), the Lagrange form of PyDy's n_link_pendulum_on_cart

Usage:
  .venv/bin/python benchmarks/bench_lagrange.py --system chain --n 4 6 8 --sympy-max 8
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
from symbody import LagrangesMethod  # noqa: E402
from systems.benchmark_systems import rod_chain_lagrangian as chain  # noqa: E402

t = me.dynamicsymbols._t


def cart(n: int):
    """(L, q, kwargs) of the n-link pendulum on a cart, velocities in q'."""
    q = me.dynamicsymbols(f"q:{n + 1}")
    qd = [s.diff(t) for s in q]
    f = me.dynamicsymbols("f")
    m = sm.symbols(f"m:{n + 1}")
    ls = sm.symbols(f"l:{n}")
    g = sm.Symbol("g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P0 = O.locatenew("P0", q[0] * N.x)
    P0.set_vel(N, qd[0] * N.x)
    parts = [me.Particle("Pa0", P0, m[0])]
    parts[0].potential_energy = 0
    prev = P0
    for i in range(n):
        B = N.orientnew(f"B{i}", "Axis", [q[i + 1], N.z])
        B.set_ang_vel(N, qd[i + 1] * N.z)
        P = prev.locatenew(f"P{i + 1}", ls[i] * B.x)
        P.v2pt_theory(prev, N, B)
        pa = me.Particle(f"Pa{i + 1}", P, m[i + 1])
        pa.potential_energy = m[i + 1] * g * P.pos_from(O).dot(N.y)
        parts.append(pa)
        prev = P
    return me.Lagrangian(N, *parts), list(q), dict(forcelist=[(P0, f * N.x)], bodies=parts, frame=N)


def form(cls, L, q, kw):
    t0 = time.perf_counter()
    lm = cls(L, q, **kw)
    lm.form_lagranges_equations()
    M, F = lm.mass_matrix_full, lm.forcing_full
    return time.perf_counter() - t0, M, F


def solve_at_random_state(M, F, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    atoms, syms = set(), set()
    for e in list(M) + list(F):
        atoms |= me.find_dynamicsymbols(e)
        syms |= e.free_symbols
    syms.discard(t)
    keys = sorted(atoms | syms, key=str)
    vals = dict(zip(keys, rng.uniform(0.3, 1.3, len(keys)), strict=True))
    ders = {k: v for k, v in vals.items() if isinstance(k, sm.Derivative)}
    rest = {k: v for k, v in vals.items() if not isinstance(k, sm.Derivative)}
    ev = lambda X: np.array(X.xreplace(ders).xreplace(rest).evalf(), dtype=float)  # noqa: E731
    return np.linalg.solve(ev(M), ev(F)).ravel()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", choices=["chain", "cart"], default="chain")
    ap.add_argument("--n", type=int, nargs="+", default=[2, 4, 6, 8])
    ap.add_argument("--sympy-max", type=int, default=8, help="largest n also timed with sympy")
    args = ap.parse_args()
    build = chain if args.system == "chain" else cart
    print(f"| {args.system} n | symbody [s] | sympy [s] | ratio | rel. difference |")
    print("|---|---|---|---|---|")
    for n in args.n:
        t_ours, M1, F1 = form(LagrangesMethod, *build(n))
        if n <= args.sympy_max:
            t_ref, M2, F2 = form(me.LagrangesMethod, *build(n))
            x1, x2 = solve_at_random_state(M1, F1), solve_at_random_state(M2, F2)
            diff = float(np.max(np.abs(x1 - x2)) / np.max(np.abs(x2)))
            print(f"| {n} | {t_ours:.3f} | {t_ref:.2f} | {t_ref / t_ours:.0f}x | {diff:.1e} |", flush=True)
        else:
            print(f"| {n} | {t_ours:.3f} | - | - | - |", flush=True)


if __name__ == "__main__":
    main()
