"""``load_opensim``: an OpenSim model as equations of motion, constants, markers and a scene.

The equations are formed on Simbody's tree (:mod:`.multibody`, :mod:`.mobilizers`,
:mod:`.dynamics`) in symengine and handed to :class:`~symbody.EquationsOfMotion`::

    M(q) u' + C(q, u) u + g(q) - Q(q, u, r, x_e) = 0,    q' = N(q) u,    f_h(q, t) = 0

with Simbody's coordinates and speeds (u = q' except for Ball and Free joints, whose
rotational speeds are the angular velocity in the parent frame), Q the generalized forces of
the force builders (:mod:`.forces`) and f_h the constraints, locked and prescribed
coordinates (:mod:`.constraints`).  The coordinates are OpenSim's in Simbody's order with the
dependent ones (fixed by a constraint) moved to the end.
"""

from __future__ import annotations

import os
import re
import warnings
from functools import cached_property
from typing import Any

import numpy as np
import symengine as se
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from ..compat.sympy import TIME
from ..errors import InputError
from ..formulation.eom import CanonicalBlocks, EquationsOfMotion, SymengineDynamics
from ..symengine_bridge import SympyConverter, to_symengine
from .constraints import (
    choose_dependents,
    constraint_blocks,
    constraint_rows,
    coordinate_rows,
    paired_coordinates,
)
from .dynamics import BodyInertia, JointTransform, body_inertia, form_dynamics
from .forces import ForceContext, ForceContribution, builder_for
from .forces.ellipsoid_path import EllipsoidParameters, ellipsoid_slots
from .forces.geometry_path import ForceNotBuilt
from .kinematics import TreeKinematics
from .kinematics_only import (
    KinematicEquations,
    kinematics_only_error,
    mass_matrix_function,
    warn_kinematics_only,
)
from .mobilizers import ZERO, make_mobilizer, num
from .model_spec import LeftOut, ModelSpec
from .model_views import ModelViews
from .multibody import MultibodyTree, build_multibody
from .muscle_views import MuscleViews
from .parse import parse_model
from .xml_tree import read_document

__all__ = ["OpenSimModel", "load_opensim", "OpenSimImportWarning"]


class OpenSimImportWarning(UserWarning):
    """Elements of an OpenSim file that the model leaves out (named, with their lines)."""


