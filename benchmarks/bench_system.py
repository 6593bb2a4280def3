"""Formation and compile time of the musculoskeletal arm: the System route, symbody vs SymPy.

The zoo's musculoskeletal arm (one PinJoint, two DeGroote 2016 musculotendons with
activation dynamics; ``symbody.models.musculoskeletal_arm``) is built as a SymPy
``System`` and turned into numbers two ways, in fresh processes so nothing is cached
in memory between them:

- SymPy (the anchor): ``system.form_eoms(eom_method=sympy KanesMethod)``, then
  ``sympy.lambdify(cse=True)`` of the mass matrix, the forcing and the activation
  derivatives (the biomechanics tutorial's recipe), and one evaluation;
- symbody: ``system.form_eoms(eom_method=symbody.KanesMethod)``, then
  ``symbody.compile(system)`` (symengine LLVM kernels; the on-disk cache emptied first,
  so this is a cold compile), and one evaluation.

Both right-hand sides are compared at the model's initial state (they must agree to
1e-9).  Usage::

    .venv/bin/python benchmarks/bench_system.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, sys, time
import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
which = sys.argv[1]
t0 = time.perf_counter()
import symbody as sb
from symbody.models.musculoskeletal_arm import default_constants, musculoskeletal_arm_system
system, ex = musculoskeletal_arm_system()
b, tr = ex["biceps"], ex["triceps"]
consts = default_constants(ex)
q0 = {ex["q"]: np.deg2rad(75.0), ex["u"]: 0.3, b.a: 0.2, tr.a: 0.1}
e0 = {b.e: 0.8, tr.e: 0.1}
t_import = time.perf_counter() - t0
if which == "sympy":
    t0 = time.perf_counter()
    system.form_eoms(eom_method=me.KanesMethod)
    t_form = time.perf_counter() - t0
    t0 = time.perf_counter()
    x = [ex["q"], ex["u"], b.a, tr.a]
    r = [b.e, tr.e]
    p = sorted(set(system.mass_matrix.free_symbols | system.forcing.free_symbols
                   | b.rhs().free_symbols | tr.rhs().free_symbols) - {me.dynamicsymbols._t}, key=str)
    dadt = b.rhs().col_join(tr.rhs())
    f = sm.lambdify((x, r, p), (system.mass_matrix, system.forcing, dadt), cse=True)
    xv = [q0[s] for s in x]; rv = [e0[s] for s in r]
    pv = [consts.get(s, 0.0) for s in p]
    M, F, ad = f(xv, rv, pv)
    rhs = np.concatenate([[xv[1]], np.linalg.solve(M, F).ravel(), np.ravel(ad)])
    t_compile = time.perf_counter() - t0
else:
    t0 = time.perf_counter()
    system.form_eoms(eom_method=sb.KanesMethod)
    t_form = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = sb.compile(system)
    P = {s: consts[s] for s in model.constants}
    rhs = model.rhs(0.0, model.state_array(q0), P, [e0[s] for s in model.specifieds])
    t_compile = time.perf_counter() - t0
print(json.dumps({"import": t_import, "form": t_form, "compile": t_compile, "rhs": list(map(float, rhs))}))
"""


def run(which: str, cache: str) -> dict:
    env = dict(os.environ, SYMBODY_CACHE_DIR=cache, SYMBODY_QUIET="1")
    out = subprocess.run([sys.executable, "-c", _CHILD, which], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rows = {"sympy": [], "symbody": []}
    for _ in range(args.repeat):
        for which in rows:
            with tempfile.TemporaryDirectory() as cache:       # cold kernel cache each time
                rows[which].append(run(which, cache))
    ref, ours = rows["sympy"][0]["rhs"], rows["symbody"][0]["rhs"]
    import numpy as np
    err = float(np.max(np.abs(np.array(ref) - np.array(ours))) / max(1.0, np.max(np.abs(ref))))
    print(f"musculoskeletal arm: rhs agree to {err:.2e} (relative)")

    def med(which, key):
        return float(np.median([r[key] for r in rows[which]]))

    print(f"{'':28s}{'SymPy':>10s}{'symbody':>10s}{'ratio':>8s}")
    for key, label in (("form", "form_eoms"), ("compile", "lambdify / compile + 1 rhs")):
        s, o = med("sympy", key), med("symbody", key)
        print(f"{label:28s}{s:9.3f}s{o:9.3f}s{s / o:7.2f}x")
    s = med("sympy", "form") + med("sympy", "compile")
    o = med("symbody", "form") + med("symbody", "compile")
    print(f"{'total':28s}{s:9.3f}s{o:9.3f}s{s / o:7.2f}x")
    assert err < 1e-9, "symbody and SymPy disagree"
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
