"""The sign (and value) of the constraint multipliers λ wherever a user reads them.

Convention (DESIGN.md section 3, numeric_model's docstring): ``M_d u' + g_d = B^T λ``, B^T λ
the generalized constraint forces.  Oracles, all independent of symbody's compile layer:

* SymPy's ``LagrangesMethod``: λ solved numerically from its ``mass_matrix_full`` and
  ``forcing_full`` (the sign of its ``rhs()``), holonomic and nonholonomic;
* SymPy's ``KanesMethod`` with an auxiliary speed: the noncontributing force it exposes
  along the constraint direction (its ``auxiliary_eqs`` solved numerically);
* Newton's second law by hand for the Cartesian pendulum (the rod tension).

A flipped sign of λ in the compiled model, in ``Trajectory.multipliers`` or in
``linearize(..., return_point=True)`` fails here ("multiplier sign").
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb

t = me.dynamicsymbols._t
SEED = 16          # fixed: the same states on every run

#: both sides solve the same small linear systems in double precision from differently
#: arranged expressions (lambdify of SymPy's matrices vs symbody's kernels): agreement to
#: ~1e-13 relative is round-off; 1e-9 leaves margin for the condition number (< 1e3 here)
RTOL = 1e-9


def _lambdify(exprs, syms):
    """Numeric function of plain symbols standing for the functions of time in ``syms``."""
    plain = [sm.Symbol(f"_s{i}") for i in range(len(syms))]
    rep = dict(zip(syms, plain))
    # derivatives first (q' before q) so that Derivative(q, t) is not half-replaced
    ordered = sorted(rep.items(), key=lambda kv: -int(isinstance(kv[0], sm.Derivative)))
    mats = [sm.Matrix(e) for e in exprs] if isinstance(exprs, list) else [sm.Matrix(exprs)]
    for k, v in ordered:
        mats = [M.xreplace({k: v}) for M in mats]
    return sm.lambdify(plain, mats if isinstance(exprs, list) else mats[0], modules="numpy", cse=True)


# --------------------------------------------------------------------------- Lagrange, holonomic
def _cartesian_pendulum_lagrange(mod):
    x, y = me.dynamicsymbols("x y")
    xd, yd = me.dynamicsymbols("x y", 1)
    m, g, l = sm.symbols("m g l")
    L = m * (xd**2 + yd**2) / 2 - m * g * y
    lm = mod.LagrangesMethod(L, [x, y], hol_coneqs=[x**2 + y**2 - l**2])
    lm.form_lagranges_equations()
    return lm, (x, y, xd, yd), (m, g, l)


def _sympy_lambda(lm, syms, consts, values, cvals):
    """λ from SymPy's mass_matrix_full [q', q'', λ] = forcing_full (the sign of its rhs())."""
    f = _lambdify([lm.mass_matrix_full, lm.forcing_full], list(syms) + list(consts))
    Mf, Ff = f(*values, *cvals)
    sol = np.linalg.solve(np.asarray(Mf, float), np.asarray(Ff, float).ravel())
    return sol[2 * len(lm.q):]


def test_issue_example_compiled_lambda_equals_sympy_rhs_lambda():
    """The issue's pendulum: x = 0.6, y = -0.8, l = 1, swinging at 0.3 rad/s."""
    lm_sp, syms, consts = _cartesian_pendulum_lagrange(me)
    lm, _, _ = _cartesian_pendulum_lagrange(sb)
    vals = (0.6, -0.8, 0.3 * 0.8, 0.3 * 0.6)
    cvals = (1.0, 9.81, 1.0)
    lam_sympy = _sympy_lambda(lm_sp, syms, consts, vals, cvals)
    # by hand: the rod pulls P toward O with tension T = m (g cos θ + l θ'^2) and the
    # constraint force is C^T λ = λ (2x, 2y), so λ = -T / (2 l) = -(9.81*0.8 + 0.09)/2
    assert lam_sympy[0] == pytest.approx(-(9.81 * 0.8 + 0.09) / 2, rel=1e-12)
    # symbody's symbolic rhs() has SymPy's sign
    rhs = lm.rhs().xreplace(dict(zip(syms, vals)) | dict(zip(consts, cvals)))
    assert float(rhs[-1]) == pytest.approx(lam_sympy[0], rel=1e-12)
    model = sb.compile(lm.to_eom(q_dep=[syms[1]]))
    P = dict(zip(map(str, consts), cvals))
    udot, lam = model.accelerations([0.6, -0.8], [0.24, 0.18], P)
    assert lam[0] == pytest.approx(lam_sympy[0], rel=RTOL), "multiplier sign: compiled λ != SymPy's"
    assert lam[0] < 0, "multiplier sign: the rod pulls P toward the pivot, so λ < 0"


