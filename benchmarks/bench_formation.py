"""Formation time: symbody.KanesMethod vs sympy.physics.mechanics.KanesMethod.

Timed: construction + kanes_equations + mass_matrix_full + forcing_full, with
fresh kinematics built (untimed) before each run; symbody first, then SymPy,
in the same process, the same number of repetitions on both sides (best of).
Systems: the n-link pendulum on a cart (n = 10, 20, 30, 40) and the Whipple
bicycle of SymPy's test_kane3 (with its velocity constraints).

Run:  .venv/bin/python benchmarks/bench_formation.py [--sizes 10 20 30 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import sympy.physics.mechanics as me

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
import symbody as sb  # noqa: E402
from systems import n_link_pendulum_on_cart, whipple_bicycle_sympy_test_kane3  # noqa: E402


def _form_chain(mod, n):
    N, q, u, kd, bodies, loads, _ = n_link_pendulum_on_cart(n)
    gc.collect()
    t0 = time.perf_counter()
    km = mod.KanesMethod(N, q, u, kd)
    km.kanes_equations(bodies, loads)
    _ = km.mass_matrix_full, km.forcing_full
    return time.perf_counter() - t0


def _form_bicycle(mod):
    s = whipple_bicycle_sympy_test_kane3()
    gc.collect()
    t0 = time.perf_counter()
    km = mod.KanesMethod(s["N"], s["q_ind"], s["u_ind"], kd_eqs=s["kd"], q_dependent=s["q_dep"],
                         configuration_constraints=s["conlist_coord"], u_dependent=s["u_dep"],
                         velocity_constraints=s["conlist_speed"])
    km.kanes_equations(s["bodies"], s["loads"])
    _ = km.mass_matrix_full, km.forcing_full
    return time.perf_counter() - t0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10, 20, 30, 40])
    ap.add_argument("--repeat", type=int, default=3, help="repetitions on each side (best of)")
    args = ap.parse_args(argv)
    rows = []
    for n in args.sizes:
        ours = min(_form_chain(sb, n) for _ in range(args.repeat))
        ref = min(_form_chain(me, n) for _ in range(args.repeat))
        rows.append((f"n-link pendulum on cart, n={n}", ours, ref))
        print(f"n={n:3d}  symbody {ours:8.3f} s   sympy {ref:8.3f} s   ratio {ref / ours:6.1f}x", flush=True)
    ours = min(_form_bicycle(sb) for _ in range(args.repeat))
    ref = min(_form_bicycle(me) for _ in range(args.repeat))
    rows.append(("Whipple bicycle (test_kane3, velocity constraints)", ours, ref))
    print(f"bicycle  symbody {ours:8.3f} s   sympy {ref:8.3f} s   ratio {ref / ours:6.1f}x", flush=True)
    print()
    print("| system | symbody [s] | SymPy KanesMethod [s] | speed-up |")
    print("|---|---:|---:|---:|")
    for name, a, b in rows:
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.1f}x |")


if __name__ == "__main__":
    main()
