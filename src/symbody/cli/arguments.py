"""Parsing the command line's values: ``--set NAME=VALUE``, ``--speeds START:STOP:N``,
positive numbers, and the names of symbols as users type them (``q1`` for q1(t))."""

from __future__ import annotations

import argparse
import inspect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .console import UsageError


def _parse_number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--set {name}={text}: the value must be a number") from None
    if not math.isfinite(value):
        raise UsageError(f"--set {name}={text}: the value must be finite")
    return value


def _parse_option(name: str, text: str, parameter: inspect.Parameter) -> Any:
    default = parameter.default
    if isinstance(default, bool):
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"--set {name}={text}: the value must be true or false")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise UsageError(f"--set {name}={text}: the value must be an integer") from None
    return _parse_number(name, text)


def _parse_sets(items: Sequence[str] | None) -> list[tuple[str, str]]:
    pairs = []
    for item in items or ():
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise UsageError(f"--set expects NAME=VALUE, got {item!r}")
        pairs.append((name, value.strip()))
    return pairs


def _parse_speeds(text: str) -> np.ndarray:
    parts = text.split(":")
    if len(parts) != 3:
        raise UsageError(f"--speeds expects START:STOP:N (e.g. 0:10:41), got {text!r}")
    try:
        start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        raise UsageError(f"--speeds expects START:STOP:N with numbers and an integer N, got {text!r}") from None
    if count < 1 or not (math.isfinite(start) and math.isfinite(stop)):
        raise UsageError(f"--speeds: N must be at least 1 and START, STOP finite, got {text!r}")
    return np.linspace(start, stop, count)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _symbol_name(symbol: Any) -> str:
    """q1(t) -> 'q1', l_a -> 'l_a'."""
    text = str(symbol)
    return text[:-3] if text.endswith("(t)") else text
