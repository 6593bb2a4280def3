"""symbody.LagrangesMethod against seed 004 and sympy.physics.mechanics.LagrangesMethod.

Seed 004 (SymPy's "Lagrange's method in physics/mechanics" documentation) prints
the results of three examples; they are reproduced exactly.  For the other
systems every result (mass_matrix_full, forcing_full, multipliers, rhs) is
compared with sympy 1.14's LagrangesMethod, symbolically where that is cheap and
otherwise numerically at random states to 1e-10 relative.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sm
from sympy.physics import mechanics as me
from sympy.physics.vector import vsprint

from symbody.errors import FormulationError, NonlinearityError, SingularConstraintError
from symbody.formulation.lagrange import LagrangesMethod
from systems.benchmark_systems import rod_chain_lagrangian

t = me.dynamicsymbols._t


# --------------------------------------------------------------------------- helpers
def _squash(text: str) -> str:
    """Collapse runs of blanks (the seed's printed matrices lost their column alignment)."""
    text = re.sub(r" +", " ", text)
    return re.sub(r"\[ ", "[", text).strip()


def _time_atoms(exprs) -> set:
    out = set()
    for e in exprs:
        out |= me.find_dynamicsymbols(e)
    return out


def random_values(exprs, rng, fixed: dict | None = None) -> dict:
    """Random values in [0.3, 1.3] for every symbol and time function in ``exprs``."""
    vals = dict(fixed or {})
    atoms = _time_atoms(exprs)
    syms = set()
    for e in exprs:
        syms |= e.free_symbols
    syms.discard(t)
    for a in sorted(atoms | syms, key=str):
        if a not in vals:
            vals[a] = float(rng.uniform(0.3, 1.3))
    vals.setdefault(t, float(rng.uniform(0.3, 1.3)))
    return vals


def evaluate(M, vals: dict) -> np.ndarray:
    """Evaluate a sympy Matrix (or expression) numerically; derivatives replaced first."""
    M = sm.Matrix(M) if not isinstance(M, sm.MatrixBase) else M
    by_order = sorted((k for k in vals if isinstance(k, sm.Derivative)),
                      key=lambda d: -d.derivative_count)
    for d in by_order:
        M = M.xreplace({d: vals[d]})
    M = M.xreplace({k: v for k, v in vals.items() if not isinstance(k, sm.Derivative)})
    return np.array(M.evalf(), dtype=float)


def assert_close(a, b, rtol=1e-10):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    assert a.shape == b.shape
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    assert err <= rtol * scale, f"max difference {err:.3e} (scale {scale:.3e})"


def both(L, qs, **kw):
    """(symbody, sympy) LagrangesMethod objects with equations formed."""
    ours = LagrangesMethod(L, qs, **kw)
    ours.form_lagranges_equations()
    ref = me.LagrangesMethod(L, qs, **kw)
    ref.form_lagranges_equations()
    return ours, ref


def compare_numerically(ours, ref, rng, n_states=3, fixed=None):
    """mass_matrix_full, forcing_full, their solution and the eom agree at random states."""
    exprs = list(ref.mass_matrix_full) + list(ref.forcing_full) + list(ref.eom)
    for _ in range(n_states):
        vals = random_values(exprs + list(ours.eom), rng, fixed)
        Mo, Fo = evaluate(ours.mass_matrix_full, vals), evaluate(ours.forcing_full, vals)
        Mr, Fr = evaluate(ref.mass_matrix_full, vals), evaluate(ref.forcing_full, vals)
        assert_close(Mo, Mr)
        assert_close(Fo, Fr)
        assert_close(np.linalg.solve(Mo, Fo), np.linalg.solve(Mr, Fr))
        assert_close(evaluate(ours.eom, vals), evaluate(ref.eom, vals))


def symbolic_zero(A, B) -> bool:
    D = (sm.Matrix(A) - sm.Matrix(B)).applyfunc(lambda e: sm.simplify(sm.expand(e)))
    return D == sm.zeros(*D.shape)


def kkt_solution(eom, vals: dict, u_of_q: dict):
    """Solve [[M_d, B^T], [B, 0]] [u'; lam] = [-g_d; -b_a] of an EquationsOfMotion."""
    v = dict(vals)
    for qi, ui in u_of_q.items():
        v[ui] = vals[qi.diff(t)]
    M = evaluate(eom.dynamic_mass, v)
    g = evaluate(eom.dynamic_rest, v).ravel()
    o = M.shape[0]
    if eom.m:
        B = evaluate(eom.acceleration_matrix, v)
        b_a = evaluate(eom.acceleration_rest, v).ravel()
        K = np.block([[M, B.T], [B, np.zeros((eom.m, eom.m))]])
        sol = np.linalg.solve(K, -np.concatenate([g, b_a]))
        return sol[:o], sol[o:]
    return np.linalg.solve(M, -g), np.zeros(0)


# --------------------------------------------------------------------------- seed 004
q1, q2 = me.dynamicsymbols("q1 q2")
q1d, q2d = me.dynamicsymbols("q1 q2", 1)
q1dd, q2dd = me.dynamicsymbols("q1 q2", 2)


def test_seed004_unconstrained():
    L = q1d**2 + q2d**2
    LM = LagrangesMethod(L, [q1, q2])
    eom = LM.form_lagranges_equations()
    assert eom == sm.Matrix([2 * q1dd, 2 * q2dd])
    assert _squash(vsprint(eom)) == _squash("Matrix([\n[2*q1''],\n[2*q2'']])")
    assert LM.mass_matrix == sm.Matrix([[2, 0], [0, 2]])
    assert _squash(vsprint(LM.mass_matrix)) == _squash("Matrix([\n[2, 0],\n[0, 2]])")
    assert LM.forcing == sm.Matrix([0, 0])
    assert _squash(vsprint(LM.forcing)) == _squash("Matrix([\n[0],\n[0]])")


def test_seed004_coneqs_keyword_and_multipliers():
    L = q1d**2 + q2d**2
    LM = LagrangesMethod(L, [q1, q2], coneqs=[q1d - q2d])      # the seed's (old) keyword
    eom = LM.form_lagranges_equations()
    lam1 = me.dynamicsymbols("lam1")
    assert LM.lam_vec == sm.Matrix([lam1])
    assert eom == sm.Matrix([lam1 + 2 * q1dd, -lam1 + 2 * q2dd])
    assert _squash(vsprint(eom)) == _squash("Matrix([\n[ lam1 + 2*q1''],\n[-lam1 + 2*q2'']])")
    expected_M = sm.Matrix([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 2, 0, -1],
                            [0, 0, 0, 2, 1], [0, 0, 1, -1, 0]])
    assert LM.mass_matrix_full == expected_M
    assert _squash(vsprint(LM.mass_matrix_full)) == _squash(
        "Matrix([\n[1, 0, 0, 0, 0],\n[0, 1, 0, 0, 0],\n[0, 0, 2, 0, -1],\n[0, 0, 0, 2, 1],"
        "\n[0, 0, 1, -1, 0]])")
    assert LM.forcing_full == sm.Matrix([q1d, q2d, 0, 0, 0])
    assert _squash(vsprint(LM.forcing_full)) == _squash(
        "Matrix([\n[q1'],\n[q2'],\n[ 0],\n[ 0],\n[ 0]])")
    # identical to sympy 1.14 given the current keyword
    ref = me.LagrangesMethod(L, [q1, q2], nonhol_coneqs=[q1d - q2d])
    ref.form_lagranges_equations()
    assert LM.eom == ref.eom
    assert LM.mass_matrix_full == ref.mass_matrix_full
    assert LM.forcing_full == ref.forcing_full
    assert LM.lam_coeffs == ref.lam_coeffs
    assert LM.solve_multipliers() == ref.solve_multipliers()
    assert LM.rhs() == ref.rhs()


