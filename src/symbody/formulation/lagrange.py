"""Lagrange's equations of the second kind, with constraints and multipliers.

For a Lagrangian L(q, q', t), generalized forces Q of the nonconservative loads
and m velocity-level constraints C(q, t) q' + c(q, t) = 0 (the time derivative
of the holonomic constraints f_h(q, t) = 0 followed by the nonholonomic ones)::

    d/dt(dL/dq') - dL/dq - Q - lam_coeffs^T lam = 0,    lam_coeffs = -C    (n rows)

The conventions (signs, names lam1..lamm, the block layout of
``mass_matrix_full``) are those of ``sympy.physics.mechanics.LagrangesMethod``
(sympy 1.14), so results are interchangeable.  The implementation is our own
and avoids differentiating big expressions with respect to time:

* every function of time (q, q', specified inputs and their derivatives) is
  replaced by a plain symbol and the heavy calculus is done in symengine;
* the mass matrix is the Hessian  m_d = d^2 L / dq' dq'  (symmetric: only the
  upper triangle is differentiated);
* the rest of d/dt(dL/dq') follows from the chain rule
  sum_j d(dL/dq')/ds_j s_j' over the other time functions s_j, plus d/dt
  of the explicit time dependence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame, Vector, dynamicsymbols

from .._lazy_modules import lazy_module
from ..compat.sympy import TIME
from ..dependent_columns import pivot_columns
from ..errors import FormulationError, NonlinearityError, SingularConstraintError
from ..symengine_bridge import DESCEND, SympyConverter, fold_dag, symengine_node
from ._linear_equations import as_column, as_symbol_list
from ._method_attributes import MethodAttributes
from .body_inertias import body_inertias
from .contact_record import contact_records, records_of_loads, with_impact_states, with_placeholders
from .eom import CanonicalBlocks, EquationsOfMotion
from .linearization_data import LagrangeLinearizationData

np = lazy_module("numpy")            # imported when first used (import time)
se = lazy_module("symengine")        # imported when first used (import time)

t = TIME

__all__ = ["LagrangesMethod"]

_AppliedUndef = sm.core.function.AppliedUndef


# --------------------------------------------------------------------------- helpers
def _distinct_nodes(expr, seen: set, leaves: tuple = ()):
    """The subexpressions of ``expr``, each distinct one once (sympy trees share subtrees
    heavily), without descending into nodes of the types ``leaves``; nodes in ``seen``
    (updated) are skipped."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        yield e
        if not isinstance(e, leaves):
            stack.extend(e.args)


def _split_atoms(expr, seen: set | None = None) -> tuple[set, bool, set]:
    """(functions of time f(t) and their t-derivatives in ``expr``, whether it holds other
    undefined functions, derivatives or Subs that only sympy can differentiate, the
    Symbols outside those).

    Visits each distinct subexpression once; nodes in ``seen`` (updated) are skipped.
    """
    seen = set() if seen is None else seen
    out, foreign, symbols = set(), False, set()
    for e in _distinct_nodes(expr, seen, (sm.Derivative, _AppliedUndef, sm.Subs)):
        if isinstance(e, sm.Derivative):
            if set(e.variables) == {t} and isinstance(e.expr, _AppliedUndef) and e.expr.args == (t,):
                out.add(e)
            else:
                foreign = True
        elif isinstance(e, _AppliedUndef):
            if e.args == (t,):
                out.add(e)
            else:
                foreign = True
        elif isinstance(e, sm.Subs):
            foreign = True
        elif isinstance(e, sm.Symbol):
            symbols.add(e)
    return out, foreign, symbols


def _nodes_of(expr, types) -> set:
    """The subexpressions of ``expr`` of the given types (``expr.atoms(*types)``, but
    visiting each distinct subexpression once)."""
    return {e for e in _distinct_nodes(expr, set()) if isinstance(e, types)}


def _memo_xreplace(e, rule: dict, cache: dict):
    """``e.xreplace(rule)`` visiting each distinct subexpression once."""
    got = rule.get(e)
    if got is not None:
        return got
    got = cache.get(e)
    if got is not None:
        return got
    if not e.args:
        return e
    args = [_memo_xreplace(a, rule, cache) for a in e.args]
    out = e.func(*args) if any(a is not b for a, b in zip(args, e.args, strict=True)) else e
    cache[e] = out
    return out


class _SympyToSymengine:
    """sympy -> symengine conversion, memoized on shared subexpressions, with a replacement rule."""

    _templates: dict = {}     # sympy function class -> (symengine template, placeholders) or None

    def __init__(self, rule: dict) -> None:
        self.rule = rule            # sympy node -> symengine expression (read live)
        self.cache: dict = {}       # fold_dag's memo: id(node) -> (node, symengine expression)

    def __call__(self, e):
        got = self.rule.get(e)
        if got is not None:
            return got
        return fold_dag([e], self._visit, self._combine, self.cache)[0]

    def _visit(self, e):
        got = self.rule.get(e)
        if got is not None:
            return got
        if not e.args:
            return se.sympify(e)
        if e.is_Add or e.is_Mul or e.is_Pow or self._template(e) is not None:
            return DESCEND
        # Piecewise and other structured nodes: convert whole after the replacement
        sym_rule = {k: sm.Symbol(str(v)) for k, v in self.rule.items()}
        return se.sympify(_memo_xreplace(e, sym_rule, {}))

    def _combine(self, e, args):
        if e.is_Add or e.is_Mul or e.is_Pow:
            return symengine_node(e, args)
        expr, holders = self._template(e)
        return expr.xreplace(dict(zip(holders, args, strict=True)))

    @classmethod
    def _template(cls, e):
        func = e.func
        key = (func, len(e.args))
        if key in cls._templates:
            return cls._templates[key]
        tpl = None
        if isinstance(e, sm.Function) and not isinstance(e, _AppliedUndef):
            holders = [sm.Symbol(f"_sb_hold{i}") for i in range(len(e.args))]
            try:
                probe = func(*holders)
                if probe.func is func and probe.args == tuple(holders):
                    tpl = (se.sympify(probe), [se.Symbol(h.name) for h in holders])
            except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError,
                    sm.SympifyError):
                tpl = None
        cls._templates[key] = tpl
        return tpl


