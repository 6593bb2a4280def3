"""Runge-Kutta steps in compiled code (analysis/simulation/native_rk.py).

For a model whose kernels are all generated C, ``simulate`` takes scipy's RK23 / RK45 /
DOP853 steps in C (the same tables, error norm and step control, the stages written into
the solver's own K).  Checked here: the compiled steppers follow scipy's to round-off over
the first steps and give the same solution at the output times (the error estimate is a
difference of nearly equal sums, so after many steps the step sizes drift apart at the
level of the tolerance, no more); the hard cases go to the Python path: a mass matrix that
is not positive definite, a singular one (the error names it); a non-finite derivative is
rejected in C as scipy rejects it, and recorded by the Python right-hand side.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import DOP853, RK23, RK45

import symbody as sb
import symbody.analysis.simulation.native_rk as native_rk
from symbody.analysis.simulation.explicit_tableaux import Tsit5, Vern6
from symbody.compilation import available_backends, compile
from symbody.models import four_bar, n_link_pendulum_on_cart

t = me.dynamicsymbols._t


# Models of their own (not the zoo's defaults), compiled with backend="c": other tests
# pickle the zoo models and expect their usual (LLVM) kernels.

@pytest.fixture(scope="module")
def chain():
    zoo = n_link_pendulum_on_cart(5)
    model = compile(zoo.eom, backend="c")
    P = model.constants_array(zoo.constants)
    x0 = model.state_array(zoo.initial_state)
    x0[1:4] += [0.3, -0.2, 0.4]                  # off the equilibrium: it swings
    return zoo, model, P, x0


def _linkage_eom():
    """A four-bar linkage with unequal particles (m at P2, 2 m at P3), by Kane's method with
    two holonomic constraints: dependent coordinates and speeds, multipliers."""
    q1, q2, q3 = me.dynamicsymbols("q1:4")
    u1, u2, u3 = me.dynamicsymbols("u1:4")
    la, lb, lc, ln, m, g = sm.symbols("l_a l_b l_c l_n m g")
    N, A, B, C = (me.ReferenceFrame(name) for name in "NABC")
    A.orient_axis(N, q1, N.z)
    B.orient_axis(A, q2, A.z)
    C.orient_axis(B, q3, B.z)
    P1, P2, P3, P4 = (me.Point(f"P{i}") for i in range(1, 5))
    P2.set_pos(P1, la * A.x)
    P3.set_pos(P2, lb * B.x)
    P4.set_pos(P3, lc * C.x)
    P1.set_vel(N, 0)
    for a, b, frame in ((P1, P2, A), (P2, P3, B), (P3, P4, C)):
        b.v2pt_theory(a, N, frame)
    loop = P4.pos_from(P1) - ln * N.x
    fh = [2 * loop.dot(N.x), 2 * loop.dot(N.y)]    # (scaled: no kernel shared with the zoo's)
    qd = {q.diff(t): v for q, v in ((q1, u1), (q2, u2), (q3, u3))}
    km = sb.KanesMethod(N, [q1], [u1], kd_eqs=[q.diff(t) - v for q, v in ((q1, u1), (q2, u2), (q3, u3))],
                        q_dependent=[q2, q3], configuration_constraints=fh, u_dependent=[u2, u3],
                        velocity_constraints=[e.diff(t).xreplace(qd) for e in fh])
    km.kanes_equations([me.Particle("a", P2, m), me.Particle("b", P3, 2 * m)],
                       [(P2, -m * g * N.y), (P3, -2 * m * g * N.y)])
    values = {la: 0.8, lb: 2.0, lc: 1.0, ln: 2.0, m: 1.0, g: 9.81}
    x0 = {q1: np.radians(10.0), q2: 0.1147600368, q3: -2.642142840, u1: 0.0}   # on the loop
    return km.to_eom(), values, x0


@pytest.fixture(scope="module")
def linkage():
    eom, values, x0 = _linkage_eom()
    model = compile(eom, backend="c")            # augmented system and dependent speeds in C
    return x0, model, model.constants_array(values)


@pytest.mark.parametrize("method,scipy_class", [("RK23", RK23), ("RK45", RK45), ("DOP853", DOP853),
                                                ("Tsit5", Tsit5), ("Vern6", Vern6)])
def test_compiled_steps_follow_scipy(chain, method, scipy_class):
    zoo, model, P, x0 = chain
    found = native_rk.native_solver(model, P, method)
    assert found is not None                    # every kernel is C: the compiled path exists
    cls, extra = found
    f = model.rhs_function(P)
    # (Vern6: scipy's first-step guess, 3e-4 here, leaves its error estimate -- weights up to
    # ~100 that cancel -- at ~1e-6 of the tolerance, where stages equal to 4e-14 move it by
    # 20 %; from a step of 1e-2 it is well above round-off)
    first = {"first_step": 1e-2} if method == "Vern6" else {}
    ours = cls(f, 0.0, x0, 5.0, rtol=1e-8, atol=1e-10, **first, **extra)
    theirs = scipy_class(f, 0.0, x0, 5.0, rtol=1e-8, atol=1e-10, **first)
    for _ in range(5):
        ours.step()
        theirs.step()
        # the same arithmetic in another order: the error estimate is a difference of sums
        # that cancel to ~1e-9 of their terms, so its round-off reaches 1e-4 relative and the
        # next step size (error^(-1/8)) moves by ~1e-5; checked to agree to 1e-4
        assert ours.t == pytest.approx(theirs.t, rel=1e-4)
        assert ours.nfev == theirs.nfev
    # the two solutions at a time inside both last steps (scipy's own dense output reads
    # the stages the C code wrote): equal within what rtol = 1e-8 allows over 5 steps
    tm = 0.5 * (max(ours.t_old, theirs.t_old) + min(ours.t, theirs.t))
    np.testing.assert_allclose(ours.dense_output()(tm), theirs.dense_output()(tm), rtol=1e-6, atol=1e-8)



def test_derivative_is_the_compiled_rhs(chain):
    """CompiledRungeKutta.derivative (the stiffness test's evaluations) equals the Python
    right-hand side away from the stepper's state, and is counted in nfev."""
    zoo, model, P, x0 = chain
    cls, extra = native_rk.native_solver(model, P, "DOP853")
    f = model.rhs_function(P)
    stepper = cls(f, 0.0, x0, 5.0, rtol=1e-8, atol=1e-10, **extra)
    stepper.step()
    y = stepper.y + 1e-3 * np.random.default_rng(0).standard_normal(stepper.y.size)
    before = stepper.solver.nfev
    np.testing.assert_allclose(stepper.derivative(0.3, y), f(0.3, y), rtol=1e-12, atol=1e-12)
    assert stepper.solver.nfev == before + 1

@pytest.mark.parametrize("method,scipy_class", [("RK45", RK45), ("DOP853", DOP853),
                                                ("Tsit5", Tsit5), ("Vern6", Vern6)])
def test_steps_handed_back_are_scipys_own(chain, method, scipy_class):
    """CompiledRungeKutta holds a scipy solver and keeps its state: every step the compiled
    code hands back (here all of them, then every other one) is taken by that solver's
    public ``step()`` from where the compiled steps left it.  All handed back: the run is
    scipy's, bit for bit (times, states, evaluations, dense output); alternating: within
    what the tolerance allows of it, as the compiled steps alone."""
    zoo, model, P, x0 = chain
    cls, extra = native_rk.native_solver(model, P, method)
    assert not issubclass(cls, scipy_class)
    f = model.rhs_function(P)
    first = {"first_step": 1e-2} if method == "Vern6" else {}   # (as in the test above)
    for every in (1, 2):
        ours = cls(f, 0.0, x0, 5.0, rtol=1e-8, atol=1e-10, **first, **extra)
        theirs = scipy_class(f, 0.0, x0, 5.0, rtol=1e-8, atol=1e-10, **first)
        compiled, count = ours._step, [0]

        def step(*args, compiled=compiled, count=count, every=every):
            count[0] += 1
            return 3 if count[0] % every == 0 else compiled(*args)     # 3: "non-finite"

        ours._step = step
        for _ in range(6):
            ours.step()
            theirs.step()
        tm = 0.5 * (max(ours.t_old, theirs.t_old) + min(ours.t, theirs.t))
        if every == 1:
            assert (ours.t, ours.t_old, ours.nfev, ours.h_abs) == \
                (theirs.t, theirs.t_old, theirs.nfev, theirs.h_abs)
            assert np.array_equal(ours.y, theirs.y)
            assert np.array_equal(ours.dense_output()(tm), theirs.dense_output()(tm))
        else:
            assert ours.t == pytest.approx(theirs.t, rel=1e-4) and ours.nfev == theirs.nfev
            np.testing.assert_allclose(ours.dense_output()(tm), theirs.dense_output()(tm),
                                       rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("method", [None, "Tsit5", "Vern6"])
def test_simulate_compiled_equals_python_steps(chain, linkage, monkeypatch, method):
    zoo, model, P, x0 = chain
    fb_x0, fb, fb_P = linkage
    runs = {}
    for name in ("compiled", "python"):
        if name == "python":
            monkeypatch.setattr(native_rk, "native_solver", lambda *args: None)
        runs[name] = (sb.simulate(model, (0.0, 2.0), x0, P, t_eval=np.linspace(0, 2, 21),
                                  solver=sb.Solver(rtol=1e-10, atol=1e-12, method=method)),
                      sb.simulate(fb, (0.0, 3.0), fb_x0, fb_P, t_eval=np.linspace(0, 3, 31),
                                  solver=sb.Solver(rtol=1e-10, atol=1e-12, method=method)))
    for a, b in zip(runs["compiled"], runs["python"]):
        assert a.success and b.success
        # two solutions at rtol 1e-10 of a non-chaotic 2-3 s swing (speeds up to ~50): each
        # carries a global error of ~1e-9 relative; 1e-7 leaves room for both
        np.testing.assert_allclose(a.x, b.x, rtol=1e-7, atol=1e-7)
        assert abs(a.nfev - b.nfev) <= 0.1 * b.nfev             # the same work
    assert np.abs(runs["compiled"][1].holonomic_residuals).max() < 1e-12   # still projected


def test_constant_inputs_take_compiled_steps(monkeypatch):
    """A model with a specified input takes its steps in C when the input is a constant
    (the value sits in the kernels' argument vector), and in Python when it is a function
    of time; both give the solution of the same problem."""
    zoo = n_link_pendulum_on_cart(3, force=True)
    model = compile(zoo.eom, backend="c")
    P = model.constants_array(zoo.constants)
    x0 = model.state_array(zoo.initial_state)
    x0[1:4] = -np.pi / 2 + np.array([0.3, -0.2, 0.1])   # swinging below the cart: not chaotic
    used = []
    real = native_rk.native_solver

    def spy(*args):
        found = real(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(native_rk, "native_solver", spy)
    kw = dict(t_eval=np.linspace(0, 2, 21), solver=sb.Solver(rtol=1e-10, atol=1e-12))
    const = sb.simulate(model, (0.0, 2.0), x0, P, specifieds=[0.7], **kw)
    assert used == [True]
    # the same force as a function of time: r(t) = 0.7 + 0 t, Python steps
    func = sb.simulate(model, (0.0, 2.0), x0, P, specifieds={"F": lambda tt: 0.7 + 0.0 * tt}, **kw)
    assert used == [True]                        # not asked: inputs that vary stay in Python
    assert const.success and func.success
    # two runs at rtol 1e-10 of a 2 s regular swing: each within ~1e-9 of the solution
    np.testing.assert_allclose(const.x, func.x, rtol=1e-7, atol=1e-7)
    # and the input acts: zero force gives another motion
    free = sb.simulate(model, (0.0, 2.0), x0, P, specifieds=[0.0], **kw)
    assert np.abs(free.x[-1] - const.x[-1]).max() > 1e-3


def test_expression_inputs_take_compiled_steps(compiled_steps_taken):
    """Inputs given as SymPy expressions of t and the state are computed in C before each
    evaluation (compilation/native_inputs.py): the steps run in C, for the explicit methods
    and Radau, and the motion is the one of the same force given as a Python function."""
    zoo = n_link_pendulum_on_cart(3, force=True)
    model = compile(zoo.eom, backend="c")
    P = model.constants_array(zoo.constants)
    x0 = model.state_array(zoo.initial_state)
    x0[1:4] = -np.pi / 2 + np.array([0.3, -0.2, 0.1])
    cart_speed = model.states[4]
    used = compiled_steps_taken
    force = 0.7 * sm.sin(3 * t) - 0.5 * cart_speed           # a drive and a damper on the cart
    for method in ("DOP853", "Radau"):
        kw = dict(t_eval=np.linspace(0, 2, 21), solver=sb.Solver(rtol=1e-10, atol=1e-12,
                                                                 method=method))
        used.clear()
        expr = sb.simulate(model, (0.0, 2.0), x0, P, specifieds={"F": force}, **kw)
        assert used == [True], method
        func = sb.simulate(model, (0.0, 2.0), x0, P,
                           specifieds=lambda tt, x: [0.7 * np.sin(3 * tt) - 0.5 * x[4]], **kw)
        assert used == [True], method              # (the Python function: Python steps)
        assert expr.success and func.success
        # two runs at rtol 1e-10 of a 2 s regular swing: each within ~1e-9 of the solution
        np.testing.assert_allclose(expr.x, func.x, rtol=1e-7, atol=1e-7)


def test_llvm_models_keep_python_steps():
    zoo = four_bar()
    model = compile(zoo.eom, backend="llvm")    # LLVM kernels have no C entry point
    P = model.constants_array(zoo.constants)
    assert native_rk.native_solver(model, P, "DOP853") is None
    assert model.kernels.main.backend == "llvm"                               # (built by now)


@pytest.mark.skipif("c" not in available_backends(), reason="no C compiler")
def test_default_backend_takes_compiled_steps():
    """``backend="auto"`` builds a model's kernels as C (when a compiler works): the default
    reaches the compiled steps, with the numbers of ``backend="c"``."""
    zoo = four_bar()
    model = compile(zoo.eom)
    P = model.constants_array(zoo.constants)
    assert native_rk.native_solver(model, P, "DOP853") is not None
    assert model.kernels.main.backend == "c" and model.backend == "auto"
    c = compile(zoo.eom, backend="c")
    kw = dict(solver=sb.Solver(rtol=1e-8, atol=1e-10), t_eval=np.linspace(0.0, 1.0, 11))
    a = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants, **kw)
    b = sb.simulate(c, (0.0, 1.0), zoo.initial_state, zoo.constants, **kw)
    assert a.success and np.array_equal(a.x, b.x)


def _mass_crossing_zero():
    """u' (m - t) = -k q: the mass matrix is positive, singular at t = m, then negative."""
    q, u = me.dynamicsymbols("q u")
    m, k = sm.symbols("m k")
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[m - t]]), sm.Matrix([k * q])), constants=[m, k])
    return compile(eom, backend="c")


