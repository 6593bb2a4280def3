"""Random multibody models for differential and invariant testing.

:func:`random_model` builds, from an integer seed, the kinematic ingredients of
a multibody system that no one hand-picked -- frames, points, bodies, loads,
kinematic differential equations and constraints -- in the argument form of
``sympy.physics.mechanics.KanesMethod``, so the *same* random system can be
formed by symbody's KanesMethod and by SymPy's (the oracle), and by Lagrange's
method from its Lagrangian ``L = T - V``.

Three kinds:

``"tree"``
    a tree of rigid bodies and particles on revolute joints about random unit
    axes and sliders along random unit axes, with random offsets, gravity,
    joint springs and zero-length linear springs to the ground.
``"nonholonomic"``
    a planar base body (x, y, yaw) carrying such a tree, with knife edges and
    rolling wheels: m velocity constraints B(q) u + b = 0 and m dependent
    speeds (chosen so that B_dep is well conditioned at every yaw).
``"closed_loop"``
    a tree whose last body has a point held on a fixed plane, on a fixed line
    or at a fixed distance from a ground anchor: M holonomic constraints
    f_h(q) = 0, M dependent coordinates and their speeds.  The constraint
    constants are chosen so that a random reference configuration q* satisfies
    f_h = 0; consistent states perturb q_ind around q* and solve q_dep by
    Newton's method.

Kinematic equations are ``s_i q_i' - u_i = 0`` (``s_i = 1`` unless
``scaled_kinematics``), so every speed belongs to one coordinate.  Joint axes
and offset directions are rational unit vectors (Pythagorean quadruples) times
length constants, so expressions stay exact and moderately small.

Example::

    from symbody.testing import random_model
    rm = random_model(3, n_bodies=3, kind="nonholonomic")
    km = rm.form()                                  # symbody.KanesMethod, formed
    import sympy.physics.mechanics as me
    km_ref = rm.form(me.KanesMethod)                # SymPy's, same system
    values = rm.values()                            # constants + consistent q, u
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, Vector, dynamicsymbols

from ..compat.sympy import TIME
from ..deprecation import moved_keywords
from ..errors import InputError

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion


__all__ = ["RandomModel", "RandomModelOptions", "random_model", "KINDS"]

t = TIME

KINDS = ("tree", "nonholonomic", "closed_loop")

#: Primitive Pythagorean quadruples (a, b, c, d): a^2 + b^2 + c^2 = d^2 -> rational unit vectors.
_QUADRUPLES = ((1, 2, 2, 3), (2, 3, 6, 7), (1, 4, 8, 9), (4, 4, 7, 9), (2, 6, 9, 11),
               (6, 6, 7, 11), (3, 4, 12, 13), (2, 5, 14, 15), (2, 10, 11, 15), (1, 12, 12, 17),
               (8, 9, 12, 17), (1, 0, 0, 1))
#: Pythagorean triples (a, b, c) for unit vectors in a plane.
_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (1, 0, 1))


# --------------------------------------------------------------------------- numbers
def _unit3(rng: np.random.Generator, axes: str = "mixed") -> tuple:
    """A random rational unit vector (3 components), as sympy Rationals.

    ``axes="mixed"``: a coordinate axis (30 %), a vector in a coordinate plane (40 %)
    or a general direction (30 %): deep chains of general axes make expressions (and
    SymPy, the oracle) very slow, so they are mixed with simpler ones.
    ``axes="general"``: always a general direction (stress tests, benchmarks).
    """
    draw = rng.uniform()
    if axes == "general":
        draw = 1.0
    if draw < 0.3:
        a, b, c, d = 1, 0, 0, 1
    elif draw < 0.7:
        a, b, d = _TRIPLES[rng.integers(len(_TRIPLES) - 1)]
        c = 0
    else:
        a, b, c, d = _QUADRUPLES[rng.integers(len(_QUADRUPLES) - 1)]
    comps = [a, b, c]
    rng.shuffle(comps)
    signs = rng.choice([-1, 1], size=3)
    return tuple(sm.Rational(int(s) * int(x), d) for s, x in zip(signs, comps))


def _unit2(rng: np.random.Generator) -> tuple:
    """A random rational unit vector in a plane (2 components)."""
    a, b, c = _TRIPLES[rng.integers(len(_TRIPLES))]
    comps = [a, b]
    rng.shuffle(comps)
    signs = rng.choice([-1, 1], size=2)
    return tuple(sm.Rational(int(s) * int(x), c) for s, x in zip(signs, comps))


def _small_vector(rng: np.random.Generator) -> tuple:
    """Random rational components in [-1, 1] with denominators 4, not all ~0."""
    while True:
        v = tuple(sm.Rational(int(k), 4) for k in rng.integers(-4, 5, size=3))
        if sum(float(x) ** 2 for x in v) >= 0.25:
            return v


def _vec(frame: ReferenceFrame, comps: Sequence) -> Vector:
    return comps[0] * frame.x + comps[1] * frame.y + comps[2] * frame.z


def _cross_norm(a: Sequence, b: Sequence) -> float:
    a, b = np.array(a, dtype=float), np.array(b, dtype=float)
    return float(np.linalg.norm(np.cross(a, b)) / (np.linalg.norm(a) * np.linalg.norm(b)))


# --------------------------------------------------------------------------- numerics
class _Fast:
    """Jacobians and numeric functions of expressions in q and constants, via symengine.

    Functions of time are replaced by plain symbols; symengine differentiates
    and evaluates (its ``Lambdify``), which is orders of magnitude faster than
    sympy on the deeply nested kinematics of random chains.
    """

    def __init__(self, args: Sequence):
        self.args = list(args)
        self.plain = [sm.Symbol(f"_rm_arg{i}") for i in range(len(self.args))]
        self.rep = dict(zip(self.args, self.plain))
        self.se_args = [se.Symbol(s.name) for s in self.plain]

    def to_se(self, exprs) -> list:
        M = sm.Matrix(exprs) if not isinstance(exprs, sm.MatrixBase) else exprs
        return [se.sympify(sm.sympify(e).xreplace(self.rep)) for e in M]

    def jacobian(self, exprs, variables: Sequence) -> list:
        """Rows of d exprs / d variables (variables among ``args``), as symengine expressions."""
        idx = [self.args.index(v) for v in variables]
        return [[e.diff(self.se_args[j]) for j in idx] for e in self.to_se(exprs)]

    def function(self, rows: list, shape: tuple):
        """Numeric function of the args values -> array of ``shape`` for symengine rows/entries."""
        flat = [e for row in rows for e in row] if rows and isinstance(rows[0], list) else list(rows)
        if not flat:
            return lambda values: np.zeros(shape)
        f = se.Lambdify(self.se_args, flat, backend="lambda")

        def call(values: Sequence) -> np.ndarray:
            return np.asarray(f(np.asarray(values, dtype=float)), dtype=float).reshape(shape)

        return call


# --------------------------------------------------------------------------- the model
@dataclass
class RandomModel:
    """The ingredients of a random multibody system (see :func:`random_model`).

    Attributes follow ``sympy.physics.mechanics.KanesMethod``'s arguments:
    ``frame`` (inertial), ``q_ind``, ``q_dep``, ``u_ind``, ``u_dep``,
    ``kd_eqs`` (s_i q_i' - u_i), ``configuration_constraints`` (f_h, M),
    ``velocity_constraints`` (B u + b = 0, m rows: knife edges and rolling, or for
    closed loops the time derivative of f_h), ``bodies``, ``loads``.  Also: ``constants`` (Symbol ->
    value), ``specifieds`` (specified inputs r(t), zero unless given),
    ``state`` (Symbol -> value for every q and u, consistent: f_h(q) = 0 and
    B u + b = 0), ``kinetic_energy`` and ``potential_energy`` (in q, u and
    the constants), ``conservative`` (no damping and no inputs: T + V is
    conserved), ``nonconservative_loads`` (the loads not in V: dampers,
    inputs), ``speed_scale`` (coordinate -> s_i), ``description``.
    """

    seed: int
    kind: str
    frame: ReferenceFrame
    origin: Point
    q_ind: list
    u_ind: list
    kd_eqs: list
    bodies: list
    loads: list
    constants: dict
    state: dict
    q_dep: list = field(default_factory=list)
    u_dep: list = field(default_factory=list)
    configuration_constraints: list = field(default_factory=list)
    velocity_constraints: list = field(default_factory=list)
    specifieds: list = field(default_factory=list)
    nonconservative_loads: list = field(default_factory=list)
    conservative: bool = True
    speed_scale: dict = field(default_factory=dict)
    description: str = ""
    reference_q: dict = field(default_factory=dict)
    explicit_speeds: bool = True
    #: coordinate -> its speed (u_i = s_i q_i'), in the builder's order
    speed_by_coordinate: dict = field(default_factory=dict, repr=False)
    #: callables returning the terms of the potential energy V (gravity, springs)
    potential_terms: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        # numeric f_h, its Jacobian, B and b (velocity constraints with q' -> u / s)
        self._numeric = _Numeric(self, list(self.configuration_constraints),
                                 [sm.sympify(e).xreplace(self.qdot_to_u())
                                  for e in self.velocity_constraints])
        self._kinetic: Any = None
        self._potential: Any = None

    # ------------------------------------------------------------- symbols
    @property
    def q(self) -> list:
        """All coordinates [q_ind, q_dep] (N)."""
        return list(self.q_ind) + list(self.q_dep)

    @property
    def u(self) -> list:
        """All speeds [u_ind, u_dep] (o)."""
        return list(self.u_ind) + list(self.u_dep)

    @property
    def speed_of(self) -> dict:
        """Coordinate -> its speed (u_i = s_i q_i')."""
        return {qi: self.speed_by_coordinate[qi] for qi in self.q}

    @property
    def kinetic_energy(self) -> sm.Expr:
        """T(q, u): the sum of the bodies' kinetic energies in the inertial frame (cached)."""
        if self._kinetic is None:
            T = sm.Add(*[b.kinetic_energy(self.frame) for b in self.bodies])
            self._kinetic = T.xreplace(self.qdot_to_u())
        return self._kinetic

    @property
    def potential_energy(self) -> sm.Expr:
        """V(q): gravity and springs (cached)."""
        if self._potential is None:
            self._potential = sm.Add(*[term() for term in self.potential_terms])
        return self._potential

    @property
    def energy(self) -> sm.Expr:
        """Total mechanical energy T + V (conserved when ``conservative``)."""
        return self.kinetic_energy + self.potential_energy

    @property
    def sizes(self) -> dict:
        return {"n": len(self.q_ind), "M": len(self.q_dep), "p": len(self.u_ind), "m": len(self.u_dep)}

    # ------------------------------------------------------------- forming
    def kanes_method(self, method_cls: type | None = None) -> Any:
        """The (unformed) KanesMethod object of ``method_cls`` (symbody's by default)."""
        if method_cls is None:
            from ..formulation import KanesMethod as method_cls
        kwargs: dict[str, Any] = {"kd_eqs": list(self.kd_eqs)}
        if self.q_dep:
            kwargs["q_dependent"] = list(self.q_dep)
            kwargs["configuration_constraints"] = list(self.configuration_constraints)
        if self.u_dep:
            kwargs["u_dependent"] = list(self.u_dep)
            kwargs["velocity_constraints"] = list(self.velocity_constraints)
        return method_cls(self.frame, list(self.q_ind), list(self.u_ind), **kwargs)

    def form(self, method_cls: type | None = None) -> Any:
        """KanesMethod of ``method_cls`` (symbody's by default) with Kane's equations formed."""
        km = self.kanes_method(method_cls)
        km.kanes_equations(list(self.bodies), list(self.loads))
        return km

    def to_eom(self, name: str | None = None) -> EquationsOfMotion:
        """symbody.EquationsOfMotion via symbody.KanesMethod."""
        return self.form().to_eom(name=name or f"random {self.kind} {self.seed}")

    def qdot_to_u(self) -> dict:
        """q_i' -> u_i / s_i."""
        return {qi.diff(t): self.speed_by_coordinate[qi] / self.speed_scale[qi] for qi in self.q}

    def u_to_qdot(self) -> dict:
        """u_i -> s_i q_i'."""
        return {self.speed_by_coordinate[qi]: self.speed_scale[qi] * qi.diff(t) for qi in self.q}

    def lagrangian(self) -> sm.Expr:
        """L(q, q') = T - V (speeds replaced by s_i q_i')."""
        return (self.kinetic_energy - self.potential_energy).xreplace(self.u_to_qdot())

    def lagranges_method(self, method_cls: type | None = None) -> Any:
        """The (unformed) LagrangesMethod of ``method_cls`` (symbody's by default).

        Coordinates in the order ``q`` = [q_ind, q_dep]; ``hol_coneqs`` = f_h;
        ``nonhol_coneqs`` = the velocity constraints in q' (nonholonomic kind);
        ``forcelist`` = the nonconservative loads (conservative ones are in V).
        """
        if method_cls is None:
            from ..formulation import LagrangesMethod as method_cls
        rep = self.u_to_qdot()
        kwargs: dict[str, Any] = {}
        if self.nonconservative_loads and self.explicit_speeds:
            raise InputError(
                f"random model {self.seed}: its velocities are written in the speeds u, so "
                "LagrangesMethod would find no partial velocities (in q') for the "
                "nonconservative loads; build it with random_model(..., explicit_speeds=False)")
        if self.nonconservative_loads:
            kwargs["forcelist"] = [(a, v.xreplace(rep)) for a, v in self.nonconservative_loads]
            kwargs["frame"] = self.frame
        if self.q_dep:
            kwargs["hol_coneqs"] = list(self.configuration_constraints)
        elif self.u_dep:
            kwargs["nonhol_coneqs"] = [sm.sympify(e).xreplace(rep) for e in self.velocity_constraints]
        return method_cls(self.lagrangian(), self.q, bodies=list(self.bodies), **kwargs)

    def lagrange_to_eom_arguments(self) -> dict:
        """Keyword arguments for ``LagrangesMethod.to_eom`` that match Kane's split of q and u."""
        return {"q_ind": list(self.q_ind), "q_dep": list(self.q_dep),
                "u_dep": [qi.diff(t) for qi in self._coordinates_of(self.u_dep)]}

    def _coordinates_of(self, speeds: Sequence) -> list:
        inv = {u: q for q, u in self.speed_by_coordinate.items()}
        return [inv[s] for s in speeds]

    # ------------------------------------------------------------- numbers
    def values(self, state: dict | None = None) -> dict:
        """Constants, specifieds (0 unless given) and the state as one dict keyed by symbol."""
        out = dict(self.constants)
        out.update(dict.fromkeys(self.specifieds, 0.0))
        out.update(self.state if state is None else state)
        return out

    def x0(self, state: dict | None = None) -> dict:
        """Initial values of the ODE states q and u_ind (for ``simulate``)."""
        st = self.state if state is None else state
        return {s: st[s] for s in self.q + list(self.u_ind)}

    def random_state(self, seed: int | Sequence[int], spread: float = 1.0) -> dict:
        """Another consistent state: q_ind (and u_ind) random, q_dep by Newton, u_dep solved
        (``seed``: numpy's ``default_rng`` seed)."""
        rng = np.random.default_rng(seed)
        return self._numeric.state(rng, spread)

    def dependent_speeds(self, state: dict) -> dict:
        """u_dep solved from B u + b = 0 at ``state`` (which holds q and u_ind)."""
        return self._numeric.dependent_speeds(state)

    def solve_dependent_coordinates(self, state: dict) -> dict:
        """q_dep from f_h(q) = 0 by Newton's method from the values in ``state``."""
        return self._numeric.solve_q_dep(state)

    def holonomic_jacobian(self, state: dict) -> np.ndarray:
        """∂f_h/∂q (M, N), q = [q_ind, q_dep], at the coordinates in ``state``."""
        return self._numeric.fh_jacobian(state)


@dataclass(frozen=True)
class RandomModelOptions:
    """What a random model is made of (see :func:`random_model`).

    ``particles``: some bodies may be particles; ``springs``: joint springs and a
    zero-length spring to the ground (conservative); ``gravity``: uniform gravity (-N.y;
    -N.z for "nonholonomic", normal to the base plane); ``damping``: linear joint dampers
    (nonconservative; ``conservative`` becomes False); ``inputs``: number of specified
    inputs r_i(t) (joint torques or forces); ``constraints``: number of velocity
    constraints m ("nonholonomic", 1-3) or holonomic constraints M ("closed_loop", 1-2),
    random by default; ``scaled_kinematics``: kinematic equations s_i q_i' = u_i with random
    rational s_i instead of q_i' = u_i; ``explicit_speeds``: angular velocities and
    velocities are given in the speeds u (``set_ang_vel(P, u_i / s_i * axis)``, Kane's
    style); with False they are left in q' (``orient_axis``' own angular velocity,
    ``v2pt_theory``): KanesMethod then replaces q' through the kinematic equations, and
    LagrangesMethod can take the nonconservative loads (dampers, inputs), whose partial
    velocities it forms in q'; ``axes``: "mixed" (coordinate axes, axes in a coordinate
    plane and general directions) or "general" (general rational directions only: much
    larger expressions, for stress tests and benchmarks).
    """

    particles: bool = True
    springs: bool = True
    gravity: bool = True
    damping: bool = False
    inputs: int = 0
    constraints: int | None = None
    scaled_kinematics: bool = False
    explicit_speeds: bool = True
    axes: str = "mixed"

    def __post_init__(self) -> None:
        if self.axes not in ("mixed", "general"):
            raise InputError(f"unknown axes {self.axes!r}; choose 'mixed' or 'general'")
        object.__setattr__(self, "inputs", int(self.inputs))


class _Numeric:
    """Numeric helpers for the builder: f_h, its Jacobian, B and b at numbers."""

    def __init__(self, rm: RandomModel, fh: list, vel: list):
        self.rm = rm
        self.consts = list(rm.constants)
        self.q, self.u = rm.q, rm.u
        self.cvals = [rm.constants[c] for c in self.consts]
        N, o, M, m = len(self.q), len(self.u), len(fh), len(vel)
        fast = _Fast(self.q + self.u + self.consts)
        self.fh = fast.function(fast.to_se(fh), (M,)) if M else None
        self.Jh = fast.function(fast.jacobian(fh, self.q), (M, N)) if M else None
        self.vel = fast.function(fast.to_se(vel), (m,)) if m else None
        self.B = fast.function(fast.jacobian(vel, self.u), (m, o)) if m else None
        self.zero_u = [0.0] * o

    def _args(self, qv: dict, uv: Sequence | None = None) -> list:
        return [qv[x] for x in self.q] + (list(uv) if uv is not None else self.zero_u) + self.cvals

    def fh_value(self, qv: dict) -> np.ndarray:
        return self.fh(self._args(qv))

    def fh_jacobian(self, qv: dict) -> np.ndarray:
        return self.Jh(self._args(qv))

    def solve_q_dep(self, state: dict, tol: float = 1e-13, max_iter: int = 60) -> dict:
        rm = self.rm
        if not rm.q_dep:
            return {}
        qv = {x: float(state[x]) for x in self.q}
        n = len(rm.q_ind)
        for _ in range(max_iter):
            r = self.fh_value(qv)
            if np.max(np.abs(r)) < tol:
                break
            J = self.fh_jacobian(qv)[:, n:]
            dq = np.linalg.solve(J, r)
            for x, d in zip(rm.q_dep, dq):
                qv[x] -= d
        r = self.fh_value(qv)
        if not np.all(np.isfinite(r)) or np.max(np.abs(r)) > 1e-11:
            raise InputError(f"random model {rm.seed}: Newton's method did not solve the holonomic "
                             f"constraints (residual {np.max(np.abs(r)):.3g})")
        return {x: qv[x] for x in rm.q_dep}

    def dependent_speeds(self, state: dict) -> dict:
        rm = self.rm
        if not rm.u_dep:
            return {}
        qv = {x: float(state[x]) for x in self.q}
        B = self.B(self._args(qv))
        b = self.vel(self._args(qv))
        p = len(rm.u_ind)
        u_ind = np.array([state[x] for x in rm.u_ind], dtype=float)
        u_dep = np.linalg.solve(B[:, p:], -(B[:, :p] @ u_ind + b))
        return dict(zip(rm.u_dep, (float(v) for v in u_dep)))

    def state(self, rng: np.random.Generator, spread: float = 1.0) -> dict:
        rm = self.rm
        st: dict = {}
        for attempt in range(8):
            scale = spread * 0.5 ** attempt
            for x in rm.q_ind:
                if rm.reference_q:
                    st[x] = rm.reference_q[x] + scale * 0.3 * rng.uniform(-1.0, 1.0)
                else:
                    st[x] = scale * rng.uniform(-1.0, 1.0)
            for x in rm.q_dep:
                st[x] = rm.reference_q[x]
            try:
                st.update(self.solve_q_dep(st))
            except (InputError, np.linalg.LinAlgError):
                continue
            if rm.q_dep:
                J = self.fh_jacobian(st)[:, len(rm.q_ind):]
                sv = np.linalg.svd(J, compute_uv=False)
                if sv[-1] < 0.05 * max(sv[0], 1e-300):
                    continue
            break
        else:  # pragma: no cover - the reference configuration always works
            raise InputError(f"random model {rm.seed}: no consistent configuration found")
        for x in rm.u_ind:
            st[x] = spread * rng.uniform(-1.0, 1.0)
        st.update(self.dependent_speeds(st))
        return st


# --------------------------------------------------------------------------- builder
class _Builder:
    def __init__(self, seed: int, kind: str, n_bodies: int, options: RandomModelOptions):
        self.seed, self.kind, self.n_bodies = seed, kind, n_bodies
        self.rng = np.random.default_rng([seed, KINDS.index(kind), n_bodies])
        self.particles, self.springs, self.gravity = options.particles, options.springs, options.gravity
        self.damping, self.n_inputs = options.damping, options.inputs
        self.n_constraints = options.constraints
        self.scaled = options.scaled_kinematics
        self.explicit_speeds = options.explicit_speeds
        self.axes = options.axes
        self.N = ReferenceFrame("N")
        self.O = Point("O")
        self.O.set_vel(self.N, 0)
        self.constants: dict = {}
        self.q: list = []
        self.u: list = []
        self.scale: dict = {}
        self.kd: list = []
        self.bodies: list = []
        self.loads: list = []
        self.nc_loads: list = []
        self.V: list = []         # callables returning the terms of the potential energy
        self.specifieds: list = []
        self.links: list = []     # (frame, ref point, mass center, parent frame, joint info)
        self.joint_of: dict = {}  # q -> (frame the torque/force acts on, parent frame, axis vector, point)
        self.g = None
        self.up = None
        self.description: list[str] = []

    # ---------------------------------------------------------------- symbols
    def const(self, name: str, low: float = 0.5, high: float = 1.5, value: float | None = None) -> sm.Symbol:
        s = sm.Symbol(name)
        self.constants[s] = float(self.rng.uniform(low, high)) if value is None else float(value)
        return s

    def coordinate(self, name_q: str | None = None) -> tuple:
        i = len(self.q) + 1
        qi = dynamicsymbols(name_q or f"q{i}")
        ui = dynamicsymbols(f"u{i}")
        s = sm.Rational(int(self.rng.integers(1, 4)), int(self.rng.integers(1, 3))) if self.scaled else sm.S.One
        self.q.append(qi)
        self.u.append(ui)
        self.scale[qi] = s
        self.kd.append(s * qi.diff(t) - ui)
        return qi, ui, (ui / s if self.explicit_speeds else qi.diff(t))

    # ---------------------------------------------------------------- bodies
    def body(self, idx: int, frame: ReferenceFrame, ref: Point, avoid_axis=None) -> tuple:
        """Mass center, a rigid body or particle, its gravity load; returns (mass center, mass)."""
        rng = self.rng
        c = self.const(f"c{idx}", 0.3, 1.0)
        while True:
            dvec = _small_vector(rng)
            if avoid_axis is None or _cross_norm(dvec, avoid_axis) > 0.4:
                break
        G = ref.locatenew(f"G{idx}", c * _vec(frame, dvec))
        G.v2pt_theory(ref, self.N, frame)
        m = self.const(f"m{idx}", 0.5, 2.0)
        if self.particles and rng.uniform() < 0.3:
            self.bodies.append(Particle(f"P{idx}", G, m))
            self.description.append(f"particle {idx}")
        else:
            Ic = self.const(f"I{idx}", 0.05, 0.3)
            d = [sm.Rational(int(k), 2) for k in rng.integers(2, 5, size=3)]
            off = sm.Rational(int(rng.integers(-1, 2)), 4)
            I = Ic * inertia(frame, d[0], d[1], d[2], off, 0, 0)
            self.bodies.append(RigidBody(f"B{idx}", G, frame, m, (I, G)))
            self.description.append(f"body {idx}")
        if self.gravity:
            self.loads.append((G, -m * self.g * self.up))
            self.V.append(lambda G=G, m=m: m * self.g * G.pos_from(self.O).dot(self.up))
        return G, m

    def joint_spring(self, qi, acted, parent_frame, axis_vec, point=None, parent_point=None,
                     revolute=True, ground=False) -> None:
        k = self.const(f"k_{qi.name}", 0.5, 3.0)
        if revolute:
            self.loads.append((acted, -k * qi * axis_vec))
            if not ground:
                self.loads.append((parent_frame, k * qi * axis_vec))
        else:
            self.loads.append((point, -k * qi * axis_vec))
            if not ground:
                self.loads.append((parent_point, k * qi * axis_vec))
        self.V.append(lambda: k * qi**2 / 2)

    def joint_load(self, magnitude, acted, parent_frame, axis_vec, point=None, parent_point=None,
                   revolute=True, ground=False) -> None:
        """A nonconservative load pair (damper or input) along/about a joint axis."""
        if revolute:
            pairs = [(acted, magnitude * axis_vec)]
            if not ground:
                pairs.append((parent_frame, -magnitude * axis_vec))
        else:
            pairs = [(point, magnitude * axis_vec)]
            if not ground:
                pairs.append((parent_point, -magnitude * axis_vec))
        self.loads.extend(pairs)
        self.nc_loads.extend(pairs)

    def tree(self, parents: list, first_index: int, count: int, chain: bool = False) -> None:
        """Add ``count`` links; ``parents`` holds (frame, point) pairs to attach to."""
        rng = self.rng
        for j in range(count):
            idx = first_index + j
            if chain:
                pframe, ppoint = parents[-1]
            else:
                pframe, ppoint = parents[int(rng.integers(len(parents)))]
            d = self.const(f"d{idx}", 0.3, 1.0)
            J = ppoint.locatenew(f"J{idx}", d * _vec(pframe, _small_vector(rng)))
            J.v2pt_theory(ppoint, self.N, pframe)
            qi, ui, qdot = self.coordinate()
            axis = _unit3(rng, self.axes)
            axis_vec = _vec(pframe, axis)
            revolute = rng.uniform() < 0.7
            if revolute:
                A = ReferenceFrame(f"A{idx}")
                A.orient_axis(pframe, axis_vec, qi)
                A.set_ang_vel(pframe, qdot * axis_vec)
                R = J
                G, _ = self.body(idx, A, R, avoid_axis=axis)
                self.description[-1] += f" on a revolute joint about {axis}"
                frame = A
            else:
                A = pframe
                R = J.locatenew(f"R{idx}", qi * axis_vec)
                R.set_vel(pframe, qdot * axis_vec)
                R.v1pt_theory(J, self.N, pframe)
                G, _ = self.body(idx, A, R)
                self.description[-1] += f" on a slider along {axis}"
                frame = A
            self.joint_of[qi] = dict(frame=frame, parent=pframe, axis=axis_vec, point=R, parent_point=J,
                                     revolute=revolute, qdot=qdot, ground=ppoint is self.O)
            if self.springs and rng.uniform() < 0.6:
                self.joint_spring(qi, frame, pframe, axis_vec, R, J, revolute, ppoint is self.O)
            if self.damping and rng.uniform() < 0.7:
                cdamp = self.const(f"b_{qi.name}", 0.05, 0.5)
                self.joint_load(-cdamp * qdot, frame, pframe, axis_vec, R, J, revolute, ppoint is self.O)
            parents.append((frame, R))
            self.links.append((frame, R, G))
        if self.springs and self.links and rng.uniform() < 0.7:
            frame, R, G = self.links[int(rng.integers(len(self.links)))]
            k = self.const("k_ground", 0.5, 3.0)
            anchor = sm.Matrix(_small_vector(rng))
            A_vec = _vec(self.N, anchor)
            stretch = G.pos_from(self.O) - A_vec
            self.loads.append((G, -k * stretch))
            self.V.append(lambda: k * stretch.dot(stretch) / 2)
            self.description.append("a zero-length spring to the ground")

    def inputs(self) -> None:
        qs = [q for q in self.q if q in self.joint_of]
        for i in range(self.n_inputs):
            if not qs:
                break
            qi = qs[int(self.rng.integers(len(qs)))]
            r = dynamicsymbols(f"r{i + 1}")
            self.specifieds.append(r)
            jt = self.joint_of[qi]
            self.joint_load(r, jt["frame"], jt["parent"], jt["axis"], jt["point"], jt["parent_point"],
                            jt["revolute"], jt["ground"])

    # ---------------------------------------------------------------- kinds
    def build(self) -> RandomModel:
        kind = self.kind
        self.g = self.const("g", value=9.81) if self.gravity else None
        if kind == "nonholonomic":
            self.up = self.N.z
        else:
            self.up = self.N.y
        if kind == "tree":
            self.tree([(self.N, self.O)], 1, self.n_bodies)
            return self.finish(fh=[], vel=[], q_dep=[], u_dep=[], reference={})
        if kind == "nonholonomic":
            return self.nonholonomic()
        return self.closed_loop()

    def constraint_count(self, most: int, rule: str) -> int:
        """The number of constraints asked for (1 to ``most``), else a random one from the seed."""
        count = self.n_constraints if self.n_constraints is not None else int(self.rng.integers(1, most + 1))
        if not 1 <= count <= most:
            raise InputError(f"constraints={count}: {rule}")
        return count

    def nonholonomic(self) -> RandomModel:
        rng, N, O = self.rng, self.N, self.O
        m_total = self.constraint_count(3, "a nonholonomic random model has 1 to 3 velocity constraints")
        x, ux, xd = self.coordinate()
        y, uy, yd = self.coordinate()
        th, uth, thd = self.coordinate()
        B0 = ReferenceFrame("B0")
        B0.orient_axis(N, N.z, th)
        B0.set_ang_vel(N, thd * N.z)
        C = O.locatenew("C0", x * N.x + y * N.y)
        C.set_vel(N, xd * N.x + yd * N.y)
        self.body(0, B0, C)
        self.description[-1] = "planar base body 0"
        vel: list = []
        wheels = 0
        remaining = m_total
        while remaining:
            use_wheel = remaining >= 2 and rng.uniform() < 0.5
            P = C.locatenew(f"K{len(vel)}",
                            self.const(f"e{len(vel)}", 0.3, 1.0) * _vec(B0, (*_unit2(rng), 0)))
            P.v2pt_theory(C, N, B0)
            if use_wheel:
                wheels += 1
                a2 = _unit2(rng)
                a_vec = _vec(B0, (a2[0], a2[1], 0))
                side = _vec(B0, (-a2[1], a2[0], 0))
                qw, uw, qwd = self.coordinate()
                W = ReferenceFrame(f"W{wheels}")
                W.orient_axis(B0, a_vec, qw)
                W.set_ang_vel(B0, qwd * a_vec)
                Rw = self.const(f"R{wheels}", 0.2, 0.6)
                mw = self.const(f"mw{wheels}", 0.2, 1.0)
                Iw = self.const(f"Iw{wheels}", 0.02, 0.1)
                Iw_dyadic = Iw * (2 * (a_vec.outer(a_vec)) + (side.outer(side)) + N.z.outer(N.z))
                wheel = RigidBody(f"wheel{wheels}", P, W, mw, (Iw_dyadic, P))
                self.bodies.append(wheel)
                K = P.locatenew(f"contact{wheels}", -Rw * N.z)
                K.v2pt_theory(P, N, W)
                vel.append(K.vel(N).dot(side))      # rolling: v_P . side = R w
                vel.append(K.vel(N).dot(a_vec))     # no side slip along the axle
                self.joint_of[qw] = dict(frame=W, parent=B0, axis=a_vec, point=P, parent_point=P,
                                         revolute=True, qdot=qwd, ground=False)
                self.description.append(f"wheel {wheels} (rolling, axle {a2})")
                remaining -= 2
            else:
                e2 = _unit2(rng)
                vel.append(P.vel(N).dot(_vec(B0, (e2[0], e2[1], 0))))
                self.description.append(f"knife edge along {e2}")
                remaining -= 1
        self.tree([(B0, C)], 1, max(self.n_bodies - 1, 0))
        # dependent speeds: the best-conditioned set among the base and wheel speeds, over yaws
        vel_m = sm.Matrix(vel).xreplace(self.qdot_to_u())
        candidates = [ux, uy, uth] + [self.u[self.q.index(q)] for q in self.q[3:] if self._is_wheel(q)]
        u_dep = self._choose_columns(vel_m, self.u, candidates, len(vel))
        return self.finish(fh=[], vel=vel, q_dep=[], u_dep=u_dep, reference={})

    def _is_wheel(self, qi) -> bool:
        jt = self.joint_of.get(qi)
        return jt is not None and jt["frame"].name.startswith("W")

    def _choose_columns(self, exprs: sm.Matrix, variables: list, candidates: list, count: int,
                        samples: list[dict] | None = None) -> list:
        """The ``count`` candidates whose Jacobian columns are best conditioned over samples."""
        fast = _Fast(list(self.q) + list(self.u) + list(self.constants))
        f = fast.function(fast.jacobian(exprs, variables), (len(exprs), len(variables)))
        zero_u = [0.0] * len(self.u)
        rng = np.random.default_rng([self.seed, 99])
        if samples is None:
            samples = []
            for _ in range(12):
                samples.append({qi: rng.uniform(-math.pi, math.pi) for qi in self.q})
        mats = [f([s[qi] for qi in self.q] + zero_u + list(self.constants.values())) for s in samples]
        best, best_score = None, -1.0
        for combo in itertools.combinations(candidates, count):
            cols = [variables.index(c) for c in combo]
            score = min(_conditioning(Mx[:, cols]) for Mx in mats)
            if score > best_score + 1e-12:
                best, best_score = list(combo), score
        if best is None or best_score < 1e-3:
            raise InputError(f"random model {self.seed}: no well-conditioned choice of dependent "
                             "variables (try another seed)")
        return best

    def closed_loop(self) -> RandomModel:
        rng, N, O = self.rng, self.N, self.O
        M = self.constraint_count(2, "a closed-loop random model has 1 or 2 holonomic constraints")
        n_links = max(self.n_bodies, M + 1)
        self.tree([(N, O)], 1, n_links, chain=True)
        frame, R, G = self.links[-1]
        tip = R.locatenew("tip", self.const("d_tip", 0.3, 1.0) * _vec(frame, _small_vector(rng)))
        tip.v2pt_theory(R, N, frame)
        r = tip.pos_from(O)
        v = tip.vel(N)
        # a reference configuration; constraint constants chosen so that it is consistent
        qstar = {qi: float(rng.uniform(-1.0, 1.0)) for qi in self.q}
        fh, vel, kinds = [], [], []
        if M == 2 or rng.uniform() < 0.5:
            normals = []
            while len(normals) < M:
                n_ = _unit3(rng)
                if all(_cross_norm(n_, other) > 0.5 for other in normals):
                    normals.append(n_)
            for i, n_ in enumerate(normals):
                nv = _vec(N, n_)
                h = sm.Symbol(f"h{i + 1}")
                fh.append(r.dot(nv) - h)
                vel.append(v.dot(nv))
                kinds.append(("plane", h, r.dot(nv)))
            self.description.append("tip on a line" if M == 2 else "tip on a plane")
        else:
            anchor = _vec(N, _small_vector(rng))
            L = sm.Symbol("L_rod")
            s_ = r - anchor
            fh.append(s_.dot(s_) - L**2)
            vel.append(2 * s_.dot(v))
            kinds.append(("distance", L, s_.dot(s_)))
            self.description.append("tip at a fixed distance from a ground anchor (a rod)")
        numbers = dict(self.constants)
        fast = _Fast(list(self.q) + list(numbers))
        f = fast.function(fast.to_se([expr for _, _, expr in kinds]), (len(kinds),))
        values = f([qstar[qi] for qi in self.q] + list(numbers.values()))
        for (what, sym, _), val in zip(kinds, values):
            self.constants[sym] = math.sqrt(val) if what == "distance" else float(val)
        # dependent coordinates: best conditioned at q* and near it
        fh_m = sm.Matrix(fh)
        samples = [qstar] + [{qi: qstar[qi] + float(rng.uniform(-0.05, 0.05)) for qi in self.q}
                             for _ in range(3)]
        q_dep = self._choose_columns(fh_m, list(self.q), list(self.q), M, samples)
        u_dep = [self.u[self.q.index(qd)] for qd in q_dep]
        return self.finish(fh=fh, vel=vel, q_dep=q_dep, u_dep=u_dep, reference=qstar)

    def qdot_to_u(self) -> dict:
        return {qi.diff(t): ui / self.scale[qi] for qi, ui in zip(self.q, self.u)}

    # ---------------------------------------------------------------- assembly
    def finish(self, fh: list, vel: list, q_dep: list, u_dep: list, reference: dict) -> RandomModel:
        self.inputs()
        q_ind = [x for x in self.q if x not in q_dep]
        u_ind = [x for x in self.u if x not in u_dep]
        kd = [self.kd[self.q.index(x)] for x in q_ind + q_dep]
        rm = RandomModel(
            seed=self.seed, kind=self.kind, frame=self.N, origin=self.O, q_ind=q_ind, u_ind=u_ind,
            kd_eqs=kd, bodies=self.bodies, loads=self.loads, constants=dict(self.constants),
            state={}, q_dep=list(q_dep),
            u_dep=list(u_dep), configuration_constraints=list(fh), velocity_constraints=list(vel),
            specifieds=list(self.specifieds), nonconservative_loads=list(self.nc_loads),
            conservative=not self.nc_loads, speed_scale=dict(self.scale),
            description=f"random {self.kind} model {self.seed}: " + "; ".join(self.description),
            reference_q=dict(reference), explicit_speeds=self.explicit_speeds,
            speed_by_coordinate=dict(zip(self.q, self.u)), potential_terms=list(self.V))
        rm.state = rm.random_state([self.seed, 7])
        return rm


def _conditioning(A: np.ndarray) -> float:
    sv = np.linalg.svd(A, compute_uv=False)
    return float(sv[-1] / max(sv[0], 1e-300)) if sv.size else 1.0


_OPTION_KEYWORDS = ("particles", "springs", "gravity", "damping", "inputs", "constraints",
                    "scaled_kinematics", "explicit_speeds", "axes")


@moved_keywords("random_model", {"options": (RandomModelOptions, _OPTION_KEYWORDS)})
def random_model(seed: int, n_bodies: int = 3, kind: str = "tree",
                 options: RandomModelOptions | None = None) -> RandomModel:
    """A random multibody model (a :class:`RandomModel`), reproducible from ``seed``.

    Parameters
    ----------
    seed : the random seed (same seed and options -> the same system).
    n_bodies : number of bodies in the tree (for "nonholonomic" the base counts as one;
        wheels come on top; for "closed_loop" at least constraints + 1).
    kind : "tree", "nonholonomic" (knife edges and rolling wheels on a planar base,
        dependent speeds) or "closed_loop" (holonomic constraints, dependent
        coordinates and speeds).
    options : a :class:`RandomModelOptions` (particles, springs, gravity, damping, inputs,
        the number of constraints, scaled kinematics, explicit speeds, axes); default
        ``RandomModelOptions()``.  Its fields given as keywords of ``random_model``
        (``damping=True``) still work for one release, with a DeprecationWarning.
    """
    options = options or RandomModelOptions()
    if kind not in KINDS:
        raise InputError(f"unknown kind {kind!r}; choose one of {', '.join(map(repr, KINDS))}")
    if int(n_bodies) != n_bodies or n_bodies < 1:
        raise InputError(f"n_bodies={n_bodies!r} must be a positive integer")
    return _Builder(int(seed), kind, int(n_bodies), options).build()
