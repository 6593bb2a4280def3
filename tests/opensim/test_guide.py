"""The code of docs/guides/opensim.md runs as shown (its blocks in order, one namespace)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "opensim.md"
DATA = ROOT / "tests" / "data" / "opensim"


def test_opensim_guide_runs(tmp_path, monkeypatch):
    pytest.importorskip("opensim")
    for name in ("arm26.osim", "double_pendulum.osim"):
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 5
    ns: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), ns)   # noqa: S102 - our own docs
    # what the guide claims
    assert "TRIlong" in str(ns["caught"][0].message)
    assert ns["np"].abs(ns["arm"].mass_matrix(ns["q"]) - ns["M_osim"][ns["np"].ix_(
        ns["order"], ns["order"])]).max() < 1e-12
    assert ns["np"].abs(ns["xdot"][2:] - ns["udot_osim"]).max() < 1e-9
    assert len(ns["pendulum"].eom.specifieds) == 2
