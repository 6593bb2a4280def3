"""Size of the reduced forms with KanesMethod(constraint_solver=...): symbody's against SymPy's.

Usage::

    python benchmarks/bench_cramer_size.py [--solver CRAMER] [--sympy]

The Whipple bicycle of SymPy's own test_kane3.py::test_bicycle, formed up to
``kanes_equations`` with its ``constraint_solver="CRAMER"`` (or ``--solver``), by symbody's
KanesMethod (and with ``--sympy`` by SymPy's, about 10 s); prints ``sympy.count_ops`` of
``mass_matrix`` and ``forcing`` and the formation time.  Written for issue 34 item 6 (the
option was ignored by the reduced forms: 2.9x SymPy's mass matrix).
"""

from __future__ import annotations

import argparse
import inspect
import textwrap
import time

import sympy as sm
from sympy.physics.mechanics.tests import test_kane3

import symbody as sb

CUT = "(fr, frstar) = KM.kanes_equations(BL, FL)"


def formed(cls, solver: str):
    """SymPy's bicycle test up to its kanes_equations call, with ``cls`` as KanesMethod."""
    body = inspect.getsource(test_kane3.test_bicycle).split("def test_bicycle():\n", 1)[1]
    body = textwrap.dedent(body[:body.index(CUT) + len(CUT)])
    body = body.replace('constraint_solver="CRAMER"', f'constraint_solver="{solver}"')
    namespace = dict(vars(test_kane3), KanesMethod=cls)
    exec(body, namespace)       # noqa: S102 - SymPy's own test source
    return namespace["KM"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", default="CRAMER")
    ap.add_argument("--sympy", action="store_true", help="also SymPy's own KanesMethod")
    args = ap.parse_args()
    print("| KanesMethod | constraint_solver | count_ops(mass_matrix) | count_ops(forcing) | "
          "formation + forms [s] |")
    print("|---|---|---:|---:|---:|")
    for label, cls in [("symbody", sb.KanesMethod)] + (
            [("SymPy", sm.physics.mechanics.KanesMethod)] if args.sympy else []):
        t0 = time.perf_counter()
        km = formed(cls, args.solver)
        mm, f = km.mass_matrix, km.forcing
        wall = time.perf_counter() - t0
        print(f"| {label} | {args.solver} | {sm.count_ops(mm)} | {sm.count_ops(f)} | {wall:.1f} |")


if __name__ == "__main__":
    main()
