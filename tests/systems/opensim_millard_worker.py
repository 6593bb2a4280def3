"""OpenSim 4.6 as the oracle of Millard 2012's muscle and its curves, in a process of its own
(``python -m systems.opensim_millard_worker``, JSON on stdin and stdout, as
:mod:`systems.opensim_worker`, whose queries it also answers).

Queries, besides those of :mod:`systems.opensim_worker`:

- ``{"kind": "curve", "xml": ..., "x": [...]}``: an OpenSim muscle curve read from XML
  (``ActiveForceLengthCurve``, ...): ``value`` (calcValue) and ``derivative``
  (calcDerivative(x, 1)) at each x;
- ``{"kind": "millard", "Q", "U", "activations": {muscle: a}, "fiber_lengths": {muscle: l},
  "excitations": {muscle: e}}``: q', u', and per muscle the activation's and fiber length's
  derivatives (``adot``, ``ldot``), the fiber velocity, tendon force and normalized fiber
  velocity (forces kept); ``"fiber_scale": {muscle: f}`` instead of ``fiber_lengths``: OpenSim's
  equilibrium fiber lengths (``equilibrateMuscles``) times f (returned as ``fiber_lengths``);
  ``state_values``: the forces' state variables {OpenSim name: value}, OpenSim's order;
  ``"model": path``: another model file than the request's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from systems import opensim_worker

_TESTS = Path(__file__).resolve().parents[1]


def _curve(osim, xml: str, xs: list) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "curve.xml")
        with open(path, "w") as fh:
            fh.write('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
                     + xml + "</OpenSimDocument>")
        obj = osim.OpenSimObject.makeObjectFromFile(path)
        curve = getattr(osim, obj.getConcreteClassName()).safeDownCast(obj)
        _rebuild(curve)
        return {"value": [curve.calcValue(float(x)) for x in xs],
                "derivative": [curve.calcDerivative(float(x), 1) for x in xs]}


def _rebuild(curve) -> None:
    """Make a curve read from XML rebuild itself from its properties (reading does not
    mark it out of date): set one property to its own value."""
    kind = curve.getConcreteClassName()
    if kind == "ActiveForceLengthCurve":
        curve.setMinValue(curve.getMinValue())
    elif kind == "ForceVelocityCurve":
        curve.setConcentricCurviness(curve.getConcentricCurviness())
    elif kind == "FiberForceLengthCurve":
        curve.setCurveStrains(curve.getStrainAtZeroForce(), curve.getStrainAtOneNormForce())
    elif kind == "TendonForceLengthCurve":
        curve.setStrainAtOneNormForce(curve.getStrainAtOneNormForce())


def _millard(osim, m, s, qy) -> dict:
    muscles = opensim_worker.set_muscle_state(m, s, qy)
    lengths = dict(qy.get("fiber_lengths", {}))
    if "fiber_scale" in qy:       # OpenSim's equilibrium fiber lengths, scaled
        m.equilibrateMuscles(s)
        lengths = {n: muscles.get(n).getFiberLength(s) * f for n, f in qy["fiber_scale"].items()}
    for name, lf in lengths.items():
        osim.Millard2012EquilibriumMuscle.safeDownCast(muscles.get(name)).setFiberLength(
            s, float(lf))
    opensim_worker.realize_with_excitations(osim, m, s, qy["excitations"])
    out = {"qdot": opensim_worker._vec(s.getQDot()), "udot": opensim_worker._vec(s.getUDot()),
           "adot": {}, "ldot": {}, "fiber_velocity": {}, "tendon_force": {},
           "fiber_lengths": lengths, "state_values": {}}
    names = m.getStateVariableNames()
    for i in range(names.getSize()):
        if names.get(i).startswith("/forceset/"):
            out["state_values"][names.get(i)] = m.getStateVariableValue(s, names.get(i))
    for n in qy["activations"]:
        mus = osim.Millard2012EquilibriumMuscle.safeDownCast(muscles.get(n))
        path = mus.getAbsolutePathString()
        out["adot"][n] = m.getStateVariableDerivativeValue(s, path + "/activation")
        if not mus.get_ignore_tendon_compliance():
            out["ldot"][n] = m.getStateVariableDerivativeValue(s, path + "/fiber_length")
        out["fiber_velocity"][n] = mus.getFiberVelocity(s)
        out["tendon_force"][n] = mus.getTendonForce(s)
    return out


def answer(request: dict) -> list:
    import opensim as osim

    osim.Logger.removeFileSink()
    osim.Logger.setLevelString("error")
    mine = {"curve", "millard"}
    if not any(q["kind"] in mine for q in request["queries"]):
        return opensim_worker.answer(request)
    models: dict = {}
    out = []
    for qy in request["queries"]:
        if qy["kind"] == "curve":
            out.append(_curve(osim, qy["xml"], qy["x"]))
        elif qy["kind"] == "millard":
            path = qy.get("model", request.get("path"))
            if path not in models:
                m = osim.Model(path)
                models[path] = (m, m.initSystem())
            out.append(_millard(osim, *models[path], qy))
        else:
            raise ValueError(f"query {qy['kind']!r} cannot be mixed with curve/millard queries")
    return out


def ask(path, queries: list) -> list:
    """The answers of this worker (a fresh process) to ``queries`` on the model at ``path``
    (None: no model), forces kept."""
    request = {"path": str(path) if path is not None else None, "queries": queries}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_TESTS), str(_TESTS.parent / "src"),
                                                         os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "systems.opensim_millard_worker"],
                         input=json.dumps(request), capture_output=True, text=True, env=env,
                         timeout=600, cwd=str(_TESTS))
    if out.returncode != 0:
        raise RuntimeError(f"the OpenSim worker failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    print(json.dumps(answer(json.load(sys.stdin))))
