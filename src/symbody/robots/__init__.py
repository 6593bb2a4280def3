"""Robots described by URDF files: their visual geometry for the 3D viewer (:mod:`.visuals`)."""

from .visuals import MeshFileWarning, read_visuals, resolve_mesh, scene_from_urdf

__all__ = ["MeshFileWarning", "read_visuals", "resolve_mesh", "scene_from_urdf"]
