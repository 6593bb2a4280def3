"""symbody.to_casadi: the model's equations as CasADi SX functions.

Oracles: the compiled model's own right-hand side, speeds, accelerations and constraint
residuals (model.rhs & co., LAPACK solves of the compiled kernels' numbers) and
``sb.linearize`` (symbolic forward-mode derivatives with the implicit function theorem),
against CasADi's evaluation and CasADi's algorithmic differentiation of the SX graph.
"""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError

ca = pytest.importorskip("casadi")

ZOO = {
    "four_bar": lambda: sb.models.four_bar(),                       # holonomic, augmented
    "rolling_disc": lambda: sb.models.rolling_disc(),               # nonholonomic
    "snakeboard": lambda: sb.models.snakeboard(),                   # nonholonomic, 3 rows
    "cart3": lambda: sb.models.n_link_pendulum_on_cart(3, force=True),   # input, unconstrained
    "arm": lambda: sb.models.musculoskeletal_arm(),                 # extra states, inputs
}


@pytest.fixture(scope="module", params=sorted(ZOO))
def case(request):
    zoo = ZOO[request.param]()
    model = sb.compile(zoo.eom)
    rng = np.random.default_rng(7)
    P = model.constants_array(zoo.constants)
    x = model.state_array(zoo.initial_state).copy()
    N = model.N
    x[:N] += 0.1 * rng.standard_normal(N)
    if model.M:
        x[:N] = model.project_coordinates(x[:N], P)[0]
    x[N:N + model.p] = rng.standard_normal(model.p)
    r = 0.5 * rng.standard_normal(len(model.specifieds))
    return request.param, zoo, model, sb.to_casadi(model), x, P, r


def _close(got, ref, tol):
    got, ref = np.asarray(got, float), np.asarray(ref, float)
    assert got.shape == ref.shape
    scale = max(1.0, float(np.max(np.abs(ref), initial=0.0)))
    assert np.max(np.abs(got - ref), initial=0.0) <= tol * scale, np.max(np.abs(got - ref))


def test_rhs_equals_model_rhs(case):
    _, _, model, cm, x, P, r = case
    _close(np.asarray(cm.rhs(x, P, r)).ravel(), model.rhs(0.0, x, P, r), 1e-12)
    assert cm.rhs.name_in() == ["x", "p", "r"] and not cm.time_dependent


def test_speeds_system_and_constraints_equal_the_models(case):
    _, _, model, cm, x, P, r = case
    N, p = model.N, model.p
    u = model.full_speeds(x[:N], x[N:N + p], P, 0.0, r)
    _close(np.asarray(cm.speeds(x, P, r)).ravel(), u, 1e-12)
    S = np.asarray(cm.mass_matrix(x, P, r))
    s = np.asarray(cm.forcing(x, P, r)).ravel()
    y = np.linalg.solve(S, s)
    extra = {"extra": x[N + p:]} if model.e else {}
    udot, lam = model.accelerations(x[:N], u, P, 0.0, r, **extra)
    _close(y[:model.o] if not model.layout.dynamic_reduced else y, udot[:len(y)], 1e-10)
    if model.layout.augmented:
        _close(y[model.o:], lam, 1e-10)
    if model.M:
        _close(np.asarray(cm.holonomic(x, P, r)).ravel(), model.holonomic_residual(x[:N], P), 1e-12)
    if model.m:
        u2 = u + 0.3
        _close(np.asarray(cm.velocity_residual(x[:N], u2, P, r)).ravel(),
               model.velocity_residual(x[:N], u2, P, 0.0, r), 1e-12)


def test_casadi_jacobian_equals_linearize(case):
    name, zoo, model, cm, x, P, r = case
    if model.e:
        pytest.skip("linearize takes central differences with extra states (1e-8)")
    N, n, p = model.N, model.n, model.p
    X, R = ca.SX.sym("x", model.layout.nx), ca.SX.sym("r", len(model.specifieds))
    f = cm.rhs(X, ca.DM(P), R)
    jac = ca.Function("jacobians", [X, R], [ca.jacobian(f, X), ca.jacobian(f, R)])
    Jx, Jr = (np.asarray(v) for v in jac(x, r))
    A, B = sb.linearize(model, x, P, r=r)
    rows = list(range(n)) + list(range(N, N + p))            # [q_ind', u_ind']
    T = np.zeros((model.layout.nx, n + p))                    # d[q, u_ind] / d[q_ind, u_ind]
    T[:n, :n] = np.eye(n)
    if model.M:
        F = model.holonomic_jacobian(x[:N], P)
        T[n:N, :n] = -np.linalg.solve(F[:, n:], F[:, :n])
    T[N:, n:] = np.eye(p)
    _close(Jx[rows] @ T, A, 1e-9)
    _close(Jr[rows], B, 1e-9)


def test_linear_solver_nodes_give_the_same_rhs_and_jacobian(case):
    """linear_solver="qr": the two solves as CasADi linear-solver nodes (MX functions)."""
    name, _, model, cm, x, P, r = case
    mx = sb.to_casadi(model, linear_solver="qr")
    assert mx.rhs.is_a("MXFunction")
    _close(np.asarray(mx.rhs(x, P, r)).ravel(), model.rhs(0.0, x, P, r), 1e-12)
    _close(np.asarray(mx.speeds(x, P, r)).ravel(), np.asarray(cm.speeds(x, P, r)).ravel(), 1e-12)
    X = ca.MX.sym("x", model.layout.nx)
    jm = ca.Function("jm", [X], [ca.jacobian(mx.rhs(X, ca.DM(P), ca.DM(r)), X)])
    Xs = ca.SX.sym("x", model.layout.nx)
    js = ca.Function("js", [Xs], [ca.jacobian(cm.rhs(Xs, ca.DM(P), ca.DM(r)), Xs)])
    _close(np.asarray(jm(x)), np.asarray(js(x)), 1e-10)


