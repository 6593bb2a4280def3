"""OpenSim 4.6 as an oracle in a process of its own.

The ``opensim`` wheel bundles its own casadi library (for Moco), which cannot share a
process with the ``casadi`` package that symbody's export and optimization tests import:
whichever is loaded second fails.  So the tests never import ``opensim``: they send their
questions to this script (``python -m systems.opensim_worker``, JSON on stdin, JSON on
stdout) through :func:`systems.opensim_oracle.ask_opensim`.

Input: ``{"path": ..., "without_forces": bool, "constraints_off": [...], "queries": [...]}``;
each query is one of

- ``{"kind": "terms", "Q": [...], "U": [...]}``: OpenSim's (Simbody's order) ``M`` (calcM),
  ``gravity`` and ``velocity`` (generalized forces), ``qdot`` (all Q slots), ``udot``;
- ``{"kind": "markers", "Q": [...], "names": [...]}``: their ground positions;
- ``{"kind": "energy", "Q": [...], "U": [...]}``: kinetic plus potential energy;
- ``{"kind": "points", "Q": [...], "names": [...]}``: ground positions of path points;
- ``{"kind": "state", "Q": [...], "U": [...], "names": [...]}``: the coordinates' values and
  speeds by name (OpenSim's Coordinate.getValue / getSpeedValue);
- ``{"kind": "function", "xml": ..., "x": [...]}``: an OpenSim Function read from XML by
  OpenSim and evaluated (calcValue);
- ``{"kind": "muscles", "Q": [...], "names": [...], "coordinates": [...]}``: the muscles'
  path lengths and moment arms about the named coordinates (forces kept: pass
  ``"without_forces": false``);
- ``{"kind": "degroote_model", "out": path}``: the model with its muscles replaced by
  rigid-tendon DeGrooteFregly2016Muscles (``replaceMuscles``), written to ``out``;
- ``{"kind": "derivatives", "Q", "U", "activations": {muscle: a}, "excitations": {...}}``:
  q', u' and the activations' derivatives (forces kept; excitations: the controls of any
  actuators by name);
- ``{"kind": "actuated_model", "out": path, "optimal_force": f}``: the model without its
  forces and with a CoordinateActuator ``act_<coordinate>`` on each coordinate, to ``out``;
- ``{"kind": "integrate", "Q": [...], "U": [...], "t": tf, "accuracy": a}``: the state
  after OpenSim's Manager integrated to tf (``Q``, ``U``, ``energy``, ``states``: every
  state variable by path);
- ``{"kind": "muscle_derivatives", "Q", "U", "activations", "excitations",
  "fiber_length_factors": {muscle: c}}``: fiber lengths set to c times their equilibrium
  (``equilibrateMuscles`` at Q, U and the activations), then q', u' and the derivatives of
  every state variable by path (``states``: their values, ``derivatives``);
- ``{"kind": "default_state"}``: the model's default state after ``equilibrateMuscles``
  (``Q``, ``U``, ``states``: every state variable by path, in OpenSim's order);
- ``{"kind": "constraint_errors", "Q": [...], "U": [...]}``: the constraints' position and
  velocity errors (``qerr``: State.getQErr, ``uerr``: getUErr, Simbody's rows);
- ``{"kind": "assemble", "Q": [...]}``: Q after ``Model.assemble`` (on the constraints);
- ``{"kind": "controls", "times": [...], "names": [...]}``: the named actuators' controls
  (``getControl`` after realizeVelocity: the model's controllers at each time);
- ``{"kind": "controlled_derivatives", "t", "Q", "U", "activations", "fiber_length_factors"}``:
  as ``muscle_derivatives`` at time t with the controls the model's controllers give
  (``controls``: every actuator's, by name, after realizeAcceleration);

``"drop_controllers": [...]`` in the request removes those controllers (by name) first.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np


def _vec(v) -> list:
    return [v.get(i) for i in range(v.size())]


def _mat(M) -> list:
    return [[M.get(i, j) for j in range(M.ncol())] for i in range(M.nrow())]


def _set(osim, m, s, Q, U=None):
    qv = s.updQ()
    for i, v in enumerate(Q):
        qv.set(i, float(v))
    if U is not None:
        uv = s.updU()
        for i, v in enumerate(U):
            uv.set(i, float(v))
    m.realizeAcceleration(s)


def _terms(osim, m, s, Q, U) -> dict:
    _set(osim, m, s, Q, U)
    return simbody_terms(osim, m, s)


def simbody_terms(osim, m, s) -> dict:
    """At the state s (realized to acceleration), in Simbody's order, as lists: ``M``
    (calcM, nu x nu), ``velocity`` (C(q, u) u) and ``gravity`` (the generalized gravity
    forces), both from calcResidualForceIgnoringConstraints, ``qdot`` (all Q slots), ``udot``."""
    matter = m.getMatterSubsystem()
    M = osim.Matrix()
    matter.calcM(s, M)
    n = s.getNU()
    nb = m.getBodySet().getSize() + 1
    zero_mob = osim.Vector(n, 0.0)
    zero_body = osim.VectorOfSpatialVec(nb, osim.SpatialVec(osim.Vec3(0), osim.Vec3(0)))
    res = osim.Vector()
    matter.calcResidualForceIgnoringConstraints(s, zero_mob, zero_body, osim.Vector(n, 0.0), res)
    velocity = _vec(res)
    # gravity: m g at each centre of mass, as spatial forces at the body origins (ground axes)
    g = m.getGravity()
    gvec = np.array([g.get(0), g.get(1), g.get(2)])
    forces = osim.VectorOfSpatialVec(nb, osim.SpatialVec(osim.Vec3(0), osim.Vec3(0)))
    bodies = m.getBodySet()
    for i in range(bodies.getSize()):
        b = bodies.get(i)
        c = b.findStationLocationInGround(s, b.getMassCenter())
        o = b.getPositionInGround(s)
        arm = np.array([c.get(k) - o.get(k) for k in range(3)])
        F = b.getMass() * gvec
        T = np.cross(arm, F)
        forces.set(int(b.getMobilizedBodyIndex()), osim.SpatialVec(osim.Vec3(*T), osim.Vec3(*F)))
    s2 = osim.State(s)
    s2.setU(osim.Vector(n, 0.0))
    m.realizeVelocity(s2)
    matter.calcResidualForceIgnoringConstraints(s2, zero_mob, forces, osim.Vector(n, 0.0), res)
    return {"M": _mat(M), "velocity": velocity, "gravity": [-v for v in _vec(res)],
            "qdot": _vec(s.getQDot()), "udot": _vec(s.getUDot())}


def _function(osim, xml: str, xs: list) -> list:
    tag = xml[1:xml.index(">")].split()[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "function.xml")
        with open(path, "w") as fh:
            fh.write('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
                     + xml.replace(f"<{tag}>", f'<{tag} name="f">', 1) + "</OpenSimDocument>")
        f = osim.Function.safeDownCast(osim.OpenSimObject.makeObjectFromFile(path))
        return [f.calcValue(osim.Vector(1, float(x))) for x in xs]


def _muscles(osim, m, s, qy) -> dict:
    """Path lengths (getLength) and moment arms (computeMomentArm, muscles x coordinates)."""
    qv = s.updQ()
    for i, v in enumerate(qy["Q"]):
        qv.set(i, float(v))
    s.setU(osim.Vector(s.getNU(), 0.0))
    m.realizePosition(s)
    cs = m.getCoordinateSet()
    lengths, arms = [], []
    for name in qy["names"]:
        pa = osim.PathActuator.safeDownCast(m.getForceSet().get(name))
        lengths.append(pa.getLength(s))
        arms.append([pa.computeMomentArm(s, cs.get(c)) for c in qy["coordinates"]])
    return {"lengths": lengths, "moment_arms": arms}


def rigid_degroote_muscles(osim, m) -> None:
    """Replace the muscles of the OpenSim model ``m`` by DeGrooteFregly2016Muscles (OpenSim's
    own ``replaceMuscles``) with rigid tendons."""
    osim.DeGrooteFregly2016Muscle.replaceMuscles(m)
    for f in m.getForceSet():
        mus = osim.DeGrooteFregly2016Muscle.safeDownCast(f)
        if mus is not None:
            mus.set_ignore_tendon_compliance(True)
    m.finalizeConnections()


def _degroote_model(osim, path: str, out: str) -> str:
    """The model with its muscles replaced by rigid-tendon DeGrooteFregly2016Muscles, written
    to ``out``."""
    m = osim.Model(path)
    rigid_degroote_muscles(osim, m)
    m.printToXML(out)
    return out


def _actuated_model(osim, path: str, out: str, optimal_force: float) -> str:
    """The model without its forces, a CoordinateActuator on each coordinate, to ``out``."""
    m = osim.Model(path)
    m.updForceSet().clearAndDestroy()
    for c in m.getCoordinateSet():
        act = osim.CoordinateActuator(c.getName())
        act.setName(f"act_{c.getName()}")
        act.setOptimalForce(optimal_force)
        m.addForce(act)
    m.finalizeConnections()
    m.printToXML(out)
    return out


def set_muscle_state(m, s, qy):
    """Put a query's coordinates ``Q``, speeds ``U`` (Simbody's order) and the muscles'
    ``activations`` ({muscle: a}) into the state s; the model's muscles."""
    qv, uv = s.updQ(), s.updU()
    for i, v in enumerate(qy["Q"]):
        qv.set(i, float(v))
    for i, v in enumerate(qy["U"]):
        uv.set(i, float(v))
    muscles = m.getMuscles()
    for name, a in qy["activations"].items():
        muscles.get(name).setActivation(s, float(a))
    return muscles


