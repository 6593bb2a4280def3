"""Models for kinematics only: bodies that move without mass or inertia.

A body whose joint has coordinates, with no mass or inertia on it or on any body beyond it
(further from the ground), adds nothing to the kinetic energy: its coordinates' rows and
columns of the mass matrix are zero,

    M(q) = [[M_11, 0], [0, 0]]    (the massless bodies' coordinates last),

so M u' = f cannot give their accelerations and forward dynamics is undefined.  OpenSim loads
such models (the wrist of opensim-models: 28 bodies, none with mass) for kinematics: path
lengths, moment arms, marker positions, inverse kinematics.  ``load_opensim`` loads them with a
:class:`KinematicsOnlyWarning`; ``model.kinematics_only`` is then True and
``model.massless_bodies`` names the bodies; every way to the dynamics (``model.eom``,
``numeric_model``, ``dynamic_terms``, ``system_eom``, hence ``simulate``, the right-hand side,
``linearize`` and ``OptimalControlProblem``) raises :class:`KinematicsOnlyError`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import sympy as sm

from ..errors import InputError

__all__ = ["KinematicsOnlyError", "KinematicsOnlyWarning", "massless_moving_bodies",
           "mass_matrix_function", "KinematicEquations",
           "kinematics_only_error", "warn_kinematics_only"]

#: what works on a kinematics-only model (named in the warning and the errors)
AVAILABLE = ("musculotendon_lengths, moment_arms, marker_positions, scene, "
             "to_opensim_state/from_opensim_state, mass_matrix (with its zero rows)")


class KinematicsOnlyWarning(UserWarning):
    """A model loaded for kinematics only: bodies move without mass (``model.massless_bodies``)."""


class KinematicsOnlyError(InputError):
    """Forward dynamics asked of a kinematics-only model (``model.kinematics_only``)."""


def massless_moving_bodies(spec, nodes: list) -> tuple:
    """The names of the bodies (``nodes`` of the multibody tree, Simbody's order) whose joint
    has coordinates and which carry no mass or inertia on or beyond them."""
    heavy = [False] * len(nodes)
    for n in reversed(nodes[1:]):
        b = spec.bodies[n.name]
        heavy[n.index] = heavy[n.index] or b.mass > 0 or bool(np.any(b.inertia))
        heavy[n.parent] = heavy[n.parent] or heavy[n.index]
    return tuple(n.name for n in nodes[1:] if not heavy[n.index] and n.joint.coordinates)


def _bodies(names: tuple) -> str:
    return ", ".join(repr(n) for n in names)


def kinematics_only_error(where: str, bodies: tuple, what: str) -> KinematicsOnlyError:
    """The error for ``what`` (the dynamics entry point asked for) of a kinematics-only model."""
    return KinematicsOnlyError(
        f"{where}: {what} is not available: the model is for kinematics only "
        f"(model.kinematics_only): the bodies {_bodies(bodies)} move without mass or inertia "
        "on or beyond them, so their rows of the mass matrix are zero and forward dynamics "
        "(simulate, the equations' right-hand side, linearize, optimal control) is undefined; "
        "give these bodies mass and inertia in the file to simulate the model. Available: "
        f"{AVAILABLE}")


def warn_kinematics_only(where: str, bodies: tuple, stacklevel: int) -> None:
    """Warn that the model is loaded for kinematics only, naming the massless bodies."""
    warnings.warn(
        f"{where}: the bodies {_bodies(bodies)} move without mass or inertia on or beyond "
        "them: the mass matrix has zero rows, so forward dynamics (model.eom, numeric_model, "
        "simulate, linearize, optimal control) is unavailable; the model is loaded for "
        f"kinematics only ({AVAILABLE}; model.kinematics_only, model.massless_bodies)",
        KinematicsOnlyWarning, stacklevel=stacklevel + 1)


def mass_matrix_function(mass: list, q: list):
    """q (N,) -> M(q) (N x N) of ``mass`` (N x N symengine expressions in the symbols ``q``),
    by symengine's Lambdify (no compiled kernel: a kinematics-only model has no equations)."""
    import symengine as se

    n = len(q)
    f = se.Lambdify(q, [e for row in mass for e in row] or [0], cse=True, real=True,
                    backend="lambda")

    def evaluate(x):
        x = np.asarray(x, dtype=float)
        if x.shape != (n,):
            raise InputError(f"q must have the model's {n} coordinates, got shape {x.shape}")
        return np.asarray(f(x), dtype=float).ravel()[:n * n].reshape(n, n)

    return evaluate


@dataclass(frozen=True)
class KinematicEquations:
    """The kinematic part of the equations of a kinematics-only model, named as in
    :class:`~symbody.EquationsOfMotion`: ``kindiffdict`` {q': N(q) u}, ``holonomic`` f_h(q, t)
    = 0, and the velocity constraints ``velocity_matrix`` u + ``velocity_rest`` = 0."""

    t: sm.Symbol
    kindiffdict: dict
    holonomic: sm.Matrix
    velocity_matrix: sm.Matrix
    velocity_rest: sm.Matrix
