"""OpenSim 4.6 as the oracle: M(q), the generalized forces of gravity and of the velocity
terms, q' and u' without forces, marker positions, at a state given in symbody's order.

The tests ask OpenSim in a process of its own (:func:`ask_opensim`, :func:`opensim_terms_of`:
the ``opensim`` wheel's bundled casadi cannot share a process with the ``casadi`` package;
see :mod:`systems.opensim_worker`); ``benchmarks/bench_opensim.py`` runs each model in a
process of its own and calls the in-process functions below with ``osim`` passed in.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

_TESTS = Path(__file__).resolve().parents[1]


def opensim_installed() -> bool:
    """Whether the ``opensim`` package is installed (without importing it; the tests' own
    folder ``tests/opensim`` is a namespace package of that name, not the wheel)."""
    spec = importlib.util.find_spec("opensim")
    return spec is not None and spec.origin not in (None, "namespace")


def ask_opensim(path, queries: list, *, without_forces: bool = True,
                constraints_off=(), drop_controllers=()) -> list:
    """The answers of :mod:`systems.opensim_worker` (a fresh process) to ``queries`` on the
    model at ``path`` (None: no model, e.g. for functions)."""
    request = {"path": str(path) if path is not None else None, "queries": queries,
               "without_forces": without_forces, "constraints_off": list(constraints_off),
               "drop_controllers": list(drop_controllers)}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_TESTS), str(_TESTS.parent / "src"),
                                                         os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "systems.opensim_worker"],
                         input=json.dumps(request), capture_output=True, text=True, env=env,
                         timeout=600, cwd=str(_TESTS))
    if out.returncode != 0:
        raise RuntimeError(f"the OpenSim worker failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def terms_in_our_order(model, answer: dict) -> dict:
    """A "terms" answer (OpenSim's order) permuted into the model's order."""
    perm = list(model.simbody_index)
    M = np.array(answer["M"])[np.ix_(perm, perm)]
    return {"M": M, "gravity": np.array(answer["gravity"])[perm],
            "velocity": np.array(answer["velocity"])[perm],
            "qdot": np.array(answer["qdot"])[list(model.simbody_q_slots)][perm],
            "udot": np.array(answer["udot"])[perm]}


def opensim_terms_of(model, path, states: list, *, markers: bool = False, **kw) -> list:
    """OpenSim's terms (in our order) at each (q, u) of ``states`` (our order), one process;
    with ``markers``, each dict also holds the markers' positions (len x 3, our order)."""
    queries = []
    for q, u in states:
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "terms", "Q": Q.tolist(), "U": U.tolist()})
        if markers:
            queries.append({"kind": "markers", "Q": Q.tolist(), "names": list(model.markers)})
    answers = ask_opensim(path, queries, **kw)
    step = 2 if markers else 1
    out = []
    for k in range(len(states)):
        terms = terms_in_our_order(model, answers[step * k])
        if markers:
            terms["markers"] = np.array(answers[step * k + 1]).reshape(-1, 3)
        out.append(terms)
    return out


def quiet(osim) -> None:
    """No opensim.log in the working directory, and only errors on the terminal."""
    osim.Logger.removeFileSink()
    osim.Logger.setLevelString("error")


def opensim_model(osim, path: str, *, without_forces: bool = True, constraints_off=()):
    """The OpenSim model of ``path`` with its forces and controllers removed (so that u' is
    gravity, velocity terms and constraints only) and the constraints named in
    ``constraints_off`` not enforced, and its initialized state."""
    quiet(osim)
    m = osim.Model(str(path))
    if without_forces:
        m.updForceSet().clearAndDestroy()
        m.updControllerSet().clearAndDestroy()
    for name in constraints_off:
        m.updConstraintSet().get(name).set_isEnforced(False)
    s = m.initSystem()
    return m, s


def set_state(model, m, s, q, u):
    """Put symbody's (q, u) (model order, all speeds) into the OpenSim state s."""
    Q, U = model.to_opensim_state(q, u)
    qv = s.updQ()
    uv = s.updU()
    for i, v in enumerate(Q):
        qv.set(i, float(v))
    for i, v in enumerate(U):
        uv.set(i, float(v))
    m.realizeAcceleration(s)


def opensim_terms(osim, model, m, s, q, u) -> dict:
    """OpenSim's numbers at (q, u), permuted into symbody's order: ``M``; ``gravity`` (the
    generalized gravity forces); ``velocity`` (C(q, u) u); ``qdot``; ``udot``."""
    from systems.opensim_worker import simbody_terms

    set_state(model, m, s, q, u)
    return terms_in_our_order(model, simbody_terms(osim, m, s))


def opensim_markers(osim, model, m, s, q) -> np.ndarray:
    """The markers' ground positions (len x 3) in symbody's marker order."""
    set_state(model, m, s, q, np.zeros(len(model.coordinates)))
    ms = m.getMarkerSet()
    out = []
    for name in model.markers:
        p = ms.get(name).getLocationInGround(s)
        out.append([p.get(0), p.get(1), p.get(2)])
    return np.array(out).reshape(-1, 3)


def muscle_derivative_queries(model, rng, n_states: int, coordinate_values=()) -> tuple:
    """``n_states`` random states of a muscle model and the worker's "muscle_derivatives"
    queries at them: q within the coordinate ranges, u in [-2, 2], activations and
    excitations in [0.01, 1], fiber lengths 0.97-1.03 times their equilibrium, drawn from
    ``rng`` in that order; ``coordinate_values[i]`` ({coordinate index: value}) overrides
    q of state i.  Returns (queries, states), states a list of (q, u, e) in our order."""
    names = list(model.muscle_names)
    n, k = len(model.coordinates), len(names)
    queries, states = [], []
    for i in range(n_states):
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        for j, value in (coordinate_values[i] if i < len(coordinate_values) else {}).items():
            q[j] = value
        a, e, c = rng.uniform(0.01, 1, k), rng.uniform(0.01, 1, k), rng.uniform(0.97, 1.03, k)
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "muscle_derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": dict(zip(names, a.tolist())),
                        "excitations": dict(zip(names, e.tolist())),
                        "fiber_length_factors": dict(zip(names, c.tolist()))})
        states.append((q, u, e))
    return queries, states


def muscle_derivative_errors(model, states: list, answers: list) -> dict:
    """The largest relative difference max |ours - OpenSim| / max |OpenSim| over ``states``
    ((q, u, e) of :func:`muscle_derivative_queries`) of q', u', the activations' and the
    fiber lengths' derivatives (muscle states [a, l] per muscle), OpenSim's from the worker's
    "muscle_derivatives" ``answers`` (fiber lengths and activations taken from them)."""
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    worst = {"qdot": 0.0, "udot": 0.0, "adot": 0.0, "fiber_velocity": 0.0}
    for (q, u, e), ans in zip(states, answers):
        z = model.extra_states_from_opensim(ans["states"])
        zdot = model.extra_states_from_opensim(ans["derivatives"])
        r = model.specified_values(q, e) if model.eom.derived_inputs is not None else e
        xdot = nm.rhs(0.0, np.concatenate([q, u, z]), p, r)
        qdot = np.array(ans["qdot"])[list(model.simbody_q_slots)][list(model.simbody_index)]
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        for key, ours, ref in (("qdot", xdot[:n], qdot), ("udot", xdot[n:2 * n], udot),
                               ("adot", xdot[2 * n::2], zdot[0::2]),
                               ("fiber_velocity", xdot[2 * n + 1::2], zdot[1::2])):
            worst[key] = max(worst[key], float(np.abs(ours - ref).max() / np.abs(ref).max()))
    return worst
