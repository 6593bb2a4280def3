"""The contact and control methods of :class:`~symbody.robots.robot.Robot` (a mixin: the robot's
equations are formed in :mod:`.robot`; what the ground contacts and joint controllers add to
them, and the methods that add those, live here).

``add_ground_contact`` (:mod:`.ground_contact`) and ``add_pd_control`` (:mod:`.joint_control`)
record what to add and form the equations again: the contacts' and controllers' generalized
forces go into the tree's dynamic block (``_external_forces``), the contact records into
``eom.contacts``, the exact-friction placeholders into the specified inputs;
``contact_scene`` (:mod:`.contact_scene`) draws the ground and the contact forces.
"""

from __future__ import annotations

from typing import Any

import symengine as se
import sympy as sm

from ..errors import InputError

__all__ = ["ContactMethods"]


class ContactMethods:
    """Ground contact and joint control for :class:`~symbody.robots.robot.Robot`."""

    ground_contacts: tuple = ()
    controllers: tuple = ()

    def add_ground_contact(self, plane: Any = None, *, links: Any = None, spheres: Any = None,
                           stiffness: float, exponent: float = 1.5, damping: float | None = None,
                           restitution: float | None = None, impact_speed: float | None = None,
                           friction: Any = None, friction_mode: str = "smooth",
                           name: str = "ground") -> Any:
        """Contact between the links' collision geometry and a plane; ``robot.eom`` (with
        ``eom.contacts``) and ``robot.system`` include it afterwards.  See
        :mod:`symbody.robots.ground_contact` for the geometry and :mod:`symbody.contact` for
        the laws.

        ``plane``: (point, unit normal) in world coordinates (default: z = 0, facing against
        gravity); ``links``: the links whose ``<collision>`` spheres, boxes, cylinders and
        capsules touch it (default: every link with collision geometry); ``spheres``:
        ``{link: radius}`` or ``{link: (radius, offset)}`` (offset in the link frame): a
        sphere instead of the link's collision geometry (needed where it is a mesh; a mesh
        without one is an InputError naming the link); ``stiffness`` k, ``exponent`` n,
        ``damping`` c (Hunt–Crossley: F_n = k δⁿ max(0, 1 + 3/2 c δ')) or ``restitution`` e
        with ``impact_speed`` v; ``friction``: μ or a :class:`symbody.contact.Friction`;
        ``friction_mode``: "smooth" or "exact".  The constants go into ``robot.constants``
        (``{name}_stiffness``, ``{name}_damping``, ``{name}_friction``,
        ``{name}_velocity_scale``).  Returns the
        :class:`~symbody.robots.ground_contact.GroundContact`.
        """
        from .ground_contact import ground_contact
        self._single_speed_joints("add_ground_contact")
        contact = ground_contact(self, plane, links=links, spheres=spheres, stiffness=stiffness,
                                 exponent=exponent, damping=damping, restitution=restitution,
                                 impact_speed=impact_speed, friction=friction,
                                 friction_mode=friction_mode, name=name)
        self.ground_contacts = (*self.ground_contacts, contact)
        self._reform()
        return contact

    def add_pd_control(self, kp: Any, kd: Any, pose: Any = None, joints: Any = None) -> Any:
        """A PD controller on the actuated ``joints`` (default all), inside the equations:
        each joint's input becomes τ + kp (q_ref - q) - kd u, with ``kp``, ``kd`` and the
        reference ``pose`` (numbers, one per joint, or dicts by joint name; pose default 0)
        constants of the model (``kp_<joint>``, ``kd_<joint>``, ``qref_<joint>`` in
        ``robot.constants``).  See :mod:`symbody.robots.joint_control`."""
        from .joint_control import joint_pd
        self._single_speed_joints("add_pd_control")
        controller = joint_pd(self, kp, kd, pose, joints)
        self.controllers = (*self.controllers, controller)
        self._reform()
        return controller

    def _single_speed_joints(self, method: str) -> None:
        """InputError unless every joint (but the free-flyer) has one speed: the link forces'
        tree path (:mod:`.link_forces`) walks revolute, continuous and prismatic joints."""
        layout = getattr(self, "tree_layout", None)
        if layout is not None and layout.multi_dof:
            kinds = sorted({b.joint.type for b in self.tree.moving
                            if b.joint.type not in ("revolute", "continuous", "prismatic")})
            raise InputError(f"robot.{method}: the robot has {', '.join(kinds)} joints (several "
                             "speeds each); ground contact and joint control take revolute, "
                             "continuous and prismatic joints only")

    def _reform(self) -> None:
        """Form the equations again (after contacts or controllers were added); the System is
        rebuilt on its next access."""
        self.eom = self._form()
        self.__dict__.pop("system_parts", None)

    def contact_scene(self, *, forces: bool = True, scale: float | None = None,
                      size: float = 2.0, color: str = "red") -> Any:
        """``robot.scene`` with each ground plane drawn (a square of side ``size``, m) and, with
        ``forces``, each contact's force as a rod from its contact point to the point
        F / ``scale`` away (``scale``, N per m: by default the robot's weight is drawn
        0.25 m long).  See :func:`symbody.robots.contact_scene.contact_scene`."""
        from .contact_scene import contact_scene
        return contact_scene(self, forces=forces, scale=scale, size=size, color=color)

    def _external_forces(self, rest: list, qs: list, us: list, names: dict) -> list:
        """``rest`` (tree order) minus the generalized forces of the ground contacts and the
        joint controllers."""
        if not (self.ground_contacts or self.controllers):
            return rest
        from .ground_contact import contact_generalized_forces
        from .joint_control import pd_generalized_forces

        symbol = self._contact_symbol(names)
        rest = list(rest)
        for i, f in enumerate(contact_generalized_forces(self, qs, us, symbol)):
            rest[i] = rest[i] - f
        for controller in self.controllers:
            for i, f in pd_generalized_forces(self, controller, qs, us, symbol).items():
                rest[i] = rest[i] - f
        return rest

    def _placeholders(self) -> list:
        """The exact-friction placeholders of the ground contacts (specified inputs)."""
        return [f for c in self.ground_contacts for f in c.inputs]

    def _contact_symbol(self, names: dict) -> Any:
        """sympy atom -> the symengine symbol of the tree equations (registered in ``names``)."""
        def symbol(s):
            key = s.name if isinstance(s, sm.Symbol) else f"_sbph_{s.func.__name__}"
            names[key] = s
            return se.Symbol(key)
        return symbol

