"""Frame-aware vector algebra in symengine, the way the user defined the frames.

A vector is kept as its components in the frames it was given in, a dict
``{frame: [c_x, c_y, c_z]}`` of symengine expressions (as
sympy.physics.vector.Vector keeps them), and never projected on the inertial
frame.  A dot product of parts in frames A and B is taken as
``a_A . (C_AB b_B)`` with the direction cosine matrix C_AB composed from the
neighbouring frames' matrices along the tree of frames (cached); a cross
product is taken in the frame of its second operand's part, where that part
stays as the user gave it.  Time derivatives in the inertial frame N follow

    d/dt|N (c_F . F) = (dc_F/dt) . F + w_F/N x (c_F . F),

with dc_F/dt by the chain rule (speeds held fixed: the u' terms are the partial
velocities, collected separately by Kane's method).  Small expressions follow
from keeping every vector where the user put it: a rolling disc's mass matrix
stays diag(5mr^2/4, 3mr^2/2, mr^2/4) instead of thousands of sin^2 + cos^2
terms.
"""

from __future__ import annotations

import symengine as se
from sympy.physics.vector import Dyadic, ReferenceFrame, Vector

from ..compat.sympy import neighbour_angular_velocities, neighbour_dcms
from ..errors import FormulationError
from ._symengine_kinematics import ChainRule, SymbolMap

__all__ = ["FrameVectors"]

ZERO = se.Integer(0)


def _is_zero3(c) -> bool:
    return c[0] == ZERO and c[1] == ZERO and c[2] == ZERO


def _add_part(out: dict, frame, comps) -> None:
    got = out.get(frame)
    if got is None:
        out[frame] = list(comps)
    else:
        out[frame] = [a + b for a, b in zip(got, comps)]


def _mat_vec(C, c) -> list:
    """C c for a 3x3 nested list C (zeros skipped)."""
    out = []
    for i in range(3):
        acc = ZERO
        row = C[i]
        for j in range(3):
            if row[j] != ZERO and c[j] != ZERO:
                acc = acc + row[j] * c[j]
        out.append(acc)
    return out


def _mat_mat(A, B) -> list:
    out = []
    for i in range(3):
        row = []
        for j in range(3):
            acc = ZERO
            for k in range(3):
                if A[i][k] != ZERO and B[k][j] != ZERO:
                    acc = acc + A[i][k] * B[k][j]
            row.append(acc)
        out.append(row)
    return out


def _transpose(C) -> list:
    return [[C[j][i] for j in range(3)] for i in range(3)]


def dot3(a, b):
    acc = ZERO
    for i in range(3):
        if a[i] != ZERO and b[i] != ZERO:
            acc = acc + a[i] * b[i]
    return acc


def cross3(a, b) -> list:
    def term(x, y, z, w):
        p = x * y if (x != ZERO and y != ZERO) else ZERO
        q = z * w if (z != ZERO and w != ZERO) else ZERO
        return p - q
    return [term(a[1], b[2], a[2], b[1]), term(a[2], b[0], a[0], b[2]), term(a[0], b[1], a[1], b[0])]


