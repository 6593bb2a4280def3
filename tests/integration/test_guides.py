"""The code in the guides (docs/guides/) runs as shown (each guide's blocks in order, one
namespace, in a temporary working directory: some write files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDES = [Path(__file__).resolve().parents[2] / "docs" / "guides" / f"{name}.md"
          for name in ("events", "saving", "simulate", "hard_mechanisms", "options", "models",
                       "studies", "sweeps", "seed_workflow", "command_line", "speed")]


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
def test_guide_code_runs(guide, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), flags=re.S)
    assert blocks, f"{guide.name} has no python block"
    namespace: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(guide), "exec"), namespace)   # noqa: S102 - our own docs


def test_the_guides_are_in_the_index():
    index = (GUIDES[0].parents[1] / "index.md").read_text()
    for guide in GUIDES:
        assert f"guides/{guide.stem}" in index, guide.name
