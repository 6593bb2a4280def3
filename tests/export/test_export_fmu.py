"""symbody.export_fmu: FMPy validates the FMU and simulates it to sb.simulate's numbers
(1e-5 over 5 s), the four-bar's loop closed in the FMU's own output (1e-8 m); the pendulum
on a cart takes its force as an FMU input.  Refusals name the feature."""

from __future__ import annotations

import math
import subprocess
import zipfile

import numpy as np
import pytest

import symbody as sb
from export.helpers import compiler, zoo_model
from symbody.analysis.initial_state import InitialStateWarning
from symbody.errors import CompilationError, InputError
from symbody.formatting import symbol_name

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

TIGHT = sb.Solver(rtol=1e-11, atol=1e-12)


def test_four_bar_fmu_validates_and_keeps_its_loop_closed(tmp_path):
    compiler()
    zoo, model = zoo_model("four-bar")
    fmu = sb.export_fmu(model, tmp_path / "four_bar.fmu", constants=zoo.constants,
                        initial_state=zoo.initial_state)
    assert validate_fmu(str(fmu)) == []
    with zipfile.ZipFile(fmu) as zf:
        names = zf.namelist()
        xml = zf.read("modelDescription.xml").decode()
    assert {"sources/four_bar.c", "sources/four_bar.h", "sources/four_bar_fmi2.c"} <= set(names)
    assert any(n.startswith("binaries/") for n in names)
    src = tmp_path / "unzipped"
    with zipfile.ZipFile(fmu) as zf:
        zf.extractall(src)
    strict = subprocess.run([compiler(), "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC",
                             "-shared", f"-I{src / 'sources'}", str(src / "sources/four_bar.c"),
                             str(src / "sources/four_bar_fmi2.c"), "-o", str(tmp_path / "fb.so"),
                             "-lm"], capture_output=True, text=True)
    assert strict.returncode == 0, strict.stderr       # the sources build warning-free
    assert "<ModelExchange" not in xml          # a closed loop: co-simulation only (it projects)
    grid = np.linspace(0.0, 5.0, 501)
    res = fmpy.simulate_fmu(str(fmu), stop_time=5.0, output_interval=0.01, fmi_type="CoSimulation")
    np.testing.assert_allclose(res["time"], grid, atol=1e-12)
    traj = sb.simulate(model, (0.0, 5.0), zoo.initial_state, zoo.constants, solver=TIGHT,
                       t_eval=grid)
    for i, q in enumerate(model.states):
        name = symbol_name(q)
        np.testing.assert_allclose(res[name], traj.x[:, i], atol=1e-5, err_msg=name)
    for j in (1, 2):                               # the dependent speeds, solved in the FMU
        np.testing.assert_allclose(res[f"u{j + 1}"], traj.u[:, j], atol=1e-5)
    loop = np.abs(np.stack([res["loop_residual_0"], res["loop_residual_1"]]))
    assert loop.max() < 1e-8                       # the loop stays closed (metres)
    assert np.ptp(res["q1"]) > 1.0                 # and the linkage really moved


def _cart_state(n=3):
    state = {"q0": 0.0, "u0": 0.0}
    for i in range(1, n + 1):
        state[f"q{i}"] = -math.pi / 2 + (-1) ** i * math.radians(10.0)
        state[f"u{i}"] = 0.0
    return state


@pytest.mark.parametrize("fmi_type", ["CoSimulation", "ModelExchange"])
def test_pendulum_on_cart_fmu_with_its_force_as_input(tmp_path, fmi_type):
    compiler()
    zoo, model = zoo_model("n-link-pendulum-on-cart", n=3, force=True)
    fmu = sb.export_fmu(model, tmp_path / "cart.fmu", constants=zoo.constants,
                        initial_state=_cart_state(), outputs=zoo.outputs)
    assert validate_fmu(str(fmu)) == []
    grid = np.linspace(0.0, 5.0, 501)
    force = 0.05 * np.sin(3.0 * grid) + 0.02 * np.cos(7.0 * grid)
    if fmi_type == "ModelExchange":
        # FMPy's model exchange holds an input between output points (a jump for CVode at
        # each one): the equations are checked with the input at its start value, zero
        force = np.zeros_like(grid)
        res = fmpy.simulate_fmu(str(fmu), stop_time=5.0, output_interval=0.01,
                                fmi_type=fmi_type, relative_tolerance=1e-10)
    else:   # FMPy's own loop, with the input's slope: simulate_fmu's set_input_derivatives
        res = _co_simulate(fmu, grid, force)   # holds 9 derivatives only (FMPy 0.3.32)
    traj = sb.simulate(model, (0.0, 5.0), _cart_state(), zoo.constants, solver=TIGHT, t_eval=grid,
                       specifieds={"F": sb.Tabulated(grid, force)},
                       outputs={"tip_height": zoo.outputs["tip_height"]})
    for i, q in enumerate(model.states):
        name = symbol_name(q)
        np.testing.assert_allclose(res[name], traj.x[:, i], atol=1e-5, err_msg=name)
    np.testing.assert_allclose(res["tip_height"], traj.outputs["tip_height"], atol=1e-5)
    assert np.ptp(res["q0"]) > 1e-3                 # the cart moved


