"""symbody.export_c: the generated C compiled alone (cc -std=c99 -O2 -Wall -Werror, libm only)
equals the model's own evaluation, and the README's RK4 example keeps the four-bar closed."""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import Particle, Point, ReferenceFrame, dynamicsymbols

import symbody as sb
from export.helpers import build_program, build_shared, ptr, zoo_model
from symbody.errors import InputError
from symbody.export.c_switching import DEFAULT_RATIO
from symbody.formatting import symbol_name

CASES = [("four-bar", {}), ("n-link-pendulum-on-cart", {"n": 3, "force": True}),
         ("snakeboard", {})]


def _export(tmp_path, name, options, **kw):
    zoo, model = zoo_model(name, **options)
    paths = sb.export_c(model, tmp_path, name="mdl", constants=zoo.constants,
                        initial_state=zoo.initial_state, **kw)
    return zoo, model, paths


@pytest.mark.parametrize("name, options", CASES, ids=[c[0] for c in CASES])
def test_exported_rhs_equals_model_rhs_at_random_states(tmp_path, name, options):
    zoo, model, paths = _export(tmp_path, name, options, outputs=zoo_model(name, **options)[0].outputs)
    lib = build_shared(paths.source, tmp_path / "mdl.so")
    L = model.layout
    P = model.constants_array(zoo.constants)
    rng = np.random.default_rng(7)
    rhs, speeds, outputs = lib.mdl_rhs, lib.mdl_speeds, lib.mdl_outputs
    for _ in range(10):
        t = float(rng.uniform(0, 2))
        x = rng.uniform(-1.5, 1.5, size=L.nx)
        r = rng.normal(size=max(L.s, 1))
        xd, u = np.empty(L.nx), np.empty(L.o)
        status = rhs(ctypes.c_double(t), ptr(x), ptr(P), ptr(r), ptr(xd))
        ratio = _dependent_set_ratio(model, x, P, t)
        if ratio < DEFAULT_RATIO:     # near singular (simulate switched long before): refused
            assert status == 5, ratio
            continue
        assert status == 0, ratio
        ref = model.rhs(t, x, P, r[:L.s] if L.s else None)
        np.testing.assert_allclose(xd, ref, rtol=1e-12, atol=1e-12 * (1 + np.abs(ref).max()))
        assert speeds(ctypes.c_double(t), ptr(x), ptr(P), ptr(r), ptr(u)) == 0
        full = model.full_speeds(x[:L.N], x[L.N:L.nxm], P, t, r[:L.s] if L.s else None)
        np.testing.assert_allclose(u, full, rtol=1e-12, atol=1e-13)
    # mass matrix and forcing, holonomic and velocity constraints, outputs
    x = rng.uniform(-1, 1, size=L.nx)
    r = rng.normal(size=max(L.s, 1))
    S, s = np.empty(L.K * L.K), np.empty(L.K)
    assert lib.mdl_mass_forcing(ctypes.c_double(0.5), ptr(x), ptr(P), ptr(r), ptr(S), ptr(s)) == 0
    np.testing.assert_allclose(np.linalg.solve(S.reshape(L.K, L.K), s)[:L.p],
                               model.rhs(0.5, x, P, r[:L.s] if L.s else None)[L.N:L.nxm],
                               rtol=1e-10, atol=1e-12)
    if L.M:
        fh, J = np.empty(L.M), np.empty(L.M * L.N)
        lib.mdl_holonomic(ctypes.c_double(0.5), ptr(x), ptr(P), ptr(fh), ptr(J))
        f_ref, J_ref = model.holonomic(x[:L.N], P, 0.5)
        np.testing.assert_allclose(fh, f_ref, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(J.reshape(L.M, L.N), J_ref, rtol=1e-13, atol=1e-14)
    if L.m:
        B, b = np.empty(L.m * L.o), np.empty(L.m)
        lib.mdl_velocity_constraints(ctypes.c_double(0.5), ptr(x), ptr(P), ptr(r), ptr(B), ptr(b))
        B_ref, b_ref = model.velocity_constraints(x[:L.N], P, 0.5, r[:L.s] if L.s else None)
        np.testing.assert_allclose(B.reshape(L.m, L.o), B_ref, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(b, b_ref, rtol=1e-13, atol=1e-14)
    if zoo.outputs:
        y = np.empty(len(zoo.outputs))
        assert outputs(ctypes.c_double(0.5), ptr(x), ptr(P), ptr(r), ptr(y)) == 0
        u = model.full_speeds(x[:L.N], x[L.N:L.nxm], P, 0.5, r[:L.s] if L.s else None)
        values = {**dict(zip(model.coordinates, x[:L.N])), **dict(zip(model.speeds, u)),
                  **dict(zip(model.constants, P)), **dict(zip(model.specifieds, r[:L.s]))}
        ref = [float(sm.sympify(e).subs(values)) for e in zoo.outputs.values()]
        np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)


def _dependent_set_ratio(model, x, P, t):
    """|det B[:, u_dep]| / |det B[:, best]| at x (simulate's gauge; 1 without constraints)."""
    from symbody.compilation.linear_algebra import determinant, pivoted_columns
    if not model.layout.m:
        return 1.0
    B = model.constraint_matrices(x[:model.layout.N], P, t)[1]
    dep = list(model.default_partition.dependent_speeds)
    return abs(determinant(B[:, dep])) / abs(determinant(B[:, list(pivoted_columns(B)[0])]))


def test_header_names_and_sizes(tmp_path):
    zoo, model, paths = _export(tmp_path, "n-link-pendulum-on-cart", {"n": 3, "force": True})
    header = paths.header.read_text()
    assert "#define MDL_NX 8 " in header and "#define MDL_NR 1 " in header
    assert "int mdl_rhs(double t, const double *x, const double *p, const double *r, double *xdot);" \
        in header
    assert '#define MDL_INPUT_NAMES {"F", 0}' in header
    assert '#define MDL_STATE_NAMES {"q0", "q1", "q2", "q3", "u0", "u1", "u2", "u3", 0}' in header
    assert '#define MDL_CONSTANT_NAMES {"g", "l0", "l1", "l2", "m0", "m1", "m2", "m3", 0}' in header
    source = paths.source.read_text()
    assert "const char *const mdl_input_names[] = MDL_INPUT_NAMES;" in source
    for forbidden in ("Python.h", "lapack", "dgesv", "cblas"):
        assert forbidden not in source


def test_readme_example_integrates_the_four_bar_with_its_loop_closed(tmp_path):
    zoo, model, paths = _export(tmp_path, "four-bar", {})
    readme = paths.readme.read_text()
    assert paths.example.read_text() in readme         # the README shows the example compiled here
    exe = build_program([paths.example, paths.source], tmp_path / "example")
    run = subprocess.run([str(exe), "5", "1e-3"], capture_output=True, text=True, check=True)
    values = dict(line.split() for line in run.stdout.splitlines())
    x_c = np.array([float(values[symbol_name(s)]) for s in model.states])
    assert float(values["max_residual"]) < 1e-10
    x0 = model.state_array(zoo.initial_state)
    traj = sb.simulate(model, (0.0, 5.0), x0, zoo.constants,
                       solver=sb.Solver(rtol=1e-11, atol=1e-12), t_eval=[5.0])
    np.testing.assert_allclose(x_c, traj.x[-1], atol=1e-6)


def _redundant_particle():
    x, y = dynamicsymbols("x y")
    ux, uy = dynamicsymbols("ux uy")
    t = dynamicsymbols._t
    m, g = sm.symbols("m g")
    N = ReferenceFrame("N")
    P = Point("O").locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, ux * N.x + uy * N.y)
    fh = {"circle": x**2 + y**2 - 1, "diagonal": y - x}
    qd = {x.diff(t): ux, y.diff(t): uy}
    km = sb.KanesMethod(N, [x], [ux], kd_eqs=[x.diff(t) - ux, y.diff(t) - uy], q_dependent=[y],
                        configuration_constraints=fh, u_dependent=[uy],
                        velocity_constraints=[sm.diff(e, t).xreplace(qd) for e in fh.values()])
    km.kanes_equations([Particle("P", P, m)], [(P, -m * g * N.y)])
    return sb.compile(km.to_eom())


