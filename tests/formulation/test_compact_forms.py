"""Issue 10: the SymPy forms symbody returns are as compact as SymPy's, built only when asked for.

Sizes are ``sympy.count_ops`` over ``mass_matrix`` and ``forcing``, symbody's
KanesMethod against SymPy's on the same kinematics (fresh objects for each).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.formulation.kane import KanesMethod

t = me.dynamicsymbols._t

# every zoo model but the bicycle (SymPy needs ~30 s for it: benchmarks/bench_size.py measures it)
ZOO = ["double_rod_pendulum", "two_particle_pendulum", "four_bar", "snakeboard", "chaplygin_sleigh",
       "rolling_disc", "n_link_pendulum_on_cart"]


def _system(name):
    module = importlib.import_module(f"symbody.models.{name}")
    built = getattr(module, f"{name}_system")()
    return built[0] if isinstance(built, tuple) else built


def _ops(M) -> int:
    return sum(sm.count_ops(e) for e in M)


@pytest.mark.parametrize("name", ZOO)
def test_zoo_forms_no_larger_than_sympys(name):
    sizes = {}
    for cls in (sb.KanesMethod, me.KanesMethod):
        system = _system(name)
        km = system.method(cls)
        km.kanes_equations(system.bodies, system.loads)
        sizes[cls] = (_ops(km.mass_matrix), _ops(km.forcing))
    ours, ref = sizes[sb.KanesMethod], sizes[me.KanesMethod]
    assert ours[0] <= ref[0] and ours[1] <= ref[1], (ours, ref)


def test_double_rod_pendulum_mass_matrix_prints_as_the_book():
    """Seed 002 (Moore, Learn Multibody Dynamics, 'Equations of Motion') prints, for the
    double-rod pendulum with the particle of mass m/4, M[0, 0] =
    l**2*m*cos(q2)**2/12 + 4*l**2*m/3 + m*(l**2 + q3**2*cos(q2)**2)/4 (quoted in issue 10)."""
    system = _system("double_rod_pendulum")
    km = system.method()
    km.kanes_equations(system.bodies, system.loads)
    q1, q2, q3 = system.q_ind
    l, m = sm.symbols("l m")
    book = (l**2 * m * sm.cos(q2)**2 / 12 + 4 * l**2 * m / 3
            + m * (l**2 + q3**2 * sm.cos(q2)**2) / 4)
    M = km.mass_matrix
    assert sm.expand(M[0, 0] - book) == 0
    assert sm.count_ops(M[0, 0]) <= sm.count_ops(book)
    # the rest of the matrix is as short: no sin^2 + cos^2 pairs, nothing of q1
    assert not M.has(q1)
    assert M[1, 1] == l**2 * m / 12 + m * q3**2 / 4
    assert M[2, 2] == m / 4


def test_rolling_disc_mass_matrix_is_diagonal():
    """SymPy's test_kane.py rolling disc: inertia given in the lean frame L, the disc's
    angular velocity in L; the mass matrix is diag(5mr^2/4, 3mr^2/2, mr^2/4)."""
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols("q1 q2 q3 u1 u2 u3")
    r, m, g = sm.symbols("r m g")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = me.Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    disc = me.RigidBody("D", Dmc, R, m, (me.inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2), Dmc))
    kd = [me.dot(R.ang_vel_in(N) - w_qd, uv) for uv in L]
    km = sb.KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd)
    km.kanes_equations([disc], [(Dmc, -m * g * Y.z)])
    assert km.mass_matrix == sm.diag(5 * m * r**2 / 4, 3 * m * r**2 / 2, m * r**2 / 4)
    # SymPy's own test inverts it; on the compact form that is immediate
    assert km.mass_matrix.inv() == sm.diag(4 / (5 * m * r**2), 2 / (3 * m * r**2), 4 / (m * r**2))


def test_sympy_forms_are_built_only_when_asked_for(monkeypatch):
    """formation -> to_eom() -> compile -> rhs never builds Fr, Fr*, mass_matrix, forcing."""
    system = _system("four_bar")

    def refuse(self):
        raise AssertionError("the SymPy forms were built on the path to compile")

    monkeypatch.setattr(KanesMethod, "_assemble_sympy_forms", refuse)
    km = system.method()
    result = km.kanes_equations(system.bodies, system.loads)
    eom = km.to_eom()
    model = sb.compile(eom)
    mdl = sb.models.four_bar()
    x0 = np.array([mdl.initial_state[s] for s in model.states])
    xdot = model.rhs(0.0, x0, model.constants_array(mdl.constants))
    assert np.all(np.isfinite(xdot))
    monkeypatch.undo()
    # asked for: built once, and the (Fr, Fr*) pair unpacks as SymPy's tuple does
    fr, frstar = result
    assert fr.shape == frstar.shape == (1, 1)
    assert km.mass_matrix.shape == (3, 3) and km.forcing.shape == (3, 1)
    assert tuple(result) == (fr, frstar)
