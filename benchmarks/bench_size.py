"""Size of the returned SymPy forms: count_ops of mass_matrix + forcing, symbody vs SymPy.

Every model is built twice from the same kinematics (fresh objects each time),
once with symbody's class and once with SymPy's (KanesMethod or
LagrangesMethod), and ``sympy.count_ops`` is taken over every entry of
``mass_matrix`` and ``forcing``.  Models: every zoo model (``symbody.models``,
from its ``*_system()`` recipe), the rolling disc of SymPy's test_kane.py, the
Whipple bicycle of SymPy's test_kane3.py, the double pendulum and rolling disc
of SymPy's test_lagrange.py, and the examples of the KanesMethod and
LagrangesMethod docstrings.

With ``--linearized`` the state matrix A of ``linearize(A_and_B=True)`` (symbolic,
about the general state) is measured too, for the Kane models but the bicycles
(SymPy's takes minutes there).

Run:  .venv/bin/python benchmarks/bench_size.py [--skip-bicycles] [--linearized] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import sympy as sm
import sympy.physics.mechanics as me

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
import symbody as sb  # noqa: E402
from systems import whipple_bicycle_sympy_test_kane3  # noqa: E402

t = me.dynamicsymbols._t


def ops(M) -> int:
    """sympy.count_ops summed over the entries of a matrix."""
    return sum(sm.count_ops(e) for e in M)


# ----------------------------------------------------------------------------- recipes
def _zoo(name: str) -> Callable:
    import importlib

    module = importlib.import_module(f"symbody.models.{name}")
    system_fn = getattr(module, f"{name}_system")

    def form(kane_cls, _lagrange_cls):
        built = system_fn()
        system = built[0] if isinstance(built, tuple) else built
        km = system.method(kane_cls)
        km.kanes_equations(system.bodies, system.loads)
        return km
    return form


def _rolling_disc_kane(kane_cls, _lagrange_cls):
    """test_kane.py::test_rolling_disc."""
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols("q1 q2 q3 u1 u2 u3")
    r, m, g = sm.symbols("r m g")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w_R_N_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = me.Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    I = me.inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    kd = [me.dot(R.ang_vel_in(N) - w_R_N_qd, uv) for uv in L]
    BodyD = me.RigidBody("BodyD", Dmc, R, m, (I, Dmc))
    km = kane_cls(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd)
    km.kanes_equations([BodyD], [(Dmc, -m * g * Y.z)])
    return km


def _bicycle_kane(kane_cls, _lagrange_cls):
    s = whipple_bicycle_sympy_test_kane3()
    km = kane_cls(s["N"], s["q_ind"], s["u_ind"], kd_eqs=s["kd"], q_dependent=s["q_dep"],
                  configuration_constraints=s["conlist_coord"], u_dependent=s["u_dep"],
                  velocity_constraints=s["conlist_speed"])
    km.kanes_equations(s["bodies"], s["loads"])
    return km


def _kane_docs(kane_cls, _lagrange_cls):
    """The mass-spring-damper of KanesMethod's docstring."""
    q, u = me.dynamicsymbols("q u")
    m, c, k = sm.symbols("m c k")
    N = me.ReferenceFrame("N")
    P = me.Point("P")
    P.set_vel(N, u * N.x)
    km = kane_cls(N, q_ind=[q], u_ind=[u], kd_eqs=[q.diff(t) - u])
    km.kanes_equations([me.Particle("pa", P, m)], [(P, (-k * q - c * u) * N.x)])
    return km


def _lagrange_docs(_kane_cls, lagrange_cls):
    """The mass-spring-damper of LagrangesMethod's docstring."""
    q = me.dynamicsymbols("q")
    qd = me.dynamicsymbols("q", 1)
    m, k, b = sm.symbols("m k b")
    N = me.ReferenceFrame("N")
    P = me.Point("P")
    P.set_vel(N, qd * N.x)
    Pa = me.Particle("Pa", P, m)
    Pa.potential_energy = k * q**2 / 2
    lm = lagrange_cls(me.Lagrangian(N, Pa), [q], forcelist=[(P, -b * qd * N.x)], frame=N)
    lm.form_lagranges_equations()
    return lm


def _double_pendulum_lagrange(_kane_cls, lagrange_cls):
    """test_lagrange.py::test_dub_pen."""
    q1, q2 = me.dynamicsymbols("q1 q2")
    q1d, q2d = me.dynamicsymbols("q1 q2", 1)
    l, m, g = sm.symbols("l m g")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.z])
    B = N.orientnew("B", "Axis", [q2, N.z])
    A.set_ang_vel(N, q1d * A.z)
    B.set_ang_vel(N, q2d * A.z)
    O = me.Point("O")
    P = O.locatenew("P", l * A.x)
    R = P.locatenew("R", l * B.x)
    O.set_vel(N, 0)
    P.v2pt_theory(O, N, A)
    R.v2pt_theory(P, N, B)
    ParP, ParR = me.Particle("ParP", P, m), me.Particle("ParR", R, m)
    ParP.potential_energy = -m * g * l * sm.cos(q1)
    ParR.potential_energy = -m * g * l * sm.cos(q1) - m * g * l * sm.cos(q2)
    lm = lagrange_cls(me.Lagrangian(N, ParP, ParR), [q1, q2], bodies=[ParP, ParR])
    lm.form_lagranges_equations()
    return lm