def test_refusals_name_the_feature(tmp_path):
    zoo, model = zoo_model("n-link-pendulum-on-cart", n=3, force=True)
    with pytest.raises(InputError, match="redundant constraint set"):
        sb.export_c(_redundant_particle(), tmp_path, name="m")
    with pytest.raises(InputError, match="C identifier"):
        sb.export_c(model, tmp_path, name="my-model")
    with pytest.raises(InputError, match=r"constants\['g'\] is a callable"):
        sb.export_c(model, tmp_path, name="m", constants={**{str(k): v for k, v in zoo.constants.items()},
                                                          "g": lambda t: 9.81})
    with pytest.raises(InputError, match="output 'bad' depends on"):
        sb.export_c(model, tmp_path, name="m", outputs={"bad": sm.Symbol("not_a_constant")})
    assert not list(tmp_path.iterdir())           # nothing written by a refused export


def test_reduced_dynamics_with_dependent_accelerations_in_an_output(tmp_path):
    """The seed snakeboard's hand-reduced M_d, g_d (u_dep = [u1, u2]): x' and an output of a
    dependent speed's derivative (u_dep' from B_a u' + b_a = 0) equal the model's."""
    from symbody.compat.sympy import TIME
    from systems import seed_eoms

    model = sb.compile(seed_eoms.snakeboard()["eom"])
    L = model.layout
    assert L.dynamic_reduced and L.m == 2
    dep = model.dependent_speeds[-1]
    paths = sb.export_c(model, tmp_path, name="snake", outputs={"ud_dep": dep.diff(TIME)})
    lib = build_shared(paths.source, tmp_path / "snake.so")
    rng = np.random.default_rng(3)
    P = rng.uniform(0.5, 2.0, L.c)
    checked = 0
    while checked < 5:
        x = rng.uniform(-1, 1, L.nx)
        xd, y = np.empty(L.nx), np.empty(1)
        status = lib.snake_rhs(ctypes.c_double(0.2), ptr(x), ptr(P), None, ptr(xd))
        if _dependent_set_ratio(model, x, P, 0.2) < DEFAULT_RATIO:
            assert status == 5
            continue
        checked += 1
        assert status == 0
        assert lib.snake_outputs(ctypes.c_double(0.2), ptr(x), ptr(P), None, ptr(y)) == 0
        ref = model.rhs(0.2, x, P)
        np.testing.assert_allclose(xd, ref, rtol=1e-12, atol=1e-13)
        udot, _ = model.accelerations(x[:L.N], x[L.N:], P, 0.2)
        np.testing.assert_allclose(y[0], udot[-1], rtol=1e-12, atol=1e-13)


