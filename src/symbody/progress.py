"""A small, dependency-free progress indicator for long formation, compilation and simulation.

It writes one self-overwriting line to stderr when stderr is a terminal, or in a Jupyter
notebook (there as a tqdm widget when ipywidgets is installed), and only when the
environment variable ``SYMBODY_QUIET`` is unset (or empty / "0").  Everywhere else (pipes,
CI logs, tests) it is silent and costs a function call.

Two ways to use it::

    with Progress("forming Kane's equations", total=len(bodies)) as bar:
        for body in bodies:
            ...
            bar.update()                       # advance by one step

    bar = as_progress(progress, "simulating", total=tf - t0)   # inside a library function
    bar(t)                                     # callback form: set absolute progress

Library functions take a ``progress=None`` argument and normalise it with
:func:`as_progress`: ``None`` means "automatic" (shown in a terminal only), ``False`` silent,
``True`` forced on, a :class:`Progress` is used as given, and any other callable
``f(done, total, message)`` receives the updates instead of the terminal.

This module imports nothing from symbody but its exceptions, so any layer may use it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from .errors import InputError

__all__ = ["Progress", "as_progress", "progress_enabled", "quiet", "in_notebook"]

_QUIET_ENV = "SYMBODY_QUIET"


def quiet() -> bool:
    """True when ``SYMBODY_QUIET`` asks for silence (set to anything but "", "0", "false", "no")."""
    value = os.environ.get(_QUIET_ENV, "").strip().lower()
    return value not in ("", "0", "false", "no")


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where stderr is not a TTY but shows a progress line)."""
    shell = sys.modules.get("IPython")
    if shell is None or "ipykernel" not in sys.modules:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:  # pragma: no cover - very old IPython
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def progress_enabled(stream: IO[str] | None = None) -> bool:
    """True when progress should be drawn on ``stream`` (default stderr): not quiet, and a TTY
    or (for stderr) a Jupyter notebook."""
    if quiet():
        return False
    if stream is None or stream is sys.stderr:
        if in_notebook():
            return True
        stream = sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def _format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d} min"


