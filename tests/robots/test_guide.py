"""The code of docs/guides/robots.md runs as shown (its blocks in order, one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from systems.pinocchio_oracle import robots_dir

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "robots.md"


@pytest.mark.slow      # ~30 s on 2 busy cores: two C compilations and two simulations
@pytest.mark.skipif(robots_dir() is None, reason="example-robot-data is not installed")
def test_robots_guide_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 6
    ns: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), ns)   # noqa: S102 - our own docs
    # what the guide claims
    assert ns["np"].abs(ns["g_d"] / ns["kp"] - ns["sag"]).max() < 1e-3
    assert ns["np"].abs(ns["W"] @ ns["pi_hat"] - ns["tau"]).max() < 1e-8
    assert ns["np"].abs(ns["W"] @ ns["Y"].values - ns["tau"]).max() < 1e-6
    assert (tmp_path / "ur5_pd.html").exists()
