"""OpenSim's expression strings (Lepton) read without ``eval``: a small safe parser.

``ExpressionBasedCoordinateForce`` and ``ExpressionBasedBushingForce`` hold a formula as text,
e.g. ``-10*q - 0.5*qdot + 2*sin(q)^2``.  A model file is input, so the text is never handed
to ``eval``, ``sympy.sympify`` or ``parse_expr``: :func:`parse_expression` tokenizes it and
parses it with Lepton's own grammar (Lepton's ``Parser::parsePrecedence``: ``+ -`` below
``* /`` below unary minus below ``^``; ``^`` right-associative, the others left), turning
each node into a symengine expression.  Accepted: numbers (``1``, ``.5``, ``2e-3``), the
variables the caller names, ``+ - * / ^``, parentheses and Lepton's functions ``sqrt exp log
sin cos sec csc tan cot asin acos atan sinh cosh tanh erf erfc step delta square cube recip
min max abs``; ``step(x)`` is 1 for x >= 0 else 0, ``delta(x)`` is 1 at x = 0 else 0, ``min``,
``max`` and ``abs`` are written as ``Piecewise`` (differentiable by symengine).  Anything
else (an unknown name or function, a stray character, unbalanced parentheses) is an
:class:`~symbody.errors.InputError` naming the element, its line and the offending text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import symengine as se

from ...errors import InputError
from .vector3 import F, where

__all__ = ["parse_expression", "FUNCTIONS"]

_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[-+*/^(),]))")
#: Lepton's binary operators: (precedence, left-associative)
_BINARY = {"+": (0, True), "-": (0, True), "*": (1, True), "/": (1, True), "^": (3, False)}


def _min(a, b):
    return where(se.Le(a, b), a, b)


def _max(a, b):
    return where(se.Ge(a, b), a, b)


#: Lepton's functions: name -> (number of arguments, builder of the symengine expression)
FUNCTIONS: dict[str, tuple[int, Callable]] = {
    "sqrt": (1, se.sqrt), "exp": (1, se.exp), "log": (1, se.log), "sin": (1, se.sin),
    "cos": (1, se.cos), "sec": (1, lambda x: 1 / se.cos(x)), "csc": (1, lambda x: 1 / se.sin(x)),
    "tan": (1, se.tan), "cot": (1, lambda x: 1 / se.tan(x)), "asin": (1, se.asin),
    "acos": (1, se.acos), "atan": (1, se.atan), "sinh": (1, se.sinh), "cosh": (1, se.cosh),
    "tanh": (1, se.tanh), "erf": (1, se.erf), "erfc": (1, lambda x: 1 - se.erf(x)),
    "step": (1, lambda x: where(se.Ge(x, F(0.0)), F(1.0), F(0.0))),
    "delta": (1, lambda x: where(se.Eq(x, F(0.0)), F(1.0), F(0.0))),
    "square": (1, lambda x: x * x), "cube": (1, lambda x: x * x * x),
    "recip": (1, lambda x: 1 / x), "min": (2, _min), "max": (2, _max),
    "abs": (1, lambda x: where(se.Ge(x, F(0.0)), x, -x)),
}


def _tokens(text: str, fail: Callable) -> list[tuple[str, str]]:
    out, pos = [], 0
    stripped = text.rstrip()
    while pos < len(stripped):
        m = _TOKEN.match(stripped, pos)
        if m is None:
            fail(f"unexpected character {stripped[pos:].lstrip()[:1]!r} at position {pos}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list, variables: Mapping, fail: Callable):
        self.tokens, self.variables, self.fail, self.pos = tokens, variables, fail, 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def expect(self, text: str) -> None:
        tok = self.peek()
        if tok is None or tok[1] != text:
            self.fail(f"expected {text!r}" + (f", got {tok[1]!r}" if tok else " at the end")
                      + " (unbalanced parentheses?)")
        self.pos += 1

    def value(self):
        tok = self.peek()
        if tok is None:
            self.fail("unexpected end of expression")
        kind, text = tok
        self.pos += 1
        if kind == "number":
            return F(float(text))
        if kind == "name":
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                return self.call(text)
            if text not in self.variables:
                self.fail(f"unknown variable {text!r} (allowed: "
                          f"{', '.join(sorted(self.variables))})")
            return self.variables[text]
        if text == "(":
            inner = self.binary(0)
            self.expect(")")
            return inner
        if text == "-":
            return -self.binary(2)
        self.fail(f"unexpected {text!r}")
        raise AssertionError  # unreachable: fail raises

    def call(self, name: str):
        if name not in FUNCTIONS:
            self.fail(f"unknown function {name!r} (Lepton's functions: "
                      f"{', '.join(FUNCTIONS)})")
        arity, build = FUNCTIONS[name]
        self.expect("(")
        args = [self.binary(0)]
        while self.peek() is not None and self.peek()[1] == ",":
            self.pos += 1
            args.append(self.binary(0))
        self.expect(")")
        if len(args) != arity:
            self.fail(f"{name}() takes {arity} argument(s), got {len(args)}")
        return build(*args)

    def binary(self, precedence: int):
        result = self.value()
        while (tok := self.peek()) is not None and tok[0] == "op" and tok[1] in _BINARY:
            prec, left = _BINARY[tok[1]]
            if prec < precedence:
                break
            self.pos += 1
            arg = self.binary(prec + 1 if left else prec)
            op = tok[1]
            result = (result + arg if op == "+" else result - arg if op == "-" else
                      result * arg if op == "*" else result / arg if op == "/" else result ** arg)
        return result


def parse_expression(text: str, variables: Mapping[str, se.Basic], element=None,
                     what: str = "expression") -> se.Basic:
    """The symengine expression of a Lepton formula ``text`` in the named ``variables``
    ({name in the text: symengine expression}).  ``element`` (the XML element, for the
    message) and ``what`` name the formula in an :class:`InputError` for anything the
    grammar (module docstring) does not accept."""
    def fail(message: str):
        where_ = element.describe() if element is not None else "expression"
        raise InputError(f"{where_}: {what} {text!r}: {message}")

    if not isinstance(text, str) or not text.strip():
        fail("is empty")
    tokens = _tokens(text, fail)
    parser = _Parser(tokens, variables, fail)
    result = parser.binary(0)
    if parser.peek() is not None:
        fail(f"unexpected {parser.peek()[1]!r} after a complete expression")
    return result
