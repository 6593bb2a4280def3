"""Kane's right-hand side in any dependent set in compiled code (compilation/native_partition.py)
and its use for the segments in a switched dependent set (analysis/simulation/native_rk.py).

Checked here: it equals ``NumericModel.rhs(..., partition=...)`` to round-off in the model's
own and in other dependent sets, with the whole augmented system (few constraint rows) and
by the null space of B_a (m >= REDUCED_KKT_MIN, as the Python path); ``native_solver``
takes it for other sets and for many constraint rows; a singular dependent set is left to
the Python path; a simulation through the N-four-bar's switches takes it.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import symbody as sb
import symbody.analysis.simulation.native_rk as native_rk
from symbody.compilation import compile
from symbody.compilation.linear_algebra import REDUCED_KKT_MIN
from symbody.compilation.native_partition import native_partition_rhs
from symbody.compilation.numeric_model import Partition
from symbody.models.n_four_bar import n_four_bar

native_partition = importlib.import_module("symbody.compilation.native_partition")


def _compiled(n):
    mdl = n_four_bar(n)
    model = compile(mdl.eom, backend="c")      # (a model of its own: C kernels)
    return mdl, model, model.constants_array(mdl.constants)


@pytest.fixture(scope="module")
def two_loops():
    return _compiled(2)


@pytest.fixture(scope="module")
def eight_loops():
    mdl, model, P = _compiled(8)
    assert model.layout.m >= REDUCED_KKT_MIN           # the null-space path
    return mdl, model, P


def _partitions(model):
    """The model's own dependent speeds and two others (rocker 0's speed dependent)."""
    L = model.layout
    own = model.default_partition
    qdep = own.dependent_coordinates
    others = [Partition(qdep, tuple(range(L.m)), L.N, L.o),
              Partition(qdep, tuple(i for i in range(L.o) if i != L.o // 2), L.N, L.o)]
    return [own] + [p for p in others if p.dependent_speeds != own.dependent_speeds]


@pytest.mark.parametrize("case", ["two_loops", "eight_loops"])
def test_compiled_rhs_in_a_partition_equals_the_python_one(case, request):
    mdl, model, P = request.getfixturevalue(case)
    L = model.layout
    x0 = model.state_array(mdl.initial_state)
    rng = np.random.default_rng(3)
    parts = _partitions(model)
    assert len(parts) == 3
    for part in parts:
        native = native_partition_rhs(model, P, part.u_ind_index)
        assert native is not None
        for k in range(3):
            x = x0.copy()
            x[:L.N] += rng.uniform(-0.2, 0.2, L.N)
            x[L.N:] = rng.uniform(-1.0, 1.0, L.p)
            ref = model.rhs(0.1 * k, x, P, partition=part)
            got, status = native(0.1 * k, x)
            assert status == 0
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        assert native.nfev == 3
        # (B_a = B for constraints differentiated once: the dependent speeds' LU serves the
        # null space too)
        assert native.lu_reused == (3 if L.m >= REDUCED_KKT_MIN else 0)


def test_singular_dependent_set_is_left_to_python(two_loops):
    """At the flat position every set of m speeds has a singular B_dep: status 1."""
    mdl, model, P = two_loops
    L = model.layout
    x = np.zeros(L.N + L.p)
    x[L.N:] = 0.5
    for part in _partitions(model):
        assert native_partition_rhs(model, P, part.u_ind_index)(0.0, x)[1] != 0


def test_what_it_takes(two_loops, eight_loops):
    mdl, model, P = two_loops
    own = model.default_partition
    other = _partitions(model)[1]
    assert native_partition_rhs(model, P, (0, 0)) is None          # not p distinct speeds
    assert native_partition_rhs(compile(mdl.eom, backend="llvm"), P, own.u_ind_index) is None
    # native_solver: the model's own set with few rows keeps native_rhs (the whole system),
    # another set or many rows take native_partition
    cls, extra = native_rk.native_solver(model, P, "DOP853")
    assert type(extra["native"]).__name__ == "NativeRHS"
    cls, extra = native_rk.native_solver(model, P, "DOP853", None, other)
    assert type(extra["native"]).__name__ == "NativePartitionRHS"
    _, big, bigP = eight_loops
    _, extra = native_rk.native_solver(big, bigP, "RK45")
    assert type(extra["native"]).__name__ == "NativePartitionRHS"
    # Radau's steps in C too (native_radau), on the same right-hand sides
    cls, extra = native_rk.native_solver(model, P, "Radau", None, other)
    assert cls.__name__ == "NativeRadau" and type(extra["native"]).__name__ == "NativePartitionRHS"
    assert native_rk.native_solver(model, P, "BDF", None, other) is None


def test_switched_segments_take_compiled_steps(two_loops, monkeypatch):
    """The two-loop N-four-bar switches its dependent set ~30 times in 20 s: those segments
    run in C.  What is guaranteed on any CPU: over a short span (the first 1 s, six switches)
    the compiled run is the Python run to round-off; over the whole run both keep the loops
    closed to round-off and the energy to the tolerance.  (How far the two runs end apart
    after 50+ switches is round-off grown through a sensitive motion: 2e-4 here, CPU- and
    compiler-dependent, so it is not compared.)"""
    mdl, model, P = two_loops
    built = []
    real = native_partition.native_partition_rhs

    def spy(*args):
        found = real(*args)
        built.append(found)
        return found

    monkeypatch.setattr(native_rk, "native_partition_rhs", spy)
    solver = sb.Solver(rtol=1e-8, atol=1e-10)
    short = dict(t_eval=np.linspace(0.0, 1.0, 101), solver=solver)
    tr = sb.simulate(model, (0.0, 1.0), mdl.initial_state, mdl.constants, **short)
    assert tr.status == 0, tr.message
    assert len(tr.partition_changes) >= 4
    assert built and all(b is not None for b in built)     # the switched sets ran in C
    long = sb.simulate(model, (0.0, 20.0), mdl.initial_state, mdl.constants, solver=solver,
                       t_eval=np.linspace(0.0, 20.0, 401), outputs={"E": mdl.energy})
    assert long.status == 0, long.message
    assert len(long.partition_changes) >= 10 and sum(b.nfev for b in built) > 1000
    monkeypatch.setattr(native_rk, "native_partition_rhs", lambda *args: None)
    ref = sb.simulate(model, (0.0, 1.0), mdl.initial_state, mdl.constants, **short)
    assert ref.status == 0
    assert [c.t for c in tr.partition_changes] == pytest.approx([c.t for c in ref.partition_changes],
                                                                abs=1e-9)
    np.testing.assert_allclose(tr.x, ref.x, rtol=0, atol=1e-9)
    # the invariants of the long compiled run
    assert long.max_holonomic_residual < 1e-10        # (the projection's Newton tolerance)
    E = long.outputs["E"]
    assert np.abs(E - E[0]).max() < 1e-5 * max(1.0, np.abs(E).max())
