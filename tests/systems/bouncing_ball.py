"""A ball bouncing on the floor, the event tests' system: q'' = -g with an impact map
u -> -e u when q crosses 0 falling (tests/analysis: events, dense output, trajectory files)."""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb


def bouncing_ball() -> SimpleNamespace:
    """The compiled ``model`` (state [q, u], constants g, e), the impact ``bounce`` (an
    sb.Event) and the symbols ``q``, ``u``, ``g``, ``e``."""
    t = me.dynamicsymbols._t
    q, u = me.dynamicsymbols("q u")
    g, e = sm.symbols("g e")
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[1]]), sm.Matrix([g])), constants=[g, e])
    bounce = sb.Event(q, name="bounce", direction=-1, action={u: -e * u})
    return SimpleNamespace(model=sb.compile(eom), bounce=bounce, q=q, u=u, g=g, e=e)
