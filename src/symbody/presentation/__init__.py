"""Presentation layer: plots, animations, progress indication and the ``symbody`` command.

matplotlib is imported only when a plot or an animation is made.
"""

from ..progress import Progress, as_progress
from .animate import animate, point_positions
from .export import save_gif, save_html, to_html
from .plot import plot, plot_comparison, plot_eigenvalues

__all__ = ["plot", "plot_comparison", "plot_eigenvalues", "animate", "point_positions",
           "save_html", "save_gif", "to_html", "Progress", "as_progress"]
