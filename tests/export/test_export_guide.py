"""docs/guides/export.md (the C and FMU sections): its code runs as shown, in order."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "export.md"


def test_export_guide_code_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 3
    namespace: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)   # noqa: S102 - our own docs
    out = capsys.readouterr().out
    assert "fourbar.h fourbar.c README.md fourbar_example.c" in out
    assert "True" in out.splitlines()[-1]


def test_export_guide_is_in_the_index_and_the_readme():
    root = GUIDE.parents[2]
    assert "guides/export" in (root / "docs" / "index.md").read_text()
    assert "docs/guides/export.md" in (root / "README.md").read_text()
