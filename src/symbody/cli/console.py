"""Messages of the ``symbody`` command: step lines (quiet-able), file lists, bad-usage errors."""

from __future__ import annotations

import time


class UsageError(Exception):
    """Bad command-line arguments: reported with exit code 2."""


class Console:
    """Step messages to stdout unless quiet; file lists always."""

    def __init__(self, quiet: bool):
        self.quiet = quiet

    def step(self, text: str) -> None:
        if not self.quiet:
            print(text, flush=True)

    def always(self, text: str) -> None:
        print(text, flush=True)


class _Timer:
    def __enter__(self) -> _Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.start