def _time_atoms(expr) -> set:
    """Functions of time f(t) and their derivatives appearing in a sympy expression."""
    return _split_atoms(expr)[0]


def _next_derivative(atom):
    """f(t) -> f'(t),  Derivative(f(t), (t, k)) -> Derivative(f(t), (t, k + 1))."""
    if isinstance(atom, sm.Derivative):
        return sm.Derivative(atom.expr, (t, atom.derivative_count + 1))
    return sm.Derivative(atom, t)


class _Calculus:
    """Differentiation of functions of time, done on plain symbols.

    Every function of time and each of its derivatives is mapped to a plain
    Symbol; expressions are converted to symengine (or kept in sympy when
    symengine cannot represent them).  The total time derivative is the chain
    rule  d/dt e = de/dt|explicit + sum_s de/ds * s'  over the mapped atoms s.
    """

    def __init__(self, taken_names: Iterable[str] = ()) -> None:
        self._taken = set(taken_names)
        self.sym_of: dict = {}      # sympy time atom -> backend Symbol
        self.atom_of: dict = {}     # backend Symbol -> sympy time atom
        self._sympy_sym: dict = {}  # sympy time atom -> sympy Symbol
        self._back: dict = {}       # sympy Symbol -> sympy time atom
        self._names: dict = {}             # symengine symbol name -> sympy atom or Symbol
        self._converter: SympyConverter | None = None
        self._scanned: set = set()         # sympy nodes already searched for time functions
        self._foreign = False              # some expression needs sympy's calculus
        self._xreplace_cache: dict = {}
        self._to_se = _SympyToSymengine(self.sym_of)
        self._count = 0
        self.use_symengine = True
        self.t = se.Symbol(t.name)

    # ------------------------------------------------------------ symbols
    def symbol(self, atom):
        """The backend symbol standing for the time function ``atom``."""
        got = self.sym_of.get(atom)
        if got is not None:
            return got
        while True:
            self._count += 1
            name = f"_sb_lagr_{self._count}"
            if name not in self._taken:
                break
        ssym = sm.Symbol(name)
        bsym = se.Symbol(name) if self.use_symengine else ssym
        self.sym_of[atom] = bsym
        self.atom_of[bsym] = atom
        self._sympy_sym[atom] = ssym
        self._back[ssym] = atom
        self._names[name] = atom
        return bsym

    def switch_to_sympy(self) -> None:
        """Fall back to sympy for everything (an expression symengine cannot hold)."""
        self.use_symengine = False
        self.t = t
        old = dict(self.sym_of)
        self.sym_of.clear()
        self.atom_of.clear()
        for atom in old:
            s = self._sympy_sym[atom]
            self.sym_of[atom] = s
            self.atom_of[s] = atom

    # ------------------------------------------------------------ conversion
    def to_backend(self, expr):
        expr = sm.sympify(expr)
        atoms, foreign, symbols = _split_atoms(expr, self._scanned)
        for atom in atoms:
            self.symbol(atom)
        for sym in symbols:
            # symengine keeps only names: map each name back to the user's Symbol (with its
            # assumptions); two different Symbols with one name need sympy
            known = self._names.setdefault(sym.name, sym)
            if known != sym or isinstance(sym, sm.Dummy):
                foreign = True
        if foreign:
            self._foreign = True
        if self.use_symengine and self._foreign:
            raise _NeedSympy("undefined functions of something other than t")
        if not self.use_symengine:
            return _memo_xreplace(expr, self._sympy_sym, self._xreplace_cache)
        return self._to_se(expr)

    def to_sympy(self, expr, replace: dict | None = None) -> sm.Expr:
        """Backend expression -> sympy, with the time functions put back.

        ``replace`` maps sympy time atoms to other sympy expressions (e.g.
        q' -> u) during the same pass.
        """
        if self.use_symengine:
            if not isinstance(expr, se.Basic):
                return sm.sympify(expr)
            if replace:
                names = dict(self._names)
                for atom, new in replace.items():
                    if atom in self.sym_of:
                        names[str(self.sym_of[atom])] = new
                converter = SympyConverter(names)
            else:
                if self._converter is None:
                    self._converter = SympyConverter(self._names)
                converter = self._converter
            try:
                return converter(expr)
            except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError) as exc:
                raise _NeedSympy(str(exc)) from exc
        else:
            expr = sm.sympify(expr)
        if expr.is_number:
            return expr
        back = self._back
        if replace:
            back = dict(back)
            for atom, new in replace.items():
                if atom in self._sympy_sym:
                    back[self._sympy_sym[atom]] = new
        return expr.xreplace(back)

    def zero(self):
        return se.Integer(0) if self.use_symengine else sm.S.Zero

    # ------------------------------------------------------------ calculus
    @staticmethod
    def d(expr, sym):
        """Partial derivative, skipping the work when ``sym`` is absent."""
        if sym not in expr.free_symbols:
            return 0
        return expr.diff(sym)

    def total_dt(self, expr, skip: set = frozenset()):
        """d/dt of a backend expression, omitting the terms of the symbols in ``skip``."""
        free = expr.free_symbols
        out = self.zero()
        for s in list(free):
            if s in skip:
                continue
            if s == self.t:
                out = out + expr.diff(s)
                continue
            atom = self.atom_of.get(s)
            if atom is None:
                continue                       # a constant
            rate = self.symbol(_next_derivative(atom))
            out = out + expr.diff(s) * rate
        return out