def test_rhs_from_eom_and_zoo_model_and_codegen():
    zoo = sb.models.n_link_pendulum_on_cart(1, force=True)
    cm = sb.to_casadi(zoo)                      # a zoo Model: its equations
    model = sb.compile(zoo.eom)
    x, P, r = np.array([0.1, 0.2, -0.3, 0.4]), model.constants_array(zoo.constants), [1.5]
    _close(np.asarray(cm.rhs(x, P, r)).ravel(), model.rhs(0.0, x, P, r), 1e-12)
    # a CasADi integrator over the exported function agrees with symbody's simulation
    X, Pm, R = ca.SX.sym("x", 4), ca.SX.sym("p", len(P)), ca.SX.sym("r", 1)
    F = ca.integrator("F", "cvodes", {"x": X, "p": ca.vertcat(Pm, R), "ode": cm.rhs(X, Pm, R)},
                      0.0, 0.5, {"abstol": 1e-11, "reltol": 1e-11})
    xf = np.asarray(F(x0=x, p=np.r_[P, r])["xf"]).ravel()
    traj = sb.simulate(model, (0.0, 0.5), x, P, specifieds=r, solver=sb.Solver(rtol=1e-11, atol=1e-11))
    _close(xf, traj.x[-1], 1e-7)


def test_time_dependent_equations_take_t():
    import sympy as sm
    from sympy.physics.vector import dynamicsymbols
    t = dynamicsymbols._t
    th, om = dynamicsymbols("th om")
    k = sm.Symbol("k")
    eom = sb.EquationsOfMotion([th], [om], kinematic=[th.diff(t) - om],
                               dynamic=[om.diff(t) + k * sm.sin(th) - sm.cos(3 * t)])
    cm = sb.to_casadi(eom)
    assert cm.time_dependent and cm.rhs.name_in() == ["x", "p", "r", "t"]
    model = sb.compile(eom)
    _close(np.asarray(cm.rhs([0.3, -0.2], [2.0], [], 0.7)).ravel(),
           model.rhs(0.7, [0.3, -0.2], [2.0]), 1e-14)


def test_refusals_name_the_feature():
    with pytest.raises(InputError, match="events with impacts"):
        sb.to_casadi(sb.models.rimless_wheel())
    with pytest.raises(InputError, match="callable"):
        sb.to_casadi(sb.models.n_link_pendulum_on_cart(1, force=True), r=lambda t, x: [0.0])
    with pytest.raises(InputError, match="redundant set of configuration constraints"):
        sb.to_casadi(sb.models.get("bricard", redundant=True).eom)
    with pytest.raises(InputError, match="backend='numpy'"):
        sb.to_casadi(sb.compile(sb.models.n_link_pendulum_on_cart(1).eom, backend="numpy"))
    with pytest.raises(InputError, match="NumericModel, an EquationsOfMotion"):
        sb.to_casadi("pendulum")
    with pytest.raises(InputError, match="no linear solver plugin 'gauss'"):
        sb.to_casadi(sb.models.n_link_pendulum_on_cart(1).eom, linear_solver="gauss")


def test_the_converter_knows_the_elementary_functions():
    """SXConverter against symengine's own evaluation, function by function."""
    import symengine as se

    from symbody.export.casadi_function import SXConverter

    x, y = se.symbols("x y")
    exprs = [se.sin(x), se.cos(x), se.tan(x), se.asin(x / 2), se.acos(x / 2), se.atan(x),
             se.atan2(y, x), se.sinh(x), se.cosh(x), se.tanh(x), se.asinh(x), se.acosh(1 + x),
             se.atanh(x / 2), se.exp(x), se.log(x), se.sqrt(x), 1 / se.sqrt(y), se.Abs(-x),
             se.sign(x - y), se.floor(3 * x), se.ceiling(3 * x), se.Max(x, y, 0.5),
             se.Min(x, y), se.cot(x), se.sec(x), se.csc(x), se.erf(x), x ** y, se.E ** x,
             se.pi * x, se.Rational(1, 3) * x ** 3, x ** -1, x ** 2.5,
             se.Piecewise((x, se.Lt(x, y)), (y, True)), se.Piecewise((x, se.Gt(x, y)), (y, True)),
             se.Piecewise((1.0, se.And(se.Lt(x, y), se.Gt(x, 0))), (2.0, True)),
             se.Piecewise((1.0, se.Or(se.Eq(x, y), se.Le(y, x))), (2.0, True))]
    X, Y = ca.SX.sym("x"), ca.SX.sym("y")
    conv = SXConverter({"x": X, "y": Y})
    f = ca.Function("f", [X, Y], [ca.vertcat(*conv.many(exprs))])
    got = np.asarray(f(0.3, 0.7)).ravel()
    ref = [float(e.subs({x: 0.3, y: 0.7})) for e in exprs]
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-15)
    with pytest.raises(InputError, match="z, which is not an input"):
        conv(se.Symbol("z") + x)
    with pytest.raises(InputError, match="gamma"):
        conv(se.gamma(x))