def test_seed004_forcelist():
    L = q1d**2 + q2d**2
    N = me.ReferenceFrame("N")
    P = me.Point("P")
    P.set_vel(N, q1d * N.x)
    FL = [(P, 7 * N.x)]
    LM = LagrangesMethod(L, [q1, q2], forcelist=FL, frame=N)
    eom = LM.form_lagranges_equations()
    assert eom == sm.Matrix([2 * q1dd - 7, 2 * q2dd])
    assert _squash(vsprint(eom)) == _squash("Matrix([\n[2*q1'' - 7],\n[ 2*q2'']])")
    assert LM.forcelist is FL and LM.loads is FL
    ref = me.LagrangesMethod(L, [q1, q2], forcelist=FL, frame=N)
    assert ref.form_lagranges_equations() == eom


def test_sympy_docstring_spring_mass_damper():
    q = me.dynamicsymbols("q")
    qd = me.dynamicsymbols("q", 1)
    m, k, b = sm.symbols("m k b")
    N = me.ReferenceFrame("N")
    P = me.Point("P")
    P.set_vel(N, qd * N.x)
    Pa = me.Particle("Pa", P, m)
    Pa.potential_energy = k * q**2 / 2.0
    L = me.Lagrangian(N, Pa)
    fl = [(P, -b * qd * N.x)]
    lm = LagrangesMethod(L, [q], forcelist=fl, frame=N)
    assert str(lm.form_lagranges_equations()) == \
        "Matrix([[b*Derivative(q(t), t) + 1.0*k*q(t) + m*Derivative(q(t), (t, 2))]])"
    assert str(lm.rhs()) == "Matrix([[Derivative(q(t), t)], [(-b*Derivative(q(t), t) - 1.0*k*q(t))/m]])"


