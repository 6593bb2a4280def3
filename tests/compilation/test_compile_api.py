"""compile / NumericModel / make_function: inputs, errors, backends, on-disk cache."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody
from symbody.compilation import (
    NumericModel,
    available_backends,
    codegen,
    compile,
    kernel_backends,
    make_function,
)
from symbody.errors import CompilationError, InputError, SingularConstraintError

t = me.dynamicsymbols._t


def _spring(specified: bool = True):
    """m q'' + c q' + k q = F(t): a 1-dof system with a specified force."""
    q, u, F = me.dynamicsymbols("q u F")
    m, c, k = sm.symbols("m c k")
    force = F if specified else 0
    eom = symbody.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                                    dynamic=(sm.Matrix([[m]]), sm.Matrix([c * u + k * q - force])))
    return eom, (q, u, F, m, c, k)


def test_specified_inputs_and_orderings():
    eom, (q, u, F, m, c, k) = _spring()
    model = compile(eom, constants=[k, m, c], specifieds=[F])
    assert model.constants == (k, m, c) and model.specifieds == (F,)
    xd = model.rhs(0.0, [0.5, 2.0], [10.0, 2.0, 0.3], r=[1.0])
    np.testing.assert_allclose(xd, [2.0, -(0.3 * 2 + 10 * 0.5 - 1.0) / 2.0])
    # r as callable and as dict
    xd2 = model.rhs(0.0, [0.5, 2.0], {"k": 10.0, m: 2.0, "c": 0.3}, r=lambda t, x: [1.0])
    np.testing.assert_allclose(xd, xd2)
    xd3 = model.rhs(0.0, [0.5, 2.0], [10.0, 2.0, 0.3], r={"F": 1.0})
    np.testing.assert_allclose(xd, xd3)
    with pytest.raises(InputError, match="specified"):
        model.rhs(0.0, [0.5, 2.0], [10.0, 2.0, 0.3])


