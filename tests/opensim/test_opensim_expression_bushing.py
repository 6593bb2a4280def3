"""ExpressionBasedBushingForce against OpenSim 4.6: u' at random states of a body on a
FreeJoint held to the ground by a bushing whose six stiffness formulas are nonlinear in all
six deflections, with damping (to 1e-9 relative), its generalized forces far from zero; linear
formulas give the BushingForce's numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import symengine as se

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed
from systems.opensim_synthetic import star_model

needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")

_FRAMES = (
    "<frames>"
    '<PhysicalOffsetFrame name="g_offset"><socket_parent>/ground</socket_parent>'
    "<translation>0.1 -0.2 0.05</translation><orientation>0.3 -0.2 0.1</orientation>"
    "</PhysicalOffsetFrame>"
    '<PhysicalOffsetFrame name="s0_offset"><socket_parent>/bodyset/s0</socket_parent>'
    "<translation>-0.05 0.1 0.02</translation><orientation>-0.1 0.25 0.2</orientation>"
    "</PhysicalOffsetFrame></frames>")

FORMULAS = {
    "Mx": "20*theta_x + 3*theta_x^3 - 0.5*theta_y*theta_z",
    "My": "30*sin(theta_y) + 2*delta_x",
    "Mz": "40*theta_z*(1 + theta_z^2)",
    "Fx": "500*delta_x + 80*delta_x*abs(delta_x)",
    "Fy": "600*delta_y - 5*theta_x",
    "Fz": "700*delta_z + 100*exp(delta_y) - 100",
}


def expression_bushing(formulas: dict, name: str = "ebush") -> str:
    exprs = "".join(f"<{k}_expression>{v}</{k}_expression>" for k, v in formulas.items())
    return (f'<ExpressionBasedBushingForce name="{name}"><socket_frame1>g_offset'
            "</socket_frame1><socket_frame2>s0_offset</socket_frame2>" + _FRAMES + exprs
            + "<rotational_damping>0.5 0.6 0.7</rotational_damping><translational_damping>"
            "5 6 7</translational_damping></ExpressionBasedBushingForce>")


def free_body_model(force: str) -> str:
    """A body on a FreeJoint (the star model's s0) with ``force`` in its ForceSet."""
    return star_model(only=("FreeJoint",)).replace(
        "</Model>", f'<ForceSet name="forceset"><objects>{force}</objects></ForceSet></Model>')


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # nothing is left out
        return load_opensim(path)


@pytest.fixture(scope="module")
def bushing_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("ebush") / "expression_bushing.osim"
    path.write_text(free_body_model(expression_bushing(FORMULAS)))
    return path, _load(path)


def _states(model, count: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    n = len(model.coordinates)
    return [(model.random_coordinates(rng), rng.uniform(-2, 2, n)) for _ in range(count)]


def _generalized(model, contrib, q, u) -> np.ndarray:
    Q, U = model.to_opensim_state(q, u)
    values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
    values.update(zip(model.tree_speeds, U))
    numbers = {se.Symbol(k): values[a] for k, a in model.sympy_converter.names.items()
               if a in values}
    return np.array([float(se.sympify(e).subs(numbers)) for e in contrib.generalized])


@needs_opensim
def test_expression_bushing_agrees_with_opensim(bushing_model):
    path, model = bushing_model
    assert list(model.forces) == ["ebush"]
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    states = _states(model, 3, 7)
    queries = [dict(kind="derivatives", activations={}, excitations={},
                    **dict(zip(("Q", "U"), (a.tolist() for a in model.to_opensim_state(q, u)))))
               for q, u in states]
    answers = ask_opensim(path, queries, without_forces=False)
    perm = list(model.simbody_index)
    for (q, u), ans in zip(states, answers):
        xdot = nm.rhs(0.0, np.concatenate([q, u]), p)
        udot = np.array(ans["udot"])[perm]
        assert np.abs(xdot[n:] - udot).max() <= 1e-9 * np.abs(udot).max()
        assert np.abs(_generalized(model, model.force_contributions[0], q, u)).max() > 1.0


def test_linear_formulas_are_the_bushing_force(tmp_path):
    """k θ and k δ as formulas give BushingForce's generalized forces."""
    linear = {"Mx": "20*theta_x", "My": "30*theta_y", "Mz": "40*theta_z",
              "Fx": "500*delta_x", "Fy": "600*delta_y", "Fz": "700*delta_z"}
    bush = expression_bushing(linear, "bush").replace("ExpressionBasedBushingForce",
                                                      "BushingForce")
    for k, v in linear.items():
        bush = bush.replace(f"<{k}_expression>{v}</{k}_expression>", "")
    bush = bush.replace("<rotational_damping>", "<rotational_stiffness>20 30 40"
                        "</rotational_stiffness><translational_stiffness>500 600 700"
                        "</translational_stiffness><rotational_damping>")
    models = []
    for name, xml in (("expr", expression_bushing(linear)), ("lin", bush)):
        path = tmp_path / f"{name}.osim"
        path.write_text(free_body_model(xml))
        models.append(_load(path))
    q, u = _states(models[0], 1, 2)[0]
    a, b = (_generalized(m, m.force_contributions[0], q, u) for m in models)
    assert np.abs(a).max() > 1.0
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
