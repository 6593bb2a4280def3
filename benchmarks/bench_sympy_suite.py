"""SymPy's own KanesMethod/LagrangesMethod/linearize tests with symbody's classes, timed.

Every test function of the installed sympy/physics/mechanics/tests/test_kane*.py,
test_lagrange*.py and test_linearize.py is run twice in this process: with
symbody's KanesMethod/LagrangesMethod swapped in (tests/systems/sympy_suite.py),
then with SymPy's own classes; the wall times and their ratio are printed.  Tests
that take under a second are run three times on each side (best of: their first
run pays for imports).  A run longer than ``--timeout`` seconds is stopped
(SIGALRM) and reported as such.

Run:  .venv/bin/python benchmarks/bench_sympy_suite.py [--timeout 300] [--only test_kane3]
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
from systems import sympy_suite  # noqa: E402


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout


def _timed(case, use_symbody: bool, timeout: int) -> tuple[float | None, str]:
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        return sympy_suite.run(*case, use_symbody=use_symbody), "passed"
    except _Timeout:
        return None, f"stopped after {timeout} s"
    except Exception as exc:  # noqa: BLE001 - a failing test is a result to report
        return None, f"fails: {type(exc).__name__}: {str(exc)[:80]}"
    finally:
        signal.alarm(0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run before it is stopped")
    ap.add_argument("--only", nargs="*", help="substrings of 'module::test' to run")
    args = ap.parse_args(argv)
    rows = []
    for case in sympy_suite.all_tests():
        label = "::".join(case)
        if args.only and not any(s in label for s in args.only):
            continue
        ours, ours_status = _timed(case, True, args.timeout)
        ref, ref_status = _timed(case, False, args.timeout)
        if ours is not None and ref is not None and max(ours, ref) < 1.0:
            ours = min([ours] + [_timed(case, True, args.timeout)[0] for _ in range(2)])
            ref = min([ref] + [_timed(case, False, args.timeout)[0] for _ in range(2)])
        rows.append((label, ours, ours_status, ref, ref_status))
        print(f"{label:60s} symbody {ours_status} {ours or 0:7.2f} s   sympy {ref_status} {ref or 0:7.2f} s",
              flush=True)
    print()
    print("| SymPy test | symbody [s] | SymPy [s] | symbody / SymPy |")
    print("|---|---:|---:|---:|")
    for label, ours, ours_status, ref, ref_status in rows:
        a = f"{ours:.2f}" if ours is not None else ours_status
        b = f"{ref:.2f}" if ref is not None else ref_status
        ratio = f"{ours / ref:.2f}" if ours is not None and ref is not None else "-"
        print(f"| {label} | {a} | {b} | {ratio} |")


if __name__ == "__main__":
    main()
