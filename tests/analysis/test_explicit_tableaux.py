"""The explicit pairs of analysis/simulation/explicit_tableaux.py (Tsit5, Vern6).

Checked: every order condition of the method, of its embedded estimate and of its
interpolant (the elementary weights of all rooted trees, exactly in rationals for Verner's
pair), the convergence orders measured with fixed steps on a nonlinear problem with a known
solution (step and dense output), the stability boundaries the stiffness test uses, and that
``Solver(method=...)`` takes them (compiled steps against scipy's Python step in
tests/analysis/test_native_steps.py).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np
import pytest

import symbody as sb
from symbody.analysis.simulation.explicit_tableaux import TSIT5_DECIMAL, VERN6_EXACT, Tsit5, Vern6
from symbody.analysis.simulation.stiffness import StiffnessMonitor
from symbody.errors import InputError


@cache
def trees(n: int) -> tuple:
    """The rooted trees with n nodes, each a sorted tuple of its root's subtrees."""
    if n == 1:
        return ((),)
    found = set()

    def forests(m, smallest):          # multisets of trees with m nodes in all
        if m == 0:
            yield ()
            return
        for k in range(1, m + 1):
            for tree in trees(k):
                if (k, tree) < smallest:
                    continue
                for rest in forests(m - k, (k, tree)):
                    yield (tree, *rest)

    for forest in forests(n - 1, (0, ())):
        found.add(tuple(sorted(forest)))
    return tuple(sorted(found))


def size(tree) -> int:
    return 1 + sum(size(child) for child in tree)


def gamma(tree) -> int:
    g = size(tree)
    for child in tree:
        g *= gamma(child)
    return g


def stage_weights(tree, A, one):
    """g(t)_i = Π_children (A g(child))_i (one: the vector of ones)."""
    g = list(one)
    for child in tree:
        gc = stage_weights(child, A, one)
        Ag = [sum(a * x for a, x in zip(row, gc)) for row in A]
        g = [x * y for x, y in zip(g, Ag)]
    return g


def defects(A, b, order, theta=1):
    """bᵀ g(t) - θ^|t| / γ(t) for every tree up to ``order`` nodes."""
    one = [type(b[0])(1)] * len(b)
    out = []
    for n in range(1, order + 1):
        for tree in trees(n):
            phi = sum(bi * gi for bi, gi in zip(b, stage_weights(tree, A, one)))
            out.append(phi - type(b[0])(theta) ** n / gamma(tree))
    return out


def test_tree_counts():
    assert [len(trees(n)) for n in range(1, 8)] == [1, 1, 2, 4, 9, 20, 48]


def extended(cls):
    """(A, b, b̂, C) over the s + 1 stages (the last one f(t + h, y₁): the FSAL row A = b)."""
    s = cls.n_stages
    A = np.zeros((s + 1, s + 1))
    A[:s, :cls.A.shape[1]] = cls.A
    A[s, :s] = cls.B
    b = np.append(cls.B, 0.0)
    return A, b, b - cls.E, np.append(cls.C, 1.0)


def vern6_exact_tables():
    E = VERN6_EXACT
    A = [row[:] for row in E["A"]]
    b = list(E["B"]) + [Fraction(0)] * 3
    bhat = [bi - ei for bi, ei in zip(b, E["E"] + [Fraction(0)] * 3)]
    return A, b, bhat, E["C"], E["P"]


def test_vern6_order_conditions_exact():
    A, b, bhat, C, P = vern6_exact_tables()
    assert all(sum(row) == c for row, c in zip(A, C))            # cᵢ = Σⱼ aᵢⱼ
    assert all(A[i][j] == 0 for i in range(12) for j in range(i, 12))     # explicit
    assert A[8][:9] == b[:9] and C[7] == C[8] == 1               # FSAL
    assert all(d == 0 for d in defects(A, b, 6))                 # order 6: all 37 trees
    assert any(d != 0 for d in defects(A, b, 7))
    assert all(d == 0 for d in defects(A, bhat, 5))              # the estimate: order 5
    assert any(d != 0 for d in defects(A, bhat, 6))
    for theta in (Fraction(1, 3), Fraction(7, 10), Fraction(1)):  # the interpolant: order 6
        w = [sum(P[i][k] * theta ** (k + 1) for k in range(6)) for i in range(12)]
        assert all(d == 0 for d in defects(A, w, 6, theta))
    w1 = [sum(row) for row in P]
    assert w1 == b


