"""SymPy -> symengine conversion of the canonical blocks (the one bridge, symengine_bridge.py).

Timed, CPU time of this process, best of ``--repeat``: code generation's converter
(``compilation.codegen._to_symengine``: symengine expressions in positional arguments plus
the structural key of the kernel cache) and the bridge's ``to_symengine``, on every
block of the canonical form of the Whipple bicycle (zoo) and of the n-link pendulum on a
cart (formed with symbody.KanesMethod).  Anchor, same run: ``symengine.sympify`` of the
bicycle's blocks (symengine's own conversion, a walk of the expression *tree*).  The key
printed is the kernel cache's: equal keys across two checkouts mean the cached kernels
stay valid.  Compare two checkouts by running this script with each one's ``src`` first
on PYTHONPATH in the same session::

    PYTHONPATH=<old tree>/src python benchmarks/bench_conversion.py
    PYTHONPATH=src python benchmarks/bench_conversion.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import symengine as se
from sympy.physics.vector import dynamicsymbols

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
import symbody as sb  # noqa: E402
from symbody.compilation import codegen  # noqa: E402
from symbody.symengine_bridge import to_symengine  # noqa: E402
from systems import n_link_pendulum_on_cart  # noqa: E402


def blocks(eom) -> list:
    """Every entry of the canonical blocks."""
    out: list = []
    for M in (eom.dynamic_mass, eom.dynamic_rest, eom.velocity_matrix, eom.velocity_rest,
              eom.holonomic, eom.kinematic_rest, eom.qdot_solution, eom.acceleration_rest):
        out += list(M)
    return out


def best(f, reps: int) -> float:
    b = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        f()
        b = min(b, time.process_time() - t0)
    return b


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    N, q, u, kd, bodies, loads, _ = n_link_pendulum_on_cart(args.links)
    km = sb.KanesMethod(N, q, u, kd)
    km.kanes_equations(bodies, loads)
    systems = [("Whipple bicycle", sb.models.whipple_bicycle().eom),
               (f"{args.links}-link chain", km.to_eom())]
    print(f"{'system':18s} {'exprs':>6s} {'codegen (ms)':>13s} {'bridge (ms)':>12s}  kernel-cache key")
    anchor = None
    for label, eom in systems:
        exprs = blocks(eom)
        fargs = list(eom.q) + list(eom.u) + list(eom.constants) + list(eom.specifieds)
        fargs.append(dynamicsymbols._t)
        key = codegen._to_symengine(fargs, exprs, label)[1]
        t_codegen = best(lambda a=fargs, x=exprs, n=label: codegen._to_symengine(a, x, n), args.repeat)
        t_bridge = best(lambda x=exprs: to_symengine(x), args.repeat)
        if anchor is None:
            anchor = (t_bridge, best(lambda x=exprs: [se.sympify(e) for e in x], 1))
        print(f"{label:18s} {len(exprs):6d} {1e3 * t_codegen:13.2f} {1e3 * t_bridge:12.2f}  {key[:16]}")
    print(f"anchor: symengine.sympify of the bicycle's blocks {anchor[1]:.3f} s = "
          f"{anchor[1] / anchor[0]:.0f}x the bridge's to_symengine")


if __name__ == "__main__":
    main()
