"""CoordinateLimitForce, SpringGeneralizedForce, ExpressionBasedCoordinateForce,
PointToPointSpring, PointActuator and BushingForce against OpenSim 4.6: u' at random states
(all forces and controls at once, to 1e-9 relative), each force's share of it well above
round-off; and the expression parser's refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import symengine as se

from symbody.errors import InputError
from symbody.opensim import OpenSimImportWarning, load_opensim
from symbody.opensim.forces.expression import parse_expression
from systems.opensim_force_models import PASSIVE_FORCES, limited_states, passive_force_model
from systems.opensim_oracle import ask_opensim, opensim_installed

needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@pytest.fixture(scope="module")
def forces_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("forces") / "passive_forces.osim"
    path.write_text(passive_force_model())
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # nothing is left out
        model = load_opensim(path)
    return path, model


#: the limited coordinates' values, state by state: beyond a limit's transition, within it
#: (both limits of each), so that every branch of CoordinateLimitForce is compared
_LIMITED = {"s3_a": (-0.9, -0.5, 0.4, 0.8), "s4_s": (0.9, -0.4, -0.9, 0.3)}


def _states(model, count: int, seed: int) -> list:
    return limited_states(model, count, seed, _LIMITED)


@needs_opensim
def test_forces_agree_with_opensim(forces_model):
    path, model = forces_model
    assert set(model.forces) == {"spring_a", "limit_a", "limit_s", "expr_g", "p2p", "push",
                                 "push_global", "bush"}
    controls = [str(s.func).replace("control_", "") for s in model.eom.specifieds]
    assert controls == ["push", "push_global"]
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    states = _states(model, 4, 11)
    queries = []
    for q, u, c in states:
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": {}, "excitations": dict(zip(controls, c.tolist()))})
    answers = ask_opensim(path, queries, without_forces=False)
    perm = list(model.simbody_index)
    for (q, u, c), ans in zip(states, answers):
        xdot = nm.rhs(0.0, np.concatenate([q, u]), p, c)
        udot = np.array(ans["udot"])[perm]
        assert np.abs(xdot[n:] - udot).max() <= 1e-9 * np.abs(udot).max()


def test_every_force_contributes(forces_model):
    """Each force's generalized forces at a random state are far from zero (so the
    agreement above checks every one of them)."""
    _, model = forces_model
    q, u, c = _states(model, 3, 3)[2]
    Q, U = model.to_opensim_state(q, u)
    values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
    values.update(zip(model.tree_speeds, U))
    values.update(zip(model.eom.specifieds, c))
    # the symengine symbols the generalized forces are written in -> their values
    numbers = {se.Symbol(k): values[a] for k, a in model.sympy_converter.names.items()
               if a in values}
    for name, contrib in zip(model.forces, model.force_contributions):
        size = max(abs(float(se.sympify(e).subs(numbers))) for e in contrib.generalized)
        assert size > 1e-2, name


@pytest.mark.parametrize("text, match", [
    ("__import__('os').system('ls')", "unexpected character \"'\""),
    ("__import__(q)", "unknown function '__import__'"),
    ("q + qq", "unknown variable 'qq'"),
    ("sin(q", "unbalanced"),
    ("q ** 2", "unexpected '\\*'"),
    ("q; 1", "unexpected character ';'"),
    ("max(q)", "takes 2 argument"),
    ("q 2", "after a complete expression"),
    ("", "is empty"),
])
def test_expression_parser_refuses_by_name(text, match):
    q = se.Symbol("q")
    with pytest.raises(InputError, match=match):
        parse_expression(text, {"q": q, "qdot": q}, what="<expression>")


def test_bad_expression_names_the_force_and_line():
    bad = dict(PASSIVE_FORCES)
    bad["ExpressionBasedCoordinateForce"] = bad["ExpressionBasedCoordinateForce"].replace(
        "2*sin(q)^2", "2*eval(q)")
    with pytest.raises(InputError, match=r'ExpressionBasedCoordinateForce name="expr_g"> '
                                         r"\(line \d+\).*unknown function 'eval'"):
        load_opensim(passive_force_model(bad))


def test_expression_grammar_is_leptons():
    """Lepton's precedences: unary minus binds looser than ^, ^ is right-associative."""
    x = se.Symbol("x")
    value = parse_expression("-2^3^0.5 + 1 - 2 - 3 + 8/4/2 + min(x, 2)*abs(-x)",
                             {"x": x}).subs({x: -1.5})
    assert float(value) == pytest.approx(-2 ** 3 ** 0.5 + 1 - 2 - 3 + 8 / 4 / 2 - 1.5 * 1.5,
                                         rel=1e-15)
