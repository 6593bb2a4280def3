"""The code of docs/guides/opensim_reaching.md runs as shown (its blocks in order, one
namespace) in a fresh interpreter, as the guide imports ``opensim`` (whose bundled casadi
cannot share a process with the ``casadi`` package: see systems/opensim_worker.py), and
its minimum-effort reach solves the stated problem: the end conditions and the bounds hold
and the optimum is the one OpenSim Moco finds for the same discrete problem."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from systems.opensim_oracle import opensim_installed

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "opensim_reaching.md"
DATA = ROOT / "tests" / "data" / "opensim"

RUNNER = r"""
import json, re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
ns = {"__name__": "__guide__"}
for block in blocks:
    exec(compile(block, sys.argv[1], "exec"), ns)
np = ns["np"]
result, arm = ns["result"], ns["arm"]
traj = result.trajectory
print(json.dumps({
    "blocks": len(blocks),
    "muscles": list(arm.muscle_names),
    "elbow": [float(ns["elbow"][0]), float(ns["elbow"].max()), float(ns["elbow"][-1])],
    "success": bool(result.success),
    "objective": float(result.objective),
    "start": traj.x[0, :4].tolist(),
    "end": traj.x[-1, :4].tolist(),
    "excitations": [float(traj.specified_values.min()), float(traj.specified_values.max())],
    "activations": [float(traj.x[:, 4:].min()), float(traj.x[:, 4:].max())],
    "peak": list(arm.muscle_names)[int(traj.specified_values.max(axis=0).argmax())],
}))
"""


@pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
def test_opensim_reaching_guide_runs(tmp_path):
    shutil.copy(DATA / "arm26.osim", tmp_path / "arm26.osim")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"),
                                                         os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", RUNNER, str(GUIDE)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["blocks"] == 3
    assert got["muscles"] == ["TRIlong", "TRIlat", "TRImed", "BIClong", "BICshort", "BRA"]
    # the given excitations flex the elbow, which falls back once they stop
    assert got["elbow"][1] > got["elbow"][0] + 1.0 and got["elbow"][2] < got["elbow"][1] - 1.0
    # the optimum: the stated end conditions, within the stated bounds
    assert got["success"]
    assert max(abs(a - b) for a, b in zip(got["start"], [0.0, 0.3, 0.0, 0.0])) < 1e-8
    assert max(abs(a - b) for a, b in zip(got["end"], [0.3, 1.2, 0.0, 0.0])) < 1e-8
    for lo, hi in (got["excitations"], got["activations"]):
        assert lo > 0.01 - 1e-8 and hi < 1.0 + 1e-8
    assert got["peak"] == "TRIlong"                  # the swing back (see the guide)
    # the guide's figure: Moco's optimum of the same discrete problem agrees to 4e-7
    # (benchmarks/bench_opensim_moco.py, benchmarks/RESULTS.md)
    assert abs(got["objective"] - 0.01798651) < 1e-5 * 0.01798651