def test_holonomic_lambda_matches_sympy_at_random_states_and_along_a_trajectory():
    lm_sp, syms, consts = _cartesian_pendulum_lagrange(me)
    lm, _, _ = _cartesian_pendulum_lagrange(sb)
    x, y = syms[:2]
    model = sb.compile(lm.to_eom(q_dep=[y]))
    rng = np.random.default_rng(SEED)
    cvals = (1.3, 9.81, 0.7)
    P = dict(zip(map(str, consts), cvals))
    for _ in range(5):
        th = rng.uniform(-1.2, 1.2)
        w = rng.uniform(-2.0, 2.0)
        l = cvals[2]
        q = np.array([l * np.sin(th), -l * np.cos(th)])
        u = np.array([l * np.cos(th) * w, l * np.sin(th) * w])
        lam_sympy = _sympy_lambda(lm_sp, syms, consts, (*q, *u), cvals)
        udot, lam = model.accelerations(q, u, P)
        np.testing.assert_allclose(lam, lam_sympy, rtol=RTOL, err_msg="multiplier sign / value")
    # Trajectory.multipliers: evaluated at the trajectory's own samples
    tr = sb.simulate(model, (0.0, 1.0), {x: 0.3, y: -0.6, "u_x": 0.5}, P, t_eval=[0.0, 0.5, 1.0])
    assert tr.success and tr.multipliers is not None
    for k in range(len(tr.t)):
        lam_sympy = _sympy_lambda(lm_sp, syms, consts, (*tr.q[k], *tr.u[k]), cvals)
        np.testing.assert_allclose(tr.multipliers[k], lam_sympy, rtol=RTOL,
                                   err_msg="multiplier sign: Trajectory.multipliers != SymPy's λ")
    # linearize(..., return_point=True) reports the same λ
    _, _, point = sb.linearize(model, {x: 0.2, y: -0.6, "u_x": 0.4}, P, return_point=True)
    lam_sympy = _sympy_lambda(lm_sp, syms, consts, (*point["q"], *point["u"]), cvals)
    np.testing.assert_allclose(point["multipliers"], lam_sympy, rtol=RTOL,
                               err_msg="multiplier sign: linearize's operating-point λ")


# --------------------------------------------------------------------------- Lagrange, nonholonomic
def _sleigh_lagrange(mod):
    """Chaplygin sleigh: body of mass m, inertia I about its mass centre (x, y), heading th;
    the knife edge at distance a behind the mass centre cannot slip sideways:
    -sin(th) x' + cos(th) y' - a th' = 0.  A torque T(t) turns it."""
    x, y, th = me.dynamicsymbols("x y th")
    xd, yd, thd = me.dynamicsymbols("x y th", 1)
    m, I, a = sm.symbols("m I a")
    T = me.dynamicsymbols("T")
    L = m * (xd**2 + yd**2) / 2 + I * thd**2 / 2
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    forces = [(A, T * N.z)]
    lm = mod.LagrangesMethod(L, [x, y, th], forcelist=forces, frame=N,
                             nonhol_coneqs=[-sm.sin(th) * xd + sm.cos(th) * yd - a * thd])
    lm.form_lagranges_equations()
    return lm, (x, y, th, xd, yd, thd), (m, I, a), T