def test_hard_cases_go_to_the_python_path(monkeypatch):
    model = _mass_crossing_zero()
    assert native_rk.native_solver(model, [5.0, 1.0], "RK45") is not None
    # negative definite after t = 1 (m = 1): Cholesky fails in C, Python solves it
    got = sb.simulate(model, (1.5, 2.5), [0.1, 0.0], [1.0, 1.0], t_eval=[2.0, 2.5],
                      solver=sb.Solver(rtol=1e-10, atol=1e-12))
    monkeypatch.setattr(native_rk, "native_solver", lambda *args: None)
    ref = sb.simulate(model, (1.5, 2.5), [0.1, 0.0], [1.0, 1.0], t_eval=[2.0, 2.5],
                      solver=sb.Solver(rtol=1e-10, atol=1e-12))
    assert got.success and ref.success
    np.testing.assert_allclose(got.x, ref.x, rtol=1e-8)        # (a 1 s run at rtol 1e-10)
    monkeypatch.undo()
    # m = 0: singular at the first evaluation; the failure says so, as without compiled steps
    bad = sb.simulate(model, (0.0, 1.0), [0.1, 0.0], [0.0, 1.0])
    assert bad.status == -3 and "singular" in bad.message
    # a non-finite derivative (u' = -k q / (m - t) grows without bound towards t = m = 1):
    # the run stops with a failure, and what was computed is kept
    blow = sb.simulate(model, (0.0, 2.0), [0.1, 0.1], [1.0, 1.0])
    assert blow.status != 0 and len(blow.t) > 1 and blow.t[-1] < 1.0 + 1e-6


