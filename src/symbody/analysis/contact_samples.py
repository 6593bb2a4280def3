"""The contacts of a simulation at its samples: ``trajectory.contacts[name]`` (issue 37).

For each contact point of the model (``model.contacts``, one
:class:`~symbody.formulation.contact_record.ContactRecord` each) the run records, at its
samples, the gap g, its rate g', the normal force F_n, the friction force (F_t1, F_t2) and
slip velocity (v_t1, v_t2) along the contact's tangent basis, the elastic energy V stored
in the contact's spring, the power P of its loads and the energy it has dissipated,

    D(t) = -∫_{t0}^{t} P dτ - (V(t) - V(t0))      (>= 0),

so that E(t) + V(t) + D(t) = E(t0) + V(t0) + the work of the inputs (E the mechanical
energy without the contacts' springs; ``trajectory.contacts.elastic_energy`` and
``.dissipated`` sum them over the contacts).  The integral is taken on the integrator's own
dense output, step by step (no step straddles a kink of a contact's force: the switching
functions are events): P at each step's Chebyshev-Lobatto nodes, interpolated by a
polynomial of the dense output's degree and integrated exactly (Clenshaw-Curtis; a sample
inside a step takes the integral of the interpolant up to its time), so the balance holds
to about the integration tolerance.  Without the dense output (``Solver(dense_output=False)``)
4-point Gauss-Legendre on each interval between samples, on the trajectory's cubic Hermite
interpolant, does, less accurately (2e-5 of the energy for the bouncing ball of the tests).

The arrays live in ``trajectory.outputs`` as "<name>.<quantity>" (saved with the
trajectory); ``trajectory.contacts`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..compat.sympy import TIME
from ..compilation import make_function

if TYPE_CHECKING:
    from ..compilation import NumericModel
    from .trajectory import Trajectory

__all__ = ["ContactSamples", "ContactTraces", "attach_contacts", "contact_views", "QUANTITIES"]

#: the quantities of a contact in ``trajectory.outputs`` ("<name>.<quantity>"); the
#: friction force and slip velocity are (k, d) arrays (d tangent directions: 2, 1 for a
#: planar contact, 0 without friction), the others (k,)
QUANTITIES = ("gap", "gap_rate", "normal_force", "friction_force", "slip_velocity", "elastic_energy",
              "power", "dissipated")
_SCALARS = ("gap", "gap_rate", "normal_force", "elastic_energy", "power")


class ContactSamples(NamedTuple):
    """One contact point along a trajectory: ``t`` (k,), ``gap``, ``gap_rate``,
    ``normal_force`` (k,), ``friction_force``, ``slip_velocity`` (k, d: along the tangent
    directions of the record, d = 2, 1 for a planar contact, 0 without friction),
    ``elastic_energy``, ``power``, ``dissipated`` (k,)."""

    name: str
    t: np.ndarray
    gap: np.ndarray
    gap_rate: np.ndarray
    normal_force: np.ndarray
    friction_force: np.ndarray
    slip_velocity: np.ndarray
    elastic_energy: np.ndarray
    power: np.ndarray
    dissipated: np.ndarray
    #: exact friction: 1.0 where the contact sticks, 0.0 where it slips (k,); None otherwise
    stick: np.ndarray | None = None

    @property
    def mode(self) -> np.ndarray | None:
        """Exact friction: "stick" or "slip" at each sample (k,); None for other contacts."""
        return None if self.stick is None else np.where(self.stick > 0.5, "stick", "slip")

    def __getitem__(self, key):                     # type: ignore[override]
        """``samples["normal_force"]`` as well as ``samples.normal_force`` (and tuple indices)."""
        if isinstance(key, str):
            if key not in self._fields:
                raise KeyError(f"a contact's samples hold {', '.join(self._fields)}; not {key!r}")
            return getattr(self, key)
        return tuple.__getitem__(self, key)

    def keys(self) -> tuple[str, ...]:
        return self._fields


class ContactTraces(dict):
    """``{name: ContactSamples}``, with the sums over the contacts ``elastic_energy`` and
    ``dissipated`` (k,)."""

    def __init__(self, items: dict, k: int) -> None:
        super().__init__(items)
        self._k = k

    def _total(self, field: str) -> np.ndarray:
        out = np.zeros(self._k)
        for samples in self.values():
            out = out + getattr(samples, field)
        return out

    @property
    def elastic_energy(self) -> np.ndarray:
        return self._total("elastic_energy")

    @property
    def dissipated(self) -> np.ndarray:
        return self._total("dissipated")


def contact_views(traj: Trajectory) -> ContactTraces:
    """``trajectory.contacts``: the ContactSamples of the contacts whose quantities the
    trajectory's outputs hold."""
    out = traj.outputs
    suffix = ".dissipated"
    names = [key[:-len(suffix)] for key in out if key.endswith(suffix)
             and all(f"{key[:-len(suffix)]}.{q}" in out for q in QUANTITIES)]
    items = {name: ContactSamples(name, traj.t, *(np.asarray(out[f"{name}.{q}"]) for q in QUANTITIES),
                                  stick=np.asarray(out[f"{name}.stick"]) if f"{name}.stick" in out else None)
             for name in names}
    return ContactTraces(items, len(traj.t))


