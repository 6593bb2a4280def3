"""Per-call time of the numeric model's Python entry points on two closed loops, for
comparing two checkouts on a loaded machine (run it alternately with each checkout's
Python; the best of many short loops is the least disturbed by other processes).

Models: the zoo's four-bar and a closed chain of 4 bars
(``symbody.testing.random_model(1, n_bodies=3, kind="closed_loop", particles=False)``).
Timed: ``model.rhs(t, x, p)``, the bound ``model.rhs_function(p)(t, x)`` and
``model.rhs_many`` on 200 states (four-bar).

Usage::

    .venv/bin/python benchmarks/bench_rhs_paths.py LABEL
"""

from __future__ import annotations

import sys
import timeit

import numpy as np

import symbody as sb
from symbody.testing import random_model


def best(fn, number: int = 200, repeat: int = 150) -> float:
    """Microseconds per call: the best of ``repeat`` loops of ``number`` calls."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main(label: str) -> dict:
    zoo = sb.models.four_bar()
    fb = sb.compile(zoo.eom)
    P = fb.constants_array(zoo.constants)
    x = fb.consistent_state(fb.state_array(zoo.initial_state), P)
    f = fb.rhs_function(P)
    rm = random_model(1, n_bodies=3, kind="closed_loop", particles=False)
    chain = sb.compile(rm.form().to_eom())
    P2 = np.array([float(rm.constants[c]) for c in chain.constants])
    st = rm.random_state(0, spread=0.5)
    x2 = np.array([st[s] for s in chain.states], dtype=float)
    f2 = chain.rhs_function(P2)
    X = np.tile(x, (200, 1))
    res = {"four-bar rhs": best(lambda: fb.rhs(0.0, x, P)),
           "four-bar bound": best(lambda: f(0.0, x)),
           "chain rhs": best(lambda: chain.rhs(0.0, x2, P2)),
           "chain bound": best(lambda: f2(0.0, x2)),
           "four-bar rhs_many 200": best(lambda: fb.rhs_many(0.0, X, P), number=10)}
    print(label, "  ".join(f"{k} {v:.2f} us" for k, v in res.items()))
    return res


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "symbody")
