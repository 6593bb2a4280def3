# ruff: noqa: I001 (casadi_kin_dyn is imported before casadi on purpose)
"""casadi-kin-dyn's side of bench_casadi_robots.py, run in its own venv (its wheel pins an
old Pinocchio and numpy): ``python ckd_worker.py URDF STATES.npz OUT_DIR``.

Writes ``OUT_DIR/aba.casadi`` (``CasadiKinDyn(urdf, FREE_FLYER).aba()``, Pinocchio's ABA
as a CasADi SX function ``(q, v, tau) -> a``, saved with ``Function.save``) and
``OUT_DIR/values.npy`` (a at the states' q, v, tau, evaluated here) and prints a JSON line
with the CasADi and Pinocchio versions and the graph size.
"""

import json
import sys
from pathlib import Path

import casadi_kin_dyn as ckd  # first: it loads the CasADi library its wheel was built with
import casadi as ca
import numpy as np

urdf, states, out = sys.argv[1], np.load(sys.argv[2]), Path(sys.argv[3])
kd = ckd.CasadiKinDyn(Path(urdf).read_text(), ckd.CasadiKinDyn.JointType.FREE_FLYER)
aba = kd.aba()
aba.save(str(out / "aba.casadi"))
values = np.array([np.asarray(aba(q, v, tau)).ravel()
                   for q, v, tau in zip(states["Q"], states["V"], states["TAU"])])
np.save(out / "values.npy", values)
print(json.dumps({"casadi": ca.__version__, "nq": kd.nq(), "nv": kd.nv(),
                  "n_instructions": aba.n_instructions()}))
