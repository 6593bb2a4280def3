"""What a zoo model is: formed equations plus default numbers and a drawing.

A :class:`Model` bundles an :class:`~symbody.EquationsOfMotion` with

- default values for every constant (``constants``: Symbol -> float),
- a consistent initial state (``initial_state``: Symbol -> float for every q
  and every independent speed; f_h(q) = 0 holds to < 1e-10),
- a time span, a :class:`Drawing` (points in the inertial frame and the lines
  through them), the total mechanical energy when it is conserved, and other
  named outputs (expressions in q, u and the constants).

Models are immutable; :meth:`Model.with_constants` returns a copy with other
numbers (and an initial state and operating point recomputed for them).

:class:`KaneSystem` is the recipe a model is formed from: the kinematics, the
constraints, bodies and loads, ready for any class with SymPy's KanesMethod
API (symbody's own by default; the tests also feed SymPy's to compare).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame

from ..compat.sympy import TIME
from ..compilation.named_values import finite_number
from ..errors import InputError
from ..formulation import EquationsOfMotion, KanesMethod
from ..scene import Scene

__all__ = ["Drawing", "Model", "KaneSystem", "point_coordinates", "solve_dependent_coordinates", "rotated_frame",
           "energy_fields"]

t = TIME


@dataclass(frozen=True)
class Drawing:
    """How to draw a model: named points and the polylines through them.

    ``points``: name -> 3x1 position (x, y, z) in the inertial frame, an
    expression in q and the constants.  ``lines``: polylines, each a list of
    point names.  ``traces``: points whose paths are drawn (wheel contacts).
    ``view``: "2d" (axes ``plane`` of x, y, z shown) or "3d".
    """

    points: dict[str, sm.Matrix]
    lines: list[list[str]]
    traces: Sequence[str] = ()
    view: str = "2d"
    plane: tuple[int, int] = (0, 1)

    def __post_init__(self) -> None:
        for line in self.lines:
            for name in line:
                if name not in self.points:
                    raise InputError(f"drawing line {line} goes through the unknown point {name!r}; "
                                     f"known points: {sorted(self.points)}")
        for name in self.traces:
            if name not in self.points:
                raise InputError(f"drawing trace {name!r} is not a point of the drawing; "
                                 f"known points: {sorted(self.points)}")
        if self.view not in ("2d", "3d"):
            raise InputError(f"drawing view must be '2d' or '3d', got {self.view!r}")


@dataclass(frozen=True)
class Model:
    """A ready-to-simulate model of the zoo (see the module docstring).

    ``initial_state_rule`` (optional): constant values (Symbol -> float) ->
    initial state; used by :meth:`with_constants` to keep the state consistent
    (e.g. the four-bar's dependent angles depend on the bar lengths).
    ``operating_point_rule`` (optional): (op_parameters, constant values) ->
    {Symbol: value} for q and u; ``operating_point`` is this rule bound to the
    model's constants.  ``scene``: what the 3D viewer draws (a
    :class:`~symbody.presentation.Scene` of shapes on the model's frames and
    points; made from the drawing when not given).
    """

    name: str
    description: str
    eom: EquationsOfMotion
    method: object | None
    constants: dict
    initial_state: dict
    t_span: tuple[float, float]
    drawing: Drawing
    energy: sm.Expr | None = None
    outputs: dict[str, sm.Expr] = field(default_factory=dict)
    op_parameters: dict[str, float] = field(default_factory=dict)
    operating_point: Callable[[dict], dict] | None = None
    references: str = ""
    initial_state_rule: Callable[[dict], dict] | None = None
    operating_point_rule: Callable[[dict, dict], dict] | None = None
    #: events the model needs (impacts of walking models): symbody.Event objects for
    #: ``simulate(..., events=model.events)``
    events: tuple = ()
    scene: Scene | None = None
    #: holonomic equations (name -> expression in q and the constants, = 0 in the motion) left
    #: out of the formed equations because they depend on the kept ones (e.g. the Bricard
    #: loop's sixth closure equation)
    redundant_constraints: dict[str, sm.Expr] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.scene is None:
            object.__setattr__(self, "scene", Scene.from_drawing(self.drawing, name=self.name))
        if self.events:         # the equations say they need them (export_c/export_fmu read it)
            self.eom.events = tuple(self.events)

    @classmethod
    def create(cls, *, constants: dict, initial_state_rule: Callable[[dict], dict] | None = None,
               initial_state: dict | None = None,
               operating_point_rule: Callable[[dict, dict], dict] | None = None,
               **fields: Any) -> Model:
        """Build a model, evaluating the rules for the given constants."""
        constants = {s: float(v) for s, v in constants.items()}
        if initial_state is None:
            if initial_state_rule is None:
                raise InputError("a model needs an initial_state or an initial_state_rule")
            initial_state = initial_state_rule(dict(constants))
        op = None
        if operating_point_rule is not None:
            op = _bind_operating_point(operating_point_rule, constants)
        return cls(constants=constants, initial_state=dict(initial_state),
                   initial_state_rule=initial_state_rule, operating_point_rule=operating_point_rule,
                   operating_point=fields.pop("operating_point", None) or op, **fields)

    # ------------------------------------------------------------- queries
    def constant(self, name: str) -> sm.Symbol:
        """The constant Symbol called ``name`` (InputError listing the known names otherwise)."""
        for s in self.constants:
            if str(s) == name:
                return s
        raise InputError(f"{self.name} has no constant named {name!r}; known constants: "
                         f"{', '.join(sorted(map(str, self.constants)))}")

    @property
    def coordinates(self) -> tuple:
        return self.eom.q

    @property
    def speeds(self) -> tuple:
        return self.eom.u

    def with_constants(self, **values: float) -> Model:
        """A copy with other constant values, by name: ``model.with_constants(m=2.0)``.

        Names of ``op_parameters`` (e.g. the bicycle's forward speed ``v``) are
        accepted too and change the operating point.  An unknown name raises
        InputError naming it and listing the known ones; values must be finite
        real numbers.  The initial state is recomputed when the model has an
        ``initial_state_rule`` (it may depend on the constants).
        """
        by_name = {str(s): s for s in self.constants}
        new_constants = dict(self.constants)
        new_op = dict(self.op_parameters)
        for name, value in values.items():
            if name not in by_name and name not in new_op:
                known = sorted(by_name) + sorted(new_op)
                raise InputError(f"unknown parameter {name!r} for model {self.name}; known parameters: "
                                 f"{', '.join(known)}")
            number = finite_number(value, f"parameter {name!r}")
            if name in by_name:
                new_constants[by_name[name]] = number
            else:
                new_op[name] = number
        changes: dict[str, Any] = {"constants": new_constants, "op_parameters": new_op}
        if self.initial_state_rule is not None:
            changes["initial_state"] = dict(self.initial_state_rule(dict(new_constants)))
        if self.operating_point_rule is not None:
            changes["operating_point"] = _bind_operating_point(self.operating_point_rule, new_constants)
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        e = self.eom
        return (f"<Model {self.name!r}: {e.n}+{e.M} coordinates, {e.p}+{e.m} speeds, "
                f"{len(self.constants)} constants, t_span={self.t_span}>")


def _bind_operating_point(rule: Callable[[dict, dict], dict], constants: dict) -> Callable[[dict], dict]:
    frozen = dict(constants)

    def operating_point(op_parameters: dict) -> dict:
        return rule(dict(op_parameters), frozen)

    return operating_point


@dataclass
class KaneSystem:
    """The ingredients of Kane's method for one model (SymPy KanesMethod arguments).

    ``form(method_cls)`` builds the method object, forms Kane's equations and
    returns ``(method, eom)``; ``method_cls`` defaults to symbody.KanesMethod
    (tests pass sympy.physics.mechanics.KanesMethod to compare).
    """

    frame: ReferenceFrame
    q_ind: list
    u_ind: list
    kd_eqs: list
    bodies: list
    loads: list
    q_dep: list = field(default_factory=list)
    configuration_constraints: list = field(default_factory=list)
    u_dep: list = field(default_factory=list)
    velocity_constraints: list = field(default_factory=list)
    u_aux: list = field(default_factory=list)
    noncontributing: list = field(default_factory=list)

    def method(self, method_cls: type | None = None) -> Any:
        """The (not yet formed) KanesMethod object."""
        cls = KanesMethod if method_cls is None else method_cls
        kwargs: dict[str, Any] = {"kd_eqs": self.kd_eqs}
        if self.q_dep:
            kwargs["q_dependent"] = self.q_dep
            kwargs["configuration_constraints"] = self.configuration_constraints
        if self.u_dep:
            kwargs["u_dependent"] = self.u_dep
            kwargs["velocity_constraints"] = self.velocity_constraints
        if self.u_aux:
            kwargs["u_auxiliary"] = self.u_aux
        return cls(self.frame, self.q_ind, self.u_ind, **kwargs)

    def form(self, method_cls: type | None = None,
             name: str | None = None) -> tuple[Any, EquationsOfMotion | None]:
        """Form Kane's equations; return ``(method, eom)`` (eom None for foreign classes)."""
        km = self.method(method_cls)
        km.kanes_equations(self.bodies, self.loads)
        eom = None
        if hasattr(km, "to_eom"):
            eom = km.to_eom(noncontributing=self.noncontributing or None, name=name)
            eom = _without_noncontributing_in_dynamics(eom)
        return km, eom


def _without_noncontributing_in_dynamics(eom: EquationsOfMotion) -> EquationsOfMotion:
    """Drop noncontributing unknowns that cancel only after expansion from the dynamic rows.

    Kane's dynamic rows (one per real speed) cannot depend on noncontributing
    forces, but formed in Cartesian components their terms may cancel only
    after trigonometric expansion (e.g. T2 l1 (sin q1 cos q1 - cos q1 sin q1)).
    Each coefficient is checked to vanish at random numbers before the
    unknowns are set to zero there; otherwise the equations are returned as
    they are.
    """
    unknowns = [f for f in eom.noncontributing
                if any(e.has(f) for e in list(eom.dynamic_rest) + list(eom.dynamic_mass))]
    if not unknowns:
        return eom
    rng = np.random.default_rng(12345)
    g_d = sm.Matrix(eom.dynamic_rest)
    coeffs = [e for e in g_d.jacobian(unknowns) if e != 0]
    derivs: set = set()
    functions: set = set()
    symbols: set = set()
    for e in coeffs:
        derivs |= e.atoms(sm.Derivative)
        functions |= {f for f in e.atoms(sm.core.function.AppliedUndef) if f.args == (t,)}
        symbols |= e.free_symbols
    symbols.discard(t)
    for _ in range(2):
        first = {d: sm.Float(rng.uniform(0.5, 1.5)) for d in derivs}
        then = {s: sm.Float(rng.uniform(0.5, 1.5)) for s in functions | symbols}
        for e in coeffs:
            value = e.xreplace(first).xreplace(then).evalf()
            if not value.is_number or abs(complex(value)) > 1e-9:
                return eom
    zero = dict.fromkeys(unknowns, 0)
    new = copy.copy(eom)
    object.__setattr__(new, "dynamic_rest", sm.ImmutableMatrix(g_d.xreplace(zero)))
    object.__setattr__(new, "dynamic_mass", sm.ImmutableMatrix(sm.Matrix(eom.dynamic_mass).xreplace(zero)))
    return new


def rotated_frame(name: str, parent: ReferenceFrame, angle: sm.Expr, axis: str = "z") -> ReferenceFrame:
    """A frame ``name`` rotated from ``parent`` by ``angle`` about the parent's unit vector
    ``axis`` ("x", "y" or "z"): the simple rotations every zoo model builds its frames from."""
    if axis not in ("x", "y", "z"):
        raise InputError(f"axis must be 'x', 'y' or 'z', got {axis!r}")
    frame = ReferenceFrame(name)
    frame.orient_axis(parent, angle, getattr(parent, axis))
    return frame


def energy_fields(kinetic: sm.Expr, potential: sm.Expr, **outputs: sm.Expr) -> dict[str, Any]:
    """The ``energy`` (T + V) and ``outputs`` fields of a conservative model for
    :meth:`Model.create`: the kinetic and potential energies as outputs, then ``outputs``."""
    return {"energy": kinetic + potential,
            "outputs": {"kinetic_energy": kinetic, "potential_energy": potential, **outputs}}


def point_coordinates(point: Point, origin: Point, frame: ReferenceFrame) -> sm.Matrix:
    """The 3x1 measure numbers of ``point`` relative to ``origin`` in ``frame``."""
    return sm.Matrix(point.pos_from(origin).to_matrix(frame))


def solve_dependent_coordinates(holonomic: sm.MatrixBase, q_dep: Sequence, known: dict,
                                guess: Sequence[float], tol: float = 1e-13,
                                max_iter: int = 50) -> dict:
    """Solve f_h(q) = 0 for q_dep by Newton's method from ``guess``.

    ``known`` maps every other symbol (independent coordinates, constants) to
    a number.  Returns {q_dep_i: value}.  Raises InputError when Newton fails
    (no consistent configuration near the guess).
    """
    fh = sm.Matrix(holonomic).xreplace({k: sm.Float(v) for k, v in known.items()})
    J = fh.jacobian(list(q_dep))
    f_num = sm.lambdify([list(q_dep)], fh, "numpy")
    J_num = sm.lambdify([list(q_dep)], J, "numpy")
    x = np.array(guess, dtype=float)
    for _ in range(max_iter):
        r = np.asarray(f_num(x), dtype=float).reshape(-1)
        if np.max(np.abs(r)) < tol:
            break
        x = x - np.linalg.solve(np.asarray(J_num(x), dtype=float), r)
    r = np.asarray(f_num(x), dtype=float).reshape(-1)
    if not np.all(np.isfinite(r)) or np.max(np.abs(r)) > 1e-10:
        raise InputError(f"no configuration satisfies the holonomic constraints near the guess "
                         f"{dict(zip(map(str, q_dep), guess, strict=True))} (residual {np.max(np.abs(r)):.3g})")
    return {qd: float(v) for qd, v in zip(q_dep, x, strict=True)}
