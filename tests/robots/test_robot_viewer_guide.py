"""The code of docs/guides/robot_viewer.md runs as shown (its blocks in order, one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from visuals_fk import robots_folder

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "robot_viewer.md"


@pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
def test_robot_viewer_guide_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 3
    ns: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), ns)   # noqa: S102 - our own docs
    # what the guide claims: the UR5 falls (zero torques), drawn with its 7 Collada files
    page = ns["page"]
    assert (tmp_path / "ur5_falling.html").exists()
    assert [m["format"] for m in page.data["meshes"]] == ["dae"] * 7
    assert np.abs(ns["sol"].q[-1]).max() > 0.1
    mesh = ns["spinning"].visualization_frames[0].shape
    assert mesh.format == "dae" and mesh.filename.is_file()
