"""symbody.sweep, issue 24: cases stay on the base state's assembly branch, small sweeps run
serially and say why, lambdas/closures reach the workers, a killed worker loses only its
own case (retried once), checkpoints resume, a spawned sweep without a __main__ guard is
refused before anything starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError

PARENT = os.getpid()


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def _same(a, b):
    return a is not None and b is not None and np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)


def test_readme_sweep_stays_on_the_base_branch(four_bar):
    # the README's sweep: q1 from 0 to 60 deg; from about 51.6 deg on, Newton's method from
    # the base state's q_dep used to land on the other closure (or q2 = 974 deg)
    zoo, model = four_bar
    cases = sb.grid_cases(q1=np.radians(np.linspace(0, 60, 200)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sb.AssemblyBranchWarning)
        res = sb.sweep(model, (0, 2), cases, zoo.constants, x0=zoo.initial_state,
                       execution=sb.Execution(processes=1, progress=False),
                       final=["q1", "q2"])
    table = res.table
    assert not res.failed and table["branch_ok"].all() and set(table["branch"]) == {-1}
    x0 = np.array(res.initial_states)
    assert np.abs(np.diff(x0[:, 1:3], axis=0)).max() < 0.02          # q2, q3 continuous in q1
    assert np.abs(np.diff(table["final_q1"])).max() < 0.05             # was jumps of 0.8 rad
    assert np.abs(x0[:, 1:3]).max() < np.pi and np.abs(table["final_q2"]).max() < 2 * np.pi
    assert (table["warnings"] == "").all()
    # base case: the base state itself (q1 = 10 deg is not a case; its closure has q3 < 0)
    assert np.all(x0[:, 2] < 0)


def test_other_branch_is_flagged_or_chosen(four_bar):
    zoo, model = four_bar
    q2, q3 = model.coordinates[1:3]
    cases = sb.grid_cases(q1=np.radians(np.linspace(40, 60, 12)))
    mirror = {"q1": 0.5, "q2": -1.6, "q3": 2.2}         # a guess on the other closure
    with pytest.warns(sb.AssemblyBranchWarning, match=r"cases 12 were not assembled"):
        res = sb.sweep(model, (0, 0.2), cases + [mirror], zoo.constants, x0=zoo.initial_state,
                       execution=sb.Execution(processes=1, progress=False))
    assert res.off_branch == [12] and res.records[12]["branch"] == 1
    assert res.table["branch_ok"][:12].all() and not res.table["branch_ok"][12]
    # "independent": each case by Newton from the base guess, as simulate alone would
    with pytest.warns(sb.AssemblyBranchWarning):
        ind = sb.sweep(model, (0, 0.2), sb.grid_cases(q1=np.radians(np.linspace(0, 60, 200))),
                       zoo.constants, x0=zoo.initial_state,
                       execution=sb.Execution(processes=1, progress=False),
                       assembly_branch="independent")
    assert 171 in ind.off_branch and 100 not in ind.off_branch
    # an explicit branch: a state on the other closure; every case follows it
    other = model.consistent_state({**zoo.initial_state, q2: -1.6, q3: 2.2}, zoo.constants)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sb.AssemblyBranchWarning)
        res = sb.sweep(model, (0, 0.2), cases, zoo.constants, x0=zoo.initial_state,
                       execution=sb.Execution(processes=1, progress=False), assembly_branch=other)
    assert set(res.table["branch"]) == {1} and res.table["branch_ok"].all()
    with pytest.raises(InputError, match="assembly_branch"):
        sb.sweep(model, (0, 0.2), cases, zoo.constants, x0=zoo.initial_state, assembly_branch="up")


def test_small_sweep_runs_serially_and_says_why(four_bar):
    zoo, model = four_bar
    cases = sb.grid_cases(q1=np.linspace(0.1, 0.3, 6))
    res = sb.sweep(model, (0, 0.5), cases, zoo.constants, x0=zoo.initial_state,
                   execution=sb.Execution(processes=2, progress=False))
    assert res.runner == "serial"
    assert "would not gain from 2 processes" in res.parallel
    assert res.table.attrs["parallel"] == res.parallel
    forced = sb.sweep(model, (0, 0.5), cases, zoo.constants, x0=zoo.initial_state,
                      execution=sb.Execution(processes=2, parallel=True, progress=False))
    assert forced.runner == "2 processes" and "forced by parallel=True" in forced.parallel
    assert all(_same(a, b) for a, b in zip(res.trajectories, forced.trajectories))
    off = sb.sweep(model, (0, 0.5), cases, zoo.constants, x0=zoo.initial_state,
                   execution=sb.Execution(parallel=False, progress=False))
    assert off.runner == "serial" and "parallel=False" in off.parallel


def _lambda_sweep():
    """A pendulum on a cart pushed by a closure, with an event whose condition and action
    are lambdas, over 8 cases: (zoo, model, cases, the keywords of sweep and simulate)."""
    zoo = sb.models.n_link_pendulum_on_cart(1, force=True)
    model = sb.compile(zoo.eom)
    amp = 0.3
    push = lambda t, x: [amp * np.sin(3 * t)]                       # noqa: E731 - a closure
    bump = sb.Event(lambda t, x, p: t - 0.25, name="bump",
                    action=lambda t, x, p: np.concatenate([x[:-1], [x[-1] + 0.1]]))
    cases = sb.grid_cases(q1=np.linspace(0.0, 0.2, 8))
    kw = dict(specifieds=push, events=[bump], solver=sb.Solver(rtol=1e-8, progress=False))
    return zoo, model, cases, kw


def test_lambda_specifieds_and_event_actions_in_worker_processes():
    zoo, model, cases, kw = _lambda_sweep()
    res = sb.sweep(model, (0, 0.5), cases, zoo.constants, x0=zoo.initial_state,
                   execution=sb.Execution(processes=2, parallel=True, progress=False), **kw)
    assert res.runner == "2 processes" and not res.failed
    for x0, traj in zip(res.initial_states, res.trajectories):
        ref = sb.simulate(model, (0, 0.5), x0, zoo.constants, **kw)
        assert _same(ref, traj) and len(traj.events) == 1


def _killer_event(marker: str | None):
    """An event at t = 0.05 whose action kills the worker process running the case with
    m = 1.25 (never the test's own process): always, or only the first time (marker file)."""

    def action(t, x, p):
        if p[-1] == 1.25 and os.getpid() != PARENT:
            if marker is None or not os.path.exists(marker):
                if marker is not None:
                    open(marker, "w").close()
                os.kill(os.getpid(), signal.SIGKILL)
        return x

    return sb.Event(lambda t, x, p: t - 0.05, name="kill", action=action)


@pytest.mark.parametrize("once", [False, True])
def test_killed_worker_loses_only_its_own_case(four_bar, tmp_path, once):
    zoo, model = four_bar
    assert str(model.constants[-1]) == "m"
    cases = sb.grid_cases(q1=np.linspace(0.1, 0.4, 10))
    cases.insert(6, {"q1": 0.2, "m": 1.25})
    marker = str(tmp_path / "killed") if once else None
    res = sb.sweep(model, (0, 0.2), cases, zoo.constants, x0=zoo.initial_state,
                   execution=sb.Execution(processes=2, parallel=True, progress=False),
                   events=[_killer_event(marker)])
    assert len(res) == 11 and res.runner == "2 processes"
    if once:                                  # retried once: the second run succeeded
        assert os.path.exists(marker) and not res.failed
    else:
        assert res.failed == [6]
        rec = res.records[6]
        assert rec["status"] == -101 and "SIGKILL" in rec["message"] and "retried once" in rec["message"]
        assert res.trajectories[6] is None
    for i in (0, 5, 7, 10):
        ref = sb.simulate(model, (0, 0.2), res.initial_states[i], zoo.constants,
                          events=[_killer_event(None)])
        assert _same(ref, res.trajectories[i])


def test_checkpoint_writes_rows_and_resumes(four_bar, tmp_path):
    zoo, model = four_bar
    path = tmp_path / "sweep.jsonl"
    cases = sb.grid_cases(q1=np.linspace(0.1, 0.4, 4))
    kw = dict(final=["q1"])
    first = sb.sweep(model, (0, 0.3), cases, zoo.constants, x0=zoo.initial_state,
                     execution=sb.Execution(checkpoint=path, processes=1, progress=False), **kw)
    lines = path.read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[1])["case"] == 0
    # a sweep killed after two rows (the third cut short): the rerun does only cases 2, 3
    path.write_text("\n".join(lines[:3] + [lines[3][:20]]) + "\n")
    again = sb.sweep(model, (0, 0.3), cases, zoo.constants, x0=zoo.initial_state,
                     execution=sb.Execution(checkpoint=path, processes=1, progress=False), **kw)
    assert len(path.read_text().splitlines()) == 5
    assert again.trajectories[0] is None and again.trajectories[1] is None
    assert _same(again.trajectories[2], first.trajectories[2]) and again.trajectories[3] is not None
    assert "2 cases read back" in again.parallel
    for a, b in zip(first.records, again.records):
        assert a["final_q1"] == b["final_q1"] and a["status"] == b["status"]
    done = sb.sweep(model, (0, 0.3), cases, zoo.constants, x0=zoo.initial_state,
                    execution=sb.Execution(checkpoint=path, processes=1, progress=False), **kw)
    assert done.trajectories == [None] * 4 and "4 cases read back" in done.parallel
    with pytest.raises(InputError, match="other cases"):
        sb.sweep(model, (0, 0.3), cases[:3], zoo.constants, x0=zoo.initial_state,
                 execution=sb.Execution(checkpoint=path, processes=1, progress=False), **kw)


