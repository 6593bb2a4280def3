"""Presentation layer: plots, animations, the 3D web viewer, progress indication and the ``symbody`` command.

matplotlib is imported only when a plot or an animation is made.
"""

from ..progress import Progress, as_progress
from .animate import animate, point_positions
from .export import save_gif, save_html, to_html
from .options import Camera, FigureOptions
from .plot import plot, plot_comparison, plot_eigenvalues
from .scene import (
    Box,
    Cone,
    Cylinder,
    Mesh,
    Plane,
    Scene,
    Segment,
    Sphere,
    Torus,
    VisualizationFrame,
)
from .viewer import Viewer, view

__all__ = ["plot", "plot_comparison", "plot_eigenvalues", "animate", "point_positions",
           "save_html", "save_gif", "to_html", "Progress", "as_progress",
           "view", "Viewer", "Scene", "VisualizationFrame", "Segment", "Box", "Cylinder", "Cone",
           "Sphere", "Torus", "Plane", "FigureOptions", "Camera"]
__all__ += ["Mesh"]
