"""docs/guides/contact.md: its code runs as shown, in order, and prints what the page says."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "contact.md"


def test_contact_guide_code_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 5
    namespace: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)   # noqa: S102 - our own docs
    out = capsys.readouterr().out
    restitution = float(re.search(r"restitution: ([0-9.]+)", out).group(1))
    assert abs(restitution - 0.7) < 0.01                        # gravity acts during the contact
    assert "ground: touchdown ground: lift-off" in out
    errors = [float(v) for v in re.findall(r"balance error ([0-9.e+-]+) J", out)]
    assert len(errors) == 2 and max(errors) < 1e-5
    a, textbook = (float(v) for v in re.search(r"a = ([0-9.]+) m/s\^2, textbook ([0-9.]+)", out).groups())
    assert abs(a - textbook) < 1e-5


def test_contact_guide_is_in_the_index():
    root = GUIDE.parents[2]
    assert "guides/contact" in (root / "docs" / "index.md").read_text()
