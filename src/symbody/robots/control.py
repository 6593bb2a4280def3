"""What a controller asks of a robot: frames, Jacobians, centre of mass, dynamics terms, joint
wrenches, each a compiled :class:`~symbody.robots.functions.RobotFunction`.

Mixed into :class:`~symbody.robots.robot.Robot`.  Arguments are in the model's order
(``robot.coordinates``: q (N); ``robot.speeds``: u (o), the dependent speeds of mimic joints
included), one state or many (an extra leading dimension k).  Columns of Jacobians and rows of
generalized forces follow ``robot.speeds``: Pinocchio's velocity order (its v) when the robot
has no mimic joint, the free-flyer's (linear, angular) velocity in the base frame first.

The generalized forces are the model's: M(q) u' + C(q, u) u + g(q) + D u + F sign(u) = tau,
the URDF joint damping D and friction F included when the robot was loaded with
``joint_dynamics=True`` (Pinocchio's ``rnea`` has none of them).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se

from ..compat.sympy import TIME
from ..errors import InputError
from .dynamics import num
from .dynamics_derivatives import ForwardDynamicsDerivatives
from .functions import RobotFunction
from .kinematics import REFERENCES, TreeKinematics, flatten, frame_names, frame_site, homogeneous
from .wrenches import newton_euler

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["RobotControl", "FRAME_QUANTITIES", "EMITTED_MAX_SPEEDS"]

#: up to this many speeds the forward-dynamics derivatives are one emitted kernel; above,
#: the kernel stops at ∂τ/∂x and M and the tree-sparse solve does M⁻¹ (the written-out
#: products -M⁻¹ ∂τ/∂x grow as o³: on Talos, 50 speeds, they compiled for 5 min and ran 8.6x
#: computeABADerivatives; at 19-23 speeds the compilation took over 150 s on a loaded machine)
EMITTED_MAX_SPEEDS = 18

#: what ``frame_function`` gives: its arguments and output shape
FRAME_QUANTITIES = {"placement": (("q",), (4, 4)), "velocity": (("q", "u"), (6,)),
                    "acceleration": (("q", "u", "u_dot"), (6,)),
                    "classical_acceleration": (("q", "u", "u_dot"), (6,)),
                    "jacobian": (("q",), None)}


def _reference(reference: str) -> str:
    ref = str(reference).lower()
    if ref not in REFERENCES:
        raise InputError(f"reference must be one of {', '.join(map(repr, REFERENCES))} "
                         f"(Pinocchio's LOCAL, WORLD, LOCAL_WORLD_ALIGNED), got {reference!r}")
    return ref


class RobotControl:
    """Kinematics and dynamics terms of a :class:`~symbody.robots.robot.Robot` (see the module
    docstring); every function is compiled on first use and kept."""

    # ------------------------------------------------------------------ plumbing
    @cached_property
    def _symbolic(self: Robot) -> dict:
        qs, us, uds, _ = self.symengine_symbols
        names = {}
        for s, a in zip(qs, self.tree_coordinates):
            names[s.name] = a
        for s, a, d in zip(us, self.tree_speeds, uds):
            names[s.name] = a
            names[d.name] = a.diff(TIME)
        names["g"] = self.g
        for p in self.parameters:
            names[p.name] = p
        consts = list(self.eom.constants)
        groups = {"q": list(self.coordinates), "u": list(self.speeds),
                  "u_dot": [s.diff(TIME) for s in self.speeds], "p": consts}
        values = np.array([self.constants[c] for c in consts], dtype=float)
        kin = TreeKinematics(self.tree, qs, us, uds, self.tree_inertias, self.floating_base)
        return {"names": names, "groups": groups, "constants": values, "kinematics": kin,
                "functions": {}, "frames": {}}

    def _function(self: Robot, key: tuple, arguments: tuple, build: Any,
                  always_c: bool = False) -> RobotFunction:
        """The compiled function ``key`` (built by ``build() -> (exprs, shape)`` once;
        ``always_c``: as C whatever its size, see :class:`.RobotFunction`)."""
        parts = self._symbolic
        cache = parts["functions"]
        if key not in cache:
            exprs, shape = build()
            groups = {a: parts["groups"][a] for a in arguments}
            name = "_".join(str(k) for k in key if k)
            cache[key] = RobotFunction(name, groups, exprs, shape, parts["names"],
                                       parts["constants"] if "p" in arguments else None,
                                       always_c=always_c)
        return cache[key]

    def _model_columns(self: Robot, rows: list) -> list:
        """Rows with tree-order columns -> the model's speed order."""
        perm = self.speed_permutation
        return [[row[k] for k in perm] for row in rows]

    def _joint_forces(self: Robot, tau: list, u: list) -> list:
        """tree-order generalized forces + the URDF damping and friction (joint_dynamics)."""
        tau = list(tau)
        if self.joint_dynamics:
            for i, b in enumerate(self.tree.moving):
                d, f = b.joint.damping, b.joint.friction
                sl = self.tree_layout.u_slices[i + 1]
                for k in range(sl.start, sl.stop):
                    if d:
                        tau[k] = tau[k] + num(d) * u[k]
                    if f:
                        tau[k] = tau[k] + num(f) * se.sign(u[k])
        return [tau[k] for k in self.speed_permutation]

    def _gravity_vector(self: Robot) -> tuple:
        g = self.gravity
        gdir = g / np.linalg.norm(g) if g.any() else np.zeros(3)
        if self.floating_base:      # in the frame of the free-flyer's coordinates
            gdir = self.tree.base_placement[0].T @ gdir
        return tuple(num(x) * se.Symbol("g") for x in gdir)

    # ------------------------------------------------------------------ frames
    @property
    def frame_names(self: Robot) -> tuple[str, ...]:
        """The names ``frame_placement`` and the others take: "universe", the URDF links
        (those merged into a body by fixed joints included), the joints, and "root_joint"
        (the free-flyer's frame) with a floating base.  A name that is a link and a joint is
        the link; the joint's frame is its child link's."""
        return frame_names(self.tree, self.floating_base)

    def frame_function(self: Robot, name: str, quantity: str = "placement",
                       reference: str = "local") -> RobotFunction:
        """The compiled function behind ``frame_placement`` (``quantity="placement"``),
        ``frame_velocity`` ("velocity"), ``frame_acceleration`` ("acceleration",
        "classical_acceleration") and ``frame_jacobian`` ("jacobian") of the frame ``name``
        in ``reference`` (ignored for the placement): for export or as a simulation output."""
        seen = self._symbolic["frames"]     # (name, quantity, reference as given) -> function
        key = (name, quantity, reference)
        if type(name) is str and type(reference) is str and key in seen:
            return seen[key]
        if quantity not in FRAME_QUANTITIES:
            raise InputError(f"quantity must be one of {', '.join(map(repr, FRAME_QUANTITIES))}, "
                             f"got {quantity!r}")
        ref = "" if quantity == "placement" else _reference(reference)
        kin: TreeKinematics = self._symbolic["kinematics"]
        site = frame_site(self.tree, name, self.floating_base)
        arguments, shape = FRAME_QUANTITIES[quantity]

        def build():
            if quantity == "placement":
                return homogeneous(*kin.frame_placement(site)), shape
            if quantity == "jacobian":
                J = self._model_columns(kin.frame_jacobian(site, ref))
                return flatten(J), (6, len(self.speeds))
            if quantity == "velocity":
                lin, ang = kin.frame_velocity(site, ref)
            else:
                lin, ang = kin.frame_acceleration(site, ref, quantity != "acceleration")
            return [*lin, *ang], shape

        function = self._function((f"frame_{quantity}", name, ref), arguments, build)
        seen[key] = function
        return function

    def frame_placement(self: Robot, name: str, q: Any) -> np.ndarray:
        """The frame's placement in the world, 4x4 [[R, p], [0, 1]] (R: its axes in world
        coordinates, p: its origin); (k, 4, 4) for q of shape (k, N).  Pinocchio's
        ``data.oMf[frame_id]`` after ``framesForwardKinematics``."""
        f = self._symbolic["frames"].get((name, "placement", "local")) \
            if type(name) is str else None      # (the function of a frame seen before)
        return (f or self.frame_function(name, "placement"))(q)

    def frame_velocity(self: Robot, name: str, q: Any, u: Any,
                       reference: str = "local") -> np.ndarray:
        """The frame's spatial velocity (linear (3), angular (3)) in ``reference``:
        "local" (the frame origin's velocity and ω in the frame's axes), "world" (the velocity
        of the point of the frame's body at the world origin, and ω, world axes) or
        "local_world_aligned" (the frame origin's velocity and ω, world axes): Pinocchio's
        ``getFrameVelocity``.  (6,) or (k, 6)."""
        f = self._symbolic["frames"].get((name, "velocity", reference)) \
            if type(name) is str and type(reference) is str else None
        return (f or self.frame_function(name, "velocity", reference))(q, u)

    def frame_acceleration(self: Robot, name: str, q: Any, u: Any, u_dot: Any,
                           reference: str = "local", classical: bool = False) -> np.ndarray:
        """The frame's spatial acceleration (linear, angular) in ``reference`` (Pinocchio's
        ``getFrameAcceleration``); ``classical=True``: the linear part is the frame origin's
        acceleration, spatial + ω × v (``getFrameClassicalAcceleration``).  With u' = 0 it is
        J'(q, u) u, the term a task-space controller subtracts.  (6,) or (k, 6)."""
        quantity = "classical_acceleration" if classical else "acceleration"
        f = self._symbolic["frames"].get((name, quantity, reference)) \
            if type(name) is str and type(reference) is str else None
        return (f or self.frame_function(name, quantity, reference))(q, u, u_dot)

    def frame_jacobian(self: Robot, name: str, q: Any, reference: str = "local") -> np.ndarray:
        """J (6, o) with ``frame_velocity(name, q, u, reference) = J u``: rows (linear,
        angular), columns ``robot.speeds`` (Pinocchio's ``getFrameJacobian`` in its column
        order; a mimic joint's column is its own speed's, last).  (k, 6, o) for k states."""
        f = self._symbolic["frames"].get((name, "jacobian", reference)) \
            if type(name) is str and type(reference) is str else None
        return (f or self.frame_function(name, "jacobian", reference))(q)

    # ------------------------------------------------------------------ centre of mass
    @cached_property
    def center_of_mass_function(self: Robot) -> RobotFunction:
        """c(q) (3): the centre of mass of the moving bodies in the world (a fixed base's root
        link left out, as Pinocchio's ``centerOfMass``)."""
        kin = self._symbolic["kinematics"]
        args = ("q", "p") if self.symbolic_inertia else ("q",)
        return self._function(("center_of_mass",), args, lambda: (list(kin.center_of_mass()), (3,)))

    @cached_property
    def center_of_mass_jacobian_function(self: Robot) -> RobotFunction:
        """J_c(q) (3, o) with c' = J_c u (Pinocchio's ``jacobianCenterOfMass``)."""
        kin = self._symbolic["kinematics"]
        args = ("q", "p") if self.symbolic_inertia else ("q",)

        def build():
            J = self._model_columns(kin.center_of_mass_jacobian())
            return flatten(J), (3, len(self.speeds))

        return self._function(("center_of_mass_jacobian",), args, build)

    def center_of_mass(self: Robot, q: Any) -> np.ndarray:
        """The centre of mass in the world (3,) or (k, 3) (see ``center_of_mass_function``)."""
        return self.center_of_mass_function(q)

    def center_of_mass_jacobian(self: Robot, q: Any) -> np.ndarray:
        """J_c (3, o) or (k, 3, o): the centre of mass's velocity is J_c u."""
        return self.center_of_mass_jacobian_function(q)

    # ------------------------------------------------------------------ dynamics terms
    def _newton_euler(self: Robot, with_u: bool, with_udot: bool):
        qs, us, uds, _ = self.symengine_symbols
        zeros = [se.Integer(0)] * len(us)
        return newton_euler(self.tree, qs, us if with_u else zeros, uds if with_udot else zeros,
                            self._gravity_vector(), self.tree_inertias, self.floating_base)

    @cached_property
    def inverse_dynamics(self: Robot) -> RobotFunction:
        """tau = inverse_dynamics(q, u, u_dot) (o): the generalized forces that give the
        accelerations u' (recursive Newton-Euler; Pinocchio's ``rnea`` plus the URDF damping
        and friction, see the module docstring).  Rows ``robot.speeds``; the free-flyer's
        first six are the wrench the base would need (force, moment; base frame)."""
        us = self.symengine_symbols[1]

        def build():
            return self._joint_forces(self._newton_euler(True, True).tau, us), (len(us),)

        return self._function(("inverse_dynamics",), ("q", "u", "u_dot", "p"), build)

    @cached_property
    def mass_matrix(self: Robot) -> RobotFunction:
        """M = mass_matrix(q) (o, o), symmetric (composite rigid bodies; Pinocchio's ``crba``),
        rows and columns ``robot.speeds``."""
        o = len(self.speeds)
        return self._function(("mass_matrix",), ("q", "p"), lambda: (self._mass_rows(), (o, o)))

    def _mass_rows(self: Robot) -> list:
        """M's entries, row by row in the model's speed order."""
        M = getattr(self.tree_dynamics, "mass", None)
        if M is None:       # dynamics formed without M: composite rigid bodies here
            from .general_dynamics import form_general_dynamics
            qs, us, _, _ = self.symengine_symbols
            M = form_general_dynamics(self.tree, qs, us, self._gravity_vector(),
                                      self.tree_inertias, self.floating_base).mass
        perm = self.speed_permutation
        return [M[a][b] for a in perm for b in perm]

    @cached_property
    def bias(self: Robot) -> RobotFunction:
        """b = bias(q, u) (o): C(q, u) u + g(q) (+ D u + F sign(u)), so that
        M u' + b = tau (``inverse_dynamics(q, u, 0)``; Pinocchio's ``nonLinearEffects``)."""
        us = self.symengine_symbols[1]

        def build():
            return self._joint_forces(self._newton_euler(True, False).tau, us), (len(us),)

        return self._function(("bias",), ("q", "u", "p"), build)

    @cached_property
    def gravity_torques(self: Robot) -> RobotFunction:
        """g = gravity_torques(q) (o): the generalized forces that hold the robot still
        (Pinocchio's ``computeGeneralizedGravity``)."""
        def build():
            tau = self._newton_euler(False, False).tau
            return [tau[k] for k in self.speed_permutation], (len(tau),)

        return self._function(("gravity_torques",), ("q", "p"), build)

    # ------------------------------------------------------------------ derivatives
    @cached_property
    def inverse_dynamics_derivatives(self: Robot) -> RobotFunction:
        """``dtau_dq, dtau_du, dtau_dudot = inverse_dynamics_derivatives(q, u, u_dot)``: the
        exact derivatives of ``inverse_dynamics``, emitted in O(n d) for a tree of depth d
        (:mod:`.rnea_derivatives`; Pinocchio's ``computeRNEADerivatives``), as one (3, o, o)
        array ((k, 3, o, o) for k states).  Rows and columns ``robot.speeds``; column j of
        ∂τ/∂q is the derivative along coordinate tangent j (``tangent_map``: for a revolute or
        prismatic joint its coordinate, for the free-flyer q ⊕ δ = q exp(δ) in the base
        frame, Pinocchio's ``integrate``); ∂τ/∂u' = M(q).  The URDF damping D adds D to
        ∂τ/∂u (friction F sign(u) is flat where it is differentiable).  On big trees one
        state is a kernel of O(n) per-speed factors and their dot products in C
        (:mod:`.inverse_derivatives`)."""
        from .rnea_derivatives import rnea_derivatives
        qs, us, uds, _ = self.symengine_symbols
        perm = self.speed_permutation

        def build():
            d = rnea_derivatives(self.tree, qs, us, uds, self._gravity_vector(),
                                 self.tree_inertias, self.floating_base)
            du = [list(row) for row in d.dtau_du]
            if self.joint_dynamics:
                for i, b in enumerate(self.tree.moving):
                    sl = self.tree_layout.u_slices[i + 1]
                    for k in range(sl.start, sl.stop):
                        if b.joint.damping:
                            du[k][k] = du[k][k] + num(b.joint.damping)
            exprs = [A[a][b] for A in (d.dtau_dq, du, d.mass) for a in perm for b in perm]
            return exprs, (3, len(perm), len(perm))

        from .inverse_derivatives import inverse_derivatives_function
        return inverse_derivatives_function(self, build)

    @cached_property
    def forward_dynamics_derivatives(self: Robot) -> ForwardDynamicsDerivatives:
        """``du'_dq, du'_du, du'_dtau = forward_dynamics_derivatives(q, u, tau)``, each (o, o)
        ((k, o, o) for k states): the derivatives of u' = M⁻¹ (τ - b(q, u)), the inverse of
        ``inverse_dynamics`` (every speed free; Pinocchio's ``computeABADerivatives``): one
        emitted kernel of (q, u, τ) for fixed-base trees of one-speed joints and up to
        ``EMITTED_MAX_SPEEDS`` speeds (:mod:`.aba_derivatives`), above that and for a
        free-flyer one kernel of
        ∂τ/∂q, ∂τ/∂u and M at u' followed, in the same compiled call, by the tree-sparse
        Lᵀ D L solve (:mod:`symbody.compilation.native_tree_solve`), else (joints of several
        speeds inside the tree) from ``inverse_dynamics_derivatives`` at that u'
        (:mod:`.dynamics_derivatives`);
        columns along q as in ``inverse_dynamics_derivatives``.  ``out=``: a (3, o, o) float
        array the three blocks are written into (one state, the compiled paths)."""
        us = self.symengine_symbols[1]

        def build():
            b = self._joint_forces(self._newton_euler(True, False).tau, us)
            return [*self._mass_rows(), *b], (len(us) * (len(us) + 1),)

        def mass_bias() -> RobotFunction:
            return self._function(("mass_bias",), ("q", "u", "p"), build)

        def inverse_derivatives() -> RobotFunction:
            return self.inverse_dynamics_derivatives

        emitted = tree_solve = None
        if not self.tree_layout.multi_dof:
            # a free-flyer's: the tree-sparse solve is faster (Solo12 and go1 free 0.71-0.73x
            # computeABADerivatives against the emitted kernel's 0.98-1.00x) and compiles faster
            if len(us) > EMITTED_MAX_SPEEDS or self.floating_base:
                tree_solve = self._tree_solve_forward_derivatives()
            else:
                emitted = self._emitted_forward_derivatives()
        return ForwardDynamicsDerivatives(mass_bias, inverse_derivatives, emitted, tree_solve,
                                          size=len(us))

    def _joint_damping_friction(self: Robot) -> tuple[dict, dict]:
        """{tree speed index: coefficient} of the URDF damping and friction (joint_dynamics)."""
        damping, friction = {}, {}
        if self.joint_dynamics:
            for i, b in enumerate(self.tree.moving):
                sl = self.tree_layout.u_slices[i + 1]
                for k in range(sl.start, sl.stop):
                    if b.joint.damping:
                        damping[k] = b.joint.damping
                    if b.joint.friction:
                        friction[k] = b.joint.friction
        return damping, friction

    def _speed_parents(self: Robot) -> list:
        """λ(k) of each speed in tree order (one-speed joints): the speed of the parent
        body's joint, -1 at the root (a free-flyer's six a chain, above everything)."""
        lay, bodies = self.tree_layout, self.tree.bodies
        parent = list(range(-1, 5)) if self.floating_base else []
        last = [5 if self.floating_base else -1] + [0] * (len(bodies) - 1)
        for i in range(1, len(bodies)):
            sl = lay.u_slices[i]
            parent.append(last[bodies[i].parent])
            last[i] = sl.stop - 1
        return parent

    def _tree_solve_forward_derivatives(self: Robot) -> tuple:
        """(kernel, dest, parent, perm) of :mod:`symbody.compilation.native_tree_solve`: one
        kernel of (q, u, τ, p) giving the nonzero entries of the tree-sparse factor M = Lᵀ D L
        (L below the diagonal, D on it), ∂τ/∂q and ∂τ/∂u (tree order) at u' = FD(q, u, τ)
        (:func:`.aba_derivatives.forward_derivative_terms`: u' = M⁻¹ (τ - b) by that emitted
        factor),
        ``dest`` their places in the solve's work array."""
        from .aba_derivatives import forward_derivative_terms
        qs, us, uds, _ = self.symengine_symbols
        structure: dict = {}

        def build():
            damping, friction = self._joint_damping_friction()
            t = forward_derivative_terms(self.tree, qs, us, uds, self._gravity_vector(),
                                         self.tree_inertias, self.floating_base, damping, friction,
                                         self._speed_parents())
            n = len(us)
            exprs, dest = [], []
            for (k, c), x in sorted(t.factor.items()):     # M = Lᵀ D L, as formed for u'
                if x != 0:
                    exprs.append(x)
                    dest.append(k * n + c)
            for block, A in enumerate((t.dtau_dq, t.dtau_du)):
                for k in range(n):
                    for c in range(n):
                        if A[k][c] != 0:
                            exprs.append(A[k][c])
                            dest.append(n * n + 3 * n * k + block * n + c)
            structure["dest"] = dest
            return exprs, (len(exprs),)

        kernel = self._function(("forward_dynamics_terms",), ("q", "u", "u_dot", "p"), build,
                                always_c=True)
        if structure:
            kernel.tree_solve_dest = structure["dest"]
        return kernel, kernel.tree_solve_dest, self._speed_parents(), list(self.speed_permutation)

    def _emitted_forward_derivatives(self: Robot) -> RobotFunction:
        """(∂u'/∂q, ∂u'/∂u, M⁻¹) as one kernel of (q, u, τ, p) (:mod:`.aba_derivatives`),
        (3, o, o); τ takes the place of the ``u_dot`` argument group (o, the speeds' order)."""
        from .aba_derivatives import aba_derivatives
        qs, us, uds, _ = self.symengine_symbols
        perm = self.speed_permutation

        def build():
            damping, friction = self._joint_damping_friction()
            d = aba_derivatives(self.tree, qs, us, uds, self._gravity_vector(), self.tree_inertias,
                                self.floating_base, damping, friction)
            exprs = [A[a][b] for A in (d.dudot_dq, d.dudot_du, d.inverse_mass)
                     for a in perm for b in perm]
            return exprs, (3, len(perm), len(perm))

        return self._function(("forward_dynamics_derivatives",), ("q", "u", "u_dot", "p"), build,
                              always_c=True)

    @cached_property
    def tangent_map(self: Robot) -> RobotFunction:
        """K = tangent_map(q) (N, o): column j is the rate of the coordinates along speed j,
        q' = K(q) u, so a tangent step δ (o, the speeds' order) moves q to first order by
        K δ and ∂f/∂q (columns the coordinates) K is the tangent-space derivative the
        ``*_derivatives`` functions give.  For the free-flyer: ∂(position)/∂v = R (base axes
        to world), ∂(quaternion)/∂ω = (1/2) Q(q) (Pinocchio's ``integrate`` to first order);
        an identity column for every other joint but a planar one."""
        from .joint_models import coordinate_rates
        qs, us, _, _ = self.symengine_symbols
        lay = self.tree_layout
        qpos = {s: i for i, s in enumerate(self.tree_coordinates)}
        rows = [qpos[c] for c in self.coordinates]

        def build():
            K = [[se.Integer(0)] * len(us) for _ in qs]
            joints = [("floating", slice(0, 7), slice(0, 6))] if self.floating_base else []
            joints += [(b.joint.type, lay.q_slices[i + 1], lay.u_slices[i + 1])
                       for i, b in enumerate(self.tree.moving)]
            for kind, qsl, usl in joints:
                rates = coordinate_rates(kind, list(qs[qsl]), list(us[usl]))
                for a, r in zip(range(qsl.start, qsl.stop), rates):
                    for b in range(usl.start, usl.stop):
                        K[a][b] = r.diff(us[b])
            perm = self.speed_permutation
            return [K[a][b] for a in rows for b in perm], (len(rows), len(perm))

        return self._function(("tangent_map",), ("q",), build)

    # ------------------------------------------------------------------ joint wrenches
    @property
    def joint_wrench_names(self: Robot) -> tuple[str, ...]:
        """The joint of each row of ``joint_wrenches``: the moving URDF joints in
        ``robot.joint_names`` order."""
        moving = self.tree.moving
        return tuple(moving[i].joint.name for i in self._free + self.mimic_bodies)

    @cached_property
    def joint_wrenches(self: Robot) -> RobotFunction:
        """W = joint_wrenches(q, u, u_dot) (n, 6): per moving joint (``joint_wrench_names``),
        the wrench its parent exerts on the links below it through the joint, (force,
        moment) at the child link's origin in the child link's axes: Pinocchio's ``data.f``
        after ``rnea``.  Its component along the joint axis is the joint's actuation (the
        rigid-body part of ``inverse_dynamics``); the rest is the joint's constraint."""
        order = self._free + self.mimic_bodies

        def build():
            W = self._newton_euler(True, True).wrenches
            return [e for i in order for e in W[i]], (len(order), 6)

        return self._function(("joint_wrenches",), ("q", "u", "u_dot", "p"), build)
