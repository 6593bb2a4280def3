"""The command line's papercuts (issue 34, item 5): a closed pipe ends quietly, --version,
and a user's own model ``FILE.py:FUNCTION``."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import symbody as sb
from symbody.analysis.trajectory import Trajectory
from symbody.cli import EXIT_CLOSED_PIPE, main
from symbody.formatting import symbol_name

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")

PENDULUM = textwrap.dedent('''
    import sympy as sm
    import sympy.physics.mechanics as me
    import symbody as sb

    def build(damped=False):
        t = me.dynamicsymbols._t
        q, u = me.dynamicsymbols("q u")
        g, l, c = sm.symbols("g l c")
        damping = c * u if damped else 0
        eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                                   dynamic=(sm.Matrix([[l]]), sm.Matrix([g * sm.sin(q) + damping])),
                                   constants=[g, l, c])
        tip = sm.Matrix([l * sm.sin(q), -l * sm.cos(q), 0])
        return sb.models.Model.create(
            name="my-pendulum", description="a pendulum from a user's file", eom=eom, method=None,
            constants={g: 9.81, l: 2.0, c: 0.5}, initial_state={q: 1.0, u: 0.0}, t_span=(0.0, 2.0),
            drawing=sb.models.Drawing(points={"O": sm.Matrix([0, 0, 0]), "P": tip},
                                      lines=[["O", "P"]]))

    def not_a_model():
        return 42
''')


class _ClosedPipe:
    """A stdout whose reader has gone away."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_closed_pipe_ends_quietly(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    assert main(["list"]) == EXIT_CLOSED_PIPE
    assert capsys.readouterr().err == ""          # no traceback, no message


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"symbody {sb.__version__}"


def test_simulate_a_users_model_file(tmp_path, capsys):
    path = tmp_path / "mymodel.py"
    path.write_text(PENDULUM)
    out = tmp_path / "out"
    code = main(["simulate", f"{path}:build", "--tf", "1", "--set", "damped=true", "--set", "l=1.5",
                 "--out", str(out), "--no-animation", "--quiet"])
    assert code == 0, capsys.readouterr()
    traj = Trajectory.load(out / "trajectory.npz")
    assert {str(k): v for k, v in traj.constants.items()}["l"] == 1.5
    # the same run in Python: the file's model, the same options
    import importlib.util
    spec = importlib.util.spec_from_file_location("mymodel_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.build(damped=True).with_constants(l=1.5)
    numeric = sb.compile(model.eom)
    ref = sb.simulate(numeric, (0.0, 1.0), numeric.state_array(model.initial_state),
                      numeric.constants_array(model.constants), t_eval=traj.t)
    np.testing.assert_allclose(traj.x, ref.x, rtol=0, atol=1e-12)
    assert "damped" not in (out / "summary.txt").read_text().split("constants:")[1]


@pytest.mark.parametrize("suffix, message", [
    (":nothing", "has no function 'nothing'"),
    (":not_a_model", "returned a int, not a symbody.models.Model"),
    (":1x", "a function name after the colon"),
])
def test_users_model_errors_exit_2(tmp_path, capsys, suffix, message):
    path = tmp_path / "mymodel.py"
    path.write_text(PENDULUM)
    assert main(["simulate", f"{path}{suffix}", "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_users_model_missing_file_exit_2(tmp_path, capsys):
    assert main(["linearize", f"{tmp_path / 'none.py'}:build"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_simulate_a_saved_model_file(tmp_path, capsys):
    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    path = model.save(tmp_path / "fb.npz")
    consts = {str(k): v for k, v in zoo.constants.items()}
    state = {symbol_name(k): v for k, v in zoo.initial_state.items()}
    sets = [f"{k}={v!r}" for k, v in {**consts, "q1": state["q1"], "u1": 0.0,
                                      "q2": state["q2"], "q3": state["q3"]}.items()]
    out = tmp_path / "out"
    argv = ["simulate", str(path), "--tf", "1", "--out", str(out), "--quiet"]
    for item in sets:
        argv += ["--set", item]
    assert main(argv) == 0, capsys.readouterr()
    traj = Trajectory.load(out / "trajectory.npz")
    ref = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants, t_eval=traj.t)
    np.testing.assert_array_equal(traj.x, ref.x)       # the file's machine code: the same numbers
    assert (out / "time_histories.png").is_file() and (out / "summary.txt").is_file()
    # every constant is needed, and --tf
    assert main(["simulate", str(path), "--tf", "1", "--set", "m=1", "--quiet"]) == 2
    assert "give every constant and independent state with --set; missing" in capsys.readouterr().err
    assert main(["simulate", str(path), "--quiet"]) == 2
    assert "give --tf" in capsys.readouterr().err
    assert main(["simulate", str(tmp_path / "none.npz"), "--tf", "1", "--quiet"]) == 2
    assert "no such model file" in capsys.readouterr().err
