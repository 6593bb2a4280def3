"""The code on docs/optimize.md runs as shown and prints what the page says."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")
matplotlib.use("Agg")

PAGE = Path(__file__).parents[2] / "docs" / "optimize.md"


def test_optimize_page_code_runs(capsys):
    import matplotlib.pyplot as plt
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, str(PAGE), "exec"), namespace)
    plt.close("all")
    assert namespace["problem"].eom is not None
    out = capsys.readouterr().out
    assert "objective 15.641554" in out              # the pendulum, as the page says
    assert namespace["result"].success               # the sleigh parks
    assert namespace["result"].trajectory.t[-1] == pytest.approx(4.0)
    # the sections on Radau, the replay and receding-horizon control
    assert "objective 0.0580" in out                 # the arm with Radau, s = 5, 11 nodes
    assert namespace["replay"].node_deviation < 1e-4       # the sleigh, Radau, 21 nodes
    assert "True True" in out                        # |F| within 10 N, the pole upright

    # the Solvers section: both solvers, the same optimum
    assert abs(namespace["fast"].objective - namespace["slow"].objective) < 1e-6 * 59.19
