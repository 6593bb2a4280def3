"""Names of symbols as symbody prints them, shared by every layer.

``symbol_name(q1(t))`` is ``"q1"``: a function of time is named by its function, as a
reader writes it; any other symbol or expression by ``str``.  Trajectories, sweeps, events,
messages and CSV headers all use it, so that a state is spelled the same everywhere.
"""

from __future__ import annotations

from typing import Any

from sympy.core.function import AppliedUndef

__all__ = ["symbol_name"]


def symbol_name(symbol: Any) -> str:
    """``'q1'`` for ``q1(t)`` (an undefined function applied to t); ``str(symbol)`` otherwise."""
    if isinstance(symbol, AppliedUndef):
        return symbol.func.__name__
    return str(symbol)
