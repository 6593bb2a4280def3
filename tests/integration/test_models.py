"""The model zoo: every model builds, has consistent defaults, and is right.

"Right" means: the seed models reproduce the textbook's numbers
(tests/data/book_reference.json, copied from the project's reference values),
and every model's equations agree with sympy.physics.mechanics.KanesMethod
formed on the same kinematics, at a consistent random state.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import symbody as sb
from symbody.errors import InputError
from symbody.models.base import solve_dependent_coordinates
from symbody.models.chaplygin_sleigh import chaplygin_sleigh_system
from symbody.models.double_rod_pendulum import double_rod_pendulum_system
from symbody.models.four_bar import four_bar_system
from symbody.models.n_link_pendulum_on_cart import n_link_pendulum_on_cart_system
from symbody.models.rolling_disc import rolling_disc_system
from symbody.models.snakeboard import snakeboard_system
from symbody.models.two_particle_pendulum import two_particle_pendulum_system

t = me.dynamicsymbols._t
BOOK = json.loads((Path(__file__).parents[1] / "data" / "book_reference.json").read_text())

NAMES = ["four-bar", "snakeboard", "double-rod-pendulum", "two-particle-pendulum",
         "n-link-pendulum-on-cart", "rolling-disc", "chaplygin-sleigh"]
# (n, M, p, m, number of auxiliary speeds)
SIZES = {"four-bar": (1, 2, 1, 2, 0), "snakeboard": (5, 0, 3, 2, 0),
         "double-rod-pendulum": (3, 0, 3, 0, 0), "two-particle-pendulum": (2, 0, 2, 0, 2),
         "n-link-pendulum-on-cart": (4, 0, 4, 0, 0), "rolling-disc": (5, 0, 3, 2, 0),
         "chaplygin-sleigh": (3, 0, 2, 1, 0)}
SYSTEMS = {"four-bar": four_bar_system, "snakeboard": snakeboard_system,
           "double-rod-pendulum": double_rod_pendulum_system,
           "two-particle-pendulum": two_particle_pendulum_system,
           "n-link-pendulum-on-cart": lambda: n_link_pendulum_on_cart_system(3, force=True),
           "rolling-disc": rolling_disc_system, "chaplygin-sleigh": chaplygin_sleigh_system}

_MODELS: dict = {}


def model_named(name: str):
    if name not in _MODELS:
        _MODELS[name] = sb.models.get(name)
    return _MODELS[name]


# --------------------------------------------------------------------------- numeric helpers
class Evaluator:
    """Numeric evaluation of an EquationsOfMotion's blocks (independent of the compile layer).

    x = [q, u_ind];  u_dep from B u + b = 0;  q' = qdot_solution;
    [[M_d, B_a^T], [B_a, 0]] [u'; lam] = [-g_d; -b_a].
    """

    def __init__(self, eom, constants: dict, extra=()):
        self.eom = eom
        self.q, self.u = list(eom.q), list(eom.u)
        self.c = list(constants)
        self.p = np.array([constants[s] for s in self.c], dtype=float)
        self.extra = list(extra)
        self.args = [self.q, self.u, self.c, self.extra, [t]]
        self._cache: dict = {}

    def fn(self, exprs):
        key = id(exprs)
        if key not in self._cache:
            self._cache[key] = (exprs, sm.lambdify(self.args, exprs, "numpy", cse=True))
        return self._cache[key][1]

    def ev(self, exprs, q, u, tt=0.0, extra=()):
        return np.asarray(self.fn(exprs)(q, u, self.p, list(extra), [tt]), dtype=float)

    def full_speeds(self, q, u_ind, tt=0.0):
        e = self.eom
        u = np.concatenate([np.asarray(u_ind, float), np.zeros(e.m)])
        if e.m:
            B = self.ev(e.velocity_matrix, q, u, tt)
            b = self.ev(e.velocity_rest, q, u, tt).reshape(-1)
            u[e.p:] = np.linalg.solve(B[:, e.p:], -(b + B[:, :e.p] @ u[:e.p]))
        return u

    def accelerations(self, q, u, tt=0.0):
        e = self.eom
        Md = self.ev(e.dynamic_mass, q, u, tt)
        gd = self.ev(e.dynamic_rest, q, u, tt).reshape(-1)
        if e.m:
            Ba = self.ev(e.acceleration_matrix, q, u, tt)
            ba = self.ev(e.acceleration_rest, q, u, tt).reshape(-1)
            K = np.block([[Md, Ba.T], [Ba, np.zeros((e.m, e.m))]])
            sol = np.linalg.solve(K, np.concatenate([-gd, -ba]))
            return sol[:len(self.u)], sol[len(self.u):]
        return np.linalg.solve(Md, -gd), np.zeros(0)

    def rhs(self, tt, x):
        N = len(self.q)
        q = np.asarray(x[:N], float)
        u = self.full_speeds(q, x[N:], tt)
        qd = self.ev(self.eom.qdot_solution, q, u, tt).reshape(-1)
        ud, _ = self.accelerations(q, u, tt)
        return np.concatenate([qd, ud[:self.eom.p]])


def initial_vector(model):
    return np.array([model.initial_state[s] for s in model.eom.states], dtype=float)


def evaluate_expr(expr, model, q, u):
    f = sm.lambdify([list(model.eom.q), list(model.eom.u), list(model.constants)], expr, "numpy")
    return np.asarray(f(q, u, [model.constants[s] for s in model.constants]), dtype=float)


def assert_close(actual, expected, rtol=1e-10, what=""):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    err = float(np.max(np.abs(actual - expected))) if expected.size else 0.0
    assert err <= rtol * scale, f"{what}: max error {err:.3e} (scale {scale:.3g})\n{actual}\n{expected}"


# --------------------------------------------------------------------------- registry
def test_registry_lists_every_model():
    names = sb.models.available()
    assert set(NAMES + ["whipple-bicycle", "rimless-wheel", "simplest-walker", "musculoskeletal-arm",
                        "n-four-bar", "iftomm-pendulum", "andrews-squeezer", "bricard",
                        "flyball-governor", "ball-on-plane", "block-on-slope", "cylinder-on-slope",
                        "jumper", "planar-hopper", "planar-biped"]) == set(names)
    assert all(isinstance(d, str) and d for d in names.values())


def test_unknown_model_and_option_raise_input_error():
    with pytest.raises(InputError, match="known models: .*four-bar"):
        sb.models.get("three-bar")
    with pytest.raises(InputError, match="wheels"):
        sb.models.get("four-bar", wheels=3)
    assert sb.models.get("chaplygin_sleigh").name == "chaplygin-sleigh"


def test_whipple_is_registered_and_stays_a_function():
    import symbody.models.whipple_bicycle  # noqa: F401  (a direct submodule import must not rebind it)

    assert callable(sb.models.whipple_bicycle)
    assert "whipple-bicycle" in sb.models.available()


# --------------------------------------------------------------------------- every model
@pytest.mark.parametrize("name", NAMES)
def test_model_sizes_defaults_and_drawing(name):
    model = model_named(name)
    e = model.eom
    assert (e.n, e.M, e.p, e.m, len(e.u_aux)) == SIZES[name]
    assert e.dynamic_mass.shape == (e.p + e.m, e.p + e.m) and not e.dynamic_reduced
    assert set(model.constants) == set(e.constants)
    assert set(model.initial_state) == set(e.q) | set(e.u_ind)
    assert model.t_span[1] > model.t_span[0]
    assert model.description and model.references

    q = np.array([model.initial_state[s] for s in e.q])
    if e.M:
        fh = sm.Matrix(e.holonomic).xreplace({**dict(zip(e.q, q, strict=True)), **model.constants})
        assert max(abs(float(v)) for v in fh) < 1e-10
    ev = Evaluator(e, model.constants)
    u = ev.full_speeds(q, [model.initial_state[s] for s in e.u_ind])
    assert np.all(np.isfinite(ev.rhs(0.0, initial_vector(model))))

    allowed = set(e.q) | set(model.constants)
    for pname, expr in model.drawing.points.items():
        assert sm.Matrix(expr).shape == (3, 1), pname
        used = set().union(*(me.find_dynamicsymbols(c) for c in expr)) | sm.Matrix(expr).free_symbols
        assert used - {t} <= allowed, (pname, used - allowed)
        assert np.all(np.isfinite(evaluate_expr(sm.Matrix(expr), model, q, u)))
    for expr in ([model.energy] if model.energy is not None else []) + list(model.outputs.values()):
        assert np.isfinite(evaluate_expr(expr, model, q, u)).all()


@pytest.mark.parametrize("name", NAMES)
def test_with_constants(name):
    model = model_named(name)
    first = sorted(model.constants, key=str)[0]
    changed = model.with_constants(**{str(first): 1.5 * model.constants[first]})
    assert changed.constants[first] == pytest.approx(1.5 * model.constants[first])
    assert model.constants[first] != changed.constants[first]  # the original is untouched
    with pytest.raises(InputError) as info:
        model.with_constants(not_a_parameter=1.0)
    assert "not_a_parameter" in str(info.value) and str(first) in str(info.value)
    with pytest.raises(InputError, match=str(first)):
        model.with_constants(**{str(first): float("nan")})


def test_four_bar_with_other_lengths_keeps_the_loop_closed():
    model = model_named("four-bar").with_constants(l_a=0.7)
    e = model.eom
    fh = sm.Matrix(e.holonomic).xreplace({**{s: model.initial_state[s] for s in e.q}, **model.constants})
    assert max(abs(float(v)) for v in fh) < 1e-10
    assert model.initial_state[e.q[1]] != pytest.approx(model_named("four-bar").initial_state[e.q[1]])


# --------------------------------------------------------------------------- book values
def test_four_bar_reproduces_the_book():
    ref = BOOK["four_bar"]
    model = model_named("four-bar")
    e = model.eom
    q = np.radians(ref["q0_deg"])
    assert_close([model.initial_state[s] for s in e.q], q, 1e-9, "four-bar q0")
    assert [str(s) for s in model.constants] == ["l_a", "l_b", "l_c", "l_n", "m", "g"]
    assert_close(list(model.constants.values()), ref["p"], 1e-15, "four-bar constants")
    ev = Evaluator(e, model.constants)
    x0 = initial_vector(model)
    assert_close(ev.rhs(0.0, x0), ref["rhs_at_x0"], 1e-7, "four-bar rhs")
    # the book's reduced Md, gd (Md = Frs.jacobian(u1'), sign: Md u' + gd = 0 with Fr* = -M u')
    u = ev.full_speeds(x0[:3], x0[3:])
    Md, gd = ev.ev(e.dynamic_mass, x0[:3], u), ev.ev(e.dynamic_rest, x0[:3], u).reshape(-1)
    B = ev.ev(e.velocity_matrix, x0[:3], u)
    ba = ev.ev(e.acceleration_rest, x0[:3], u).reshape(-1)
    A = np.vstack([np.eye(1), -np.linalg.solve(B[:, 1:], B[:, :1])])
    c = np.concatenate([[0.0], -np.linalg.solve(B[:, 1:], ba)])
    Md_red, gd_red = A.T @ Md @ A, A.T @ (gd + Md @ c)
    assert_close([-Md_red[0, 0], -gd_red[0]], ref["Md_gd_at_x0_recomputed"], 1e-7, "four-bar Md, gd")
    energy = evaluate_expr(model.energy, model, x0[:3], u)
    assert float(energy) == pytest.approx(ref["tight_reference_recomputed"]["energy_J"], abs=1e-6)
    assert model.t_span == tuple(ref["t_span"])


def test_snakeboard_reproduces_the_book():
    ref = BOOK["snakeboard"]
    model = model_named("snakeboard")
    e = model.eom
    assert [str(s) for s in e.states] == ["q1(t)", "q2(t)", "q3(t)", "q4(t)", "q5(t)",
                                          "u3(t)", "u4(t)", "u5(t)"]
    assert_close(initial_vector(model), ref["q0"] + ref["us0_u3_u4_u5"], 1e-15, "snakeboard x0")
    assert [str(s) for s in model.constants] == ref["p_order"]
    assert_close(list(model.constants.values()), ref["p"], 1e-15, "snakeboard constants")
    ev = Evaluator(e, model.constants)
    x0 = initial_vector(model)
    assert_close(ev.rhs(1.0, x0), ref["rhs_at_x0_t1_recomputed"], 1e-7, "snakeboard rhs")
    u = ev.full_speeds(x0[:5], x0[5:])
    inv = ref["invariants_recomputed"]
    assert float(evaluate_expr(model.energy, model, x0[:5], u)) == pytest.approx(inv["kinetic_energy_J"], abs=1e-7)
    assert float(evaluate_expr(model.outputs["omega_B"], model, x0[:5], u)) == pytest.approx(
        inv["omega_B = 2 u3/l + u4"], abs=1e-6)
    assert float(evaluate_expr(model.outputs["omega_C"], model, x0[:5], u)) == pytest.approx(
        inv["omega_C = 2 u3/l + u5"], abs=1e-6)


def test_double_rod_pendulum_reproduces_the_book():
    ref = BOOK["double_rod_pendulum"]
    model = model_named("double-rod-pendulum")
    e = model.eom
    q0 = [math.radians(ref["q0_deg_deg_m"][0]), math.radians(ref["q0_deg_deg_m"][1]), ref["q0_deg_deg_m"][2]]
    assert_close(initial_vector(model), q0 + ref["u0"], 1e-15, "double-rod x0")
    by_name = {str(s): v for s, v in model.constants.items()}
    names = {"g": "g", "kl": "k_l", "kt": "k_t", "l": "l", "m": "m"}
    assert [by_name[names[k]] for k in ref["p_order"]] == ref["p"]
    ev = Evaluator(e, model.constants)
    x0 = initial_vector(model)
    assert_close(ev.rhs(ref["t0"], x0), ref["rhs_at_x0"], 1e-7, "double-rod rhs")
    u = x0[3:]
    # the book's Md = Frs.jacobian(u') = -M_d; gd = Frs|u'=0 + Fr = -g_d
    assert_close(-ev.ev(e.dynamic_mass, x0[:3], u), ref["Md_at_x0_sign_convention_Frs_jacobian"], 1e-7, "Md")
    assert_close(-ev.ev(e.dynamic_rest, x0[:3], u).reshape(-1), ref["gd_at_x0"], 1e-7, "gd")
    assert float(evaluate_expr(model.energy, model, x0[:3], u)) == pytest.approx(
        ref["initial_energy_J_recomputed"], abs=1e-7)


def test_two_particle_pendulum_tensions_from_auxiliary_equations():
    ref = BOOK["noncontributing_double_pendulum"]
    model = model_named("two-particle-pendulum")
    e = model.eom
    assert [str(s) for s in model.constants] == ref["p_order"]
    assert_close(list(model.constants.values()), ref["p"], 1e-15, "constants")
    assert [str(f) for f in e.noncontributing] == ["T1(t)", "T2(t)"]
    assert e.auxiliary.shape == (2, 1)
    for expr in list(e.dynamic_rest) + list(e.dynamic_mass):
        assert not any(expr.has(f) for f in e.noncontributing)
    x0 = initial_vector(model)
    assert_close(x0, list(np.radians(ref["q0_deg"])) + list(np.radians(ref["u0_deg_s"])), 1e-15, "x0")
    ev = Evaluator(e, model.constants)
    ud, _ = ev.accelerations(x0[:2], x0[2:])
    # the auxiliary equations are linear in T1, T2: solve them numerically
    aux = sm.Matrix(e.auxiliary).xreplace(dict(zip(e.udot, map(sm.Float, ud), strict=True)))
    jac = aux.jacobian(list(e.noncontributing))
    rest = aux.xreplace(dict.fromkeys(e.noncontributing, 0))
    ev_aux = Evaluator(e, model.constants)
    J = ev_aux.ev(jac, x0[:2], x0[2:])
    r = ev_aux.ev(rest, x0[:2], x0[2:]).reshape(-1)
    tensions = np.linalg.solve(J, -r)
    assert_close(np.concatenate([ud, tensions]), ref["ud1_ud2_T1_T2"], 1e-7, "u', T")
    outs = [float(evaluate_expr(model.outputs[k], model, x0[:2], x0[2:])) for k in ("T1", "T2")]
    assert_close(outs, ref["ud1_ud2_T1_T2"][2:], 1e-7, "tension outputs")


@pytest.mark.parametrize("key, name, tt", [("four_bar", "four-bar", 0.0),
                                             ("snakeboard", "snakeboard", 1.0),
                                             ("double_rod_pendulum", "double-rod-pendulum", 0.1)])
def test_compiled_models_reproduce_the_book(key, name, tt):
    compile_ = sb.compile
    ref = BOOK[key]
    expected = ref.get("rhs_at_x0") or ref["rhs_at_x0_t1_recomputed"]
    model = model_named(name)
    numeric = compile_(model.eom, backend="numpy", cache=False)
    x0 = initial_vector(model)
    p = numeric.constants_array({s: model.constants[s] for s in model.constants})
    assert_close(numeric.rhs(tt, x0, p), expected, 1e-7, f"{name} compiled rhs")


@pytest.mark.parametrize("name", NAMES)
def test_compiled_rhs_agrees_with_the_equations(name):
    compile_ = sb.compile
    model = model_named(name)
    numeric = compile_(model.eom, backend="numpy", cache=False)
    p = numeric.constants_array({s: model.constants[s] for s in model.constants})
    x0 = initial_vector(model)
    ev = Evaluator(model.eom, model.constants)
    assert_close(numeric.rhs(0.3, x0, p), ev.rhs(0.3, x0), 1e-10, f"{name} compiled rhs")
    if name == "two-particle-pendulum":
        ref = BOOK["noncontributing_double_pendulum"]
        q, u = x0[:2], x0[2:]
        udot, _ = numeric.accelerations(q, u, p)
        assert_close(numeric.auxiliary_forces(q, u, udot, p), ref["ud1_ud2_T1_T2"][2:], 1e-7, "T1, T2")


# --------------------------------------------------------------------------- against SymPy
def _random_consistent_state(name, km_sym, system, rng, constants):
    """q, u (all speeds, u_dep from the constraints) of the sympy KanesMethod ordering."""
    q_syms, u_syms = list(km_sym.q), list(km_sym.u)
    q = dict(zip(q_syms, rng.uniform(-1.0, 1.0, len(q_syms)), strict=True))
    if system.q_dep:
        q.update(solve_dependent_coordinates(
            system.configuration_constraints, system.q_dep,
            {**constants, **{s: q[s] for s in system.q_ind}}, [0.1, -2.6]))
    u = dict(zip(u_syms, rng.uniform(-1.0, 1.0, len(u_syms)), strict=True))
    if system.u_dep:
        B = np.array(km_sym._k_nh.xreplace({**q, **constants}).evalf(), dtype=float)
        b = np.array(km_sym._f_nh.xreplace({**q, **constants}).evalf(), dtype=float).reshape(-1)
        p = len(system.u_ind)
        uind = np.array([u[s] for s in u_syms[:p]])
        udep = np.linalg.solve(B[:, p:], -b - B[:, :p] @ uind)  # sympy: k_nh u + f_nh = 0
        u.update(dict(zip(u_syms[p:], udep, strict=True)))
    return q, u


@pytest.mark.parametrize("name", NAMES)
def test_matches_sympy_kanes_method(name):
    """mass_matrix_full / forcing_full and x' agree with SymPy's KanesMethod (1e-10 relative)."""
    rng = np.random.default_rng(7)
    system, _ = SYSTEMS[name]()
    km_sym, _ = system.form(me.KanesMethod)
    km_sb, eom = system.form()
    constants = dict(model_named(name).constants)
    q, u = _random_consistent_state(name, km_sym, system, rng, constants)
    extra = sorted(set(eom.noncontributing) | set(eom.specifieds), key=str)
    extra_vals = {s: float(v) for s, v in zip(extra, rng.uniform(-1, 1, len(extra)), strict=True)}

    def numeric(M):
        M = sm.Matrix(M).xreplace(extra_vals).xreplace({**q, **u}).xreplace(constants)
        return np.array(M.evalf(), dtype=float)

    for attr in ("mass_matrix_full", "forcing_full"):
        assert_close(numeric(getattr(km_sb, attr)), numeric(getattr(km_sym, attr)), 1e-10, f"{name} {attr}")
    if system.u_aux:
        ud = {d: sm.Float(v) for d, v in zip(km_sym.u.diff(t), rng.uniform(-1, 1, len(km_sym.u)), strict=True)}
        assert_close(numeric(km_sb.auxiliary_eqs.xreplace(ud)), numeric(km_sym.auxiliary_eqs.xreplace(ud)),
                     1e-10, f"{name} auxiliary equations")

    # the canonical equations (what gets compiled) give SymPy's x' = MM_full^-1 F_full
    MM, F = numeric(km_sym.mass_matrix_full), numeric(km_sym.forcing_full).reshape(-1)
    xdot_sym = np.linalg.solve(MM, F)
    ev = Evaluator(eom, constants, extra=extra)
    qv = np.array([q[s] for s in eom.q])
    uv = np.array([u[s] for s in eom.u])
    ev_extra = [extra_vals[s] for s in extra]
    qd = ev.ev(eom.qdot_solution, qv, uv, 0.0, ev_extra).reshape(-1)
    Md = ev.ev(eom.dynamic_mass, qv, uv, 0.0, ev_extra)
    gd = ev.ev(eom.dynamic_rest, qv, uv, 0.0, ev_extra).reshape(-1)
    if eom.m:
        Ba = ev.ev(eom.acceleration_matrix, qv, uv, 0.0, ev_extra)
        ba = ev.ev(eom.acceleration_rest, qv, uv, 0.0, ev_extra).reshape(-1)
        K = np.block([[Md, Ba.T], [Ba, np.zeros((eom.m, eom.m))]])
        ud = np.linalg.solve(K, np.concatenate([-gd, -ba]))[:len(uv)]
    else:
        ud = np.linalg.solve(Md, -gd)
    sym_order = list(km_sym.q) + list(km_sym.u)
    ours = dict(zip(list(eom.q) + list(eom.u), np.concatenate([qd, ud]), strict=True))
    assert_close([ours[s] for s in sym_order], xdot_sym, 1e-10, f"{name} x'")


# --------------------------------------------------------------------------- physics
@pytest.mark.parametrize("name, tf", [("rolling-disc", 2.0), ("chaplygin-sleigh", 3.0),
                                      ("snakeboard", 3.0), ("two-particle-pendulum", 1.0)])
def test_energy_is_conserved_along_a_simulation(name, tf):
    model = model_named(name)
    ev = Evaluator(model.eom, model.constants)
    sol = solve_ivp(ev.rhs, (0.0, tf), initial_vector(model), rtol=1e-10, atol=1e-10, method="DOP853")
    assert sol.status == 0
    N = len(model.eom.q)
    energies = []
    for x in (sol.y[:, 0], sol.y[:, -1]):
        u = ev.full_speeds(x[:N], x[N:])
        energies.append(float(evaluate_expr(model.energy, model, x[:N], u)))
    assert energies[1] == pytest.approx(energies[0], rel=1e-7, abs=1e-8)


def test_chaplygin_sleigh_straightens_out():
    model = model_named("chaplygin-sleigh")
    ev = Evaluator(model.eom, model.constants)
    sol = solve_ivp(ev.rhs, model.t_span, initial_vector(model), rtol=1e-9, atol=1e-9)
    u1, u3 = sol.y[3, -1], sol.y[4, -1]
    assert abs(u3) < 1e-2 and u1 > 1.0  # yaw rate decays; forward speed takes the energy


@pytest.mark.parametrize("name, op", [("n-link-pendulum-on-cart", {}), ("rolling-disc", {"v": 3.0})])
def test_operating_points_are_equilibria(name, op):
    model = model_named(name)
    point = model.operating_point(op)
    e = model.eom
    assert set(e.q) | set(e.u_ind) <= set(point)
    ev = Evaluator(e, model.constants)
    x = np.array([point[s] for s in e.states])
    xdot = ev.rhs(0.0, x)
    assert_close(xdot[len(e.q):], np.zeros(e.p), 1e-12, f"{name} u' at the operating point")
    u = ev.full_speeds(x[:len(e.q)], x[len(e.q):])
    assert_close(u, [point[s] for s in e.u], 1e-12, "dependent speeds")
    if name == "rolling-disc":
        faster = model.with_constants(v=5.0, r=0.5)
        assert faster.operating_point({"v": 5.0})[e.u_ind[1]] == pytest.approx(10.0)
        assert faster.op_parameters["v"] == 5.0


def test_n_link_pendulum_options():
    for n in (1, 2, 5):
        model = sb.models.get("n-link-pendulum-on-cart", n=n)
        assert (model.eom.n, model.eom.p) == (n + 1, n + 1)
        assert len(model.constants) == 2 * n + 2
        assert len(model.drawing.lines[1]) == n + 1
    forced = sb.models.n_link_pendulum_on_cart(n=2, force=True)
    assert [str(s) for s in forced.eom.specifieds] == ["F(t)"]
    assert forced.energy is None
    for bad in (0, -1, 2.5, "three"):
        with pytest.raises(InputError, match="n"):
            sb.models.n_link_pendulum_on_cart(n=bad)


def test_drawing_rejects_unknown_points():
    with pytest.raises(InputError, match="nowhere"):
        sb.models.Drawing(points={"a": sm.Matrix([0, 0, 0])}, lines=[["a", "nowhere"]])


def test_rolling_disc_upright_roll_is_stable_only_above_the_critical_speed():
    """Thin disc: the upright straight roll is stable iff v^2 > g r / 3 (Kane & Levinson)."""
    model = model_named("rolling-disc")
    ev = Evaluator(model.eom, model.constants)
    r, g = (model.constants[model.constant(k)] for k in ("r", "g"))
    critical = math.sqrt(g * r / 3)

    def largest_real_part(v):
        op = model.operating_point({"v": v})
        x = np.array([op[s] for s in model.eom.states])
        h, n = 1e-6, len(x)
        J = np.column_stack([(ev.rhs(0.0, x + h * e) - ev.rhs(0.0, x - h * e)) / (2 * h) for e in np.eye(n)])
        return float(np.max(np.linalg.eigvals(J).real))

    assert largest_real_part(0.8 * critical) > 0.5
    assert abs(largest_real_part(1.3 * critical)) < 1e-4


@pytest.mark.parametrize("ratio", [0.5, 0.99, 1.01, 2.0])
def test_rolling_disc_lean_eigenvalues_match_the_closed_form_around_the_critical_speed(ratio):
    """Thin uniform disc (I_diameter = m r^2/4, I_axis = m r^2/2) rolling upright at speed v:
    the lean equation (5/4) r^2 phi'' = (g r - 3 v^2) phi (lean moment against the gyroscopic
    and centripetal couple of the heading rate 2 v phi / r) gives the one nonzero eigenvalue pair
    lambda^2 = 4 (g r - 3 v^2) / (5 r^2): real pair below v_c = sqrt(g r / 3), imaginary above."""
    model = model_named("rolling-disc")
    r, g = (model.constants[model.constant(k)] for k in ("r", "g"))
    v = ratio * math.sqrt(g * r / 3)
    op = model.operating_point({"v": v})
    A, _ = sb.linearize(sb.compile(model.eom), np.array([op[s] for s in model.eom.states]), model.constants)
    ev = np.linalg.eigvals(A)
    nonzero = np.sort_complex(ev[np.abs(ev) > 1e-6])
    expected = np.sqrt(complex(4 * (g * r - 3 * v**2) / (5 * r**2)))
    # linearize is exact to round-off and the pair is simple: 1e-9 relative is far tighter than
    # the 1% change of |lambda| between 0.99 v_c and 1.01 v_c, and the zero eigenvalues
    # (heading, position, spin) stay below 1e-6 in magnitude
    assert len(nonzero) == 2, ev
    np.testing.assert_allclose(nonzero, np.sort_complex(np.array([-expected, expected])), rtol=1e-9)
