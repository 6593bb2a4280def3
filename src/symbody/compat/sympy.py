"""SymPy internals symbody relies on, in one place (checked on the versions in ``CHECKED_ON``).

Why each is used (and why no public API does the same job at the same cost):

- ``Add._from_args`` / ``Mul._from_args`` with SymPy's ``_addsort`` / ``_mulsort``: the
  symengine -> SymPy conversion (:mod:`symbody.symengine_bridge`) and Kane's compact forms
  rebuild sums and products whose arguments are already flat and canonical.  The public
  ``Add(*args, evaluate=False)`` gives the same object but goes through SymPy's cache and
  sympifies and scans every argument again, which on the large models is a measurable part of
  formation.
- ``Basic._hashable_content``: the arguments SymPy's own ``Basic.compare`` orders by; the
  canonical sort key is built from it.
- ``Symbol._assumptions_orig``: the assumptions a symbol was created with (``Symbol("m",
  positive=True)`` -> ``{"positive": True}``), which saved models store; the public
  ``assumptions0`` holds the derived ones too.
- ``dynamicsymbols._t``: the time symbol every ``dynamicsymbols`` function is applied to
  (:data:`TIME`); SymPy documents it under this name and offers no other.
- ``ReferenceFrame._dcm_dict`` / ``_ang_vel_dict``: the orientations and angular velocities
  the user gave between neighbouring frames.  ``dcm()`` and ``ang_vel_in()`` are public but
  compose along a path (and simplify nothing), which is the work the frame-vector code does
  once per model instead of once per pair.
- ``KanesMethod._qdep``, ``_udep``, ``_uaux``, ``_f_h``, ``_k_nh``, ``_f_nh`` and
  ``LagrangesMethod._hol_coneqs``: the dependent coordinates and speeds and the constraint
  equations of SymPy's own method objects, which symbody's symbolic linearizer accepts.
  SymPy makes them public only through ``to_linearizer()``, which also splits Fr* into
  SymPy's general form symbolically (1.4 s on the Whipple bicycle, against 0.08 s for the
  whole linearization); everything else the linearizer needs is read from public
  attributes (``q``, ``u``, ``kindiffdict()``, ``mass_matrix``, ``forcing``, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy as sm
from sympy.core.add import _addsort
from sympy.core.mul import _mulsort
from sympy.physics.vector import dynamicsymbols

__all__ = ["CHECKED_ON", "TIME", "add_sort", "mul_sort", "add_from_args", "mul_from_args",
           "hashable_content", "original_assumptions", "neighbour_dcms",
           "neighbour_angular_velocities", "kanes_method_constraints",
           "lagranges_method_holonomic"]

#: SymPy versions these helpers were checked on (tests/compat/test_compat_sympy.py).
CHECKED_ON = ("1.14.0",)

#: The time symbol of ``dynamicsymbols`` (``q1(t)``'s ``t``): ``dynamicsymbols._t``, the name
#: SymPy's own documentation uses for it.
TIME: sm.Symbol = dynamicsymbols._t


# The hot ones are SymPy's own callables under public names (no wrapper call: the
# symengine -> SymPy conversion calls them once per node of every expression).

#: ``add_sort(args)``: sort the terms of a sum in place into SymPy's canonical order
#: (``sympy.core.add._addsort``).
add_sort: Callable[[list], None] = _addsort

#: ``mul_sort(args)``: sort the factors of a product in place into SymPy's canonical order
#: (``sympy.core.mul._mulsort``).
mul_sort: Callable[[list], None] = _mulsort

#: ``add_from_args(args, commutative=None)``: the sum of ``args``, which must be flat,
#: canonical and sorted (``Add._from_args``); ``commutative=True`` when every term is known to
#: commute (skips SymPy's check).
add_from_args: Callable[..., sm.Expr] = sm.Add._from_args

#: ``mul_from_args(args, commutative=None)``: the product of ``args``, flat, canonical and
#: sorted (``Mul._from_args``).
mul_from_args: Callable[..., sm.Expr] = sm.Mul._from_args

def hashable_content(expr: sm.Basic) -> tuple:
    """What SymPy compares two expressions of one class by (``Basic._hashable_content``).

    (A function, not ``operator.methodcaller``: on CPython 3.11 the call costs about 45 ns
    more than the method call itself, methodcaller's about 130 ns.)
    """
    return expr._hashable_content()


def original_assumptions(symbol: sm.Symbol) -> dict[str, Any]:
    """The assumptions ``symbol`` was created with (``Symbol._assumptions_orig``), a new dict."""
    return dict(symbol._assumptions_orig)


def function_assumptions(func: Any) -> dict[str, Any]:
    """The assumptions an undefined function (``dynamicsymbols('q1').func``) was made with
    (``UndefinedFunction._kwargs``), a new dict; empty when it has none."""
    return dict(getattr(func, "_kwargs", None) or {})


def neighbour_dcms(frame: Any) -> dict:
    """{neighbouring frame: direction cosine matrix} as oriented (``ReferenceFrame._dcm_dict``).

    The matrix ``C`` of a neighbour ``B`` is ``frame.dcm(B)``.  The dict is SymPy's own: read
    it, do not change it.
    """
    return frame._dcm_dict


def neighbour_angular_velocities(frame: Any) -> dict:
    """{neighbouring frame: angular velocity of ``frame`` in it} as given (``_ang_vel_dict``).

    The dict is SymPy's own: read it, do not change it.
    """
    return frame._ang_vel_dict


def kanes_method_constraints(km: Any) -> dict[str, Any]:
    """The constraint data of SymPy's ``KanesMethod`` that it keeps private.

    Returns ``{"q_dep", "u_dep", "u_aux"}`` (lists of functions of time) and ``{"f_h",
    "k_nh", "f_nh"}`` (the configuration constraints f_h = 0 (M x 1) and the velocity
    constraints k_nh u + f_nh = 0 (m x o, m x 1), as matrices, empty when there are none):
    ``_qdep``, ``_udep``, ``_uaux``, ``_f_h``, ``_k_nh``, ``_f_nh``.
    """
    def column_list(x: Any) -> list:
        return list(x) if x is not None else []

    def matrix(x: Any) -> sm.Matrix:
        return sm.Matrix(x) if x is not None else sm.Matrix()

    return {"q_dep": column_list(km._qdep), "u_dep": column_list(km._udep),
            "u_aux": column_list(km._uaux), "f_h": matrix(km._f_h), "k_nh": matrix(km._k_nh),
            "f_nh": matrix(km._f_nh)}


def lagranges_method_holonomic(lm: Any) -> sm.Matrix:
    """The configuration constraints of SymPy's ``LagrangesMethod`` (``_hol_coneqs``, M x 1)."""
    hol = getattr(lm, "_hol_coneqs", None)
    return sm.Matrix(hol) if hol is not None else sm.Matrix()
