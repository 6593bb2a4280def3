"""The FMU's ``modelDescription.xml``: its variables (names, value references, causality,
start values) and model structure (outputs, derivatives, initial unknowns)."""

from __future__ import annotations

from datetime import UTC, datetime
from xml.sax.saxutils import quoteattr

from ..version import __version__
from .fmu_plan import _Plan
from .fmu_state import CAPABILITIES


def _variable(name: str, vr: int, causality: str, variability: str, initial: str | None,
              start: float | None = None, description: str = "", derivative: int | None = None) -> str:
    attrs = f"name={quoteattr(name)} valueReference=\"{vr}\""
    if description:
        attrs += f" description={quoteattr(description)}"
    attrs += f" causality=\"{causality}\" variability=\"{variability}\""
    if initial:
        attrs += f" initial=\"{initial}\""
    real = ""
    if start is not None:
        real += f" start=\"{float(start)!r}\""
    if derivative is not None:
        real += f" derivative=\"{derivative}\""
    return f"    <ScalarVariable {attrs}>\n      <Real{real}/>\n    </ScalarVariable>"


def _model_description(plan: _Plan) -> tuple[str, list[str]]:
    gen, ident, guid, vr, has_me = plan.gen, plan.ident, plan.guid, plan.vr, plan.has_me
    start_x, start_p, start_r = plan.start_x, plan.start_p, plan.start_r
    residual_names = plan.residual_names
    L = gen.layout
    variables: list[str] = []
    index: dict[str, int] = {}
    names_used: list[str] = []

    def add(text: str, key: str, name: str) -> None:
        variables.append(text)
        index[key] = len(variables)
        names_used.append(name)

    for i, name in enumerate(gen.states):
        kind = ("coordinate" if i < L.N else "independent speed" if i < L.nxm else "extra state")
        # q_dep: a start guess, solved from f_h = 0 at initialization
        initial = "approx" if L.n <= i < L.N else "exact"
        add(_variable(name, vr["X"] + i, "output", "continuous", initial, start_x[i], kind),
            f"x{i}", name)
    for j in range(L.m):
        name = gen.speeds[L.p + j]
        add(_variable(name, vr["UDEP"] + j, "output", "continuous", "calculated",
                      description="dependent speed (from the velocity constraints)"), f"ud{j}", name)
    for i, name in enumerate(gen.constants):
        add(_variable(name, vr["P"] + i, "parameter", "fixed", "exact", start_p[i], "constant"),
            f"p{i}", name)
    for i, name in enumerate(gen.inputs):
        add(_variable(name, vr["R"] + i, "input", "continuous", None, start_r[i],
                      "specified input"), f"r{i}", name)
    for i, name in enumerate(gen.outputs):
        add(_variable(name, vr["Y"] + i, "output", "continuous", "calculated",
                      description="output expression"), f"y{i}", name)
    for i, name in enumerate(residual_names):
        add(_variable(name, vr["RES"] + i, "output", "continuous", "calculated",
                      description="holonomic constraint residual f_h (closed loop)"),
            f"res{i}", name)
    if has_me:
        for i, name in enumerate(gen.states):
            add(_variable(f"der({name})", vr["DER"] + i, "local", "continuous", "calculated",
                          derivative=index[f"x{i}"]), f"der{i}", f"der({name})")
    outputs = [index[k] for k in index if k.startswith(("x", "ud", "y", "res"))]
    derivatives = [index[f"der{i}"] for i in range(L.nx)] if has_me else []
    initial_unknowns = sorted([index[k] for k in index if k.startswith(("ud", "y", "res"))]
                              + [index[f"x{i}"] for i in range(L.n, L.N)] + derivatives)

    def unknowns(tag: str, items: list[int]) -> str:
        if not items:
            return ""
        rows = "\n".join(f'      <Unknown index="{i}"/>' for i in sorted(items))
        return f"    <{tag}>\n{rows}\n    </{tag}>\n"

    sources = (f'      <SourceFiles>\n        <File name="{ident}.c"/>\n'
               f'        <File name="{ident}_fmi2.c"/>\n      </SourceFiles>\n')
    derivative = f'providesDirectionalDerivative="{"true" if gen.derivatives else "false"}"'
    me = (f'  <ModelExchange modelIdentifier="{ident}" canNotUseMemoryManagementFunctions="true" '
          f'{CAPABILITIES} {derivative}>\n{sources}'
          "  </ModelExchange>\n") if has_me else ""
    cs = (f'  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true" '
          'canInterpolateInputs="true" maxOutputDerivativeOrder="0" '
          f'canNotUseMemoryManagementFunctions="true" {CAPABILITIES} {derivative}>\n{sources}'
          '  </CoSimulation>\n')
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<fmiModelDescription fmiVersion="2.0" modelName={quoteattr(ident)} guid="{guid}" '
        f'description={quoteattr(plan.description)} generationTool="symbody {__version__}" '
        f'generationDateAndTime="{now}" variableNamingConvention="flat" '
        'numberOfEventIndicators="0">\n'
        + me + cs
        + f'  <DefaultExperiment startTime="0.0" stopTime="{float(plan.stop_time)!r}" '
          f'tolerance="{float(plan.rtol)!r}"/>\n'
        + "  <ModelVariables>\n" + "\n".join(variables) + "\n  </ModelVariables>\n"
        + "  <ModelStructure>\n" + unknowns("Outputs", outputs)
        + unknowns("Derivatives", derivatives) + unknowns("InitialUnknowns", initial_unknowns)
        + "  </ModelStructure>\n</fmiModelDescription>\n")
    return text, names_used
