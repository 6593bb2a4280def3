"""CPU time of one factorization of (μ/h) I - J in the compiled Radau step (a real and a
complex LU, plus one real and one complex solve): hand-written vs LAPACK, n = 8 ... 256.

Medians of repeats, the sides interleaved; process CPU time (all threads).  With threadpoolctl
installed a third column: LAPACK with OpenBLAS held to one thread (the library never limits
threads; this shows what OpenBLAS's own threads cost in CPU time).
    python benchmarks/bench_radau_lu.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import time

import numpy as np

from symbody.analysis.simulation.native_radau import _lapack_routines, _Radau, _tables
from symbody.analysis.simulation.radau_source import RADAU_SOURCE
from symbody.compilation.native_rhs import build_source, data_address

WRAPPER = r"""
int symbody_radau_factor_bench(radau *R, double h, long reps, double *b, double complex *bc)
{
    long r;
    for (r = 0; r < reps; r++) {
        if (factorize(R, h)) return 1;
        solve_real_lu(R, b);
        solve_complex_lu(R, bc);
    }
    return 0;
}
"""


def _struct(n: int, lapack: bool, rng: np.random.Generator) -> tuple[_Radau, list]:
    tables, _ = _tables()
    mu = complex(tables["MU_COMPLEX"])
    J = rng.standard_normal((n, n)).ravel()
    keep = [J, np.empty(n * n), np.empty(2 * n * n), np.zeros(n, np.intc), np.zeros(n, np.intc)]
    routines = _lapack_routines() if lapack else {}
    R = _Radau(n=n, J=data_address(keep[0]), LUr=data_address(keep[1]), LUc=data_address(keep[2]),
               pr=data_address(keep[3]), pc=data_address(keep[4]), mu_real=float(tables["MU_REAL"]),
               mu_re=mu.real, mu_im=mu.imag, lapack_min_n=0, **routines)
    return R, keep


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="*", default=[8, 16, 32, 64, 128, 256])
    args = parser.parse_args()
    lib = build_source(RADAU_SOURCE + WRAPPER, "radau-lu-bench")
    fn = lib.symbody_radau_factor_bench
    fn.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    rng = np.random.default_rng(0)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    print(f"{'n':>5} {'hand us':>10} {'lapack us':>10} {'ratio':>7} {'1 thread us':>12}")
    for n in args.sizes:
        reps = max(1, int(2e6 / n**3))
        sides = {}
        for lapack in (False, True):
            R, keep = _struct(n, lapack, rng)
            b, bc = np.ones(n), np.ones(n, complex)
            sides[lapack] = (R, keep, b, bc)
        times = {False: [], True: [], "one": []}
        for _ in range(args.repeats):
            for side in (False, True, "one"):
                if side == "one" and threadpool_limits is None:
                    continue
                R, keep, b, bc = sides[bool(side)]
                limit = threadpool_limits(1, user_api="blas") if side == "one" else None
                t0 = time.process_time()
                assert fn(ctypes.addressof(R), 0.01, reps, b.ctypes.data, bc.ctypes.data) == 0
                times[side].append((time.process_time() - t0) / reps * 1e6)
                if limit is not None:
                    limit.restore_original_limits()
        hand, lap = statistics.median(times[False]), statistics.median(times[True])
        one = f"{statistics.median(times['one']):12.1f}" if times["one"] else ""
        print(f"{n:5d} {hand:10.1f} {lap:10.1f} {hand / lap:7.2f} {one}")


if __name__ == "__main__":
    main()
