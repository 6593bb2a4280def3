"""OpenSim's wrist model (Models/WristModel/wrist.osim, 25 Schutte1993Muscle_Deprecated; no
licence stated in the file, so read from an opensim-models mirror, not copied into tests/):
each muscle's tendon force, activation and fiber-length derivatives by symbody against
OpenSim 4.6 at one random state (coordinates within their ranges, u in [-2, 2], activations,
excitations, fiber lengths 0.9-1.1 times OpenSim's equilibrium).  The model is kinematics-only
(massless bodies), so the muscle expressions are evaluated directly (symengine), not through
the equations of motion.

    python benchmarks/check_schutte_wrist.py [--repo /path/to/opensim-models mirror] [--seed 7]
"""

import argparse
import json
import subprocess
import sys
import tempfile
import warnings

import numpy as np

from symbody.opensim import load_opensim

ap = argparse.ArgumentParser()
ap.add_argument("--repo", default="/work/.mirror/opensim-org+opensim-models/repo")
ap.add_argument("--seed", type=int, default=7)
args = ap.parse_args()
WRIST = tempfile.mkdtemp(prefix="schutte-wrist-") + "/wrist.osim"
with open(WRIST, "wb") as fh:
    fh.write(subprocess.run(["git", "--git-dir", args.repo, "show", "HEAD:Models/WristModel/wrist.osim"],
                            capture_output=True, check=True).stdout)
warnings.simplefilter("ignore")
m = load_opensim(WRIST)
ctx = m.force_context
rng = np.random.default_rng(args.seed)
q = m.random_coordinates(rng)
u = rng.uniform(-2, 2, len(q))
Q, U = m.to_opensim_state(q, u)
names = list(m.muscle_names)
a = rng.uniform(0.05, 1, len(names))
e = rng.uniform(0.01, 1, len(names))
c = rng.uniform(0.9, 1.1, len(names))
code = f"""
import opensim as o, json
m=o.Model('{WRIST}'); s=m.initSystem()
Q={Q.tolist()}; U={U.tolist()}
for i in range({len(Q)}): s.updQ().set(i, Q[i])
for i in range({len(U)}): s.updU().set(i, U[i])
names={names}; a={a.tolist()}; e={e.tolist()}; c={c.tolist()}
ms=m.getMuscles()
for n,ai in zip(names,a): ms.get(n).setActivation(s, ai)
m.equilibrateMuscles(s)
for n,ci in zip(names,c):
    p='/forceset/'+n+'/fiber_length'; m.setStateVariableValue(s,p,ci*m.getStateVariableValue(s,p))
m.realizeVelocity(s)
ctrl=m.updControls(s)
acts=m.getActuators()
for i in range(acts.getSize()):
    ctrl.set(i, e[names.index(acts.get(i).getName())])
m.setControls(s, ctrl)
m.realizeDynamics(s)
out={{}}
for n in names:
    mu=ms.get(n); p='/forceset/'+n
    out[n]=[m.getStateVariableValue(s,p+'/fiber_length'), mu.getTendonForce(s)]
m.realizeAcceleration(s)
for n in names:
    p='/forceset/'+n
    out[n]+= [m.getStateVariableDerivativeValue(s,p+'/activation'), m.getStateVariableDerivativeValue(s,p+'/fiber_length')]
print(json.dumps(out))
"""
r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
osv = json.loads(r.stdout.strip().splitlines()[-1])
sub = {}
cnames = list(m.coordinate_names)
for cn in ctx.coordinate_names:
    qs, us, _, _, k = ctx.coordinate(cn)
    j = cnames.index(cn)
    sub[qs], sub[us] = q[j], u[j]
worst = [0.0, 0.0, 0.0]
contrib = {c_.record.activation: c_ for c_ in m.force_contributions
           if getattr(c_.record, "activation", None) is not None}
for i, n in enumerate(names):
    rec = m.forces[n]
    l, F_os, ad_os, ld_os = osv[n]
    s2 = dict(sub)
    s2[ctx.symbol(rec.activation)] = a[i]
    s2[ctx.symbol(rec.fiber_length)] = l
    s2[ctx.symbol(rec.excitation)] = e[i]
    ext = contrib[rec.activation].extra_states
    F = float(rec.tendon_force.subs(s2))
    ad = float(ext[rec.activation].subs(s2))
    ld = float(ext[rec.fiber_length].subs(s2))
    worst[0] = max(worst[0], abs(F - F_os) / abs(F_os) if F_os else abs(F))
    worst[1] = max(worst[1], abs(ad - ad_os) / abs(ad_os))
    worst[2] = max(worst[2], abs(ld - ld_os) / max(abs(ld_os), 1e-12))
    print(n, F, F_os, ad, ad_os, ld, ld_os)
print("worst rel (force, adot, ldot):", worst)