def realize_with_excitations(osim, m, s, excitations: dict) -> None:
    """Realize s to velocity, set the actuators' controls ({actuator: e}), realize it to
    acceleration."""
    m.realizeVelocity(s)
    controls = m.updControls(s)
    actuators = m.getActuators()
    for name, e in excitations.items():
        actuators.get(name).setControls(osim.Vector(1, float(e)), controls)
    m.setControls(s, controls)
    m.realizeAcceleration(s)


def _derivatives(osim, m, s, qy) -> dict:
    """q', u' and the muscles' activation derivatives at Q, U with the given activations and
    excitations (by muscle name)."""
    muscles = set_muscle_state(m, s, qy)
    realize_with_excitations(osim, m, s, qy["excitations"])
    adot = {n: m.getStateVariableDerivativeValue(s, muscles.get(n).getAbsolutePathString()
                                                 + "/activation")
            for n in qy["activations"]}
    return {"qdot": _vec(s.getQDot()), "udot": _vec(s.getUDot()), "adot": adot}


def _scale_fiber_length(osim, m, s, muscle, c: float) -> None:
    """The muscle's fiber length times c: through its concrete class (Thelen's setFiberLength
    is ActivationFiberLengthMuscle's, Millard's its own), or its state variable for a class
    the bindings do not expose (Schutte1993Muscle_Deprecated)."""
    cls = getattr(osim, muscle.getConcreteClassName(), None)
    if cls is None:
        state = muscle.getAbsolutePathString() + "/fiber_length"
        m.setStateVariableValue(s, state, c * m.getStateVariableValue(s, state))
        return
    mus = cls.safeDownCast(muscle)
    mus.setFiberLength(s, c * mus.getFiberLength(s))


