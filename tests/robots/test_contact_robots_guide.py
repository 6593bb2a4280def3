"""The code of docs/guides/contact_robots.md runs as shown (its blocks in order, one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from systems.pinocchio_oracle import robots_dir

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "contact_robots.md"


@pytest.mark.skipif(robots_dir() is None, reason="example-robot-data is not installed")
def test_contact_robots_guide_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) == 5
    ns: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), ns)   # noqa: S102 - our own docs
    # what the guide claims
    sol, np = ns["sol"], ns["np"]
    assert sol.status == 0 and "continued with Radau" in sol.message
    assert ns["weight"] / (ns["mass"] * 9.81) == pytest.approx(1.0, abs=1e-5)
    assert np.abs(sol.u[-1][:3]).max() < 1e-4
    assert len(ns["robot"].eom.contacts) == 4
    assert (tmp_path / "solo12_drop.html").exists()