def test_vern6_double_tables_are_the_exact_ones_rounded():
    A, b, bhat, C, P = vern6_exact_tables()
    assert np.array_equal(Vern6.A, np.array([[float(x) for x in row[:8]] for row in A[:8]]))
    assert np.array_equal(Vern6.B, [float(x) for x in b[:8]])
    assert np.array_equal(Vern6.P, [[float(x) for x in row] for row in P])
    assert Vern6.A_EXTRA.shape == (3, 11) and np.array_equal(Vern6.C_EXTRA, [0.5, 0.828, 0.28])


def test_tsit5_order_conditions():
    """In rationals from the paper's decimals (the defects are then the decimals' precision,
    not double round-off), and the double tables are those decimals rounded."""
    d = TSIT5_DECIMAL
    s = 6
    A = [[Fraction(0)] * (s + 1) for _ in range(s + 1)]
    for i, row in enumerate(d["A"]):
        A[i][:len(row)] = [Fraction(x) for x in row]
    b = [Fraction(x) for x in d["B"]] + [Fraction(0)]
    A[s] = b[:]
    C = [Fraction(x) for x in d["C"]] + [Fraction(1)]
    bhat = [bi - Fraction(e) for bi, e in zip(b, d["E"])]
    P = [[Fraction(x) for x in row] for row in d["P"]]
    tiny = Fraction(1, 10 ** 17)
    assert max(abs(sum(row) - c) for row, c in zip(A, C)) < tiny
    assert max(abs(x) for x in defects(A, b, 5)) < tiny
    assert max(abs(x) for x in defects(A, b, 6)) > 1e-4
    assert max(abs(x) for x in defects(A, bhat, 4)) < tiny
    assert max(abs(x) for x in defects(A, bhat, 5)) > 1e-5
    for theta in (Fraction(3, 10), Fraction(4, 5), Fraction(1)):  # the interpolant: order 4
        w = [sum(P[i][k] * theta ** (k + 1) for k in range(4)) for i in range(s + 1)]
        assert max(abs(x) for x in defects(A, w, 4, theta)) < Fraction(1, 10 ** 15)
    assert max(abs(sum(row) - bi) for row, bi in zip(P, b)) < Fraction(1, 10 ** 15)
    Ad, bd, _, Cd = extended(Tsit5)
    assert np.array_equal(Ad, [[float(x) for x in row] for row in A])
    assert np.array_equal(Cd, [float(x) for x in C])
    assert np.array_equal(Tsit5.E, [float(x) for x in d["E"]])
    assert np.array_equal(Tsit5.P, [[float(x) for x in row] for row in P])


def kepler(t, y):
    r3 = (y[0] ** 2 + y[1] ** 2) ** 1.5
    return np.array([y[2], y[3], -y[0] / r3, -y[1] / r3])


