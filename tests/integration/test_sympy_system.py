"""SymPy's System route with symbody's classes: ``system.form_eoms(eom_method=symbody.KanesMethod)``.

The models of tests/systems/sympy_system_examples.py (SymPy's own docstring and tutorial
examples) are formed twice, with symbody's and with SymPy's classes; the results must agree
at random values of every symbol, speed and coordinate (1e-10 relative: both are exact
symbolic forms of the same equations, so only rounding of the evaluation differs).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.compilation.function_expansion import expand_functions
from symbody.errors import FormulationError
from systems import sympy_system_examples as ex

t = me.dynamicsymbols._t


def random_values(*exprs, seed: int = 7, base: dict | None = None) -> dict:
    """One random value per symbol, function of time and derivative: in [0.3, 1.3], or
    within 10 % of ``base[symbol]`` (the model's numbers keep square roots and arcsines
    of the muscle paths real)."""
    atoms: set = set()
    for e in exprs:
        for x in sm.Matrix(e):
            atoms |= x.free_symbols | me.find_dynamicsymbols(x) | x.atoms(sm.Derivative)
    atoms.discard(t)
    rng = random.Random(seed)
    base = base or {}
    return {a: base[a] * rng.uniform(0.9, 1.1) if a in base else rng.uniform(0.3, 1.3)
            for a in sorted(atoms, key=sm.srepr)}


def evaluate(expr, values: dict) -> list:
    """``expr`` at ``values`` in double precision (lambdified; the biomechanics curve
    functions through their definitions, ``doit()``)."""
    keys = list(values)
    plain = [sm.Dummy() for _ in keys]
    derivs = {k: p for k, p in zip(keys, plain) if isinstance(k, sm.Derivative)}
    rest = {k: p for k, p in zip(keys, plain) if not isinstance(k, sm.Derivative)}
    m = expand_functions(sm.Matrix(expr).xreplace(derivs).xreplace(rest), backend="numpy")
    f = sm.lambdify(plain, m, modules=["numpy"], cse=True)
    return [complex(v) for v in f(*[complex(values[k]) for k in keys])]


def assert_rhs_solves_sympys_full_form(ours_rhs, theirs, what: str, base=None, seed: int = 5):
    """Our symbolic rhs() equals SymPy's mass_matrix_full^-1 forcing_full (solved numerically,
    which avoids SymPy's symbolic inversion)."""
    M, F = theirs.mass_matrix_full, theirs.forcing_full
    vals = random_values(ours_rhs, M, F, seed=seed, base=base)
    n = M.rows
    MF = evaluate(M.row_join(F), vals)
    Mn = np.array(MF, dtype=complex).reshape(n, n + 1)
    expected = np.linalg.solve(Mn[:, :n], Mn[:, n])
    got = np.array(evaluate(ours_rhs, vals))
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(got - expected)))
    # a small dense solve on top of exact forms: rounding times the condition number
    assert err <= 1e-10 * scale * max(1.0, np.linalg.cond(Mn[:, :n]) / 1e3), \
        f"{what}: rhs differs by {err:.3e}"


def assert_equal_at_random_values(ours, theirs, what: str, seeds=(7, 11), base=None):
    for seed in seeds:
        vals = random_values(ours, theirs, seed=seed, base=base)
        a, b = evaluate(ours, vals), evaluate(theirs, vals)
        # (complex where a random value leaves the physical range, e.g. asin(r/d) with r > d)
        scale = max(1.0, max(abs(x) for x in b))
        err = max(abs(x - y) for x, y in zip(a, b))
        # both sides are exact forms of one expression: they agree to double rounding
        assert err <= 1e-10 * scale, f"{what}: differs by {err:.3e} (scale {scale:.3g})"


KANE_MODELS = ["double_pendulum", "cart_pole", "cart_pole_constrained", "four_bar",
               "spring_damper_duffing", "muscle_arm"]