_SCRIPT = """
import multiprocessing
import numpy as np
import symbody as sb
multiprocessing.set_start_method("spawn", force=True)
print("script started", flush=True)
zoo = sb.models.four_bar()
model = sb.compile(zoo.eom)
def run():
    k = 0.5
    cases = sb.grid_cases(q1=np.linspace(0.1, 0.3, 8))
    stop = sb.Event(lambda t, x, p: x[3] - k, name="fast", terminal=True)
    res = sb.sweep(model, (0, 0.3), cases, zoo.constants, x0=zoo.initial_state, processes=2,
                   parallel=True, progress=False, events=[stop])
    print(res.runner, res.parallel.split(",")[0], len(res.failed), flush=True)
{call}
"""


def _run_script(tmp_path, call):
    path = tmp_path / "study.py"
    path.write_text(textwrap.dedent(_SCRIPT.format(call=call)))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)


def test_spawn_without_main_guard_is_refused_before_anything_starts(tmp_path):
    out = _run_script(tmp_path, "run()")
    assert out.returncode != 0
    line = (tmp_path / "study.py").read_text().splitlines().index("run()") + 1
    assert "InputError" in out.stderr and "if __name__" in out.stderr and f"(line {line})" in out.stderr
    assert out.stdout.count("script started") == 1            # no worker ran the script
    ok = _run_script(tmp_path, 'if __name__ == "__main__":\n    run()')
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "2 processes 2 processes (spawn) 0" in ok.stdout


