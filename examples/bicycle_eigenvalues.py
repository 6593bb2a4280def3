"""Eigenvalues of the benchmark bicycle against forward speed (Meijaard et al. 2007, Fig. 3).

Builds the Whipple bicycle of the model zoo (symbody.KanesMethod, benchmark
parameters), linearizes it with ``symbody.linearize`` about the upright,
straight-ahead motion at speeds 0..10 m/s, finds the weave and capsize speeds
by root finding, and saves the classic plot::

    .venv/bin/python examples/bicycle_eigenvalues.py [--out symbody-output/bicycle_eigenvalues.png]

Expected: v_weave = 4.29238 m/s and v_capsize = 6.02426 m/s (the paper's 4.29238253634111
and 6.02426201538837); the bicycle is self-stable in between.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

import symbody as sb  # noqa: E402
from symbody.models.whipple_bicycle import lean_steer_states  # noqa: E402


def lean_steer_eigenvalues(model, v: float) -> np.ndarray:
    """Eigenvalues of the roll/steer dynamics [roll, steer, roll rate, steer rate] at speed v."""
    A, _ = sb.linearize(model, model.operating_point({"v": v}))
    idx, _ = lean_steer_states(model)
    return np.linalg.eigvals(A[np.ix_(idx, idx)])


def weave_real_part(model, v: float) -> float:
    ev = lean_steer_eigenvalues(model, v)
    return float(ev[np.argmax(ev.imag)].real)


def capsize(model, v: float) -> float:
    ev = lean_steer_eigenvalues(model, v)
    real = np.sort(ev[np.abs(ev.imag) < 1e-9].real)
    return float(real[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="symbody-output/bicycle_eigenvalues.png", help="PNG file to write")
    ap.add_argument("--points", type=int, default=201, help="number of speeds in [0, 10] m/s")
    args = ap.parse_args()

    t0 = time.perf_counter()
    model = sb.models.whipple_bicycle()
    t1 = time.perf_counter()
    speeds = np.linspace(0.0, 10.0, args.points)
    eigs = np.array([np.sort_complex(lean_steer_eigenvalues(model, v)) for v in speeds])
    t2 = time.perf_counter()
    v_weave = brentq(lambda v: weave_real_part(model, v), 4.0, 5.0, xtol=1e-14)
    v_capsize = brentq(lambda v: capsize(model, v), 5.5, 6.5, xtol=1e-14)
    print(f"model built in {t1 - t0:.2f} s; {len(speeds)} linearizations in {t2 - t1:.2f} s")
    print(f"weave speed   {v_weave:.14f} m/s (paper 4.29238253634111)")
    print(f"capsize speed {v_capsize:.14f} m/s (paper 6.02426201538837)")

    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    ax.axvspan(v_weave, v_capsize, color="0.9", label="self-stable")
    ax.plot(speeds, eigs.real, "k.", markersize=2.5)
    ax.plot(speeds, np.abs(eigs.imag), ".", color="tab:blue", markersize=2.5)
    ax.plot([], [], "k.", label="real part")
    ax.plot([], [], ".", color="tab:blue", label="|imaginary part|")
    for v, name in ((v_weave, "weave"), (v_capsize, "capsize")):
        ax.axvline(v, color="tab:red", lw=0.8, ls="--")
        ax.text(v, 9.3, f" v_{name[0]} = {v:.3f}", color="tab:red", fontsize=8)
    ax.axhline(0.0, color="0.4", lw=0.6)
    ax.set_xlim(0, 10)
    ax.set_ylim(-10, 10)
    ax.set_xlabel("forward speed v [m/s]")
    ax.set_ylabel("eigenvalues [1/s]")
    ax.set_title("Benchmark bicycle (Meijaard et al. 2007): lean and steer eigenvalues")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=130)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
