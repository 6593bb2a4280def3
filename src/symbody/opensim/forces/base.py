"""What a force builder gets (:class:`ForceContext`) and gives back (:class:`ForceContribution`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import symengine as se

from ..mobilizers import ZERO

if TYPE_CHECKING:
    from ..kinematics import TreeKinematics
    from ..model_spec import ModelSpec

__all__ = ["ForceContext", "ForceContribution"]


@dataclass
class ForceContribution:
    """One force element's part of the model.

    ``generalized``: the generalized forces Q (one symengine expression per speed, in the
    model's tree (Simbody) speed order, or None); ``specifieds``: the SymPy functions of time
    it adds as inputs; ``extra_states``: {x_e: x_e'} of its own states (x_e' in symengine
    over the context's symbols, or SymPy);
    ``constants``: {Symbol: value}; ``loads``: SymPy loads for ``model.system``; ``scene``:
    scene items; ``record``: the builder's own description, kept in ``model.forces[name]``;
    ``left_out``: what of the element is not built (a reason, named in ``model.left_out``);
    ``contacts``: its contact points'
    :class:`~symbody.formulation.contact_record.ContactRecord` objects (SymPy, for
    ``model.eom.contacts``: events at the force law's kinks, ``trajectory.contacts``);
    ``contact_loads``: its contact points'
    :class:`~.contact_geometry.ContactLoad` objects (the contact forces as SymPy ``Force``
    loads of ``model.system``); ``system_loads``: the force on ``model.system`` as
    :mod:`~.system_form` loads (point forces, body torques, mobility forces; a force with
    generalized forces and none of ``loads``, ``contact_loads``, ``system_loads`` is not on
    the System, and ``model.system_eom`` warns, naming it); ``source``: the element it was
    built from (tag, name and line; set by ``load_opensim``).
    """

    generalized: list | None = None
    specifieds: tuple = ()
    extra_states: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)
    loads: tuple = ()
    scene: tuple = ()
    record: Any = None
    left_out: str | None = None
    contacts: tuple = ()
    contact_loads: tuple = ()
    system_loads: tuple = ()
    source: str = ""


class ForceContext:
    """The model as a force builder sees it.

    ``spec``: the parsed file (:class:`~..model_spec.ModelSpec`); ``kinematics``: body poses
    and Jacobians (:class:`~..kinematics.TreeKinematics`); ``o``: the number of speeds;
    ``time``: the symengine symbol of time.  Symbols a builder uses in its expressions go
    through :meth:`symbol`, which records the SymPy atom each stands for.
    """

    def __init__(self, spec: ModelSpec, kinematics: TreeKinematics, coordinates: dict,
                 names: dict, time_symbol: Any):
        self.spec = spec
        self.kinematics = kinematics
        self.o = kinematics.o
        self._coordinates = coordinates     # name -> (q_se, u_se, q_sympy, u_sympy, speed index)
        self._names = names                 # symengine name -> SymPy atom (shared with the model)
        self.time = time_symbol

    def coordinate(self, name: str) -> tuple:
        """``(q, u, q_sympy, u_sympy, k)`` of an OpenSim coordinate: its symengine symbols,
        its SymPy dynamicsymbols and the index k of its speed (Simbody order)."""
        try:
            return self._coordinates[name]
        except KeyError:
            raise KeyError(f"no coordinate {name!r} in the model") from None

    @property
    def coordinate_names(self) -> tuple:
        return tuple(self._coordinates)

    def symbol(self, atom: Any) -> se.Symbol:
        """A symengine symbol standing for the SymPy ``atom`` (a Symbol or a function of time)."""
        key = f"_sbf{len(self._names)}_{getattr(atom, 'name', getattr(atom, 'func', 'x'))}"
        for k, v in self._names.items():
            if v == atom:
                return se.Symbol(k)
        self._names[key] = atom
        return se.Symbol(key)

    @property
    def names(self) -> dict:
        """{symengine symbol name: the SymPy atom it stands for} (for
        :class:`~symbody.symengine_bridge.SympyConverter`)."""
        return self._names

    def frame(self, element: Any, socket: str = "parent_frame"):
        """The body and placement (:class:`~..model_spec.Placement`) of the frame a force
        element's component names (a path point's ``socket_parent_frame``, a 3.x
        ``<body>``)."""
        return self.spec.frame_of(element, socket)

    def point(self, element: Any, location: Any, socket: str = "parent_frame") -> list:
        """The ground position (3, symengine) of ``location`` (3, in the frame the element's
        socket names)."""
        place = self.frame(element, socket)
        return self.kinematics.point(place.body, place.point(location))

    def zeros(self) -> list:
        return [ZERO] * self.o

    def coordinate_force(self, name: str, value: Any) -> list:
        """Q of a generalized force ``value`` on coordinate ``name`` (for joints with q' = u,
        the speed's own row)."""
        Q = self.zeros()
        Q[self.coordinate(name)[4]] = value
        return Q

    def point_force(self, body: str, r: Any, force: Any) -> list:
        """Q = J_Pᵀ F of a force F (3, ground coordinates) at the point r (3, body frame)."""
        J = self.kinematics.point_jacobian(body, r)
        return [J[0][k] * force[0] + J[1][k] * force[1] + J[2][k] * force[2]
                for k in range(self.o)]

    def body_torque(self, body: str, torque: Any) -> list:
        """Q = J_ωᵀ T of a torque T (3, ground coordinates) on a body."""
        J = self.kinematics.angular_jacobian(body)
        return [J[0][k] * torque[0] + J[1][k] * torque[1] + J[2][k] * torque[2]
                for k in range(self.o)]
