"""The last pieces of SymPy's KanesMethod API (issue 34, item 6): ``to_linearizer()`` returns
symbody's own Linearizer, ``_form_fr``, the non-linear constraint error is SymPy's
``NonlinearError`` too, and ``constraint_solver="CRAMER"`` shapes the reduced forms.
SymPy's own classes are the oracle."""

from __future__ import annotations

import random

import pytest
import sympy as sm
import sympy.physics.mechanics as me
from sympy.solvers.solveset import NonlinearError

import symbody as sb
from systems.kane_systems import four_bar

t = me.dynamicsymbols._t


def _values(*exprs) -> dict:
    """Random numbers for every symbol and function of time in ``exprs`` (derivatives first)."""
    rng = random.Random(3)
    out = {}
    for e in exprs:
        for d in sorted(sm.Matrix(e).atoms(sm.Derivative), key=sm.count_ops, reverse=True):
            out.setdefault(d, rng.uniform(0.3, 1.2))
        for f in sm.Matrix(e).atoms(sm.Function):
            out.setdefault(f, rng.uniform(0.3, 1.2))
        for s in sm.Matrix(e).free_symbols - {t}:
            out.setdefault(s, rng.uniform(0.3, 1.2))
    return out


def _close(a, b, vals, tol=1e-10) -> bool:
    a, b = sm.Matrix(a), sm.Matrix(b)
    assert a.shape == b.shape
    da = me.msubs(a - b, vals).evalf()
    return max((abs(complex(x)) for x in da), default=0.0) < tol * max(
        1.0, max((abs(complex(x)) for x in me.msubs(b, vals).evalf()), default=1.0))


def test_to_linearizer_is_symbodys_with_sympys_interface():
    ours, info = four_bar(sb)
    ref, _ = four_bar(me)
    lin, lin_ref = ours.to_linearizer(), ref.to_linearizer()
    assert type(lin).__module__ == "symbody.formulation.linearizer"
    assert not isinstance(lin, me.linearize.Linearizer)
    vals = _values(*(getattr(lin_ref, k) for k in ("f_0", "f_1", "f_2", "f_3", "f_c", "f_v", "f_a")))
    for name in ("f_0", "f_1", "f_2", "f_3", "f_4", "f_c", "f_v", "f_a"):
        assert _close(getattr(lin, name), getattr(lin_ref, name), vals), name
    for name in ("q", "u", "q_i", "q_d", "u_i", "u_d", "r"):
        assert sm.Matrix(getattr(lin, name)) == sm.Matrix(getattr(lin_ref, name)), name
    # linearize at a point of the four-bar's configuration (u = 0): SymPy's Linearizer is the oracle
    q1, q2, q3 = info["q"]
    u1, u2, u3 = info["u"]
    # (u' as numbers too: both methods keep what is not given symbolic)
    op = [{q1: 0.17453292519943295, q2: 0.11476, q3: -2.642}, {u1: 0, u2: 0, u3: 0},
          {u1.diff(t): 0.3, u2.diff(t): -0.2, u3.diff(t): 0.1}]
    M, A, B = lin.linearize(op_point=op)
    M_ref, A_ref, B_ref = lin_ref.linearize(op_point=op)
    consts = info["consts"]
    assert _close(M.xreplace(consts), M_ref.xreplace(consts), {}, 1e-9)
    assert _close(A.xreplace(consts), A_ref.xreplace(consts), {}, 1e-9)
    assert B.shape == B_ref.shape == (0, 0)
    assert lin.perm_mat == lin_ref.perm_mat          # SymPy's is set by its linearize
    # and what the method's own linearize gives
    A2, B2, r2 = ours.linearize(op_point=op, A_and_B=True)
    A3, B3 = lin.linearize(op_point=op, A_and_B=True)
    # the same linearization: equal in value (their terms may come out in another order
    # when other tests ran first and SymPy's caches hold other forms)
    assert _close(A2.xreplace(consts), A3.xreplace(consts), {}, 1e-12) and r2 == lin.r


def test_to_linearizer_inputs_r():
    q, u = me.dynamicsymbols("q u")
    T = me.dynamicsymbols("T")
    m, g, l = sm.symbols("m g l")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q, N.z])
    A.set_ang_vel(N, u * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", -l * A.y)
    P.v2pt_theory(O, N, A)
    loads = [(P, -m * g * N.y), (A, T * N.z)]
    results = []
    for mod in (sb, me):
        km = mod.KanesMethod(N, [q], [u], [q.diff(t) - u])
        km.kanes_equations([me.Particle("P", P, m)], loads)
        lin = km.to_linearizer()
        results.append((lin.r, lin.linearize(op_point={q: 0, u: 0}, A_and_B=True)))
    (r, (A, B)), (r_ref, (A_ref, B_ref)) = results
    assert r == r_ref == sm.Matrix([T])
    assert sm.simplify(A - A_ref) == sm.zeros(2, 2) and sm.simplify(B - B_ref) == sm.zeros(2, 1)
    assert A == sm.Matrix([[0, 1], [-g / l, 0]])


def test_form_fr_equals_sympys():
    ours, info = four_bar(sb)
    ref, _ = four_bar(me)
    loads, loads_ref = ours._forcelist, ref._forcelist      # each on its own frames and points
    fr, fr_ref = ours._form_fr(loads), ref._form_fr(loads_ref)
    assert fr.shape == fr_ref.shape == (1, 1)
    assert _close(fr, fr_ref, _values(fr_ref))
    one, one_ref = ours._form_fr(loads[:1]), ref._form_fr(loads_ref[:1])
    assert not _close(one, fr_ref, _values(fr_ref))
    assert _close(one, one_ref, _values(fr_ref))
    for bad in ("bad input", []):
        with pytest.raises(ValueError, match="_form_fr"):
            ours._form_fr(bad)


def test_nonlinear_constraint_error_is_sympys_nonlinear_error():
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    N = me.ReferenceFrame("N")
    with pytest.raises(NonlinearError, match=r"velocity_constraints\[0\]") as info:
        sb.KanesMethod(N, [q1, q2], [u1], [q1.diff(t) - u1, q2.diff(t) - u2], u_dependent=[u2],
                       velocity_constraints=[u2 * u1 - 1])
    assert isinstance(info.value, sb.NonlinearityError)


def test_constraint_solver_cramer_shapes_the_reduced_forms():
    sizes = {}
    for solver in ("LU", "CRAMER"):
        ours, _ = four_bar(sb, constraint_solver=solver)
        ref, _ = four_bar(me, constraint_solver=solver)
        vals = _values(ref.mass_matrix, ref.forcing)
        assert _close(ours.mass_matrix, ref.mass_matrix, vals)
        assert _close(ours.forcing, ref.forcing, vals)
        sizes[solver] = (sm.count_ops(ours.mass_matrix), sm.count_ops(ref.mass_matrix))
    # Cramer's rule gives SymPy's smaller mass matrix (913 vs SymPy's 915 operations; LU 1223)
    assert sizes["CRAMER"][0] <= 1.05 * sizes["CRAMER"][1]
    assert sizes["CRAMER"][0] < 0.9 * sizes["LU"][0]
