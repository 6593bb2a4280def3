"""Muscle-tendon lengths and moment arms of an OpenSim model's muscles, compiled.

For muscle m with path length L_m(q) and L_m' = J_m(q) u (:mod:`.forces.geometry_path`),

    musculotendon_lengths(q)[m] = L_m(q)
    moment_arms(q)[m, k]        = -J_m,k(q) = -∂L_m/∂q_k   (u = q')

the generalized force of a unit tension on coordinate k: OpenSim's ``computeMomentArm``
(positive when the muscle's tension drives q_k up).  For a coordinate of a model with
kinematic constraints this is the partial derivative with the other coordinates held, not
OpenSim's (which lets the constrained coordinates follow).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import symengine as se
import sympy as sm

from ..errors import InputError

__all__ = ["MuscleViews"]


class MuscleViews:
    """The muscle views of :class:`~.model.OpenSimModel` (a mixin: it uses ``forces``,
    ``coordinates``, ``simbody_index`` and ``sympy_converter``)."""

    @property
    def muscle_names(self) -> tuple:
        """The names of the muscles (and path actuators) whose path is built, file order."""
        return tuple(n for n, r in self.forces.items() if _path(r) is not None)

    def path_expressions(self) -> tuple:
        """``(L, A)``: lengths (muscles x 1) and moment arms (muscles x coordinates, model
        order) as SymPy expressions of the coordinates."""
        conv = self.sympy_converter
        rows_L, rows_A = [], []
        for name in self.muscle_names:
            p = _path(self.forces[name])
            rows_L.append([conv(p.length)])
            rows_A.append([-conv(p.jacobian[k]) for k in self.simbody_index])
        n = len(self.coordinates)
        L = sm.Matrix(rows_L) if rows_L else sm.zeros(0, 1)
        A = sm.Matrix(rows_A) if rows_A else sm.zeros(0, n)
        return L, A

    @cached_property
    def _path_function(self):
        """[L; A] in the model's q: symengine's Lambdify (common subexpressions shared) of
        each muscle's row, one function per muscle (symengine's cse over several wrapped
        paths together does not finish)."""
        args = [self._se_q[k] for k in self.simbody_index]
        rows = []
        for name in self.muscle_names:
            p = _path(self.forces[name])
            exprs = [p.length] + [-p.jacobian[k] for k in self.simbody_index]
            rows.append(se.Lambdify(args, exprs, cse=True, real=True, backend="lambda"))

        def evaluate(q):
            return np.concatenate([np.asarray(f(q), dtype=float).ravel() for f in rows]
                                  or [np.zeros(1)])

        return evaluate

    def _paths_at(self, q: Any) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if q.shape[-1:] != (len(self.coordinates),):
            raise InputError(f"q must end in the model's {len(self.coordinates)} coordinates, "
                             f"got shape {q.shape}")
        flat = q.reshape(-1, q.shape[-1])
        f = self._path_function
        out = np.array([np.asarray(f(row), dtype=float).ravel() for row in flat])
        m, n = len(self.muscle_names), len(self.coordinates)
        return out[:, :m * (n + 1)].reshape(q.shape[:-1] + (m, n + 1))

    def musculotendon_lengths(self, q: Any) -> np.ndarray:
        """L(q): the path length of each muscle (m), ``muscle_names`` order; q (N,) in the
        model's order gives (muscles,), q (k, N) gives (k, muscles)."""
        return self._paths_at(q)[..., 0]

    def moment_arms(self, q: Any) -> np.ndarray:
        """-∂L/∂q (muscles x coordinates, m or m/rad), OpenSim's sign; q (N,) or (k, N)."""
        return self._paths_at(q)[..., 1:]


def _path(record):
    return getattr(record, "path", None)