def _muscle_derivatives(osim, m, s, qy) -> dict:
    """q', u' and every state variable's derivative, fiber lengths off equilibrium."""
    muscles = set_muscle_state(m, s, qy)
    m.equilibrateMuscles(s)
    for name, c in qy["fiber_length_factors"].items():
        # the concrete class: Thelen's setFiberLength is ActivationFiberLengthMuscle's,
        # Millard's its own
        _scale_fiber_length(osim, m, s, muscles.get(name), float(c))
    realize_with_excitations(osim, m, s, qy["excitations"])
    arr = m.getStateVariableNames()
    names = [arr.get(i) for i in range(arr.size())]
    return {"qdot": _vec(s.getQDot()), "udot": _vec(s.getUDot()),
            "states": {n: m.getStateVariableValue(s, n) for n in names},
            "derivatives": {n: m.getStateVariableDerivativeValue(s, n) for n in names}}


def _controls(osim, m, s, qy) -> list:
    """Each time's controls of the named actuators (the model's controllers)."""
    acts = m.getActuators()
    out = []
    for t in qy["times"]:
        s.setTime(float(t))
        m.realizeVelocity(s)
        out.append([osim.ScalarActuator.safeDownCast(acts.get(n)).getControl(s)
                    for n in qy["names"]])
    return out


def _controlled_derivatives(osim, m, s, qy) -> dict:
    """q', u' and every state variable's derivative at time t, the controls the model's
    controllers give (fiber lengths off equilibrium by the factors)."""
    s.setTime(float(qy["t"]))
    muscles = set_muscle_state(m, s, qy)
    m.equilibrateMuscles(s)
    for name, c in qy["fiber_length_factors"].items():
        _scale_fiber_length(osim, m, s, muscles.get(name), float(c))
    m.realizeAcceleration(s)
    arr = m.getStateVariableNames()
    names = [arr.get(i) for i in range(arr.size())]
    acts = m.getActuators()
    controls = {acts.get(i).getName(): osim.ScalarActuator.safeDownCast(acts.get(i))
                .getControl(s) for i in range(acts.getSize())}
    return {"qdot": _vec(s.getQDot()), "udot": _vec(s.getUDot()),
            "states": {n: m.getStateVariableValue(s, n) for n in names},
            "derivatives": {n: m.getStateVariableDerivativeValue(s, n) for n in names},
            "controls": controls}


