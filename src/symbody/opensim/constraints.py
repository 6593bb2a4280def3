"""OpenSim's constraints and coordinate flags as holonomic constraints f_h(q, t) = 0.

- ``CoordinateCouplerConstraint``: s f(q_independent) - q_dependent = 0 (OpenSim's form), the
  named coordinate dependent;
- ``PointConstraint``: p_1 - p_2 = 0 (3 rows, ground coordinates), the points fixed in the two
  bodies;
- ``WeldConstraint``: the origins coincide (3 rows) and the frames are aligned: the skew part
  of R = R_1ᵀ R_2 vanishes, (R_32 - R_23, R_13 - R_31, R_21 - R_12)/2 = 0 (3 rows);
- a ``locked`` coordinate: q - q_default = 0 (as OpenSim's lock, which holds the default
  value); a ``prescribed`` one: q - f(t) = 0.

A ``clamped`` coordinate is unconstrained: OpenSim's ``clamped`` keeps the values set through
``Coordinate.setValue`` and the assembly/inverse kinematics within the range, and adds no
force or constraint to the equations of motion (a CoordinateLimitForce does that).

The dependent coordinates of point, point-on-line and weld constraints are chosen by pivoted
QR of the constraint Jacobian at the default configuration, first among the coordinates whose
own speed moves them alone (:func:`paired_coordinates`: those with q' = u and a Ball or Free
joint's first angle, where B's column equals the Jacobian's), then, where those do not
suffice, among the others (a Ball or Free joint's second and third angles, q' = N(q) u) when
their speeds give B a regular dependent block there too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import symengine as se

from ..dependent_columns import pivot_columns
from ..errors import InputError
from .mobilizers import matmul, matvec, num, transpose
from .model_spec import ConstraintSpec, CoordinateSpec

__all__ = ["HolonomicRow", "constraint_rows", "coordinate_rows", "choose_dependents",
           "constraint_blocks", "velocity_jacobian", "point_on_line_rows",
           "simbody_perpendiculars", "paired_coordinates"]


@dataclass
class HolonomicRow:
    """One row f(q, t) = 0 (symengine), its ``name`` and the dependent coordinate it fixes
    (None: chosen later by pivoting)."""

    expr: object
    name: str
    dependent: str | None


def coordinate_rows(coords: list[CoordinateSpec], sym: dict, t: se.Symbol) -> list:
    """Rows of the locked and prescribed coordinates."""
    rows = []
    for c in coords:
        if c.prescribed and c.prescribed_function is not None:
            f = c.prescribed_function
            rows.append(HolonomicRow(sym[c.name] - f.expression([t] * max(f.nargs, 1)),
                                     f"prescribed {c.name}", c.name))
        elif c.locked:
            rows.append(HolonomicRow(sym[c.name] - num(c.default_value), f"locked {c.name}",
                                     c.name))
    return rows


def constraint_rows(constraints: list[ConstraintSpec], sym: dict, kin, t: se.Symbol) -> list:
    """Rows of the enforced constraints (``sym``: coordinate name -> symengine symbol;
    ``kin``: the model's :class:`~.kinematics.TreeKinematics`)."""
    rows = []
    for c in constraints:
        if not c.enforced:
            continue
        d = c.data
        label = c.name or f"{c.type} (line {c.element.line})"     # (unnamed in some files)
        if c.type == "CoordinateCouplerConstraint":
            for name in (*d["independent"], d["dependent"]):
                if name not in sym:
                    raise c.element.error(f"names the coordinate {name!r}, which is not in "
                                          "the model")
            f = d["function"]
            args = [sym[n] for n in d["independent"]]
            value = f.expression(args if f.nargs else [])
            rows.append(HolonomicRow(num(d["scale"]) * value - sym[d["dependent"]],
                                     f"{label} (coupler)", d["dependent"]))
        elif c.type == "PointConstraint":
            p1 = kin.point(d["frame1"].body, d["point1"])
            p2 = kin.point(d["frame2"].body, d["point2"])
            for k, axis in enumerate("xyz"):
                rows.append(HolonomicRow(p1[k] - p2[k], f"{label} ({axis})", None))
        elif c.type == "PointOnLineConstraint":
            rows += point_on_line_rows(label, d, kin)
        elif c.type == "WeldConstraint":
            f1, f2 = d["frame1"], d["frame2"]
            p1 = kin.point(f1.body, f1.p)
            p2 = kin.point(f2.body, f2.p)
            for k, axis in enumerate("xyz"):
                rows.append(HolonomicRow(p1[k] - p2[k], f"{label} (position {axis})", None))
            R1 = matmul(kin.pose(f1.body)[0], [[num(v) for v in r] for r in f1.R])
            R2 = matmul(kin.pose(f2.body)[0], [[num(v) for v in r] for r in f2.R])
            Rr = matmul(transpose(R1), R2)
            half = se.Rational(1, 2)
            for k, (i, j) in enumerate(((2, 1), (0, 2), (1, 0))):
                rows.append(HolonomicRow(half * (Rr[i][j] - Rr[j][i]),
                                         f"{label} (rotation {'xyz'[k]})", None))
    return rows


def simbody_perpendiculars(d: np.ndarray) -> tuple:
    """Simbody's axes x, y across the unit line direction d (``Rotation(d, ZAxis)``):
    x = d × e_k with e_k the axis of d's smallest |component| (the first of equal ones),
    normalized (``UnitVec3::perp``), and y = d × x."""
    a = np.abs(d)
    k = (0 if a[0] <= a[2] else 2) if a[0] <= a[1] else (1 if a[1] <= a[2] else 2)
    x = np.cross(d, np.eye(3)[k])
    x /= np.linalg.norm(x)
    return x, np.cross(d, x)


def point_on_line_rows(name: str, d: dict, kin) -> list:
    """A PointOnLineConstraint's 2 rows (Simbody's ``Constraint::PointOnLine``): the follower
    point S, in the line body B's frame, off the line through P along the unit d,
    x·(p_BS - p_BP) = 0 and y·(p_BS - p_BP) = 0 with Simbody's x, y across d."""
    R, p = kin.relative_pose(d["follower_body"], d["line_body"])
    s = [num(v) for v in d["point_on_follower"]]
    offset = [a - num(b) for a, b in zip(matvec(R, s), d["point_on_line"])]
    offset = [a + b for a, b in zip(offset, p)]
    rows = []
    for axis, label in zip(simbody_perpendiculars(np.asarray(d["direction"], dtype=float)),
                           "xy"):
        expr = se.Integer(0)
        for k in range(3):
            if axis[k] != 0:
                expr = expr + num(axis[k]) * offset[k]
        rows.append(HolonomicRow(expr, f"{name} ({label})", None))
    return rows


def paired_coordinates(names: list, q: list, u: list, qdot: list) -> set:
    """The names of the coordinates q_k whose own speed u_k moves q_k alone, at unit rate:
    ∂q'/∂u_k = e_k (q' = N(q) u with ``qdot`` symengine, in the order of ``names``).  Then
    B's column of u_k is ∂f_h/∂q_k: a constraint's dependent coordinates and their speeds
    are regular together.  Every coordinate with q' = u is one, and so is a Ball or Free
    joint's first angle (X of its X-Y-Z angles: ω = e_x q_x' when the others stand still),
    not its second and third (whose rates take the other angular speeds as well:
    :func:`choose_dependents` takes them only where the paired ones do not suffice)."""
    out = set()
    for k, name in enumerate(names):
        if all(qdot[i].diff(u[k]) == (1 if i == k else 0) for i in range(len(q))):
            out.add(name)
    return out


def choose_dependents(rows: list[HolonomicRow], names: list, symbols: list, eligible: set,
                      q0: np.ndarray, where: str, speed_map=None) -> list:
    """The dependent coordinate of every row: the row's own where it names one, else the
    best-conditioned columns of the Jacobian J at q0 (column-pivoted QR), among the
    ``eligible`` names first (:func:`paired_coordinates`).  Where those do not reach the
    rows' rank, the others complete the set when ``speed_map()`` (∂q'/∂u at q0, N x N,
    the order of ``names``) is given and the dependent speeds (those of the chosen
    coordinates) are regular too: B = J ∂q'/∂u has a regular dependent block at q0."""
    taken: list = []
    for r in rows:
        if r.dependent is not None:
            if r.dependent in taken:
                raise InputError(f"{where}: the coordinate {r.dependent!r} is fixed by two "
                                 "constraints (locked, prescribed or coupled twice)")
            taken.append(r.dependent)
    free_rows = [r for r in rows if r.dependent is None]
    if not free_rows:
        return [r.dependent for r in rows]
    k = len(free_rows)
    cand = [i for i, n in enumerate(names) if n not in taken]
    subs = dict(zip(symbols, [se.RealDouble(float(v)) for v in q0]))
    J = np.zeros((k, len(names)))
    for a, r in enumerate(free_rows):
        expr = se.sympify(r.expr)
        for i in cand:
            J[a, i] = float(expr.diff(symbols[i]).subs(subs))
    scale = max(float(np.abs(J).max()), 1e-300)
    paired = [i for i in cand if names[i] in eligible]
    cols, norms = pivot_columns(J[:, paired], k) if paired else ([], [])
    chosen = [paired[c] for c, v in zip(cols, norms) if v >= 1e-9 * scale]
    if len(chosen) < k and speed_map is not None:
        cols, norms = pivot_columns(J[:, cand], k, first=[cand.index(i) for i in chosen])
        if len(cols) == k and min(norms) >= 1e-9 * scale:
            B = J @ np.asarray(speed_map(), dtype=float)
            sv = np.linalg.svd(B[:, [cand[c] for c in cols]], compute_uv=False)
            if sv[-1] >= 1e-9 * max(float(np.abs(B).max()), 1e-300):
                chosen = [cand[c] for c in cols]
    if len(chosen) < k:
        raise InputError(f"{where}: the constraints {', '.join(r.name for r in free_rows)} are "
                         "redundant at the default configuration, or no set of dependent "
                         "coordinates and of their speeds is regular there")
    it = iter(names[i] for i in chosen)
    return [r.dependent if r.dependent is not None else next(it) for r in rows]


def velocity_jacobian(rows: list, qdot: list, q: list, u: list) -> list:
    """B(q) of the rows' velocity constraints B u + b = 0 (symengine, len(rows) x len(u)):
    B = ∂f_h/∂q ∂q'/∂u (``q``, ``u``: symengine symbols; ``qdot``: q'(q, u))."""
    ZERO = se.Integer(0)
    out = []
    for r in rows:
        grad = [r.expr.diff(qk) for qk in q]
        Brow = []
        for j in range(len(u)):
            acc = ZERO
            for i in range(len(q)):
                if grad[i] != 0:
                    d = qdot[i].diff(u[j])
                    if d != 0:
                        acc = acc + grad[i] * d
            Brow.append(acc)
        out.append(Brow)
    return out


def constraint_blocks(rows: list, conv, qdot: list, q: list, u: list, t) -> tuple:
    """(f_h, B, b, B_a, b_a) as SymPy matrices (``conv``: symengine -> SymPy) of the rows in
    the model's order (``q``, ``u``: symengine symbols; ``qdot``: q'(q, u)):

        B u + b = d f_h/dt = ∂f_h/∂q N(q) u + ∂f_h/∂t,
        B u' + b_a = d/dt (B u + b) at u' = 0 = Σ_k ∂(B u + b)/∂q_k q_k' + ∂(B u + b)/∂t.
    """
    import sympy as sm

    o = len(u)
    if not rows:
        return (sm.zeros(0, 1), sm.zeros(0, o), sm.zeros(0, 1), sm.zeros(0, o), sm.zeros(0, 1))
    f_h, B, b, b_a = [], [], [], []
    for r, Brow in zip(rows, velocity_jacobian(rows, qdot, q, u)):
        brow = r.expr.diff(t)
        vel = brow
        for j in range(o):
            if Brow[j] != 0:
                vel = vel + Brow[j] * u[j]
        acc_rest = vel.diff(t)
        for i in range(o):
            d = vel.diff(q[i])
            if d != 0:
                acc_rest = acc_rest + d * qdot[i]
        f_h.append(conv(r.expr))
        B.append([conv(e) for e in Brow])
        b.append(conv(brow))
        b_a.append(conv(acc_rest))
    Bm = sm.Matrix(B)
    return (sm.Matrix(len(f_h), 1, f_h), Bm, sm.Matrix(len(b), 1, b), Bm.copy(),
            sm.Matrix(len(b_a), 1, b_a))
