"""The derivatives of a robot's forward dynamics, from the emitted inverse-dynamics derivatives.

With τ = ID(q, u, u') (``robot.inverse_dynamics``) and M(q) = ∂τ/∂u', the forward dynamics
u' = FD(q, u, τ) satisfies ID(q, u, FD(q, u, τ)) = τ, so by the implicit-function theorem::

    ∂u'/∂τ = M⁻¹,   ∂u'/∂q = -M⁻¹ ∂τ/∂q,   ∂u'/∂u = -M⁻¹ ∂τ/∂u     (at u' = FD(q, u, τ))

(Carpentier and Mansard, RSS 2018, the identity behind Pinocchio's
``computeABADerivatives``).  Everything on the right is compiled and exact (M(q) and the
bias b(q, u) in one kernel, then ``robot.inverse_dynamics_derivatives`` at
u' = M⁻¹ (τ - b)); M⁻¹ from LAPACK's Cholesky factor.  Columns along q are derivatives along
the coordinates' tangents (``robot.tangent_map``), rows and other columns ``robot.speeds``.

For trees of one-speed joints (every robot but those with a planar joint or a floating
joint inside the tree) of up to 18 speeds all of it is one emitted kernel (:mod:`.aba_derivatives`: u' by the
articulated-body recursion, M⁻¹ by its unit responses, the products written out), called
with one state through buffers of the calling thread's own.  Above 18 speeds the products
written out grow as n³, so the emitted kernel stops at u', ∂τ/∂q, ∂τ/∂u and the
tree-sparse factorization M = Lᵀ D L that gave u'
(:func:`.aba_derivatives.forward_derivative_terms`) and the same compiled call goes on with
the solve (:mod:`symbody.compilation.native_tree_solve`, O(n² d) for a tree of depth d).  The
composition above (LAPACK between two kernels) remains for the others and where there is no
C compiler.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.linalg import lapack

from ..errors import InputError
from .functions import RobotFunction

__all__ = ["ForwardDynamicsDerivatives"]


#: the largest product (rows x inner x columns) OpenBLAS does on one thread: its threads spin
#: after a product, costing far more CPU time than the product itself at these sizes
_ONE_THREAD_PRODUCT = 250_000


def _product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B in blocks of B's columns small enough to stay on one thread."""
    width = max(1, _ONE_THREAD_PRODUCT // (A.shape[0] * A.shape[1]))
    if B.shape[1] <= width:
        return A @ B
    return np.hstack([A @ B[:, k:k + width] for k in range(0, B.shape[1], width)])


def _inverse_mass(M: np.ndarray, name: str) -> np.ndarray:
    """M⁻¹ = U⁻¹ U⁻ᵀ from the Cholesky factor M = Uᵀ U (LAPACK's dpotrf and dtrtri)."""
    U, info = lapack.dpotrf(M, lower=False, clean=True)
    if info == 0:
        U, info = lapack.dtrtri(U, lower=False)
    if info != 0:
        raise InputError(f"{name}: the mass matrix is not positive definite at this q "
                         f"(LAPACK info {info})")
    return _product(U, U.T)


class ForwardDynamicsDerivatives:
    """``(du'/dq, du'/du, du'/dtau) = f(q, u, tau)``, each (o, o), or (k, o, o) for k states.

    ``u'`` is the inverse of ``robot.inverse_dynamics`` (every speed free: mimic joints as
    ordinary joints, Pinocchio's default model; the URDF damping and friction included when
    the robot has them); ``accelerations(q, u, tau)`` gives it.  ``mass_bias``: M(q) (o x o,
    flat) and b(q, u) (o) in one function of (q, u, p); ``inverse_derivatives``:
    ``robot.inverse_dynamics_derivatives``.  One state goes straight into the two kernels
    through buffers of the calling thread's own; with the emitted kernel in C, through its
    compiled entry (:mod:`symbody.compilation.native_function`: a new (3, o, o) array, the
    three blocks its views).
    """

    def __init__(self, mass_bias: RobotFunction | Callable[[], RobotFunction],
                 inverse_derivatives: RobotFunction | Callable[[], RobotFunction],
                 emitted: RobotFunction | None = None, tree_solve: tuple | None = None,
                 size: int | None = None) -> None:
        # mass_bias and inverse_derivatives may be given as makers, compiled at their first
        # use (the composition; accelerations): the compiled paths do not need them
        self._made = {"mass_bias": mass_bias, "inverse_derivatives": inverse_derivatives}
        self.emitted = emitted
        #: (kernel, dest, parent, perm) of the tree-sparse path (:meth:`_make_solve_entry`)
        self.tree_solve = tree_solve if emitted is None else None
        self._solve_entry: Any = None
        self.size = self.inverse_derivatives.shape[-1] if size is None else size
        self.name = "forward_dynamics_derivatives"
        self._local = threading.local()
        self._entry: Any = None     # the compiled one-state entry, made on the first call
        if emitted is not None:
            o = self.size
            self._nq = emitted.kernel.nargs - 2 * o - len(emitted.constants)
            self._into = emitted.kernel.into
            self._c_kernel = emitted.kernel.backend == "c"     # takes any buffer's address

    def _made_function(self, name: str) -> RobotFunction:
        f = self._made[name]
        if not isinstance(f, RobotFunction):
            f = self._made[name] = f()
        return f

    @property
    def mass_bias(self) -> RobotFunction:
        """M(q) (o x o, flat) and b(q, u) (o) in one function of (q, u, p)."""
        return self._made_function("mass_bias")

    @property
    def inverse_derivatives(self) -> RobotFunction:
        """``robot.inverse_dynamics_derivatives``."""
        return self._made_function("inverse_derivatives")

    def __reduce__(self):
        """Pickled as its functions (:class:`~.functions.RobotFunction` pickles its kernel);
        the buffers and the compiled entries are made again.  Functions not yet compiled
        are compiled first (the composition's kernels of a big robot: minutes, once)."""
        return ForwardDynamicsDerivatives, (self.mass_bias, self.inverse_derivatives,
                                            self.emitted, self.tree_solve, self.size)

    def _tau(self, tau: Any) -> np.ndarray:
        t = np.asarray(tau, dtype=float)
        if t.ndim not in (1, 2) or t.shape[-1] != self.size:
            raise InputError(f"{self.name}: tau must have {self.size} values (or shape (k, "
                             f"{self.size}) for k states), got shape {t.shape}")
        return t

    def _mass_bias(self, q: Any, u: Any) -> tuple[np.ndarray, np.ndarray]:
        o = self.size
        out = self.mass_bias(q, u)
        return out[..., :o * o].reshape(out.shape[:-1] + (o, o)), out[..., o * o:]

    def accelerations(self, q: Any, u: Any, tau: Any) -> np.ndarray:
        """u' = M(q)⁻¹ (τ - b(q, u)): (o,) or (k, o)."""
        M, b = self._mass_bias(q, u)
        return np.linalg.solve(M, (self._tau(tau) - b)[..., None])[..., 0]

    def _buffers(self) -> tuple:
        """This thread's kernel inputs and outputs (the constants filled in)."""
        buf = getattr(self._local, "buffers", None)
        if buf is None:
            mb, idd, o = self.mass_bias, self.inverse_derivatives, self.size
            z1, z2 = np.empty(mb.kernel.nargs), np.empty(idd.kernel.nargs)
            nq = len(z1) - o - len(mb.constants)
            z1[nq + o:], z2[nq + 2 * o:] = mb.constants, idd.constants
            buf = self._local.buffers = (nq, z1, z2, np.empty(mb.kernel.nout),
                                         np.empty(idd.kernel.nout), np.empty((o, 2 * o)))
        return buf

    def _one(self, q: Any, u: Any, tau: Any) -> tuple | None:
        nq, z1, z2, out1, out2, rhs = self._buffers()
        o = self.size
        for v, n in ((q, nq), (u, o), (tau, o)):
            if type(v) is not np.ndarray or v.shape != (n,):
                return None
        z1[:nq], z1[nq:nq + o] = q, u
        self.mass_bias.kernel.into(z1, out1)
        Minv = _inverse_mass(out1[:o * o].reshape(o, o), self.name)
        z2[:nq + o] = z1[:nq + o]
        z2[nq + o:nq + 2 * o] = Minv @ (tau - out1[o * o:])
        self.inverse_derivatives.kernel.into(z2, out2)
        D = out2.reshape(3, o, o)
        rhs[:, :o], rhs[:, o:] = D[0], D[1]
        X = _product(-Minv, rhs)
        return X[:, :o], X[:, o:], Minv

    def _emitted_one(self, q: Any, u: Any, tau: Any, out: Any) -> tuple | None:
        """One state straight into the emitted kernel (None: not float arrays of the right
        sizes, the general path checks them)."""
        o, nq = self.size, self._nq
        if (type(q) is not np.ndarray or q.shape != (nq,) or type(u) is not np.ndarray
                or u.shape != (o,) or type(tau) is not np.ndarray or tau.shape != (o,)):
            return None
        buf = getattr(self._local, "buffers", None)
        if buf is None:     # z and a flat result of this thread's own (their addresses cached)
            buf = self._local.buffers = (np.empty(self.emitted.kernel.nargs), np.empty(3 * o * o))
        z, flat = buf
        z[:nq] = q
        z[nq:nq + o] = u
        z[nq + o:nq + 2 * o] = tau
        z[nq + 2 * o:] = self.emitted.constants
        if out is not None and (type(out) is not np.ndarray or out.shape != (3, o, o)
                                or out.dtype != np.float64 or not out.flags.c_contiguous
                                or not out.flags.writeable):
            raise InputError(f"{self.name}: out must be a writable C-contiguous float64 array "
                             f"of shape (3, {o}, {o}), got {getattr(out, 'shape', out)!r}")
        if out is None:
            self._into(z, flat)
            out = flat.reshape(3, o, o).copy()    # cheaper than a new array's address
        else:
            self._into(z, out if self._c_kernel else out.reshape(-1))
        return out[0], out[1], out[2]

    def _make_entry(self) -> Any:
        """The compiled entry of one state (:mod:`symbody.compilation.native_function`): a new
        (3, o, o) array from the emitted kernel, the checked path for anything else; False
        when there is none (a kernel that is not generated C, no compiler)."""
        from ..compilation.native_function import function_entry

        def careful(q: Any, u: Any, tau: Any) -> np.ndarray:
            return self.emitted(q, u, self._tau(tau))

        o = self.size
        entry = function_entry(self.emitted.kernel, (self._nq, o, o), self.emitted.constants,
                               (3, o, o), careful)
        self._entry = entry = entry or False
        return entry

    def _make_solve_entry(self) -> Any:
        """The compiled call of the tree-sparse path (:mod:`symbody.compilation.native_tree_solve`):
        the kernel of u', ∂τ/∂q, ∂τ/∂u and M, then M = Lᵀ D L and M⁻¹ [∂τ/∂q, ∂τ/∂u, 1];
        False without a C compiler (the composition then)."""
        from ..compilation.native_tree_solve import tree_solve_entry
        kernel, dest, parent, perm = self.tree_solve
        o = self.size
        nq = kernel.kernel.nargs - 2 * o - len(kernel.constants)

        def careful(q: Any, u: Any, tau: Any) -> np.ndarray:
            args = []
            for name, v, n in (("q", q, nq), ("u", u, o), ("tau", tau, o)):
                a = np.ascontiguousarray(v, dtype=float)
                if a.ndim not in (1, 2) or a.shape[-1] != n:
                    raise InputError(f"{self.name}: {name} must have {n} values (or shape (k, "
                                     f"{n}) for k states), got shape {a.shape}")
                args.append(a)
            lead = {a.shape[0] for a in args if a.ndim == 2}
            if len(lead) > 1:
                raise InputError(f"{self.name}: the batched arguments have different numbers "
                                 f"of states: {sorted(lead)}")
            if not lead:
                return entry(*args)
            k = lead.pop()
            rows = [np.ascontiguousarray(np.broadcast_to(a, (k, a.shape[-1]))) for a in args]
            return np.stack([entry(*(r[i] for r in rows)) for i in range(k)])

        entry = tree_solve_entry(kernel.kernel, (nq, o, o), kernel.constants, dest, parent, perm,
                                 careful, InputError)
        self._solve_entry = entry = entry or False
        return entry

    def __call__(self, q: Any, u: Any, tau: Any,
                 out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``out``: a (3, o, o) float64 array to write the three blocks into (one state;
        not the composition), returned as views of it."""
        if self.tree_solve is not None:
            entry = self._solve_entry
            if entry is None:
                entry = self._make_solve_entry()
            if entry:
                D = entry(q, u, tau)
                if out is not None:
                    o = self.size
                    if (type(out) is not np.ndarray or out.shape != (3, o, o)
                            or out.dtype != np.float64 or not out.flags.writeable):
                        raise InputError(f"{self.name}: out must be a writable float64 array "
                                         f"of shape (3, {o}, {o}), got "
                                         f"{getattr(out, 'shape', out)!r}")
                    if D.shape != out.shape:
                        raise InputError(f"{self.name}: out= takes one state")
                    out[...] = D
                    D = out
                if D.ndim == 3:
                    return D[0], D[1], D[2]
                return D[:, 0], D[:, 1], D[:, 2]
        if self.emitted is not None:
            if out is None:
                entry = self._entry
                if entry is None:
                    entry = self._make_entry()
                if entry:
                    D = entry(q, u, tau)
                    if D.ndim == 3:
                        return D[0], D[1], D[2]
                    return D[:, 0], D[:, 1], D[:, 2]
            res = self._emitted_one(q, u, tau, out)
            if res is not None:
                return res
            if out is not None:
                raise InputError(f"{self.name}: out= takes one state given as float arrays "
                                 f"(q ({self._nq},), u and tau ({self.size},))")
            D = self.emitted(q, u, self._tau(tau))
            return D[..., 0, :, :], D[..., 1, :, :], D[..., 2, :, :]
        if out is not None:
            raise InputError(f"{self.name}: out= needs a compiled kernel of trees of "
                             "one-speed joints")
        out = self._one(q, u, tau)
        if out is not None:
            return out
        tau = self._tau(tau)
        M, b = self._mass_bias(q, u)
        o = self.size
        Minv = np.array([_inverse_mass(m, self.name) for m in M.reshape(-1, o, o)])
        udot = np.einsum("kij,kj->ki", Minv, np.broadcast_to(tau - b, (len(Minv), o)))
        D = self.inverse_derivatives(q, u, udot if M.ndim == 3 else udot[0])
        D = D.reshape(-1, 3, o, o)
        X = np.array([_product(-m, np.hstack([d[0], d[1]])) for m, d in zip(Minv, D)])
        if M.ndim == 2:
            return X[0, :, :o], X[0, :, o:], Minv[0]
        return X[..., :o], X[..., o:], Minv