class FrameVectors:
    """Vectors, dyadics, products and time derivatives, frame by frame (symengine).

    ``inertial``: the frame N of the time derivatives; ``symmap``: the shared
    sympy <-> symengine symbol map; ``qdot_map``: q' -> expression in q, u
    (from the kinematic differential equations), applied to every component;
    ``chain``: the chain rule for d/dt with the speeds held fixed.
    """

    def __init__(self, inertial: ReferenceFrame, symmap: SymbolMap, qdot_map: dict, chain: ChainRule):
        self.N = inertial
        self.symmap = symmap
        self.qdot_map = qdot_map
        self.chain = chain
        self._neighbour: dict = {}     # (A, B) -> 3x3 C_AB of neighbouring frames
        self._dcm: dict = {}           # (A, B) -> 3x3 C_AB (v_A = C_AB v_B)
        self._omega: dict = {}         # frame -> its angular velocity in N (frame-aware dict)
        self._omega_in: dict = {}      # frame -> that angular velocity's components in the frame
        self._comp: dict = {}          # sympy component -> symengine
        self._bfs: dict = {}           # frame -> {reachable frame: its parent in the BFS tree}

    # ------------------------------------------------------------ conversion
    def component(self, expr) -> se.Basic:
        got = self._comp.get(expr)
        if got is None:
            got = self.symmap.to_se(expr, self.qdot_map)
            self._comp[expr] = got
        return got

    def vector(self, vec) -> dict:
        """A sympy Vector as ``{frame: [3 symengine components]}`` (zero parts dropped)."""
        if isinstance(vec, Vector):
            out: dict = {}
            for comps, frame in vec.args:
                c = [self.component(comps[i]) for i in range(3)]
                if not _is_zero3(c):
                    _add_part(out, frame, c)
            return {f: c for f, c in out.items() if not _is_zero3(c)}
        if vec == 0:
            return {}
        raise TypeError(f"expected a sympy.physics.vector Vector, got {vec!r}")

    def dyadic(self, dyad) -> tuple[ReferenceFrame, list]:
        """A sympy Dyadic as (frame D, 3x3 components in D); D is the frame of its first term."""
        if not isinstance(dyad, Dyadic):
            raise TypeError(f"expected a sympy.physics.vector Dyadic, got {dyad!r}")
        if not dyad.args:
            return self.N, [[ZERO] * 3 for _ in range(3)]
        D = dyad.args[0][1].args[0][1]
        out = [[ZERO] * 3 for _ in range(3)]
        for coef, v1, v2 in dyad.args:
            c = self.component(coef)
            a = self.express(self.vector(v1), D)
            b = self.express(self.vector(v2), D)
            for i in range(3):
                if a[i] == ZERO:
                    continue
                for j in range(3):
                    if b[j] != ZERO:
                        out[i][j] = out[i][j] + c * a[i] * b[j]
        return D, out

    # ------------------------------------------------------------ rotations
    def _neighbour_dcm(self, A, B) -> list:
        key = (A, B)
        got = self._neighbour.get(key)
        if got is None:
            C = neighbour_dcms(A)[B]
            got = [[self.component(C[i, j]) for j in range(3)] for i in range(3)]
            self._neighbour[key] = got
            self._neighbour[(B, A)] = _transpose(got)
        return got

    def _path(self, A: ReferenceFrame, B: ReferenceFrame) -> list | None:
        """The shortest chain of orientation links from A to B (as ReferenceFrame._dict_list
        finds it: the first one in breadth-first order), or None when there is none.

        One breadth-first search per starting frame, cached: SymPy's ``_dict_list``
        enumerates paths afresh for every pair, which made the n^2 frame pairs of an
        n-link chain cost n^3.
        """
        parents = self._bfs.get(A)
        if parents is None:
            parents = {A: None}
            queue = [A]
            for F in queue:
                for G in neighbour_dcms(F):
                    if G not in parents:
                        parents[G] = F
                        queue.append(G)
            self._bfs[A] = parents
        if B not in parents:
            return None
        path = [B]
        while path[-1] is not A:
            path.append(parents[path[-1]])
        return path[::-1]

    def dcm(self, A: ReferenceFrame, B: ReferenceFrame) -> list:
        """C_AB with v_A = C_AB v_B, composed along the tree of frames."""
        key = (A, B)
        got = self._dcm.get(key)
        if got is not None:
            return got
        path = self._path(A, B)
        if path is None:
            raise FormulationError(
                f"the orientation of frame {A} relative to frame {B} is not defined, but a vector "
                f"with components in {B} is needed in {A}; orient the frames (orient_axis, "
                "orientnew) or give the vectors in frames whose orientation is known")
        C = self._neighbour_dcm(path[0], path[1])
        for i in range(1, len(path) - 1):
            C = _mat_mat(C, self._neighbour_dcm(path[i], path[i + 1]))
        self._dcm[key] = C
        self._dcm[(B, A)] = _transpose(C)
        return C

    def express(self, v: dict, frame) -> list:
        """Components of the vector ``v`` in ``frame``."""
        out = [ZERO, ZERO, ZERO]
        for f, c in v.items():
            if f is frame:
                out = [a + b for a, b in zip(out, c)]
            else:
                rc = _mat_vec(self.dcm(frame, f), c)
                out = [a + b for a, b in zip(out, rc)]
        return out

    # ------------------------------------------------------------ products
    def dot(self, a: dict, b: dict):
        """a . b, each pair of parts taken in the frame of a's part."""
        acc = ZERO
        for fa, ca in a.items():
            for fb, cb in b.items():
                if fa is fb:
                    acc = acc + dot3(ca, cb)
                else:
                    acc = acc + dot3(ca, _mat_vec(self.dcm(fa, fb), cb))
        return acc

    def cross(self, a: dict, b: dict) -> dict:
        """a x b, taken in the frames of b's parts (a expressed there)."""
        out: dict = {}
        for fb, cb in b.items():
            c = cross3(self.express(a, fb), cb)
            if not _is_zero3(c):
                _add_part(out, fb, c)
        return out

    def scale(self, s, v: dict) -> dict:
        return {f: [s * x for x in c] for f, c in v.items()}

    def add(self, *vs: dict) -> dict:
        out: dict = {}
        for v in vs:
            for f, c in v.items():
                _add_part(out, f, c)
        return out

    # ------------------------------------------------------------ kinematics
    def angular_velocity(self, frame) -> dict:
        """w_frame/N as the user gave it (frame-aware, q' replaced through the kinematics)."""
        got = self._omega.get(frame)
        if got is None:
            if frame is self.N:
                got = {}
            else:   # a direct link is the shortest path ang_vel_in would sum along
                direct = neighbour_angular_velocities(frame).get(self.N)
                got = self.vector(direct if direct is not None else frame.ang_vel_in(self.N))
            self._omega[frame] = got
        return got

    def angular_velocity_in(self, frame) -> list:
        """Components of w_frame/N in ``frame`` itself."""
        got = self._omega_in.get(frame)
        if got is None:
            got = self.express(self.angular_velocity(frame), frame)
            self._omega_in[frame] = got
        return got

    def dt_rest(self, v: dict, zero: dict | None = None) -> dict:
        """d/dt|N of v with the speeds' derivatives set to zero (the u' part is v's partials).

        ``zero``: a symengine substitution (auxiliary speeds -> 0) applied to the
        angular velocities of the frames.
        """
        out: dict = {}
        dt = self.chain.dt_rest
        for f, c in v.items():
            part = [dt(x) for x in c]
            if f is not self.N:
                w = self.angular_velocity_in(f)
                if zero:
                    w = [x.subs(zero) for x in w]
                part = [a + b for a, b in zip(part, cross3(w, c))]
            if not _is_zero3(part):
                _add_part(out, f, part)
        return out

    @staticmethod
    def partials(v: dict, speeds: list) -> list[dict]:
        """The partial velocities: coefficients of each speed, frame by frame."""
        out = [dict() for _ in speeds]
        index = {s: k for k, s in enumerate(speeds)}
        for f, c in v.items():
            present: set = set()
            for x in c:
                if x != ZERO:
                    present |= x.free_symbols
            for s in present:
                k = index.get(s)
                if k is None:
                    continue
                out[k][f] = [x.diff(s) if (x != ZERO and s in x.free_symbols) else ZERO for x in c]
        for d in out:
            for f in [f for f, c in d.items() if _is_zero3(c)]:
                del d[f]
        return out

    @staticmethod
    def substitute(v: dict, rule: dict) -> dict:
        if not rule:
            return v
        out = {}
        for f, c in v.items():
            c = [x.subs(rule) if x != ZERO else x for x in c]
            if not _is_zero3(c):
                out[f] = c
        return out
