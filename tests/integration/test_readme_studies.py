"""The study examples of docs/guides/studies.md run and give the numbers the page states."""

from __future__ import annotations

import re
from pathlib import Path

import pytest


def _blocks():
    section = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "studies.md").read_text()
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_bicycle_fall_detection_example():
    ns: dict = {}
    exec(compile(_blocks()[0], "docs/guides/studies.md", "exec"), ns)
    sol = ns["sol"]
    assert sol.status == 0 and len(sol.events) == 1
    assert sol.events[0].t == pytest.approx(1.47, abs=0.01)          # "about 1.47 s"
    assert abs(abs(sol.q[-1, 3]) - 0.7853981634) < 1e-6                # rolled 45 degrees


def test_walker_example():
    ns: dict = {}
    exec(compile(_blocks()[1], "docs/guides/studies.md", "exec"), ns)
    assert abs(ns["gait"]["theta"] - 0.2003109005) < 1e-9
    assert abs(ns["gait"]["theta_dot"] + 0.1998324729) < 1e-9
    times = [e.t for e in ns["sol"].events]
    assert len(times) == 5 and times[0] == pytest.approx(3.88, abs=0.01)