def _load_pairs(forcelist, name: str = "forcelist") -> list:
    """Validate (Point | ReferenceFrame, Vector) pairs (tuples or sympy Force/Torque)."""
    out = []
    for i, pair in enumerate(forcelist):
        try:
            obj, vec = pair
        except (TypeError, ValueError) as exc:
            raise FormulationError(f"{name}[{i}] = {pair!r} is not a (Point or ReferenceFrame, Vector) "
                                   "pair") from exc
        if not isinstance(obj, (Point, ReferenceFrame)):
            raise FormulationError(f"{name}[{i}]: the first entry {obj!r} must be a Point (force) "
                                   "or a ReferenceFrame (torque)")
        if vec == 0:
            continue
        if not isinstance(vec, Vector):
            raise FormulationError(f"{name}[{i}]: the second entry {vec!r} must be a Vector")
        out.append((obj, vec))
    return out


def _random_values(symbols: Iterable, seed: int = 2718) -> dict:
    """Fixed pseudo-random values in [0.3, 1.3] for numeric structure tests."""
    rng = np.random.default_rng(seed)
    syms = sorted(set(symbols), key=str)
    return {s: float(v) for s, v in zip(syms, rng.uniform(0.3, 1.3, len(syms)), strict=True)}


def _trailing_columns(C: np.ndarray, forced: Sequence[int], count: int) -> list[int] | None:
    """``forced`` plus the last other columns of C, ``count`` in all, when they are well
    conditioned (so the coordinates keep the order the user gave them: q = [q_ind, q_dep]
    is then that order); None otherwise (pick by pivoting instead)."""
    rest = [j for j in range(C.shape[1]) if j not in forced]
    need = count - len(forced)
    if need < 0 or need > len(rest):
        return None
    cols = sorted(list(forced) + rest[len(rest) - need:])
    sub = np.array(C, dtype=float)[:, cols]
    if not np.isfinite(sub).all():
        return None
    sv = np.linalg.svd(sub, compute_uv=False)
    # well conditioned at the random configuration: within 1e6 of the best possible
    if sv.size == 0 or sv[-1] <= 1e-6 * max(float(np.linalg.norm(C, 2)), 1e-300):
        return None
    return cols


def _choose_columns(C: np.ndarray, forced: Sequence[int], count: int, what: str,
                    labels: Sequence) -> list[int]:
    """Pick ``count`` linearly independent columns of C by column pivoting
    (:func:`symbody.dependent_columns.pivot_columns`; ties go to the later column).

    The columns in ``forced`` are taken first.  Raises SingularConstraintError when one
    of them is zero or redundant, or when the rank is short.
    """
    R = np.array(C, dtype=float)
    scale = max(1.0, float(np.abs(R).max()) if R.size else 1.0)
    tol = 1e-10 * scale        # relative to the entries: round-off of a Jacobian at O(1) values
    chosen, norms = pivot_columns(R, count, first=forced, ties="last")
    for j, norm in zip(chosen[:len(forced)], norms):
        if norm <= tol:
            raise SingularConstraintError(
                f"{what}: {labels[j]} cannot be dependent: the constraint Jacobian column of "
                f"{labels[j]} is (numerically) zero or redundant at a random configuration")
    rank = sum(1 for norm in norms if norm > tol)
    if rank < count:
        raise SingularConstraintError(
            f"{what}: the constraint Jacobian has rank {rank} < {count} at a random "
            f"configuration (dependent so far: {[str(labels[j]) for j in chosen[:rank]]}); the "
            "constraints are redundant")
    return chosen


class _NeedSympy(Exception):
    """An expression could not be converted to symengine; redo the work in sympy."""