def _rolling_disc_lagrange(_kane_cls, lagrange_cls):
    """test_lagrange.py::test_rolling_disc."""
    q1, q2, q3 = me.dynamicsymbols("q1 q2 q3")
    r, m, g = sm.symbols("r m g")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    C = me.Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    I = me.inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    BodyD = me.RigidBody("BodyD", Dmc, R, m, (I, Dmc))
    BodyD.potential_energy = -m * g * r * sm.cos(q2)
    lm = lagrange_cls(me.Lagrangian(N, BodyD), [q1, q2, q3])
    lm.form_lagranges_equations()
    return lm


ZOO = ["double_rod_pendulum", "two_particle_pendulum", "four_bar", "snakeboard", "chaplygin_sleigh",
       "rolling_disc", "n_link_pendulum_on_cart", "whipple_bicycle"]

MODELS: dict[str, Callable] = {f"zoo {name}": _zoo(name) for name in ZOO}
MODELS.update({
    "rolling disc (test_kane.py)": _rolling_disc_kane,
    "bicycle (test_kane3.py)": _bicycle_kane,
    "KanesMethod docstring": _kane_docs,
    "LagrangesMethod docstring": _lagrange_docs,
    "double pendulum (test_lagrange.py)": _double_pendulum_lagrange,
    "rolling disc (test_lagrange.py)": _rolling_disc_lagrange,
})
BICYCLES = {"zoo whipple_bicycle", "bicycle (test_kane3.py)"}


def measure(name: str, linearized: bool = False) -> dict:
    form = MODELS[name]
    out = {"model": name}
    for label, kane_cls, lagrange_cls in (("symbody", sb.KanesMethod, sb.LagrangesMethod),
                                          ("sympy", me.KanesMethod, me.LagrangesMethod)):
        t0 = time.perf_counter()
        method = form(kane_cls, lagrange_cls)
        M, F = method.mass_matrix, method.forcing
        out[f"{label}_time"] = time.perf_counter() - t0
        out[f"{label}_M"], out[f"{label}_F"] = ops(M), ops(F)
        if linearized and hasattr(method, "kanes_equations") and name not in BICYCLES:
            try:
                out[f"{label}_A"] = ops(method.linearize(A_and_B=True)[0])
            except ValueError as exc:        # SymPy's Linearizer refuses some models
                out[f"{label}_A"] = f"fails ({exc})"
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-bicycles", action="store_true", help="leave out the two bicycle models")
    ap.add_argument("--only", nargs="*", help="model names (substrings) to measure")
    ap.add_argument("--linearized", action="store_true", help="also count_ops of linearize's A")
    args = ap.parse_args(argv)
    names = [n for n in MODELS if not (args.skip_bicycles and n in BICYCLES)]
    if args.only:
        names = [n for n in names if any(s in n for s in args.only)]
    rows = []
    for name in names:
        r = measure(name, args.linearized)
        rows.append(r)
        print(f"{name:40s} symbody M/F {r['symbody_M']:>9,d} / {r['symbody_F']:>9,d}   "
              f"sympy M/F {r['sympy_M']:>9,d} / {r['sympy_F']:>9,d}"
              + (f"   A {r['symbody_A']} vs {r['sympy_A']}" if "sympy_A" in r else ""), flush=True)
    print()
    print("| model | symbody M / F | SymPy M / F | symbody (M+F) / SymPy (M+F) |")
    print("|---|---:|---:|---:|")
    for r in rows:
        ours, ref = r["symbody_M"] + r["symbody_F"], r["sympy_M"] + r["sympy_F"]
        print(f"| {r['model']} | {r['symbody_M']:,} / {r['symbody_F']:,} | {r['sympy_M']:,} / "
              f"{r['sympy_F']:,} | {ours / max(ref, 1):.2f} |")
    lin = [r for r in rows if "sympy_A" in r]
    if lin:
        print()
        print("| model | symbody linearized A | SymPy linearized A |")
        print("|---|---:|---:|")
        for r in lin:
            a, b = (f"{x:,}" if isinstance(x, int) else x for x in (r["symbody_A"], r["sympy_A"]))
            print(f"| {r['model']} | {a} | {b} |")


if __name__ == "__main__":
    main()
