"""The two one-state paths of ``robot.inverse_dynamics_derivatives``, in one process: the
emitted factors and their products in C (:mod:`symbody.robots.inverse_derivatives`) against
the dense kernel's compiled entry, with ``pin.computeRNEADerivatives`` as the anchor.

For each robot (``FILE`` relative to example-robot-data's robots folder, ``FILE:free`` with
a free-flyer): ``folded_entries`` (what ``PRODUCTS_MIN_ENTRIES`` is compared with), the CPU
time of one call (time.process_time, median of 9 interleaved repeats of ~4 ms) in a loop of
the same call, and alternating 1:1 with Pinocchio's call (only ours timed: the code of a
big kernel falls out of the caches between two calls).  The two paths agree to 1e-12.

    PYTHONPATH=src:tests python benchmarks/bench_inverse_derivative_paths.py \\
        tiago_description/robots/tiago_dual.urdf solo_description/robots/solo12.urdf:free

Needs the `test` extra (pin, example-robot-data).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))  # the shared oracle helpers


def measure(rel: str, floating: bool) -> dict:
    import numpy as np
    import pinocchio as pin

    import symbody as sb
    from symbody.compilation.native_function import function_entry
    from symbody.errors import SymbodyError
    from symbody.robots import inverse_derivatives
    from symbody.robots.pinocchio import full_speeds, tree_index
    from systems.pinocchio_oracle import pinocchio_model, random_state, robots_dir

    path = robots_dir() / rel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            robot = sb.load_urdf(path, floating_base=floating, invalid_inertia="warn")
        except SymbodyError:
            robot = sb.load_urdf(path, floating_base=floating, invalid_inertia="warn",
                                 mimic=False)
    entries = inverse_derivatives.folded_entries(robot)
    inverse_derivatives.PRODUCTS_MIN_ENTRIES = 0         # both paths, whatever the size
    pm = pinocchio_model(pin, path, floating)
    pd = pm.createData()
    K = robot.inverse_dynamics_derivatives
    rng = np.random.default_rng(1)
    x = robot.from_pinocchio(*random_state(pin, pm, rng))
    qp, v = robot.to_pinocchio(x)
    a = rng.standard_normal(pm.nv)
    _, ui = tree_index(robot)
    q, u, ud = x[:robot.nq], full_speeds(robot, x[robot.nq:]), a[ui]
    K(q[None], u[None], ud[None])                        # compiles the dense kernel
    dense = function_entry(K.kernel, K._given, K.constants, K.shape, None)  # noqa: SLF001
    products = K.__dict__["_entry"]
    d = dense(q, u, ud)
    np.testing.assert_allclose(products(q, u, ud), d, rtol=0, atol=1e-12 * np.abs(d).max())
    calls = {"products": lambda: products(q, u, ud), "dense": lambda: dense(q, u, ud),
             "pin": lambda: pin.computeRNEADerivatives(pm, pd, qp, v, a)}
    pt = time.process_time
    t0 = pt()
    for _ in range(50):
        calls["dense"]()
    n = max(50, int(0.004 / max((pt() - t0) / 50, 1e-7)))
    loop: dict = {k: [] for k in calls}
    alternating: dict = {"products": [], "dense": []}
    for _ in range(9):
        for k, f in calls.items():
            t0 = pt()
            for _ in range(n):
                f()
            loop[k].append((pt() - t0) / n * 1e6)
        for k, times in alternating.items():
            f, g, s = calls[k], calls["pin"], 0.0
            for _ in range(n // 2):
                t0 = pt()
                f()
                s += pt() - t0
                g()
            times.append(s / (n // 2) * 1e6)
    med = {k: float(np.median(t)) for k, t in loop.items()}
    alt = {k: float(np.median(t)) for k, t in alternating.items()}
    return {"robot": rel, "base": "free-flyer" if floating else "fixed",
            "dof": len(robot.speeds), "entries": entries, "loop": med, "alternating": alt}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robots", nargs="+", help="FILE or FILE:free under the robots folder")
    for spec in ap.parse_args().robots:
        rel, _, base = spec.partition(":")
        r = measure(rel, base == "free")
        lp, ap_ = r["loop"], r["alternating"]
        print(f"| {Path(rel).name} | {r['base']} | {r['dof']} | {r['entries']} | "
              f"{lp['products']:.2f} | {lp['dense']:.2f} | {lp['pin']:.2f} | "
              f"{lp['products'] / lp['dense']:.2f} | {ap_['products']:.2f} | "
              f"{ap_['dense']:.2f} | {ap_['products'] / ap_['dense']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
