"""Kane's sums collected over bodies with equal partial velocities (issue 12, formation at scale).

symbody forms MM_rk = sum_(v_r, v_k) (sum of the masses) v_r . v_k and the inertia rows the
same way, so that an n-link chain's equations hold n^2 terms, not n^3.  These tests check the
collected forms against SymPy's KanesMethod at random states (fixed seeds), on chains where
the collection happens in every part: particles (translational sums and the rest of m a),
rigid links turning about parallel axes (inertia matrices summed), a link turning about
another axis, a load on every point, and an auxiliary speed.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from systems.kane_systems import n_link_pendulum_on_cart
from systems.numeric_oracle import evaluate

t = me.dynamicsymbols._t


def _rigid_chain(mod, n: int, aux: bool = False):
    """A chain of n rigid links on a cart; link k turns relative to link k-1 (about z, the last
    one about its x axis), so every link below joint r has the same angular partial velocity."""
    q = me.dynamicsymbols(f"q:{n + 1}")
    u = me.dynamicsymbols(f"u:{n + 1}")
    m = sm.symbols(f"m:{n + 1}")
    L = sm.symbols(f"l:{n}")
    Ix = sm.symbols(f"Ix:{n}")
    Iz = sm.symbols(f"Iz:{n}")
    g, k = sm.symbols("g k")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P0", q[0] * N.x)
    ua = me.dynamicsymbols("ua") if aux else None
    P.set_vel(N, u[0] * N.x + (ua * N.y if aux else 0))
    bodies = [me.Particle("cart", P, m[0])]
    loads = [(P, -k * q[0] * N.x - m[0] * g * N.y)]
    if aux:
        loads.append((P, sm.Symbol("R") * N.y))
    prev_frame, prev_point = N, P
    for i in range(n):
        axis = prev_frame.x if i == n - 1 and n > 2 else prev_frame.z
        B = prev_frame.orientnew(f"B{i}", "Axis", [q[i + 1], axis])
        B.set_ang_vel(prev_frame, u[i + 1] * (B.x if axis == prev_frame.x else B.z))
        C = prev_point.locatenew(f"C{i}", L[i] / 2 * B.y)
        C.v2pt_theory(prev_point, N, B)
        E = prev_point.locatenew(f"E{i}", L[i] * B.y)
        E.v2pt_theory(prev_point, N, B)
        bodies.append(me.RigidBody(f"link{i}", C, B, m[i + 1],
                                   (me.inertia(B, Ix[i], Ix[i] / 2, Iz[i]), C)))
        loads.append((C, -m[i + 1] * g * N.y))
        prev_frame, prev_point = B, E
    kd = [q[i].diff(t) - u[i] for i in range(n + 1)]
    km = mod.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=kd, u_auxiliary=[ua] if aux else None)
    km.kanes_equations(bodies, loads)
    return km, q, u, list(m) + list(L) + list(Ix) + list(Iz) + [k]


def _compare(ours, ref, q, u, constants, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(3):
        values = {c: rng.uniform(0.5, 1.5) for c in constants}
        values[sm.Symbol("g")] = 9.81
        values.update({x: rng.uniform(-1.0, 1.0) for x in list(q) + list(u)})
        for name in ("mass_matrix", "forcing"):
            a = evaluate(getattr(ours, name), values)
            b = evaluate(getattr(ref, name), values)
            # round-off only: the collected and SymPy's summed forms add the same terms in
            # another order (entries of order 1-100)
            assert np.allclose(a, b, rtol=1e-11, atol=1e-11 * max(1.0, np.abs(b).max())), name


def test_particle_chain_collected_and_equal_to_sympy():
    ours, info = n_link_pendulum_on_cart(sb, n=6)
    ref, _ = n_link_pendulum_on_cart(me, n=6)
    q, u = list(ours.q), list(ours.u)
    rng = np.random.default_rng(12)
    for _ in range(3):
        values = dict(info["consts"])
        values.update({x: rng.uniform(-1.0, 1.0) for x in q + u + info.get("specified", [])})
        for name in ("mass_matrix", "forcing"):
            a, b = evaluate(getattr(ours, name), values), evaluate(getattr(ref, name), values)
            # round-off only (see _compare)
            assert np.allclose(a, b, rtol=1e-11, atol=1e-11 * max(1.0, np.abs(b).max())), name
    # collected: M[1, 1] (first link) is (m1 + ... + m6) l0^2 (one product, not six)
    M = ours.mass_matrix
    ms = sm.symbols("m1:7")
    l0 = sm.Symbol("l0")
    assert sm.expand(M[1, 1] - sum(ms) * l0**2) == 0
    assert sm.count_ops(M[1, 1]) <= 7
    ops_ours = sum(sm.count_ops(e) for e in list(M) + list(ours.forcing))
    ops_ref = sum(sm.count_ops(e) for e in list(ref.mass_matrix) + list(ref.forcing))
    assert ops_ours < ops_ref


@pytest.mark.parametrize("aux", [False, True])
def test_rigid_chain_collected_and_equal_to_sympy(aux):
    n = 4
    ours, q, u, constants = _rigid_chain(sb, n, aux)
    ref, *_ = _rigid_chain(me, n, aux)
    _compare(ours, ref, q, u, constants, seed=4 + aux)
    if aux:
        values = {c: 0.7 for c in constants} | {sm.Symbol("g"): 9.81, sm.Symbol("k"): 2.0}
        values.update({x: 0.3 for x in list(q) + list(u)})
        values.update({x.diff(t): 0.2 for x in u})
        values[sm.Symbol("R")] = 1.1
        a = evaluate(ours.auxiliary_eqs, values)
        b = evaluate(ref.auxiliary_eqs, values)
        # round-off only
        assert np.allclose(a, b, rtol=1e-11, atol=1e-11)
    # the links below joint 1 (about parallel z axes) share one summed inertia term
    ops_ours = sum(sm.count_ops(e) for e in ours.mass_matrix)
    ops_ref = sum(sm.count_ops(e) for e in ref.mass_matrix)
    assert ops_ours <= ops_ref


def test_chain_sizes_grow_like_n_squared():
    """The unreduced mass matrix and forcing of the n-link chain have O(n^2) distinct nodes:
    doubling n multiplies their DAG size by about 4 (n^3 sums would give 8)."""
    def dag_size(n):
        km, _ = n_link_pendulum_on_cart(sb, n=n)
        d = km._se
        roots = [e for row in d["MM"] for e in row] + list(d["nonMM"]) + list(d["Fr"])
        seen, stack = set(), list(roots)
        while stack:
            e = stack.pop()
            if e in seen:
                continue
            seen.add(e)
            stack.extend(e.args)
        return len(seen)

    small, large = dag_size(8), dag_size(16)
    assert large / small < 5.0, (small, large)


def test_to_eom_and_compile_stay_in_symengine():
    """formation -> to_eom -> compile reads the symengine forms (no SymPy dynamic block is
    built); the SymPy block, built on first access, is the same equations; the compiled
    right-hand side equals the numpy backend's (compiled from the SymPy block) at random
    states; a pickled eom carries the SymPy block."""
    import copy
    import pickle

    ours, info = n_link_pendulum_on_cart(sb, n=4)
    eom = ours.to_eom()
    assert eom.symengine_dynamics() is not None
    model = sb.compile(eom, backend="c")
    assert eom._dynamic_mass is None and eom._dynamic_rest is None      # never converted
    reference = sb.compile(eom, backend="numpy")                          # converts on access
    assert eom.dynamic_mass == ours._unreduced_sympy()[0]
    assert eom.dynamic_rest == ours._unreduced_sympy()[1]
    p = np.array([info["consts"][c] for c in model.constants])
    rng = np.random.default_rng(21)
    for _ in range(5):
        x = rng.uniform(-1.0, 1.0, len(model.states))
        r = rng.uniform(-1.0, 1.0, len(model.specifieds))      # the cart's force f(t)
        a, b = model.rhs(0.0, x, p, r), reference.rhs(0.0, x, p, r)
        # round-off only: the same equations, compiled by gcc and evaluated by numpy
        assert np.allclose(a, b, rtol=1e-11, atol=1e-11)
    # a copy shares the symengine block; replacing a block drops it (the other one stays)
    twin = copy.copy(ours.to_eom())
    twin.dynamic_rest = twin.dynamic_rest * 2
    assert twin.symengine_dynamics() is None and twin.dynamic_mass == eom.dynamic_mass
    back = pickle.loads(pickle.dumps(ours.to_eom()))
    assert back.symengine_dynamics() is None and back.dynamic_rest == eom.dynamic_rest
