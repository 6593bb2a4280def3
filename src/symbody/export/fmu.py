"""A compiled model as an FMI 2.0 FMU: co-simulation always, model exchange where it fits.

The FMU holds the model's generated C (:mod:`.c_code`), a glue file implementing the FMI 2.0
C API (``fmu_glue``, ``fmu_instance``, ``fmu_api``: the declarations written from the
standard's interface; no third-party code), ``modelDescription.xml`` (``fmu_description``)
and the shared library built by the system's C compiler::

    modelDescription.xml
    binaries/<platform>/<id>.so        (linux64, darwin64 -> .dylib)
    sources/<id>.h, <id>.c, <id>_fmi2.c

Co-simulation integrates x = [q, u_ind, x_e] with an embedded Dormand-Prince 5(4) pair
(error control with the export's ``rtol``/``atol``) and, for closed loops, projects q_dep back
onto f_h(q, t) = 0 by Newton's method after every accepted step, so the loop never opens;
the residuals f_h are outputs (``loop_residual_<i>``).  Inputs may be interpolated linearly
inside a step (``canInterpolateInputs``: fmi2SetRealInputDerivatives of order 1).  Model
exchange is offered for models without holonomic constraints only: an importer's
integrator cannot be made to project, so a closed loop would drift open.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import uuid
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..compilation import c_kernels
from ..errors import CompilationError, InputError
from .c_code import check_exportable, check_not_callable, generate_c
from .fmu_description import _model_description
from .fmu_glue import _glue
from .fmu_plan import _Plan
from .validation import (
    OutputLocation,
    check_distinct_names,
    check_events,
    check_identifier,
    check_stop_time,
    check_tolerances,
    identifier_from_path,
)

__all__ = ["export_fmu", "find_compiler"]


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` when set (it must exist), else cc, gcc or clang;
    CompilationError saying how to get one otherwise."""
    env = os.environ.get("CC", "").strip()
    if env:
        if shutil.which(env.split()[0]) is None:
            raise CompilationError(
                f"the C compiler CC={env!r} was not found: set CC to a working C compiler "
                "(e.g. gcc or clang) or unset it to use cc from the PATH")
        return env.split()
    for cc in ("cc", "gcc", "clang"):
        if shutil.which(cc):
            return [cc]
    raise CompilationError(
        "export_fmu needs a C compiler and none was found (cc, gcc, clang or $CC): install one, "
        "e.g. `apt-get install gcc` (Debian/Ubuntu), `dnf install gcc` (Fedora), "
        "`xcode-select --install` (macOS), or `conda install -c conda-forge c-compiler`")


def _platform() -> tuple[str, str]:
    system, machine = platform.system(), platform.machine().lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        return "linux64", ".so"
    if system == "Linux" and machine in ("aarch64", "arm64"):
        return "aarch64-linux", ".so"
    if system == "Darwin":
        return "darwin64", ".dylib"
    raise CompilationError(f"export_fmu builds binaries for Linux and macOS; this platform is "
                           f"{system} {machine}")


