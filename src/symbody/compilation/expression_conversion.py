"""SymPy (or symengine) expressions -> symengine expressions in positional arguments.

Every argument of a kernel is replaced by a positional symbol ``_a0, _a1, ...``
(derivatives as a whole, before the functions inside them), so names never clash; each
distinct node gets a structural digest (BLAKE2b of its type and its children's digests),
which keys the kernel cache (:mod:`.kernel_backends`) without printing the expressions.
Used by :func:`.codegen.compile_kernel`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sympy as sm

from ..errors import CompilationError
from ..symengine_bridge import DESCEND, _se_structured, fold_dag, symengine_node

try:  # symengine is a hard dependency, but keep the numpy backend usable without it
    import symengine as se
except ImportError:  # pragma: no cover
    se = None

#: SymPy class name -> symengine constructor of the nodes converted one by one although they
#: hold conditions (Piecewise, relations, And/Or/Not, Max/Min; symengine_bridge's table)
_STRUCTURED = _se_structured() if se is not None else {}


def _positional(n: int) -> list[sm.Symbol]:
    return [sm.Symbol(f"_a{i}") for i in range(n)]


def _check_args(args: Sequence) -> None:
    seen = set()
    for a in args:
        if not isinstance(a, (sm.Symbol, sm.Derivative, sm.core.function.AppliedUndef)):
            raise CompilationError(f"argument {a!r} is not a Symbol, a function of time or a "
                                   "derivative of one")
        if a in seen:
            raise CompilationError(f"argument {a} is listed twice")
        seen.add(a)


def _describe(expr, limit: int = 120) -> str:
    s = str(expr)
    return s if len(s) <= limit else s[:limit] + " ..."


class _ToSymengine:
    """Memoized sympy -> symengine conversion with the arguments renamed ``_a0, _a1, ...``.

    sympy expressions built by mechanics share subtrees heavily; converting each unique
    node once (instead of symengine's tree walk) takes milliseconds where
    ``symengine.sympify`` takes seconds (the Whipple bicycle: 2 000 unique nodes, 15 s
    -> 0.02 s).  Each node also gets a structural digest (BLAKE2b of its type and its
    children's digests; arguments by position), which keys the kernel cache without
    printing the expressions.
    """

    def __init__(self, args: Sequence, name: str):
        self.name = name
        self.args = list(args)
        self.pos = [se.Symbol(f"_a{i}") for i in range(len(args))]
        self._arg_values = {a: (self.pos[i], b"a%d" % i) for i, a in enumerate(args)}
        self.memo: dict = {}           # fold_dag's memo: id(node) -> (node, (symengine, digest))
        self._se_mapping = None
        self._argset = set(self.args)
        #: first symbol / function of time met that is not an argument
        self.unknown = None

    def __call__(self, e):
        """(symengine expression, digest) of the sympy expression ``e``."""
        return fold_dag([e], self._visit, self._combine, self.memo)[0]

    def _visit(self, e):
        if e.is_Add or e.is_Mul or e.is_Pow:     # most nodes (arguments are atoms)
            return DESCEND
        hit = self._arg_values.get(e)
        if hit is not None:
            return hit
        if e.is_Symbol:                    # not an argument
            if self.unknown is None:
                self.unknown = e
            return se.Symbol(e.name), b"S" + e.name.encode()
        if e.is_Integer:
            return se.Integer(int(e)), b"I%d" % int(e)
        if e.is_Rational:
            return se.Rational(int(e.p), int(e.q)), b"R%d/%d" % (int(e.p), int(e.q))
        if e.is_Float:
            v = float(e)
            return se.RealDouble(v), b"F" + repr(v).encode()
        if isinstance(e, sm.Function) and not isinstance(e, sm.core.function.AppliedUndef):
            fname = type(e).__name__
            if fname != "Piecewise" and getattr(se, fname, None) is not None:
                return DESCEND
        if e.args and type(e).__name__ in _STRUCTURED:
            # a Piecewise and its conditions node by node (a contact force's: its long gap
            # expression converted and digested once, not printed whole)
            return DESCEND
        return self._whole(e)

    def _combine(self, e, parts):
        tag = b"+" if e.is_Add else b"*" if e.is_Mul else b"^" if e.is_Pow else None
        if tag is not None:
            return symengine_node(e, [p[0] for p in parts]), _digest(tag, parts)
        fname = type(e).__name__
        if fname in _STRUCTURED:
            return _STRUCTURED[fname](*[p[0] for p in parts]), _digest(fname.encode(), parts)
        try:
            return getattr(se, fname)(*[p[0] for p in parts]), _digest(fname.encode(), parts)
        except Exception:
            return self._whole(e)

    def _whole(self, e):
        # anything else (Piecewise, relationals, constants like pi, unknown functions):
        # symengine's own conversion, then the argument renaming
        digest, rest = self._walk_whole(e)
        if self.unknown is None:
            funcs = [a for a in e.atoms(sm.Derivative, sm.core.function.AppliedUndef)
                     if a not in self._argset and not (isinstance(a, sm.core.function.AppliedUndef)
                                                       and any(d.expr == a for d in e.atoms(sm.Derivative)
                                                               if d in self._argset))]
            if funcs:
                self.unknown = sorted(funcs, key=str)[0]
            elif rest:
                self.unknown = sorted(rest, key=str)[0]
        if self._se_mapping is None:
            self._se_mapping = {}
            for a, p in zip(self.args, self.pos):
                try:
                    self._se_mapping[se.sympify(a)] = p
                except Exception as exc:
                    raise CompilationError(f"{self.name}: symengine cannot represent the "
                                           f"argument {a}") from exc
        try:
            E = se.sympify(e).xreplace(self._se_mapping)
        except Exception as exc:
            raise CompilationError(f"{self.name}: symengine cannot convert {_describe(e)} "
                                   f"({exc}); use backend='numpy'") from exc
        return E, b"X" + digest

    def _walk_whole(self, e) -> tuple[bytes, set]:
        """(structural digest, plain symbols outside the arguments) of a node converted whole,
        by one walk over its DAG (the arguments by position; no SymPy rebuild, which for a
        Piecewise re-evaluates every condition: seconds on a contact model's forces)."""
        argpos = {a: i for i, a in enumerate(self.args)}
        memo: dict = {}
        rest: set = set()

        def walk(n):
            got = memo.get(id(n))
            if got is not None:
                return got[1]
            i = argpos.get(n)
            if i is not None:
                out = b"a%d" % i
            elif not n.args:
                if n.is_Symbol:
                    rest.add(n)
                out = b"L" + sm.srepr(n).encode()
            else:
                inner = b",".join(walk(a) for a in n.args)
                out = hashlib.blake2b(type(n).__name__.encode() + b"(" + inner + b")",
                                      digest_size=16).digest()
            memo[id(n)] = (n, out)
            return out

        return walk(e), rest


class _RenameSymengine:
    """Memoized renaming of symengine expressions' symbols to ``_a0, _a1, ...``.

    For expressions the formulation formed in symengine (``EquationsOfMotion.
    symengine_dynamics()``): no SymPy round trip.  ``index``: symengine symbol name ->
    argument position; ``names``: symengine symbol name -> the SymPy atom (for errors).
    Each distinct node is rebuilt once (symengine's own ``xreplace`` walks the tree, not
    the DAG: seconds on the 100-link chain) and gets a structural digest, as in
    :class:`_ToSymengine`.
    """

    def __init__(self, index: dict, names: dict):
        self.index, self.names = index, names
        self.memo: dict = {}
        #: first symbol met that is not an argument (its SymPy atom)
        self.unknown = None

    def __call__(self, e):
        hit = self.memo.get(e)
        if hit is None:
            hit = self._convert(e)
            self.memo[e] = hit
        return hit

    def _convert(self, e):
        args = e.args
        if not args:
            if e.is_Symbol:
                k = self.index.get(e.name)
                if k is None:
                    if self.unknown is None:
                        self.unknown = self.names.get(e.name) or sm.Symbol(e.name)
                    return e, b"S" + e.name.encode()
                return se.Symbol(f"_a{k}"), b"a%d" % k
            text = repr(float(e)) if type(e).__name__ == "RealDouble" else str(e)
            return e, b"N" + type(e).__name__.encode() + b":" + text.encode()
        parts = [self(a) for a in args]
        cls = type(e).__name__
        new = [p[0] for p in parts]
        if cls == "Add":
            out = se.Add(*new)
        elif cls == "Mul":
            out = se.Mul(*new)
        elif cls == "Pow":
            out = se.Pow(*new)
        elif cls in _REBUILD:
            out = _REBUILD[cls](new)
        else:
            # (symengine's relationals, met inside a Piecewise, have no ``func``)
            out = e.func(*new) if hasattr(e, "func") else type(e)(*new)
        return out, _digest(cls.encode(), parts)


#: symengine nodes without a usable ``func``: rebuilt from their (converted) args
#: (a Piecewise's args are flat: value, condition, value, condition, ...)
_REBUILD = {
    "Piecewise": lambda a: se.Piecewise(*zip(a[0::2], a[1::2])),
    "StrictLessThan": lambda a: se.Lt(*a), "LessThan": lambda a: se.Le(*a),
    "And": lambda a: se.And(*a), "Or": lambda a: se.Or(*a), "Not": lambda a: se.Not(*a),
}


def _digest(tag: bytes, parts) -> bytes:
    h = hashlib.blake2b(tag, digest_size=16)
    for p in parts:
        h.update(p[1])
    return h.digest()


def _is_symengine(e) -> bool:
    return se is not None and isinstance(e, se.Basic)


def _to_symengine(args: Sequence, exprs: Sequence, name: str,
                  symengine_names: dict | None = None) -> tuple[list, str]:
    """Convert sympy ``exprs`` to symengine with ``args`` renamed ``_a0, _a1, ...``.

    ``exprs`` may also hold symengine expressions, whose symbol names
    ``symengine_names`` maps to SymPy atoms (plain Symbols go by their own name).
    Returns (expressions, structural key).  Raises CompilationError naming an
    expression that depends on something not in ``args``.
    """
    conv = _ToSymengine(args, name)
    ren = None
    out = []
    key = hashlib.blake2b(b"exprs", digest_size=32)
    for j, e in enumerate(exprs):
        if _is_symengine(e):
            if ren is None:
                names = dict(symengine_names or {})
                name_of = {atom: nm for nm, atom in names.items()}
                index = {}
                for i, a in enumerate(args):
                    nm = name_of.get(a)
                    if nm is None and isinstance(a, sm.Symbol):
                        nm = a.name
                    if nm is not None:
                        index[nm] = i
                ren = _RenameSymengine(index, names)
            E, dig = ren(e)
            unknown = ren.unknown
        else:
            E, dig = conv(e)
            unknown = conv.unknown
        key.update(dig)
        if unknown is not None:
            bad = unknown
            kind = "the symbol" if bad.is_Symbol else ""
            raise CompilationError(f"{name}: expression {j} depends on {kind + ' ' if kind else ''}"
                                   f"{bad}, which is not among the arguments: {_describe(e)}")
        out.append(E)
    return out, key.hexdigest()


def _unrename(text: str, args: Sequence) -> str:
    import re
    return re.sub(r"_a(\d+)", lambda m: str(args[int(m.group(1))]), text)


def _to_sympy_positional(args: Sequence, exprs: Sequence, name: str) -> list:
    pos = _positional(len(args))
    mapping = dict(zip(args, pos))
    allowed = set(pos)
    out = []
    for j, e in enumerate(exprs):
        E = sm.sympify(e).xreplace(mapping)
        bad = [a for a in E.atoms(sm.Derivative, sm.core.function.AppliedUndef)]
        if bad:
            raise CompilationError(f"{name}: expression {j} depends on {bad[0]}, which is not "
                                   f"among the arguments: {_describe(e)}")
        extra = [s for s in E.free_symbols if s not in allowed]
        if extra:
            raise CompilationError(f"{name}: expression {j} depends on the symbol {extra[0]}, "
                                   f"which is not among the arguments: {_describe(e)}")
        out.append(E)
    return out