def test_extra_states_run_in_compiled_code(chain, monkeypatch):
    """A model with extra states (a first-order actuator state on the cart, its input
    constant): the compiled right-hand side writes x_e' after [q', u'] and equals the
    Python one; simulate takes its steps in C and follows the Python steps."""
    from symbody.compilation.native_rhs import native_rhs
    zoo, _, _, _ = chain
    a, e = me.dynamicsymbols("a_cart e_cart")
    eom = zoo.eom.with_extra_states({a: (e - a) / sm.Rational(1, 20)}, specifieds=[e])
    model = compile(eom, backend="c")
    P = model.constants_array(zoo.constants)
    x0 = model.state_array({**zoo.initial_state, a: 0.2})
    x0[1:4] += [0.3, -0.2, 0.4]
    R = np.array([0.7])
    rhs = native_rhs(model, P, R)
    assert rhs is not None
    xdot, status = rhs(0.0, x0)
    assert status == 0
    assert np.allclose(xdot, model.rhs(0.0, x0, P, R), rtol=1e-13, atol=1e-13)
    assert xdot[-1] == pytest.approx((0.7 - 0.2) * 20)
    taken, real = [], native_rk.native_solver
    monkeypatch.setattr(native_rk, "native_solver",
                        lambda *args: taken.append(real(*args)) or taken[-1])
    fast = sb.simulate(model, (0, 0.5), x0, P, specifieds=R, t_eval=[0.25, 0.5],
                       solver=sb.Solver(rtol=1e-9, method="DOP853"))
    slow = sb.simulate(model, (0, 0.5), x0, P, specifieds=lambda t, x: R, t_eval=[0.25, 0.5],
                       solver=sb.Solver(rtol=1e-9, method="DOP853"))
    assert taken and taken[0] is not None                  # the constant input: steps in C
    assert np.allclose(fast.x, slow.x, rtol=0, atol=1e-7)


