"""docs/guides/contact_optimize.md ("optimize a hop"): its code runs as shown, in order, and
prints what the page says; the page is linked from the index, the contact guide and the
optimization page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "contact_optimize.md"


def test_contact_optimize_guide_code_runs(capsys):
    pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) == 4
    namespace: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)   # noqa: S102 - our own docs
    out = capsys.readouterr().out
    deep, exact = (float(v) for v in re.search(r"1 cm deep: ([0-9.]+) N \(exact ([0-9.]+) N\)",
                                               out).groups())
    # the documented excess n ε²/(4 δ²) of the force (printed to 0.01 N)
    assert exact == 100.0 and 0 < deep - exact < 100.0 * 1.5 * 1e-6 / (4 * 1e-4) * 1.01 + 0.005
    assert "solved" in out
    lift_off = float(re.search(r"lift-off at t = ([0-9.]+) s", out).group(1))
    assert 0.2 < lift_off < 0.45
    weights = float(re.search(r"\(([0-9.]+) body weights\)", out).group(1))
    assert weights > 1.5
    foot, force = (float(v) for v in re.search(
        r"the foot is ([0-9.]+) cm above the ground, the ground force ([0-9.e+-]+) N", out).groups())
    assert foot > 1.0 and force < 1e-2
    # the jumper: a jump above standing height, lift-off at the end, the torque bang-bang
    crouching, standing, apex = (float(v) for v in re.search(
        r"mass centre ([0-9.]+) m crouching, ([0-9.]+) m standing, apex ([0-9.]+) m", out).groups())
    assert crouching < standing < apex - 0.15
    assert 0.4 < float(re.search(r"; lift-off at t = ([0-9.]+) s", out).group(1)) <= 0.5
    assert float(re.search(r"T_k at its limit on ([0-9]+)% of the nodes", out).group(1)) > 50


def test_contact_optimize_guide_is_linked():
    for page in ("index.md", "optimize.md", "guides/contact.md"):
        assert "contact_optimize" in (ROOT / "docs" / page).read_text(), page
