"""What the exporters check before they write anything: values, names, events and paths.

An export writes numbers into files that run without Python (default constants, start
values, a stop time), so the numbers are checked as ``simulate`` checks them, with its
messages: finite values (``model.constants_array`` / ``state_array``), positive masses and
positive semidefinite inertias with the constants given
(:func:`symbody.compilation.body_check.check_body_inertias`), a stop time after the start.
Names become C identifiers and FMU variable names; events that the equations need cannot
be carried and are never dropped silently; a file that cannot be written is an InputError
naming the path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..compilation.body_check import check_body_inertias
from ..errors import InputError

__all__ = ["check_identifier", "identifier_from_path", "checked_constants", "check_stop_time",
           "check_tolerances", "check_events", "check_distinct_names", "OutputLocation"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: C99's keywords (a name is a prefix of the exported functions, but a file or an identifier
#: that is a keyword alone would be confusing, so they are refused; ``main`` is no keyword)
_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while _Bool _Complex _Imaginary".split())


def check_identifier(name: Any, argument: str = "name") -> str:
    """``name`` as a C identifier prefix (letters, digits, _; not starting with a digit; not a
    C keyword), or InputError saying which rule it breaks."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise InputError(f"{argument} must be a C identifier (letters, digits and _, not starting "
                         f"with a digit), got {name!r}")
    if name in _C_KEYWORDS:
        raise InputError(f"{argument} must be a C identifier, got {name!r}, which is a keyword "
                         "of C")
    return name


def identifier_from_path(path: Path) -> str:
    """The model identifier an FMU file name gives: its stem with every other character than
    a letter, digit or _ replaced by _, and ``m_`` in front of a leading digit
    ('1pend.fmu' -> 'm_1pend')."""
    ident = "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_"
                    for ch in path.stem) or "model"
    if ident[0].isdigit():
        ident = "m_" + ident
    if ident in _C_KEYWORDS:
        ident = "m_" + ident
    return ident


def checked_constants(model: Any, constants: Any) -> np.ndarray | None:
    """The constants as an array in model order, checked as simulate checks them (finite;
    bodies' masses positive and inertias positive semidefinite); None when not given."""
    if constants is None:
        return None
    P = model.constants_array(constants)
    check_body_inertias(model, P)
    return P


def check_stop_time(stop_time: Any) -> float:
    """The FMU's DefaultExperiment stop time: a finite time after its start, 0."""
    try:
        tf = float(stop_time)
    except (TypeError, ValueError) as exc:
        raise InputError(f"stop_time must be a number, got {stop_time!r}") from exc
    if not math.isfinite(tf):
        raise InputError(f"t_span = (0, {tf:g}) must be two different finite times "
                         "(stop_time is the end of the FMU's default experiment, which starts at 0)")
    if tf <= 0.0:
        raise InputError(f"t_span = (0, {tf:g}) ends before it starts: stop_time, the end of the "
                         "FMU's default experiment (which starts at 0), must be positive")
    return tf


def check_tolerances(rtol: Any, atol: Any) -> tuple[float, float]:
    """The embedded integrator's tolerances: positive finite numbers."""
    values = []
    for name, v in (("rtol", rtol), ("atol", atol)):
        try:
            f = float(v)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name} must be a positive number, got {v!r}") from exc
        if not (math.isfinite(f) and f > 0):
            raise InputError(f"{name} must be a positive number, got {v!r}")
        values.append(f)
    return values[0], values[1]


def check_events(model: Any, events: Any, what: str) -> None:
    """Events cannot be carried by the exported code (it integrates the smooth equations).

    ``events`` given (a non-empty sequence): refused.  ``None`` (the default): refused when
    the model's equations need events (``model.eom.events``: the walkers of the zoo carry
    their heelstrike), which an export would drop silently.  ``False`` (or an empty
    sequence): the user says the events are not wanted; the smooth equations are exported.
    """
    if events is None:
        needed = tuple(getattr(getattr(model, "eom", None), "events", ()) or ())
        if needed:
            names = ", ".join(repr(str(getattr(e, "name", None) or e)) for e in needed)
            raise InputError(
                f"{what}: the model's equations come with the event{'s' if len(needed) > 1 else ''} "
                f"{names} (impacts; the zoo entry's events, which simulate takes as "
                "events=zoo.events), and the exported code cannot carry events: it would "
                "integrate the smooth equations only and never apply them. Pass events=False to "
                "export the smooth equations without them")
        return
    if events is False:
        return
    if isinstance(events, Sequence) and not isinstance(events, str) and len(events) == 0:
        return
    raise InputError(f"{what}: events (impacts, terminal conditions) cannot be carried by the "
                     "exported code; it integrates the smooth equations of motion only "
                     "(events=False exports them without the model's own events)")


def check_distinct_names(kinds: Sequence[tuple[str, str]], what: str) -> None:
    """InputError naming each name used twice and what uses it (``kinds``: (name, what it
    is, e.g. 'coordinate q(t)' or 'output y'))."""
    users: dict[str, list[str]] = {}
    for name, kind in kinds:
        users.setdefault(name, []).append(kind)
    clashes = {n: k for n, k in users.items() if len(k) > 1}
    if not clashes:
        return
    parts = [f"{n!r} ({' and '.join(k)})" for n, k in sorted(clashes.items())]
    outputs = any(k.startswith("the output") for ks in clashes.values() for k in ks)
    advice = ("rename the outputs" if outputs else
              "rename the symbols (the FMU's variables are named after them and must differ)")
    raise InputError(f"{what}: the variable name{'s' if len(parts) > 1 else ''} "
                     f"{', '.join(parts)} {'are' if len(parts) > 1 else 'is'} used twice; {advice}")


class OutputLocation:
    """A file or folder the export writes: OSErrors become an InputError naming the path and
    the reason (``with OutputLocation(path, what): ...``)."""

    def __init__(self, path: Path, what: str) -> None:
        self.path, self.what = Path(path), what

    def check_file(self) -> None:
        """Before the work: InputError when the file cannot be there (it is a folder, or a
        part of its path is a file)."""
        if self.path.is_dir():
            raise InputError(f"{self.what}: cannot write {str(self.path)!r}: it is a folder")
        for parent in self.path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise InputError(f"{self.what}: cannot write {str(self.path)!r}: a part of the "
                                     "path that should be a folder is a file")
                return

    def __enter__(self) -> OutputLocation:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        if exc is None or not isinstance(exc, OSError):
            return False
        reason = exc.strerror or str(exc)
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            reason = "a part of the path that should be a folder is a file"
        elif isinstance(exc, IsADirectoryError):
            reason = "it is a folder"
        raise InputError(f"{self.what}: cannot write {str(self.path)!r}: {reason}") from exc
