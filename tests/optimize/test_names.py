"""Names are accepted wherever optimize takes a symbol, as simulate takes them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm

from symbody.errors import InputError
from symbody.optimize import OptimalControlProblem, examples, periodic

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")


def test_names_and_symbols_build_the_same_problem_and_optimum():
    """The pendulum swing-up stated with names everywhere equals the one with symbols."""
    eom, constants = examples.pendulum_equations()
    theta, = eom.q
    omega, = eom.u
    T, = eom.specifieds
    sym = OptimalControlProblem(
        eom, num_nodes=41, duration=4.0, objective=T ** 2,
        instance_constraints=[theta.func(0.0), theta.func(4.0) - math.pi, omega.func(0.0),
                              omega.func(4.0)],
        bounds={T: (-10.0, 10.0), theta: (-1.0, 4.0)}, known_parameters=constants)
    named = OptimalControlProblem(
        eom, num_nodes=41, duration=4.0, objective="T**2",
        instance_constraints=["theta(0.0)", "theta(4.0) - pi", "omega(0)", "omega(4.0)"],
        bounds={"T": (-10.0, 10.0), "theta(t)": (-1.0, 4.0)},
        known_parameters={str(k): v for k, v in constants.items()})
    assert named.known_parameters == sym.known_parameters
    assert named.bounds == sym.bounds
    np.testing.assert_array_equal(named.nlp.lb, sym.nlp.lb)
    np.testing.assert_array_equal(named.nlp.ub, sym.nlp.ub)
    guess_sym = {theta: 0.0, omega: np.zeros(41), T: 0.5}
    guess_named = {"theta": 0.0, "omega(t)": np.zeros(41), "T": 0.5}
    np.testing.assert_array_equal(named.initial_vector(guess_named), sym.initial_vector(guess_sym))
    a = sym.solve(guess_sym, progress=False)
    b = named.solve(guess_named, progress=False)
    assert a.success and b.success
    assert b.objective == pytest.approx(a.objective, rel=1e-10)


def test_model_constants_with_assumptions_are_found_by_name():
    """The zoo cart-pole's constants are keyed by name as simulate keys them."""
    problem, _ = examples.cart_pole_swing_up(num_nodes=5)
    consts = {str(k): v for k, v in problem.known_parameters.items()}
    consts["m0"] = 2.0
    F, = problem.specifieds
    p2 = OptimalControlProblem(problem.eom, num_nodes=5, duration=2.0, objective=F ** 2,
                               known_parameters=consts, bounds={"F": (-5, 5), "q0": (-1, 1)})
    m0 = [c for c in problem.eom.constants if str(c) == "m0"][0]
    assert p2.known_parameters[m0] == 2.0
    assert p2.bounds[F] == (-5.0, 5.0)


def test_unknown_names_are_refused_with_the_valid_names():
    eom, constants = examples.pendulum_equations()
    kw = dict(num_nodes=5, duration=1.0)
    with pytest.raises(InputError, match=r"zz is not a constant of the model \(constants: I, d, g, m\)"):
        OptimalControlProblem(eom, known_parameters={"zz": 1.0}, **kw)
    with pytest.raises(InputError, match=r"bounds: zz .*theta\(t\), omega\(t\), T\(t\)"):
        OptimalControlProblem(eom, known_parameters=constants, bounds={"zz": (0, 1)}, **kw)
    with pytest.raises(InputError, match="bounds: m is not"):       # a known constant
        OptimalControlProblem(eom, known_parameters=constants, bounds={"m": (0, 1)}, **kw)
    problem = OptimalControlProblem(eom, known_parameters=constants, **kw)
    with pytest.raises(InputError, match="initial_guess: 'zz' is not a state"):
        problem.initial_vector({"zz": 1.0})
    with pytest.raises(InputError, match="instance_constraints: cannot parse"):
        OptimalControlProblem(eom, known_parameters=constants, instance_constraints=["theta(("],
                              **kw)
    # an unknown parameter by name: bounded and guessed by name
    free = {k: v for k, v in constants.items() if str(k) != "m"}
    p = OptimalControlProblem(eom, known_parameters=free, bounds={"m": (0.5, 2.0)}, **kw)
    m = sm.Symbol("m")
    assert p.bounds[m] == (0.5, 2.0)
    assert p.initial_vector({"m": 1.5})[p.nlp.ip[0]] == 1.5


def test_periodic_takes_names():
    eom, constants = examples.pendulum_equations()
    theta, = eom.q
    omega, = eom.u
    Tf = sm.Symbol("T_f")
    kw = dict(num_nodes=5, duration=Tf, known_parameters=constants, bounds={"T_f": (0.5, 2)})
    by_symbol = OptimalControlProblem(eom, instance_constraints=periodic(theta, omega, end=Tf),
                                      **kw)
    by_name = OptimalControlProblem(eom, instance_constraints=periodic("theta", "omega(t)",
                                                                       end=Tf), **kw)
    assert [c[0] for c in by_name.instance_constraints] == \
        [c[0] for c in by_symbol.instance_constraints]
    with pytest.raises(InputError, match="periodic"):
        periodic("q 1", end=1.0)
