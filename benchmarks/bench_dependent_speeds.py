"""Issue 40 §4: opty's parallel-parking car (two nonholonomic constraints), backward Euler:
symbody's default NLP (dependent accelerations collocated through the acceleration
constraints), its ``dependent_speeds="differenced"`` form (opty's), and opty itself
(``[f_r + f_r*; nonholonomic; kinematic]`` from SymPy's KanesMethod, as in opty's
gallery), all from opty's initial guess with IPOPT's gradient-based scaling.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_dependent_speeds.py --nodes 251 501
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from symbody.optimize import examples


def opty_car(num_nodes: int, duration: float, backend: str):
    from opty import Problem
    m, I, a, b = sm.symbols("m, I, a, b", real=True)
    x, y, vx, vy = me.dynamicsymbols("x, y, v_x, v_y", real=True)
    theta, omega = me.dynamicsymbols("theta, omega", real=True)
    delta, beta = me.dynamicsymbols("delta, beta", real=True)
    T, F = me.dynamicsymbols("T, F", real=True)
    N, A, B = me.ReferenceFrame("N"), me.ReferenceFrame("A"), me.ReferenceFrame("B")
    A.orient_axis(N, theta, N.z)
    B.orient_axis(A, delta, A.z)
    O, Ao, Pr, Pf = me.Point("O"), me.Point("A_o"), me.Point("P_r"), me.Point("P_F")
    Ao.set_pos(O, x * N.x + y * N.y)
    Pr.set_pos(Ao, -b * A.x)
    Pf.set_pos(Ao, a * A.x)
    A.set_ang_vel(N, omega * N.z)
    v = x.diff() * N.x + y.diff() * N.y
    kin = [vx - v.dot(A.x), vy - v.dot(A.y), omega - theta.diff(), beta - delta.diff()]
    O.set_vel(N, 0)
    Ao.set_vel(N, vx * A.x + vy * A.y)
    Pr.v2pt_theory(Ao, N, A)
    Pf.v2pt_theory(Ao, N, A)
    nh = [Pr.vel(N).dot(A.y), Pf.vel(N).dot(B.y)]
    km = me.KanesMethod(N, [x, y, theta, delta], [vx, beta], kd_eqs=kin, u_dependent=[vy, omega],
                        velocity_constraints=nh)
    bodies = [me.RigidBody("A", Ao, A, m, (me.inertia(A, 0, 0, I), Ao)),
              me.RigidBody("B", Pf, B, m / 6, (me.inertia(B, 0, 0, I / 32), Pf))]
    fr, frstar = km.kanes_equations(bodies, [(Pr, F * A.x), (A, -T * B.z), (B, T * B.z)])
    eom = (fr + frstar).col_join(sm.Matrix(nh)).col_join(sm.Matrix(kin))
    states = (x, y, theta, delta, vx, vy, omega, beta)
    h = duration / (num_nodes - 1)
    weights = np.r_[0.0, np.ones(num_nodes - 1)]
    n = 8 * num_nodes

    def obj(free):
        return h * np.sum(weights * free[n:].reshape(2, num_nodes) ** 2)

    def grad(free):
        g = np.zeros_like(free)
        g[n:] = (2 * h * weights * free[n:].reshape(2, num_nodes)).ravel()
        return g

    inst = [s.func(0.0) for s in states] + [x.func(duration), y.func(duration) - 2.0]
    inst += [s.func(duration) for s in states[2:]]
    bounds = {delta: (np.deg2rad(-45.0), np.deg2rad(45.0)), T: (-50.0, 50.0), F: (-300.0, 300.0)}
    prob = Problem(obj, grad, eom, states, num_nodes, h,
                   known_parameter_map={I: 1 / 12 * 1200 * (2 ** 2 + 3 ** 2), m: 1200, a: 1.5, b: 1.5},
                   instance_constraints=tuple(inst), bounds=bounds, time_symbol=me.dynamicsymbols._t,
                   integration_method="backward euler", backend=backend)
    prob.add_option("nlp_scaling_method", "gradient-based")
    prob.add_option("print_level", 0)
    prob.add_option("max_iter", 5000)
    t = prob.time_vector()
    xg = 3.0 / duration * 2.0 * t
    xg[num_nodes // 2:] = 6.0 - 3.0 / duration * 2.0 * t[num_nodes // 2:]
    guess = np.ones(prob.num_free)
    guess[:num_nodes] = xg
    guess[num_nodes:2 * num_nodes] = 2.0 / duration * t
    return prob, guess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, nargs="+", default=[251, 501])
    ap.add_argument("--no-opty", action="store_true")
    ap.add_argument("--opty-backend", default="numpy")
    args = ap.parse_args()
    print(f"{'nodes':>5s} {'NLP':36s} {'iter':>5s} {'objective':>16s} {'CPU s':>7s}  status")
    for nodes in args.nodes:
        starts = {"opty's guess": None}
        if not args.no_opty:
            prob, guess = opty_car(nodes, 30.0, args.opty_backend)
            c0 = time.process_time()
            sol, info = prob.solve(guess)
            defects = np.abs(prob.con(sol)).max()
            print(f"{nodes:5d} {'opty (' + args.opty_backend + '), from its guess':36s} "
                  f"{len(prob.obj_value) - 1:5d} {info['obj_val']:16.6f} "
                  f"{time.process_time() - c0:7.2f}  status {info['status']}, largest defect "
                  f"{defects:.1e}", flush=True)
            starts["opty's optimum"] = sol
        for start_name, start in starts.items():
            for mode in ("collocated", "differenced"):
                problem, guess = examples.car_parking(num_nodes=nodes, dependent_speeds=mode)
                if start is not None:           # opty's layout: each state, then F, T
                    names = [str(c) for c in problem.states]
                    order = ["x", "y", "theta", "delta", "v_x", "v_y", "omega", "beta"]
                    guess = {problem.states[names.index(o)]: start[i * nodes:(i + 1) * nodes]
                             for i, o in enumerate(order)}
                    F, T = (next(s for s in problem.specifieds if str(s) == n) for n in ("F", "T"))
                    guess[F], guess[T] = start[8 * nodes:9 * nodes], start[9 * nodes:]
                c0 = time.process_time()
                r = problem.solve(guess, progress=False,
                                  options={"nlp_scaling_method": "gradient-based"})
                label = f"symbody {mode}, from {start_name}"
                print(f"{nodes:5d} {label:36s} {r.iterations:5d} {r.objective:16.6f} "
                      f"{time.process_time() - c0:7.2f}  {r.message[:40]}", flush=True)


if __name__ == "__main__":
    main()