def _inputs(model: NumericModel, r_fun: Callable | None, times: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The specified inputs (k, s) at ``times`` and states X (model.states layout); NaN where
    the input function fails."""
    s = len(model.specifieds)
    R = np.full((len(times), s), np.nan)
    if not s:
        return R
    values = getattr(r_fun, "values", None)
    if values is not None:                 # constant inputs
        R[:] = np.asarray(values, dtype=float).ravel()
        return R
    many = getattr(r_fun, "many", None)
    if many is not None:                   # inputs that evaluate many states at once
        return np.asarray(many(times, X), dtype=float).reshape(len(times), s)
    for i in range(len(times)):
        try:
            R[i] = np.asarray(r_fun(times[i], X[i]), dtype=float).ravel()
        except Exception:                  # noqa: BLE001 - the run reports the input's failure
            pass
    return R


def _arguments(model: NumericModel) -> list:
    """The contact kernels' arguments: t, q, u, the constants, the specifieds and, when the
    model has them, the extra states (a per-impact restitution's impact states)."""
    args = [TIME, list(model.coordinates), list(model.speeds), list(model.constants),
            list(model.specifieds)]
    return args + [list(model.extra_states)] if model.extra_states else args


def _extra(model: NumericModel, X: np.ndarray) -> tuple:
    """The extra states' columns of the states X (k, states), as the kernels' last argument."""
    e = len(model.extra_states)
    return (X[:, X.shape[1] - e:],) if e else ()


def attach_contacts(traj: Trajectory, model: NumericModel, P: np.ndarray, r_fun: Callable | None) -> None:
    """Evaluate the contacts' quantities at the samples of ``traj`` into its outputs (module
    docstring)."""
    records = tuple(getattr(model, "contacts", ()) or ())
    if not records or not len(traj.t):
        return
    args = _arguments(model)
    exprs: list = []
    blocks = []                  # (start, number of tangent directions) of each record
    for rec in records:
        blocks.append((len(exprs), len(rec.slip_velocity)))
        exprs += [getattr(rec, q) for q in _SCALARS]
        exprs += list(rec.friction_force) + list(rec.slip_velocity)
    f = make_function(args, exprs, name="contact quantities")
    T, Q, U = traj.t, traj.q, traj.u
    k = len(T)
    R = _inputs(model, r_fun, T, traj.x)
    Pk = np.broadcast_to(np.asarray(P, dtype=float), (k, len(P)))
    values = np.asarray(f(T, Q, U, Pk, R, *_extra(model, traj.x)), dtype=float).reshape(k, len(exprs))
    work = _work(traj, model, records, P, r_fun)
    n = len(_SCALARS)
    for j, (rec, (a, d)) in enumerate(zip(records, blocks)):
        out = dict(zip(_SCALARS, values[:, a:a + n].T))
        out["friction_force"] = values[:, a + n:a + n + d].copy()
        out["slip_velocity"] = values[:, a + n + d:a + n + 2 * d].copy()
        V = out["elastic_energy"]
        out["dissipated"] = -work[:, j] - (V - V[0])
        for q in QUANTITIES:
            traj.outputs[f"{rec.name}.{q}"] = np.array(out[q])


def _work_between_samples(traj: Trajectory, model: NumericModel, power: Callable, P: np.ndarray,
                          r_fun: Callable | None, n: int) -> np.ndarray:
    """∫ P dt (k, n) without the integrator's steps: 4-point Gauss-Legendre on each interval
    between samples, the states there from the trajectory's cubic Hermite interpolant."""
    T = traj.t
    k = len(T)
    out = np.zeros((k, n))
    if k < 2:
        return out
    nodes, weights = np.polynomial.legendre.leggauss(4)
    h = np.diff(T)
    times = (T[:-1, None] + 0.5 * (nodes[None, :] + 1.0) * h[:, None]).ravel()
    Q, U = traj.interpolate(times)
    X = traj(times)
    R = _inputs(model, r_fun, times, np.atleast_2d(X))
    Pn = np.broadcast_to(np.asarray(P, dtype=float), (len(times), len(P)))
    values = np.asarray(power(times, Q, U, Pn, R, *_extra(model, np.atleast_2d(X))),
                        dtype=float).reshape(k - 1, 4, n)
    intervals = 0.5 * h[:, None] * np.einsum("j,ijn->in", weights, values)
    out[1:] = np.cumsum(intervals, axis=0)
    return out


def _work(traj: Trajectory, model: NumericModel, records: tuple, P: np.ndarray,
          r_fun: Callable | None) -> np.ndarray:
    """∫ P dt of each contact from the first sample to each sample (k, contacts)."""
    k = len(traj.t)
    steps = traj.steps
    f = make_function(_arguments(model), [rec.power for rec in records], name="contact power")
    if steps is None or not len(steps):
        return _work_between_samples(traj, model, f, P, r_fun, len(records))
    from numpy.polynomial import chebyshev as C

    S, nodes, w = steps.values.shape
    N, o = model.N, model.o
    s_nodes = 0.5 * (1.0 - np.cos(np.pi * np.arange(nodes) / (nodes - 1)))
    h = steps.t_end - steps.t_start
    times = (steps.t_start[:, None] + s_nodes[None, :] * h[:, None]).ravel()
    W = steps.values.reshape(S * nodes, w)
    Q, U = W[:, :N], W[:, N:N + o]
    X = np.concatenate([Q, U[:, :model.p], W[:, N + o:]], axis=1)
    R = _inputs(model, r_fun, times, X)
    Pn = np.broadcast_to(np.asarray(P, dtype=float), (len(times), len(P)))
    power = np.asarray(f(times, Q, U, Pn, R, *_extra(model, X)), dtype=float).reshape(S, nodes, len(records))
    x_nodes = 2.0 * s_nodes - 1.0
    # Chebyshev series of P in each step (exact interpolation at the nodes), integrated from -1
    coef = C.chebfit(x_nodes, power.transpose(1, 0, 2).reshape(nodes, S * len(records)), nodes - 1)
    antideriv = C.chebint(coef, lbnd=-1.0)                             # (nodes + 1, S * contacts)
    totals = C.chebval(1.0, antideriv).reshape(S, len(records)) * 0.5 * h[:, None]
    before = np.vstack([np.zeros((1, len(records))), np.cumsum(totals, axis=0)[:-1]])
    idx = steps.locate(traj.t)
    a, hs = steps.t_start[idx], h[idx]
    s = np.divide(traj.t - a, hs, out=np.zeros(k), where=hs != 0)
    x = 2.0 * np.clip(s, 0.0, 1.0) - 1.0
    out = np.empty((k, len(records)))
    anti = antideriv.reshape(nodes + 1, S, len(records))
    for j in range(len(records)):
        partial = C.chebval(x, anti[:, idx, j], tensor=False) * 0.5 * hs
        out[:, j] = before[idx, j] + partial
    return out - out[0]
