"""The FMU's edges (issue 40, section 2): refused calls say why through the logger, exports
check their numbers and names as simulate does, events are never dropped silently, and the
FMU saves, restores and serializes its state, checked through FMPy."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import Particle, Point, ReferenceFrame, dynamicsymbols

import symbody as sb
from export.helpers import compiler, zoo_model
from symbody.errors import InputError

fmpy = pytest.importorskip("fmpy")
from fmpy import calloc, extract, free, read_model_description  # noqa: E402
from fmpy.fmi2 import (  # noqa: E402
    FMU2Model,
    FMU2Slave,
    fmi2CallbackAllocateMemoryTYPE,
    fmi2CallbackFreeMemoryTYPE,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
)
from fmpy.validation import validate_fmu  # noqa: E402


class Logged:
    """An FMU instance (FMPy) whose logger keeps the messages: ``.fmu`` (the FMU2Slave or
    FMU2Model), ``.messages`` [(status, text)], ``.vr`` {name: value reference}."""

    def __init__(self, path, kind="CoSimulation", name="instance"):
        self.messages: list[tuple[int, str]] = []
        md = read_model_description(str(path))
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.callbacks = fmi2CallbackFunctions()
        self.callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
        self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        cls, ident = ((FMU2Slave, md.coSimulation.modelIdentifier) if kind == "CoSimulation"
                      else (FMU2Model, md.coSimulation.modelIdentifier))
        self.fmu = cls(guid=md.guid, unzipDirectory=extract(str(path)), modelIdentifier=ident,
                       instanceName=name)

    def _log(self, env, name, status, category, message):
        self.messages.append((status, message.decode()))

    def start(self):
        self.fmu.instantiate(callbacks=self.callbacks)
        self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        return self

    def get(self, *names):
        return np.array(self.fmu.getReal([self.vr[n] for n in names]))


@pytest.fixture(scope="module")
def cart_fmu(tmp_path_factory):
    """The pendulum on a cart (n = 1) with its force input, as '1pend.fmu' (a leading digit)."""
    compiler()
    zoo, model = zoo_model("n-link-pendulum-on-cart", n=1, force=True)
    path = sb.export_fmu(model, tmp_path_factory.mktemp("fmu") / "1pend.fmu",
                         constants=zoo.constants, initial_state={"q0": 0.0, "q1": -1.2, "u0": 0.0, "u1": 0.0})
    return zoo, model, path


def test_the_fmu_validates_with_its_new_capabilities(cart_fmu):
    _, _, path = cart_fmu
    assert validate_fmu(str(path)) == []
    md = read_model_description(str(path))
    assert md.coSimulation.modelIdentifier == "m_1pend"    # the prefix before the check
    for interface in (md.coSimulation, md.modelExchange):
        assert interface.canGetAndSetFMUstate and interface.canSerializeFMUstate


def test_do_step_refuses_a_step_that_is_not_positive(cart_fmu):
    _, _, path = cart_fmu
    inst = Logged(path).start()
    inst.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.05)
    before = inst.get("q0", "q1", "u0", "u1")
    for h in (0.0, -0.05, float("nan")):
        with pytest.raises(Exception, match="fmi2DoStep failed"):
            inst.fmu.doStep(currentCommunicationPoint=0.05, communicationStepSize=h)
        status, text = inst.messages[-1]
        assert status == 3 and "communication step size" in text and "must be positive" in text
    assert inst.fmu.getRealStatus(2) == pytest.approx(0.05, abs=1e-15)   # LastSuccessfulTime
    np.testing.assert_array_equal(inst.get("q0", "q1", "u0", "u1"), before)
    inst.fmu.doStep(currentCommunicationPoint=0.05, communicationStepSize=0.05)   # goes on


def test_illegal_calls_say_why(cart_fmu, tmp_path):
    _, _, path = cart_fmu
    inst = Logged(path).start()
    for name, why in (("m0", "is a fixed parameter"), ("q0", "is a state of the co-simulation"),
                      ("der(q0)", "is calculated by the FMU")):
        with pytest.raises(Exception, match="fmi2SetReal failed"):
            inst.fmu.setReal([inst.vr[name]], [1.0])
        assert inst.messages[-1][0] == 3 and f"{name} (value reference" in inst.messages[-1][1]
        assert why in inst.messages[-1][1]
    with pytest.raises(Exception, match="fmi2GetReal failed"):
        inst.fmu.getReal([9999])
    assert "no Real variable has the value reference 9999" in inst.messages[-1][1]
    with pytest.raises(Exception, match="fmi2SetRealInputDerivatives failed"):
        inst.fmu.setRealInputDerivatives([inst.vr["F"]], [2], [1.0])
    assert "interpolates its inputs linearly" in inst.messages[-1][1]
    # a co-simulation-only FMU (a closed loop) instantiated for model exchange
    zoo, model = zoo_model("four-bar")
    loop = sb.export_fmu(model, tmp_path / "loop.fmu", constants=zoo.constants,
                         initial_state=zoo.initial_state)
    me = Logged(loop, kind="ModelExchange")
    with pytest.raises(Exception, match="instantiate"):
        me.fmu.instantiate(callbacks=me.callbacks)
    assert "co-simulation only" in me.messages[-1][1]


def test_fmu_state_get_set_and_serialize(cart_fmu):
    _, _, path = cart_fmu
    inst = Logged(path).start()
    names = ("q0", "q1", "u0", "u1")
    inst.fmu.setReal([inst.vr["F"]], [0.3])
    inst.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.1)
    state = inst.fmu.getFMUstate()
    saved = inst.get(*names)
    inst.fmu.doStep(currentCommunicationPoint=0.1, communicationStepSize=0.2)
    ahead = inst.get(*names)
    inst.fmu.setReal([inst.vr["F"]], [-1.0])           # changed after the state was taken
    inst.fmu.setFMUstate(state)
    np.testing.assert_array_equal(inst.get(*names), saved)
    assert inst.fmu.getRealStatus(2) == pytest.approx(0.1, abs=1e-15)
    inst.fmu.doStep(currentCommunicationPoint=0.1, communicationStepSize=0.2)
    np.testing.assert_array_equal(inst.get(*names), ahead)   # the same step again: same numbers
    data = inst.fmu.serializeFMUstate(state)
    inst.fmu.freeFMUstate(state)
    other = Logged(path, name="other").start()          # a second instance takes the state over
    other.fmu.setFMUstate(other.fmu.deSerializeFMUstate(data))
    np.testing.assert_array_equal(other.get(*names), saved)
    other.fmu.doStep(currentCommunicationPoint=0.1, communicationStepSize=0.2)
    np.testing.assert_array_equal(other.get(*names), ahead)
    with pytest.raises(Exception, match="fmi2DeSerializeFMUstate failed"):
        other.fmu.deSerializeFMUstate(data[:-1])
    assert "not a state of this FMU" in other.messages[-1][1]
    assert not other.messages[:-1]                       # nothing else was logged


def test_exports_check_their_numbers_as_simulate_does(tmp_path):
    zoo, model = zoo_model("n-link-pendulum-on-cart", n=1, force=True)
    bad = {**{str(k): v for k, v in zoo.constants.items()}, "m1": -1.0}
    with pytest.raises(InputError) as simulated:
        sb.simulate(model, (0.0, 1.0), {"q0": 0.0, "q1": -1.2, "u0": 0.0, "u1": 0.0}, bad)
    for export in (lambda: sb.export_fmu(model, tmp_path / "a.fmu", constants=bad),
                   lambda: sb.export_c(model, tmp_path / "c", constants=bad)):
        with pytest.raises(InputError) as exported:
            export()
        assert str(exported.value) == str(simulated.value)      # "body ...: its mass m1 = -1 ..."
    with pytest.raises(InputError, match=r"t_span = \(0, -1\) ends before it starts: stop_time"):
        sb.export_fmu(model, tmp_path / "a.fmu", constants=zoo.constants, stop_time=-1)
    with pytest.raises(InputError, match="rtol must be a positive number"):
        sb.export_fmu(model, tmp_path / "a.fmu", constants=zoo.constants, rtol=float("nan"))
    assert not list(tmp_path.iterdir())


def _q_and_a_constant_q():
    """A particle on a spring: the coordinate q(t) and a constant also called q."""
    x, u = dynamicsymbols("q u")
    k, q = sm.symbols("k q")
    N = ReferenceFrame("N")
    P = Point("P")
    P.set_vel(N, u * N.x)
    km = sb.KanesMethod(N, [x], [u], kd_eqs=[x.diff() - u])
    km.kanes_equations([Particle("p", P, 1)], [(P, -k * (x - q) * N.x)])
    return sb.compile(km.to_eom())


def test_names(tmp_path):
    compiler()
    zoo, model = zoo_model("n-link-pendulum-on-cart", n=1, force=True)
    paths = sb.export_c(model, tmp_path / "c", name="main")     # no keyword of C
    assert paths.header.name == "main.h"
    with pytest.raises(InputError, match="'int', which is a keyword of C"):
        sb.export_c(model, tmp_path / "c", name="int")
    with pytest.raises(InputError, match="must be a C identifier .*got '1pend'"):
        sb.export_c(model, tmp_path / "c", name="1pend")
    clash = _q_and_a_constant_q()
    with pytest.raises(InputError, match=r"'q' \(the coordinate q\(t\) and the constant q\) is "
                                         r"used twice; rename the symbols"):
        sb.export_fmu(clash, tmp_path / "clash.fmu", constants={"k": 1.0, "q": 0.5})
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    for target in (blocker / "x.fmu", tmp_path):             # under a file; a folder itself
        with pytest.raises(InputError, match="export_fmu: cannot write") as err:
            sb.export_fmu(model, target, constants=zoo.constants)
        assert str(target) in str(err.value) and ".partial" not in str(err.value)
    with pytest.raises(InputError, match="export_c: cannot write"):
        sb.export_c(model, blocker / "c", name="m")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "c"]


def test_a_model_that_needs_events_is_not_exported_without_them(tmp_path):
    compiler()
    zoo, model = zoo_model("simplest-walker")
    for export in (lambda **kw: sb.export_c(model, tmp_path / "c", name="walker", **kw),
                   lambda **kw: sb.export_fmu(model, tmp_path / "walker.fmu",
                                              constants=zoo.constants, **kw)):
        with pytest.raises(InputError, match="come with the event 'heelstrike'.*events=False"):
            export()
        export(events=False)                                 # the user says: no events wanted
    with zipfile.ZipFile(tmp_path / "walker.fmu") as zf:
        assert "modelDescription.xml" in zf.namelist()


def test_directional_derivatives_are_the_exact_jacobian(cart_fmu, tmp_path):
    """fmi2GetDirectionalDerivative (model exchange) along each state and the input equals
    the exact ODE Jacobian of symbody's implicit solvers and central differences of
    model.rhs in the input; the snakeboard's (dependent speeds solved) too."""
    from symbody.analysis.simulation.jacobian import ode_jacobian
    from symbody.formatting import symbol_name

    zoo, model, path = cart_fmu
    assert read_model_description(str(path)).modelExchange.providesDirectionalDerivative
    snake_zoo, snake = zoo_model("snakeboard")
    snake_path = sb.export_fmu(snake, tmp_path / "snake.fmu", constants=snake_zoo.constants,
                               initial_state=snake_zoo.initial_state)
    rng = np.random.default_rng(5)
    for zoo_, model_, path_ in ((zoo, model, path), (snake_zoo, snake, snake_path)):
        inst = Logged(path_, kind="ModelExchange").start()
        P = model_.constants_array(zoo_.constants)
        states = [symbol_name(s) for s in model_.states]
        x = model_.state_array(zoo_.initial_state) + rng.normal(scale=0.1, size=len(states))
        inst.fmu.setContinuousStates(np.ctypeslib.as_ctypes(x), len(x))
        der = [inst.vr[f"der({s})"] for s in states]
        J = np.array([inst.fmu.getDirectionalDerivative(der, [inst.vr[s]], [1.0])
                      for s in states]).T
        ref = ode_jacobian(model_, 0.0, x, P)
        np.testing.assert_allclose(J, ref, rtol=1e-11, atol=1e-11 * np.abs(ref).max())
        if model_.specifieds:
            inst.fmu.setReal([inst.vr["F"]], [0.0])
            dF = inst.fmu.getDirectionalDerivative(der, [inst.vr["F"]], [1.0])
            h = 1e-6
            fd = (model_.rhs(0.0, x, P, [h]) - model_.rhs(0.0, x, P, [-h])) / (2 * h)
            np.testing.assert_allclose(dF, fd, rtol=1e-7, atol=1e-8)
        with pytest.raises(Exception, match="fmi2GetDirectionalDerivative failed"):
            inst.fmu.getDirectionalDerivative(der, [inst.vr[str(model_.constants[0])]], [1.0])
        assert "neither a continuous state nor an input" in inst.messages[-1][1]


