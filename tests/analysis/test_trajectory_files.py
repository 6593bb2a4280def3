"""Trajectory files keep everything a Trajectory holds and reload to an equal object; damaged
or foreign files give a TrajectoryFileError naming the file (issue 24, items 3 and 7)."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.analysis.events import EventRecord
from symbody.analysis.trajectory import (
    ModelInfo,
    PartitionChange,
    RunReport,
    SampleArrays,
    Trajectory,
)
from systems.bouncing_ball import bouncing_ball

G = 9.81


def _equal(a, b) -> bool:
    """Deep equality over arrays, symbols, dicts, lists and tuples (NaN equals NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(_equal(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_equal(x, y) for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


def assert_same_trajectory(a: Trajectory, b: Trajectory) -> None:
    assert (a.xdot is None) == (b.xdot is None)   # evaluates x' where it is computed on first use
    assert set(vars(a)) == set(vars(b))
    for name in vars(a):
        if name == "projection":     # the model is not in the file: load(path, model=...)
            continue
        assert _equal(getattr(a, name), getattr(b, name)), name


def _full_trajectory() -> Trajectory:
    """A trajectory with every field set (and symbols with assumptions, an extra state,
    impacts with and without a map, vector and scalar outputs)."""
    rng = np.random.default_rng(1)
    k = 9
    t = np.array([0.0, 0.1, 0.2, 0.3, 0.3, 0.4, 0.5, 0.5, 0.6])
    q1, q2, u1, u2, a = me.dynamicsymbols("q1 q2 u1 u2 a")
    real = me.dynamicsymbols("theta", real=True)
    r = me.dynamicsymbols("r")
    m, L = sm.symbols("m L", positive=True)
    x = rng.normal(size=(k, 5))
    u = rng.normal(size=(k, 3))
    hol, vel, mult = rng.normal(size=(k, 1)), rng.normal(size=(k, 2)), rng.normal(size=(k, 2))
    spec = rng.normal(size=(k, 1))
    outputs = {"energy": rng.normal(size=k), "forces": rng.normal(size=(k, 2))}
    return Trajectory(
        SampleArrays(t, x, x[:, :3], u, holonomic_residuals=hol, velocity_residuals=vel,
                     multipliers=mult, specified_values=spec, outputs=outputs,
                     xdot=rng.normal(size=(k, 5))),
        ModelInfo(coordinates=[q1, q2, real], speeds=[u1, u2, a], states=[q1, q2, real, u1, a],
                  constants={m: 1.5, L: 0.25, sm.Symbol("g"): G}, specifieds=[r]),
        RunReport(status=-7, message="events accumulate (Zeno): ...", constraints="project",
                  method="DOP853", nfev=123, nsteps=45, wall_time=0.125,
                  partition_changes=[PartitionChange(0.2, ("q1",), ("u2",))],
                  events=[EventRecord("hit", 0.3, x[3].copy(), x[4].copy()),
                          EventRecord("pass", 0.45, x[5].copy()),
                          EventRecord("hit", 0.5, x[6].copy(), x[7].copy())],
                  segments=[(0.0, 0.3), (0.3, 0.5), (0.5, 0.6)]))


def test_every_field_survives_a_round_trip(tmp_path):
    tr = _full_trajectory()
    back = Trajectory.load(tr.save(tmp_path / "full"))
    assert_same_trajectory(tr, back)
    # the symbols keep their assumptions (m positive, theta real)
    assert next(iter(back.constants)).is_positive and back.coordinates[2].is_real


@pytest.fixture(scope="module")
def ball():
    ball = bouncing_ball()
    model, bounce, q, u, g = ball.model, ball.bounce, ball.q, ball.u, ball.g
    sol = sb.simulate(model, (0.0, 2.0), [1.0, 0.0], {"g": G, "e": 0.8}, events=[bounce],
                      outputs={"energy": u ** 2 / 2 + g * q})
    assert sol.success and len(sol.events) == 3
    return sol


def test_a_bouncing_ball_reloads_with_its_impacts(ball, tmp_path):
    """After the first impact (t1 = sqrt(2/g)) the ball rises to e^2 = 0.64 m at t1 (1 + e)
    = 0.8127 s; main's file lost x' and the events, so the reloaded interpolant gave 0.3778."""
    back = Trajectory.load(ball.save(tmp_path / "ball.npz"))
    assert_same_trajectory(ball, back)
    t_apex = np.sqrt(2 / G) * 1.8
    assert back(t_apex)[0] == pytest.approx(0.64, abs=1e-6)
    assert [e.name for e in back.events] == ["bounce"] * 3 and len(back.segments) == 4
    assert back.events[0].x_after[1] == pytest.approx(-0.8 * back.events[0].x[1])
    np.testing.assert_array_equal(back(np.linspace(0, 2, 50)), ball(np.linspace(0, 2, 50)))


def test_csv_and_dataframe_hold_the_outputs(ball, tmp_path):
    rows = list(csv.reader(open(ball.to_csv(tmp_path / "ball.csv"))))
    assert rows[0][:4] == ["t", "q", "u", "energy"]
    energy = np.array([float(r[3]) for r in rows[1:]])
    np.testing.assert_array_equal(energy, ball.outputs["energy"])
    pd = pytest.importorskip("pandas")
    df = ball.to_dataframe()
    assert isinstance(df, pd.DataFrame) and "energy" in df.columns
    np.testing.assert_array_equal(df["energy"].to_numpy(), ball.outputs["energy"])
    full = _full_trajectory()
    header = list(csv.reader(open(full.to_csv(tmp_path / "full.csv"))))[0]
    for name in ("a", "r", "energy", "forces[0]", "forces[1]", "multiplier_1"):
        assert name in header, name
    assert {"a", "r", "energy", "forces[1]"} <= set(full.to_dataframe().columns)


def _npz(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("case", ["missing", "empty", "random", "text", "npy", "truncated",
                                  "no meta", "bad json", "format", "object array", "shape",
                                  "bad symbol", "bad crc"])
def test_damaged_trajectory_files_name_the_file(ball, tmp_path, case):
    good = ball.save(tmp_path / "good.npz")
    path = tmp_path / f"{case.replace(' ', '_')}.npz"
    raw = good.read_bytes()
    if case == "empty":
        path.write_bytes(b"")
    elif case == "random":
        path.write_bytes(np.random.default_rng(0).bytes(4000))
    elif case == "text":
        path.write_text("t,q,u\n0,1,0\n")
    elif case == "npy":
        np.save(path.with_suffix(".npy"), np.array([object()], dtype=object), allow_pickle=True)
        path = path.with_suffix(".npy")
    elif case == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif case == "no meta":
        _npz(path, t=np.zeros(3))
    elif case in ("bad json", "format", "object array", "shape", "bad symbol"):
        with np.load(good) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays["meta"]))
        if case == "bad json":
            arrays["meta"] = np.array("{not json")
        elif case == "format":
            meta["format"] = "symbody-trajectory-99"
        elif case == "shape":
            arrays["x"] = arrays["x"][:, :1]
        elif case == "bad symbol":
            meta["coordinates"] = [{"symbol": 3}]
        if case != "bad json":
            arrays["meta"] = np.array(json.dumps(meta))
        if case == "object array":
            arrays["t"] = np.array([object()] * 3, dtype=object)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        path.write_bytes(buf.getvalue())
    elif case == "bad crc":
        # flip one byte inside a stored (uncompressed) member: zipfile's CRC check fails
        buf = io.BytesIO()
        with np.load(good) as data:
            np.savez(buf, **{k: data[k] for k in data.files})
        b = bytearray(buf.getvalue())
        info = zipfile.ZipFile(io.BytesIO(bytes(b))).getinfo("t.npy")
        b[info.header_offset + 30 + len(info.filename) + info.extra.__len__() + 200] ^= 0xFF
        path.write_bytes(bytes(b))
    with pytest.raises(sb.TrajectoryFileError) as info:
        Trajectory.load(path)
    text = str(info.value)
    assert str(path) in text and "allow_pickle" not in text
    assert isinstance(info.value, sb.SymbodyFileError) and isinstance(info.value, sb.InputError)
    assert info.value.__cause__ is None or isinstance(info.value.__cause__, OSError)


def test_format_1_files_still_load(tmp_path):
    """A file of the first format (samples and names only) from an earlier symbody."""
    k = 4
    meta = {"format": "symbody-trajectory-1", "coordinates": ["q"], "speeds": ["u"],
            "states": ["q", "u"], "specifieds": [], "constants": [["g", 9.81]], "status": 0,
            "message": "success", "constraints": "none", "method": "RK45", "nfev": 10,
            "nsteps": 3, "wall_time": 0.01, "has_multipliers": False, "partition_changes": []}
    x = np.arange(2 * k, dtype=float).reshape(k, 2)
    path = _npz(tmp_path / "old.npz", t=np.arange(k, dtype=float), x=x, q=x[:, :1], u=x[:, 1:],
                holonomic_residuals=np.zeros((k, 0)), velocity_residuals=np.zeros((k, 0)),
                meta=np.array(json.dumps(meta)))
    tr = Trajectory.load(path)
    assert tr.coordinates == (me.dynamicsymbols("q"),) and tr.segments == [(0.0, 3.0)]
    assert tr.constants == {sm.Symbol("g"): 9.81} and tr.events == [] and tr.xdot is None


def test_load_finds_the_name_given_to_save_and_columns_are_unique(ball, tmp_path):
    ball.save(tmp_path / "run")                       # writes run.npz
    assert len(Trajectory.load(tmp_path / "run").t) == len(ball.t)
    with pytest.raises(sb.TrajectoryFileError, match="run2"):
        Trajectory.load(tmp_path / "run2")
    tr = _full_trajectory()
    tr.outputs["r"] = tr.specified_values[:, 0]       # as the built-in "specifieds" output names it
    header = list(csv.reader(open(tr.to_csv(tmp_path / "dup.csv"))))[0]
    assert len(header) == len(set(header))
