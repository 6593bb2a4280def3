"""The code of docs/guides/opensim.md runs as shown (its blocks in order, one namespace), in a
fresh interpreter: the guide imports ``opensim``, whose bundled casadi cannot share a process
with the ``casadi`` package other tests import (see systems/opensim_worker.py)."""

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
GUIDE = ROOT / "docs" / "guides" / "opensim.md"
DATA = ROOT / "tests" / "data" / "opensim"

RUNNER = r"""
import json, re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
ns = {"__name__": "__guide__"}
for block in blocks:
    exec(compile(block, sys.argv[1], "exec"), ns)
np = ns["np"]
print(json.dumps({
    "blocks": len(blocks),
    "warning": len(ns["caught"]), "left_out": len(ns["arm"].left_out),
    "M": float(np.abs(ns["arm"].mass_matrix(ns["q"])
                      - ns["M_osim"][np.ix_(ns["order"], ns["order"])]).max()),
    "inputs": len(ns["pendulum"].eom.specifieds),
    "muscles": len(ns["gait"].muscle_names),
    "elbow": [float(ns["sol_muscle"].q[0, 1]), float(ns["sol_muscle"].q[-1, 1])],
    "activation": float(ns["sol_muscle"].x[-1, -1]),
    "stand": [float(ns["support"][-1] / ns["weight"] - 1), int(ns["sol_stand"].status),
              len(ns["statue"].eom.contacts)],
    "swing": [len(ns["controller_warnings"]), list(ns["swinging"].controls.driven),
              int(ns["sol_swing"].status), float(np.abs(ns["sol_swing"].q[-1]).max())],
    "sketch": [ns["sketch"].kinematics_only, len(ns["sketch"].massless_bodies),
               [w.category.__name__ for w in ns["sketch_warnings"]],
               float(np.abs(ns["sketch"].moment_arms(ns["q"])
                            - ns["arm"].moment_arms(ns["q"])).max())],
}))
"""


@pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
def test_opensim_guide_runs(tmp_path):
    for name in ("arm26.osim", "double_pendulum.osim", "gait10dof18musc.osim", "2D_gait.osim"):
        shutil.copy(DATA / name, tmp_path / name)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"),
                                                         os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", RUNNER, str(GUIDE)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # what the guide claims
    assert got["blocks"] >= 5
    assert got["warning"] == 0 and got["left_out"] == 0      # Arm26: every muscle built
    assert got["M"] < 1e-12
    assert got["inputs"] == 2
    assert got["muscles"] == 18
    assert got["elbow"][1] > got["elbow"][0] + 0.1       # the biceps flexes the elbow
    assert got["activation"] > 0.9
    # Moco's 2D gait model stands on its four contact spheres: the ground carries m g
    assert got["stand"][1] == 0 and got["stand"][2] == 4
    assert abs(got["stand"][0]) < 1e-3
    # the double pendulum swung by its PrescribedController
    assert got["swing"][:3] == [1, ["control_Torq1", "control_Torq2"], 0]
    assert got["swing"][3] > 0.1
    # Arm26 without mass: kinematics only, with the same moment arms
    assert got["sketch"][:3] == [True, 2, ["KinematicsOnlyWarning"]]
    assert got["sketch"][3] < 1e-15
