"""The compiled side of exact Coulomb friction: one model per mode pattern, and the contact kernel.

A model whose equations hold contacts with ``friction_mode="exact"`` is simulated piece by
piece, each piece in one pattern of stick and slip (see
:mod:`symbody.formulation.friction_variants` for the equations of a pattern and
:mod:`symbody.analysis.simulation.friction_modes` for the switching).  :func:`friction_models`
gives, per base model, one :class:`FrictionModels` (kept while the base model lives):

- :meth:`FrictionModels.variant`: the compiled model of a pattern, compiled on first use and
  kept, so that each pattern is compiled once per model (and its kernels come from the disk
  cache in later sessions); switching between patterns never compiles again;
- :meth:`FrictionModels.evaluate`: the contact kernel at one state, compiled once: per contact
  the normal force F_n, the gap and its rate, the coefficients μ and μ_s, and per active tangent row the slip
  velocity v = W u + w, its Jacobian W = ∂v/∂u (rows, o) and its acceleration bias
  c = v' - W u' (so that v' = W u' + c), everything the mode decisions need.

The variants' constants are the base model's, then the symbols only the contacts use (μ
and μ_s appear in the contact records only: :attr:`FrictionModels.parameters` is what a
run gives), then every contact's slip-direction constants (:attr:`FrictionModels.constants`),
in that order, so one array layout serves all.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sm

from ..compat.sympy import TIME
from ..errors import InputError
from ..formulation.friction_variants import (
    ExactContact,
    SlipRows,
    exact_contacts,
    friction_variant,
    record_constants,
    slip_rows,
)
from .codegen import make_function
from .named_values import constants_values
from .numeric_model import NumericModel

__all__ = ["FrictionModels", "ContactState", "PatternKey", "friction_models", "has_exact_friction"]

_t = TIME

#: a pattern: ((stuck contact name, kept tangent rows), ...) in contact order, and the base
#: model's speeds (indices) made dependent by the kept rows
PatternKey = tuple[tuple[tuple[str, tuple[int, ...]], ...], tuple[int, ...]]

_MODELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class ContactState:
    """The contact kernel at one state: ``normal`` F_n (c,), ``gap`` and ``gap_rate`` (c,), ``kinetic`` μ (c,),
    ``static`` μ_s (c,), ``slip`` v (r,), ``jacobian`` W (r, o), ``bias`` c (r,) with v' = W u' + c; the
    rows of contact i are ``rows[i]`` (a slice)."""

    normal: np.ndarray
    gap: np.ndarray
    gap_rate: np.ndarray
    kinetic: np.ndarray
    static: np.ndarray
    slip: np.ndarray
    jacobian: np.ndarray
    bias: np.ndarray
    rows: tuple


def has_exact_friction(model: Any) -> bool:
    """True when ``model``'s equations hold a contact with exact friction."""
    eom = getattr(model, "eom", None)
    return any(getattr(r, "friction_mode", None) == "exact" for r in getattr(eom, "contacts", ()) or ())


def friction_models(model: NumericModel) -> FrictionModels:
    """The :class:`FrictionModels` of ``model`` (built on first use, kept with the model)."""
    found = _MODELS.get(model)
    if found is None:
        found = FrictionModels(model)
        _MODELS[model] = found
    return found


