"""What the symbolic linearizer reads: the equations of motion as public, frozen data.

SymPy's ``Linearizer`` is built by ``KanesMethod.to_linearizer()`` /
``LagrangesMethod.to_linearizer()``; symbody's linearizer
(:mod:`symbody.formulation.symbolic_linearization`) reads one of the two data classes
here instead, which the formulation classes make with their public
``to_linearizer_data()`` (and which can be made from an :class:`EquationsOfMotion` or
from SymPy's own method objects).  This module imports nothing from the formulation
classes, so the dependency goes one way: methods -> data <- linearizer.

Kane's conventions (N coordinates q = [q_ind (n), q_dep (M)], o speeds
u = [u_ind (p), u_dep (m)])::

    q' = qdot(q, u, t)                          kinematics             (N)
    f_h(q, t) = 0                               configuration          (M)
    B(q, t) u + b(q, t) = 0                     velocity constraints   (m)
    B_a(q, t) u' + b_a(q, u, t) = 0             acceleration constr.   (m)
    M_d(q, t) u' + g_d(q, u, r, t) = 0          dynamic equations      (o, or o - m reduced)

Lagrange's conventions (speeds u = q', multipliers lam, k constraints)::

    coneqs(q, q', t) = 0                        [d/dt hol_coneqs; nonholonomic]   (k)
    m_d q'' - f_d - lam_coeffs^T lam = 0                                          (N)
    m_cd q'' - f_cd = 0                         d/dt coneqs                       (k)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy as sm

__all__ = ["KaneLinearizationData", "LagrangeLinearizationData"]


@dataclass(frozen=True, kw_only=True)
class KaneLinearizationData:
    """Kane-form equations of motion for :func:`~.symbolic_linearization.linearize_kane`.

    ``q_ind`` (n), ``q_dep`` (M), ``u_ind`` (p), ``u_dep`` (m), ``u_aux``: tuples of
    functions of time (auxiliary speeds are zero in the motion and excluded from the
    inputs).  ``qdot`` (N x 1): q' in terms of q, u, t.  ``holonomic`` (M x 1): f_h.
    ``velocity_matrix`` (m x o) and ``velocity_rest`` (m x 1): B, b.
    ``acceleration_matrix`` (m x o) and ``acceleration_rest`` (m x 1): B_a, b_a.
    ``dynamic_mass`` and ``dynamic_rest``: M_d (rows x columns) and g_d (rows x 1); the
    rows are o (unreduced: every speed treated as independent) or o - m
    (``dynamic_reduced``: reduced to the independent speeds, with p or o columns).
    """

    q_ind: tuple
    q_dep: tuple
    u_ind: tuple
    u_dep: tuple
    u_aux: tuple
    qdot: sm.MatrixBase
    holonomic: sm.MatrixBase
    velocity_matrix: sm.MatrixBase
    velocity_rest: sm.MatrixBase
    acceleration_matrix: sm.MatrixBase
    acceleration_rest: sm.MatrixBase
    dynamic_mass: sm.MatrixBase
    dynamic_rest: sm.MatrixBase
    dynamic_reduced: bool

    @property
    def q(self) -> tuple:
        """All coordinates, [q_ind, q_dep] (N)."""
        return self.q_ind + self.q_dep

    @property
    def u(self) -> tuple:
        """All speeds, [u_ind, u_dep] (o)."""
        return self.u_ind + self.u_dep

    @classmethod
    def from_eom(cls, eom: Any) -> KaneLinearizationData:
        """The data of an :class:`~symbody.EquationsOfMotion` (its public blocks, as they are)."""
        return cls(q_ind=tuple(eom.q_ind), q_dep=tuple(eom.q_dep), u_ind=tuple(eom.u_ind),
                   u_dep=tuple(eom.u_dep), u_aux=tuple(eom.u_aux), qdot=eom.qdot_solution,
                   holonomic=eom.holonomic, velocity_matrix=eom.velocity_matrix,
                   velocity_rest=eom.velocity_rest, acceleration_matrix=eom.acceleration_matrix,
                   acceleration_rest=eom.acceleration_rest, dynamic_mass=eom.dynamic_mass,
                   dynamic_rest=eom.dynamic_rest, dynamic_reduced=bool(eom.dynamic_reduced))


@dataclass(frozen=True, kw_only=True)
class LagrangeLinearizationData:
    """Lagrange-form equations of motion for :func:`~.symbolic_linearization.linearize_lagrange`.

    ``q`` (N): the coordinates (the speeds are q').  ``hol_coneqs`` (M x 1): the
    configuration constraints; ``coneqs`` (k x 1): the velocity-level constraints
    [d/dt hol_coneqs; nonholonomic], linear in q'; ``lam_vec`` (k): their multipliers;
    ``lam_coeffs`` (k x N).  ``m_d`` (N x N), ``f_d`` (N x 1): the dynamic equations
    m_d q'' - f_d - lam_coeffs^T lam = 0; ``m_cd`` (k x N), ``f_cd`` (k x 1): the
    differentiated constraints m_cd q'' - f_cd = 0.
    """

    q: tuple
    hol_coneqs: sm.MatrixBase
    coneqs: sm.MatrixBase
    lam_vec: tuple
    lam_coeffs: sm.MatrixBase
    m_d: sm.MatrixBase
    f_d: sm.MatrixBase
    m_cd: sm.MatrixBase
    f_cd: sm.MatrixBase