def test_constants_errors_name_the_culprit():
    eom, (q, u, F, m, c, k) = _spring(specified=False)
    model = compile(eom)
    assert [str(s) for s in model.constants] == ["c", "k", "m"]
    with pytest.raises(InputError, match="missing value for constant m"):
        model.constants_array({"c": 1.0, "k": 2.0})
    with pytest.raises(InputError, match="unknown constant 'mass'"):
        model.constants_array({"c": 1.0, "k": 2.0, "m": 1.0, "mass": 3.0})
    with pytest.raises(InputError, match="constant k = nan is not finite"):
        model.constants_array([1.0, np.nan, 1.0])
    with pytest.raises(InputError, match="2 constant values given but the model has 3"):
        model.constants_array([1.0, 2.0])
    with pytest.raises(InputError, match="missing initial value for state u"):
        model.state_array({"q": 1.0})
    with pytest.raises(InputError, match="unknown state 'v'"):
        model.state_array({"q": 1.0, "u": 0.0, "v": 2.0})
    with pytest.raises(InputError, match="the state has 2 values"):
        model.rhs(0.0, [1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(model.state_array({q: 1.0, "u": 2.0}), [1.0, 2.0])


def test_compile_errors():
    eom, (q, u, F, m, c, k) = _spring(specified=False)
    with pytest.raises(CompilationError, match="missing from the constants"):
        compile(eom, constants=[c, k])
    with pytest.raises(CompilationError, match="EquationsOfMotion"):
        compile("not equations")
    with pytest.raises(CompilationError, match="unknown backend"):
        compile(eom, backend="fortran")
    with pytest.raises(CompilationError, match="depends on the symbol z"):
        make_function([[q], [m]], q * sm.Symbol("z"))
    w = me.dynamicsymbols("w")
    with pytest.raises(CompilationError, match="w"):
        make_function([[q]], q * w)


def test_model_is_immutable():
    eom, _ = _spring(specified=False)
    model = compile(eom)
    with pytest.raises(AttributeError):
        model.backend = "numpy"
    assert isinstance(model, NumericModel)
    assert "NumericModel" in repr(model)


def test_make_function_shapes_and_batches():
    q1, q2 = me.dynamicsymbols("q1 q2")
    q1d = q1.diff(t)
    a = sm.Symbol("a")
    f = make_function([[q1, q2], a], q1 * a + sm.sin(q2))
    assert isinstance(f(np.array([1.0, 0.0]), 2.0), float)
    assert f([1.0, 0.0], 2.0) == pytest.approx(2.0)
    Q = np.array([[1.0, 0.0], [2.0, np.pi / 2]])
    np.testing.assert_allclose(f(Q, 2.0), [2.0, 5.0])
    g = make_function([[q1, q2, q1d]], sm.Matrix([[q1, q2], [q1d, q1 * q2]]))
    np.testing.assert_allclose(g([1.0, 2.0, 3.0]), [[1.0, 2.0], [3.0, 2.0]])
    assert g(np.ones((4, 3))).shape == (4, 2, 2)
    h = make_function([[q1, q2]], [sm.Matrix([q1, q2]), q1 + q2])
    vec, s = h([1.0, 2.0])
    np.testing.assert_allclose(vec, [[1.0], [2.0]])
    assert s == pytest.approx(3.0)
    vecs, ss = h(np.ones((5, 2)))
    assert vecs.shape == (5, 2, 1) and ss.shape == (5,)


@pytest.mark.parametrize("backend", available_backends())
def test_make_function_backends_and_piecewise(backend):
    x = sm.Symbol("x")
    f = make_function([[x]], [sm.Abs(x), sm.Piecewise((1.0, x > 0), (-1.0, True)), sm.exp(x) * 2],
                      backend=backend)
    np.testing.assert_allclose(f([-2.0]), [2.0, -1.0, 2 * np.exp(-2.0)])
    np.testing.assert_allclose(f(np.array([[-2.0], [3.0]])),
                               [[2.0, -1.0, 2 * np.exp(-2.0)], [3.0, 1.0, 2 * np.exp(3.0)]])


@pytest.mark.skipif("llvm" not in available_backends(), reason="symengine without LLVM")
def test_disk_cache_reuses_compiled_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    x, y = sm.symbols("x y")
    expr = [sm.sin(x) * y + sm.cos(x * y) ** 2, x / (1 + y**2)]
    f1 = make_function([[x, y]], expr)
    files = list((tmp_path / "kernels").rglob("*.pkl"))
    assert len(files) == 1
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    calls = []
    real = codegen.se.Lambdify
    monkeypatch.setattr(codegen.se, "Lambdify", lambda *a, **k: calls.append(1) or real(*a, **k))
    f2 = make_function([[x, y]], expr)
    assert calls == []                                  # loaded from disk, not recompiled
    np.testing.assert_allclose(f1([0.3, 1.7]), f2([0.3, 1.7]))
    # a corrupt entry is ignored and rebuilt
    files[0].write_bytes(b"garbage")
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    f3 = make_function([[x, y]], expr)
    assert calls == [1]
    np.testing.assert_allclose(f3([0.3, 1.7]), f1([0.3, 1.7]))
    # renamed symbols with the same structure share the kernel
    a, b = sm.symbols("a b")
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    make_function([[a, b]], [e.xreplace({x: a, y: b}) for e in expr])
    assert calls == [1]
    # cache=False compiles without touching the disk
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    make_function([[x, y]], [x * y * 7], cache=False)
    assert len(list((tmp_path / "kernels").rglob("*.pkl"))) == 1


def test_consistent_state_errors():
    q1, q2, u1 = me.dynamicsymbols("q1 q2 u1")
    r = sm.Symbol("r")
    # q2 = q1**2 ... constraint q2**2 - q1 = 0 : d/dq2 = 2 q2 (singular at q2 = 0)
    eom = symbody.EquationsOfMotion(
        [q1], [u1], kinematic=[q1.diff(t) - u1, q2.diff(t) - u1 / (2 * q2)],
        dynamic=(sm.Matrix([[1]]), sm.Matrix([r * q1])),
        constraints=symbody.ConstraintEquations(q_dep=[q2], holonomic=[q2**2 - q1]))
    model = compile(eom)
    x = model.consistent_state([4.0, 1.0, 0.0], [1.0])
    np.testing.assert_allclose(x, [4.0, 2.0, 0.0])
    x = model.consistent_state([4.0, -1.0, 0.0], [1.0])
    np.testing.assert_allclose(x, [4.0, -2.0, 0.0])           # the branch nearest the guess
    with pytest.raises(SingularConstraintError, match="q2"):
        model.consistent_state([1.0, 0.0, 0.0], [1.0])
    with pytest.raises(InputError, match="could not solve"):
        model.consistent_state([-1.0, 0.5, 0.0], [1.0])       # no real solution


def test_auxiliary_forces_match_book():
    """Noncontributing-forces chapter: rod tensions of the two-particle pendulum."""
    import json
    from pathlib import Path

    from symbody import models
    ref = json.loads((Path(__file__).parents[1] / "data" / "book_reference.json").read_text())
    ref = ref["noncontributing_double_pendulum"]
    model = compile(models.two_particle_pendulum().eom)
    p = dict(zip(ref["p_order"], ref["p"]))
    q, u = np.radians(ref["q0_deg"]), np.radians(ref["u0_deg_s"])
    udot, lam = model.accelerations(q, u, p)
    assert lam.shape == (0,)
    forces = model.auxiliary_forces(q, u, udot, p)
    np.testing.assert_allclose([*udot, *forces], ref["ud1_ud2_T1_T2"], rtol=1e-8)


def test_chain_matches_sympy_kanes_method_oracle():
    """3-link pendulum on a cart from sympy's KanesMethod: rhs and rhs_many vs lambdify."""
    q = me.dynamicsymbols("q:4")
    u = me.dynamicsymbols("u:4")
    m = sm.symbols("m:4")
    l = sm.symbols("l:3")
    g = sm.Symbol("g")
    N = me.ReferenceFrame("N")
    P = me.Point("P0")
    P.set_vel(N, u[0] * N.x)
    bodies, loads = [me.Particle("Pa0", P, m[0])], [(P, -m[0] * g * N.y)]
    for i in range(3):
        B = N.orientnew(f"B{i}", "Axis", [q[i + 1], N.z])
        B.set_ang_vel(N, u[i + 1] * N.z)
        Pn = P.locatenew(f"P{i + 1}", l[i] * B.x)
        Pn.v2pt_theory(P, N, B)
        bodies.append(me.Particle(f"Pa{i + 1}", Pn, m[i + 1]))
        loads.append((Pn, -m[i + 1] * g * N.y))
        P = Pn
    kd = [qi.diff(t) - ui for qi, ui in zip(q, u)]
    km = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=kd)
    km.kanes_equations(bodies, loads)
    constants = [*m, *l, g]
    eom = symbody.EquationsOfMotion(q, u, kinematic=kd, dynamic=(km.mass_matrix, -km.forcing),
                                    constants=constants)
    model = compile(eom)
    oracle = sm.lambdify((q, u, constants), km.rhs(), cse=True)
    rng = np.random.default_rng(5)
    p = np.r_[rng.uniform(0.5, 2, 4), rng.uniform(0.5, 2, 3), 9.81]
    X = rng.normal(size=(6, 8))
    expected = np.array([np.ravel(oracle(x[:4], x[4:], p)) for x in X])
    got = np.array([model.rhs(0.0, x, p) for x in X])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.rhs_many(0.0, X, p), expected, rtol=1e-9, atol=1e-9)