class FrictionModels:
    """The exact-friction variants of one base model and its contact kernel (see the module doc).

    Attributes: ``base`` (the model), ``contacts`` (:class:`ExactContact`, in the equations'
    order), ``constants`` (the variants' constants: the base model's, then the direction
    constants), ``rows`` (per contact, its slice of the tangent rows), ``compiled`` (the
    patterns compiled so far).
    """

    def __init__(self, model: NumericModel) -> None:
        eom = model.eom
        if eom is None:
            raise InputError("exact friction needs the model's equations (model.eom): a model loaded "
                             "from a file without them cannot switch between stick and slip; compile "
                             "the equations again")
        self.base = model
        self.contacts: tuple[ExactContact, ...] = exact_contacts(eom)
        self.names = tuple(c.name for c in self.contacts)
        directions = [d for c in self.contacts for d in c.directions]
        #: the run's constants: the model's, then the symbols only the contacts use (μ, μ_s)
        self.parameters = tuple(model.constants) + record_constants(eom, self.contacts)
        self.constants = self.parameters + tuple(directions)
        rows, start = [], 0
        for c in self.contacts:
            rows.append(slice(start, start + c.tangents))
            start += c.tangents
        self.rows = tuple(rows)
        self.nrows = start
        self.compiled: dict[PatternKey, NumericModel] = {}
        self._kernel = None
        self._rows: SlipRows | None = None

    @property
    def slip_rows(self) -> SlipRows:
        """The contacts' slip rows v = W u + w, v' = W u' + c (formed on first use)."""
        if self._rows is None:
            self._rows = slip_rows(self.base.eom, self.contacts)
        return self._rows

    # ------------------------------------------------------------ the contact kernel
    def _build_kernel(self):
        rows = self.slip_rows
        W = rows.W
        slip = list(W * sm.Matrix(self.base.speeds) + rows.w) if W.rows else []
        normal = [c.normal_force for c in self.contacts]
        gap = [c.gap for c in self.contacts]
        gap_rate = [c.gap_rate for c in self.contacts]
        kinetic = [c.kinetic for c in self.contacts]
        static = [c.static for c in self.contacts]
        return make_function([_t, list(self.base.coordinates), list(self.base.speeds),
                              list(self.parameters)],
                             [normal, gap, gap_rate, kinetic, static, slip, W, list(rows.c)],
                             name="exact friction contacts")

    def evaluate(self, t: float, q: np.ndarray, u: np.ndarray, P: np.ndarray) -> ContactState:
        """The contact kernel at (t, q, u) with the run's constants P (``parameters`` order; see
        :class:`ContactState`)."""
        if self._kernel is None:
            self._kernel = self._build_kernel().kernel      # the flat kernel: z -> all outputs
        z = np.concatenate(([t], np.asarray(q, dtype=float), np.asarray(u, dtype=float),
                            np.asarray(P, dtype=float)))
        return self._state(self._kernel(z), ())

    def evaluate_many(self, T: np.ndarray, Q: np.ndarray, U: np.ndarray, P: np.ndarray) -> ContactState:
        """:meth:`evaluate` at k states at once: every field with a leading k (T (k,), Q (k, N),
        U (k, o))."""
        if self._kernel is None:
            self._kernel = self._build_kernel().kernel
        k = len(T)
        Z = np.concatenate([np.asarray(T, dtype=float).reshape(k, 1), np.asarray(Q, dtype=float),
                            np.asarray(U, dtype=float), np.broadcast_to(np.asarray(P, dtype=float),
                                                                       (k, len(P)))], axis=1)
        return self._state(self._kernel.many(Z), (k,))

    def _state(self, out: np.ndarray, lead: tuple) -> ContactState:
        c, r, o = len(self.contacts), self.nrows, self.base.o
        ends = np.cumsum([c, c, c, c, c, r, r * o, r])
        starts = np.concatenate(([0], ends[:-1]))
        fn, gap, rate, mk, ms, v, W, bias = (out[..., a:b] for a, b in zip(starts, ends, strict=True))
        return ContactState(fn, gap, rate, mk, ms, v, W.reshape(lead + (r, o)), bias, self.rows)

    # ------------------------------------------------------------ the variants
    def variant(self, key: PatternKey) -> NumericModel:
        """The compiled model of the pattern ``key`` (compiled on first use, then kept)."""
        found = self.compiled.get(key)
        if found is not None:
            return found
        stuck_rows, dependent = key
        base = self.base
        stuck = dict(stuck_rows)
        speeds = [base.speeds[i] for i in dependent]
        label = ", ".join(f"{n} stuck" for n in stuck) or "all slipping"
        eom = friction_variant(base.eom, self.contacts, stuck, speeds, self.slip_rows,
                               name=f"{getattr(base.eom, 'name', None) or 'model'} ({label})",
                               constants=self.constants)
        variant = NumericModel(eom, constants=list(self.constants), backend=base.backend)
        self.compiled[key] = variant
        return variant

    def parameters_array(self, p: Any) -> np.ndarray:
        """The run's constants (``parameters`` order) from ``p``: a dict keyed by symbol or name,
        or an array (the model's constants, then the record constants)."""
        return constants_values(self.parameters, p)

    def constants_array(self, P: np.ndarray, directions: dict[str, np.ndarray]) -> np.ndarray:
        """The variants' constants: the run's P (``parameters``) followed by each contact's
        direction d (``directions[name]``, default the first tangent)."""
        out = [np.asarray(P, dtype=float)]
        for c in self.contacts:
            d = directions.get(c.name)
            if d is None:
                d = np.eye(c.tangents)[0]
            out.append(np.asarray(d, dtype=float).reshape(c.tangents))
        return np.concatenate(out)
