"""What compiling kernels from their serialized form costs (issue 34 item 5): every kernel is
compiled from its expressions as read back from symengine's serialization
(``codegen.in_serialized_order``), so that a model rebuilt from a saved file gives the same
numbers to the bit.  Cold compiles (``cache=False``) plus the first rhs call, with the time
spent in the serialization round trip measured inside the same run.

Usage::

    python benchmarks/bench_serialized_order.py [MODEL ...]     # default: whipple-bicycle n-four-bar
"""

from __future__ import annotations

import sys
import time

import symbody as sb
from symbody.compilation import codegen


def main(names: list[str]) -> None:
    spent = [0.0]
    original = codegen.in_serialized_order

    def timed(exprs):
        t0 = time.perf_counter()
        out = original(exprs)
        spent[0] += time.perf_counter() - t0
        return out

    codegen.in_serialized_order = timed
    print("| model | cold compile + first rhs [s] | serialization round trip [s] | share |")
    print("|---|---:|---:|---:|")
    try:
        for name in names:
            zoo = sb.models.get(name)
            spent[0] = 0.0
            t0 = time.perf_counter()
            model = sb.compile(zoo.eom, cache=False)
            model.rhs(0.0, model.state_array(zoo.initial_state), model.constants_array(zoo.constants))
            wall = time.perf_counter() - t0
            print(f"| {name} | {wall:.2f} | {spent[0]:.3f} | {spent[0] / wall:.1%} |")
    finally:
        codegen.in_serialized_order = original


if __name__ == "__main__":
    main(sys.argv[1:] or ["whipple-bicycle", "n-four-bar"])
