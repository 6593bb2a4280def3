"""Muscle-tendon lengths and moment arms of an OpenSim model's muscles, compiled.

For muscle m with path length L_m(q) and L_m' = J_m(q) u (:mod:`.forces.geometry_path`),

    musculotendon_lengths(q)[m] = L_m(q)
    moment_arms(q)[m, k]        = -J_m(q) c_k(q)

OpenSim's ``computeMomentArm`` (its ``MomentArmSolver``): the generalized force of a unit
tension along the speeds c_k that the constraints let follow a unit speed of coordinate k,

    c_k = P e_k / (P e_k)_k,    P = I - Bᵀ (B Bᵀ)⁺ B,

with B(q) the velocity constraints' Jacobian (B u + b = 0) without coordinate k's own lock
(OpenSim unlocks the coordinate of interest).  Without constraints c_k = e_k and the moment
arm is -∂L_m/∂q_k (positive when the tension drives q_k up); for a coordinate that drives
others through CoordinateCouplerConstraints (a knee's patella or translations) it is the
total derivative -dL_m/dq_k along the couplers; for a dependent coordinate of a coupler
q_d = f(q_i), c_d = (1/f'(q_i), 1) (NaN where f' = 0: OpenSim's 0/0).  With closed loops
(point and weld constraints), OpenSim's projection weighs the speeds by Simbody's scales
where P weighs them equally.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import symengine as se
import sympy as sm

from ..errors import InputError
from ..formatting import symbol_name
from .constraints import velocity_jacobian

__all__ = ["MuscleViews"]


class MuscleViews:
    """The muscle views of :class:`~.model.OpenSimModel` (a mixin: it uses ``forces``,
    ``coordinates``, ``simbody_index``, ``sympy_converter`` and the constraints)."""

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

    @property
    def input_names(self) -> tuple:
        """The names of the specified inputs a user gives (``eom.specifieds`` without the
        ellipsoid paths' stations, which the model computes from q: ``path_parameters``)."""
        derived = set(self._derived_indices())
        return tuple(symbol_name(f) for i, f in enumerate(self.eom.specifieds)
                     if i not in derived)

    def _derived_indices(self) -> tuple:
        pp = getattr(self, "path_parameters", None)
        return () if pp is None else pp.indices

    def specified_values(self, q: Any, r: Any = None) -> np.ndarray:
        """The values of ``eom.specifieds`` at coordinates q (model order): r for the inputs
        of ``input_names`` (in that order; default zeros) and the ellipsoid paths' stations
        (``path_parameters``) computed from q, as the simulation computes them."""
        derived = self._derived_indices()
        s = len(self.eom.specifieds)
        user = [i for i in range(s) if i not in set(derived)]
        out = np.zeros(s)
        if r is not None:
            r = np.asarray(r, dtype=float).ravel()
            if r.shape != (len(user),):
                raise InputError(f"r must have the model's {len(user)} specified inputs "
                                 f"(input_names), got shape {r.shape}")
            out[user] = r
        if derived:
            out[list(derived)] = self.path_parameters.values(q)
        return out

    @cached_property
    def _path_function(self):
        """[L; A] in the model's q: symengine's Lambdify (common subexpressions shared) of
        each muscle's row, one function per muscle (symengine's cse over several wrapped
        paths together does not finish); over an ellipsoid, in the path parameters too,
        computed from q first."""
        pp = getattr(self, "path_parameters", None)
        args = [self._se_q[k] for k in self.simbody_index] + list(pp.symbols if pp else ())
        rows = []
        for name in self.muscle_names:
            p = _path(self.forces[name])
            exprs = [p.length] + [-p.jacobian[k] for k in self.simbody_index]
            rows.append(se.Lambdify(args, exprs, cse=True, real=True, backend="lambda"))

        def evaluate(q):
            if pp is not None:
                q = np.concatenate([q, pp.values(q)])
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
        """OpenSim's moment arms (``computeMomentArm``; muscles x coordinates, m or m/rad):
        -dL/dq_k with the coordinates coupled to q_k by the constraints following it (the
        module's docstring); -∂L/∂q_k in a model without constraints.  q (N,) or (k, N), the
        model's order, on the constraints (``numeric_model.project_coordinates``)."""
        q = np.asarray(q, dtype=float)
        partial = self._paths_at(q)[..., 1:]
        if not self._holonomic:
            return partial
        flat_q = q.reshape(-1, q.shape[-1])
        flat_A = partial.reshape((-1,) + partial.shape[-2:])
        out = np.array([A @ self.coupling_matrix(qk) for A, qk in zip(flat_A, flat_q)])
        return out.reshape(partial.shape)

    def coupling_matrix(self, q: Any) -> np.ndarray:
        """C (N x N, model order): column k is c_k, the speeds the constraints make follow a
        unit speed of coordinate k (OpenSim's ``MomentArmSolver`` coupling vector; the
        module's docstring), at q (N,)."""
        q = np.asarray(q, dtype=float)
        if q.shape != (len(self.coordinates),):
            raise InputError(f"q must have the model's {len(self.coordinates)} coordinates, "
                             f"got shape {q.shape}")
        n = len(self.coordinates)
        if not self._holonomic:
            return np.eye(n)
        B = np.asarray(self._velocity_jacobian_function(q), dtype=float).reshape(-1, n)
        own = self._own_rows
        C = np.empty((n, n))
        cache: dict = {}
        for k in range(n):
            rows = tuple(i for i in range(B.shape[0]) if i not in own.get(k, ()))
            if rows not in cache:
                cache[rows] = _null_basis(B[list(rows)], n)
            N = cache[rows]
            # P = N Nᵀ projects onto the null space: P[:, k] / P[k, k], with P[k, k] = |N_k|²
            # summed, not 1 - |V_k|² (which cancels where a coupler barely moves coordinate k:
            # a flat patella spline gives P[k, k] ~ 1e-13); NaN only where it is 0 / 0
            d = float(N[k] @ N[k])
            C[:, k] = N @ N[k] / d if d > 1e-24 else np.nan
            if d > 1e-24:
                C[k, k] = 1.0
        return C

    @cached_property
    def _own_rows(self) -> dict:
        """{model index k: the rows that lock or prescribe coordinate k}."""
        names = list(self.coordinate_names)
        out: dict = {}
        for i, r in enumerate(self._holonomic):
            if r.dependent is not None and r.name.startswith(("locked ", "prescribed ")):
                out.setdefault(names.index(r.dependent), []).append(i)
        return out

    @cached_property
    def _velocity_jacobian_function(self):
        """B(q) (rows x N, model order, flattened) of the constraints, symengine Lambdify."""
        perm = self.simbody_index
        q = [self._se_q[k] for k in perm]
        u = [self._se_u[k] for k in perm]
        qdot = [self._qdot_tree[k] for k in perm]
        B = velocity_jacobian(self._holonomic, qdot, q, u)
        return se.Lambdify(q, [e for row in B for e in row], cse=True, real=True,
                           backend="lambda")


def _null_basis(B: np.ndarray, n: int) -> np.ndarray:
    """N (n x (n - rank B)): an orthonormal basis of B's null space (N Nᵀ = I - Bᵀ (B Bᵀ)⁺ B,
    the orthogonal projector onto it), from the SVD."""
    if B.shape[0] == 0:
        return np.eye(n)
    _, s, Vt = np.linalg.svd(B, full_matrices=True)
    rank = int(np.sum(s > max(B.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0)))
    return Vt[rank:].T


def _path(record):
    return getattr(record, "path", None)
