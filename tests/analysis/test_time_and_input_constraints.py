"""Constraints that depend on time and on specified inputs, against independent oracles.

Three Kane systems whose constraints carry a nonzero b (or an input inside B):

* ``prescribed speed``: a pendulum (length l) hanging from a cart whose speed is an input,
  u1 - v(t) = 0 (b = -v, the cart force is the multiplier);
* ``moving support``: a particle pendulum in Cartesian coordinates whose pivot moves as
  s(t) = a sin(w t), (x - s)^2 + y^2 - l^2 = 0 (f_h and b depend on t);
* ``steered knife edge``: a planar body on a knife edge steered by an input angle d(t),
  -sin(th + d) x' + cos(th + d) y' = 0 (the input is inside B).

Oracles: SymPy's KanesMethod (``mass_matrix_full`` / ``forcing_full`` lambdified), closed
forms for the dependent speeds, the minimal-coordinate pendulum equation with a moving
support (theta'' = -(g/l) sin theta - (s''/l) cos theta) integrated by scipy, and central
differences of the SymPy oracle for the input matrix B of ``linearize`` (the d(B^T λ)/dr term).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import symbody as sb

t = me.dynamicsymbols._t
SEED = 1616        # fixed: the same random states on every run

#: symbody's kernels and lambdify of SymPy's matrices evaluate the same mathematics in a
#: different order: agreement is at round-off (~1e-14) times the conditioning of the
#: small solves (< 1e2 here); 1e-9 is far below any sign or term error (O(1) changes)
RTOL = 1e-9


def _plain(exprs, funcs):
    """exprs with the functions of time (and derivatives, replaced first) in ``funcs`` as symbols."""
    plain = [sm.Symbol(f"_s{i}") for i in range(len(funcs))]
    order = sorted(range(len(funcs)), key=lambda i: -int(isinstance(funcs[i], sm.Derivative)))
    mats = [sm.Matrix(e) for e in exprs]
    for i in order:
        mats = [M.xreplace({funcs[i]: plain[i]}) for M in mats]
    return plain, mats


class SympyOracle:
    """x' of a SymPy KanesMethod system: [q'; u'] = mass_matrix_full^-1 forcing_full, with the
    dependent speeds from the user's velocity constraints solved by numpy."""

    def __init__(self, km, q, u_ind, u_dep, vc, specifieds, consts):
        self.q, self.u_ind, self.u_dep = list(q), list(u_ind), list(u_dep)
        funcs = self.q + self.u_ind + self.u_dep + list(specifieds)
        vcm = sm.Matrix(vc)
        Bdep = vcm.jacobian(self.u_dep)
        rest = vcm.xreplace(dict.fromkeys(self.u_dep, 0))
        plain, mats = _plain([km.mass_matrix_full, km.forcing_full, Bdep, rest], funcs)
        args = [t] + plain + list(consts)
        self._f = sm.lambdify(args, mats, modules="numpy", cse=True)
        self.nq, self.ni, self.nd = len(self.q), len(self.u_ind), len(self.u_dep)

    def speeds(self, tt, q, u_ind, r, c):
        _, _, Bd, rest = self._f(tt, *q, *u_ind, *np.zeros(self.nd), *r, *c)
        return np.linalg.solve(np.asarray(Bd, float), -np.asarray(rest, float).ravel())

    def xdot(self, tt, q, u_ind, r, c):
        """(q' (N), u' of [u_ind, u_dep])."""
        u_dep = self.speeds(tt, q, u_ind, r, c)
        Mf, Ff, _, _ = self._f(tt, *q, *u_ind, *u_dep, *r, *c)
        sol = np.linalg.solve(np.asarray(Mf, float), np.asarray(Ff, float).ravel())
        return sol[:self.nq], sol[self.nq:]


# --------------------------------------------------------------------------- systems
def prescribed_speed(mod):
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    v = me.dynamicsymbols("v")
    vd = v.diff(t)
    mc, mp, l, g = sm.symbols("m_c m_p l g")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q2, N.z])
    A.set_ang_vel(N, u2 * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", q1 * N.x)
    C.set_vel(N, u1 * N.x)
    P = C.locatenew("P", -l * A.y)
    P.v2pt_theory(C, N, A)
    bodies = [me.Particle("cart", C, mc), me.Particle("bob", P, mp)]
    loads = [(C, -mc * g * N.y), (P, -mp * g * N.y)]
    km = mod.KanesMethod(N, [q1, q2], [u2], kd_eqs=[q1.diff(t) - u1, q2.diff(t) - u2],
                         u_dependent=[u1], velocity_constraints=[u1 - v])
    km.kanes_equations(bodies, loads)
    return dict(km=km, q=[q1, q2], u_ind=[u2], u_dep=[u1], vc=[u1 - v], r=[v, vd],
                consts=[mc, mp, l, g], values=[2.0, 0.7, 0.9, 9.81])


def moving_support(mod):
    x, y, u1, u2 = me.dynamicsymbols("x y u1 u2")
    m, l, g, a, w = sm.symbols("m l g a w")
    s = a * sm.sin(w * t)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, u1 * N.x + u2 * N.y)
    vc = [(x - s) * (u1 - s.diff(t)) + y * u2]
    km = mod.KanesMethod(N, [x], [u1], kd_eqs=[x.diff(t) - u1, y.diff(t) - u2], q_dependent=[y],
                         configuration_constraints=[(x - s)**2 + y**2 - l**2], u_dependent=[u2],
                         velocity_constraints=vc)
    km.kanes_equations([me.Particle("P", P, m)], [(P, -m * g * N.y)])
    return dict(km=km, q=[x, y], u_ind=[u1], u_dep=[u2], vc=vc, r=[], consts=[m, l, g, a, w],
                values=[0.5, 1.2, 9.81, 0.3, 2.5])


