"""The attributes SymPy's KanesMethod and LagrangesMethod share, for both of ours.

Both keep the coordinates as a column ``_q``, the bodies as ``_bodies`` and the loads as
``_forcelist``; SymPy names the latter two ``bodies``/``loads`` (and, older,
``bodylist``/``forcelist``).
"""

from __future__ import annotations

import sympy as sm


class MethodAttributes:
    """``q`` (n x 1), ``bodies`` and ``loads`` (with their older names ``bodylist``, ``forcelist``)."""

    _q: sm.Matrix
    _bodies: list | None
    _forcelist: list | None

    @property
    def q(self) -> sm.Matrix:
        """Generalized coordinates (n x 1)."""
        return self._q

    @property
    def bodies(self) -> list | None:
        """The bodies given to the method."""
        return self._bodies

    @property
    def loads(self) -> list | None:
        """The loads given to the method: (point, force) and (frame, torque) pairs."""
        return self._forcelist

    #: SymPy's older names of the same two
    bodylist = bodies
    forcelist = loads
