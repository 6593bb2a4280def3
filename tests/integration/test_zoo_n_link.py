"""The zoo's n-link pendulum: energies and drawing points written as running sums equal
sympy.physics.vector's (Particle.kinetic_energy, Point.pos_from) at random states."""

from __future__ import annotations

import numpy as np
import sympy as sm

import symbody
from symbody.models.n_link_pendulum_on_cart import n_link_pendulum_on_cart_system


def test_energies_and_points_match_vector_algebra():
    n = 4
    system, ex = n_link_pendulum_on_cart_system(n)
    N = system.frame
    particles = system.bodies
    kinetic = sum(p.kinetic_energy(N) for p in particles)
    points = [p.point for p in particles]
    # the model's origin O is where P0 = q0 N.x starts
    positions = [P.pos_from(points[0]) + ex["q"][0] * N.x for P in points]
    rng = np.random.default_rng(3)
    values = {s: rng.uniform(-1.5, 1.5) for s in [*ex["q"], *ex["u"], *ex["m"], *ex["l"], ex["g"]]}
    ev = lambda e: float(sm.sympify(e).xreplace(values))   # noqa: E731
    # same sums in another order: equal to round-off of numbers of size ~10
    assert abs(ev(ex["kinetic"]) - ev(kinetic)) < 1e-12
    potential = ex["g"] * sum(m * r.dot(N.y) for m, r in zip(ex["m"], positions))
    assert abs(ev(ex["potential"]) - ev(potential)) < 1e-12
    for i, r in enumerate(positions):
        got = [ev(c) for c in ex["points"][f"P{i}"]]
        want = [ev(r.dot(N.x)), ev(r.dot(N.y)), 0.0]
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_zoo_model_energy_is_conserved():
    model = symbody.models.n_link_pendulum_on_cart(3)
    num = symbody.compile(model.eom)
    sol = symbody.simulate(num, model.t_span, model.initial_state, model.constants,
                           solver=symbody.Solver(rtol=1e-10, atol=1e-10))
    energy = symbody.make_function([list(model.eom.q), list(model.eom.u), list(model.constants)],
                                   model.energy)
    E = energy(sol.q, sol.u, list(model.constants.values()))
    # the energy of a conservative chain drifts only by the integration error (tolerance 1e-10)
    assert np.abs(E - E[0]).max() < 1e-7 * max(1.0, abs(E[0]))
