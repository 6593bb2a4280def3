"""The code of docs/guides/mpc_robot_arm.md runs as shown, and does what it says: CasADi's AD
of sb.to_casadi(robot) equals the robot's compiled forward-dynamics derivatives, and the
receding-horizon loop (symbody's simulation as the plant) brings UR5 to the goal posture
within its effort limits, holding it with the gravity torques."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from systems.pinocchio_oracle import robots_dir

pytest.importorskip("casadi")
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "mpc_robot_arm.md"


@pytest.mark.skipif(robots_dir() is None, reason="example-robot-data is not installed")
def test_mpc_robot_arm_guide_runs():
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) == 3
    ns: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), ns)   # noqa: S102 - our own docs
    assert ns["cm"].recursion
    assert ns["difference"] < 1e-9
    torques, effort, goal, x, n = (np.array(ns["torques"]), ns["effort"], ns["goal"], ns["x"],
                                   ns["n"])
    assert np.all(np.abs(torques) <= effort * (1 + 1e-6))
    assert np.abs(x[:n] - goal).max() < 5e-3 and np.abs(x[n:]).max() < 5e-2
    gravity = ns["ur5"].gravity_torques(goal)
    assert np.abs(torques[-1] - gravity).max() < 0.05 * np.abs(gravity).max()