def _ident(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def _disabled(el) -> bool:
    if el.find("appliesForce") is not None:
        return not el.flag("appliesForce", True)
    return el.flag("isDisabled", False)


class OpenSimModel(MuscleViews, ModelViews):
    """An OpenSim model: its equations, constants, names, markers, SymPy System and scene.

    Attributes
    ----------
    eom : EquationsOfMotion, ready for ``symbody.compile``.
    kinematics_only, massless_bodies : whether bodies move without mass or inertia, and their
        names; then the mass matrix has zero rows, the model has no ``eom`` and every
        dynamics entry point raises :class:`~.kinematics_only.KinematicsOnlyError`.
    constants : dict {Symbol: value}: gravity ``g`` (its magnitude; the direction is the
        file's) and the constants the force builders add.
    coordinate_names : OpenSim's name of coordinate i (the model's order: independent
        coordinates in Simbody's order, then the dependent ones); ``speed_names`` likewise.
    coordinates, speeds : the dynamicsymbols in that order (``q_<name>``, ``u_<name>``);
        ``q_ind``, ``q_dep``, ``u_ind``, ``u_dep``.
    simbody_coordinate_names : the coordinates in OpenSim's state order (Simbody's q and u);
        ``simbody_index[i]``: the Simbody index of model coordinate i; ``simbody_q_slots[k]``:
        the index in OpenSim's Q of Simbody coordinate k (Ball and Free joints keep an unused
        fourth rotation slot), ``simbody_nq``: the length of Q.
    coordinate_ranges : {name: (lower, upper)} from the file; ``coordinate_defaults``:
        {name: (default value, default speed)}.
    markers : {name: (body, location (3))}; :meth:`marker_positions`.
    left_out : the file's elements the model does not build (:class:`LeftOut`: tag, name,
        line, reason); also named in an :class:`OpenSimImportWarning` when loaded.
    forces : {name: the force builder's record} of the forces built.
    spec : the parsed file (:class:`~symbody.opensim.model_spec.ModelSpec`); ``tree``: the
        multibody tree in Simbody's order; ``kinematics``: body poses and Jacobians.
    """

    def __init__(self, spec: ModelSpec, tree: MultibodyTree, *, unsupported: str = "warn",
                 force_builders: dict | None = None, custom_joint_bias: str = "simbody"):
        self.spec, self.tree = spec, tree
        self.name = spec.name
        self.gravity = np.asarray(spec.gravity, dtype=float)
        self.left_out: list[LeftOut] = list(spec.left_out)
        self.custom_joint_bias = custom_joint_bias
        #: the bodies that move without mass or inertia on or beyond them (then the model is
        #: for kinematics only: :mod:`.kinematics_only`)
        self.massless_bodies: tuple = tuple(tree.massless_bodies)
        self._make_symbols()
        self._build_tree()
        self._build_constraints()
        self._build_forces(force_builders or {})
        self._eom = self._form()
        self._build_controllers()
        self._report(unsupported)
        self._report_simbody_bias()
        if self.kinematics_only:
            warn_kinematics_only(self.spec.where, self.massless_bodies, stacklevel=3)

    # ------------------------------------------------------------------ symbols
    def _make_symbols(self) -> None:
        coords = self.tree.coordinates
        used: set = set()
        self.simbody_coordinate_names = tuple(c.name for c in coords)
        self._q_tree, self._u_tree = [], []
        self.tree_coordinates, self.tree_speeds = self._q_tree, self._u_tree
        for c in coords:
            ident = base = _ident(c.name)
            k = 1
            while ident in used:
                k += 1
                ident = f"{base}_{k}"
            used.add(ident)
            self._q_tree.append(dynamicsymbols(f"q_{ident}"))
            self._u_tree.append(dynamicsymbols(f"u_{ident}"))
        self.coordinate_ranges = {c.name: c.range for c in coords}
        self.coordinate_defaults = {c.name: (c.default_value, c.default_speed) for c in coords}
        self._coord_spec = {c.name: c for c in coords}
        # Simbody keeps a quaternion's 4 slots for Ball and Free joints even with Euler angles
        # (the last one unused): the Q index of each coordinate, and the length of Q
        slots, k = [], 0
        for n in self.tree.nodes[1:]:
            nc = len(n.joint.coordinates)
            slots += list(range(k, k + nc))
            k += nc + (1 if n.joint.type in ("BallJoint", "FreeJoint") else 0)
        self.simbody_q_slots, self.simbody_nq = tuple(slots), k
        self.g = sm.Symbol("g")
        self.constants: dict = {self.g: float(np.linalg.norm(self.gravity))}
        names: dict = {}
        self._se_q = [se.Symbol(f"_sbq{i}") for i in range(len(coords))]
        self._se_u = [se.Symbol(f"_sbu{i}") for i in range(len(coords))]
        for s, a in zip(self._se_q, self._q_tree):
            names[s.name] = a
        for s, a in zip(self._se_u, self._u_tree):
            names[s.name] = a
        self._se_t = se.Symbol("_sbt")
        names["_sbt"] = TIME
        names["g"] = self.g
        self._names = names

    # ------------------------------------------------------------------ the tree
    def _build_tree(self) -> None:
        nodes = self.tree.nodes
        index = {c: i for i, c in enumerate(self.simbody_coordinate_names)}
        transforms: list = [None]
        offsets = [0]
        inertias = [BodyInertia(ZERO, [ZERO] * 3, [[ZERO] * 3 for _ in range(3)])]
        for n in nodes[1:]:
            j = n.joint
            ks = [index[c.name] for c in j.coordinates]
            mob = make_mobilizer(j, [self._se_q[k] for k in ks], [self._se_u[k] for k in ks],
                                 simbody_hdot=self.custom_joint_bias == "simbody")
            transforms.append(JointTransform(j.parent, j.child, mob))
            offsets.append(ks[0] if ks else 0)
            b = self.spec.bodies[n.name]
            inertias.append(body_inertia(b.mass, b.com, b.inertia))
        self._transforms, self._offsets, self._inertias = transforms, offsets, inertias
        #: CustomJoints whose velocity terms Simbody 4.6 approximates (rotations sharing
        #: coordinates): their names, whichever ``custom_joint_bias`` was chosen
        self.simbody_bias_joints = tuple(n.joint.name for n, t in zip(nodes[1:], transforms[1:])
                                         if t.mob.simbody_hdot_differs)
        self.joint_transforms = transforms
        self._parents = [n.parent for n in nodes]
        self.kinematics = TreeKinematics({n.name: n.index for n in nodes}, self._parents,
                                         transforms, offsets, len(self._se_u))
        self._qdot_tree = [None] * len(self._se_q)
        for t in transforms[1:]:
            for qs, qd in zip(t.mob.q, t.mob.qdot):
                self._qdot_tree[self._se_q.index(qs)] = qd

    # ------------------------------------------------------------------ constraints
    def _build_constraints(self) -> None:
        sym = dict(zip(self.simbody_coordinate_names, self._se_q))
        rows = coordinate_rows(list(self.tree.coordinates), sym, self._se_t)
        rows += constraint_rows(self.spec.constraints, sym, self.kinematics, self._se_t)
        for c in self.spec.constraints:
            if not c.enforced:
                self.left_out.append(LeftOut(c.type, c.name, c.element.line,
                                             "not enforced (OpenSim ignores it too)"))
        eligible = paired_coordinates(self.simbody_coordinate_names, self._se_q, self._se_u,
                                      self._qdot_tree)
        q0 = np.array([c.default_value for c in self.tree.coordinates])
        deps = choose_dependents(rows, list(self.simbody_coordinate_names), self._se_q, eligible,
                                 q0, self.spec.where, lambda: self._speed_map(q0))
        self._holonomic = rows
        names = self.simbody_coordinate_names
        dep_idx = [names.index(d) for d in deps]
        ind_idx = [k for k in range(len(names)) if k not in dep_idx]
        self.simbody_index = tuple(ind_idx + dep_idx)      # model index -> Simbody index
        self.coordinate_names = tuple(names[k] for k in self.simbody_index)
        self.speed_names = self.coordinate_names
        self.coordinates = tuple(self._q_tree[k] for k in self.simbody_index)
        self.speeds = tuple(self._u_tree[k] for k in self.simbody_index)
        nd = len(dep_idx)
        self.q_ind = self.coordinates[:len(names) - nd]
        self.q_dep = self.coordinates[len(names) - nd:]
        self.u_ind = self.speeds[:len(names) - nd]
        self.u_dep = self.speeds[len(names) - nd:]

    def _speed_map(self, q0: np.ndarray) -> np.ndarray:
        """∂q'/∂u (N x N, Simbody's order) at the coordinates q0."""
        subs = dict(zip(self._se_q, [se.RealDouble(float(v)) for v in q0]))
        out = np.zeros((len(self._se_q), len(self._se_u)))
        for i, qd in enumerate(self._qdot_tree):
            for k, u in enumerate(self._se_u):
                d = qd.diff(u)
                if d != 0:
                    out[i, k] = float(d.subs(subs))
        return out

    # ------------------------------------------------------------------ forces
    def _build_forces(self, extra_builders: dict) -> None:
        coords = {}
        for k, c in enumerate(self.simbody_coordinate_names):
            coords[c] = (self._se_q[k], self._se_u[k], self._q_tree[k], self._u_tree[k], k)
        self.force_context = ForceContext(self.spec, self.kinematics, coords, self._names,
                                          self._se_t)
        self.forces: dict = {}
        self.force_contributions: list[ForceContribution] = []
        self._unsupported: list[LeftOut] = []
        self._force_inputs: dict = {}       # built force's name -> its specified inputs
        for el in self.spec.forces:
            if _disabled(el):
                self.left_out.append(LeftOut(el.tag, el.name, el.line,
                                             "disabled in the file (OpenSim ignores it too)"))
                continue
            builder = extra_builders.get(el.tag) or builder_for(el.tag)
            if builder is None:
                item = LeftOut(el.tag, el.name, el.line, "force type not supported")
                self._unsupported.append(item)
                self.left_out.append(item)
                continue
            try:
                contrib = builder(el, self.force_context)
            except ForceNotBuilt as exc:
                item = LeftOut(el.tag, el.name, el.line, str(exc))
                self._unsupported.append(item)
                self.left_out.append(item)
                continue
            if contrib.left_out:
                self.left_out.append(LeftOut(el.tag, el.name, el.line, contrib.left_out))
            contrib.source = contrib.source or f"{el.tag} {el.name!r} (line {el.line})"
            self.force_contributions.append(contrib)
            self.forces[el.name or el.tag] = contrib.record
            self._force_inputs[el.name] = tuple(contrib.specifieds)
            self.constants.update(contrib.constants)

    def _build_controllers(self) -> None:
        """The file's PrescribedControllers (:mod:`.controllers`): ``controllers``,
        ``controls``; the others in ``left_out``."""
        from .controllers import build_controllers
        from .reflex import lengthening_speed_of
        folder = os.path.dirname(self.spec.path) if self.spec.path else None
        speed_of = lengthening_speed_of(self) if self._eom is not None else None
        records, left = build_controllers(self.spec.controllers, self.spec.forces,
                                          self._force_inputs, self.spec.element, folder,
                                          speed_of)
        self.controllers = {r.name: r for r in records}
        self.left_out += left

    @property
    def controls(self):
        """The file's enabled PrescribedControllers' and ToyReflexControllers' controls as
        the model's inputs: :class:`~.controllers.ControllerInputs`,
        ``r(t, x) -> (len(input_names),)`` for ``simulate(..., specifieds=model.controls)``
        (OpenSim's sum of the controllers driving each actuator, unclamped; 0 for the inputs
        none drives, or add yours with ``model.controls.with_inputs(r)``); x: ``eom.states``
        (needed with a ToyReflexController)."""
        from .controllers import ControllerInputs
        if getattr(self, "_controls", None) is None:     # (one: its reflex kernel built once)
            states = self._eom.states if self._eom is not None else ()
            self._controls = ControllerInputs(self.input_names,
                                              list(self.controllers.values()), states=states)
        return self._controls

    def _report(self, unsupported: str) -> None:
        from .controllers import controllers_note
        important = [x for x in self.left_out if not x.reason.startswith(("disabled",
                                                                           "not enforced"))]
        note = controllers_note(list(self.controllers.values()), self.left_out)
        others = [x for x in important if not x.tag.endswith("Controller")]
        parts = []
        if others:
            listing = "; ".join(str(x) for x in others[:12])
            more = f"; and {len(others) - 12} more" if len(others) > 12 else ""
            parts.append(f"{len(others)} element(s) left out of the model: {listing}{more} "
                         "(see model.left_out)")
        if note:
            parts.append(note)
        if not parts:
            return
        text = f"{self.spec.where}: " + ". ".join(parts)
        if unsupported == "error" and important:
            raise InputError(text.replace("left out of the model", "not supported"))
        warnings.warn(text, OpenSimImportWarning, stacklevel=4)

    def _report_simbody_bias(self) -> None:
        """Warn that the velocity terms of the joints Simbody approximates are OpenSim's
        (the default) or exact (then u' differs from OpenSim's)."""
        if not self.simbody_bias_joints:
            return
        names = ", ".join(repr(n) for n in self.simbody_bias_joints)
        common = (f"{self.spec.where}: the CustomJoint(s) {names} have rotations that share a "
                  f"coordinate; OpenSim 4.6 (Simbody's FunctionBased mobilizer) computes their "
                  f"velocity terms only approximately")
        if self.custom_joint_bias == "exact":
            text = (f"{common}; with custom_joint_bias='exact' symbody computes them exactly, "
                    f"so the velocity terms and u' differ from OpenSim's wherever these joints "
                    f"move (symbody's conserve energy; the default 'simbody' reproduces "
                    f"OpenSim's numbers; see model.simbody_bias_joints)")
        else:
            text = (f"{common}, and so does this model, to give OpenSim's numbers: a "
                    f"conservative motion through these joints does not conserve energy. "
                    f"load_opensim(..., custom_joint_bias='exact') gives the exact terms "
                    f"(see model.simbody_bias_joints)")
        warnings.warn(text, OpenSimImportWarning, stacklevel=4)

    # ------------------------------------------------------------------ equations
    def _form(self) -> EquationsOfMotion:
        gdir = self.gravity / np.linalg.norm(self.gravity) if self.gravity.any() else np.zeros(3)
        g = se.Symbol("g")
        dyn = form_dynamics(self._parents, self._transforms, self._inertias,
                            [num(x) * g for x in gdir], self._offsets)
        self.tree_dynamics = dyn
        rest = list(dyn.bias)
        for c in self.force_contributions:
            if c.generalized is not None:
                rest = [r - q for r, q in zip(rest, c.generalized)]
        perm = self.simbody_index
        mass = [[dyn.mass[a][b] for b in perm] for a in perm]
        rest = [rest[a] for a in perm]
        conv = SympyConverter(self._names)
        self.sympy_converter = conv

        def to_sympy(mass=mass, rest=rest):
            return conv.matrix(mass), sm.Matrix(len(rest), 1, [conv(e) for e in rest])

        specifieds: list = []
        extra: dict = {}
        for c in self.force_contributions:
            specifieds += [s for s in c.specifieds if s not in specifieds]
            extra.update(c.extra_states)
        extra = self._symengine_extra(extra)
        # the ellipsoid-wrapped paths' stations: inputs the simulation computes from q
        paths = ellipsoid_slots(self.force_context)
        self.path_parameters = pp = EllipsoidParameters(paths, [self._se_q[k] for k in perm]) \
            if paths else None
        if pp is not None and _uses(rest + list(extra.values()), pp.symbols):
            pp.indices = tuple(range(len(specifieds), len(specifieds) + len(pp)))
            specifieds += list(pp.functions)
        dynamic = SymengineDynamics(mass, rest, dict(self._names), to_sympy, extra=extra)
        N = len(perm)
        qdot = [self._qdot_tree[k] for k in perm]
        u_model = [self._se_u[k] for k in perm]
        K_u = sm.zeros(N, N)
        for i in range(N):
            for j in range(N):
                d = qdot[i].diff(u_model[j])
                if d != 0:
                    K_u[i, j] = -conv(d)
        f_h, B, b, B_a, b_a = self._constraint_blocks(conv, qdot, u_model, perm)
        blocks = CanonicalBlocks(
            q_ind=self.q_ind, q_dep=self.q_dep, u_ind=self.u_ind, u_dep=self.u_dep, u_aux=[],
            K_qd=sm.eye(N), K_u=K_u, k=sm.zeros(N, 1),
            qdot_solution=sm.Matrix([conv(e) for e in qdot]),
            f_h=f_h, B=B, b=b, B_a=B_a, b_a=b_a, M_d=None, g_d=None, reduced=False,
            auxiliary=sm.zeros(0, 1), dynamic_se=dynamic,
            holonomic_names=[r.name for r in self._holonomic])
        if self.kinematics_only:        # M has zero rows: no equations of motion
            self._kinematic_mass = mass_matrix_function(mass, [self._se_q[k] for k in perm])
            qdot = [q.diff(TIME) for q in self.coordinates]
            self._kinematic_part = KinematicEquations(
                TIME, dict(zip(qdot, blocks.qdot_solution)), f_h, B, b)
            return None
        eom = EquationsOfMotion.from_blocks(blocks, specifieds=specifieds,
                                            constants=list(self.constants),
                                            name=self.name)
        eom.derived_inputs = pp if pp is not None and pp.indices else None
        contacts = [r for c in self.force_contributions for r in c.contacts]
        if contacts:
            eom.contacts = contacts
        return eom

    def _symengine_extra(self, extra: dict) -> dict:
        """{x_e: x_e'} with every derivative in symengine (the force builders' SymPy ones
        converted, their functions of time as the context's symbols): the equations keep
        them there and compile reads them directly."""
        ctx = self.force_context

        def leaf(node):         # (plain Symbols keep their names, as in the dynamics)
            return None if node.is_Symbol else ctx.symbol(node)

        sympy_keys = [x for x, f in extra.items() if isinstance(f, sm.Basic)]
        if sympy_keys:
            done = dict(zip(sympy_keys, to_symengine([extra[x] for x in sympy_keys], leaf)))
            extra = {x: done.get(x, f) for x, f in extra.items()}
        return extra

    def _constraint_blocks(self, conv, qdot: list, u_model: list, perm: list) -> tuple:
        q_model = [self._se_q[k] for k in perm]
        return constraint_blocks(self._holonomic, conv, qdot, q_model, u_model, self._se_t)

    # ------------------------------------------------------------------ views
    @property
    def kinematics_only(self) -> bool:
        """Whether bodies move without mass (``massless_bodies``): then the mass matrix has
        zero rows and ``eom``, ``numeric_model``, ``dynamic_terms`` and ``system_eom`` raise
        :class:`~symbody.opensim.kinematics_only.KinematicsOnlyError`."""
        return bool(self.massless_bodies)

    @property
    def eom(self) -> EquationsOfMotion:
        """The equations of motion, ready for ``symbody.compile`` (a kinematics-only model
        has none: :class:`~symbody.opensim.kinematics_only.KinematicsOnlyError`)."""
        self._refuse_dynamics("model.eom (the equations of motion)")
        return self._eom

    @property
    def kinematic_equations(self) -> Any:
        """q' = N(q) u, f_h(q, t) = 0 and B u + b = 0 (``kindiffdict``, ``holonomic``,
        ``velocity_matrix``, ``velocity_rest``): ``eom``, or these alone for a kinematics-only
        model (:class:`~symbody.opensim.kinematics_only.KinematicEquations`)."""
        return self._kinematic_part if self.kinematics_only else self._eom

    def _refuse_dynamics(self, what: str) -> None:
        if self.kinematics_only:
            raise kinematics_only_error(self.spec.where, self.massless_bodies, what)

    @property
    def nq(self) -> int:
        return len(self.coordinates)

    def __repr__(self) -> str:
        return (f"<OpenSimModel {self.name!r}: {len(self.tree.nodes) - 1} bodies, "
                f"{len(self.coordinates)} coordinates ({len(self.q_dep)} dependent), "
                f"{len(self.markers)} markers, {len(self.forces)} forces built, "
                f"{len(self.left_out)} elements left out>")

    def default_state(self) -> np.ndarray:
        """x = [q, u_ind] at the file's default values and default speeds."""
        q = np.array([self.coordinate_defaults[n][0] for n in self.coordinate_names])
        u = np.array([self.coordinate_defaults[n][1] for n in self.coordinate_names])
        return np.concatenate([q, u[:len(self.u_ind)]])

    def random_coordinates(self, rng: Any = None) -> np.ndarray:
        """q (model order) drawn uniformly within each coordinate's range from the file (an
        infinite or empty range: [-1, 1]); dependent coordinates are not put on the
        constraints (``numeric_model.project_coordinates`` does that)."""
        rng = np.random.default_rng(rng)
        out = []
        for n in self.coordinate_names:
            lo, hi = self.coordinate_ranges[n]
            if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
                lo, hi = -1.0, 1.0
            out.append(rng.uniform(lo, hi))
        return np.array(out)

    # ------------------------------------------------------------------ compiled
    @cached_property
    def numeric_model(self):
        """``symbody.compile(model.eom)`` with the model's constants, built on first use."""
        from ..compilation import compile as sb_compile
        self._refuse_dynamics("model.numeric_model (the compiled equations of motion)")
        return sb_compile(self.eom, constants=list(self.constants))

    def _constants_array(self) -> np.ndarray:
        return np.array([self.constants[c] for c in self.constants], dtype=float)

    def mass_matrix(self, q: Any) -> np.ndarray:
        """M(q) (o x o, the model's speed order) at coordinates q (model order), compiled;
        for a kinematics-only model (N x N) with the massless bodies' rows and columns zero."""
        if self.kinematics_only:
            return self._kinematic_mass(q)
        e = len(self.eom.extra_states)      # M does not depend on them
        return self.dynamic_terms(q, np.zeros(len(self.speeds)),
                                  x_e=np.zeros(e) if e else None)[0]

    def dynamic_terms(self, q: Any, u: Any, r: Any = None, t: float = 0.0,
                      x_e: Any = None) -> tuple:
        """``(M, g_d)`` of M u' + g_d = 0 at (q, u) (all speeds, model order): g_d =
        C(q, u) u + g(q) - Q with the specified inputs r (``input_names`` order, default zeros;
        the ellipsoid paths' stations are computed from q) and, for a model with
        extra states (muscle activations, fiber lengths), their values ``x_e``
        (``eom.extra_states`` order; required then)."""
        self._refuse_dynamics("model.dynamic_terms (M and the forces of M u' + g_d = 0)")
        m = self.numeric_model
        L = m.layout
        u = np.asarray(u, dtype=float)
        if u.shape != (L.o,):
            raise InputError(f"u must have all {L.o} speeds, got shape {u.shape}")
        if L.e and x_e is None:
            raise InputError(f"x_e: the model has {L.e} extra states "
                             f"({', '.join(map(str, self.eom.extra_states[:3]))}, ...): "
                             "give their values")
        r = self.specified_values(q, r)
        extra = None if x_e is None else np.asarray(x_e, dtype=float)
        if extra is not None and extra.shape != (L.e,):
            raise InputError(f"x_e must have {L.e} values, got shape {extra.shape}")
        z = m.arguments(t, np.asarray(q, dtype=float), u, self._constants_array(), r,
                        extra=extra)
        out = np.empty(m.kernels.main.nout)
        m.kernels.main.into(z, out)
        K, o = L.K, L.o
        S = out[L.main_system].reshape(K, K, order="F")
        return S[:o, :o].copy(), -out[L.main_rhs][:o]


def _uses(expressions: list, symbols: tuple) -> bool:
    """Whether any of the symengine ``expressions`` contains one of ``symbols``."""
    wanted = set(symbols)
    return any(not wanted.isdisjoint(se.sympify(e).free_symbols) for e in expressions)


def load_opensim(path_or_xml: str | os.PathLike, *, unsupported: str = "warn",
                 force_builders: dict | None = None,
                 custom_joint_bias: str = "simbody") -> OpenSimModel:
    """Load an OpenSim model (a ``.osim`` path or its XML text) as equations of motion.

    Both file formats that circulate are read: 4.x (``Version`` 40000 and later) and the
    3.x/2.x formats (30000..30516, 20302/20303) that OpenSim upgrades on load.
    ``unsupported``: what to do with elements the model does not build (force types without
    a builder, other constraint types, controllers, probes): "warn" (default: load without
    them and name each, with its line, in an :class:`OpenSimImportWarning` and in
    ``model.left_out``) or "error" (an :class:`~symbody.errors.InputError` naming them).

    ``force_builders``: ``{element name: builder(element, ctx)}`` used before the registered
    ones (:mod:`symbody.opensim.forces`) for this model only.
    ``custom_joint_bias``: "simbody" (default) or "exact": the velocity terms of a
    CustomJoint whose rotations share coordinates (e.g. a knee whose three rotations are
    splines of the knee angle) as Simbody 4.6 computes them -- OpenSim's numbers, which are
    not exact (OpenSim then loses or gains energy in a conservative model; see
    :func:`symbody.opensim.mobilizers.simbody_hdot_error`) -- or exactly.  Loading such a
    model warns either way and names the joints (``model.simbody_bias_joints``).  Both agree
    for the usual joints (rotation i a function of coordinate i alone).

    Raises :class:`~symbody.errors.InputError` naming the element and line for a malformed
    file, an unsupported joint or function type, unknown frames, bodies or coordinates and
    loops of joints.  Bodies that move without mass or inertia (zero rows of the mass matrix)
    load the model for kinematics only, with a
    :class:`~symbody.opensim.kinematics_only.KinematicsOnlyWarning` naming them
    (``model.kinematics_only``, ``model.massless_bodies``: :mod:`.kinematics_only`).
    """
    if unsupported not in ("warn", "error"):
        raise InputError(f"load_opensim: unsupported must be 'warn' or 'error', got "
                         f"{unsupported!r}")
    if custom_joint_bias not in ("exact", "simbody"):
        raise InputError(f"load_opensim: custom_joint_bias must be 'exact' or 'simbody', got "
                         f"{custom_joint_bias!r}")
    doc = read_document(path_or_xml)
    spec = parse_model(doc)
    tree = build_multibody(spec)
    return OpenSimModel(spec, tree, unsupported=unsupported, force_builders=force_builders,
                        custom_joint_bias=custom_joint_bias)