@pytest.mark.parametrize("name", KANE_MODELS)
def test_form_eoms_with_symbody_kane_matches_sympy(name):
    ours, d = ex.BUILDERS[name]()
    theirs, _ = ex.BUILDERS[name]()
    eom_ours = ours.form_eoms(eom_method=sb.KanesMethod)
    eom_theirs = theirs.form_eoms(eom_method=me.KanesMethod)
    assert isinstance(ours.eom_method, sb.KanesMethod)
    base = d["p"]
    seeds = (7,) if name == "muscle_arm" else (7, 11)    # the muscle's forms are big to evaluate
    assert_equal_at_random_values(eom_ours, eom_theirs, f"{name}: Fr + Fr*", base=base, seeds=seeds)
    assert_equal_at_random_values(ours.mass_matrix_full, theirs.mass_matrix_full,
                                  f"{name}: mass_matrix_full", base=base, seeds=seeds)
    assert_equal_at_random_values(ours.forcing_full, theirs.forcing_full, f"{name}: forcing_full",
                                  base=base, seeds=seeds)
    if not ours.q_dep and name != "muscle_arm":
        # (constrained: rhs() is the same solve of the full forms compared above; its
        # symbolic LU is slow to evaluate, so only the unconstrained ones check it)
        assert_rhs_solves_sympys_full_form(ours.rhs(), theirs, f"{name}: rhs()", base=base)
    assert isinstance(ours.eom_method.to_eom(specifieds=d.get("specifieds"),
                                             extra_states=d.get("actuators")), sb.EquationsOfMotion)


@pytest.mark.parametrize("name", ["double_pendulum", "four_bar"])
def test_form_eoms_with_symbody_lagrange_matches_sympy(name):
    ours, _ = ex.BUILDERS[name](lagrange=True)
    theirs, _ = ex.BUILDERS[name](lagrange=True)
    eom_ours = ours.form_eoms(eom_method=sb.LagrangesMethod)
    eom_theirs = theirs.form_eoms(eom_method=me.LagrangesMethod)
    assert isinstance(ours.eom_method, sb.LagrangesMethod)
    assert_equal_at_random_values(eom_ours, eom_theirs, f"{name}: Lagrange's equations")
    assert_equal_at_random_values(ours.mass_matrix_full, theirs.mass_matrix_full, f"{name}: mass_matrix_full")
    assert_equal_at_random_values(ours.forcing_full, theirs.forcing_full, f"{name}: forcing_full")
    if name == "double_pendulum":
        assert_rhs_solves_sympys_full_form(ours.rhs(), theirs, f"{name}: rhs()")
    eom = ours.eom_method.to_eom()
    assert eom.M == (2 if name == "four_bar" else 0)


def test_keywords_sympy_passes_and_no_loads():
    """explicit_kinematics (both values), a None forcelist (no loads at all), and the
    disallowed keywords SymPy itself refuses."""
    for explicit in (True, False):
        ours, _ = ex.double_pendulum()
        theirs, _ = ex.double_pendulum()
        ours.loads, theirs.loads = [], []          # no gravity: SymPy passes forcelist=None
        ours.form_eoms(eom_method=sb.KanesMethod, explicit_kinematics=explicit)
        theirs.form_eoms(eom_method=me.KanesMethod, explicit_kinematics=explicit)
        assert ours.eom_method.forcelist is None
        assert_equal_at_random_values(ours.mass_matrix_full, theirs.mass_matrix_full, "mass_matrix_full")
        assert_equal_at_random_values(ours.forcing_full, theirs.forcing_full, "forcing_full")
    with pytest.raises(ValueError, match="bodies"):
        ours.form_eoms(eom_method=sb.KanesMethod, bodies=[])


def test_symbody_classes_are_virtual_subclasses_of_sympys():
    assert issubclass(sb.KanesMethod, me.KanesMethod)
    assert issubclass(sb.LagrangesMethod, me.LagrangesMethod)
    assert not issubclass(sb.KanesMethod, me.LagrangesMethod)
    # the formation is symbody's own: nothing of SymPy's class is inherited
    assert me.KanesMethod not in sb.KanesMethod.__mro__


def test_validate_system_accepts_symbody_classes():
    system, _ = ex.four_bar()
    system.validate_system(eom_method=sb.KanesMethod)
    system, _ = ex.double_pendulum(lagrange=True)
    system.validate_system(eom_method=sb.LagrangesMethod)


def test_undeclared_function_of_time_is_an_error_naming_it():
    """With extra states declared, a function of t left undeclared (here the cart force F)
    is an error naming it, not a silent specified input."""
    system, d = ex.cart_pole()
    system.form_eoms(eom_method=sb.KanesMethod)
    a = me.dynamicsymbols("a")
    with pytest.raises(FormulationError, match=r"F\(t\)"):
        system.eom_method.to_eom(extra_states={a: -a})
    eom = system.eom_method.to_eom(extra_states={a: -a}, specifieds=d["specifieds"])
    assert eom.specifieds == (d["specifieds"][0],) and eom.states[-1] == a
    with pytest.raises(FormulationError, match=r"F\(t\)"):
        sb.compile(system)
