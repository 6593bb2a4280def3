"""symbody.compat.sympy: the SymPy internals symbody relies on still behave as relied on.

Checked on SymPy 1.14.0 (``CHECKED_ON``).  A failure here means a SymPy release changed a
private name or its behaviour: fix ``src/symbody/compat/sympy.py`` (and only it), then add
the version to ``CHECKED_ON``.
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from symbody.compat import sympy as compat


def _changed(what: str) -> str:
    return (f"SymPy {sm.__version__} changed {what} (symbody.compat.sympy was checked on "
            f"SymPy {', '.join(compat.CHECKED_ON)})")


def test_checked_versions_are_named():
    assert compat.CHECKED_ON and all(v.count(".") >= 1 for v in compat.CHECKED_ON)


def test_sorted_args_rebuild_the_expression_sympy_builds():
    x, y, z = sm.symbols("x y z")
    a, b = sm.sin(x), sm.cos(y)
    terms = [b * z, 3 * a, x * y, sm.Integer(2)]
    sorted_terms = list(terms)
    compat.add_sort(sorted_terms)
    built = compat.add_from_args(sorted_terms, True)
    assert built == sm.Add(*terms) and built.args == sm.Add(*terms).args, _changed("_addsort/Add._from_args")
    factors = [b, z, a, x]
    compat.mul_sort(factors)
    built = compat.mul_from_args(factors, True)
    assert built == sm.Mul(*[b, z, a, x]) and built.args == sm.Mul(b, z, a, x).args, \
        _changed("_mulsort/Mul._from_args")
    assert built.is_commutative is True


def test_hashable_content_is_what_compare_orders_by():
    x, y = sm.symbols("x y")
    assert compat.hashable_content(x)[0] == "x", _changed("Symbol._hashable_content")
    e = sm.sin(x) + y
    assert compat.hashable_content(e) == e.args, _changed("Add._hashable_content")


def test_original_assumptions_round_trip():
    m = sm.Symbol("m", positive=True)
    given = compat.original_assumptions(m)
    assert given == {"positive": True}, _changed("Symbol._assumptions_orig")
    assert sm.Symbol("m", **given) == m
    d = sm.Dummy("d", real=True)
    assert compat.original_assumptions(d) == {"real": True}, _changed("Dummy._assumptions_orig")
    assert compat.original_assumptions(m) is not compat.original_assumptions(m)   # copies


def test_neighbour_frames_and_angular_velocities():
    q = me.dynamicsymbols("q")
    N, A, B = sm.symbols("N A B", cls=me.ReferenceFrame)
    A.orient_axis(N, q, N.z)
    B.orient_axis(A, 2 * q, A.x)
    dcms = compat.neighbour_dcms(A)
    assert set(dcms) == {N, B}, _changed("ReferenceFrame._dcm_dict (neighbours)")
    assert sm.simplify(dcms[N] - A.dcm(N)) == sm.zeros(3, 3), _changed("ReferenceFrame._dcm_dict")
    assert B not in compat.neighbour_dcms(N), _changed("ReferenceFrame._dcm_dict (a second link)")
    omega = compat.neighbour_angular_velocities(A)
    assert omega[N] == A.ang_vel_in(N), _changed("ReferenceFrame._ang_vel_dict")
    assert N not in compat.neighbour_angular_velocities(B), _changed("ReferenceFrame._ang_vel_dict")


def test_kanes_method_constraints_are_the_ones_given():
    t = me.dynamicsymbols._t
    x, y, ux, uy, ua = me.dynamicsymbols("x y u_x u_y u_a")
    L, m = sm.symbols("L m")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, ux * N.x + uy * N.y + ua * N.z)
    km = me.KanesMethod(N, [x], [ux], kd_eqs=[x.diff(t) - ux, y.diff(t) - uy], q_dependent=[y],
                        configuration_constraints=[x**2 + y**2 - L**2], u_dependent=[uy],
                        velocity_constraints=[x * ux + y * uy], u_auxiliary=[ua])
    got = compat.kanes_method_constraints(km)
    assert got["q_dep"] == [y] and got["u_dep"] == [uy] and got["u_aux"] == [ua], \
        _changed("KanesMethod._qdep/_udep/_uaux")
    assert got["f_h"] == sm.Matrix([x**2 + y**2 - L**2]), _changed("KanesMethod._f_h")
    assert got["k_nh"] == sm.Matrix([[x, y]]) and got["f_nh"] == sm.Matrix([0]), \
        _changed("KanesMethod._k_nh/_f_nh (velocity constraints k_nh u + f_nh = 0)")
    plain = compat.kanes_method_constraints(me.KanesMethod(N, [x], [ux], kd_eqs=[x.diff(t) - ux]))
    assert plain["q_dep"] == plain["u_dep"] == plain["u_aux"] == []
    assert plain["f_h"].shape[0] == plain["k_nh"].shape[0] == plain["f_nh"].shape[0] == 0


def test_lagranges_method_holonomic_constraints():
    x, y = me.dynamicsymbols("x y")
    L = sm.Symbol("L")
    N = me.ReferenceFrame("N")
    lag = me.Lagrangian(N)
    lm = me.LagrangesMethod(lag, [x, y], hol_coneqs=[x**2 + y**2 - L**2], frame=N)
    assert compat.lagranges_method_holonomic(lm) == sm.Matrix([x**2 + y**2 - L**2]), \
        _changed("LagrangesMethod._hol_coneqs")
    assert compat.lagranges_method_holonomic(me.LagrangesMethod(lag, [x], frame=N)).shape[0] == 0
