"""Reading an ``.osim`` file: the standard library's expat parser, every element with its line.

:func:`read_document` returns the ``<OpenSimDocument>`` element tree (:class:`OsimElement`:
tag, attributes, text, children, line) and the file's version number.  The helpers of
:class:`OsimElement` read the numbers, flags and names the importer needs and raise an
:class:`~symbody.errors.InputError` that names the element, its ``name`` and its line.
"""

from __future__ import annotations

import math
import os
import re
import xml.parsers.expat
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

__all__ = ["OsimElement", "OsimDocument", "read_document"]


@dataclass
class OsimElement:
    """One XML element: ``tag``, ``attrib``, ``text`` (stripped), ``children``, ``line`` (1-based)
    and ``where`` (the file, for messages)."""

    tag: str
    attrib: dict
    line: int
    where: str
    children: list = field(default_factory=list)
    text: str = ""

    @property
    def name(self) -> str:
        """The ``name`` attribute ('' when absent)."""
        return self.attrib.get("name", "")

    def describe(self) -> str:
        """``file, <Tag name="..."> (line n)``: how messages name this element."""
        label = f'<{self.tag} name="{self.name}">' if self.name else f"<{self.tag}>"
        return f"{self.where}, {label} (line {self.line})"

    def error(self, message: str) -> InputError:
        return InputError(f"{self.describe()}: {message}")

    def find(self, tag: str) -> OsimElement | None:
        """The first child named ``tag`` (or None)."""
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list:
        return [c for c in self.children if c.tag == tag]

    def objects(self) -> list:
        """The elements of a set: the children of ``<objects>`` (or the children themselves
        when the set has no ``<objects>``, as 4.x list properties)."""
        obj = self.find("objects")
        return list(obj.children) if obj is not None else list(self.children)

    def text_of(self, tag: str, default: str | None = None) -> str | None:
        c = self.find(tag)
        return c.text if c is not None else default

    def numbers(self, tag: str, count: int | None = None, default=None) -> np.ndarray | None:
        """The whitespace-separated numbers of child ``tag`` (``count`` of them when given);
        ``default`` when the child is absent or empty."""
        c = self.find(tag)
        if c is None or not c.text.strip():
            if default is None:
                return None
            return np.asarray(default, dtype=float)
        return c.vector(count)

    def vector(self, count: int | None = None) -> np.ndarray:
        """This element's text as numbers (``count`` of them when given; OpenSim writes
        ``Inf``/``-Inf``/``NaN`` as such)."""
        words = self.text.replace(",", " ").split()
        try:
            values = np.array([_number(w) for w in words], dtype=float)
        except ValueError:
            raise self.error(f"expected numbers, got {self.text!r}") from None
        if count is not None and values.size != count:
            raise self.error(f"expected {count} numbers, got {values.size} ({self.text!r})")
        return values

    def number(self, tag: str, default: float | None = None) -> float:
        """The one number of child ``tag`` (``default`` when absent; an error when required)."""
        c = self.find(tag)
        if c is None or not c.text.strip():
            if default is None:
                raise self.error(f"<{tag}> is missing")
            return float(default)
        v = c.vector(1)[0]
        return float(v)

    def flag(self, tag: str, default: bool = False) -> bool:
        c = self.find(tag)
        if c is None or not c.text.strip():
            return default
        t = c.text.strip().lower()
        if t in ("true", "1"):
            return True
        if t in ("false", "0"):
            return False
        raise c.error(f"expected true or false, got {c.text!r}")

    def walk(self):
        """This element and every element below it, depth first."""
        stack = [self]
        while stack:
            e = stack.pop()
            yield e
            stack.extend(reversed(e.children))


def _number(word: str) -> float:
    w = word.strip().lower()
    if w in ("inf", "+inf", "infinity"):
        return math.inf
    if w in ("-inf", "-infinity"):
        return -math.inf
    if w == "nan":
        return math.nan
    return float(word)


@dataclass
class OsimDocument:
    """The parsed file: ``model`` (the ``<Model>`` element), ``version`` (the document's
    ``Version``, e.g. 40000 or 30000/20303), ``path`` (None for XML text) and ``where``."""

    model: OsimElement
    version: int
    path: str | None
    where: str


def _xml_tree(text: str | bytes, where: str) -> OsimElement:
    parser = xml.parsers.expat.ParserCreate()
    stack: list[OsimElement] = []
    top: list[OsimElement] = []
    texts: list[list[str]] = []

    def start(tag, attrib):
        el = OsimElement(tag, dict(attrib), parser.CurrentLineNumber, where)
        (stack[-1].children if stack else top).append(el)
        stack.append(el)
        texts.append([])

    def end(tag):
        el = stack.pop()
        el.text = "".join(texts.pop()).strip()

    def chars(data):
        if texts:
            texts[-1].append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        raise InputError(f"{where}: malformed XML: {xml.parsers.expat.ErrorString(exc.code)} "
                         f"at line {exc.lineno}, column {exc.offset}") from None
    if not top:
        raise InputError(f"{where}: no XML element")
    return top[0]


def read_document(path_or_xml: str | os.PathLike) -> OsimDocument:
    """Parse an ``.osim`` file (a path) or its XML text (starting with '<')."""
    text_in = os.fspath(path_or_xml)
    if text_in.lstrip("\ufeff \t\r\n").startswith("<"):
        text: str | bytes = text_in
        path, where = None, "OpenSim XML string"
    else:
        path = os.path.abspath(text_in)
        if not os.path.isfile(path):
            raise InputError(f"load_opensim: no such file {text_in!r}")
        with open(path, "rb") as fh:
            text = fh.read()
        where = path
    m = re.match(rb"(\s+)(<\?xml[^>]*\?>)" if isinstance(text, bytes) else r"(\s+)(<\?xml[^>]*\?>)",
                 text)
    if m is not None:       # blank lines before the declaration: moved after it
        text = m.group(2) + m.group(1) + text[m.end():]
    root = _xml_tree(text, where)
    if root.tag == "OpenSimDocument":
        try:
            version = int(root.attrib.get("Version", "0"))
        except ValueError:
            raise root.error(f"Version must be an integer, got {root.attrib.get('Version')!r}") \
                from None
        model = root.find("Model")
        if model is None:
            raise root.error("no <Model> element (is this an OpenSim model file?)")
    elif root.tag == "Model":     # a bare <Model> (no document wrapper): the current format
        version, model = 40000, root
    else:
        raise root.error("the root element must be <OpenSimDocument> (an OpenSim .osim file)")
    return OsimDocument(model, version, path, where)