def _square_root_well():
    """u' = -(q - 1) - u/20 - e sqrt(b - q): a lightly damped swing towards q = b, where the
    right-hand side ends (NaN beyond): large trial steps put stages past b."""
    q, u = me.dynamicsymbols("q u")
    e, b = sm.symbols("e b")
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[1]]), sm.Matrix([u / 20 + (q - 1) + e * sm.sqrt(b - q)])),
                               constants=[e, b])
    return compile(eom, backend="c")


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_nonfinite_trial_stages_are_rejected_in_compiled_code(method, monkeypatch):
    """A stage past q = b gives a NaN derivative: the compiled step rejects the attempt with
    scipy's factor for it (its error norm is NaN) without the stages after it, so the run
    equals the Python steps' (its extra evaluation records the state: no more than scipy's
    evaluations); where the solution itself reaches b, the failure names sqrt(b - q) as the
    Python steps do."""
    model = _square_root_well()
    hits, real = [], native_rk.CompiledRungeKutta._record_nonfinite

    def spy(self):
        hits.append(self._rk.nonfinite)
        real(self)

    monkeypatch.setattr(native_rk.CompiledRungeKutta, "_record_nonfinite", spy)
    runs = {}
    b_ok = {"RK45": 1.96, "DOP853": 1.93}[method]       # (trial stages past b at rtol 3e-2)
    for b, rtol in ((b_ok, 3e-2), (1.96, 1e-1)):
        for name in ("compiled", "python"):
            if name == "python":
                monkeypatch.setattr(native_rk, "native_solver", lambda *args: None)
            runs[b, rtol, name] = sb.simulate(model, (0.0, 20.0), [0.0, 0.0], [1e-3, b],
                                              t_eval=np.linspace(0.0, 20.0, 41),
                                              solver=sb.Solver(rtol=rtol, atol=1e-6, method=method))
            monkeypatch.undo()
            monkeypatch.setattr(native_rk.CompiledRungeKutta, "_record_nonfinite", spy)
    fast, slow = runs[b_ok, 3e-2, "compiled"], runs[b_ok, 3e-2, "python"]
    assert fast.success and slow.success and sum(hits) > 0
    assert fast.x[:, 0].max() < b_ok                         # (the solution stays short of b)
    np.testing.assert_allclose(fast.x, slow.x, rtol=1e-8, atol=1e-9)
    assert fast.nfev <= slow.nfev
    fast, slow = runs[1.96, 1e-1, "compiled"], runs[1.96, 1e-1, "python"]
    if not slow.success:                                     # (RK45: the run reaches b)
        assert fast.status == slow.status == -2
        # (the state named is the last trial's: its digits may differ from the Python steps')
        for message in (fast.message, slow.message):
            assert "sqrt(b - q(t)) is not real" in message and "in the term e*sqrt(b - q(t))" in message
        assert fast.message.split(";")[-1] == slow.message.split(";")[-1]   # (where it collapsed)
        assert fast.t[-1] == slow.t[-1]