def exact_orbit(t):
    """The orbit of eccentricity 0.5 from its pericentre (period 2π): Kepler's equation
    E - e sin E = t by Newton; q = (cos E - e, √(1-e²) sin E), v = q'. (n,) -> (4, n)"""
    e = 0.5
    M = np.atleast_1d(t) - 0.0
    E = M.copy()
    for _ in range(50):
        E = E - (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
    q = np.array([np.cos(E) - e, np.sqrt(1 - e * e) * np.sin(E)])
    v = np.array([-np.sin(E), np.sqrt(1 - e * e) * np.cos(E)]) / (1 - e * np.cos(E))
    return np.vstack([q, v])


@pytest.mark.parametrize("cls,order,dense,steps", [(Tsit5, 5, 4, (32, 64, 128)),
                                                   (Vern6, 6, 6, (32, 64, 128))])
def test_convergence_orders_fixed_steps(cls, order, dense, steps):
    """Fixed steps h (rtol huge: nothing rejected; first_step = max_step = h) over 6 time
    units (about one period, through the pericentre twice) of an eccentric Kepler orbit: the
    largest error at the step ends falls as h^order, and the dense output's at the steps'
    interior points as h^min(order, dense + 1) at least.  (Verner's pair has small error
    constants: its rates are 6.4-7.3 from 32 to 256 steps, where round-off takes over; a
    5th-order method would show 5.)"""
    y0 = exact_orbit(0.0)[:, 0]
    ends, mids = [], []
    for n in steps:
        h = 6.0 / n
        solver = cls(kepler, 0.0, y0, 6.0, rtol=1e3, atol=1e3, first_step=h, max_step=h)
        worst = at_ends = 0.0
        while solver.status == "running":
            solver.step()
            sol = solver.dense_output()
            tm = solver.t_old + np.array([0.21, 0.5, 0.83]) * (solver.t - solver.t_old)
            worst = max(worst, np.abs(sol(tm) - exact_orbit(tm)).max())
            at_ends = max(at_ends, np.abs(solver.y - exact_orbit(solver.t)[:, 0]).max())
        ends.append(at_ends)
        mids.append(worst)
    rates = np.log2(np.array(ends[:-1]) / np.array(ends[1:]))
    assert np.all((rates > order - 0.5) & (rates < order + 1.5)), rates
    dense_rates = np.log2(np.array(mids[:-1]) / np.array(mids[1:]))
    assert np.all(dense_rates > min(order, dense + 1) - 0.5), dense_rates


def stability_boundary(cls) -> float:
    """max x with |R(-x')| <= 1 on [0, x], R(z) = 1 + z bᵀ(I - zA)⁻¹1 (steps of 1e-3)."""
    s = cls.n_stages
    A = np.zeros((s, s))
    A[:, :cls.A.shape[1]] = cls.A
    x = 0.0
    while abs(1 - (x + 1e-3) * cls.B @ np.linalg.solve(np.eye(s) + (x + 1e-3) * A,
                                                        np.ones(s))) <= 1:
        x += 1e-3
    return x


@pytest.mark.parametrize("cls", [Tsit5, Vern6])
def test_stiffness_boundary_and_stages(cls):
    name = cls.__name__
    true = stability_boundary(cls)
    assert true - 0.1 < StiffnessMonitor.BOUNDARY[name] <= true
    assert StiffnessMonitor.STAGES[name] == cls.n_stages


def test_solver_takes_the_pairs():
    from symbody.compilation import compile
    from symbody.models import n_link_pendulum_on_cart

    zoo = n_link_pendulum_on_cart(2)
    model = compile(zoo.eom)
    P = model.constants_array(zoo.constants)
    x0 = model.state_array(zoo.initial_state)
    x0[1:3] += [0.3, -0.2]
    t_eval = np.linspace(0.0, 1.0, 11)
    ref = sb.simulate(model, (0.0, 1.0), x0, P, t_eval=t_eval,
                      solver=sb.Solver(rtol=1e-11, atol=1e-13, method="DOP853"))
    for method in ("Tsit5", "Vern6"):
        run = sb.simulate(model, (0.0, 1.0), x0, P, t_eval=t_eval,
                          solver=sb.Solver(rtol=1e-8, atol=1e-10, method=method))
        assert run.success
        np.testing.assert_allclose(run.x, ref.x, rtol=1e-6, atol=1e-7)
    with pytest.warns(UserWarning, match="round-off"):
        sb.simulate(model, (0.0, 0.01), x0, P, solver=sb.Solver(rtol=1e-12, method="Vern6"))
    with pytest.raises(InputError, match="Tsit5, Vern6"):
        sb.simulate(model, (0.0, 1.0), x0, P, solver=sb.Solver(method="Vern9"))
