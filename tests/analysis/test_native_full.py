"""The full-coordinate right-hand side in compiled code (compilation/native_full.py) and its
use by the augmented Lagrangian segments (analysis/simulation/augmented.py).

Where the constraint Jacobian loses rank the simulation integrates y = [q, u] with u' from
the augmented Lagrangian iteration.  For a model whose main kernel is generated C the whole
evaluation (kernel, α B_aᵀB_a by dsyrk, Cholesky, the residual-form iteration) runs in C.
Checked here: it equals ``FullCoordinates.rhs`` to round-off at random states and at the
flat position of the N-four-bar (where B_a loses rank by n); the segment stepper built with
it follows the Python one step by step; a simulation through the flat positions takes the
compiled path and still meets the benchmark's checks; the cases it cannot take (LLVM
kernels, inputs that vary, an H that is not positive definite) go to the Python path.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import symbody as sb
from symbody.analysis.simulation.native_rk import CompiledRungeKutta
from symbody.analysis.simulation.strategy import Run
from symbody.compilation import compile
from symbody.compilation.native_full import native_full_rhs
from symbody.models.n_four_bar import n_four_bar, parallelogram_reduction

# (the package re-exports names that shadow the submodule attribute: import it by name)
augmented = importlib.import_module("symbody.analysis.simulation.augmented")


@pytest.fixture(scope="module")
def two_loops():
    """The N-four-bar with n = 2 compiled with backend="c" (a model of its own: other tests
    expect the zoo's LLVM kernels)."""
    mdl = n_four_bar(2)
    model = compile(mdl.eom, backend="c")
    return mdl, model, model.constants_array(mdl.constants)


def _run(model, P, specifieds=None, method="DOP853"):
    return Run(model, P, specifieds, 0.0, 20.0, 1e-8, 1e-10, method)


def _flat(model, rng):
    """y at the flat position (rockers along +x, couplers horizontal: B_a loses rank by n)
    with random speeds (not on B u = 0: the rhs does not need it)."""
    q = np.zeros(model.layout.N)
    u = rng.uniform(-1.0, 1.0, model.layout.o)
    return np.concatenate([q, u])


def test_compiled_full_rhs_equals_the_python_one(two_loops):
    mdl, model, P = two_loops
    full = augmented.FullCoordinates(_run(model, P))
    native = native_full_rhs(model, P, penalty=augmented.PENALTY)
    assert native is not None                       # the main kernel is C
    L = model.layout
    rng = np.random.default_rng(7)
    states = [rng.uniform(-2.0, 2.0, L.N + L.o) for _ in range(6)] + [_flat(model, rng)]
    for k, y in enumerate(states):
        t = 0.1 * k
        ref = full.rhs(t, y)
        got, status = native(t, y)
        assert status == 0
        # the same operations in another order: round-off of an iteration whose matrix
        # M + α BᵀB has condition ~α = 1e7 (corrected by the residual form)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
        # the multipliers at a regular state are unique: the same as the Python iteration's
        if k < 6:
            _, lam = full.accelerations(t, y)
            np.testing.assert_allclose(native.multipliers, lam, rtol=0,
                                       atol=1e-7 * np.abs(lam).max())
    assert native.nfev == len(states)
    assert native.iterations >= len(states)         # the residual form iterates at least once


def test_flat_position_is_singular_and_still_solved(two_loops):
    """At the flat position B_a has rank below m (Kane's form cannot solve there); the
    compiled iteration does, and its u' satisfies B_a u' = c."""
    mdl, model, P = two_loops
    native = native_full_rhs(model, P, penalty=augmented.PENALTY)
    L = model.layout
    # moving along the parallelogram branch: every rocker at 1.3 rad/s, couplers at rest
    u = np.array([1.3 if str(s).startswith("w") else 0.0 for s in model.speeds])
    assert np.count_nonzero(u) == 3
    y = np.concatenate([np.zeros(L.N), u])
    B, b = model.velocity_constraints(y[:L.N], P, 0.0)
    assert np.abs(B @ u + b).max() < 1e-12                # a consistent velocity
    blocks = model.augmented_blocks(0.0, y[:L.N], y[L.N:], P)
    assert np.linalg.matrix_rank(blocks.acc_matrix) < L.m
    ydot, status = native(0.0, y)
    assert status == 0
    udot = ydot[L.N:]
    residual = blocks.acc_matrix @ udot - blocks.acc_rest
    assert np.abs(residual).max() < 1e-9 * (1.0 + np.abs(blocks.acc_rest).max())
    np.testing.assert_array_equal(ydot[:L.N], blocks.qdot)


def test_not_positive_definite_and_non_finite_are_left_to_python(two_loops):
    mdl, model, P = two_loops
    y = _flat(model, np.random.default_rng(5))
    y[0] = 0.3
    # a negative penalty makes H = M - |α| BᵀB indefinite: Cholesky fails, status 1
    bad = native_full_rhs(model, P, penalty=-augmented.PENALTY)
    assert bad(0.0, y)[1] == 1
    good = native_full_rhs(model, P, penalty=augmented.PENALTY)
    y[1] = np.nan
    ydot, status = good(0.0, y)
    assert status != 0 or not np.all(np.isfinite(ydot))


def test_models_it_cannot_take(two_loops):
    mdl, model, P = two_loops
    llvm = compile(mdl.eom, backend="llvm")
    assert native_full_rhs(llvm, P, penalty=augmented.PENALTY) is None
    # inputs that vary with time: the segment keeps the Python right-hand side
    run = _run(model, P, specifieds=lambda t, x: np.zeros(0))
    assert augmented.native_full_solver(run, augmented.FullCoordinates(run), "DOP853") is None
    # implicit methods have no compiled steps
    run = _run(model, P)
    assert augmented.native_full_solver(run, augmented.FullCoordinates(run), "Radau") is None
    assert augmented.native_full_solver(run, augmented.FullCoordinates(run), "DOP853") is not None


def _stepper(model, P, y0, native):
    run = _run(model, P)
    mode = augmented.AugmentedLagrangian()
    full = mode.coordinates(run)
    if not native:
        full.native = None                      # "cannot": the Python right-hand side
    part = augmented.full_partition(model)
    return mode.start(run, 0.0, y0, part, None), run


@pytest.mark.parametrize("y_kind", ["flat", "off"])
def test_compiled_segment_steps_follow_the_python_ones(two_loops, y_kind):
    mdl, model, P = two_loops
    rng = np.random.default_rng(11)
    y0 = _flat(model, rng)
    if y_kind == "off":
        y0[:model.layout.N] = rng.uniform(-0.2, 0.2, model.layout.N)
    ours, run_ours = _stepper(model, P, y0, True)
    theirs, run_theirs = _stepper(model, P, y0, False)
    assert isinstance(ours, CompiledRungeKutta) and ours.method == "DOP853"
    assert type(theirs).__name__ == "DOP853"
    for _ in range(4):
        ours.step()
        theirs.step()
        assert ours.status == theirs.status == "running"
        # the error estimate is a difference of nearly equal sums: its round-off moves the
        # next step size by far less than 1e-4
        assert ours.t == pytest.approx(theirs.t, rel=1e-4)
    tm = 0.5 * (max(ours.t_old, theirs.t_old) + min(ours.t, theirs.t))
    np.testing.assert_allclose(ours.dense_output()(tm), theirs.dense_output()(tm), rtol=1e-8,
                               atol=1e-9)
    assert run_ours.nfev == run_theirs.nfev         # counted through on_evaluations


def test_indefinite_compiled_rhs_falls_back_to_python_steps(two_loops):
    """Every compiled evaluation fails (status 1): each step is taken again by scipy's code
    with the Python right-hand side, which gives exactly the Python stepper's steps."""
    mdl, model, P = two_loops
    y0 = _flat(model, np.random.default_rng(13))
    run = _run(model, P)
    mode = augmented.AugmentedLagrangian()
    mode.coordinates(run).native = native_full_rhs(model, P, penalty=-augmented.PENALTY)
    ours = mode.start(run, 0.0, y0, augmented.full_partition(model), None)
    assert isinstance(ours, CompiledRungeKutta) and ours.method == "DOP853"
    theirs, _ = _stepper(model, P, y0, False)
    for _ in range(3):
        ours.step()
        theirs.step()
        assert ours.t == theirs.t
        np.testing.assert_array_equal(ours.y, theirs.y)


def test_simulation_through_flat_positions_takes_the_compiled_path(two_loops, monkeypatch):
    """n = 2 loops for 20 s at rtol 1e-8 (the test_n_four_bar run) with backend="c": through
    the flat positions on the parallelogram branch, in compiled code, and in agreement with
    the run whose full-coordinate spans are Python."""
    mdl, model, P = two_loops
    built = []
    real = augmented.native_full_solver

    def spy(run, full, method):
        found = real(run, full, method)
        built.append(full.native)
        return found

    monkeypatch.setattr(augmented, "native_full_solver", spy)
    kw = dict(t_eval=np.linspace(0.0, 20.0, 401), solver=sb.Solver(rtol=1e-8, atol=1e-10))
    tr = sb.simulate(model, (0.0, 20.0), mdl.initial_state, mdl.constants, **kw)
    assert tr.status == 0, tr.message
    assert "full coordinates" in tr.message
    assert built and all(n is not None for n in built) and built[-1].nfev > 100
    theta, _ = parallelogram_reduction(2, tr.t)
    B0 = np.c_[np.cos(tr.q[:, 0]), np.sin(tr.q[:, 0])]
    assert np.abs(B0 - np.c_[np.cos(theta), np.sin(theta)]).max() < 1e-3
    assert tr.max_holonomic_residual < 1e-9
    monkeypatch.setattr(augmented, "native_full_solver", lambda *args: None)
    ref = sb.simulate(model, (0.0, 20.0), mdl.initial_state, mdl.constants, **kw)
    assert ref.status == 0
    # where the spans start and end depends on the step sizes (rank thresholds checked at
    # step ends), so two runs at rtol 1e-8 differ by more than round-off (~5e-6 here, more
    # on another CPU after 20 s through many flat positions): each is checked against the
    # analytic reduction instead of the other
    B0 = np.c_[np.cos(ref.q[:, 0]), np.sin(ref.q[:, 0])]
    assert np.abs(B0 - np.c_[np.cos(theta), np.sin(theta)]).max() < 1e-3
    assert ref.max_holonomic_residual < 1e-9


@pytest.mark.parametrize("identity", [True, False])
def test_compiled_projection_equals_the_python_one(two_loops, identity):
    """``FullCoordinates.project`` in C: positions (metric M_d when q' = u, the scaled
    identity otherwise) then speeds, the same iterations as the Python code."""
    mdl, model, P = two_loops
    full = augmented.FullCoordinates(_run(model, P))
    assert full.identity_kinematics                  # (q' = u in this model)
    full.identity_kinematics = identity              # both metrics, on the same model
    native = native_full_rhs(model, P, penalty=augmented.PENALTY)
    assert native.can_project
    L = model.layout
    x0 = model.state_array(mdl.initial_state)
    rng = np.random.default_rng(17)
    for k in range(4):
        y = np.concatenate([x0[:L.N] + rng.uniform(-1e-3, 1e-3, L.N), rng.uniform(-1, 1, L.o)])
        if k == 3:
            y[:L.N] = rng.uniform(-1e-4, 1e-4, L.N)      # near the flat position
        ref = full.project(0.2, y)                     # (full.native not built: Python)
        got, status = native.project(0.2, y, identity)
        assert status == 0
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        assert np.abs(got - y).max() > 1e-5                # it did move the state
        assert np.abs(model.holonomic_residual(got[:L.N], P)).max() < 1e-10   # (accepts 1e-9)
    # the Python method uses it once the run has it
    full.native = native
    calls = native.iterations
    np.testing.assert_allclose(full.project(0.2, y), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert native.iterations > calls


def test_compiled_projection_failure_is_left_to_python(two_loops):
    mdl, model, P = two_loops
    native = native_full_rhs(model, P, penalty=augmented.PENALTY)
    y = np.concatenate([np.full(model.layout.N, 1.0), np.zeros(model.layout.o)])
    # one iteration cannot bring a state far off the loops onto them: status 5
    assert native.project(0.0, y, True, max_iter=1)[1] == 5
    bad = native_full_rhs(model, P, penalty=-augmented.PENALTY)   # H indefinite
    assert bad.project(0.0, y, True)[1] == 1


def test_dense_constraint_matrices_take_blas(two_loops):
    """The products with B_a and M_d go through their nonzeros when those are fewer than a
    third (the two-loop N-four-bar's B_a: 3 or 4 entries per row of 5; A02's M_d too) and
    through BLAS otherwise (the zoo four-bar in relative angles: B_a full, M_d 4 of 9
    entries): both equal the Python iteration, rhs and projection."""
    from symbody.models import four_bar
    mdl = four_bar()
    model = compile(mdl.eom, backend="c")
    P = model.constants_array(mdl.constants)
    L = model.layout
    x0 = model.state_array(mdl.initial_state)
    u0 = model.arguments(0.0, x0[:L.N], x0[L.N:], P)[L.iu:L.ir]
    blk = model.augmented_blocks(0.0, x0[:L.N], u0, P)
    assert 3 * np.count_nonzero(blk.acc_matrix) >= blk.acc_matrix.size     # dense: BLAS
    assert 3 * np.count_nonzero(blk.mass) >= blk.mass.size
    _, fb, fbP = two_loops
    fblk = fb.augmented_blocks(0.0, np.zeros(fb.layout.N), np.ones(fb.layout.o), fbP)
    assert 3 * np.count_nonzero(fblk.acc_matrix) < fblk.acc_matrix.size    # sparse
    full = augmented.FullCoordinates(_run(model, P))
    native = native_full_rhs(model, P, penalty=augmented.PENALTY)
    rng = np.random.default_rng(23)
    for _ in range(3):
        y = np.concatenate([x0[:L.N] + rng.uniform(-0.01, 0.01, L.N), rng.uniform(-1, 1, L.o)])
        ref = full.rhs(0.0, y)
        got, status = native(0.0, y)
        assert status == 0
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        ref = full.project(0.0, y)
        got, status = native.project(0.0, y, full.identity_kinematics)
        assert status == 0
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_sparse_mass_matrix_takes_its_nonzeros():
    """Eight loops: M_d (17 x 17) has 33 nonzeros, B_a 3 or 4 per row: both sparse paths."""
    mdl = n_four_bar(8)
    model = compile(mdl.eom, backend="c")
    P = model.constants_array(mdl.constants)
    L = model.layout
    rng = np.random.default_rng(29)
    full = augmented.FullCoordinates(_run(model, P))
    native = native_full_rhs(model, P, penalty=augmented.PENALTY)
    x0 = model.state_array(mdl.initial_state)
    for k in range(3):
        y = np.concatenate([x0[:L.N] + rng.uniform(-0.3, 0.3, L.N), rng.uniform(-1, 1, L.o)])
        blk = model.augmented_blocks(0.0, y[:L.N], y[L.N:], P)
        assert 3 * np.count_nonzero(blk.mass) < blk.mass.size
        assert 3 * np.count_nonzero(blk.acc_matrix) < blk.acc_matrix.size
        ref = full.rhs(0.0, y)
        got, status = native(0.0, y)
        assert status == 0
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
        if k == 0:
            ref = full.project(0.0, y)
            got, status = native.project(0.0, y, full.identity_kinematics)
            assert status == 0
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(ref).max())


@pytest.mark.parametrize("name", ["chaplygin-sleigh", "rolling-disc", "andrews-squeezer", "bricard"])
def test_zoo_models_compiled_full_rhs_and_projection(name):
    """Nonholonomic only (M = 0: the speeds' projection alone), many loops, a redundant loop
    equation (Bricard: B_a loses rank everywhere): the compiled rhs, projection and rhs in
    the model's dependent set equal the Python ones."""
    from symbody.compilation.native_partition import native_partition_rhs
    mdl = sb.models.get(name)
    model = compile(mdl.eom, backend="c")
    P = model.constants_array(mdl.constants)
    L = model.layout
    native = native_full_rhs(model, P, penalty=augmented.PENALTY)
    assert native is not None and native.can_project
    full = augmented.FullCoordinates(_run(model, P))
    x0 = model.state_array(mdl.initial_state)
    u0 = model.arguments(0.0, x0[:L.N], x0[L.N:], P)[L.iu:L.ir]
    rng = np.random.default_rng(31)
    y = np.concatenate([x0[:L.N] + rng.uniform(-1e-3, 1e-3, L.N), u0 + rng.uniform(-0.1, 0.1, L.o)])
    for ref, (got, status) in ((full.rhs(0.1, y), native(0.1, y)),
                               (full.project(0.1, y), native.project(0.1, y, full.identity_kinematics))):
        assert status == 0
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    ref = model.rhs(0.1, x0, P)
    got, status = native_partition_rhs(model, P, model.default_partition.u_ind_index)(0.1, x0)
    assert status == 0
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_one_span_through_the_flat_position_equals_the_llvm_run(two_loops, monkeypatch):
    """Started just above the flat position and moving down, the two-loop linkage passes it
    in one full-coordinate span (no switch, so no step-size dependent span ends): the run
    with C kernels (compiled rhs, projections and steps) and the one with LLVM kernels (the
    Python path) agree to round-off amplified by the step control, well below rtol."""
    mdl, model, P = two_loops
    llvm = compile(mdl.eom, backend="llvm")
    built = []
    real = augmented.native_full_solver

    def spy(run, full, method):
        found = real(run, full, method)
        built.append(found is not None)
        return found

    monkeypatch.setattr(augmented, "native_full_solver", spy)
    runs = {}
    for name, m in (("c", model), ("llvm", llvm)):
        x0 = {s: (0.02 if str(s).startswith("theta") else 0.0) for s in m.coordinates}
        x0.update({s: -2.0 for s in m.independent_speeds})
        runs[name] = sb.simulate(m, (0.0, 0.05), x0, mdl.constants, t_eval=np.linspace(0, 0.05, 21),
                                 solver=sb.Solver(rtol=1e-8, atol=1e-10))
        assert runs[name].status == 0
        assert "1 span in full coordinates" in runs[name].message
    assert built == [True, False]
    theta = runs["c"].q[:, 0]
    assert theta[0] > 0 > theta[-1]                     # through θ = 0
    np.testing.assert_allclose(runs["c"].x, runs["llvm"].x, rtol=0, atol=1e-8)


def test_multipliers_of_full_coordinate_samples_from_the_compiled_solve(two_loops, monkeypatch):
    """The samples taken in full coordinates get λ from the compiled augmented Lagrangian
    solve (from λ = 0, as the Python one): the same multipliers to round-off."""
    samples = importlib.import_module("symbody.analysis.simulation.samples")
    mdl, model, P = two_loops
    kw = dict(t_eval=np.linspace(0.0, 3.0, 61), solver=sb.Solver(rtol=1e-8, atol=1e-10))
    built = []
    real = samples.native_full_rhs

    def spy(*args, **kwargs):
        built.append(real(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(samples, "native_full_rhs", spy)
    tr = sb.simulate(model, (0.0, 3.0), mdl.initial_state, mdl.constants, **kw)
    assert "full coordinates" in tr.message
    assert built and built[0] is not None and built[0].nfev > 0, "the compiled solve was not used"
    monkeypatch.setattr(samples, "native_full_rhs", lambda *args, **kwargs: None)
    ref = sb.simulate(model, (0.0, 3.0), mdl.initial_state, mdl.constants, **kw)
    np.testing.assert_array_equal(tr.x, ref.x)
    assert np.isfinite(ref.multipliers).all()
    scale = np.abs(ref.multipliers).max()
    np.testing.assert_allclose(tr.multipliers, ref.multipliers, rtol=0, atol=1e-9 * scale)