def _build(cc: list[str], sources: list[Path], out: Path, include: Path, large: bool) -> None:
    opt = c_kernels.OPT_FLAGS.split() if large else ["-O2"]
    cmd = [*cc, "-std=c99", *opt, "-fPIC", "-shared", "-fvisibility=hidden",
           f"-I{include}", *map(str, sources), "-o", str(out), "-lm"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except OSError as exc:
        raise CompilationError(f"the C compiler {cc[0]!r} could not be run: {exc}") from exc
    if r.returncode != 0:
        raise CompilationError(f"building the FMU's binary failed ({' '.join(cmd[:3])} ...): "
                               f"{r.stderr[:2000]}")


def _without_repeated_variables(model: Any, outputs: Mapping | None) -> Mapping | None:
    """``outputs`` without the entries that are a variable of the FMU already: the name of a
    coordinate or speed whose expression is that very symbol (``{"s": s(t)}``)."""
    if not isinstance(outputs, Mapping):
        return outputs
    from ..formatting import symbol_name
    own = {symbol_name(v): v for v in (*model.coordinates, *model.speeds)}
    return {k: e for k, e in outputs.items() if not (k in own and e == own[k])}


def export_fmu(model: Any, path: str | Path, *, constants: Any = None, initial_state: Any = None,
               inputs: Any = None, specifieds: Any = None, outputs: Mapping | None = None,
               name: str | None = None,
               rtol: float = 1e-10, atol: float = 1e-12, stop_time: float = 10.0,
               events: Any = None) -> Path:
    """Write ``model`` as an FMI 2.0 FMU at ``path`` (a ``.fmu`` zip); returns the path.

    Variables carry the model's names: coordinates and independent speeds (outputs with
    start values ``initial_state``; the FMU's continuous states), dependent speeds (outputs),
    constants (parameters, values ``constants``), specified inputs (inputs, start values
    ``inputs``, or ``specifieds`` as simulate names them), the ``outputs`` ``{name: SymPy
    expression}`` (an entry that is a coordinate or speed under its own name is that
    variable already) and, for closed loops, the
    residuals ``loop_residual_<i>`` of f_h(q, t) = 0.  Co-simulation integrates with a
    Dormand-Prince 5(4) pair at ``rtol``/``atol`` and projects q_dep onto f_h = 0 after every
    step (also at initialization: q_ind held, q_dep solved from the start values); model
    exchange is offered when the model has no holonomic constraints.  The binary is built
    by the system's C compiler (``$CC``, cc, gcc or clang) for this platform; the C sources
    are included under ``sources/``.

    A model whose dependent set may change (unreduced dynamics with velocity constraints)
    is integrated in co-simulation in the full state [q, u, x_e], the dependent coordinates
    and speeds chosen afresh (best conditioned) at each projection, so the FMU passes the
    singular positions of any one set; model exchange keeps the model's set and reports an
    error where it is near singular.  The FMU saves, restores and serializes its state
    (``canGetAndSetFMUstate``, ``canSerializeFMUstate``), and every refused call says why
    through the importer's logger.

    The model identifier is ``name`` or the file name's stem (other characters than letters,
    digits and _ replaced by _, ``m_`` before a leading digit: '1pend.fmu' -> m_1pend).
    The constants and start values are checked as ``simulate`` checks them (finite,
    positive masses, positive semidefinite inertias); ``stop_time`` (the DefaultExperiment's
    end, after its start 0), ``rtol`` and ``atol`` must be positive.

    Refused with a message naming the feature: ``events`` (impacts and other events cannot
    be carried), a model whose equations come with events (the zoo's walkers) unless
    ``events=False`` says they are not wanted, a redundant constraint set, callables as
    inputs, constants or initial state, two variables of the same name, a path that cannot
    be written; a missing C compiler (CompilationError saying how to get one).
    """
    check_exportable(model, "export_fmu")
    check_events(model, events, "export_fmu")
    if specifieds is not None:
        if inputs is not None:
            raise InputError("export_fmu: give the inputs' start values once, as inputs= or as "
                             "specifieds= (the same thing, simulate's name), not both")
        inputs = specifieds
    for value, arg in ((constants, "constants"), (initial_state, "initial_state"),
                       (inputs, "inputs")):
        check_not_callable(value, "export_fmu", arg)
    path = Path(path)
    OutputLocation(path, "export_fmu").check_file()
    ident = check_identifier(name) if name is not None else identifier_from_path(path)
    rtol, atol = check_tolerances(rtol, atol)
    stop_time = check_stop_time(stop_time)
    L = model.layout
    if L.c and constants is None:
        raise InputError("export_fmu needs the constants' values (constants=, a dict by symbol or "
                         "name): they are the FMU's parameter start values")
    outputs = _without_repeated_variables(model, outputs)
    check_distinct_names(_variable_names(model, outputs), "export_fmu")
    gen = generate_c(model, ident, outputs=outputs, constants=constants,
                     initial_state=initial_state, what="export_fmu", derivatives=True)
    L = gen.layout
    P = model.constants_array(constants) if L.c else np.empty(0)
    X = model.state_array(initial_state) if initial_state is not None else np.zeros(L.nx)
    R = model.specifieds_array(inputs) if L.s and inputs is not None else np.zeros(L.s)
    if L.M and initial_state is not None:
        model.consistent_state(X, P)     # the start values assemble (InputError saying why not)
    cc = find_compiler()
    plat, ext = _platform()
    ny = len(gen.outputs)
    vr = {"X": 0}
    vr["UDEP"] = vr["X"] + L.nx
    vr["P"] = vr["UDEP"] + L.m
    vr["R"] = vr["P"] + L.c
    vr["Y"] = vr["R"] + L.s
    vr["RES"] = vr["Y"] + ny
    vr["DER"] = vr["RES"] + L.M
    vr["END"] = vr["DER"] + L.nx
    guid = "{" + str(uuid.UUID(hashlib.sha256(
        (gen.source + repr((X.tolist(), P.tolist(), R.tolist(), rtol, atol))).encode())
        .hexdigest()[:32])) + "}"
    description = f"symbody model {getattr(model.eom, 'name', None) or ident}"
    plan = _Plan(gen=gen, ident=ident, guid=guid, start_x=X, start_p=P, start_r=R, vr=vr,
                 has_me=L.M == 0, rtol=rtol, atol=atol, stop_time=stop_time,
                 description=description)
    xml, _ = _model_description(plan)
    glue = _glue(plan)
    large = len(gen.source) > 400_000
    with tempfile.TemporaryDirectory(prefix="symbody-fmu-") as tmp:
        root = Path(tmp)
        src = root / "sources"
        src.mkdir()
        (src / f"{ident}.h").write_text(gen.header)
        (src / f"{ident}.c").write_text(gen.source)
        (src / f"{ident}_fmi2.c").write_text(glue)
        (src / "README.md").write_text(gen.readme)
        binary = root / "binaries" / plat / f"{ident}{ext}"
        binary.parent.mkdir(parents=True)
        _build(cc, [src / f"{ident}.c", src / f"{ident}_fmi2.c"], binary, src, large)
        (root / "modelDescription.xml").write_text(xml)
        staged = Path(tmp + ".fmu")                 # beside the tree, not inside it
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(root.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(root).as_posix())
        partial = path.with_name(path.name + ".partial")   # then renamed: never half written
        try:
            with OutputLocation(path, "export_fmu"):
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(staged, partial)
                os.replace(partial, path)
        finally:
            staged.unlink()
            if partial.exists() and not partial.is_dir():
                partial.unlink()
    return path


def _variable_names(model: Any, outputs: Mapping | None) -> list[tuple[str, str]]:
    """(FMU variable name, what it is) of every variable ``export_fmu`` writes."""
    from ..formatting import symbol_name
    L = model.layout
    named = [("coordinate", model.coordinates), ("speed", model.speeds),
             ("extra state", model.extra_states), ("constant", model.constants),
             ("input", model.specifieds)]
    kinds = [(symbol_name(s), f"the {kind} {s}") for kind, symbols in named for s in symbols]
    kinds += [(str(k), f"the output {k!r}") for k in (outputs or {})]
    kinds += [(f"loop_residual_{i}", "a loop residual") for i in range(L.M)]
    if L.M == 0:
        kinds += [(f"der({symbol_name(s)})", f"the derivative of {s}") for s in model.states]
    return kinds
