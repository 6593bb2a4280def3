"""Matplotlib internals symbody relies on, in one place (checked on the versions in ``CHECKED_ON``).

symbody's fast export (:mod:`symbody.presentation.export`) renders a ``FuncAnimation`` frame
by frame itself (blitting the moving artists over a cached background) instead of through
``Animation.save`` / ``to_jshtml``, which redraw the whole figure for every frame.  The public
animation API has no accessor for an animation's figure and no way to say "this animation
was rendered": without the second, matplotlib warns "Animation was deleted without rendering
anything" when the animation is garbage-collected.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CHECKED_ON", "animation_figure", "mark_rendered"]

#: Matplotlib versions these helpers were checked on (tests/compat/test_matplotlib.py).
CHECKED_ON = ("3.11.2",)


def animation_figure(animation: Any) -> Any:
    """The figure a matplotlib ``Animation`` draws on (``Animation._fig``)."""
    return animation._fig


def mark_rendered(animation: Any) -> None:
    """Record that ``animation`` was rendered (``Animation._draw_was_started``), so that
    matplotlib does not warn when it is deleted unplayed."""
    animation._draw_was_started = True
