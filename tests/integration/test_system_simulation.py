"""System-built models compiled with ``symbody.compile(system)`` and simulated, against
SymPy + scipy: ``form_eoms(eom_method=sympy's KanesMethod)``, ``lambdify`` of
mass_matrix_full / forcing_full (and the activation ODEs), ``solve_ivp``.

Both integrate with rtol 1e-11 / atol 1e-12 (DOP853 for the reference), so the
trajectories agree to about 1e-10; the test asks for 1e-8 (the issue's measure).
Constrained models: symbody projects q onto f_h = 0 after each step, the reference
integrates all of q and u as an ODE; at this tolerance the drift of the reference stays
below 1e-9, so the two still agree to 1e-8.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import symbody as sb
from systems import sympy_system_examples as ex

T_END = 1.0
TIMES = np.linspace(0.0, T_END, 11)


def sympy_reference(system_builder, extra_loads=None, extra_states=None, lagrange=False):
    """SymPy + scipy: the trajectory of [q, u, extra states] at TIMES."""
    system, d = system_builder(lagrange=True) if lagrange else system_builder()
    if extra_loads:
        system.add_loads(*extra_loads(system))
    system.form_eoms(eom_method=me.LagrangesMethod if lagrange else me.KanesMethod)
    acts = d.get("actuators", [])
    xe = [a.x[0] for a in acts] + list((extra_states or {}).keys())
    fe = [a.rhs()[0] for a in acts] + list((extra_states or {}).values())
    rs = list(d["r"])
    qs = list(system.q)
    us = [q.diff(me.dynamicsymbols._t) for q in qs] if lagrange else list(system.u)
    syms = sorted(set().union(*[sm.Matrix(m).free_symbols for m in
                                (system.mass_matrix_full, system.forcing_full, sm.Matrix(fe or [0]))])
                  - {me.dynamicsymbols._t}, key=str)
    plain = [sm.Dummy() for _ in qs + us]
    to_plain = dict(zip([*[u for u in us if isinstance(u, sm.Derivative)]], plain[len(qs):]))
    M = sm.Matrix(system.mass_matrix_full).xreplace(to_plain)
    F = sm.Matrix(system.forcing_full).xreplace(to_plain)
    G = sm.Matrix(fe or [0]).xreplace(to_plain)
    args = (qs + (plain[len(qs):] if lagrange else us), xe, rs, syms)
    f = sm.lambdify(args, (M, F, G), cse=True)
    p = [d["p"].get(s, 0.0) for s in syms]
    r = [d["r"][s] for s in rs]
    n = len(qs) + len(us)
    nm = M.shape[0]

    def rhs(t, x):
        Mv, Fv, Gv = f(list(x[:len(qs) + len(us)]), list(x[n:]), r, p)
        sol = np.linalg.solve(np.asarray(Mv, float), np.asarray(Fv, float).ravel())
        return np.concatenate([sol[:len(qs) + len(us)], np.ravel(Gv)[:len(xe)]]) if nm >= n \
            else None

    x0 = [d["x0"][s] for s in qs] + [d["x0"][s] for s in us]
    x0 += [d["extra"].get(s, 0.1) for s in xe]
    ref = solve_ivp(rhs, (0.0, T_END), x0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=TIMES)
    assert ref.success
    return ref.y.T, qs, us, xe


@pytest.mark.parametrize("name", ["double_pendulum", "cart_pole", "cart_pole_constrained", "four_bar",
                                  "spring_damper_duffing", "muscle_arm"])
def test_simulation_matches_sympy_and_scipy(name):
    build = ex.BUILDERS[name]
    expected, qs, us, xe = sympy_reference(build)
    system, d = build()
    model = sb.compile(system, specifieds=d.get("specifieds"))
    assert model.states[len(model.states) - len(xe):] == tuple(xe)
    x0 = {**d["x0"], **d["extra"]}
    P = {s: d["p"].get(s, 0.0) for s in model.constants}
    r = [d["r"][s] for s in model.specifieds]
    sol = sb.simulate(model, (0.0, T_END), x0, P, specifieds=r,
                      solver=sb.Solver(rtol=1e-11, atol=1e-12), t_eval=TIMES)
    assert sol.success, sol.message
    for j, s in enumerate(list(qs) + list(us) + list(xe)):
        err = np.max(np.abs(sol[s] - expected[:, j]))
        assert err < 1e-8, f"{name}: {s} differs from SymPy + scipy by {err:.2e}"
    for s in xe:                                        # by name as well as by symbol
        assert np.array_equal(sol[str(s.func)], sol[s])
    for s in model.specifieds:
        assert np.allclose(sol[s], d["r"][s])


def _torque_on_crank(system):
    a = me.dynamicsymbols("a")
    crank = [b for b in system.bodies if b.name == "crank"][0]
    return [(crank.frame, a * system.z)]


def _torque_on_upper(system):
    a = me.dynamicsymbols("a")
    upper = [b for b in system.bodies if b.name == "upper"][0]
    return [(upper.frame, a * system.z)]


@pytest.mark.parametrize("case", ["four_bar_kane", "double_pendulum_lagrange", "four_bar_lagrange"])
def test_extra_state_with_constraints_and_lagrange(case):
    """A torque a(t) with first-order dynamics a' = (2 sin q1 - a) / 0.3 on a constrained
    (four-bar) and a Lagrange model: integrated like q and u, equal to SymPy + scipy."""
    a = me.dynamicsymbols("a")
    builder = ex.four_bar if case.startswith("four_bar") else ex.double_pendulum
    loads = _torque_on_crank if case.startswith("four_bar") else _torque_on_upper
    lagrange = case.endswith("lagrange")
    system, d = builder(lagrange=True) if lagrange else builder()
    q1 = system.q[0]
    extra = {a: (2 * sm.sin(q1) - a) / sm.Rational(3, 10)}
    expected, qs, us, xe = sympy_reference(builder, loads, extra, lagrange=lagrange)
    system.add_loads(*loads(system))
    if lagrange:
        system.form_eoms(eom_method=sb.LagrangesMethod)
        eom = system.eom_method.to_eom(extra_states=extra, q_ind=system.q_ind, q_dep=system.q_dep)
    else:
        eom = None
    model = sb.compile(eom if eom is not None else system, extra_states=None if lagrange else extra)
    assert model.states[-1] == a
    x0 = dict(d["x0"])
    if lagrange:   # Lagrange's speeds are u_<q name>
        x0 = {(k if not isinstance(k, sm.Derivative) else model.speeds[list(system.q).index(k.expr)]): v
              for k, v in x0.items()}
    x0[a] = 0.1
    P = {s: d["p"].get(s, 0.0) for s in model.constants}
    sol = sb.simulate(model, (0.0, T_END), x0, P, solver=sb.Solver(rtol=1e-11, atol=1e-12),
                      t_eval=TIMES)
    assert sol.success, sol.message
    got = np.column_stack([sol.q, sol.u, sol["a"]])
    err = np.max(np.abs(got - expected))
    assert err < 1e-8, f"{case}: differs from SymPy + scipy by {err:.2e}"


def test_linearization_with_extra_states_matches_sympy_jacobian():
    """A, B of the musculoskeletal arm in [q, u, a_biceps, a_triceps] against the Jacobian of
    SymPy's explicit right-hand side (central differences: agreement to 1e-6 relative)."""
    model = sb.models.musculoskeletal_arm()
    numeric = sb.compile(model.eom)
    op = dict(model.initial_state)
    a_b, a_t = numeric.extra_states
    op.update({a_b: 0.3, a_t: 0.2})
    e_vals = [0.5, 0.1]
    A, B = sb.linearize(numeric, op, model.constants, r=e_vals)
    assert A.shape == (4, 4) and B.shape == (4, 2)

    system, d = ex.muscle_arm()
    system.form_eoms(eom_method=me.KanesMethod)
    acts = d["actuators"]
    x = sm.Matrix(list(system.q) + list(system.u) + [act.x[0] for act in acts])
    r = sm.Matrix([act.r[0] for act in acts])
    f = sm.Matrix(system.rhs()).col_join(sm.Matrix([act.rhs()[0] for act in acts]))
    vals = {**{k: v for k, v in model.constants.items()}, **{s: op[s] for s in x},
            **dict(zip(r, e_vals))}
    A_ref = np.array(f.jacobian(x).xreplace(vals).doit().evalf(), dtype=float)
    B_ref = np.array(f.jacobian(r).xreplace(vals).doit().evalf(), dtype=float)
    scale = max(1.0, np.max(np.abs(A_ref)))
    assert np.max(np.abs(A - A_ref)) < 1e-6 * scale
    assert np.max(np.abs(B - B_ref)) < 1e-6 * max(1.0, np.max(np.abs(B_ref)))


def test_readme_system_example_runs():
    """The System section of docs/guides/models.md runs as printed (shorter simulation)."""
    import re
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "models.md"
    section = guide.read_text().split("## Models built with SymPy's `System`", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace("(0.0, 3.0)", "(0.0, 0.6)")
    namespace: dict = {}
    exec(compile(code, "docs/guides/models.md", "exec"), namespace)
    sol, model = namespace["sol"], namespace["model"]
    assert sol.success and model.states[-2:] == tuple(model.extra_states)
    assert sol["a_biceps"][-1] > 0.1 and sol["e_biceps"][-1] == 0.8   # the biceps was excited
    assert namespace["A"].shape == (4, 4)
