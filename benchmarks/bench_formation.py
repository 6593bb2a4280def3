"""Formation time: symbody.KanesMethod vs sympy.physics.mechanics.KanesMethod.

Timed: construction + kanes_equations + mass_matrix_full + forcing_full, with
fresh kinematics built (untimed) before each run, in the same process: untimed warm-up
runs on each side (``--warmup``, 3), then the timed runs alternating symbody, SymPy,
symbody, SymPy, ... (``--repeat`` on each side, best of).  Both sides get faster over
their first runs (caches, SymPy's among them, which both use, fill): on the 20-link
chain, alternating, symbody took 0.28, 0.12, 0.098, 0.075 s and SymPy 8.6, 7.8, 7.2,
6.9 s in its first four runs; the figures compare the settled times.
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


def _paired(form, repeat: int, warmup: int) -> tuple[float, float]:
    """Best of ``repeat`` timed runs of symbody and of SymPy, alternating, after ``warmup``
    untimed runs of each."""
    for _ in range(warmup):
        form(sb)
        form(me)
    ours, ref = [], []
    for _ in range(repeat):
        ours.append(form(sb))
        ref.append(form(me))
    return min(ours), min(ref)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10, 20, 30, 40])
    ap.add_argument("--repeat", type=int, default=3, help="repetitions on each side (best of)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs on each side first")
    args = ap.parse_args(argv)
    rows = []
    for n in args.sizes:
        ours, ref = _paired(lambda mod, n=n: _form_chain(mod, n), args.repeat, args.warmup)
        rows.append((f"n-link pendulum on cart, n={n}", ours, ref))
        print(f"n={n:3d}  symbody {ours:8.3f} s   sympy {ref:8.3f} s   ratio {ref / ours:6.1f}x", flush=True)
    ours, ref = _paired(_form_bicycle, args.repeat, args.warmup)
    rows.append(("Whipple bicycle (test_kane3, velocity constraints)", ours, ref))
    print(f"bicycle  symbody {ours:8.3f} s   sympy {ref:8.3f} s   ratio {ref / ours:6.1f}x", flush=True)
    print()
    print("| system | symbody [s] | SymPy KanesMethod [s] | speed-up |")
    print("|---|---:|---:|---:|")
    for name, a, b in rows:
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.1f}x |")


if __name__ == "__main__":
    main()
