"""A minimal progress line on stderr for long compilations and simulations.

Shown only when stderr is a terminal and ``SYMBODY_QUIET`` is unset, empty or
"0" (or when forced with ``progress=True``); a callable ``progress`` receives
``(done, total, message)`` instead.  Updates are throttled to 10 per second and
nothing is drawn during the first ``delay`` seconds, so short runs stay silent.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable


def _enabled() -> bool:
    if os.environ.get("SYMBODY_QUIET", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


class ProgressLine:
    """``bar(done, message="")`` updates the line; ``bar.close()`` ends it."""

    def __init__(self, progress, label: str, total: float, delay: float = 1.0):
        self.label, self.total, self.delay = label, float(total), delay
        self.callback: Callable | None = None
        if callable(progress) and not isinstance(progress, bool):
            self.callback, self.active = progress, True
        elif progress is None:
            self.active = _enabled()
        else:
            self.active = bool(progress)
        self.start = time.perf_counter()
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: float, message: str = "", force: bool = False) -> None:
        if not self.active:
            return
        if self.callback is not None:
            self.callback(done, self.total, message)
            return
        now = time.perf_counter()
        if not force and (now - self.start < self.delay or now - self._last < 0.1):
            return
        self._last = now
        frac = 0.0 if self.total <= 0 else min(max(done / self.total, 0.0), 1.0)
        line = f"\r{self.label}: {100 * frac:5.1f}%  {message}  [{now - self.start:.1f} s]"
        sys.stderr.write(line[:120].ljust(60))
        sys.stderr.flush()
        self._drawn = True

    def close(self, message: str = "") -> None:
        if self._drawn and self.callback is None:
            tail = f" {message}" if message else ""
            sys.stderr.write(f"\r{self.label}: done in {time.perf_counter() - self.start:.1f} s{tail}\n")
            sys.stderr.flush()
            self._drawn = False