def test_a_model_loaded_from_a_file_exports_its_stored_expressions(tmp_path):
    zoo, model = zoo_model("four-bar")
    loaded = sb.load_model(model.save(tmp_path / "four_bar.npz"))
    lib = build_shared(sb.export_c(loaded, tmp_path, name="fb").source, tmp_path / "fb.so")
    P = model.constants_array(zoo.constants)
    x = model.state_array(zoo.initial_state) + 0.1
    xd = np.empty(model.layout.nx)
    assert lib.fb_rhs(ctypes.c_double(0.0), ptr(x), ptr(P), None, ptr(xd)) == 0
    np.testing.assert_allclose(xd, model.rhs(0.0, x, P), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("kind", ["tree", "nonholonomic"])
def test_random_models_with_inputs(tmp_path, kind):
    """Random trees (dampers, an input torque) and nonholonomic bases (an input, dependent
    speeds): the exported rhs equals model.rhs, time and inputs included."""
    from symbody.testing.random_models import RandomModelOptions, random_model

    rm = random_model(4, 3, kind, RandomModelOptions(inputs=1, damping=kind == "tree"))
    model = sb.compile(rm.to_eom())
    L = model.layout
    lib = build_shared(sb.export_c(model, tmp_path, name="rnd").source, tmp_path / "rnd.so")
    P = model.constants_array({k: v for k, v in rm.constants.items() if k in model.constants})
    rng = np.random.default_rng(4)
    x0 = model.state_array(rm.state)
    for _ in range(5):
        t = float(rng.uniform(0, 3))
        x = x0 + 0.05 * rng.normal(size=L.nx)
        r = rng.normal(size=L.s)
        xd = np.empty(L.nx)
        assert lib.rnd_rhs(ctypes.c_double(t), ptr(x), ptr(P), ptr(r), ptr(xd)) == 0
        ref = model.rhs(t, x, P, r)
        np.testing.assert_allclose(xd, ref, rtol=1e-12, atol=1e-12 * (1 + np.abs(ref).max()))


def test_moving_pivot_rhs_and_projection_at_time_t(tmp_path):
    """Time in the holonomic constraint and an input in the dynamics: rhs equal to model.rhs,
    and name_project lands on the constraint circle around the pivot at that time."""
    from systems.moving_pivot import P1, hanging_y, pendulum_eom

    model = sb.compile(pendulum_eom())
    lib = build_shared(sb.export_c(model, tmp_path, name="pivot").source, tmp_path / "p.so")
    P = model.constants_array(P1)
    for t in (0.0, 0.7, 2.3):
        x = np.array([0.3, -0.7, 0.4])
        r = np.array([0.25])
        xd = np.empty(3)
        assert lib.pivot_rhs(ctypes.c_double(t), ptr(x), ptr(P), ptr(r), ptr(xd)) == 0
        np.testing.assert_allclose(xd, model.rhs(t, x, P, r), rtol=1e-12, atol=1e-13)
        assert lib.pivot_project(ctypes.c_double(t), ptr(x), ptr(P), ctypes.c_double(1e-12),
                                 ctypes.c_int(50)) == 0
        np.testing.assert_allclose(x[1], hanging_y(t, 0.3), atol=1e-13)
        assert x[0] == 0.3                               # q_ind held


def test_large_work_space_from_the_heap(tmp_path, monkeypatch):
    """Work arrays above STACK_DOUBLES come from malloc (small thread stacks in importers):
    the same numbers."""
    from symbody.export import c_code

    monkeypatch.setattr(c_code, "STACK_DOUBLES", 4)
    zoo, model = zoo_model("four-bar")
    paths = sb.export_c(model, tmp_path, name="big")
    assert "malloc" in paths.source.read_text()
    lib = build_shared(paths.source, tmp_path / "big.so")
    P = model.constants_array(zoo.constants)
    x = model.state_array(zoo.initial_state) + 0.05
    xd, S, s = np.empty(model.layout.nx), np.empty(model.layout.K ** 2), np.empty(model.layout.K)
    assert lib.big_rhs(ctypes.c_double(0.0), ptr(x), ptr(P), None, ptr(xd)) == 0
    np.testing.assert_allclose(xd, model.rhs(0.0, x, P), rtol=1e-12, atol=1e-13)
    assert lib.big_mass_forcing(ctypes.c_double(0.0), ptr(x), ptr(P), None, ptr(S), ptr(s)) == 0
    np.testing.assert_allclose(np.linalg.solve(S.reshape(5, 5), s)[0], xd[3], rtol=1e-12)


def test_rhs_derivative_of_a_closed_loop_with_an_acceleration_output(tmp_path):
    """export_c(derivatives=True): name_rhs_derivative of the four-bar (dependent speeds and
    an output of u1') equals central differences of the exported rhs and outputs."""
    from symbody.compat.sympy import TIME

    zoo, model = zoo_model("four-bar")
    L = model.layout
    u1 = model.speeds[0]
    paths = sb.export_c(model, tmp_path, name="fb", outputs={"a1": u1.diff(TIME)},
                        derivatives=True)
    lib = build_shared(paths.source, tmp_path / "fb.so")
    P = model.constants_array(zoo.constants)
    x = model.state_array(zoo.initial_state)
    rng = np.random.default_rng(2)
    dx = rng.normal(size=L.nx)
    dxdot, du, dy, dfh = np.empty(L.nx), np.empty(L.o), np.empty(1), np.empty(L.M)
    assert lib.fb_rhs_derivative(ctypes.c_double(0.3), ptr(x), ptr(P), None, ptr(dx), None,
                                 ptr(dxdot), ptr(du), ptr(dy), ptr(dfh)) == 0

    def evaluate(xx):
        xd, u, y = np.empty(L.nx), np.empty(L.o), np.empty(1)
        fh = np.empty(L.M)
        assert lib.fb_rhs(ctypes.c_double(0.3), ptr(xx), ptr(P), None, ptr(xd)) == 0
        assert lib.fb_speeds(ctypes.c_double(0.3), ptr(xx), ptr(P), None, ptr(u)) == 0
        assert lib.fb_outputs(ctypes.c_double(0.3), ptr(xx), ptr(P), None, ptr(y)) == 0
        lib.fb_holonomic(ctypes.c_double(0.3), ptr(xx), ptr(P), ptr(fh), None)
        return np.concatenate([xd, u, y, fh])

    h = 1e-6
    fd = (evaluate(x + h * dx) - evaluate(x - h * dx)) / (2 * h)
    exact = np.concatenate([dxdot, du, dy, dfh])
    np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


@pytest.mark.parametrize("name, options", [("n-link-pendulum-on-cart", {"n": 2}),
                                           ("chaplygin-sleigh", {})])
def test_a_mass_matrix_that_is_not_definite_takes_the_general_solve(tmp_path, name, options):
    """Negative masses make M_d negative definite: the straight-line L D L^T (or null-space)
    solve of the exported rhs meets a negative pivot and hands over to the LU of the whole
    system, as model.rhs does (dposv, then dgesv): the same x'."""
    zoo, model = zoo_model(name, **options)
    lib = build_shared(sb.export_c(model, tmp_path, name="neg").source, tmp_path / "neg.so")
    names = [str(c) for c in model.constants]
    P = model.constants_array(zoo.constants)
    P = np.where([n.startswith("m") for n in names], -P, P)
    x = model.state_array(zoo.initial_state) + 0.05
    xd = np.empty(model.layout.nx)
    assert lib.neg_rhs(ctypes.c_double(0.0), ptr(x), ptr(P), None, ptr(xd)) == 0
    ref = model.rhs(0.0, x, P)
    np.testing.assert_allclose(xd, ref, rtol=1e-11, atol=1e-12 * np.abs(ref).max())