def test_lambdas_on_a_dask_cluster():
    distributed = pytest.importorskip("dask.distributed")
    zoo, model, cases, kw = _lambda_sweep()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = sb.sweep(model, (0, 0.5), cases, zoo.constants, x0=zoo.initial_state,
                       execution=sb.Execution(client=client, parallel=True, progress=False),
                       **kw)
    assert res.runner == "dask" and not res.failed and "Dask" in res.parallel
    for x0, traj in zip(res.initial_states, res.trajectories):
        assert _same(sb.simulate(model, (0, 0.5), x0, zoo.constants, **kw), traj)


def test_killed_dask_worker_loses_only_its_own_case(four_bar):
    distributed = pytest.importorskip("dask.distributed")
    import dask

    zoo, model = four_bar
    cases = sb.grid_cases(q1=np.linspace(0.1, 0.4, 8))
    cases.insert(5, {"q1": 0.2, "m": 1.25})
    # one failure per task (Dask's default is to try a task on 4 workers before giving up)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        res = sb.sweep(model, (0, 0.2), cases, zoo.constants, x0=zoo.initial_state,
                       execution=sb.Execution(client=client, parallel=True, progress=False),
                       events=[_killer_event(None)])
    assert res.failed == [5] and res.records[5]["status"] == -101
    assert "KilledWorker" in res.records[5]["message"]
    for i in (0, 4, 6, 8):
        assert res.trajectories[i] is not None and res.records[i]["success"]


def test_branch_without_a_base_state(four_bar):
    # the base x0 cannot be assembled (q1 unknown): the first case that assembles defines the
    # branch; the first case cannot close the loop at all (l_b = 0.1 m)
    zoo, model = four_bar
    q1 = model.states[0]
    x0 = {**zoo.initial_state, q1: float("nan")}
    cases = [{"q1": 0.2, "l_b": 0.1}] + [{"q1": a} for a in (0.1, 0.2, 0.3)]
    with pytest.warns(sb.AssemblyBranchWarning, match="cases 0 were not"):
        res = sb.sweep(model, (0, 0.1), cases, zoo.constants, x0=x0,
                       execution=sb.Execution(processes=1, progress=False))
    assert res.failed == [0] and res.records[0]["branch_ok"] is False
    assert [r["branch_ok"] for r in res.records[1:]] == [True] * 3
    assert len({r["branch"] for r in res.records[1:]}) == 1


def test_workers_are_kept_between_sweeps_and_a_busy_machine_runs_serially(four_bar, monkeypatch):
    """Issue 40 §6: sweeps of a few ms per run were slower on processes than serially (the
    pool's start-up every time).  The workers are kept for the next sweep of the model (same
    processes, same results), and a machine whose cores are taken by others (the runs timed
    here got less than BUSY_SHARE of a CPU) runs serially, saying so."""
    from symbody.analysis.sweep import driver, processes

    zoo, model = four_bar
    cases = sb.grid_cases(q1=np.linspace(0.1, 0.3, 6))
    kw = dict(x0=zoo.initial_state, execution=sb.Execution(processes=2, parallel=True, progress=False))
    first = sb.sweep(model, (0, 0.2), cases, zoo.constants, **kw)
    assert first.runner == "2 processes" and processes.kept_workers(model) == 2
    pids = sorted(w.proc.pid for w in processes._POOL.idle)
    again = sb.sweep(model, (0, 0.2), cases, zoo.constants, **kw)
    assert "(2 kept from the last sweep)" in again.parallel
    assert sorted(w.proc.pid for w in processes._POOL.idle) == pids
    assert all(_same(a, b) for a, b in zip(first.trajectories, again.trajectories))
    monkeypatch.setattr(driver, "BUSY_SHARE", 2.0)        # every share of a CPU is "busy"
    busy = sb.sweep(model, (0, 0.2), cases, zoo.constants, x0=zoo.initial_state,
                    execution=sb.Execution(processes=2, progress=False))
    assert busy.runner == "serial" and "the machine is busy" in busy.parallel
    assert all(_same(a, b) for a, b in zip(first.trajectories, busy.trajectories))
    processes.stop_workers()
    assert processes.kept_workers(model) == 0
