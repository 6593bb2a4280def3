"""The ``symbody`` command line: list, simulate, linearize, demo and bad arguments (exit code 2)."""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from symbody.analysis.trajectory import Trajectory
from symbody.cli import main

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")

MODELS = ["four-bar", "snakeboard", "double-rod-pendulum", "two-particle-pendulum",
          "n-link-pendulum-on-cart", "rolling-disc", "chaplygin-sleigh", "whipple-bicycle"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run the installed console script (or ``python -m`` when it is not on disk)."""
    script = Path(sys.executable).parent / "symbody"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "symbody"]
    env = dict(os.environ, MPLBACKEND="Agg", SYMBODY_QUIET="1")
    return subprocess.run(command + list(args), capture_output=True, text=True, env=env, timeout=300)


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in MODELS:
        assert re.search(rf"^{re.escape(name)}\s+\S", out, re.M), name


def test_simulate_writes_every_file(tmp_path, capsys):
    out_dir = tmp_path / "fb"
    code = main(["simulate", "four-bar", "--tf", "0.5", "--out", str(out_dir), "--fps", "10",
                 "--set", "m=2", "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    expected = ["time_histories.png", "residuals.png", "energy.png", "outputs.png", "animation.html",
                "animation.gif", "trajectory.csv", "trajectory.npz", "summary.txt"]
    for name in expected:
        path = out_dir / name
        assert path.is_file() and path.stat().st_size > 0, name
        assert str(path) in printed                      # the command says where everything went
    traj = Trajectory.load(out_dir / "trajectory.npz")
    assert traj.t[0] == 0.0 and traj.t[-1] == pytest.approx(0.5)
    assert traj.max_holonomic_residual < 1e-10           # default mode "auto" keeps the loop closed
    assert {str(k): v for k, v in traj.constants.items()}["m"] == 2.0
    with open(out_dir / "trajectory.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:4] == ["t", "q1", "q2", "q3"] and len(rows) == len(traj.t) + 1
    np.testing.assert_allclose([float(r[1]) for r in rows[1:]], traj.q[:, 0])
    summary = (out_dir / "summary.txt").read_text()
    assert "four-bar" in summary and "m = 2" in summary and "max |f_h|" in summary
    html = (out_dir / "animation.html").read_text()
    assert html.count('"iVBOR') == 6                    # 0.5 s at 10 frames per second: 6 PNG frames
    assert "https://" not in html


def test_simulate_model_option_and_no_animation(tmp_path, capsys):
    out_dir = tmp_path / "cart"
    code = main(["simulate", "n-link-pendulum-on-cart", "--set", "n=1", "--tf", "0.2",
                 "--no-animation", "--constraints", "none", "--out", str(out_dir), "--quiet"])
    assert code == 0
    names = sorted(p.name for p in out_dir.iterdir())
    assert "animation.html" not in names and "residuals.png" not in names   # no constraints
    assert "time_histories.png" in names and "trajectory.npz" in names
    traj = Trajectory.load(out_dir / "trajectory.npz")
    assert traj.q.shape[1] == 2                         # n = 1: cart position and one link angle


def test_linearize_prints_A_and_eigenvalues(capsys):
    assert main(["linearize", "four-bar", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "states x = [q1, u1]" in out
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in out.splitlines()
            if re.match(r"^\s+(q1|u1)\s+-?\d", line)}
    assert rows["q1"] == [0.0, 1.0]
    stiffness = -rows["u1"][0]
    assert stiffness > 0
    # a conservative 1-dof oscillator: eigenvalues +-i sqrt(k)
    eig = re.findall(r"^\s+0([+-][\d.]+)j$", out, re.M)
    assert sorted(float(e) for e in eig) == pytest.approx([-math.sqrt(stiffness), math.sqrt(stiffness)],
                                                          rel=1e-5)


def test_linearize_speed_sweep(tmp_path, capsys):
    code = main(["linearize", "rolling-disc", "--speeds", "0:4:3", "--out", str(tmp_path), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if re.match(r"^\s+[0-9.]+\s+\S", line)]
    assert len(table) == 3
    assert (tmp_path / "eigenvalues_vs_v.png").stat().st_size > 0
    data = np.loadtxt(tmp_path / "eigenvalues_vs_v.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(data[:, 0], [0.0, 2.0, 4.0])


def test_linearize_speed_sweep_matches_the_published_whipple_benchmark(tmp_path, capsys):
    """The CLI's eigenvalue table against Meijaard et al. (2007), Table 2 (tests/data), not
    against numbers read back from the same output."""
    import json

    bench = json.loads((Path(__file__).parents[1] / "data" / "whipple_benchmark.json").read_text())
    assert main(["linearize", "whipple-bicycle", "--speeds", "3:5:3", "--out", str(tmp_path), "--quiet"]) == 0
    capsys.readouterr()
    data = np.loadtxt(tmp_path / "eigenvalues_vs_v.csv", delimiter=",", skiprows=1)
    for row in data:
        v = int(round(row[0]))
        ev = row[1::2] + 1j * row[2::2]
        ev = np.sort_complex(ev[np.abs(ev) > 1e-6])           # drop the zero eigenvalues
        pub = bench["eigenvalues"][str(v)]
        re_w, im_w = pub["weave"]
        expected = np.sort_complex(np.array([re_w + 1j * im_w, re_w - 1j * im_w, pub["capsize"], pub["castor"]]))
        # the CSV prints 10 significant digits (rounding <= 5e-10 relative) and the benchmark
        # 14: 1e-8 relative is the printing's resolution with margin, not a model tolerance
        np.testing.assert_allclose(ev, expected, rtol=1e-8, err_msg=f"v = {v}")


def test_demo_short(tmp_path, capsys):
    code = main(["demo", "--out", str(tmp_path), "--tf", "1", "--max-frames", "8", "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    for name in ["drift_comparison.png", "animation_without_enforcement.html",
                 "animation_with_enforcement.html", "animation_with_enforcement.gif", "summary.txt",
                 "time_histories_without_enforcement.png", "time_histories_with_enforcement.png"]:
        assert (tmp_path / name).stat().st_size > 0, name
    rows = re.findall(r"^constraints='(\w+)'.*?rtol=(\S+)\s+(\S+)\s+(\S+)\s+(\d+)$", out, re.M)
    assert [r[0] for r in rows] == ["none", "auto", "auto"]
    residual = {(r[0], r[1]): float(r[2]) for r in rows}
    assert residual[("auto", "0.001")] < 1e-10
    assert residual[("none", "0.001")] > 100 * residual[("auto", "0.001")]
    assert "summary.txt" in out


# ----------------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("args, message", [
    (["simulate", "four-bar", "--set", "nosuch=1"], r"unknown parameter 'nosuch'.*known parameters: .*l_a"),
    (["simulate", "four-bar", "--set", "m"], r"--set expects NAME=VALUE, got 'm'"),
    (["simulate", "four-bar", "--set", "m=heavy"], r"--set m=heavy: the value must be a number"),
    (["simulate", "four-bar", "--tf", "-1"], r"--tf must be greater than the start time"),
    (["simulate", "n-link-pendulum-on-cart", "--set", "n=2.5"], r"n=2.5: the value must be an integer"),
    (["linearize", "four-bar", "--speeds", "1:2"], r"--speeds expects START:STOP:N"),
    (["linearize", "four-bar", "--speeds", "0:1:3"], r"four-bar has none"),
    (["simulate", "four-bar", "--constraints", "sometimes"], r"invalid choice: 'sometimes'"),
    (["simulate"], r"the following arguments are required: MODEL"),
    ([], r"required: COMMAND"),
])
def test_bad_arguments_exit_2(args, message, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err


def test_unknown_model_in_a_subprocess():
    result = run_cli("simulate", "four_barr")
    assert result.returncode == 2
    assert "unknown model 'four_barr'" in result.stderr
    assert "did you mean 'four-bar'" in result.stderr
    for name in MODELS:
        assert name in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_parameter_and_list_in_a_subprocess():
    result = run_cli("linearize", "four-bar", "--set", "gravity=3")
    assert result.returncode == 2
    assert "unknown parameter 'gravity'" in result.stderr and "l_b" in result.stderr
    listing = run_cli("list")
    assert listing.returncode == 0 and "whipple-bicycle" in listing.stdout


def test_readme_example_runs(tmp_path, monkeypatch):
    """The Python example of the seed-workflow guide runs and keeps the loop closed."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "seed_workflow.md"
    section = guide.read_text().split("## The seed workflow with symbody", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace("(0.0, 30.0)", "(0.0, 3.0)").replace("np.linspace(0.0, 30.0, 601)",
                                                               "np.linspace(0.0, 3.0, 61)")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, "docs/guides/seed_workflow.md", "exec"), namespace)
    assert namespace["sol"].max_holonomic_residual < 1e-10
    assert (tmp_path / "four_bar.png").stat().st_size > 0
    assert (tmp_path / "four_bar.html").stat().st_size > 0


def test_constraint_mode_names_are_case_insensitive(tmp_path):
    """``--constraints Project`` is ``project``, as ``simulate(constraints="Project")`` is."""
    from symbody.cli import build_parser

    args = build_parser().parse_args(["simulate", "four-bar", "--constraints", "Project"])
    assert args.constraints == "project"


def test_dir_lists_the_public_names_only():
    import symbody as sb

    names = dir(sb)
    assert "simulate" in names and "Solver" in names and "__version__" in names
    assert not {"Any", "TYPE_CHECKING", "annotations", "importlib"} & set(names)
