"""Option objects of the pictures: the figure (:class:`FigureOptions`) and, for animations,
the camera (:class:`Camera`).

::

    sb.plot(sol, model, figure=FigureOptions(title="four-bar", figsize=(9, 4)))
    sb.animate(sol, drawing, fps=10, camera=Camera(view="3d", follow=True),
               figure=FigureOptions(title="snakeboard", dpi=60))

The former keywords (``title=``, ``figsize=``, ``dpi=``, ``close=``, ``view=``, ``plane=``,
``follow=``) still work for one release, with a DeprecationWarning naming the new spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from ..errors import InputError

__all__ = ["FigureOptions", "Camera", "FIGURE_KEYWORDS", "CAMERA_KEYWORDS", "checked_option"]

T = TypeVar("T")


@dataclass(frozen=True)
class FigureOptions:
    """How a figure looks and what happens to it.

    ``title``: text above the axes (:func:`~symbody.plot`: default the trajectory's
    constraint mode; :func:`~symbody.animate`: shown before the clock); ``figsize``: (width,
    height) in inches (default: chosen from the content); ``dpi``: dots per inch (default:
    80 for animations, matplotlib's for plots); ``close``: close the figure once built so that
    Jupyter does not show a static copy (default: animations close it unless a GUI backend is
    in use, plots leave it open).
    """

    title: str | None = None
    figsize: tuple[float, float] | None = None
    dpi: float | None = None
    close: bool | None = None

    def __post_init__(self) -> None:
        if self.figsize is not None:
            try:
                width, height = (float(v) for v in self.figsize)
            except (TypeError, ValueError) as exc:
                raise InputError(f"figsize must be (width, height) in inches, got "
                                 f"{self.figsize!r}") from exc
            if not (width > 0 and height > 0):
                raise InputError(f"figsize must be positive, got {self.figsize!r}")
        if self.dpi is not None and not float(self.dpi) > 0:
            raise InputError(f"dpi must be positive, got {self.dpi!r}")


@dataclass(frozen=True)
class Camera:
    """Where an animation looks from.

    ``view``: "2d" or "3d" (default: the drawing's); ``plane``: the two axis indices of a 2d
    view, e.g. (0, 2) for x-z (default: the drawing's, else (0, 1)); ``follow``: keep the
    camera on the drawing (moving axes) instead of showing the whole path (default: follow
    when the path is more than eight times the size of the drawing).
    """

    view: str | None = None
    plane: tuple[int, int] | None = None
    follow: bool | None = None

    def __post_init__(self) -> None:
        if self.view is not None and (not isinstance(self.view, str)
                                      or self.view.lower() not in ("2d", "3d")):
            raise InputError(f"Camera(view={self.view!r}): give '2d' or '3d'")


def checked_option(value: Any, cls: type[T], keyword: str) -> T:
    """``value`` of the keyword ``keyword`` (an object of the option class ``cls``, or None
    for the defaults), or an InputError giving the spelling ``keyword=cls(...)``."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if value is cls:
        return cls()
    if isinstance(value, dict):
        args = ", ".join(f"{k}={v!r}" for k, v in value.items())
        _refuse(value, cls, keyword, f", e.g. {keyword}={cls.__name__}({args})")
    _refuse(value, cls, keyword, "")


def _refuse(value: Any, cls: type, keyword: str, example: str) -> NoReturn:
    raise InputError(f"{keyword}={value!r}: give a symbody.{cls.__name__}(...) object{example}")


#: the former keywords of the plotting functions that are now fields of FigureOptions
FIGURE_KEYWORDS = ("title", "figsize", "dpi", "close")
#: the former keywords of animate that are now fields of Camera
CAMERA_KEYWORDS = ("view", "plane", "follow")
