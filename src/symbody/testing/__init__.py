"""Testing utilities: random multibody models for differential and invariant tests.

``random_model(seed, n_bodies=3, kind="tree" | "nonholonomic" | "closed_loop", options)``
returns a :class:`RandomModel`: the arguments of Kane's method (usable with
symbody's or SymPy's KanesMethod), its Lagrangian, constants with values and a
consistent state.
"""

from .random_models import KINDS, RandomModel, RandomModelOptions, random_model

__all__ = ["random_model", "RandomModel", "RandomModelOptions", "KINDS"]
