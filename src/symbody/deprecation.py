"""Old keywords that moved into option objects: still accepted for one release, with a warning.

A function whose loose keywords became the fields of a typed option object (``title=`` and
``figsize=`` of :func:`symbody.plot` are now ``figure=FigureOptions(title=..., figsize=...)``)
is decorated with :func:`moved_keywords`: a call with an old keyword gets a
DeprecationWarning naming the new spelling, and the keyword is folded into the object.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from .errors import InputError

__all__ = ["moved_keywords"]

F = TypeVar("F", bound=Callable[..., Any])


def moved_keywords(caller: str, moves: Mapping[str, tuple[type, Sequence[str] | Mapping[str, str]]]
                   ) -> Callable[[F], F]:
    """Decorator: the old keywords of ``caller`` that are now fields of option objects.

    ``moves``: ``{new keyword: (option class, old keywords)}``; the old keywords are a list
    (each the name of its field) or a mapping ``{old keyword: field}``.  An old keyword gives
    a DeprecationWarning (``caller(title=...) is deprecated ...; use figure=FigureOptions(
    title=...)``) and becomes a field of an object of the option class passed as the new
    keyword.  Where the new keyword also takes a shorthand for the object's first field
    (``transcription="midpoint"`` for ``Collocation("midpoint")``), a shorthand given with
    old keywords becomes that first field; an old keyword together with an object of the
    class raises InputError (give it once).
    """
    fields = {new: (cls, dict(old) if isinstance(old, Mapping) else {k: k for k in old})
              for new, (cls, old) in moves.items()}
    owner = {old: new for new, (_, names) in fields.items() for old in names}

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            old = [k for k in kwargs if k in owner]
            for key in old:
                new = owner[key]
                cls, names = fields[new]
                if isinstance(kwargs.get(new), cls):
                    raise InputError(f"{caller}() got {new}= and the old keyword {key}=; give it "
                                     f"inside {cls.__name__}(...) only")
                warnings.warn(f"{caller}({key}=...) is deprecated and will be removed in the next "
                              f"release; use {new}={cls.__name__}({names[key]}=...)",
                              DeprecationWarning, stacklevel=2)
            for new, (cls, names) in fields.items():
                given = {names[k]: kwargs.pop(k) for k in old if owner[k] == new}
                if given:
                    shorthand = kwargs.get(new)
                    kwargs[new] = cls(**given) if shorthand is None else cls(shorthand, **given)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
