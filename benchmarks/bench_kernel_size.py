"""Size and cold compile time of the Whipple bicycle's compiled kernels.

The bicycle of ``symbody.models.whipple_bicycle_system()`` (SymPy's test_kane3
formulation) is formed with symbody's KanesMethod, ``to_eom()`` taken and
compiled with the on-disk cache off (``cache=False``); the first ``rhs`` call
generates the machine code.  Sizes: ``symengine.count_ops`` of the main kernel's
expressions (q', M_d, -g_d, B_a, -b_a), before and after symengine's common
subexpression elimination.  Compare two checkouts by running this script with
each one's ``src`` first on PYTHONPATH.

Run:  .venv/bin/python benchmarks/bench_kernel_size.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import symengine as se
import sympy as sm

import symbody as sb
from symbody.models.whipple_bicycle import whipple_bicycle_system


def _main_kernel_exprs(eom) -> list:
    exprs = list(eom.qdot_solution) + list(eom.dynamic_mass) + [-e for e in eom.dynamic_rest]
    exprs += list(eom.acceleration_matrix) + [-e for e in eom.acceleration_rest]
    return exprs


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="compile timings (best of)")
    args = ap.parse_args(argv)
    built = whipple_bicycle_system()
    system = built[0] if isinstance(built, tuple) else built
    t0 = time.perf_counter()
    km = system.method()
    km.kanes_equations(system.bodies, system.loads)
    eom = km.to_eom()
    t_form = time.perf_counter() - t0
    exprs = _main_kernel_exprs(eom)
    dyn = {s: sm.Symbol(f"_x{i}") for i, s in enumerate(
        list(eom.qdot) + list(eom.udot) + list(eom.q) + list(eom.u) + list(eom.specifieds))}
    se_exprs = [se.sympify(sm.sympify(e).xreplace(dyn)) for e in exprs]
    ops = sum(se.count_ops(e) for e in se_exprs)
    reps, reduced = se.cse(se_exprs)
    ops_cse = sum(se.count_ops(e) for _, e in reps) + sum(se.count_ops(e) for e in reduced)
    best = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        model = sb.compile(eom, cache=False)
        mdl_x = np.full(len(model.states), 0.1)
        model.rhs(0.0, mdl_x, np.full(len(model.constants), 0.7))
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    print(f"formation + to_eom {t_form:.3f} s; main kernel: {len(exprs)} expressions, "
          f"{ops:,} operations, {ops_cse:,} after CSE ({len(reps)} subexpressions); "
          f"cold compile + first rhs call {best:.3f} s (best of {args.repeat})")


if __name__ == "__main__":
    main()
