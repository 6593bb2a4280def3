"""The code of docs/guides/robots_control.md runs as shown, and does what it says."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from systems.pinocchio_oracle import robots_dir

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "robots_control.md"


@pytest.mark.skipif(robots_dir() is None, reason="example-robot-data is not installed")
def test_robots_control_guide_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) == 4
    ns: dict = {"__name__": "__guide__"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), ns)   # noqa: S102 - our own docs
    error, t = ns["error"], ns["sol"].t
    # 8 cm off at the start, on the circle after the critically damped transient
    assert error[0] == pytest.approx(0.08, rel=1e-9)
    assert error[t >= 1.0].max() < 1e-6
    # the closed loop's hand acceleration is the task law's a* (the controller's model is
    # the simulated one), at a state off the trajectory
    panda, model, hand, n = ns["panda"], ns["model"], ns["hand"], ns["n"]
    rng = np.random.default_rng(0)
    x = np.concatenate([ns["q_rest"] + 0.1 * rng.standard_normal(n), rng.standard_normal(n)])
    q, u = x[:n], x[n:]
    tau = ns["controller"](0.3, x)
    u_dot = model.rhs(0.3, x, panda.constants, tau)[n:]
    acc = panda.frame_acceleration(hand, q, u, u_dot, "local_world_aligned", classical=True)
    np.testing.assert_allclose(acc, ns["task_acceleration"](0.3, q, u), rtol=1e-8, atol=1e-8)
    # a joint's moment about its (z) axis is its torque: the input less the URDF damping
    W = panda.joint_wrenches(q, u, u_dot)
    damping = np.array([b.joint.damping for b in panda.tree.moving])
    arm = [panda.joint_wrench_names.index(f"panda_joint{i}") for i in range(1, 8)]
    np.testing.assert_allclose(W[arm, 5], (tau - damping * u)[:7], rtol=1e-9, atol=1e-9)
    # the book's rod tensions through the System's joints
    np.testing.assert_allclose([ns["run"].outputs["rod1.fy"][0], ns["run"].outputs["rod2.fy"][0]],
                               [109.88598116, 92.50997719], rtol=1e-8)
    assert ns["run"].outputs["W"].shape == (2, 2, 6)