# --------------------------------------------------------------------------- the method
class LagrangesMethod(MethodAttributes):
    """Lagrange's method: equations of motion from a Lagrangian, with multipliers.

    Same arguments, attributes and conventions as sympy 1.14's
    ``sympy.physics.mechanics.LagrangesMethod``::

        lm = LagrangesMethod(L, [q1, q2], forcelist=[(P, F)], frame=N,
                             hol_coneqs=[f_h], nonhol_coneqs=[C q' + c])
        lm.form_lagranges_equations()      # eom (n x 1) = 0
        lm.mass_matrix_full * [q', q'', lam] = lm.forcing_full

    The equations are ``m_d q'' - f_d - lam_coeffs^T lam = 0`` with
    ``m_d = d^2 L/dq'^2`` (n x n), ``lam_coeffs = -d coneqs/dq'`` (m x n) and
    ``coneqs = [d/dt hol_coneqs; nonhol_coneqs]``.  Note sympy's sign quirk,
    kept for compatibility: ``mass_matrix = [m_d, lam_coeffs^T]`` so the lam
    solved from ``mass_matrix_full``/``forcing_full`` is the negative of the
    lam of ``eom`` (and of :meth:`solve_multipliers`); sympy issue #30215.
    symbody's numeric results (``compile(lm.to_eom())``: ``accelerations``,
    ``Trajectory.multipliers``, ``linearize(..., return_point=True)``) use the sign of
    ``mass_matrix_full`` / :meth:`rhs`: ``m_d q'' = f_d + C^T lam`` with
    ``C = d coneqs/dq'``, i.e. ``C^T lam`` is the generalized constraint force.

    Parameters
    ----------
    Lagrangian : sympy expression L(q, q', t) (a scalar, e.g. from
        ``sympy.physics.mechanics.Lagrangian``).
    qs : sequence of dynamicsymbols, the n generalized coordinates.
    forcelist : (Point, Vector) / (ReferenceFrame, Vector) pairs of the
        nonconservative forces and torques; ``frame`` is then required.
    bodies : the bodies (stored only, as in sympy).
    frame : the inertial ReferenceFrame.
    hol_coneqs : position-level constraints f_h(q, t) = 0.
    nonhol_coneqs : velocity-level constraints, linear in q'.
    coneqs : old (pre sympy 1.0) keyword for ``nonhol_coneqs``, as in seed 004
        (sympy 1.14 itself rejects it).

    Notes
    -----
    :meth:`to_eom` gives the canonical EquationsOfMotion with speeds
    ``u_<q name>`` = q' (or ``speeds=``).  Bad input raises FormulationError /
    NonlinearityError naming the equation or symbol at fault.
    """

    def __init__(self, Lagrangian: sm.Expr, qs: Sequence, forcelist: Sequence | None = None,
                 bodies: Sequence | None = None, frame: ReferenceFrame | None = None,
                 hol_coneqs: Sequence | None = None, nonhol_coneqs: Sequence | None = None, *,
                 coneqs: Sequence | None = None) -> None:
        if coneqs is not None:
            if nonhol_coneqs is not None:
                raise FormulationError("give the velocity constraints either as nonhol_coneqs or as "
                                       "the old keyword coneqs, not both")
            nonhol_coneqs = coneqs

        self._L = self._check_lagrangian(Lagrangian)
        q_list = as_symbol_list(qs, "qs")
        if not q_list:
            raise FormulationError("qs is empty; give at least one generalized coordinate")
        self._q = sm.Matrix(q_list)
        self._qdots = sm.Matrix([qi.diff(t) for qi in q_list])
        self._qdoubledots = sm.Matrix([qi.diff(t, 2) for qi in q_list])

        if frame is not None and not isinstance(frame, ReferenceFrame):
            raise FormulationError(f"frame must be a ReferenceFrame, got {frame!r}")
        self.inertial = frame
        forcelist = forcelist if forcelist else []
        if isinstance(forcelist, (sm.Basic, Vector)) or not isinstance(forcelist, Iterable):
            raise FormulationError(f"forcelist must be an iterable of (Point or ReferenceFrame, Vector) "
                                   f"pairs, got {forcelist!r}")
        self._forcelist = forcelist
        self._load_list = _load_pairs(forcelist)
        if self._load_list and frame is None:
            raise FormulationError("forcelist is given but frame is not; pass the inertial "
                                   "ReferenceFrame as frame= to form the generalized forces")
        self._bodies = bodies

        self._check_no_higher_derivatives(self._L, "Lagrangian", order=2)
        hol = as_column(hol_coneqs, "hol_coneqs")
        nonhol = as_column(nonhol_coneqs, "nonhol_coneqs")
        self._check_holonomic(hol)
        self._check_nonholonomic(nonhol)
        self._hol_coneqs = hol

        taken = {s.name for s in _nodes_of(self._L, sm.Symbol)}
        for e in list(hol) + list(nonhol):
            taken |= {s.name for s in e.free_symbols}
        self._calc = _Calculus(taken)
        self._hol_dot = self._time_derivative(hol)
        self.coneqs = sm.Matrix.vstack(self._hol_dot, nonhol) if (hol.rows or nonhol.rows) \
            else sm.Matrix()

        self.eom = None
        self.lam_vec = sm.Matrix()
        self.lam_coeffs = sm.Matrix()
        self._m_d = sm.Matrix()
        self._f_d = sm.Matrix()
        self._m_cd = sm.Matrix()
        self._f_cd = sm.Matrix()

    # ------------------------------------------------------------ input checks
    @staticmethod
    def _check_lagrangian(L) -> sm.Expr:
        if isinstance(L, (int, float)) and not isinstance(L, bool):
            return sm.sympify(L)
        if isinstance(L, sm.MatrixBase) and L.shape == (1, 1):
            L = L[0, 0]
        if not isinstance(L, sm.Expr) or isinstance(L, sm.MatrixBase):
            raise FormulationError(
                f"the Lagrangian must be a scalar sympy expression L(q, q', t) (e.g. from "
                f"sympy.physics.mechanics.Lagrangian), got {type(L).__name__}: {L!r}")
        return L

    def _q_derivatives(self, expr, order: int) -> list:
        """Derivatives of the coordinates of at least ``order`` found in ``expr``."""
        qset = set(self._q)
        return [d for d in _nodes_of(expr, sm.Derivative)
                if d.expr in qset and d.derivative_count >= order]

    def _check_no_higher_derivatives(self, expr, name: str, order: int) -> None:
        bad = self._q_derivatives(expr, order)
        if bad:
            raise FormulationError(
                f"the {name} contains {sorted(map(str, bad))[0]}; it may depend on the coordinates "
                f"and their first derivatives only")

    def _check_holonomic(self, hol: sm.Matrix) -> None:
        for i, e in enumerate(hol):
            bad = self._q_derivatives(e, 1)
            if bad:
                raise FormulationError(
                    f"hol_coneqs[{i}] = {e} contains the derivative {sorted(map(str, bad))[0]}; "
                    "holonomic constraints must be position-level f_h(q, t) = 0 (give velocity-level "
                    "constraints as nonhol_coneqs)")

    def _check_nonholonomic(self, nonhol: sm.Matrix) -> None:
        qd = list(self._qdots)
        qd_set = set(qd)
        for i, e in enumerate(nonhol):
            bad = self._q_derivatives(e, 2)
            if bad:
                raise FormulationError(
                    f"nonhol_coneqs[{i}] = {e} contains {sorted(map(str, bad))[0]}; nonholonomic "
                    "constraints must be velocity-level, linear in q'")
            for j, v in enumerate(qd):
                if not e.has(v):
                    continue
                coeff = e.diff(v)
                worse = [w for w in qd_set if coeff.has(w)]
                if worse:
                    raise NonlinearityError(
                        f"nonhol_coneqs[{i}] = {e} is nonlinear in q' {qd[j]} (its coefficient "
                        f"depends on {sorted(map(str, worse))[0]}); nonholonomic constraints must "
                        "be linear in the coordinates' derivatives")

    # ------------------------------------------------------------ calculus helpers
    def _convert(self, exprs):
        """sympy expressions -> backend; _NeedSympy if symengine cannot hold one."""
        calc = self._calc
        if calc.use_symengine:
            try:
                return [calc.to_backend(e) for e in exprs]
            except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError) as exc:
                raise _NeedSympy from exc
        return [calc.to_backend(e) for e in exprs]

    def _with_fallback(self, work):
        """Run ``work()`` in symengine; redo it in sympy if an expression cannot be converted."""
        try:
            return work()
        except _NeedSympy:
            self._calc.switch_to_sympy()
            return work()

    def _time_derivative(self, exprs: sm.Matrix) -> sm.Matrix:
        if exprs.rows == 0:
            return sm.Matrix(0, 1, [])
        calc = self._calc

        def work():
            back = self._convert(exprs)
            return sm.Matrix([calc.to_sympy(calc.total_dt(e)) for e in back])
        return self._with_fallback(work)

    # ------------------------------------------------------------ formation
    def form_lagranges_equations(self) -> sm.Matrix:
        """Form Lagrange's equations of motion (n x 1, each = 0).

        eom = m_d q'' - f_d - lam_coeffs^T lam, with the multipliers
        lam = [lam1, ..., lamm] of the m constraints ``coneqs``.
        """
        return self._with_fallback(self._form)

    def _form(self) -> sm.Matrix:
        calc = self._calc
        q, qd, qdd = list(self._q), list(self._qdots), list(self._qdoubledots)
        n = len(q)
        L_b, = self._convert([self._L])
        # make sure every coordinate and q', q'' has its symbol (even if absent from L)
        for atom in q + qd + qdd:
            calc.symbol(atom)
        qs = [calc.sym_of[a] for a in q]
        qds = [calc.sym_of[a] for a in qd]
        qdds = [calc.sym_of[a] for a in qdd]

        # generalized forces of the nonconservative loads, Q_i = sum v_{,qd_i} . F
        Q = self._generalized_forces(qd, qds)

        # momenta p_i = dL/dq_i', mass matrix m_d = dp/dq' (symmetric: upper triangle)
        p = [calc.d(L_b, s) for s in qds]
        H = [[0] * n for _ in range(n)]
        for i in range(n):
            if p[i] == 0:
                continue
            for j in range(i, n):
                H[i][j] = calc.d(p[i], qds[j])
                H[j][i] = H[i][j]
        qds_set = set(qds)
        # d/dt p without the q'' terms, minus dL/dq, minus Q
        rest = []
        for i in range(n):
            dp = calc.total_dt(p[i], skip=qds_set) if p[i] != 0 else calc.zero()
            rest.append(dp - calc.d(L_b, qs[i]) - Q[i])

        # generalized forces that depend on q'' (unusual) contribute to the mass matrix
        qdds_set = set(qdds)
        for i in range(n):
            r_free = rest[i].free_symbols if hasattr(rest[i], "free_symbols") else set()
            if r_free & qdds_set:
                for j in range(n):
                    H[i][j] = H[i][j] + calc.d(rest[i], qdds[j])
                rest[i] = rest[i].subs({s: 0 for s in qdds})

        to_sympy = calc.to_sympy
        sym_cache: dict = {}
        m_d = sm.zeros(n, n)
        for i in range(n):
            for j in range(n):
                h = H[i][j]
                if h == 0:
                    continue
                key = (min(i, j), max(i, j)) if H[i][j] is H[j][i] else (i, j)
                if key not in sym_cache:
                    sym_cache[key] = to_sympy(h)
                m_d[i, j] = sym_cache[key]
        f_d = sm.Matrix([to_sympy(-r) for r in rest])
        self._m_d, self._f_d = m_d, f_d
        self._rest_backend = rest
        self._md_has_qd = any(h != 0 and bool(h.free_symbols & qds_set) for row in H for h in row)

        # constraints
        without_lam = sm.Matrix([
            sm.Add(*[m_d[i, j] * qdd[j] for j in range(n) if m_d[i, j] != 0], -f_d[i])
            for i in range(n)])
        if self.coneqs.rows:
            m = self.coneqs.rows
            self.lam_vec = sm.Matrix(dynamicsymbols("lam1:" + str(m + 1)))
            # coneqs = C q' + c;  d/dt coneqs = C q'' + (d/dt C) q' + d/dt c = m_cd q'' - f_cd
            con_b = self._convert(list(self.coneqs))
            C = sm.Matrix([[to_sympy(calc.d(e, s)) for s in qds] for e in con_b])
            self.lam_coeffs = -C
            f_cd = [to_sympy(-calc.total_dt(e, skip=qds_set)) for e in con_b]
            self._m_cd = C
            self._f_cd = sm.Matrix(f_cd)
            self.eom = without_lam - self.lam_coeffs.T * self.lam_vec
        else:
            self.eom = without_lam
        return self.eom

    def _generalized_forces(self, qd: list, qds: list) -> list:
        """Q_i = sum over loads of (dv/dq_i') . F, in the backend (n entries)."""
        calc = self._calc
        n = len(qd)
        Q = [calc.zero()] * n
        if not self._load_list:
            return Q
        N = self.inertial
        qd_set = set(qd)
        for obj, force in self._load_list:
            vel = obj.ang_vel_in(N) if isinstance(obj, ReferenceFrame) else obj.vel(N)
            for measures, F in vel.args:
                if F != N and any(_nodes_of(c, sm.Derivative) & qd_set for c in F.dcm(N)):
                    comp = Vector([(measures, F)]).express(N)
                    pieces = comp.args
                else:
                    pieces = [(measures, F)]
                for meas, frame in pieces:
                    mb = self._convert([meas[k] for k in range(3)])
                    if all(c == 0 for c in mb):
                        continue
                    fF = self._convert([force.dot(frame.x), force.dot(frame.y), force.dot(frame.z)])
                    for i in range(n):
                        term = calc.zero()
                        for k in range(3):
                            dk = calc.d(mb[k], qds[i])
                            if dk != 0 and fF[k] != 0:
                                term = term + dk * fF[k]
                        Q[i] = Q[i] + term
        return Q

    def _form_eoms(self) -> sm.Matrix:
        return self.form_lagranges_equations()

    def _need_eom(self) -> None:
        if self.eom is None:
            raise ValueError("Need to compute the equations of motion first")

    # ------------------------------------------------------------ results
    @property
    def mass_matrix(self) -> sm.Matrix:
        """[m_d, lam_coeffs^T] (n x (n + m)); m_d (n x n) without constraints."""
        self._need_eom()
        if self.coneqs:
            return self._m_d.row_join(self.lam_coeffs.T)
        return self._m_d

    @property
    def mass_matrix_full(self) -> sm.Matrix:
        """Coefficients of [q', q'', lam] ((2n + m) square): [[I, 0, 0], [0, m_d, lam_coeffs^T], [0, m_cd, 0]]."""
        self._need_eom()
        n = len(self._q)
        m = len(self.coneqs)
        row1 = sm.eye(n).row_join(sm.zeros(n, n + m))
        row2 = sm.zeros(n, n).row_join(self.mass_matrix)
        if self.coneqs:
            row3 = sm.zeros(m, n).row_join(self._m_cd).row_join(sm.zeros(m, m))
            return row1.col_join(row2).col_join(row3)
        return row1.col_join(row2)

    @property
    def forcing(self) -> sm.Matrix:
        """f_d (n x 1): everything in the equations but m_d q'' and the multipliers, moved right."""
        self._need_eom()
        return self._f_d

    @property
    def forcing_full(self) -> sm.Matrix:
        """[q'; f_d; f_cd] ((2n + m) x 1)."""
        self._need_eom()
        if self.coneqs:
            return self._qdots.col_join(self.forcing).col_join(self._f_cd)
        return self._qdots.col_join(self.forcing)

    def rhs(self, inv_method: str | None = None) -> sm.Matrix:
        """[q'; q''; lam] solved symbolically from mass_matrix_full and forcing_full.

        Expensive for big systems (a symbolic LU solve); compile ``to_eom()``
        instead for numbers.  ``inv_method`` selects a sympy inverse method.
        """
        self._need_eom()
        if inv_method is None:
            n = len(self._q)
            lower = self.mass_matrix_full[n:, n:]
            self._rhs = self._qdots.col_join(lower.LUsolve(self.forcing_full[n:, :]))
        else:
            self._rhs = self.mass_matrix_full.inv(inv_method, try_block_diag=True) * self.forcing_full
        return self._rhs

    def solve_multipliers(self, op_point: dict | Sequence[dict] | None = None,
                          sol_type: str = "dict") -> dict | sm.Matrix:
        """The multipliers lam (as in ``eom``) solved symbolically at an operating point.

        ``op_point`` is a dict, or an iterable of dicts, {symbol: value};
        ``sol_type`` 'dict' ({lam_i: value}) or 'Matrix' (m x 1).
        """
        self._need_eom()
        k = len(self.lam_vec)
        if k == 0:
            raise ValueError("System has no lagrange multipliers to solve for.")
        if isinstance(op_point, dict):
            op = dict(op_point)
        elif op_point is None:
            op = {}
        elif isinstance(op_point, Iterable):
            op = {}
            for d in op_point:
                op.update(d)
        else:
            raise TypeError("op_point must be either a dictionary or an iterable of dictionaries.")
        op = {sm.sympify(key): sm.sympify(val) for key, val in op.items()}
        A = self.mass_matrix.col_join(-self.lam_coeffs.row_join(sm.zeros(k, k)))
        F = self.forcing.col_join(self._f_cd)
        if op:
            A = A.xreplace(op)
            F = F.xreplace(op)
        sol = A.LUsolve(-F)[-k:]
        if sol_type == "dict":
            return dict(zip(self.lam_vec, sol, strict=True))
        if sol_type == "Matrix":
            return sm.Matrix(sol)
        raise ValueError(f"Unknown sol_type {sol_type}.")

    def linearize(self, q_ind: Sequence | None = None, qd_ind: Sequence | None = None,
                  q_dep: Sequence | None = None, qd_dep: Sequence | None = None,
                  linear_solver: str | Callable = "LU", **kwargs: Any) -> tuple:
        """Linearize about ``op_point``; SymPy's conventions and returns.

        ``M [q'; q''; lam] = A [q_ind; qd_ind] + B r`` -> ``(M, A, B, r)``, or with
        ``A_and_B=True`` ``[q_ind'; qd_ind'] = A [q_ind; qd_ind] + B r`` -> ``(A, B, r)``
        (see symbody.formulation.symbolic_linearization).
        """
        from .symbolic_linearization import linearize_lagrange  # loads symengine: not at import
        return linearize_lagrange(self.to_linearizer_data(), q_ind=q_ind, qd_ind=qd_ind, q_dep=q_dep, qd_dep=qd_dep,
                                  linear_solver=linear_solver, **kwargs)

    def to_linearizer_data(self) -> LagrangeLinearizationData:
        """The equations as the symbolic linearizer reads them, as a frozen
        :class:`LagrangeLinearizationData` (the role of SymPy's ``to_linearizer()``)."""
        self._need_eom()
        n = len(self._q)
        k = len(self.coneqs) if self.coneqs is not None else 0
        return LagrangeLinearizationData(
            q=tuple(self._q), hol_coneqs=self._hol_coneqs,
            coneqs=self.coneqs if k else sm.Matrix(), lam_vec=tuple(self.lam_vec),
            lam_coeffs=self.lam_coeffs if k else sm.zeros(0, n), m_d=self._m_d, f_d=self._f_d,
            m_cd=self._m_cd if k else sm.zeros(0, n), f_cd=self._f_cd if k else sm.zeros(0, 1))

    # ------------------------------------------------------------ attributes
    @property
    def u(self) -> sm.Matrix:
        """The coordinates' derivatives q' (n x 1), Lagrange's speeds."""
        return self._qdots

    # ------------------------------------------------------------ canonical form
    def speed_symbols(self, speeds: Sequence | None = None) -> list:
        """The speeds of the canonical form, u_i = q_i': by default ``dynamicsymbols('u_' + q_i.name)``."""
        q = list(self._q)
        if speeds is None:
            return [dynamicsymbols(f"u_{qi.name}") for qi in q]
        sp = as_symbol_list(speeds, "speeds")
        if len(sp) != len(q):
            raise FormulationError(f"speeds has {len(sp)} entries; give one per coordinate ({len(q)})")
        return sp

    def to_eom(self, q_ind: Sequence | None = None, q_dep: Sequence | None = None,
               u_ind: Sequence | None = None, u_dep: Sequence | None = None, *,
               speeds: Sequence | None = None, name: str | None = None, extra_states: Any = None,
               specifieds: Sequence | None = None) -> EquationsOfMotion:
        """The canonical :class:`~symbody.EquationsOfMotion` of these equations.

        Speeds u_i = q_i' (new dynamicsymbols ``u_<q name>``, or ``speeds``);
        kinematic block q' - u = 0; dynamic block unreduced, M_d = m_d (the
        Hessian of L in q') and g_d = -f_d with q' -> u, rows and columns in the
        order u = [u_ind, u_dep], so that M_d u' + g_d = 0 holds without the
        multiplier terms; holonomic block hol_coneqs; velocity constraints
        [d/dt hol_coneqs; nonhol_coneqs] = B u + b; acceleration constraints
        B u' + b_a from d/dt of those.

        Multipliers: the canonical constraint forces B^T lam_c (in
        M_d u' + g_d = B^T lam_c, B = -lam_coeffs) make lam_c the lam solved from
        ``mass_matrix_full`` / ``forcing_full`` / :meth:`rhs` (SymPy's sign there), so a
        compiled model's ``accelerations`` and ``Trajectory.multipliers`` equal them.
        (The ``eom`` expression and :meth:`solve_multipliers` use the opposite sign, as
        SymPy's do: sympy issue #30215; they are kept identical to SymPy's.)

        Dependent coordinates (M = number of hol_coneqs) and speeds (m = number
        of coneqs) not given are chosen automatically: the constraint Jacobian
        is evaluated at fixed pseudo-random values; the last M coordinates (and
        speeds) are taken when their columns are well conditioned there, so that
        q = [q_ind, q_dep] keeps the order the coordinates were given in, else
        columns are picked by column-pivoted Gram-Schmidt (ties go to the later
        coordinate); the speeds of the dependent coordinates are always
        dependent speeds too.
        ``u_ind``/``u_dep`` accept speed symbols or the coordinates' derivatives q'.

        ``extra_states``: extra first-order states, ``{a: a'}`` or SymPy
        biomechanics objects (their ``x``, ``r``, ``rhs()``); q' in their
        derivatives becomes the speeds.  ``specifieds``: the specified inputs.
        With either given, every function of time must be declared.
        """
        if self.eom is None:
            self.form_lagranges_equations()
        q = list(self._q)
        u = self.speed_symbols(speeds)
        clash = self._speed_clashes(u)
        if clash:
            raise FormulationError(
                f"the speed symbol {clash} chosen for to_eom already appears in the equations; "
                "pass other names with speeds=[...]")
        qi_list, qd_list = self._coordinate_split(q_ind, q_dep, q)
        ui_list, ud_list = self._speed_split(u_ind, u_dep, u, qd_list)
        blocks = self._canonical_blocks(q, u, qi_list + qd_list, ui_list + ud_list)
        blocks = CanonicalBlocks(q_ind=qi_list, q_dep=qd_list, u_ind=ui_list, u_dep=ud_list,
                                 u_aux=[], **blocks)
        specifieds = with_placeholders(specifieds, records_of_loads(self._forcelist))
        eom = EquationsOfMotion.from_blocks(blocks, specifieds=specifieds, extra_states=with_impact_states(
            extra_states, records_of_loads(self._forcelist)),
                                             name=name)
        eom.body_inertias = body_inertias(self._bodies)
        eom.contacts = contact_records(records_of_loads(self._forcelist), eom.kindiffdict)
        return eom

    def _coordinate_split(self, q_ind: Sequence | None, q_dep: Sequence | None,
                          q: list) -> tuple[list, list]:
        """(q_ind, q_dep) of :meth:`to_eom`: as given, completed, or chosen automatically."""
        n_all = len(q)
        n_hol = self._hol_coneqs.rows
        qi_list = as_symbol_list(q_ind, "q_ind")
        qd_list = as_symbol_list(q_dep, "q_dep")
        for s in qi_list + qd_list:
            if s not in set(q):
                raise FormulationError(f"{s} given in q_ind/q_dep is not one of the coordinates {q}")
        if q_ind is None and q_dep is None:
            if n_hol:
                J = self._numeric(-self.lam_coeffs[:n_hol, :])
                dep_idx = _trailing_columns(J, [], n_hol)
                if dep_idx is None:
                    dep_idx = sorted(_choose_columns(J, [], n_hol, "hol_coneqs", q))
            else:
                dep_idx = []
            qd_list = [q[i] for i in dep_idx]
            qi_list = [s for s in q if s not in qd_list]
        elif q_dep is None:
            qd_list = [s for s in q if s not in qi_list]
        elif q_ind is None:
            qi_list = [s for s in q if s not in qd_list]
        if set(qi_list) & set(qd_list) or len(qi_list) + len(qd_list) != n_all \
                or set(qi_list) | set(qd_list) != set(q):
            raise FormulationError("q_ind and q_dep must split the coordinates "
                                   f"{list(map(str, q))} with no symbol missing or repeated")
        if len(qd_list) != n_hol:
            raise FormulationError(f"there are {n_hol} holonomic constraints but {len(qd_list)} "
                                   "dependent coordinates; the numbers must be equal")
        return qi_list, qd_list

    def _speed_split(self, u_ind: Sequence | None, u_dep: Sequence | None, u: list,
                     qd_list: list) -> tuple[list, list]:
        """(u_ind, u_dep) of :meth:`to_eom` (speeds or q'): as given, completed, or chosen
        automatically (the speeds of the dependent coordinates are dependent)."""
        q = list(self._q)
        n_all = len(q)
        m_all = self.coneqs.rows if self.coneqs else 0
        qd_to_u = dict(zip(self._qdots, u, strict=True))

        def as_speed(s):
            if s in qd_to_u:
                return qd_to_u[s]
            if s in set(u):
                return s
            raise FormulationError(f"{s} given in u_ind/u_dep is neither a speed {u} nor a q' of "
                                   "the coordinates")

        ui_list = [as_speed(s) for s in (u_ind if u_ind is not None else [])]
        ud_list = [as_speed(s) for s in (u_dep if u_dep is not None else [])]
        if u_ind is None and u_dep is None:
            if m_all:
                C = self._numeric(-self.lam_coeffs)
                forced = [q.index(s) for s in qd_list]
                idx = _trailing_columns(C, forced, m_all)
                if idx is None:
                    idx = _choose_columns(C, forced, m_all, "coneqs", list(self._qdots))
                dep = set(idx)
                ud_list = [u[i] for i in range(n_all) if i in dep]
            ui_list = [s for s in u if s not in ud_list]
        elif u_dep is None:
            ud_list = [s for s in u if s not in ui_list]
        elif u_ind is None:
            ui_list = [s for s in u if s not in ud_list]
        if len(set(ui_list + ud_list)) != n_all or set(ui_list + ud_list) != set(u):
            raise FormulationError("u_ind and u_dep must split the speeds "
                                   f"{list(map(str, u))} with no speed missing or repeated")
        if len(ud_list) != m_all:
            raise FormulationError(f"there are {m_all} velocity constraints (d/dt hol_coneqs and "
                                   f"nonhol_coneqs) but {len(ud_list)} dependent speeds")
        if m_all:
            C = self._numeric(-self.lam_coeffs)
            cols = [u.index(s) for s in ud_list]
            Cd = C[:, cols]
            if np.linalg.matrix_rank(Cd) < m_all:
                raise SingularConstraintError(
                    f"the constraint Jacobian is singular in the dependent speeds "
                    f"{list(map(str, ud_list))} (at a random configuration); choose other u_dep")
        return ui_list, ud_list

    def _canonical_blocks(self, q: list, u: list, q_order_list: list, u_order: list) -> dict:
        """The blocks of :class:`CanonicalBlocks` but the variables, with the coordinates in
        ``q_order_list`` = [q_ind, q_dep] and the speeds in ``u_order`` = [u_ind, u_dep]."""
        m_all = self.coneqs.rows if self.coneqs else 0
        n_hol = self._hol_coneqs.rows
        qd_to_u = dict(zip(self._qdots, u, strict=True))
        qdd_to_ud = {a: ui.diff(t) for a, ui in zip(self._qdoubledots, u, strict=True)}
        order = [u.index(s) for s in u_order]            # coordinate index of each speed
        q_order = [q.index(s) for s in q_order_list]
        col_of = {ci: k for k, ci in enumerate(order)}
        N_all = len(q_order)
        K_u = sm.zeros(N_all, N_all)
        for r, ci in enumerate(q_order):
            K_u[r, col_of[ci]] = -1
        qdot_solution = sm.Matrix([u[ci] for ci in q_order])

        calc = self._calc
        M_d = self._m_d.extract(order, order)
        if self._md_has_qd:
            M_d = M_d.xreplace(qd_to_u)
        g_d = sm.Matrix([calc.to_sympy(self._rest_backend[ci], replace=qd_to_u) for ci in order])
        if m_all:
            C = (-self.lam_coeffs).xreplace(qd_to_u)
            B = C.extract(list(range(m_all)), order)
            b = self.coneqs.xreplace(dict.fromkeys(self._qdots, 0))
            b_a = (-self._f_cd).xreplace(qdd_to_ud).xreplace(qd_to_u)
        else:
            B, b = sm.zeros(0, N_all), sm.zeros(0, 1)
            b_a = sm.zeros(0, 1)
        return dict(K_qd=sm.eye(N_all), K_u=K_u, k=sm.zeros(N_all, 1), qdot_solution=qdot_solution,
                    f_h=self._hol_coneqs if n_hol else sm.zeros(0, 1), B=B, b=b, B_a=B, b_a=b_a,
                    M_d=M_d, g_d=g_d, reduced=False, auxiliary=sm.zeros(0, 1))

    def _speed_clashes(self, u: list):
        present = {a.expr if isinstance(a, sm.Derivative) else a for a in self._calc.sym_of}
        for s in u:
            if s in present:
                return s
        return None

    def _numeric(self, M: sm.Matrix) -> np.ndarray:
        """M evaluated at fixed pseudo-random values of all its symbols and time functions."""
        atoms: set = set()
        syms: set = set()
        for e in M:
            atoms |= _time_atoms(e)
        for e in M:
            syms |= e.free_symbols
        vals = _random_values(list(atoms) + list(syms), seed=2718)
        # replace derivatives before the functions they contain
        dmap = {a: v for a, v in vals.items() if isinstance(a, sm.Derivative)}
        rest = {a: v for a, v in vals.items() if not isinstance(a, sm.Derivative)}
        out = np.empty(M.shape)
        for i in range(M.rows):
            for j in range(M.cols):
                # sympify: an entry that is a lone symbol xreplaces to a plain float
                val = sm.sympify(M[i, j].xreplace(dmap).xreplace(rest))
                try:
                    out[i, j] = float(val.evalf())
                except TypeError as exc:
                    raise FormulationError(f"could not evaluate the constraint Jacobian entry {M[i, j]} "
                                           "numerically") from exc
        return out
