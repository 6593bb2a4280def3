"""``load_urdf``: a URDF robot as equations of motion, a SymPy System and a scene.

The equations are formed on the tree (:mod:`.dynamics`: composite rigid bodies for M(q),
Newton-Euler for the bias) and handed to :class:`~symbody.EquationsOfMotion` in symengine::

    M(q) u' + C(q, u) u + g(q) + D u + F sign(u) - tau = 0,    q' = u (joints)

with D, F the URDF ``<dynamics damping friction>`` of each joint and tau the specified
joint torques/forces (one per actuated, i.e. non-mimic, joint).  A free-flyer base has
q = (x, y, z, qx, qy, qz, qw) (position in the world, unit quaternion) and u = (v, ω)
(linear and angular velocity in the base frame, Pinocchio's v), with
p' = R(Q) v, Q' = ½ Q ⊗ (ω, 0), and |Q|² - 1 = 0 as a holonomic constraint (qw dependent).
A mimic joint j of joint k is q_j = a q_k + b (holonomic; u_j = a u_k).  Planar joints
and floating joints inside the tree have several coordinates and speeds (Pinocchio's,
:mod:`.joint_models`), with q' = K(q) u and a floating joint's quaternion norm holonomic.
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from ..compat.sympy import TIME
from ..errors import InputError
from ..formulation.eom import CanonicalBlocks, EquationsOfMotion, SymengineDynamics
from ..symengine_bridge import SympyConverter
from .articulated_body import ArticulatedBody
from .contact_methods import ContactMethods
from .control import RobotControl
from .dynamics import form_tree_dynamics, num
from .general_dynamics import form_general_dynamics
from .joint_models import COORDINATE_NAMES, SPEED_NAMES, joint_rates, tree_layout
from .limits import add_limit_terms, check_limits, joint_limits, limit_events
from .mass_checks import check_masses
from .tree import KinematicTree, build_tree
from .urdf_parse import UrdfModel, parse_urdf

if TYPE_CHECKING:
    from sympy.physics.mechanics import System

    from ..scene import Scene

__all__ = ["Robot", "load_urdf"]

BASE_COORDINATES = ("x", "y", "z", "qx", "qy", "qz", "qw")
BASE_SPEEDS = ("vx", "vy", "vz", "wx", "wy", "wz")


def _ident(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


class Robot(ContactMethods, RobotControl):
    """A URDF robot: its equations, constants, names, SymPy System and scene; its frames,
    Jacobians and dynamics terms as compiled functions (:class:`~.control.RobotControl`);
    ground contacts and joint controllers (:class:`~.contact_methods.ContactMethods`).

    Attributes
    ----------
    eom : EquationsOfMotion, ready for ``symbody.compile``.
    constants : dict {Symbol: value}: gravity ``g`` (and the inertial parameters with
        ``symbolic_inertia=True``).
    joint_names : the URDF joint of coordinate i (base coordinates named ``"base.x"`` ...,
        a planar or floating joint's ``"<joint>.x"`` ...).
    speed_names, input_names : the joint of speed i (``"base.vx"``, ``"<joint>.vx"`` ...)
        and of input i.
    coordinates, speeds, inputs : the dynamicsymbols, in the model's order.
    tree : the :class:`~symbody.robots.tree.KinematicTree` (merged bodies).
    urdf : the parsed :class:`~symbody.robots.urdf_parse.UrdfModel`; ``urdf_path``,
        ``urdf_root`` (the XML element tree, with line numbers).
    floating_base : bool.
    parameters : the inertial-parameter symbols (10 per body, Pinocchio's order; empty unless
        ``symbolic_inertia=True``).
    tree_coordinates, tree_speeds : the coordinates and speeds in tree order (Pinocchio's,
        the free-flyer's 7 and 6 first); ``speed_permutation[k]``: the tree index of model
        speed k; ``mimic_bodies``: the indices (in ``tree.moving``) of the mimic joints.
    tree_dynamics : the symengine M and bias in tree order
        (:class:`~symbody.robots.dynamics.TreeDynamics`); ``symengine_symbols``: their
        (q, u, u', tau) symbols.
    system, link_frames, link_points, world_frame, world_origin, scene : built on first
        access (:mod:`symbody.robots.system`).
    """

    def __init__(self, urdf: UrdfModel, tree: KinematicTree, *, floating_base: bool,
                 gravity: np.ndarray, symbolic_inertia: bool, joint_dynamics: bool,
                 limits: bool = False) -> None:
        self.urdf, self.tree = urdf, tree
        self.floating_base = floating_base
        self.gravity = gravity
        self.symbolic_inertia = symbolic_inertia
        self.joint_dynamics = joint_dynamics
        self.limits = joint_limits(self)
        self.limits_act = bool(limits)
        self.urdf_path = urdf.path
        self.urdf_root = urdf.element
        self.ground_contacts: tuple = ()
        self.controllers: tuple = ()
        self._make_symbols()
        self.eom = self._form()

    # ------------------------------------------------------------------ symbols
    def _make_symbols(self) -> None:
        moving = self.tree.moving
        used: set = set()

        def unique(s: str) -> str:
            k, base = 1, s
            while s in used:
                k += 1
                s = f"{base}_{k}"
            used.add(s)
            return s

        q_tree, u_tree, qn_tree, un_tree = [], [], [], []
        if self.floating_base:
            for c in BASE_COORDINATES:
                q_tree.append(dynamicsymbols(unique(f"base_{c}")))
                qn_tree.append(f"base.{c}")
            for c in BASE_SPEEDS:
                u_tree.append(dynamicsymbols(unique(f"base_{c}")))
                un_tree.append(f"base.{c}")
        lay = self.tree_layout = tree_layout(self.tree, self.floating_base)
        for b in moving:
            ident = unique(_ident(b.joint.name))
            kind, name = b.joint.type, b.joint.name
            if kind in COORDINATE_NAMES:    # several coordinates: "<joint>.x", ...
                for c in COORDINATE_NAMES[kind]:
                    q_tree.append(dynamicsymbols(f"q_{unique(f'{ident}_{c}')}"))
                    qn_tree.append(f"{name}.{c}")
                for c in SPEED_NAMES[kind]:
                    u_tree.append(dynamicsymbols(f"u_{unique(f'{ident}_{c}')}"))
                    un_tree.append(f"{name}.{c}")
            else:
                q_tree.append(dynamicsymbols(f"q_{ident}"))
                u_tree.append(dynamicsymbols(f"u_{ident}"))
                qn_tree.append(name)
                un_tree.append(name)
        self.tree_coordinates, self.tree_speeds = q_tree, u_tree
        mimic = [i for i, b in enumerate(moving) if b.joint.mimic is not None]
        free = [i for i, b in enumerate(moving) if b.joint.mimic is None]
        # the model's order: independent (base, then non-mimic joints), then dependent (the
        # quaternions' qw, the mimic joints)
        qi, qd = (list(range(6)), [6]) if self.floating_base else ([], [])
        ui = list(range(6)) if self.floating_base else []
        for i in free:
            sl = lay.q_slices[i + 1]
            if moving[i].joint.type == "floating":
                qi += list(range(sl.start, sl.stop - 1))
                qd.append(sl.stop - 1)
            else:
                qi += list(range(sl.start, sl.stop))
            ui += list(range(lay.u_slices[i + 1].start, lay.u_slices[i + 1].stop))
        qd += [lay.q_slices[i + 1].start for i in mimic]
        ud = [lay.u_slices[i + 1].start for i in mimic]
        q_ind, q_dep = [q_tree[k] for k in qi], [q_tree[k] for k in qd]
        u_ind, u_dep = [u_tree[k] for k in ui], [u_tree[k] for k in ud]
        self.joint_names = tuple(qn_tree[k] for k in qi + qd)
        self.speed_names = tuple(un_tree[k] for k in ui + ud)
        self.q_ind, self.q_dep, self.u_ind, self.u_dep = q_ind, q_dep, u_ind, u_dep
        self.coordinates = tuple(q_ind + q_dep)
        self.speeds = tuple(u_ind + u_dep)
        # an input per speed of the actuated joints (not mimic, not floating)
        self._input_speeds = [k for i in free if moving[i].joint.type != "floating"
                              for k in range(lay.u_slices[i + 1].start, lay.u_slices[i + 1].stop)]
        self.inputs = tuple(dynamicsymbols(f"tau_{str(u_tree[k])[2:-3]}")
                            for k in self._input_speeds)
        self.input_names = tuple(un_tree[k] for k in self._input_speeds)
        self.input_speed_indices = tuple(self._input_speeds)   # tree speed of each input
        # permutation: model speed k <- tree speed perm[k]
        self.speed_permutation = ui + ud
        self.mimic_bodies, self._free = mimic, free
        self.g = sm.Symbol("g")
        self.constants = {self.g: float(np.linalg.norm(self.gravity))}

    @property
    def gravity_direction(self) -> np.ndarray:
        """The unit vector (3) of gravity in the world: ``gravity`` / |gravity|, or -z for
        ``gravity=(0, 0, 0)`` (then ``g`` = 0, and giving g a value turns gravity on along -z)."""
        norm = float(np.linalg.norm(self.gravity))
        return self.gravity / norm if norm > 0.0 else np.array([0.0, 0.0, -1.0])

    def _inertia_symbols(self) -> list:
        """Per body, (m, h, I_o) as symengine expressions (numbers, or symbols with values in
        ``constants``) and the parameter symbols (10 per body, Pinocchio's order)."""
        out, self.parameters = [], []
        used: set = set()       # links "a b" and "a-b" are both _ident "a_b": one symbol each
        for b in self.tree.bodies:
            if not self.symbolic_inertia:
                sc = max(b.mass, float(np.abs(b.h).max()), float(np.abs(b.I_o).max()))
                out.append((num(b.mass, sc), [num(x, sc) for x in b.h],
                            [[num(x, sc) for x in row] for row in b.I_o]))
                continue
            if b.index == 0 and not self.floating_base:
                out.append((se.Integer(0), [se.Integer(0)] * 3, [[se.Integer(0)] * 3] * 3))
                continue
            ident = base = _ident(b.name)
            k = 1
            while ident in used:
                k += 1
                ident = f"{base}_{k}"
            used.add(ident)
            names = [f"m_{ident}", f"mx_{ident}", f"my_{ident}", f"mz_{ident}", f"Ixx_{ident}",
                     f"Ixy_{ident}", f"Iyy_{ident}", f"Ixz_{ident}", f"Iyz_{ident}", f"Izz_{ident}"]
            syms = [sm.Symbol(n) for n in names]
            self.parameters.extend(syms)
            for s, v in zip(syms, b.dynamic_parameters):
                self.constants[s] = float(v)
            m, hx, hy, hz, xx, xy, yy, xz, yz, zz = (se.Symbol(n) for n in names)
            out.append((m, [hx, hy, hz], [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
        return out

    # ------------------------------------------------------------------ the equations
    def _form(self) -> EquationsOfMotion:
        names: dict = {}
        se_of: dict = {}

        def sym(atom, key):
            s = se.Symbol(key)
            names[key] = atom
            se_of[atom] = s
            return s

        qs = [sym(a, f"_sbq{i}") for i, a in enumerate(self.tree_coordinates)]
        us = [sym(a, f"_sbu{i}") for i, a in enumerate(self.tree_speeds)]
        taus = [sym(a, f"_sbtau{i}") for i, a in enumerate(self.inputs)]
        udots = [sym(a.diff(TIME), f"_sbud{i}") for i, a in enumerate(self.tree_speeds)]
        g = se.Symbol("g")
        names["g"] = self.g
        inertias = self._inertia_symbols()
        self.tree_inertias = inertias
        for p in self.parameters:
            names[p.name] = p
        gdir = self.gravity_direction
        if self.floating_base:      # in the frame of the free-flyer's coordinates
            gdir = self.tree.base_placement[0].T @ gdir
        gravity = tuple(num(x) * g for x in gdir)
        form = form_general_dynamics if self.tree_layout.multi_dof else form_tree_dynamics
        dyn = form(self.tree, qs, us, gravity, inertias, self.floating_base)
        self.tree_dynamics = dyn
        self.symengine_symbols = (qs, us, udots, taus)
        # g_d = bias - Q, Q the generalized forces (inputs, damping, friction, limits)
        forces = self._generalized_forces(qs, us, taus, names)
        rest = [b - f for b, f in zip(dyn.bias, forces)]
        rest = self._external_forces(rest, qs, us, names)   # ground contacts, controllers
        perm = self.speed_permutation
        mass = [[dyn.mass[a][b] for b in perm] for a in perm]
        rest = [rest[a] for a in perm]
        conv = SympyConverter(names)

        def to_sympy(mass=mass, rest=rest):
            return conv.matrix(mass), sm.Matrix(len(rest), 1, [conv(e) for e in rest])

        def forward(qs=qs, us=us, gravity=gravity, inertias=inertias, forces=forces):
            # u' of the same block: the generalized forces Q are every term of g_d but the
            # bias C u + g (g_d = bias - Q): inputs, damping, friction, and the link forces
            # other modules subtract from g_d through _external_forces (linear in what it is
            # given, so zeros give -Q_ext)
            external = getattr(self, "_external_forces", None)
            if external is not None:
                zero = [se.Integer(0)] * len(us)
                forces = [f - e for f, e in zip(forces, external(zero, qs, us, names))]
            return self._forward_dynamics(qs, us, gravity, inertias, forces)

        # the recursion takes joints of one speed (multi-speed joints: M and the solve)
        dynamic = SymengineDynamics(mass, rest, names, to_sympy,
                                    None if self.tree_layout.multi_dof else forward)
        q = list(self.coordinates)
        N = len(q)
        qdot, K_u = self._kinematics()
        # kinematic rows q' + K_u u = 0 with K_u = -dq'/du (q' = u for the joints)
        K_qd = sm.eye(N)
        k = sm.zeros(N, 1)
        f_h, B, b, B_a, b_a = self._constraint_blocks()
        blocks = CanonicalBlocks(
            q_ind=self.q_ind, q_dep=self.q_dep, u_ind=self.u_ind, u_dep=self.u_dep, u_aux=[],
            K_qd=K_qd, K_u=K_u, k=k, qdot_solution=sm.Matrix([qdot[qi] for qi in q]),
            f_h=f_h, B=B, b=b, B_a=B_a, b_a=b_a, M_d=None, g_d=None, reduced=False,
            auxiliary=sm.zeros(0, 1), dynamic_se=dynamic,
            holonomic_names=self._holonomic_names)
        # every constant of the file, also those the equations do not depend on (a parameter
        # of the first body other than its inertia about the axis)
        eom = EquationsOfMotion.from_blocks(blocks, specifieds=list(self.inputs) + self._placeholders(),
                                            constants=list(self.constants),
                                            name=self.urdf.name or "robot")
        if self.ground_contacts:
            from .ground_contact import contact_records
            eom.contacts = contact_records(self, qs, us, self._contact_symbol(names), names)
        return eom

    def _generalized_forces(self, qs: list, us: list, taus: list, names: dict) -> list:
        """Q (tree order, symengine): the joint inputs tau minus the URDF damping D u and
        friction F sign(u) on each of a joint's speeds (none on a free-flyer's), with the
        inputs saturated and the position stops when the limits act (:mod:`.limits`)."""
        minus = [se.Integer(0)] * len(us)          # -Q, term by term as g_d holds it
        if self.joint_dynamics:
            for i, b in enumerate(self.tree.moving):
                d, f = b.joint.damping, b.joint.friction
                for k in range(self.tree_layout.u_slices[i + 1].start,
                               self.tree_layout.u_slices[i + 1].stop):
                    if d:
                        minus[k] = minus[k] + num(d) * us[k]
                    if f:
                        minus[k] = minus[k] + num(f) * se.sign(us[k])
        for tau, k in zip(taus, self._input_speeds):
            minus[k] = minus[k] - tau
        if self.limits_act:           # effort saturation and position stops (.limits)
            minus = add_limit_terms(self, minus, qs, us, taus, names)
        return [-m for m in minus]

    def _forward_dynamics(self, qs: list, us: list, gravity: tuple, inertias: list,
                          forces: list) -> list:
        """u' (the model's speed order) by the articulated-body algorithm, with the mimic
        joints' constraints (:mod:`.articulated_body`)."""
        ub = 6 if self.floating_base else 0
        index = {b.joint.name: i for i, b in enumerate(self.tree.moving)}
        rows = []
        for i in self.mimic_bodies:
            target, a, _ = self.tree.moving[i].joint.mimic
            rows.append({ub + i: 1.0, ub + index[target]: -float(a)})
        body = ArticulatedBody(self.tree, qs, us, gravity, inertias, self.floating_base,
                               constraints=rows)
        accelerations = body.accelerations(forces)
        return [accelerations[a] for a in self.speed_permutation]

    def _kinematics(self) -> tuple:
        """(q -> q'(q, u), K_u = -dq'/du (N x o), both in the model's order)."""
        out = {}
        row = {c: i for i, c in enumerate(self.coordinates)}
        col = {c: i for i, c in enumerate(self.speeds)}
        K_u = sm.zeros(len(row), len(col))
        qt, ut = self.tree_coordinates, self.tree_speeds
        lay = self.tree_layout
        # p' = R(Q) v, Q' = 1/2 Q (x) w for the free-flyer and floating joints (Pinocchio's v)
        groups = [("floating", qt[:7], ut[:6])] if self.floating_base else []
        groups += [(b.joint.type, qt[lay.q_slices[i + 1]], ut[lay.u_slices[i + 1]])
                   for i, b in enumerate(self.tree.moving)]
        for kind, qs, us in groups:
            for c, e in zip(qs, joint_rates(kind, qs, us)):
                out[c] = e
                for s_ in us:
                    K_u[row[c], col[s_]] = -sm.diff(e, s_)
        return out, K_u

    def _constraint_blocks(self) -> tuple:
        """(f_h, B, b, B_a, b_a): the quaternion norm and the mimic joints (B_a = B, b = 0)."""
        u = list(self.speeds)
        o = len(u)
        fh, names, Brows = [], [], []
        if self.floating_base:
            x, y, z, w = self.tree_coordinates[3:7]
            fh.append(x * x + y * y + z * z + w * w - 1)
            names.append("base.quaternion_norm")
        moving = self.tree.moving
        lay = self.tree_layout
        for i in self._free:         # floating joints in the tree: their quaternions too
            if moving[i].joint.type == "floating":
                x, y, z, w = self.tree_coordinates[lay.q_slices[i + 1]][3:7]
                fh.append(x * x + y * y + z * z + w * w - 1)
                names.append(f"{moving[i].joint.name}.quaternion_norm")
        index = {b.joint.name: i for i, b in enumerate(moving)}
        for i in self.mimic_bodies:
            jname, a, off = moving[i].joint.mimic
            k = index[jname]
            qi, qk = lay.q_slices[i + 1].start, lay.q_slices[k + 1].start
            ui, uk = lay.u_slices[i + 1].start, lay.u_slices[k + 1].start
            fh.append(self.tree_coordinates[qi] - a * self.tree_coordinates[qk] - off)
            names.append(f"mimic {moving[i].joint.name}")
            Brows.append(self.tree_speeds[ui] - a * self.tree_speeds[uk])
        self._holonomic_names = names
        f_h = sm.Matrix(len(fh), 1, fh) if fh else sm.zeros(0, 1)
        if Brows:
            B = sm.Matrix(Brows).jacobian(u)
            b = sm.zeros(len(Brows), 1)
        else:
            B, b = sm.zeros(0, o), sm.zeros(0, 1)
        return f_h, B, b, B, b.copy()

    # ------------------------------------------------------------------ views
    @property
    def nq(self) -> int:
        return len(self.coordinates)

    @property
    def nv(self) -> int:
        return len(self.speeds)

    def __repr__(self) -> str:
        base = "floating" if self.floating_base else "fixed"
        return (f"<Robot {self.urdf.name!r}: {len(self.tree.moving)} moving joints, {base} base, "
                f"{len(self.coordinates)} coordinates, {len(self.speeds)} speeds, "
                f"{len(self.inputs)} inputs>")

    def default_state(self) -> np.ndarray:
        """x = [q, u_ind] at the zero configuration (identity quaternion, mimic joints at their
        offset) with zero speeds."""
        q = np.zeros(len(self.coordinates))
        if self.floating_base:
            q[self.coordinates.index(self.tree_coordinates[6])] = 1.0
        moving = self.tree.moving
        lay = self.tree_layout
        for i, b in enumerate(moving):
            sl = lay.q_slices[i + 1]
            if b.joint.type == "floating":
                q[self.coordinates.index(self.tree_coordinates[sl.stop - 1])] = 1.0
            if b.joint.mimic is not None:
                q[self.coordinates.index(self.tree_coordinates[sl.start])] = b.joint.mimic[2]
        return np.concatenate([q, np.zeros(len(self.u_ind))])

    # pinocchio conventions (see .pinocchio)
    def to_pinocchio(self, x: Any, xdot: Any = None) -> tuple:
        """``(q, v)`` or ``(q, v, dv)`` in Pinocchio's conventions (see
        :func:`symbody.robots.pinocchio.to_pinocchio`)."""
        from .pinocchio import to_pinocchio
        return to_pinocchio(self, x, xdot)

    def from_pinocchio(self, q: Any, v: Any) -> np.ndarray:
        """The symbody state x = [q, u_ind] of Pinocchio's (q, v)
        (:func:`symbody.robots.pinocchio.from_pinocchio`).  Tangent vectors (the
        derivatives' columns along q) follow ``robot.speeds``; ``tangent_map`` maps them to
        symbody's coordinates."""
        from .pinocchio import from_pinocchio
        return from_pinocchio(self, q, v)

    def check_limits(self, trajectory: Any, warn: bool = False,
                     tolerance: float = 0.0) -> list:
        """The joint limits (position, velocity, effort) ``trajectory`` exceeds
        (:func:`symbody.robots.limits.check_limits`)."""
        return check_limits(self, trajectory, warn, tolerance)

    def limit_events(self, terminal: bool = True, action: Any = None) -> list:
        """The position limits as events (:func:`symbody.robots.limits.limit_events`)."""
        return limit_events(self, terminal, action)

    def regressor(self):
        """The joint-torque regressor (see :func:`symbody.robots.regressor.regressor`)."""
        from .regressor import regressor
        return regressor(self)

    @cached_property
    def system_parts(self):
        """The System with its frames, points and bodies (:class:`.system.SystemParts`),
        built on first access."""
        from .system import build_system
        return build_system(self)

    @property
    def system(self) -> System:
        """A ``sympy.physics.mechanics.System`` of the merged bodies and the joints (built on
        first access)."""
        return self.system_parts.system

    @property
    def link_frames(self) -> dict:
        """URDF link name -> its ReferenceFrame (merged links included)."""
        return self.system_parts.link_frames

    @property
    def link_points(self) -> dict:
        """URDF link name -> its origin Point (merged links included)."""
        return self.system_parts.link_points

    @property
    def world_frame(self):
        return self.system_parts.world_frame

    @property
    def world_origin(self):
        return self.system_parts.world_origin

    @cached_property
    def scene(self) -> Scene:
        """The URDF's ``<visual>`` geometry on the link frames (boxes, cylinders, spheres and
        STL/OBJ/Collada meshes, resolved with ``package_dirs``; a missing mesh file is drawn
        as a box with a :class:`~symbody.robots.visuals.MeshFileWarning` naming it).  A file
        without any ``<visual>``: a segment from each joint to its children and a sphere per
        joint (:meth:`skeleton_scene`)."""
        from .visuals import read_visuals, scene_from_urdf
        source = getattr(self, "urdf_source", None)
        if source is None:
            return self.skeleton_scene()
        visuals = read_visuals(source)
        if not any(visuals.visuals.values()):
            return self.skeleton_scene()
        return scene_from_urdf(visuals, self.link_frames, self.link_points, self.world_frame,
                               self.world_origin, package_dirs=getattr(self, "package_dirs", None),
                               name=self.urdf.name)

    def skeleton_scene(self) -> Scene:
        """A drawing of the kinematic tree: a segment from each joint to its children, a
        sphere per joint."""
        from .system import build_scene
        return build_scene(self)

    def to_eom(self, loads: Any = (), name: str | None = None) -> EquationsOfMotion:
        """The equations with the loads and actuators added to ``robot.system`` (and ``loads``),
        formed by symbody's KanesMethod on the System (for small robots: SymPy's vector
        algebra; see :func:`symbody.robots.system.system_eom`)."""
        from .system import system_eom
        return system_eom(self, loads, name)


def load_urdf(path_or_xml: str | os.PathLike, *, floating_base: bool = False,
              gravity: Any = (0.0, 0.0, -9.81), symbolic_inertia: bool = False,
              joint_dynamics: bool = True, invalid_inertia: str = "error",
              mimic: bool = True, package_dirs: Any = None, limits: bool = False) -> Robot:
    """Load a URDF robot (a file path or the XML text) as equations of motion.

    ``floating_base``: a free-flyer root (7 coordinates: position and unit quaternion
    (x, y, z, w); 6 speeds: linear and angular velocity in the base frame).  ``gravity``:
    the gravity vector in world coordinates (3); its magnitude is the constant ``g`` and its
    direction ``robot.gravity_direction`` (``(0, 0, 0)``: g = 0 along -z, so that a value of
    g given later in ``p`` turns gravity on along -z).
    ``symbolic_inertia``: keep each body's 10 inertial parameters (mass, first moment
    m c, inertia about the body origin) as symbols, their values in ``robot.constants``
    (needed by :meth:`Robot.regressor`).  ``joint_dynamics``: the URDF
    ``<dynamics damping friction>`` as joint torques -D u - F sign(u).  ``invalid_inertia``:
    "error" (default) refuses an inertia tensor that is not positive semi-definite; "warn"
    uses it as given with an ``InvalidInertiaWarning`` (Pinocchio's behaviour; TIAGo's
    antenna links have one).  ``mimic``: True makes each ``<mimic>`` joint a holonomic
    constraint q_j = a q_k + b; False ignores the tags (every joint independent with its own
    input: Pinocchio's default).  ``package_dirs``: where ``robot.scene`` looks for the
    mesh files of ``package://`` paths (a folder or a list of folders that are or hold the
    packages, or ``{package: folder}``; default: the folders above the URDF, then
    ``ROS_PACKAGE_PATH``; see :func:`symbody.robots.visuals.resolve_mesh`).  ``limits``: the
    URDF ``<limit>`` acting on the motion: each input saturated at its ``effort``, each
    position range held by a one-sided stiff spring-damper (constants ``limit_stiffness``,
    ``limit_damping``); velocity limits are checked on trajectories by
    ``robot.check_limits(sol)`` (see :mod:`symbody.robots.limits`).

    The coordinates are in Pinocchio's order (the tree depth first, children in
    alphabetical order of their joint names, as urdfdom stores them), the dependent ones
    (the free-flyer's qw, mimic joints) moved to the end.

    Raises :class:`~symbody.errors.InputError` naming the element and line for a malformed
    file, a loop, several roots, an unknown parent link, an unsupported joint type, bad
    numbers or inertias; and for a moving joint with nothing to move (a massless subtree:
    a singular mass matrix).
    """
    g = np.asarray(gravity, dtype=float)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise InputError(f"load_urdf: gravity must be 3 finite numbers, got {gravity!r}")
    model = parse_urdf(path_or_xml, invalid_inertia, mimic)
    if model.floating_joint is not None and not floating_base:
        j = model.joints[model.floating_joint]
        raise InputError(f"{model.path or 'URDF string'}, joint {j.name!r} (line {j.line}): a "
                         "floating joint from the world; load the robot with floating_base=True "
                         "(it is then the free-flyer)")
    tree = build_tree(model)
    if not tree.moving and not floating_base:
        raise InputError(f"{model.path or 'URDF string'}: the robot {model.name!r} has no moving "
                         "joint (nothing to move with a fixed base; floating_base=True makes it "
                         "a free body)")
    check_masses(model, tree, floating_base)
    robot = Robot(model, tree, floating_base=bool(floating_base), gravity=g,
                  symbolic_inertia=bool(symbolic_inertia), joint_dynamics=bool(joint_dynamics),
                  limits=bool(limits))
    robot.urdf_source = model.path if model.path is not None else str(path_or_xml)
    robot.package_dirs = ([package_dirs] if isinstance(package_dirs, (str, os.PathLike))
                          else package_dirs)
    return robot