class Progress:
    """One line of progress on stderr: ``label [#####.....]  52%  message  3.1 s``.

    Parameters
    ----------
    label : what is being done ("compiling", "simulating four-bar").
    total : the value that means "finished" (a step count, or t_f - t_0 for a simulation);
        ``None`` for an open-ended task (then a step counter and a spinner are shown).
    enabled : ``None`` decides automatically (:func:`progress_enabled`), True/False force it.
    stream : where to draw (default ``sys.stderr``).
    min_interval : seconds between redraws, so that per-step callbacks stay cheap.
    delay : nothing is drawn during the first ``delay`` seconds, so short tasks stay silent.
    callback : instead of drawing, call ``callback(done, total, message)`` on each update
        (always, regardless of ``enabled``).

    Use it as a context manager (the line is finished with the elapsed time on exit) or call
    :meth:`update` / :meth:`set` / the instance itself and finally :meth:`close`.
    """

    _SPINNER = "|/-\\"

    def __init__(self, label: str = "", total: float | None = None, *, enabled: bool | None = None,
                 stream: IO[str] | None = None, min_interval: float = 0.1, delay: float = 0.5,
                 callback: Callable[[float, float | None, str], Any] | None = None):
        self.label = label
        self.total = None if total is None else float(total)
        self.stream = sys.stderr if stream is None else stream
        self.callback = callback
        self.enabled = progress_enabled(self.stream) if enabled is None else bool(enabled)
        self.min_interval = float(min_interval)
        self.delay = float(delay)
        self.done = 0.0
        self.message = ""
        self.start_time = time.perf_counter()
        self._last_draw = -float("inf")
        self._drawn = False
        self._closed = False
        self._width = 0
        self._widget: Any = None          # a tqdm notebook bar (Jupyter with ipywidgets), or False

    # -- updating ------------------------------------------------------------------------------
    def update(self, step: float = 1, message: str | None = None) -> None:
        """Advance by ``step`` (default one step)."""
        self.set(self.done + step, message)

    def set(self, done: float, message: str | None = None, force: bool = False) -> None:
        """Set the absolute progress ``done`` (0 <= done <= total); ``force`` draws at once
        (before ``delay`` has passed: for a step known to take long)."""
        self.done = float(done)
        if message is not None:
            self.message = str(message)
        if self.callback is not None:
            self.callback(self.done, self.total, self.message)
        if not self.enabled or self._closed:
            return
        now = time.perf_counter()
        if force or (now - self.start_time >= self.delay and now - self._last_draw >= self.min_interval):
            self._last_draw = now
            self._draw(self._line())

    def __call__(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Callback form: ``bar(done)``, ``bar(done, total)`` or ``bar(done, total, message)``."""
        if total is not None:
            self.total = float(total)
        self.set(done, message)

    def close(self, message: str | None = None) -> None:
        """Finish the line with the elapsed time (only if something was drawn)."""
        if self._closed:
            return
        self._closed = True
        if self._widget:
            if message:
                self._widget.set_postfix_str(message, refresh=False)
            self._widget.close()
            return
        if self.enabled and self._drawn:
            elapsed = _format_seconds(self.elapsed)
            tail = f"  {message}" if message else ""
            self._draw(f"{self.label}: done in {elapsed}{tail}")
            self._write("\n")

    @property
    def elapsed(self) -> float:
        """Seconds since the indicator was created."""
        return time.perf_counter() - self.start_time

    @property
    def fraction(self) -> float | None:
        """done / total clipped to [0, 1], or None for an open-ended task."""
        if not self.total:
            return None
        return min(max(self.done / self.total, 0.0), 1.0)

    # -- context manager -----------------------------------------------------------------------
    def __enter__(self) -> Progress:
        if self.enabled and self.delay <= 0:
            self._last_draw = time.perf_counter()
            self._draw(self._line())
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            if self.enabled and self._drawn and not self._closed:
                self._write("\n")
            self._closed = True

    # -- drawing -------------------------------------------------------------------------------
    def _line(self) -> str:
        fraction = self.fraction
        if fraction is None:
            spin = self._SPINNER[int(self.done) % len(self._SPINNER)]
            body = f"{spin} {int(self.done)}"
        else:
            filled = int(round(20 * fraction))
            body = f"[{'#' * filled}{'.' * (20 - filled)}] {100 * fraction:3.0f}%"
        text = f"{self.label} {body}" if self.label else body
        if self.message:
            text += f"  {self.message}"
        return f"{text}  {_format_seconds(self.elapsed)}"

    def _draw(self, text: str) -> None:
        if self._widget is None and self.stream is sys.stderr and in_notebook():
            self._widget = _notebook_bar(self.label, self.total)
        if self._widget:
            self._widget.n = self.done if self.total else int(self.done)
            self._widget.set_postfix_str(self.message, refresh=False)
            self._widget.refresh()
            self._drawn = True
            return
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self._write("\r" + text + " " * pad)
        self._drawn = True

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (ValueError, OSError):  # stream closed underneath us: stop drawing
            self.enabled = False


def _notebook_bar(label: str, total: float | None) -> Any:
    """A tqdm notebook widget (tqdm.notebook needs ipywidgets); False when unavailable, and
    then the text line is drawn (Jupyter shows it as well)."""
    try:
        import ipywidgets  # noqa: F401
        from tqdm.notebook import tqdm
    except ImportError:
        return False
    return tqdm(total=total, desc=label, leave=True)


def as_progress(progress: Any, label: str = "", total: float | None = None) -> Progress:
    """Normalise a ``progress=`` argument into a :class:`Progress`.

    ``None`` -> automatic (terminal only), ``False`` -> silent, ``True`` -> always drawn,
    a :class:`Progress` -> itself (its total is set if it had none), a callable
    ``f(done, total, message)`` -> a silent indicator forwarding every update to ``f``.
    """
    if isinstance(progress, Progress):
        if progress.total is None and total is not None:
            progress.total = float(total)
        if label and not progress.label:
            progress.label = label
        return progress
    if progress is None:
        return Progress(label, total)
    if progress is True or progress is False:
        return Progress(label, total, enabled=progress)
    if callable(progress):
        return Progress(label, total, enabled=False, callback=progress)
    raise InputError(f"progress must be None, a bool, a Progress or a callable, not {type(progress).__name__}")