def _default_state(osim, m, s) -> dict:
    m.equilibrateMuscles(s)
    m.realizeAcceleration(s)
    arr = m.getStateVariableNames()
    names = [arr.get(i) for i in range(arr.size())]
    return {"Q": _vec(s.getQ()), "U": _vec(s.getU()),
            "states": {n: m.getStateVariableValue(s, n) for n in names}}


def answer(request: dict) -> list:
    import opensim as osim

    osim.Logger.removeFileSink()
    osim.Logger.setLevelString("error")
    m = s = None
    if request.get("path"):
        m = osim.Model(request["path"])
        if request.get("without_forces", True):
            m.updForceSet().clearAndDestroy()
            m.updControllerSet().clearAndDestroy()
        cs = m.updControllerSet()
        for name in request.get("drop_controllers", ()):
            cs.remove(cs.getIndex(name))
        for name in request.get("constraints_off", ()):
            m.updConstraintSet().get(name).set_isEnforced(False)
        s = m.initSystem()
    out = []
    for qy in request["queries"]:
        kind = qy["kind"]
        if kind == "terms":
            out.append(_terms(osim, m, s, qy["Q"], qy["U"]))
        elif kind in ("markers", "points"):
            _set(osim, m, s, qy["Q"])
            paths = {c.getName(): c.getAbsolutePathString() for c in m.getComponentsList()}
            rows = []
            for name in qy["names"]:
                if kind == "markers":
                    p = m.getMarkerSet().get(name).getLocationInGround(s)
                else:
                    p = osim.PathPoint.safeDownCast(m.getComponent(paths[name])) \
                        .getLocationInGround(s)
                rows.append([p.get(0), p.get(1), p.get(2)])
            out.append(rows)
        elif kind == "energy":
            _set(osim, m, s, qy["Q"], qy["U"])
            out.append(m.calcKineticEnergy(s) + m.calcPotentialEnergy(s))
        elif kind == "state":
            _set(osim, m, s, qy["Q"], qy["U"])
            cs = m.getCoordinateSet()
            out.append({n: [cs.get(n).getValue(s), cs.get(n).getSpeedValue(s)]
                        for n in qy["names"]})
        elif kind == "function":
            out.append(_function(osim, qy["xml"], qy["x"]))
        elif kind == "integrate":
            _set(osim, m, s, qy["Q"], qy["U"])
            s.setTime(0.0)
            man = osim.Manager(m)
            man.setIntegratorAccuracy(float(qy.get("accuracy", 1e-8)))
            man.initialize(s)
            sf = man.integrate(float(qy["t"]))
            m.realizeAcceleration(sf)
            arr = m.getStateVariableNames()
            out.append({"Q": _vec(sf.getQ()), "U": _vec(sf.getU()),
                        "energy": m.calcKineticEnergy(sf) + m.calcPotentialEnergy(sf),
                        "states": {arr.get(i): m.getStateVariableValue(sf, arr.get(i))
                                   for i in range(arr.size())}})
        elif kind == "degroote_model":
            out.append(_degroote_model(osim, request["path"], qy["out"]))
        elif kind == "actuated_model":
            out.append(_actuated_model(osim, request["path"], qy["out"], qy["optimal_force"]))
        elif kind == "muscle_derivatives":
            out.append(_muscle_derivatives(osim, m, s, qy))
        elif kind == "default_state":
            out.append(_default_state(osim, m, s))
        elif kind == "derivatives":
            out.append(_derivatives(osim, m, s, qy))
        elif kind == "constraint_errors":
            _set(osim, m, s, qy["Q"], qy["U"])
            out.append({"qerr": _vec(s.getQErr()), "uerr": _vec(s.getUErr())})
        elif kind == "assemble":
            _set(osim, m, s, qy["Q"])
            m.assemble(s)
            out.append(_vec(s.getQ()))
        elif kind == "controls":
            out.append(_controls(osim, m, s, qy))
        elif kind == "controlled_derivatives":
            out.append(_controlled_derivatives(osim, m, s, qy))
        elif kind == "muscles":
            out.append(_muscles(osim, m, s, qy))
        else:
            raise ValueError(f"unknown query {kind!r}")
    return out


if __name__ == "__main__":
    print(json.dumps(answer(json.load(sys.stdin))))
