"""docs/guides/contact_exact.md runs as shown (its blocks in order, one namespace), and it is in
the index; the numbers it prints are checked here against the closed forms it quotes."""

from pathlib import Path

import numpy as np

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "contact_exact.md"


def test_contact_exact_guide_runs_and_agrees_with_its_closed_forms(tmp_path, monkeypatch):
    import re

    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) == 4
    ns: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), ns)   # noqa: S102 - our own docs
    assert abs(ns["steep"].q[-1, 0] / (0.5 * ns["a"] * 4) - 1) < 1e-6
    assert np.ptp(ns["gentle"].q[:, 0]) < 1e-9
    t_stop = 1.0 / (9.81 * (0.3 * np.cos(0.2) - np.sin(0.2)))
    assert abs(ns["launched"].events[0].t - t_stop) < 1e-6 * t_stop
    t_star = 2 * 2.0 / (7 * 0.2 * 9.81)
    assert abs(ns["sol"].events[0].t - t_star) < 1e-6 * t_star
    assert abs(ns["sol"].u[-1, 0] - 5 * 2.0 / 7) < 1e-6
    stops = [e.t for e in ns["slide"].events if e.name.endswith("slip -> stick")]
    assert len(stops) == 4 and abs(stops[0] - 2.0 / (0.4 * 9.81)) < 1e-3


def test_contact_exact_guide_is_in_the_index():
    index = (GUIDE.parents[1] / "index.md").read_text()
    assert "guides/contact_exact" in index
