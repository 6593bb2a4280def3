"""The code on docs/guides/casadi.md runs as shown and does what the page says.

Oracles: symbody's simulation of the optimal input found by CasADi's Opti on the exported
right-hand side (same final state), and the swing-up cost against the collocation optimum.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("casadi")

PAGE = Path(__file__).parents[2] / "docs" / "guides" / "casadi.md"


def test_casadi_guide_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) == 3
    ns: dict = {}
    for code in blocks:
        exec(compile(code, str(PAGE), "exec"), ns)
    out = capsys.readouterr().out
    assert ns["err"] < 1e-12
    # the shooting optimum is near the midpoint-collocation one (a different transcription)
    cost = float(ns["sol"].value(ns["cost"]))
    assert abs(cost - 59.19) < 0.05 * 59.19, out
    # symbody integrates CasADi's optimal input to CasADi's final state
    np.testing.assert_allclose(ns["run"].x[-1], [1.0, np.pi / 2, 0.0, 0.0], atol=2e-3)
    # the MPC loop brings the pushed pole back upright
    x = ns["x"]                                     # pole upright and nearly still
    assert abs(x[1] - np.pi / 2) < 0.02 and abs(x[3]) < 0.1 and abs(x[0]) < 0.3, x