def test_model_exchange_refuses_a_near_singular_dependent_set(tmp_path):
    """The snakeboard's own dependent set near a singular position: model exchange cannot
    switch it, so fmi2GetDerivatives fails and says why (co-simulation switches)."""
    from symbody.compilation.linear_algebra import determinant, pivoted_columns
    from symbody.export.c_switching import DEFAULT_RATIO

    compiler()
    zoo, model = zoo_model("snakeboard")
    P = model.constants_array(zoo.constants)
    dep = list(model.default_partition.dependent_speeds)
    rng = np.random.default_rng(1)
    for _ in range(2000):
        x = rng.uniform(-np.pi, np.pi, model.layout.nx)
        B = model.constraint_matrices(x[:model.layout.N], P, 0.0)[1]
        best = list(pivoted_columns(B)[0])
        if abs(determinant(B[:, dep])) < 0.5 * DEFAULT_RATIO * abs(determinant(B[:, best])):
            break
    else:
        pytest.fail("no near-singular state found")
    path = sb.export_fmu(model, tmp_path / "snake.fmu", constants=zoo.constants,
                         initial_state=zoo.initial_state)
    inst = Logged(path, kind="ModelExchange").start()
    inst.fmu.setContinuousStates(np.ctypeslib.as_ctypes(x), len(x))
    with pytest.raises(Exception, match="fmi2GetDerivatives failed"):
        inst.fmu.getDerivatives(np.ctypeslib.as_ctypes(np.zeros(len(x))), len(x))
    assert "near singular" in inst.messages[-1][1]
