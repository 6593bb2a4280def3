"""The joint-torque regressor: tau = M(q) u' + C(q, u) u + g(q) = Y(q, u, u') pi.

With ``symbolic_inertia=True`` every body's 10 standard inertial parameters (Pinocchio's
order: m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz, the inertia about the
body origin, body axes) are symbols, and the rigid-body generalized forces are linear in
them: column k of Y is d tau / d pi_k (symengine derivatives of the tree's expressions;
the URDF damping and friction are not part of it).  Rows are the model's speeds
(``robot.speeds``: o of them, the dependent ones included), columns the bodies in tree
order, 10 each (the fixed root's are left out, as in Pinocchio's
``computeJointTorqueRegressor``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm

from ..errors import InputError

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["Regressor", "regressor"]


class Regressor:
    """Y(q, u, u') (o x P) with tau = Y pi.

    ``parameters``: the P symbols pi; ``values``: their values from the file (P,);
    ``matrix()``: Y as a SymPy Matrix (converted on request); ``robot(q, u, udot)``: Y at
    one state as a numpy array (o, P), compiled on first use (q: N coordinates, u and udot:
    all o speeds and their derivatives, in the model's order).
    """

    def __init__(self, robot: Robot, rows: list, names: dict) -> None:
        self.robot = robot
        self.parameters = tuple(robot.parameters)
        self.values = np.array([robot.constants[p] for p in self.parameters])
        self.rows = rows
        self._names = names
        self._kernel = None

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.parameters)

    def matrix(self) -> sm.Matrix:
        """Y as a SymPy Matrix in q, u, u' (dynamicsymbols) and g."""
        from ..symengine_bridge import SympyConverter
        conv = SympyConverter(self._names)
        return sm.Matrix([[conv(e) for e in row] for row in self.rows])

    def __call__(self, q: Any, u: Any, udot: Any, g: float | None = None) -> np.ndarray:
        """Y at (q, u, u') (o x P); ``g``: gravity's magnitude (default: the file's)."""
        from ..compilation.codegen import compile_kernel
        r = self.robot
        if self._kernel is None:
            args = [*r.coordinates, *r.speeds, *(s.diff(r.eom.t) for s in r.speeds), r.g]
            flat = [e for row in self.rows for e in row]
            self._kernel = compile_kernel(args, flat, name="regressor",
                                          symengine_names=self._names)
        N, o = len(r.coordinates), len(r.speeds)
        q, u, udot = (np.asarray(a, dtype=float).ravel() for a in (q, u, udot))
        if q.shape != (N,) or u.shape != (o,) or udot.shape != (o,):
            raise InputError(f"regressor: expected q ({N},), u ({o},), udot ({o},); got "
                             f"{q.shape}, {u.shape}, {udot.shape}")
        gv = r.constants[r.g] if g is None else float(g)
        z = np.concatenate([q, u, udot, [gv]])
        return np.asarray(self._kernel(z)).reshape(self.shape)


def regressor(robot: Robot) -> Regressor:
    """The regressor of a robot loaded with ``symbolic_inertia=True``."""
    if not robot.symbolic_inertia:
        raise InputError("robot.regressor() needs the inertial parameters as symbols: load the "
                         "robot with load_urdf(..., symbolic_inertia=True)")
    dyn = robot.tree_dynamics
    qs, us, udots, _ = robot.symengine_symbols
    o = len(us)
    tau = [dyn.bias[i] + sum((dyn.mass[i][j] * udots[j] for j in range(o) if dyn.mass[i][j] != 0),
                             se.Integer(0)) for i in range(o)]
    perm = robot.speed_permutation
    params = [se.Symbol(p.name) for p in robot.parameters]
    rows = [[se.diff(tau[a], p) for p in params] for a in perm]
    names = dict(robot.eom.symengine_dynamics().names)
    return Regressor(robot, rows, names)
