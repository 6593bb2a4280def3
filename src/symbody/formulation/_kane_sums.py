"""Kane's sums Fr and Fr* = -(MM u' + nonMM), formed frame by frame (see _frame_vectors).

For a body of mass m with mass centre velocity v = sum_r v_r u_r + v_t and angular
velocity w = sum_r w_r u_r + w_t, central inertia I (components in its own frame D,
which turns with w_D/N)::

    MM_rk  = m v_r . v_k + w_r . (I w_k)
    nonMM_r = v_r . (m a_rest + m' v) + w_r . T_rest
    T_rest = I' w + I (alpha_rest - w_D x w) + w_D x (I w)     (in D)

where a_rest and alpha_rest are the accelerations with u' = 0.  Rows r run over the
o speeds and then the s auxiliary speeds; columns k over the o speeds.

A body enters MM_rk and nonMM_r only through its mass (inertia) and its partial
velocities; bodies whose partial velocities are equal (every link below a joint of a
chain has v_r = l_r b_r) share the dot product, and their masses are summed:
MM_rk = sum_(v_r, v_k) (sum_i m_i) v_r . v_k, formed once per distinct pair.  This
keeps the formed sums n^2 in size for an n-link chain (summed body by body they hold
n^3 terms).

Loaded by :meth:`KanesMethod.kanes_equations` (it imports symengine).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import symengine as se
import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody
from sympy.physics.vector import Point, ReferenceFrame, Vector

from ..errors import FormulationError
from ._frame_vectors import FrameVectors, cross3, dot3
from ._symengine_kinematics import ChainRule, SymbolMap

__all__ = ["KaneSums"]

_ZERO = se.Integer(0)


class KaneSums:
    """Accumulates Kane's sums over loads and bodies in symengine.

    ``frame``: the inertial frame N; ``fv``: the frame-vector algebra; ``chain``: the
    chain rule d/dt with the speeds held fixed; ``smap``: SymPy atom -> symengine symbol;
    ``speeds``: the o speeds then the s auxiliary speeds (symengine symbols);
    ``uaux_zero``: the auxiliary speeds -> 0.  Use :meth:`active_forces` (Fr), then
    :meth:`add_body` for every body, then :meth:`inertia_forces` (MM, nonMM).
    """

    def __init__(self, frame: ReferenceFrame, fv: FrameVectors, chain: ChainRule, smap: SymbolMap,
                 speeds: Sequence, o: int, uaux_zero: dict) -> None:
        self.frame, self.fv, self.chain, self.smap = frame, fv, chain, smap
        self.speeds = list(speeds)
        self.o = o
        self.rows = len(self.speeds)         # o + s
        self.uaux_zero = uaux_zero
        self._partials: dict = {}
        self._vec_ids: dict = {}             # structural key of a frame-aware vector -> its id
        self._vecs: list = []                # id -> the vector
        self._mm_weights: dict = {}          # (r, k, id v_r, id v_k) -> [masses]
        self._force_weights: dict = {}       # (r, id v_r, id f part) -> [masses or mass rates]
        self._rot_mm: dict = {}              # (r, k, w_r in D, w_k in D) -> [inertia matrices in D]
        self._rot_force: dict = {}           # (r, w_r in D) -> [torques in D]

    # ------------------------------------------------------------ velocities
    def _with_partials(self, key: Any, velocity) -> tuple:
        """(velocity in N, its partials along the speeds) of a point or frame, once each."""
        got = self._partials.get(key)
        if got is None:
            v = velocity(key)
            got = self._partials[key] = (v, self.fv.partials(v, self.speeds))
        return got

    def _point_velocity(self, P: Point):
        N = self.frame
        try:
            vel = P.vel(N)
        except ValueError as exc:
            raise FormulationError(f"the velocity of point {P} in {N} is not defined: {exc}") from exc
        return self.fv.vector(vel)

    def _frame_velocity(self, F: ReferenceFrame):
        try:
            return self.fv.angular_velocity(F)
        except ValueError as exc:
            raise FormulationError(f"the angular velocity of frame {F} in {self.frame} is not defined: "
                                   f"{exc}") from exc

    def point_partials(self, P: Point) -> tuple:
        return self._with_partials(P, self._point_velocity)

    def frame_partials(self, F: ReferenceFrame) -> tuple:
        return self._with_partials(F, self._frame_velocity)

    # ------------------------------------------------------------ Fr
    def active_forces(self, loads: Sequence) -> list:
        """Fr (o + s symengine expressions) of (Point, force) and (ReferenceFrame, torque) loads."""
        fv = self.fv
        Fr_terms: list[list] = [[] for _ in range(self.rows)]
        for idx, load in enumerate(loads):
            try:
                where, what = load
            except (TypeError, ValueError) as exc:
                raise FormulationError(f"loads[{idx}] = {load!r} is not a (Point or ReferenceFrame, Vector) pair") from exc
            if not isinstance(what, Vector) and what != 0:
                raise FormulationError(f"loads[{idx}]: the force/torque {what!r} is not a Vector")
            if isinstance(where, Point):
                _, parts = self.point_partials(where)
            elif isinstance(where, ReferenceFrame):
                _, parts = self.frame_partials(where)
            else:
                raise FormulationError(f"loads[{idx}] acts on {where!r}, which is neither a Point nor a ReferenceFrame")
            F = fv.substitute(fv.vector(what), self.uaux_zero)
            if not F:
                continue
            for r in range(self.rows):
                if parts[r]:
                    Fr_terms[r].append(fv.dot(parts[r], F))
        return [se.Add(*terms) if terms else _ZERO for terms in Fr_terms]

    # ------------------------------------------------------------ bodies
    def _intern(self, v) -> int:
        key = tuple((f, tuple(c)) for f, c in v.items())
        got = self._vec_ids.get(key)
        if got is None:
            got = self._vec_ids[key] = len(self._vecs)
            self._vecs.append(v)
        return got

    def add_body(self, idx: int, body: Any) -> None:
        """Add a RigidBody's or Particle's terms (``idx``: its place in ``bodies``, for errors)."""
        if isinstance(body, RigidBody):
            P, B = body.masscenter, body.frame
        elif isinstance(body, Particle):
            P, B = body.point, None
        else:
            raise FormulationError(f"bodies[{idx}] = {body!r} is neither a RigidBody nor a Particle")
        self._add_translation(P, self.smap.to_se(sm.sympify(body.mass)))
        if B is not None:
            self._add_rotation(B, body.central_inertia)

    def _add_translation(self, P: Point, mass) -> None:
        """m v_r . v_k (symmetric in r, k < o) and v_r . (m a_rest + m' v), keyed by vector ids."""
        fv, uaux_zero = self.fv, self.uaux_zero
        v, vparts = self.point_partials(P)
        v0 = fv.substitute(v, uaux_zero)
        a_rest = fv.dt_rest(v0, uaux_zero)
        mdot = self.chain.dt_rest(mass)
        # the rest of m a + m' v, frame part by frame part, each with its weight
        f_parts = [(self._intern({f: c}), mass) for f, c in a_rest.items()]
        if mdot != 0:
            f_parts += [(self._intern({f: c}), mdot) for f, c in v0.items()]
        ids = [self._intern(vr) if vr else None for vr in vparts]
        o, mm_weights, force_weights = self.o, self._mm_weights, self._force_weights
        for r in range(self.rows):
            ir = ids[r]
            if ir is None:
                continue
            for k in range(r if r < o else 0, o):
                ik = ids[k]
                if ik is not None:
                    key = (r, k, ir, ik)
                    got = mm_weights.get(key)
                    if got is None:
                        mm_weights[key] = [mass]
                    else:
                        got.append(mass)
            for jf, weight in f_parts:
                key = (r, ir, jf)
                got = force_weights.get(key)
                if got is None:
                    force_weights[key] = [weight]
                else:
                    got.append(weight)

    def _add_rotation(self, B: ReferenceFrame, central_inertia) -> None:
        """w_r . I w_k and w_r . T_rest, keyed by the components of w_r, w_k in D (bodies with
        equal ones have their inertia matrices summed)."""
        fv, uaux_zero, chain = self.fv, self.uaux_zero, self.chain
        w, wparts = self.frame_partials(B)
        D, I = fv.dyadic(central_inertia)
        w0 = fv.express(fv.substitute(w, uaux_zero), D)
        Iw = [dot3(I[i], w0) for i in range(3)]
        alpha = fv.express(fv.dt_rest(fv.substitute(w, uaux_zero), uaux_zero), D)
        if D is B:
            inner = alpha
            Omega = w0
        else:
            Omega = fv.angular_velocity_in(D)
            if uaux_zero:
                Omega = [c.subs(uaux_zero) for c in Omega]
            inner = [a - b for a, b in zip(alpha, cross3(Omega, w0))]
        torque = [dot3(I[i], inner) for i in range(3)]
        torque = [a + b for a, b in zip(torque, cross3(Omega, Iw))]
        Idot = [[chain.dt_rest(c) for c in row] for row in I]
        if any(c != 0 for row in Idot for c in row):
            torque = [a + dot3(Idot[i], w0) for i, a in enumerate(torque)]
        wD = [tuple(fv.express(wp, D)) if wp else None for wp in wparts]
        o = self.o
        for r in range(self.rows):
            wr = wD[r]
            if wr is None:
                continue
            for k in range(r if r < o else 0, o):
                if wD[k] is not None:
                    self._rot_mm.setdefault((r, k, wr, wD[k]), []).append(I)
            self._rot_force.setdefault((r, wr), []).append(torque)

    # ------------------------------------------------------------ MM, nonMM
    def inertia_forces(self) -> tuple[list, list]:
        """(MM, nonMM): MM (o + s rows of o expressions, symmetric in its first o rows) and
        nonMM (o + s), so that Fr* = -(MM u' + nonMM)."""
        mm_terms, force_terms = self._translational_terms()
        for (r, k, wr, wk), inertias in self._rot_mm.items():
            Isum = inertias[0] if len(inertias) == 1 else [
                [se.Add(*[In[i][j] for In in inertias]) for j in range(3)] for i in range(3)]
            e = dot3(wr, [dot3(Isum[i], wk) for i in range(3)])
            if e != _ZERO:
                mm_terms.setdefault((r, k), []).append(e)
        for (r, wr), torques in self._rot_force.items():
            T = torques[0] if len(torques) == 1 else [se.Add(*[Tb[i] for Tb in torques]) for i in range(3)]
            e = dot3(wr, T)
            if e != _ZERO:
                force_terms.setdefault(r, []).append(e)
        o = self.o
        MM = [[_ZERO] * o for _ in range(self.rows)]
        for (r, k), terms in mm_terms.items():
            e = se.Add(*terms) if len(terms) != 1 else terms[0]
            MM[r][k] = e
            if k != r and r < o:
                MM[k][r] = e
        nonMM = [_ZERO] * self.rows
        for r, terms in force_terms.items():
            nonMM[r] = se.Add(*terms) if len(terms) != 1 else terms[0]
        return MM, nonMM

    def _translational_terms(self) -> tuple[dict, dict]:
        """{(r, k): [terms of MM_rk]} and {r: [terms of nonMM_r]} of the translational sums:
        the masses of equal dot products summed, the dot products of equal weights joined."""
        weight_sums: dict = {}

        def weight_sum(ws):
            key = tuple(ws)
            got = weight_sums.get(key)
            if got is None:
                got = weight_sums[key] = se.Add(*ws)
            return got

        vec_dots: dict = {}
        fv, vecs = self.fv, self._vecs

        def vec_dot(ia, ib):
            got = vec_dots.get((ia, ib))
            if got is None:
                got = vec_dots[(ia, ib)] = fv.dot(vecs[ia], vecs[ib])
            return got

        def weighted(pairs) -> list:
            """sum_j W_j d_j as sum_W W (sum of its d_j): the dot products of equal weights joined."""
            by_weight: dict = {}
            for weight, d in pairs:
                if d != _ZERO:
                    by_weight.setdefault(weight, []).append(d)
            return [W * (ds[0] if len(ds) == 1 else se.Add(*ds)) for W, ds in by_weight.items()]

        mm_pairs: dict = {}
        for (r, k, ir, ik), ws in self._mm_weights.items():
            mm_pairs.setdefault((r, k), []).append((weight_sum(ws), vec_dot(ir, ik)))
        mm_terms: dict = {rk: weighted(pairs) for rk, pairs in mm_pairs.items()}
        force_pairs: dict = {}
        for (r, ir, jf), ws in self._force_weights.items():
            force_pairs.setdefault(r, []).append((weight_sum(ws), vec_dot(ir, jf)))
        force_terms: dict = {r: weighted(pairs) for r, pairs in force_pairs.items()}
        return mm_terms, force_terms
