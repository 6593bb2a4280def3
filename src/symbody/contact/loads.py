"""The loads of a contact: SymPy ``Force`` and ``Torque`` objects that carry the contact's records.

``ContactForce`` is a ``sympy.physics.mechanics.Force`` (a (point, vector) pair to every
formulation: ``System.add_loads``, ``KanesMethod(forcelist=...)``, ``kanes_equations``,
``LagrangesMethod(forcelist=...)``) with one more attribute, ``contact_records``: the
:class:`~symbody.formulation.contact_record.ContactRecord` objects of the contact points
whose force it is.  symbody's formulation classes collect them into
``EquationsOfMotion.contacts``; SymPy's ignore them.
"""

from __future__ import annotations

from collections.abc import Iterable

from sympy.physics.mechanics import Force, Torque

__all__ = ["ContactForce", "ContactTorque"]


class ContactForce(Force):
    """A ``Force`` (point, vector) that carries ``contact_records`` (a tuple)."""

    def __new__(cls, point, force, records: Iterable = ()):
        obj = super().__new__(cls, point, force)
        obj.contact_records = tuple(records)
        return obj


class ContactTorque(Torque):
    """A ``Torque`` (frame, vector) that carries ``contact_records`` (a tuple)."""

    def __new__(cls, frame, torque, records: Iterable = ()):
        obj = super().__new__(cls, frame, torque)
        obj.contact_records = tuple(records)
        return obj
