"""What an OpenSim model shows of itself besides its muscles: markers (positions, SymPy
points, simulation outputs), the maps between its state and OpenSim's, the SymPy ``System``
and the scene.

A mixin of :class:`~symbody.opensim.model.OpenSimModel` (which builds the equations); the
markers' positions are the ground-frame points r_k(q) = p_body(q) + R_body(q) c_k of each
marker's body-fixed location c_k (len(markers) x 3).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm

if TYPE_CHECKING:
    from ..formulation.eom import EquationsOfMotion
    from ..scene import Scene

__all__ = ["ModelViews"]


class ModelViews:
    """Markers, OpenSim state maps, SymPy System and scene of an
    :class:`~symbody.opensim.model.OpenSimModel` (module doc)."""

    @cached_property
    def markers(self) -> dict:
        """{name: (body, location (3, body frame))} of the file's markers."""
        return {m.name: (m.body, np.asarray(m.location, dtype=float)) for m in self.spec.markers}

    @cached_property
    def _marker_function(self):
        from ..compilation import make_function
        exprs = self.marker_expressions()
        return make_function([list(self.coordinates)], exprs, name="markers")

    def marker_expressions(self) -> sm.Matrix:
        """The markers' positions in the ground frame (len(markers) x 3, SymPy, in q)."""
        rows = []
        for body, loc in self.markers.values():
            p = self.kinematics.point(body, loc)
            rows.append([self.sympy_converter(e) for e in p])
        return sm.Matrix(rows) if rows else sm.zeros(0, 3)

    def marker_outputs(self) -> dict:
        """``{"<marker>.x": expr, ...}`` for ``simulate(..., outputs=...)``."""
        E = self.marker_expressions()
        return {f"{n}.{a}": E[i, k] for i, n in enumerate(self.markers) for k, a in enumerate("xyz")}

    def marker_positions(self, q: Any) -> np.ndarray:
        """The markers' positions (len(markers) x 3, ground frame) at q (model order)."""
        return np.asarray(self._marker_function(np.asarray(q, dtype=float)), dtype=float)

    # ------------------------------------------------------------------ OpenSim's state
    def to_opensim_state(self, q: Any, u: Any = None) -> tuple:
        """``(Q, U)``: OpenSim's (Simbody's) generalized coordinates and speeds of our q (model
        order) and u (all speeds, model order; default zeros)."""
        from .states import to_opensim
        return to_opensim(self, q, u)

    def from_opensim_state(self, Q: Any, U: Any = None) -> tuple:
        """``(q, u)`` in the model's order from OpenSim's Q and U (Simbody order; or an
        OpenSim ``State``, read through its ``getQ``/``getU``)."""
        from .states import from_opensim
        return from_opensim(self, Q, U)

    def extra_states_to_opensim(self, z: Any) -> dict:
        """{OpenSim state-variable path (``/forceset/<muscle>/fiber_length``): value} of the
        extra states z (``eom.extra_states`` order: each muscle's activation, fiber length)."""
        from .muscle_states import extra_to_opensim
        return extra_to_opensim(self, z)

    def extra_states_from_opensim(self, values: Any) -> np.ndarray:
        """The extra states z (``eom.extra_states`` order) from {OpenSim state-variable path:
        value}, or from ``(osim_model, state)``."""
        from .muscle_states import extra_from_opensim
        return extra_from_opensim(self, values)

    # ------------------------------------------------------------------ SymPy / scene
    @cached_property
    def system_parts(self):
        from .system import build_system
        return build_system(self)

    @property
    def system(self):
        """A ``sympy.physics.mechanics.System`` of the bodies, joints and loads (gravity, the
        force builders' loads and the contact forces), built on first access; warns naming
        the forces it leaves out (muscles, path forces: ``system_parts.left_out``)."""
        from .system import warn_left_out
        warn_left_out(self, self.system_parts, "model.system")
        return self.system_parts.system

    def system_eom(self, loads: Any = (), name: str | None = None) -> EquationsOfMotion:
        """The equations of ``model.system`` (with what the user added) and ``loads``, by
        symbody's KanesMethod (SymPy's vector algebra: small models;
        :func:`symbody.opensim.system.system_eom`)."""
        from .system import system_eom
        self._refuse_dynamics("model.system_eom (the equations of model.system)")
        return system_eom(self, loads, name)

    @cached_property
    def marker_points(self) -> dict:
        """{name: SymPy Point} of the markers, fixed in their bodies' frames of ``system``."""
        parts = self.system_parts
        out = {}
        for name, (body, loc) in self.markers.items():
            F, O = parts.frames[body], parts.points[body]
            P = O.locatenew(f"marker_{name}", sum((sm.Float(float(c)) * e for c, e in
                                                   zip(loc, (F.x, F.y, F.z)) if c != 0),
                                                  0 * F.x))
            P.set_vel(F, 0)
            out[name] = P
        return out

    @cached_property
    def scene(self) -> Scene:
        """The bodies' geometry (meshes found beside the file, spheres, cylinders, ...) on the
        body frames, and the markers (:func:`make_scene` with the default search)."""
        return self.make_scene()

    def make_scene(self, geometry_dirs: Any = None) -> Scene:
        """The scene, looking for mesh files in ``geometry_dirs`` (a folder or a list of them)
        first, then beside the model file (:mod:`symbody.opensim.scene`)."""
        from .scene import build_scene
        return build_scene(self, geometry_dirs)
