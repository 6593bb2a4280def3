"""EquationsOfMotion's constructor: the grouped ConstraintEquations and the old flat keywords."""

from __future__ import annotations

import warnings

import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb

t = me.dynamicsymbols._t

BLOCKS = ("kinematic_qdot", "kinematic_u", "kinematic_rest", "qdot_solution", "holonomic",
          "velocity_matrix", "velocity_rest", "acceleration_matrix", "acceleration_rest",
          "dynamic_mass", "dynamic_rest", "auxiliary")


def _cartesian_pendulum():
    x, y, ux, uy = me.dynamicsymbols("x y u_x u_y")
    L, m, g = sm.symbols("L m g")
    kin = [x.diff(t) - ux, y.diff(t) - uy]
    dyn = [m * ux.diff(t), m * uy.diff(t) + m * g]
    return x, y, ux, uy, L, kin, dyn


def _same(a: sb.EquationsOfMotion, b: sb.EquationsOfMotion) -> None:
    for name in BLOCKS:
        assert getattr(a, name) == getattr(b, name), name
    assert (a.q_ind, a.q_dep, a.u_ind, a.u_dep, a.u_aux) == (b.q_ind, b.q_dep, b.u_ind, b.u_dep, b.u_aux)
    assert (a.constants, a.specifieds, a.noncontributing) == (b.constants, b.specifieds, b.noncontributing)
    assert a.dynamic_reduced == b.dynamic_reduced


def test_old_keywords_warn_and_give_the_same_equations():
    x, y, ux, uy, L, kin, dyn = _cartesian_pendulum()
    new = sb.EquationsOfMotion([x], [ux], kin, dyn, constraints=sb.ConstraintEquations(
        q_dep=[y], holonomic=[x**2 + y**2 - L**2], u_dep=[uy], velocity=[x * ux + y * uy]))
    with pytest.warns(DeprecationWarning, match=r"constraints=ConstraintEquations.*velocity=\.\.\."):
        old = sb.EquationsOfMotion([x], [ux], kin, dyn, q_dep=[y], holonomic=[x**2 + y**2 - L**2],
                                   u_dep=[uy], velocity_constraints=[x * ux + y * uy])
    _same(new, old)
    assert new.M == new.m == 1 and new.velocity_matrix == sm.Matrix([[x, y]])
    # the acceleration constraints default to d/dt of the velocity constraints, given or not
    given = sb.EquationsOfMotion([x], [ux], kin, dyn, constraints=sb.ConstraintEquations(
        q_dep=[y], holonomic=[x**2 + y**2 - L**2], u_dep=[uy], velocity=[x * ux + y * uy],
        acceleration=[x * ux.diff(t) + y * uy.diff(t) + ux**2 + uy**2]))
    _same(new, given)


def test_new_spelling_does_not_warn_and_defaults_to_no_constraints():
    x, _, ux, _, _, kin, dyn = _cartesian_pendulum()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        free = sb.EquationsOfMotion([x], [ux], kin[:1], dyn[:1], constraints=sb.ConstraintEquations())
        plain = sb.EquationsOfMotion([x], [ux], kin[:1], dyn[:1])
    _same(free, plain)
    assert free.M == free.m == 0


def test_auxiliary_equations_group():
    x, ux, ua = me.dynamicsymbols("x u_x u_a")
    m, k, N_c = sm.symbols("m k N_c")
    aux = [N_c - m * ux**2]
    eom = sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [m * ux.diff(t) + k * x],
                               constraints=sb.ConstraintEquations(auxiliary=sb.AuxiliaryEquations(
                                   speeds=[ua], equations=aux, noncontributing=[N_c])))
    with pytest.warns(DeprecationWarning, match="u_auxiliary"):
        old = sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [m * ux.diff(t) + k * x],
                                   u_auxiliary=[ua], auxiliary=aux, noncontributing=[N_c])
    _same(eom, old)
    assert eom.u_aux == (ua,) and eom.noncontributing == (N_c,) and N_c not in eom.constants
    assert eom.auxiliary == sm.ImmutableMatrix(aux)


def test_bad_constructor_keywords_are_named():
    x, y, ux, uy, L, kin, dyn = _cartesian_pendulum()
    with pytest.raises(TypeError, match="'holonomics'"):
        sb.EquationsOfMotion([x], [ux], kin[:1], dyn[:1], holonomics=[x])
    with pytest.raises(sb.FormulationError, match="not both"):
        sb.EquationsOfMotion([x], [ux], kin, dyn, q_dep=[y],
                             constraints=sb.ConstraintEquations(holonomic=[x**2 + y**2 - L**2]))
    with pytest.raises(sb.FormulationError, match="ConstraintEquations"):
        sb.EquationsOfMotion([x], [ux], kin[:1], dyn[:1], constraints={"q_dep": [y]})
    with pytest.raises(sb.FormulationError, match="1 dependent speeds .* 0 velocity"):
        sb.EquationsOfMotion([x, y], [ux], kin, dyn, constraints=sb.ConstraintEquations(u_dep=[uy]))
    with pytest.raises(AttributeError):
        sb.ConstraintEquations().q_dep = [y]