def _co_simulate(fmu, grid, force):
    """The FMU stepped by FMPy's FMU2Slave over ``grid``, the force linear in each step."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    names = [v.name for v in md.modelVariables if v.causality == "output"]
    unzipped = extract(str(fmu))
    slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="cart")
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    rows = []
    for k, t in enumerate(grid):
        rows.append(slave.getReal([vr[n] for n in names]))
        if k + 1 == len(grid):
            break
        h = grid[k + 1] - t
        slave.setReal([vr["F"]], [force[k]])
        slave.setRealInputDerivatives([vr["F"]], [1], [(force[k + 1] - force[k]) / h])
        slave.doStep(currentCommunicationPoint=t, communicationStepSize=h)
    slave.terminate()
    slave.freeInstance()
    values = np.array(rows)
    return {n: values[:, j] for j, n in enumerate(names)}


def test_refusals_and_a_missing_compiler(tmp_path, monkeypatch):
    zoo, model = zoo_model("n-link-pendulum-on-cart", n=3, force=True)
    with pytest.raises(InputError, match="events"):
        sb.export_c(model, tmp_path, name="m", events=[object()])
    with pytest.raises(InputError, match="events"):
        sb.export_fmu(model, tmp_path / "a.fmu", constants=zoo.constants, events=[object()])
    with pytest.raises(InputError, match=r"inputs is a callable"):
        sb.export_fmu(model, tmp_path / "a.fmu", constants=zoo.constants,
                      inputs=lambda t, x: [0.0])
    with pytest.raises(InputError, match="constants"):
        sb.export_fmu(model, tmp_path / "a.fmu")
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with pytest.raises(CompilationError, match="no-such-compiler.*was not found"):
        sb.export_fmu(model, tmp_path / "a.fmu", constants=zoo.constants)
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", str(tmp_path))             # no cc, gcc or clang anywhere
    with pytest.raises(CompilationError, match="needs a C compiler.*apt-get install gcc"):
        sb.export_fmu(model, tmp_path / "a.fmu", constants=zoo.constants)
    assert not (tmp_path / "a.fmu").exists()


def test_moving_pivot_time_dependent_loop_with_an_input(tmp_path):
    """f_h(q, t) with the pivot moving as a sin(w t) and a constant input force: the FMU's
    co-simulation follows sb.simulate and keeps f_h(q, t) = 0 at every output time."""
    compiler()
    from systems.moving_pivot import P1, hanging_y, pendulum_eom

    model = sb.compile(pendulum_eom())
    state = {"x": 0.3, "y": float(hanging_y(0.0, 0.3)) + 0.01, "u_x": 0.2}   # y assembled at start
    fmu = sb.export_fmu(model, tmp_path / "pivot.fmu", constants=P1, initial_state=state,
                        inputs={"F": 0.4})
    assert validate_fmu(str(fmu)) == []
    grid = np.linspace(0.0, 5.0, 251)
    res = fmpy.simulate_fmu(str(fmu), stop_time=5.0, output_interval=0.02)
    with pytest.warns(InitialStateWarning, match="differs by 0.01"):   # simulate says so
        traj = sb.simulate(model, (0.0, 5.0), state, P1, solver=TIGHT, t_eval=grid,
                           specifieds={"F": 0.4})
    for i, q in enumerate(model.states):
        np.testing.assert_allclose(res[symbol_name(q)], traj.x[:, i], atol=1e-5)
    assert np.abs(res["loop_residual_0"]).max() < 1e-8
    np.testing.assert_allclose(res["y"], hanging_y(grid, res["x"]), atol=1e-8)


def test_an_output_that_is_a_state_is_that_variable_and_a_clash_is_refused(tmp_path):
    compiler()
    zoo, model = zoo_model("n-link-pendulum-on-cart", n=3, force=True)
    q0 = model.coordinates[0]
    fmu = sb.export_fmu(model, tmp_path / "c.fmu", constants=zoo.constants,
                        outputs={"q0": q0, "tip_height": zoo.outputs["tip_height"]})
    with zipfile.ZipFile(fmu) as zf:
        xml = zf.read("modelDescription.xml").decode()
    assert xml.count('name="q0"') == 1 and xml.count('name="tip_height"') == 1
    with pytest.raises(InputError, match=r"'q0' \(the coordinate q0\(t\) and the output 'q0'\) is used twice; rename the outputs"):
        sb.export_fmu(model, tmp_path / "d.fmu", constants=zoo.constants, outputs={"q0": 2 * q0})