# --------------------------------------------------------------------------- systems
def double_pendulum():
    """The double pendulum of sympy's test_dub_pen, with a damping torque on A."""
    l, m, g, c = sm.symbols("l m g c")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.z])
    B = N.orientnew("B", "Axis", [q2, N.z])
    A.set_ang_vel(N, q1d * A.z)
    B.set_ang_vel(N, q2d * A.z)
    O = me.Point("O")
    P = O.locatenew("P", l * A.x)
    R = P.locatenew("R", l * B.x)
    O.set_vel(N, 0)
    P.v2pt_theory(O, N, A)
    R.v2pt_theory(P, N, B)
    ParP, ParR = me.Particle("ParP", P, m), me.Particle("ParR", R, m)
    ParP.potential_energy = -m * g * l * sm.cos(q1)
    ParR.potential_energy = -m * g * l * sm.cos(q1) - m * g * l * sm.cos(q2)
    L = me.Lagrangian(N, ParP, ParR)
    return L, [q1, q2], dict(bodies=[ParP, ParR], forcelist=[(A, -c * q1d * N.z)], frame=N)


def cartesian_pendulum():
    """A particle at (x, y) on a rod of length l: hol_coneqs x^2 + y^2 - l^2 = 0, gravity along N.x."""
    x, y = me.dynamicsymbols("x y")
    l, m, g = sm.symbols("l m g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, P.pos_from(O).dt(N))
    pP = me.Particle("pP", P, m)
    L = me.Lagrangian(N, pP)
    return L, [x, y], dict(hol_coneqs=[x**2 + y**2 - l**2], forcelist=[(P, m * g * N.x)], frame=N)


def knife_edge():
    """Chaplygin sleigh: mass centre a ahead of a knife edge that cannot slide sideways."""
    x, y, th = me.dynamicsymbols("x y theta")
    xd, yd, thd = (s.diff(t) for s in (x, y, th))
    m, Izz, a, F = sm.symbols("m I_zz a F")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", [th, N.z])
    B.set_ang_vel(N, thd * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", x * N.x + y * N.y)           # contact point
    C.set_vel(N, xd * N.x + yd * N.y)
    G = C.locatenew("G", a * B.x)
    G.v2pt_theory(C, N, B)
    body = me.RigidBody("body", G, B, m, (me.inertia(B, 0, 0, Izz), G))
    L = me.Lagrangian(N, body)
    nonhol = [-sm.sin(th) * xd + sm.cos(th) * yd]    # no sideways velocity of C
    return L, [x, y, th], dict(nonhol_coneqs=nonhol, forcelist=[(G, F * B.x)], frame=N)


def rolling_disc():
    """Upright rolling disc: contact point (x, y), yaw, lean, spin; two nonholonomic constraints."""
    x, y, qa, qb, qc = me.dynamicsymbols("x y q_yaw q_lean q_spin")
    r, m, g = sm.symbols("r m g")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [qa, N.z])
    Lf = Y.orientnew("L", "Axis", [qb, Y.x])
    R = Lf.orientnew("R", "Axis", [qc, Lf.y])
    O = me.Point("O")
    O.set_vel(N, 0)
    Dmc = O.locatenew("Dmc", x * N.x + y * N.y + r * Lf.z)
    Dmc.set_vel(N, Dmc.pos_from(O).dt(N))
    I = me.inertia(Lf, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    disc = me.RigidBody("disc", Dmc, R, m, (I, Dmc))
    disc.potential_energy = m * g * r * sm.cos(qb)
    L = me.Lagrangian(N, disc)
    v_contact = Dmc.vel(N) + R.ang_vel_in(N).cross(-r * Lf.z)
    nonhol = [v_contact.dot(N.x), v_contact.dot(N.y)]
    return L, [x, y, qa, qb, qc], dict(nonhol_coneqs=nonhol)


def sleigh_with_lift():
    """The knife edge plus a height z tied to it holonomically (z = a sin(theta) x): both kinds."""
    L0, qs, kw = knife_edge()
    z = me.dynamicsymbols("z")
    m2, g = sm.symbols("m2 g")
    x, th = qs[0], qs[2]
    a = sm.Symbol("a")
    L = L0 + m2 * z.diff(t) ** 2 / 2 - m2 * g * z
    kw = dict(kw, hol_coneqs=[z - a * sm.sin(th) * x])
    return L, qs + [z], kw


def driven_pendulum():
    """A pendulum whose pivot moves by a specified s(t), with a stiffness varying explicitly in t."""
    th = me.dynamicsymbols("theta")
    s = me.dynamicsymbols("s")
    m, l, g, k, w = sm.symbols("m l g k omega")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, th.diff(t) * N.z)
    O = me.Point("O")
    O.set_vel(N, s.diff(t) * N.y)
    P = O.locatenew("P", l * A.x)
    P.v2pt_theory(O, N, A)
    pa = me.Particle("pa", P, m)
    pa.potential_energy = -m * g * l * sm.cos(th) + k * (1 + sm.sin(w * t)) * th**2 / 2
    L = me.Lagrangian(N, pa)
    return L, [th], dict(forcelist=[(P, -s * N.x)], frame=N)


# --------------------------------------------------------------------------- comparisons
def test_double_pendulum_matches_sympy():
    L, qs, kw = double_pendulum()
    ours, ref = both(L, qs, **kw)
    assert symbolic_zero(ours.mass_matrix_full, ref.mass_matrix_full)
    assert symbolic_zero(ours.forcing_full, ref.forcing_full)
    assert symbolic_zero(ours.eom, ref.eom)
    assert ours.bodies == kw["bodies"]
    compare_numerically(ours, ref, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    vals = random_values(list(ref.forcing_full), rng)
    assert_close(evaluate(ours.rhs(), vals), evaluate(ref.rhs(), vals))
    assert_close(evaluate(ours.rhs("LU"), vals), evaluate(ref.rhs(), vals))


def test_nonminimal_pendulum_exact_as_sympy_test():
    """sympy's test_nonminimal_pendulum: the eom is structurally identical."""
    lam1 = me.dynamicsymbols("lam1")
    Lsym, m = sm.symbols("L m")
    N = me.ReferenceFrame("N")
    pN = me.Point("N*")
    pN.set_vel(N, 0)
    P = pN.locatenew("P1", q1 * N.x + q2 * N.y)
    P.set_vel(N, P.pos_from(pN).dt(N))
    Lag = me.Lagrangian(N, me.Particle("pP", P, m))
    LM = LagrangesMethod(Lag, [q1, q2], hol_coneqs=sm.Matrix([q1**2 + q2**2 - Lsym**2]),
                         forcelist=[(P, m * 9.8 * N.x)], frame=N)
    LM.form_lagranges_equations()
    assert LM.eom == sm.Matrix([[m * q1dd - 9.8 * m + 2 * lam1 * q1], [m * q2dd + 2 * lam1 * q2]])
    lam_sol = sm.Matrix([(19.6 * q1 + 2 * q1d**2 + 2 * q2d**2) / (4 * q1**2 / m + 4 * q2**2 / m)])
    assert sm.simplify(LM.solve_multipliers(sol_type="Matrix") - lam_sol) == sm.zeros(1, 1)


def test_cartesian_pendulum_holonomic():
    L, qs, kw = cartesian_pendulum()
    ours, ref = both(L, qs, **kw)
    assert ours.coneqs == ref.coneqs
    assert ours.lam_vec == ref.lam_vec
    assert ours.lam_coeffs == ref.lam_coeffs
    assert symbolic_zero(ours.mass_matrix_full, ref.mass_matrix_full)
    assert symbolic_zero(ours.forcing_full, ref.forcing_full)
    assert symbolic_zero(ours.eom, ref.eom)
    assert symbolic_zero(ours.rhs(), ref.rhs())
    sol_o, sol_r = ours.solve_multipliers(), ref.solve_multipliers()
    assert set(sol_o) == set(sol_r)
    assert all(sm.simplify(sol_o[k] - sol_r[k]) == 0 for k in sol_r)
    op = {qs[0]: 0.3, qs[1]: -0.4, qs[0].diff(t): 0.8, qs[1].diff(t): 0.6}
    assert_close(evaluate(ours.solve_multipliers(op, "Matrix"), {sm.Symbol("m"): 2, sm.Symbol("g"): 9.81}),
                 evaluate(ref.solve_multipliers(op, "Matrix"), {sm.Symbol("m"): 2, sm.Symbol("g"): 9.81}))
    compare_numerically(ours, ref, np.random.default_rng(3))


def test_knife_edge_nonholonomic():
    L, qs, kw = knife_edge()
    ours, ref = both(L, qs, **kw)
    assert ours.lam_coeffs == ref.lam_coeffs
    assert symbolic_zero(ours.mass_matrix_full, ref.mass_matrix_full)
    assert symbolic_zero(ours.forcing_full, ref.forcing_full)
    compare_numerically(ours, ref, np.random.default_rng(4))
    rng = np.random.default_rng(5)
    so, sr = ours.solve_multipliers(sol_type="Matrix"), ref.solve_multipliers(sol_type="Matrix")
    vals = random_values(list(sr), rng)
    assert_close(evaluate(so, vals), evaluate(sr, vals))


def test_rolling_disc_nonholonomic():
    L, qs, kw = rolling_disc()
    ours, ref = both(L, qs, **kw)
    assert ours.mass_matrix_full.shape == (12, 12)
    compare_numerically(ours, ref, np.random.default_rng(6))
    # the multipliers (contact forces) agree with sympy's, and with minus the lam of mass_matrix_full
    rng = np.random.default_rng(7)
    vals = random_values(list(ref.forcing_full) + list(ref.mass_matrix_full), rng)
    lam_o = evaluate(ours.solve_multipliers(sol_type="Matrix"), vals).ravel()
    lam_r = evaluate(ref.solve_multipliers(sol_type="Matrix"), vals).ravel()
    assert_close(lam_o, lam_r)
    full = np.linalg.solve(evaluate(ours.mass_matrix_full, vals), evaluate(ours.forcing_full, vals).ravel())
    assert_close(-full[-2:], lam_o)


def test_holonomic_and_nonholonomic_together():
    L, qs, kw = sleigh_with_lift()
    ours, ref = both(L, qs, **kw)
    assert ours.coneqs.shape == (2, 1)
    assert symbolic_zero(ours.coneqs, ref.coneqs)
    compare_numerically(ours, ref, np.random.default_rng(8))


def test_specified_input_and_explicit_time():
    L, qs, kw = driven_pendulum()
    ours, ref = both(L, qs, **kw)
    assert symbolic_zero(ours.mass_matrix_full, ref.mass_matrix_full)
    assert symbolic_zero(ours.forcing_full, ref.forcing_full)
    s = me.dynamicsymbols("s")
    assert ours.forcing[0].has(s.diff(t, 2))
    compare_numerically(ours, ref, np.random.default_rng(9))


def test_three_link_chain_matches_sympy():
    L, qs, kw = rod_chain_lagrangian(3)
    ours, ref = both(L, qs, **kw)
    compare_numerically(ours, ref, np.random.default_rng(10), n_states=2)
    assert ours.mass_matrix == ours.mass_matrix.T


def test_u_q_and_time_derivative_constraints():
    L, qs, kw = cartesian_pendulum()
    lm = LagrangesMethod(L, qs, **kw)
    assert lm.q == sm.Matrix(qs)
    assert lm.u == sm.Matrix([s.diff(t) for s in qs])
    x, y = qs
    assert lm.coneqs == sm.Matrix([2 * x * x.diff(t) + 2 * y * y.diff(t)])
    with pytest.raises(ValueError, match="equations of motion first"):
        _ = lm.mass_matrix_full


# --------------------------------------------------------------------------- to_eom
def _consistent_state(lm_ref, qs, rng, u_dep_idx, fix_q=None):
    """Random q (made consistent by ``fix_q(vals)``) and q' satisfying the velocity constraints."""
    vals = random_values(list(lm_ref.mass_matrix_full) + list(lm_ref.forcing_full), rng)
    if fix_q:
        fix_q(vals)
    if lm_ref.coneqs:
        C = -evaluate(lm_ref.lam_coeffs, vals)
        rest = evaluate(lm_ref.coneqs.xreplace({s.diff(t): 0 for s in qs}), vals).ravel()
        ind = [i for i in range(len(qs)) if i not in u_dep_idx]
        qd_ind = np.array([vals[qs[i].diff(t)] for i in ind])
        qd_dep = np.linalg.solve(C[:, u_dep_idx], -(rest + C[:, ind] @ qd_ind))
        for i, v in zip(u_dep_idx, qd_dep, strict=True):
            vals[qs[i].diff(t)] = float(v)
        assert np.allclose(C @ np.array([vals[s.diff(t)] for s in qs]) + rest, 0)
    return vals


@pytest.mark.parametrize("system", [double_pendulum, cartesian_pendulum, knife_edge, rolling_disc,
                                    sleigh_with_lift, driven_pendulum])
def test_to_eom_kkt_matches_sympy(system):
    L, qs, kw = system()
    ours, ref = both(L, qs, **kw)
    eom = ours.to_eom()
    u_of_q = dict(zip(qs, ours.speed_symbols(), strict=True))
    assert eom.q == tuple(eom.q_ind) + tuple(eom.q_dep)
    assert set(eom.q) == set(qs)
    assert eom.M == ours._hol_coneqs.rows and eom.m == len(ours.lam_vec)
    assert not eom.dynamic_reduced
    # kinematic block q' = u
    assert eom.kindiffdict == {qi.diff(t): u_of_q[qi] for qi in qs}
    # M_d is the Hessian of L, symmetric
    assert eom.dynamic_mass == eom.dynamic_mass.T
    rng = np.random.default_rng(11)
    u_dep_idx = [qs.index(next(q for q, u in u_of_q.items() if u == ud)) for ud in eom.u_dep]
    fix_q = None
    if system is cartesian_pendulum:
        def fix_q(vals):
            ang, l = 0.7, 1.3
            vals.update({sm.Symbol("l"): l, qs[0]: l * np.cos(ang), qs[1]: l * np.sin(ang)})
    elif system is sleigh_with_lift:
        def fix_q(vals):
            vals[qs[3]] = vals[sm.Symbol("a")] * np.sin(vals[qs[2]]) * vals[qs[0]]
    for _ in range(2):
        vals = _consistent_state(ref, qs, rng, u_dep_idx, fix_q)
        if eom.M:
            assert_close(evaluate(eom.holonomic, vals), np.zeros((eom.M, 1)), 1e-12)
        v = dict(vals)
        for qi, ui in u_of_q.items():
            v[ui] = vals[qi.diff(t)]
        if eom.m:
            B, b = evaluate(eom.velocity_matrix, v), evaluate(eom.velocity_rest, v).ravel()
            u_num = np.array([v[ui] for ui in eom.u])
            assert_close(B @ u_num + b, np.zeros(eom.m), 1e-12)
        udot, lam = kkt_solution(eom, vals, u_of_q)
        full = np.linalg.solve(evaluate(ref.mass_matrix_full, vals),
                               evaluate(ref.forcing_full, vals).ravel())
        n = len(qs)
        qdd_ref = full[n:2 * n]
        qdd_ours = np.empty(n)
        for k, ui in enumerate(eom.u):
            qi = next(q for q, u in u_of_q.items() if u == ui)
            qdd_ours[qs.index(qi)] = udot[k]
        assert_close(qdd_ours, qdd_ref)
        if eom.m:
            # lam of the canonical form = lam of eom / solve_multipliers = -lam of mass_matrix_full
            assert_close(lam, -full[2 * n:])
            assert_close(lam, evaluate(ref.solve_multipliers(sol_type="Matrix"), vals).ravel())


def test_to_eom_default_choice_and_names():
    L = q1d**2 + q2d**2
    lm = LagrangesMethod(L, [q1, q2], nonhol_coneqs=[q1d - q2d])
    eom = lm.to_eom()                                  # forms the equations if needed
    u1, u2 = me.dynamicsymbols("u_q1 u_q2")
    assert eom.u_dep == (u2,)                          # a tie: the later coordinate is dependent
    assert eom.u_ind == (u1,)
    assert eom.velocity_matrix == sm.Matrix([[1, -1]])
    eom2 = lm.to_eom(u_dep=[q1d])                      # q' is accepted for its speed
    assert eom2.u_dep == (u1,) and eom2.u_ind == (u2,)
    assert eom2.velocity_matrix == sm.Matrix([[-1, 1]])
    w1, w2 = me.dynamicsymbols("w1 w2")
    eom3 = lm.to_eom(speeds=[w1, w2])
    assert eom3.u == (w1, w2)


def test_to_eom_holonomic_choice():
    L, qs, kw = cartesian_pendulum()
    lm = LagrangesMethod(L, qs, **kw)
    x, y = qs
    eom = lm.to_eom(q_dep=[x])
    assert eom.q_ind == (y,) and eom.q_dep == (x,)
    assert eom.u_dep == (me.dynamicsymbols("u_x"),)
    auto = lm.to_eom()
    assert len(auto.q_dep) == 1 and auto.u_dep == tuple(me.dynamicsymbols(f"u_{s.name}") for s in auto.q_dep)
    with pytest.raises(FormulationError, match="holonomic"):
        lm.to_eom(q_dep=[])
    with pytest.raises(FormulationError, match="split"):
        lm.to_eom(q_ind=[x], q_dep=[x])


def test_to_eom_singular_dependent_speed():
    L, qs, kw = knife_edge()
    lm = LagrangesMethod(L, qs, **kw)
    with pytest.raises(SingularConstraintError, match="theta"):
        lm.to_eom(u_dep=[qs[2].diff(t)])           # theta' is not in the constraint


def test_to_eom_speed_name_clash():
    u_q1 = me.dynamicsymbols("u_q1")
    L = q1d**2 + q2d**2 + u_q1 * q1
    lm = LagrangesMethod(L, [q1, q2])
    with pytest.raises(FormulationError, match="u_q1"):
        lm.to_eom()


# --------------------------------------------------------------------------- errors
def test_error_hol_coneqs_with_velocity():
    with pytest.raises(FormulationError, match=r"hol_coneqs\[0\].*Derivative\(q2\(t\), t\)"):
        LagrangesMethod(q1d**2 + q2d**2, [q1, q2], hol_coneqs=[q1 - q2d])


def test_error_nonholonomic_nonlinear():
    with pytest.raises(NonlinearityError, match=r"nonhol_coneqs\[0\].*q1"):
        LagrangesMethod(q1d**2 + q2d**2, [q1, q2], nonhol_coneqs=[q1d**2 - q2d])


def test_error_nonholonomic_with_acceleration():
    with pytest.raises(FormulationError, match=r"nonhol_coneqs\[0\]"):
        LagrangesMethod(q1d**2 + q2d**2, [q1, q2], nonhol_coneqs=[q1dd - q2d])


@pytest.mark.parametrize("bad", ["q1**2", [q1d**2], me.ReferenceFrame("N").x, None])
def test_error_lagrangian_not_an_expression(bad):
    with pytest.raises(FormulationError, match="Lagrangian"):
        LagrangesMethod(bad, [q1])


def test_error_lagrangian_with_acceleration():
    with pytest.raises(FormulationError, match="Lagrangian.*q1"):
        LagrangesMethod(q1d**2 + q1dd * q1, [q1])


def test_error_coordinates_not_dynamicsymbols():
    qsym = sm.Symbol("q")
    with pytest.raises(FormulationError, match="qs.*q"):
        LagrangesMethod(q1d**2, [q1, qsym])
    with pytest.raises(FormulationError, match="more than once"):
        LagrangesMethod(q1d**2, [q1, q1])


def test_error_forcelist_needs_frame_and_pairs():
    N = me.ReferenceFrame("N")
    P = me.Point("P")
    P.set_vel(N, q1d * N.x)
    with pytest.raises(FormulationError, match="frame"):
        LagrangesMethod(q1d**2, [q1], forcelist=[(P, N.x)])
    with pytest.raises(FormulationError, match=r"forcelist\[0\]"):
        LagrangesMethod(q1d**2, [q1], forcelist=[(q1, N.x)], frame=N)
    with pytest.raises(FormulationError, match="not both"):
        LagrangesMethod(q1d**2, [q1], coneqs=[q1d], nonhol_coneqs=[q1d])


def test_solve_multipliers_errors():
    lm = LagrangesMethod(q1d**2, [q1])
    lm.form_lagranges_equations()
    with pytest.raises(ValueError, match="no lagrange multipliers"):
        lm.solve_multipliers()


def test_linearize_matches_sympy():
    """Holonomic Cartesian pendulum linearized about the hanging position, as sympy's doc example."""
    L, qs, kw = cartesian_pendulum()
    ours, ref = both(L, qs, **kw)
    x, y = qs
    l = sm.Symbol("l")
    op = [{x: l, y: 0}, {x.diff(t): 0, y.diff(t): 0}, {x.diff(t, 2): 0, y.diff(t, 2): 0}]
    lam_op = ref.solve_multipliers(op)
    op.append(lam_op)
    args = dict(q_ind=[y], qd_ind=[y.diff(t)], q_dep=[x], qd_dep=[x.diff(t)], op_point=op, A_and_B=True)
    A_o, B_o, r_o = ours.linearize(**args)
    A_r, B_r, r_r = ref.linearize(**args)
    assert symbolic_zero(A_o, A_r)
    assert r_o == r_r


def test_kane_and_lagrange_agree_on_the_knife_edge():
    """symbody.KanesMethod and symbody.LagrangesMethod give the same canonical dynamics."""
    import symbody as sb

    L, qs, kw = knife_edge()
    x, y, th = qs
    ux, uy, uth = me.dynamicsymbols("u_x u_y u_theta")
    lm = LagrangesMethod(L, qs, **kw)
    eom_l = lm.to_eom(u_dep=[uy], speeds=[ux, uy, uth])

    m, Izz, a, F = sm.symbols("m I_zz a F")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", [th, N.z])
    B.set_ang_vel(N, uth * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", x * N.x + y * N.y)
    C.set_vel(N, ux * N.x + uy * N.y)
    G = C.locatenew("G", a * B.x)
    G.v2pt_theory(C, N, B)
    body = me.RigidBody("body", G, B, m, (me.inertia(B, 0, 0, Izz), G))
    km = sb.KanesMethod(N, [x, y, th], [ux, uth], kd_eqs=[x.diff(t) - ux, y.diff(t) - uy, th.diff(t) - uth],
                        u_dependent=[uy], velocity_constraints=[-sm.sin(th) * ux + sm.cos(th) * uy])
    km.kanes_equations([body], [(G, F * B.x)])
    eom_k = km.to_eom()
    assert eom_k.u == eom_l.u == (ux, uth, uy)

    rng = np.random.default_rng(12)
    for _ in range(2):
        vals = {s: float(rng.uniform(0.3, 1.3)) for s in (m, Izz, a, F, x, y, th, ux, uth)}
        vals[uy] = vals[ux] * np.tan(vals[th])            # on the constraint
        for qi, ui in zip(qs, (ux, uy, uth), strict=True):
            vals[qi.diff(t)] = vals[ui]
        ud_k, lam_k = kkt_solution(eom_k, vals, {})
        ud_l, lam_l = kkt_solution(eom_l, vals, {})
        assert_close(ud_l, ud_k)
        assert_close(lam_l, lam_k)


def test_to_eom_redundant_constraints():
    q3 = me.dynamicsymbols("q3")
    L = q1d**2 + q2d**2 + q3.diff(t) ** 2
    lm = LagrangesMethod(L, [q1, q2, q3], hol_coneqs=[q1 - q2, 2 * q1 - 2 * q2])
    with pytest.raises(SingularConstraintError, match="redundant"):
        lm.to_eom()


@pytest.mark.parametrize("kind", ["undefined_function", "piecewise", "heaviside"])
def test_expressions_symengine_cannot_differentiate(kind):
    """Undefined functions of q, Piecewise, Heaviside: the result still equals sympy's."""
    k = sm.Symbol("k")
    f = sm.Function("f")
    extra = {"undefined_function": -f(q1) * q2d,
             "piecewise": -sm.Piecewise((q1**2, q1 > 0), (0, True)),
             "heaviside": -k * sm.Heaviside(q1 - k) * q2}[kind]
    L = q1d**2 + sm.exp(q2) * q2d**2 + q1 * q1d * q2d + extra
    ours, ref = both(L, [q1, q2])
    assert symbolic_zero(ours.mass_matrix_full, ref.mass_matrix_full)
    assert symbolic_zero(ours.forcing_full, ref.forcing_full)


def test_symbol_assumptions_survive():
    """Constants with assumptions come back as the user's Symbols (symengine keeps only names)."""
    m, k = sm.symbols("m k", positive=True)
    L = m * q1d**2 / 2 - k * q1**2 / 2
    ours, ref = both(L, [q1])
    assert ours.mass_matrix_full == ref.mass_matrix_full
    assert ours.forcing_full == ref.forcing_full
    assert all(s.is_positive for s in ours.forcing_full.free_symbols - {t})
    # two different Symbols sharing a name: still right (formed with sympy)
    L2 = L + sm.Symbol("k") * q1
    ours, ref = both(L2, [q1])
    assert ours.forcing_full == ref.forcing_full
