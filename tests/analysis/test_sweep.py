"""symbody.sweep: cases, failed runs recorded, local processes and a Dask LocalCluster
giving exactly the serial results in the order of the cases."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def _cases():
    cases = sb.grid_cases(q1=np.linspace(0.1, 0.4, 3))
    cases.append({"q1": 0.2, "m": 2.0})            # a constant changed too
    cases.append({"q1": 0.2, "g": float("nan")})   # a bad value: recorded as failed
    return cases


def _same(a, b):
    return a is not None and b is not None and np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)


@pytest.fixture(scope="module")
def serial(four_bar):
    zoo, model = four_bar
    return sb.sweep(model, (0.0, 0.5), _cases(), zoo.constants, x0=zoo.initial_state,
                    execution=sb.Execution(processes=1),
                    final=["q1", "u1"], solver=sb.Solver(rtol=1e-8, atol=1e-9))


def test_serial_sweep_is_a_loop_of_simulate_calls(four_bar, serial):
    zoo, model = four_bar
    assert serial.runner == "serial" and len(serial) == 5
    assert "processes=1" in serial.parallel and serial.table.attrs["parallel"] == serial.parallel
    for i, q1 in enumerate(np.linspace(0.1, 0.4, 3)):
        x0 = serial.initial_states[i]
        assert x0[0] == q1 and np.abs(model.holonomic_residual(x0[:3], zoo.constants)).max() < 1e-12
        ref = sb.simulate(model, (0.0, 0.5), x0, zoo.constants,
                          solver=sb.Solver(rtol=1e-8, atol=1e-9))
        assert _same(ref, serial.trajectories[i])
    p2 = {**zoo.constants, zoo.constant("m"): 2.0}
    ref = sb.simulate(model, (0.0, 0.5), serial.initial_states[3], p2,
                      solver=sb.Solver(rtol=1e-8, atol=1e-9))
    assert _same(ref, serial.trajectories[3])
    table = serial.table
    assert list(table["success"]) == [True, True, True, True, False]
    assert serial.failed == [4] and serial.trajectories[4] is None
    assert "g = nan is not finite" in table["message"][4]
    assert table["final_q1"][0] == serial.trajectories[0].q[-1, 0]
    assert table["final_t"][1] == 0.5
    assert table["m"][3] == 2.0
    # the dependent angles are assembled on the base state's branch: no per-run warning
    assert list(table["warnings"][:4]) == [""] * 4
    assert list(table["branch"][:4]) == [-1] * 4 and table["branch_ok"][:4].all()


def test_local_processes_equal_serial(four_bar, serial):
    zoo, model = four_bar
    par = sb.sweep(model, (0.0, 0.5), _cases(), zoo.constants, x0=zoo.initial_state,
                   execution=sb.Execution(processes=2, parallel=True), final=["q1", "u1"],
                   solver=sb.Solver(rtol=1e-8, atol=1e-9))
    assert par.runner.endswith("processes")
    for a, b in zip(serial.trajectories[:4], par.trajectories[:4]):
        assert _same(a, b)
    for ra, rb in zip(par.records, serial.records):          # the same table but the timings
        ra, rb = dict(ra), dict(rb)
        ra.pop("wall_time"), rb.pop("wall_time")
        assert ra.keys() == rb.keys()
        assert all(ra[k] == rb[k] or (ra[k] != ra[k] and rb[k] != rb[k]) for k in ra)


def test_dask_local_cluster_equals_serial(four_bar, serial):
    distributed = pytest.importorskip("dask.distributed")
    zoo, model = four_bar
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = sb.sweep(model, (0.0, 0.5), _cases(), zoo.constants, x0=zoo.initial_state,
                       execution=sb.Execution(client=client, parallel=True), final=["q1"],
                       solver=sb.Solver(rtol=1e-8, atol=1e-9))
    assert res.runner == "dask"
    for a, b in zip(serial.trajectories[:4], res.trajectories[:4]):
        assert _same(a, b)
    assert res.failed == [4]


def test_case_builders_and_bad_cases(four_bar):
    zoo, model = four_bar
    grid = sb.grid_cases(q1=[0.1, 0.2], m=[1.0, 2.0, 3.0])
    assert len(grid) == 6 and grid[1] == {"q1": 0.1, "m": 2.0}
    a, b = sb.sample_cases(4, seed=3, q1=(0.0, 0.5)), sb.sample_cases(4, seed=3, q1=(0.0, 0.5))
    assert a == b and all(0.0 <= c["q1"] <= 0.5 for c in a)
    with pytest.raises(InputError, match="case key 'mass' is not a state, constant"):
        sb.sweep(model, (0.0, 0.1), [{"mass": 1.0}], zoo.constants, x0=zoo.initial_state,
                 execution=sb.Execution(processes=1))
    with pytest.raises(InputError, match="list of dicts"):
        sb.sweep(model, (0.0, 0.1), {"q1": 0.1}, zoo.constants, x0=zoo.initial_state)
    with pytest.raises(InputError, match=r"\(low, high\)"):
        sb.sample_cases(3, q1=0.5)
    res = sb.sweep(model, (0.0, 0.2), [{"x0": np.array([0.2, 0.1, -2.6, 0.0])}], zoo.constants,
                   execution=sb.Execution(processes=1, keep_trajectories=False))
    assert res.trajectories == [None] and res.records[0]["success"]
