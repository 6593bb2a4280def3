"""``symbody view ROBOT.urdf`` and ``symbody simulate ROBOT.urdf``: a robot falling from its zero
pose with zero torques, drawn with its URDF meshes.

Oracles: free fall of a floating-base robot (no internal motion: the base falls g t^2 / 2,
the joints and the orientation stay put) and, fixed to the world, the initial joint
accelerations of Pinocchio's ABA (u(t) = a0 t + O(t^2) at the first output sample).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from visuals_fk import robots_folder

from symbody.cli import main

ROBOTS = robots_folder()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
G = 9.81


def pendulum() -> Path:
    return ROBOTS / "double_pendulum_description" / "urdf" / "double_pendulum.urdf"


def read_csv(path: Path) -> dict[str, np.ndarray]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return {name: np.array([float(r[i]) for r in rows[1:]]) for i, name in enumerate(rows[0])}


def test_simulate_a_floating_robot_falls_freely(tmp_path, capsys):
    out = tmp_path / "sim"
    code = main(["simulate", str(pendulum()), "--floating-base", "--no-joint-dynamics", "--t-final", "0.3",
                 "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    written = {p.name for p in out.iterdir()}
    assert {"time_histories.png", "double_pendulum.html", "trajectory.csv", "trajectory.npz",
            "summary.txt"} <= written
    data = read_csv(out / "trajectory.csv")
    t = data["t"]
    assert t[-1] == pytest.approx(0.3)
    np.testing.assert_allclose(data["base_z"], -G * t ** 2 / 2, atol=1e-9)
    for name in ("base_x", "base_y", "base_qx", "base_qy", "base_qz", "q_joint1", "q_joint2"):
        np.testing.assert_allclose(data[name], 0.0, atol=1e-9, err_msg=name)
    np.testing.assert_allclose(data["base_qw"], 1.0, atol=1e-12)
    summary = (out / "summary.txt").read_text(encoding="utf-8")
    assert "floating base" in summary and "g = 9.81" in summary and "base.z" in summary
    assert "without the URDF's joint damping and friction" in summary


def test_view_a_fixed_robot_writes_a_page_with_its_meshes(tmp_path, capsys):
    pin = pytest.importorskip("pinocchio")
    page = tmp_path / "pendulum.html"
    code = main(["view", str(pendulum()), "--out", str(page), "--tf", "0.1", "--fps", "200", "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert "3 mesh files" in capsys.readouterr().out
    text = page.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="symbody-data">(.*?)</script>', text, re.S).group(1))
    assert [m["format"] for m in data["meshes"]] == ["stl"] * 3
    assert sorted(f["name"] for f in data["frames"] if f["kind"] == "mesh") == ["base_link", "link1", "link2"]
    # the motion, fixed to the world (the UR5: its zero pose is not an equilibrium), zero
    # torques, from rest: u(t) = a0 t + O(t^2) with a0 = Pinocchio's ABA(q = 0, v = 0, tau = 0)
    ur5 = ROBOTS / "ur_description" / "urdf" / "ur5_robot.urdf"
    out = tmp_path / "sim"
    assert main(["simulate", str(ur5), "--tf", "0.02", "--out", str(out), "--no-animation", "--quiet"]) == 0
    assert not (out / "ur5_robot.html").exists()
    traj = read_csv(out / "trajectory.csv")
    model = pin.buildModelFromUrdf(str(ur5))
    a0 = pin.aba(model, model.createData(), np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv))
    assert np.linalg.norm(a0) > 1.0
    k = 1                                           # the first sample after t = 0 (0.2 ms)
    u = np.array([traj[f"u_{name}"][k] for name in model.names[1:]])
    np.testing.assert_allclose(u / traj["t"][k], a0, rtol=1e-3, atol=1e-3 * np.linalg.norm(a0))


def test_missing_meshes_and_bad_arguments_are_reported(tmp_path, capsys):
    lonely = tmp_path / "lonely" / "double_pendulum.urdf"      # away from its package: no meshes
    lonely.parent.mkdir()
    shutil.copy(pendulum(), lonely)
    code = main(["view", str(lonely), "--out", str(tmp_path / "p.html"), "--tf", "0.05", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0
    assert err.count("warning:") == 3 and "link 'link1'" in err and "meshes/link1.stl' was not found" in err
    # given the package folder, they are found again
    code = main(["view", str(lonely), "--out", str(tmp_path / "q.html"), "--tf", "0.05", "--quiet",
                 "--package-dir", str(ROBOTS.parent)])
    assert code == 0 and "warning" not in capsys.readouterr().err
    assert main(["view", str(tmp_path / "none.urdf")]) == 2
    assert "URDF file" in capsys.readouterr().err
    assert main(["simulate", "pendulum", "--floating-base"]) == 2
    assert "--floating-base applies to a URDF robot file" in capsys.readouterr().err
    assert main(["view", "pendulum", "--no-joint-dynamics"]) == 2
    assert "--no-joint-dynamics applies to a URDF robot file" in capsys.readouterr().err
    assert main(["simulate", str(pendulum()), "--set", "m=2", "--quiet"]) == 2
    assert "the robot's constants are g" in capsys.readouterr().err
    assert main(["view", str(pendulum()), "--follow", "elbow", "--tf", "0.02", "--quiet",
                 "--out", str(tmp_path / "r.html")]) == 2
    assert "--follow 'elbow' is not a link" in capsys.readouterr().err
