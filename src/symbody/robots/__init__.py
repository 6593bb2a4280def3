"""URDF robots as symbolic equations of motion (``symbody.load_urdf``).

One concept per module: :mod:`.urdf_parse` (reading the file, every error with its line),
:mod:`.tree` (moving bodies, fixed joints merged), :mod:`.dynamics` (M(q) and the bias by
the composite-rigid-body and Newton-Euler algorithms in symengine), :mod:`.articulated_body`
(the forward dynamics in O(n), emitted; its spatial algebra in :mod:`.spatial`), :mod:`.robot` (the
:class:`Robot`: equations, constants, names), :mod:`.regressor` (tau = Y(q, u, u') pi),
:mod:`.pinocchio` (Pinocchio's q, v conventions), :mod:`.system` (the SymPy System and
the scene), :mod:`.joint_models` and :mod:`.general_dynamics` (joints of several speeds:
planar, floating), :mod:`.kinematics`, :mod:`.wrenches`, :mod:`.control` and
:mod:`.functions` (frames, Jacobians, inverse dynamics, joint wrenches as compiled
functions).
"""

from .robot import Robot, load_urdf
from .terms import dynamic_terms

__all__ = ["Robot", "load_urdf", "dynamic_terms"]

# the robot's visual geometry for the 3D viewer (URDF <visual> boxes, cylinders, spheres, meshes)
from .visuals import MeshFileWarning, read_visuals, resolve_mesh, scene_from_urdf  # noqa: E402

__all__ += ["MeshFileWarning", "read_visuals", "resolve_mesh", "scene_from_urdf"]
