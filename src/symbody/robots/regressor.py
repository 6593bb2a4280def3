"""The joint-torque regressor: tau = M(q) u' + C(q, u) u + g(q) = Y(q, u, u') pi.

With ``symbolic_inertia=True`` every body's 10 standard inertial parameters (Pinocchio's
order: m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz, the inertia about the
body origin, body axes) are symbols, and the rigid-body generalized forces are linear in
them: Y is formed by the structure of Newton-Euler (:func:`regressor_rows`; the URDF
damping and friction are not part of it).  Rows are the model's speeds
(``robot.speeds``: o of them, the dependent ones included), columns the bodies in tree
order, 10 each (the fixed root's are left out, as in Pinocchio's
``computeJointTorqueRegressor``).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm

from ..errors import InputError
from .dynamics import (
    Inertia,
    _add,
    _cross,
    _dot,
    _Joint,
    _mtv,
    _scale,
    num,
    quaternion_matrix,
)

if TYPE_CHECKING:
    from .functions import RobotFunction
    from .robot import Robot

__all__ = ["Regressor", "regressor"]


class Regressor:
    """Y(q, u, u') (o x P) with tau = Y pi.

    ``parameters``: the P symbols pi; ``values``: their values from the file (P,);
    ``matrix()``: Y as a SymPy Matrix (converted on request); ``regressor(q, u, udot)``: Y at
    one state as a numpy array (o, P), or at k states (k, o, P) (q: N coordinates, u and
    udot: all o speeds and their derivatives, in the model's order); ``function``: the same
    as a compiled :class:`~.functions.RobotFunction` (one C kernel of every entry, called
    straight from a preallocated argument vector for one state; ``sb.to_casadi`` and
    ``sb.export_c`` take it).
    """

    def __init__(self, robot: Robot, rows: list, names: dict) -> None:
        self.robot = robot
        self.parameters = tuple(robot.parameters)
        self.values = np.array([robot.constants[p] for p in self.parameters])
        self.rows = rows
        self._names = names

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.parameters)

    def matrix(self) -> sm.Matrix:
        """Y as a SymPy Matrix in q, u, u' (dynamicsymbols) and g."""
        from ..symengine_bridge import SympyConverter
        conv = SympyConverter(self._names)
        return sm.Matrix([[conv(e) for e in row] for row in self.rows])

    @cached_property
    def function(self) -> RobotFunction:
        """``Y = function(q, u, u_dot, p=None)`` (o, P), compiled on first use (the
        constants p: ``robot.constants`` unless given; Y depends on gravity's g only)."""
        flat = [e for row in self.rows for e in row]
        # (the robot's cache of compiled functions: one regressor kernel per robot)
        return self.robot._function(("regressor",), ("q", "u", "u_dot", "p"),  # noqa: SLF001
                                    lambda: (flat, self.shape))

    def __call__(self, q: Any, u: Any, udot: Any, g: float | None = None) -> np.ndarray:
        """Y at (q, u, u') (o x P; (k, o, P) for k states); ``g``: gravity's magnitude
        (default: the file's)."""
        f = self.function
        if g is None:
            return f(q, u, udot)
        r = self.robot
        p = f.constants.copy()
        p[list(r.eom.constants).index(r.g)] = float(g)
        return f(q, u, udot, p=p)


def regressor(robot: Robot) -> Regressor:
    """The regressor of a robot loaded with ``symbolic_inertia=True``."""
    if not robot.symbolic_inertia:
        raise InputError("robot.regressor() needs the inertial parameters as symbols: load the "
                         "robot with load_urdf(..., symbolic_inertia=True)")
    if robot.tree_layout.multi_dof:
        raise InputError("robot.regressor(): a robot with planar or floating joints in its tree "
                         "is not supported (the regressor's recursion takes one-speed joints)")
    qs, us, udots, _ = robot.symengine_symbols
    gdir = robot.gravity_direction
    if robot.floating_base:         # in the frame of the free-flyer's coordinates
        gdir = robot.tree.base_placement[0].T @ gdir
    gravity = tuple(num(x) * se.Symbol("g") for x in gdir)
    rows = regressor_rows(robot.tree, qs, us, udots, gravity, robot.floating_base)
    rows = [rows[a] for a in robot.speed_permutation]
    names = dict(robot.eom.symengine_dynamics().names)
    return Regressor(robot, rows, names)


def _unit_inertias() -> list:
    """The 10 inertias with one standard parameter 1 and the others 0 (Pinocchio's order)."""
    z, one = se.Integer(0), se.Integer(1)
    out = []
    for k in range(10):
        e = [z] * 10
        e[k] = one
        m, hx, hy, hz, xx, xy, yy, xz, yz, zz = e
        out.append(Inertia(m, (hx, hy, hz), [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
    return out


def regressor_rows(tree, q: list, u: list, udot: list, gravity: tuple, floating: bool) -> list:
    """Y (o rows in tree order, 10 columns per body) by the structure of Newton-Euler.

    Body i's wrench f_i = I_i a_i + v_i x* I_i v_i is linear in its parameters: column k is
    the wrench of the unit inertia e_k; it acts on joint i and, carried by the joint
    transforms, on every ancestor j (row j: S_j^T X^T ... f).  v_i, a_i (with u' and
    gravity) come from one forward pass, shared by all columns (Atkeson, An & Hollerbach
    1986; Featherstone 2008, section 9.2).
    """
    bodies = tree.bodies
    nb = len(bodies)
    Z3 = (se.Integer(0),) * 3
    off, qoff = (6, 7) if floating else (0, 0)
    joints = [None] + [_Joint(bodies[i], q[qoff + i - 1]) for i in range(1, nb)]
    g = tuple(-x for x in gravity)
    if floating:
        R = quaternion_matrix(*q[3:7])
        V = [(tuple(u[3:6]), tuple(u[0:3]))]
        A = [(tuple(udot[3:6]), _add(tuple(udot[0:3]), _mtv(R, g)))]
    else:
        V, A = [(Z3, Z3)], [(Z3, g)]
    for i in range(1, nb):
        jt = joints[i]
        lam = bodies[i].parent
        w, v = jt.motion(*V[lam])
        aw, av = jt.motion(*A[lam])
        Sw, Sv = jt.subspace()
        ui, udi = u[off + i - 1], udot[off + i - 1]
        Sw_u, Sv_u = _scale(ui, Sw), _scale(ui, Sv)
        w, v = _add(w, Sw_u), _add(v, Sv_u)
        aw = _add(_add(aw, _scale(udi, Sw)), _cross(w, Sw_u))
        av = _add(_add(av, _scale(udi, Sv)), _add(_cross(w, Sv_u), _cross(v, Sw_u)))
        V.append((w, v))
        A.append((aw, av))
    o = off + nb - 1
    units = _unit_inertias()
    first = 0 if floating else 1
    rows = [[] for _ in range(o)]
    for i in range(first, nb):
        w, v = V[i]
        cols = []
        for Ik in units:
            na, fa = Ik.times(*A[i])
            nv, fv = Ik.times(w, v)
            cols.append((_add(na, _add(_cross(w, nv), _cross(v, fv))), _add(fa, _cross(w, fv))))
        # this body's columns: zero on rows not on its path to the root
        block = {r: [se.Integer(0)] * 10 for r in range(o)}
        for k, (n, f) in enumerate(cols):
            j = i
            while j > 0:
                Sw, Sv = joints[j].subspace()
                block[off + j - 1][k] = _dot(Sw, n) + _dot(Sv, f)
                n, f = joints[j].force(n, f)
                j = bodies[j].parent
            if floating:
                for r, e in enumerate((*f, *n)):
                    block[r][k] = e
        for r in range(o):
            rows[r].extend(block[r])
    return rows
