"""Contact and friction (issue 37): geometry on bodies, compliant normal forces, friction.

A contact is a load like any other (SymPy ``Force`` objects from :meth:`Contact.to_loads`)
that also carries a :class:`~symbody.formulation.contact_record.ContactRecord` per contact
point, which the equations collect (``eom.contacts``) and the simulation reads (events at
the force law's kinks, ``trajectory.contacts[name]``, the energy dissipated).  See
docs/guides/contact.md.

Modules: :mod:`.geometry` (Plane, Sphere, Box, Capsule, Cylinder), :mod:`.normal_law`
(Hunt-Crossley, restitution, Hertz), :mod:`.friction` (Coulomb, Stribeck, viscous, the
smooth law), :mod:`.pairs` (the kinematics of a contact point), :mod:`.contact`
(:class:`Contact`), :mod:`.loads` (the Force subclass that carries the records).
"""

from ..formulation.contact_record import ContactRecord
from .contact import Contact
from .friction import Friction
from .geometry import Box, Capsule, Cylinder, Plane, Sphere
from .loads import ContactForce, ContactTorque
from .normal_law import damping_from_restitution, effective_modulus, hertz_stiffness, restitution_of

__all__ = ["Contact", "Plane", "Sphere", "Box", "Capsule", "Cylinder", "Friction", "ContactRecord",
           "ContactForce", "ContactTorque", "damping_from_restitution", "restitution_of",
           "hertz_stiffness", "effective_modulus"]
