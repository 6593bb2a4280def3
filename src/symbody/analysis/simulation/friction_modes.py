"""Exact Coulomb friction: which contacts stick, which slip, and where that changes (issue 37).

A contact with ``friction_mode="exact"`` is in one of two modes:

- **stick**: its slip velocity is held at zero by a velocity constraint (the pattern's
  variant model, :mod:`symbody.compilation.friction_models`); the friction force is the
  constraint's multiplier, bounded by |F| <= μ_s F_n;
- **slip**: the friction force is -μ F_n v̂ (μ the kinetic coefficient).

The simulation runs piece by piece (:mod:`.friction_pieces`), each piece in one pattern, and
each piece ends at the first of these events (zero crossings located on the steps' dense
output, to ~1e-14 in t):

- ``"<name>: stick -> slip"``: μ_s F_n (1 + 1e-9) - |F| falls through zero (F the stuck
  contact's force); this also ends a stick whose normal force vanishes (lift-off);
- ``"<name>: slip -> stick"``: the slip speed reaches zero, found as the zero of
  v·d - |v|/2 (d the slip direction at the piece's start; with one tangent just d v):
  with two tangents the slip direction may turn, and the zero is either a stop (|v| ≈ 0)
  or the direction having turned by 60 degrees from d, after which the piece goes on with
  d = v̂ (no mode change, nothing recorded);
- ``"<name>: touchdown"``: a slipping contact's gap falls through zero (so that a contact
  landing without slip, e.g. a ball dropped straight down, can stick).

At each event the new pattern is chosen (:func:`select_pattern`): the candidates for stick
are the stuck contacts and the touching contacts whose slip speed is zero; the friction
forces that keep all candidates stuck are computed, and while one exceeds its bound
(largest ratio |F| / μ_s F_n first) that contact is set to slip, along -F̂ (a stuck contact
breaking away; or a stopping one that cannot stay: it slips back, a reversal).  This is a
greedy answer to the contact problem (exact for one contact and for contacts that do not
interact).  Where several stuck contacts hold one body (a box on its corners) their slip
rows are dependent: the constraints keep an independent subset (rows whose singular value
relative to the largest is below ``RANK_TOL`` are dropped) and the friction forces of all of
them are the split of the generalized constraint force that minimises Σ |F_i|² / (μ_s F_n,i)
(so that the contacts share the load in proportion to what they can bear).

A contact touches when F_n > 0, or when its gap is <= 0 and not opening (gap rate <= 0);
only touching contacts stick (a stuck contact whose normal force vanishes is released).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ...compilation import NumericModel
from ...compilation.friction_models import ContactState, FrictionModels

__all__ = ["Pattern", "ContactProblem", "select_pattern", "RANK_TOL", "STICK_SLACK", "STOP_FRACTION"]

#: slip rows of stuck contacts whose singular value (after the rows before them) is below this
#: fraction of the largest are dependent on those and left out of the constraints
RANK_TOL = 1e-3
#: relative slack on the stick bound |F| <= μ_s F_n; the stick -> slip event is at
#: |F| = μ_s F_n (1 + STICK_SLACK) + the force slack, the decision to stick uses half of it
STICK_SLACK = 1e-9
#: a zero of v·d - |v|/2 is a stop when |v| is below this fraction of the slip speed scale
STOP_FRACTION = 1e-6


@dataclass(frozen=True)
class Pattern:
    """One pattern of modes: ``stuck`` ((name, kept tangent rows), ...) in contact order,
    ``dependent`` (the base model's speeds, by index, made dependent by the kept rows) and
    ``directions`` ((name, d), ...) of the slipping contacts."""

    stuck: tuple
    dependent: tuple
    directions: tuple

    @property
    def key(self) -> tuple:
        """What selects the compiled variant (the directions are constants of it)."""
        return self.stuck, self.dependent

    def is_stuck(self, name: str) -> bool:
        return any(n == name for n, _ in self.stuck)

    def direction(self, name: str) -> np.ndarray | None:
        for n, d in self.directions:
            if n == name:
                return np.array(d, dtype=float)
        return None

    def direction_map(self) -> dict[str, np.ndarray]:
        return {n: np.array(d, dtype=float) for n, d in self.directions}

    def modes(self, names: Sequence[str]) -> dict[str, str]:
        return {n: "stick" if self.is_stuck(n) else "slip" for n in names}


class ContactProblem:
    """The contact equations of the base model at one state (t, q, u all speeds, P the run's
    constants, :attr:`~symbody.compilation.friction_models.FrictionModels.parameters`): the
    contact kernel's values and the base model's accelerations, affine in the friction forces
    (the placeholders are inputs): u'(F) = a0 + Σ_j G_j F_j.

    ``r_user``: the values of the model's other specified inputs (in their order)."""

    def __init__(self, fm: FrictionModels, t: float, q: np.ndarray, u: np.ndarray, P: np.ndarray,
                 r_user: np.ndarray | None) -> None:
        self.fm, self.t, self.q, self.u, self.P = fm, t, q, u, P
        self.state: ContactState = fm.evaluate(t, q, u, P)
        #: contacts known to touch here (the one whose touchdown was just located: its gap is
        #: zero to round-off, of either sign)
        self.landed: set[int] = set()
        #: contacts known to leave here (the one whose lift-off was just located)
        self.lifted: set[int] = set()
        base = fm.base
        self.slots = placeholder_slots(fm)
        self.r = np.zeros(len(base.specifieds))
        user = [i for i in range(len(base.specifieds)) if i not in set(self.slots.values())]
        if user:
            self.r[user] = np.asarray(r_user, dtype=float).ravel()

    # ---------------------------------------------------------------- per contact
    def touching(self, i: int) -> bool:
        """F_n > 0, or gap <= 0 and not opening (or just landed)."""
        s = self.state
        if i in self.landed:
            return True
        if i in self.lifted:
            return False
        return bool(s.normal[i] > 0.0 or (s.gap[i] <= 0.0 and s.gap_rate[i] <= 0.0))

    def slip(self, i: int) -> np.ndarray:
        return self.state.slip[self.state.rows[i]]

    def speed_scale(self, i: int) -> float:
        """|W_i| |u|: the slip speed the contact point's motion could have."""
        W = self.state.jacobian[self.state.rows[i]]
        return float(np.linalg.norm(W) * np.linalg.norm(self.u))

    def sliding(self, i: int, d: np.ndarray) -> np.ndarray:
        """-μ F_n v̂ (v̂ = v/|v|, or d where v = 0)."""
        v = self.slip(i)
        speed = float(np.linalg.norm(v))
        direction = v / speed if speed > 0.0 else d
        return -self.state.kinetic[i] * self.state.normal[i] * direction

    # ---------------------------------------------------------------- forces
    def inputs(self, forces: dict[int, np.ndarray]) -> np.ndarray:
        """The base model's specified inputs with the friction forces ``forces`` (contact
        index -> force per tangent; the others zero)."""
        r = self.r.copy()
        for i, f in forces.items():
            for j, value in enumerate(f):
                r[self.slots[(i, j)]] = value
        return r

    def accelerations(self, r: np.ndarray) -> np.ndarray:
        base = self.fm.base
        P = self.P[:len(base.constants)]
        return base.accelerations(self.q, self.u, P, self.t, r if len(r) else None)[0]

    def stick_forces(self, stuck: Sequence[int], sliding: dict[int, np.ndarray],
                     previous: tuple | None = None) -> tuple[dict[int, np.ndarray], tuple, tuple]:
        """The friction forces that keep the contacts ``stuck`` stuck while the others slide
        with ``sliding`` (contact -> force): (forces by contact, kept rows ((name, rows), ...),
        dependent speeds).  ``previous``: a (kept rows, dependent) choice to keep if it still
        serves."""
        s, fm = self.state, self.fm
        rows = [(i, j) for i in stuck for j in range(fm.contacts[i].tangents)]
        if not rows:
            return {}, (), ()
        index = [s.rows[i].start + j for i, j in rows]
        W = s.jacobian[index]
        kept, dependent = independent_rows(fm.base, self.q, self.P, self.t, W, rows, fm, previous)
        r0 = self.inputs(sliding)
        a0 = self.accelerations(r0)
        K = [index[k] for k in kept]
        G = np.empty((fm.base.o, len(K)))
        for col, k in enumerate(kept):
            e = r0.copy()
            e[self.slots[rows[k]]] += 1.0
            G[:, col] = self.accelerations(e) - a0
        A = s.jacobian[K] @ G
        b = s.jacobian[K] @ a0 + s.bias[K]
        F_K = np.linalg.solve(A, -b) if len(K) else np.empty(0)
        Q = s.jacobian[K].T @ F_K
        weights = np.array([s.static[i] * s.normal[i] for i, _ in rows])
        F = distribute(W, Q, weights)
        out = {i: np.array([F[k] for k, (ii, _) in enumerate(rows) if ii == i]) for i in stuck}
        names = fm.names
        kept_rows = tuple((names[i], tuple(j for k, (ii, j) in enumerate(rows) if ii == i and k in kept))
                          for i in stuck)
        return out, kept_rows, dependent

    def force_slack(self, i: int) -> float:
        """The absolute slack on contact i's stick bound: STICK_SLACK times the force that
        the contact's own effective mass needs for the acceleration scale |a0| (so that a
        force that is zero but for round-off sticks at F_n = 0)."""
        s = self.state
        W = s.jacobian[s.rows[i]]
        a0 = self.accelerations(self.r)
        scale = float(np.linalg.norm(W) * np.linalg.norm(a0) + np.linalg.norm(s.bias[s.rows[i]]))
        return STICK_SLACK * scale * self.mass_scale(i)

    def mass_scale(self, i: int) -> float:
        """1 / |W_i G_i|: the effective mass of contact i's first row."""
        s = self.state
        row = s.rows[i].start
        e = self.r.copy()
        e[self.slots[(i, 0)]] += 1.0
        g = self.accelerations(e) - self.accelerations(self.r)
        w = float(abs(s.jacobian[row] @ g))
        return 1.0 / w if w > 0.0 else 0.0


def placeholder_slots(fm: FrictionModels) -> dict[tuple[int, int], int]:
    """(contact index, tangent) -> index of its placeholder in the base model's specifieds."""
    specs = list(fm.base.specifieds)
    return {(i, j): specs.index(lam) for i, c in enumerate(fm.contacts)
            for j, lam in enumerate(c.placeholders)}


def distribute(W: np.ndarray, Q: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The forces F (k,) with Wᵀ F = Q (W (k, o)) that minimise Σ F_j² / w_j: F = D^½ z with z
    the minimum-norm solution of Wᵀ D^½ z = Q (D = diag(w)).  Weights <= 0 are raised to 1e-9
    of the largest (all ones when every weight is zero)."""
    w = np.asarray(weights, dtype=float)
    top = float(w.max()) if w.size else 0.0
    w = np.ones_like(w) if top <= 0.0 else np.maximum(w, 1e-9 * top)
    root = np.sqrt(w)
    z = np.linalg.lstsq(W.T * root[None, :], Q, rcond=RANK_TOL)[0]
    return root * z


def independent_rows(base: NumericModel, q: np.ndarray, P: np.ndarray, t: float, W: np.ndarray,
                     rows: list, fm: FrictionModels, previous: tuple | None) -> tuple[list[int], tuple]:
    """(kept rows of W (indices), the base speeds they make dependent): rows taken in order when
    they add a singular value above RANK_TOL of the largest (after the base model's own
    velocity constraints); the dependent speeds by pivoted QR among the base model's independent
    speeds, sorted.  ``previous`` (kept rows by name, dependent) is kept when it still serves."""
    if base.m:
        B = base.velocity_constraint_matrix(q, P[:len(base.constants)], t)
        Nb = scipy.linalg.null_space(B)
        Wr = W @ Nb
    else:
        B, Wr = None, W
    top = float(np.linalg.norm(Wr, 2)) if Wr.size else 0.0
    kept: list[int] = []
    if previous is not None:
        names = fm.names
        wanted = {(names.index(n), j) for n, js in previous[0] for j in js}
        cand = [k for k, rj in enumerate(rows) if rj in wanted]
        if cand and _rank(Wr[cand], top) == len(cand) == _rank(Wr, top):
            kept = cand
    if not kept:
        for k in range(len(rows)):
            if _rank(Wr[kept + [k]], top) == len(kept) + 1:
                kept.append(k)
    Wk = W[kept]
    p = base.p
    if base.m:
        Bd = B[:, p:]
        Wk = Wk[:, :p] - Wk[:, p:] @ np.linalg.solve(Bd, B[:, :p])
    else:
        Wk = Wk[:, :p]
    if previous is not None and len(previous[1]) == len(kept) and kept and \
            np.linalg.matrix_rank(Wk[:, list(previous[1])], tol=RANK_TOL * top) == len(kept):
        return kept, tuple(previous[1])
    if not kept:
        return kept, ()
    piv = scipy.linalg.qr(Wk, pivoting=True, mode="r")[1]
    return kept, tuple(sorted(int(c) for c in piv[:len(kept)]))


def _rank(A: np.ndarray, top: float) -> int:
    if not A.size or top <= 0.0:
        return 0
    sv = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(sv > RANK_TOL * top))


def select_pattern(problem: ContactProblem, stuck: Sequence[int], candidates: Sequence[int],
                   directions: dict[str, np.ndarray], previous: Pattern | None = None,
                   ) -> tuple[Pattern, dict[int, np.ndarray]]:
    """The pattern at the problem's state (see the module doc): ``stuck`` the contacts stuck
    so far, ``candidates`` the slipping ones that may stick (touching, slip speed zero),
    ``directions`` the slipping contacts' last directions.  Returns (pattern, stick forces)."""
    fm = problem.fm
    names = fm.names
    trying = [i for i in range(len(names)) if (i in stuck or i in candidates) and problem.touching(i)]
    dirs = dict(directions)
    for i in range(len(names)):
        v = problem.slip(i)
        speed = float(np.linalg.norm(v))
        if i not in trying and speed > STOP_FRACTION * problem.speed_scale(i) and speed > 0.0:
            dirs[names[i]] = v / speed
    reuse = (previous.stuck, previous.dependent) if previous is not None else None
    while True:
        sliding = {i: problem.sliding(i, _direction(dirs, names[i], fm.contacts[i].tangents))
                   for i in range(len(names)) if i not in trying}
        forces, kept, dependent = problem.stick_forces(trying, sliding, reuse)
        worst, ratio = None, 1.0
        for i in trying:
            s = problem.state
            bound = s.static[i] * s.normal[i] * (1.0 + 0.5 * STICK_SLACK) + 0.5 * problem.force_slack(i)
            size = float(np.linalg.norm(forces[i]))
            r = size / bound if bound > 0.0 else (np.inf if size > 0.0 else 0.0)
            if r > ratio:
                worst, ratio = i, r
        if worst is None:
            break
        f = forces[worst]
        size = float(np.linalg.norm(f))
        if size > 0.0:
            dirs[names[worst]] = -f / size
        trying.remove(worst)
    slipping = []
    for i in range(len(names)):
        if i in trying:
            continue
        d = _direction(dirs, names[i], fm.contacts[i].tangents)
        v = problem.slip(i)
        if not problem.touching(i) and float(np.linalg.norm(v)) <= STOP_FRACTION * problem.speed_scale(i):
            # in the air without slip: no friction until it lands (where the touchdown event
            # decides), and none in a step that reaches past the landing either
            d = np.zeros_like(d)
        slipping.append((names[i], tuple(map(float, d))))
    return Pattern(kept, dependent, tuple(slipping)), forces


def _direction(dirs: dict, name: str, k: int) -> np.ndarray:
    d = dirs.get(name)
    if d is None or not np.all(np.isfinite(d)) or np.linalg.norm(d) == 0.0:
        d = np.eye(k)[0]
    d = np.asarray(d, dtype=float).reshape(k)
    return d / np.linalg.norm(d)


def condition(function: Callable, index: int) -> Callable:
    """g(t, x, p) = function(t, x)[index] (an event condition)."""
    def g(t, x, p):
        return float(function(t, x)[index])
    return g
