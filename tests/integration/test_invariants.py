"""Physical invariants of simulated trajectories, in every constraint mode.

For conservative zoo models and random conservative models (symbody.testing):
the total energy is conserved, the holonomic residuals stay within the bound of
each mode, the dependent speeds in the trajectory satisfy the velocity
constraints, and the residuals the trajectory reports are the true ones
(recomputed here with sympy.lambdify, independently of symbody's kernels).
Kane's and Lagrange's equations of the same random systems give the same motion.

Bounds (tolerances rtol=1e-10, atol=1e-12, horizons of 1-2 s):
``project`` keeps f_h at round-off (documented: "residuals stay at round-off at
any tolerance"); ``dae`` holds f_h to IDA's Newton tolerance; ``baumgarte`` and
``none`` let f_h grow with the integration error only (measured <= 6e-10, bound 1e-8);
velocity constraints hold to round-off in every mode (u_dep is solved from them
at every sample, never integrated).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from systems.random_oracle import lambdify, model_from, symbody_kane

t = me.dynamicsymbols._t
MODES = ("none", "baumgarte", "project", "dae", "auto")
TIGHT = {"solver": sb.Solver(rtol=1e-10, atol=1e-12)}


#: holonomic residual bounds per mode (tight tolerances, short horizons)
HOLONOMIC_BOUND = {"project": 1e-12, "auto": 1e-12, "dae": 1e-9, "baumgarte": 1e-8, "none": 1e-8}
VELOCITY_BOUND = 1e-10
ENERGY_BOUND = {"dae": 5e-7}       # relative to max(1, |E0|, max T); others 1e-7


class Checker:
    """Energy and constraint residuals from the symbolic expressions (sympy.lambdify)."""

    def __init__(self, eom, energy, constants: dict):
        self.q, self.u = list(eom.q), list(eom.u)
        consts = list(constants)
        self.c = [constants[k] for k in consts]
        args = self.q + self.u + consts
        self.energy = lambdify(args, [sm.Matrix([energy])]) if energy is not None else None
        self.hol = lambdify(args, [eom.holonomic]) if eom.M else None
        vel = sm.Matrix(eom.velocity_matrix) * sm.Matrix(self.u) + sm.Matrix(eom.velocity_rest)
        self.vel = lambdify(args, [vel]) if eom.m else None

    def _rows(self, f, tr) -> np.ndarray:
        return np.array([f(list(q) + list(u) + self.c)[0].ravel() for q, u in zip(tr.q, tr.u, strict=True)])

    def energies(self, tr) -> np.ndarray:
        return self._rows(self.energy, tr)[:, 0]

    def holonomic(self, tr) -> np.ndarray:
        return self._rows(self.hol, tr) if self.hol else np.zeros((len(tr.t), 0))

    def velocity(self, tr) -> np.ndarray:
        return self._rows(self.vel, tr) if self.vel else np.zeros((len(tr.t), 0))


def check_trajectory(tr, eom, checker: Checker, mode: str, kinetic=None) -> None:
    assert tr.success, tr.message
    expected_mode = ("project" if eom.M else "none") if mode == "auto" else mode
    assert tr.constraints == expected_mode
    assert tr.u.shape == (len(tr.t), len(eom.u))
    # residuals reported by the trajectory are the true ones
    H, V = checker.holonomic(tr), checker.velocity(tr)
    np.testing.assert_allclose(tr.holonomic_residuals, H, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tr.velocity_residuals, V, rtol=0, atol=1e-12)
    if eom.M:
        assert np.abs(H).max() < HOLONOMIC_BOUND[mode], (mode, np.abs(H).max())
    if eom.m:
        assert np.abs(V).max() < VELOCITY_BOUND
    if checker.energy is not None:
        E = checker.energies(tr)
        scale = max(1.0, abs(E[0]), float(np.abs(kinetic).max()) if kinetic is not None else 0.0)
        drift = np.abs(E - E[0]).max() / scale
        assert drift < ENERGY_BOUND.get(mode, 1e-7), (mode, drift)


# ----------------------------------------------------------------------- zoo models
ZOO = ["four-bar", "snakeboard", "double-rod-pendulum", "two-particle-pendulum",
       "n-link-pendulum-on-cart", "rolling-disc", "chaplygin-sleigh", "whipple-bicycle"]


@pytest.fixture(scope="module", params=ZOO)
def zoo(request):
    model = sb.models.get(request.param)
    assert model.energy is not None, f"{request.param} has no energy expression"
    numeric = sb.compile(model.eom)
    return model, numeric, Checker(model.eom, model.energy, model.constants)


@pytest.mark.parametrize("mode", MODES)
def test_zoo_model_conserves_energy_and_constraints(zoo, mode):
    model, numeric, checker = zoo
    tf = min(model.t_span[1], 2.0)
    t_eval = np.linspace(model.t_span[0], tf, 41)
    tr = sb.simulate(numeric, (model.t_span[0], tf), model.initial_state, model.constants,
                          constraints=mode, t_eval=t_eval, **TIGHT)
    check_trajectory(tr, model.eom, checker, mode)
    # the motion is the same in every mode
    ref = sb.simulate(numeric, (model.t_span[0], tf), model.initial_state, model.constants,
                           constraints="none" if mode != "none" else "dae", t_eval=t_eval, **TIGHT)
    np.testing.assert_allclose(tr.q, ref.q, rtol=0, atol=1e-6)


# ----------------------------------------------------------------------- random models
def case(kind: str, seed: int, n_bodies: int = 2, **options) -> tuple:
    return (kind, seed, n_bodies, tuple(sorted(options.items())))


RANDOM = [case("tree", 1, 3), case("nonholonomic", 1), case("nonholonomic", 2, 3),
          case("closed_loop", 0, constraints=1), case("closed_loop", 1, constraints=2)]


@pytest.fixture(scope="module", params=RANDOM, ids=lambda c: f"{c[0]}{c[2]}-s{c[1]}")
def random_conservative(request):
    rm = model_from(request.param)
    assert rm.conservative
    eom = symbody_kane(request.param).to_eom()
    numeric = sb.compile(eom)
    p = {k: rm.constants[k] for k in numeric.constants}
    checker = Checker(eom, rm.energy, rm.constants)
    kinetic = lambdify(rm.q + rm.u + list(rm.constants), [sm.Matrix([rm.kinetic_energy])])
    return rm, eom, numeric, p, checker, kinetic


@pytest.mark.parametrize("mode", MODES)
def test_random_model_conserves_energy_and_constraints(random_conservative, mode):
    rm, eom, numeric, p, checker, kinetic = random_conservative
    t_eval = np.linspace(0.0, 1.0, 21)
    tr = sb.simulate(numeric, (0.0, 1.0), rm.x0(), p, constraints=mode, t_eval=t_eval, **TIGHT)
    c = [rm.constants[k] for k in rm.constants]
    T = np.array([kinetic(list(q) + list(u) + c)[0].item() for q, u in zip(tr.q, tr.u, strict=True)])
    check_trajectory(tr, eom, checker, mode, kinetic=T)
    # the dependent speeds are those the random model's own constraints give
    if rm.u_dep:
        for q, u in zip(tr.q, tr.u, strict=True):
            st = dict(zip(rm.q, q, strict=True)) | dict(zip(rm.u, u, strict=True))
            want = rm.dependent_speeds(st)
            np.testing.assert_allclose([u[rm.u.index(s)] for s in rm.u_dep], [want[s] for s in rm.u_dep],
                                       rtol=0, atol=1e-10)


# ----------------------------------------------------------------------- Kane vs Lagrange
KANE_LAGRANGE = [case("nonholonomic", 1, damping=True, explicit_speeds=False),
                 case("closed_loop", 0, constraints=1),
                 case("closed_loop", 2, constraints=1, damping=True, explicit_speeds=False)]


@pytest.mark.parametrize("c", KANE_LAGRANGE, ids=lambda c: f"{c[0]}{c[2]}-s{c[1]}")
def test_kane_and_lagrange_trajectories_agree(c):
    compile_, simulate = sb.compile, sb.simulate
    rm = model_from(c)
    eom_k = symbody_kane(c).to_eom()
    lm = rm.lagranges_method()
    lm.form_lagranges_equations()
    speeds = [me.dynamicsymbols(f"w_{qi.name}") for qi in rm.q]      # w_i = q_i' (= u_i here)
    eom_l = lm.to_eom(**rm.lagrange_to_eom_arguments(), speeds=speeds)
    assert all(rm.speed_scale[qi] == 1 for qi in rm.q)
    mk, ml = compile_(eom_k), compile_(eom_l)
    pk = {k: rm.constants[k] for k in mk.constants}
    pl = {k: rm.constants[k] for k in ml.constants}
    w_of = dict(zip(rm.q, speeds, strict=True))
    x0_l = {qi: rm.state[qi] for qi in rm.q}
    x0_l.update({w_of[qi]: rm.state[rm.speed_of[qi]] for qi in rm.q})
    x0_l = {s: x0_l[s] for s in ml.states}
    t_eval = np.linspace(0.0, 1.0, 11)
    # "dae" on LLVM kernels: on closed_loop2-s2 with C kernels (the default since issue 34,
    # and backend="c" before it) IDA needs ~170 000 residuals for Kane's model (785 with
    # LLVM's, the kernels equal to 4e-16) and ends 9e-7 from Lagrange's: an open issue of
    # the "dae" mode's sensitivity, not of the equations compared here
    dae_k, dae_l = compile_(eom_k, backend="llvm"), compile_(eom_l, backend="llvm")
    for mode, kane, lagrange in (("auto", mk, ml), ("dae", dae_k, dae_l)):
        trk = simulate(kane, (0.0, 1.0), rm.x0(), pk, constraints=mode, t_eval=t_eval, **TIGHT)
        trl = simulate(lagrange, (0.0, 1.0), x0_l, pl, constraints=mode, t_eval=t_eval, **TIGHT)
        assert trk.success and trl.success
        assert ml.coordinates == mk.coordinates
        np.testing.assert_allclose(trl.q, trk.q, rtol=0, atol=1e-7)
        # Lagrange's w = q' against Kane's u (kinematic equations q' = u), all speeds
        ul = dict(zip(ml.speeds, trl.u.T, strict=True))
        uk = dict(zip(mk.speeds, trk.u.T, strict=True))
        for qi in rm.q:
            np.testing.assert_allclose(ul[w_of[qi]], uk[rm.speed_of[qi]], rtol=0, atol=1e-7)
