"""The five-link biped of the zoo (:func:`symbody.models.planar_biped`) against Newton's law
for the whole body and the smooth contact's closed form: its compiled equations, at random
states and torques, give the mass centre the vertical acceleration the ground's normal forces
and gravity give it (friction is horizontal on the level ground; the joint torques are
internal), and standing at rest on straight legs only the smoothing's excess force moves it."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm

import symbody as sb
from symbody.compat.sympy import TIME
from symbody.models.planar_biped import SMOOTHING


@pytest.fixture(scope="module")
def biped():
    model = sb.models.planar_biped()
    return model, sb.compile(model.eom)


def _functions(model):
    """[q, u] -> (normal forces (2,), y_c, J_y (7,), dJ_y/dt . u) with the model's constants."""
    eom = model.eom
    q, u = list(eom.q), list(eom.u)
    constants = model.constants
    g = constants[model.constant("g")]
    mass = sum(constants[model.constant(n)] for n in ("m_b",)) + 2 * sum(
        constants[model.constant(n)] for n in ("m_t", "m_s"))
    height = (model.outputs["potential_energy"] / (model.constant("g") * mass)).xreplace(constants)
    jacobian = sm.Matrix([height]).jacobian(q)
    rate = (jacobian * sm.Matrix(u))[0].diff(TIME).xreplace(
        {qi.diff(TIME): ui for qi, ui in zip(q, u)})
    rate = rate.xreplace({ui.diff(TIME): 0 for ui in u})           # J' u, without u'
    states = [*q, *u]
    forces = sm.Matrix([c.normal_force for c in eom.contacts]).xreplace(constants)
    return (sm.lambdify([states], forces), sm.lambdify([states], jacobian),
            sm.lambdify([states], rate), mass, g)


def test_the_mass_centre_obeys_newton_vertically(biped):
    model, numeric = biped
    forces, jacobian, rate, mass, g = _functions(model)
    p = numeric.constants_array(model.constants)
    rng = np.random.default_rng(3)
    loads = []
    for _ in range(8):
        q = np.array([rng.uniform(-0.2, 0.2), rng.uniform(0.7, 0.8), *rng.uniform(-0.4, 0.4, 3),
                      *rng.uniform(0.0, 0.6, 2)])
        u = rng.uniform(-1.0, 1.0, 7)
        torques = rng.uniform(-50.0, 50.0, 4)
        x = np.concatenate([q, u])
        udot = numeric.rhs(0.0, x, p, torques)[7:]
        acceleration = (np.ravel(jacobian(x)) @ udot) + float(rate(x))
        total = float(np.sum(forces(x)))
        loads.append(total)
        assert mass * acceleration == pytest.approx(total - mass * g, rel=1e-9, abs=1e-8)
    assert max(loads) > 100.0                                   # some states stand on the ground


def test_standing_at_rest_only_the_smoothing_lifts_it(biped):
    model, numeric = biped
    state = model.initial_state
    eom = model.eom
    x = np.array([state[s] for s in (*eom.q, *eom.u)])
    p = numeric.constants_array(model.constants)
    udot = numeric.rhs(0.0, x, p, np.zeros(4))[7:]
    c = {s.name: v for s, v in model.constants.items()}
    mass = c["m_b"] + 2 * (c["m_t"] + c["m_s"])
    depth = (mass * c["g"] / 2 / c["k"]) ** (2 / 3)             # the exact static depth
    smooth = SMOOTHING                                           # the model's smoothing scales

    def positive(value, scale):                                    # s(x, ε) of SmoothNormal
        return (value + np.sqrt(value ** 2 + scale ** 2)) / 2

    normal = c["k"] * positive(depth, smooth.depth) ** 1.5 * positive(1.0, smooth.rate)
    assert udot[1] == pytest.approx((2 * normal - mass * c["g"]) / mass, rel=1e-9)
    assert np.abs(np.delete(udot, 1)).max() < 1e-9               # straight, upright: no turning