def test_nonholonomic_lambda_matches_sympy():
    lm_sp, syms, consts, T = _sleigh_lagrange(me)
    lm, _, _, _ = _sleigh_lagrange(sb)
    x, y, th = syms[:3]
    eom = lm.to_eom(u_dep=[syms[4]])          # y' dependent
    model = sb.compile(eom)
    cvals = (2.0, 0.4, 0.3)
    P = dict(zip(map(str, consts), cvals))
    rng = np.random.default_rng(SEED + 1)
    f = _lambdify([lm_sp.mass_matrix_full, lm_sp.forcing_full], list(syms) + list(consts) + [T])
    for _ in range(4):
        q = rng.uniform(-1.0, 1.0, 3)
        xd, thd = rng.uniform(-1.5, 1.5, 2)
        # y' from the constraint (cos th != 0 for |th| < 1)
        yd = (np.sin(q[2]) * xd + cvals[2] * thd) / np.cos(q[2])
        torque = rng.uniform(-1.0, 1.0)
        Mf, Ff = f(*q, xd, yd, thd, *cvals, torque)
        lam_sympy = np.linalg.solve(np.asarray(Mf, float), np.asarray(Ff, float).ravel())[6:]
        u_ind = np.array([xd, thd])                       # speeds of x and th
        udot, lam = model.accelerations(q, u_ind, P, r=[torque])
        np.testing.assert_allclose(lam, lam_sympy, rtol=RTOL, err_msg="multiplier sign (nonholonomic)")
        # the physical reading: the lateral ground force on the knife edge is F = λ (its
        # generalized force C^T λ on y is λ cos th), and it must supply m y'' exactly
        assert udot[model.speeds.index(eom.u[-1])] * cvals[0] == pytest.approx(
            lam[0] * np.cos(q[2]), rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------- Kane, auxiliary speed
def _cartesian_pendulum_kane(mod):
    """Particle P at (x, y), speeds u1 = x', u2 = y'; the rod's constraint x u1 + y u2 = 0
    (u2 dependent) and an auxiliary speed u3 along (x, y), which exposes the rod force
    F (x N.x + y N.y): its generalized force on u1, u2 is F (x, y) = B^T F."""
    x, y, u1, u2, u3 = me.dynamicsymbols("x y u1 u2 u3")
    F = me.dynamicsymbols("F")
    m, g, l = sm.symbols("m g l")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, u1 * N.x + u2 * N.y + u3 * (x * N.x + y * N.y))
    pa = me.Particle("pa", P, m)
    loads = [(P, -m * g * N.y + F * (x * N.x + y * N.y))]
    km = mod.KanesMethod(N, [x], [u1], kd_eqs=[x.diff(t) - u1, y.diff(t) - u2], q_dependent=[y],
                         configuration_constraints=[x**2 + y**2 - l**2], u_dependent=[u2],
                         velocity_constraints=[x * u1 + y * u2], u_auxiliary=[u3])
    km.kanes_equations([pa], loads)
    return km, (x, y, u1, u2), F, (m, g, l)


def test_kane_lambda_equals_the_force_exposed_by_an_auxiliary_speed():
    km_sp, syms, F, consts = _cartesian_pendulum_kane(me)
    km, _, _, _ = _cartesian_pendulum_kane(sb)
    x, y, u1, u2 = syms
    model = sb.compile(km.to_eom(noncontributing=[F]))
    cvals = (0.8, 9.81, 1.1)
    P = dict(zip(map(str, consts), cvals))
    ud1, ud2 = u1.diff(t), u2.diff(t)
    # SymPy: all u' from mass_matrix_full / forcing_full (F does no work there), then F from
    # the auxiliary equation
    f_dyn = _lambdify([km_sp.mass_matrix_full, km_sp.forcing_full], [x, y, u1, u2, F, *consts])
    f_aux = _lambdify(km_sp.auxiliary_eqs, [ud1, ud2, x, y, u1, u2, F, *consts])
    rng = np.random.default_rng(SEED + 2)
    for _ in range(4):
        th, w = rng.uniform(-1.2, 1.2), rng.uniform(-2.0, 2.0)
        l = cvals[2]
        q = np.array([l * np.sin(th), -l * np.cos(th)])
        u = np.array([l * np.cos(th) * w, l * np.sin(th) * w])
        Mf, Ff = f_dyn(*q, *u, 0.0, *cvals)
        udot_sp = np.linalg.solve(np.asarray(Mf, float), np.asarray(Ff, float).ravel())[2:]
        a0 = float(np.asarray(f_aux(*udot_sp, *q, *u, 0.0, *cvals), float).ravel()[0])
        a1 = float(np.asarray(f_aux(*udot_sp, *q, *u, 1.0, *cvals), float).ravel()[0])
        F_sympy = -a0 / (a1 - a0)                 # the auxiliary equation is linear in F
        # by hand: the rod force F (x, y) has magnitude |F| l = tension m (g cos θ + l w^2), inward
        assert F_sympy == pytest.approx(-cvals[0] * (cvals[1] * np.cos(th) + l * w**2) / l, rel=1e-9)
        udot, lam = model.accelerations(q, u, P)
        np.testing.assert_allclose(udot, udot_sp, rtol=RTOL, atol=1e-12)
        assert lam[0] == pytest.approx(F_sympy, rel=RTOL), \
            "multiplier sign: Kane's λ != the auxiliary-speed force SymPy exposes"
        # and symbody's own auxiliary-force solve agrees with its λ
        assert model.auxiliary_forces(q, u, udot, P)[0] == pytest.approx(lam[0], rel=RTOL)