def steered_knife_edge(mod):
    x, y, th, u1, u2, u3 = me.dynamicsymbols("x y th u1 u2 u3")
    d, T = me.dynamicsymbols("d T")
    m, I = sm.symbols("m I")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, u3 * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, u1 * N.x + u2 * N.y)
    body = me.RigidBody("b", P, A, m, (me.inertia(A, 0, 0, I), P))
    vc = [-sm.sin(th + d) * u1 + sm.cos(th + d) * u2]
    km = mod.KanesMethod(N, [x, y, th], [u1, u3], kd_eqs=[x.diff(t) - u1, y.diff(t) - u2, th.diff(t) - u3],
                         u_dependent=[u2], velocity_constraints=vc)
    km.kanes_equations([body], [(A, T * N.z)])
    return dict(km=km, q=[x, y, th], u_ind=[u1, u3], u_dep=[u2], vc=vc, r=[T, d, d.diff(t)],
                consts=[m, I], values=[3.0, 0.25])


SYSTEMS = {"prescribed speed": prescribed_speed, "moving support": moving_support,
           "steered knife edge": steered_knife_edge}


@pytest.fixture(scope="module", params=sorted(SYSTEMS))
def system(request):
    sp = SYSTEMS[request.param](me)
    ours = SYSTEMS[request.param](sb)
    model = sb.compile(ours["km"].to_eom(), constants=ours["consts"], specifieds=ours["r"])
    oracle = SympyOracle(sp["km"], sp["q"], sp["u_ind"], sp["u_dep"], sp["vc"], sp["r"], sp["consts"])
    return request.param, model, oracle, np.array(ours["values"])


def _random_point(name, model, rng, c):
    """A consistent state (q, u_ind), time and inputs of the named system."""
    tt = rng.uniform(0.0, 2.0)
    r = rng.uniform(-1.0, 1.0, len(model.specifieds))
    if name == "moving support":
        l, a, w = c[1], c[3], c[4]
        th = rng.uniform(-1.0, 1.0)
        q = np.array([a * np.sin(w * tt) + l * np.sin(th), -l * np.cos(th)])
    else:
        q = rng.uniform(-1.0, 1.0, model.N)
    return tt, q, rng.uniform(-1.5, 1.5, model.p), r


def test_dependent_speeds_have_the_sign_of_b(system):
    """u_dep = -B_dep^-1 (B_ind u_ind + b) against the closed forms (b != 0 in two systems)."""
    name, model, oracle, c = system
    rng = np.random.default_rng(SEED)
    for _ in range(4):
        tt, q, u_ind, r = _random_point(name, model, rng, c)
        u = model.full_speeds(q, u_ind, c, t=tt, r=r)
        if name == "prescribed speed":          # u1 = v: the cart moves at the prescribed speed
            expected = r[0]
        elif name == "moving support":         # u2 = -(x - s)(u1 - s') / y
            a, w = c[3], c[4]
            s, sd = a * np.sin(w * tt), a * w * np.cos(w * tt)
            expected = -(q[0] - s) * (u_ind[0] - sd) / q[1]
        else:                                  # y' = tan(th + d) x'
            expected = np.tan(q[2] + r[1]) * u_ind[0]
        assert u[-1] == pytest.approx(expected, rel=RTOL, abs=1e-12), \
            f"{name}: dependent speed wrong (sign of b in u_dep = -B_dep^-1 (B_ind u_ind + b)?)"
        assert u[-1] == pytest.approx(oracle.speeds(tt, q, u_ind, r, c)[0], rel=RTOL, abs=1e-12)


