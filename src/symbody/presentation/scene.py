"""The scene description, re-exported: it lives in :mod:`symbody.scene`.

A Scene is data (shapes on a model's frames and points) that the model zoo builds and the
viewer draws, so it sits below both layers; this module keeps the old import path
``symbody.presentation.scene`` working.
"""

from __future__ import annotations

from ..scene import (  # noqa: F401
    UP_AXES,
    Box,
    Cone,
    Cylinder,
    Mesh,
    Plane,
    Scene,
    Segment,
    Shape,
    Sphere,
    Torus,
    VisualizationFrame,
    check_point_names,
)
from ..scene import __all__ as __all__  # noqa: F401