def test_rhs_matches_sympy_kanes_method(system):
    name, model, oracle, c = system
    rng = np.random.default_rng(SEED + 1)
    for _ in range(4):
        tt, q, u_ind, r = _random_point(name, model, rng, c)
        qd_sp, ud_sp = oracle.xdot(tt, q, u_ind, r, c)
        xd = model.rhs(tt, np.concatenate([q, u_ind]), c, r)
        np.testing.assert_allclose(xd[:model.N], qd_sp, rtol=RTOL, atol=1e-12, err_msg=f"{name}: q'")
        np.testing.assert_allclose(xd[model.N:], ud_sp[:model.p], rtol=RTOL, atol=1e-12, err_msg=f"{name}: u'")
        udot, _ = model.accelerations(q, u_ind, c, t=tt, r=r)
        np.testing.assert_allclose(udot, ud_sp, rtol=RTOL, atol=1e-12, err_msg=f"{name}: all u'")


def _oracle_field(name, model, oracle, c, tt):
    """f(x_ind, r) -> x_ind' of the oracle in the independent state of ``linearize``."""
    def f(xi, r):
        if name == "moving support":        # y from the constraint (lower branch), then x' and u1'
            l, a, w = c[1], c[3], c[4]
            s = a * np.sin(w * tt)
            q = np.array([xi[0], -np.sqrt(l**2 - (xi[0] - s) ** 2)])
            u_ind = xi[1:]
        else:
            q, u_ind = xi[:model.N], xi[model.N:]
        qd, ud = oracle.xdot(tt, q, u_ind, r, c)
        return np.concatenate([qd[:model.n], ud[:model.p]])
    return f


def test_linearization_matches_central_differences_of_sympy(system):
    """A = df/dx and B = df/dr (B: the d(B^T λ)/dr term when the input is inside B)."""
    name, model, oracle, c = system
    rng = np.random.default_rng(SEED + 2)
    tt, q, u_ind, r = _random_point(name, model, rng, c)
    A, B = sb.linearize(model, np.concatenate([q, u_ind]), c, r=r, t=tt)
    f = _oracle_field(name, model, oracle, c, tt)
    xi = np.concatenate([q[:model.n], u_ind])
    # central differences: truncation h^2 |f'''| / 6 ~ 1e-10 and round-off eps |f| / h ~ 1e-11
    # at h = 1e-5 for these O(1)-scaled fields, so 1e-7 separates them from any real error
    h = 1e-5
    A_fd = np.column_stack([(f(xi + h * e, r) - f(xi - h * e, r)) / (2 * h) for e in np.eye(len(xi))])
    np.testing.assert_allclose(A, A_fd, rtol=1e-7, atol=1e-7, err_msg=f"{name}: A")
    if len(r):
        B_fd = np.column_stack([(f(xi, r + h * e) - f(xi, r - h * e)) / (2 * h) for e in np.eye(len(r))])
        np.testing.assert_allclose(B, B_fd, rtol=1e-7, atol=1e-7,
                                   err_msg=f"{name}: B = df/dr (the d(B^T λ)/dr term of the linearization?)")


def test_moving_support_simulation_matches_the_minimal_coordinate_equation():
    """Project mode with f_h(q, t): the angle theta = atan2(x - s, -y) of a pendulum whose pivot
    moves as s = a sin(w t) obeys theta'' = -(g/l) sin theta - (s''/l) cos theta (scipy DOP853)."""
    sys_ = moving_support(sb)
    model = sb.compile(sys_["km"].to_eom(), constants=sys_["consts"])
    m, l, g, a, w = sys_["values"]
    th0, thd0 = 0.4, 0.0
    x0 = [l * np.sin(th0), -l * np.cos(th0), l * np.cos(th0) * thd0 + a * w]   # x' = l cos(th) th' + s'
    T = np.linspace(0.0, 3.0, 31)
    tr = sb.simulate(model, (0.0, 3.0), x0, sys_["values"], constraints="project", t_eval=T,
                     solver=sb.Solver(rtol=1e-11, atol=1e-12))
    assert tr.success, tr.message

    def minimal(tt, y):
        sdd = -a * w**2 * np.sin(w * tt)
        return [y[1], -(g / l) * np.sin(y[0]) - (sdd / l) * np.cos(y[0])]

    ref = solve_ivp(minimal, (0.0, 3.0), [th0, thd0], method="DOP853", t_eval=T, rtol=1e-12, atol=1e-13)
    s = a * np.sin(w * T)
    theta = np.arctan2(tr.q[:, 0] - s, -tr.q[:, 1])
    # both integrations run at rtol <= 1e-11 over 3 s of an O(1) motion (~5 swings): global
    # errors ~1e-9; 1e-7 rad is far below the O(0.1) rad of a wrong b or a t-blind projection
    np.testing.assert_allclose(theta, ref.y[0], atol=1e-7)
    # the constraint holds at the samples with the pivot where it is at each time
    assert np.max(np.abs(tr.holonomic_residuals)) < 1e-12      # Newton to round-off on l^2 ~ 1
    assert np.max(np.abs(tr.velocity_residuals)) < 1e-12       # u2 solved from B u + b = 0
