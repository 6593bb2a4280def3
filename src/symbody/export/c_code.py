"""A compiled model as standalone C: ``name.h`` / ``name.c`` (C99, libm only).

The generated code is the model's own kernels (the straight-line programs of
:mod:`symbody.compilation.c_kernels`, regenerated from the expressions each kernel keeps,
whatever backend compiled it) plus the solves of the right-hand side written out in C:
a dense LU with partial pivoting (and a Cholesky factorization for a symmetric mass
matrix), no BLAS or LAPACK.  With ``z = [t, q, u, r, p, u', x_e]`` as in
:class:`~symbody.compilation.kernel_layout.KernelLayout`:

1. ``u_dep = -B_dep^{-1} (B_ind u_ind + b)`` (velocity constraints, m > 0);
2. ``S y = s``: ``[[M_d, -B_a^T], [B_a, 0]] [u'; λ] = [-g_d; -b_a]`` or ``M_d u' = -g_d``;
3. ``x' = [q', u_ind', x_e']``.

A model with a forward-dynamics kernel (a URDF robot's articulated-body recursion) gets
``name_rhs`` from it: ``[q', u']`` written out, no solve.

Projection onto the holonomic constraints ``f_h(q, t) = 0`` is the damped Newton iteration
of :func:`symbody.compilation.coordinate_projection.project_arguments` on q_dep (q_ind held).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formatting import symbol_name
from .c_files import _example, _header, _readme, _source
from .c_writer import STACK_DOUBLES as STACK_DOUBLES  # re-exported; c_writer reads its own
from .c_writer import _Writer
from .validation import OutputLocation, check_events, check_identifier, checked_constants

__all__ = ["export_c", "CExport", "GeneratedC", "generate_c", "check_exportable"]


@dataclass(frozen=True)
class GeneratedC:
    """The text of the generated files and the names in their order.

    ``header``, ``source``, ``readme``, ``example`` (texts); ``name``; the names of the
    states (nx), coordinates (N), speeds (o), constants (c), inputs (s), outputs (ny) and
    holonomic residuals (M); ``layout`` (the model's KernelLayout)."""

    name: str
    header: str
    source: str
    readme: str
    example: str
    states: tuple[str, ...]
    coordinates: tuple[str, ...]
    speeds: tuple[str, ...]
    constants: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    layout: Any
    derivatives: bool = False


@dataclass(frozen=True)
class CExport:
    """Paths written by :func:`export_c`: ``header`` (name.h), ``source`` (name.c),
    ``readme`` (README.md) and ``example`` (name_example.c, the README's RK4 loop)."""

    header: Path
    source: Path
    readme: Path
    example: Path


def check_name(name: Any) -> str:
    """``name`` as a C identifier prefix, or InputError (:func:`.validation.check_identifier`)."""
    return check_identifier(name)


def check_exportable(model: Any, what: str) -> None:
    """Refuse, naming the feature, a model the generated C cannot carry."""
    from ..compilation.redundant import RedundantModel
    if not hasattr(model, "layout") or not hasattr(model, "kernels"):
        raise InputError(f"{what} takes a compiled model (symbody.compile(eom)), "
                         f"got {type(model).__name__}")
    if isinstance(model, RedundantModel):
        raise InputError(f"{what}: the model has a redundant constraint set (more holonomic "
                         "equations than dependent coordinates); the exported code keeps one "
                         "fixed set of equations and cannot choose among them as simulate does. "
                         "Remove the redundant equations and compile again")


def check_not_callable(values: Any, what: str, argument: str) -> None:
    if callable(values):
        raise InputError(f"{what}: {argument} is a callable; the exported code cannot carry "
                         "Python functions as inputs (give numbers; the inputs are arguments "
                         "of the C functions / FMU inputs)")
    if isinstance(values, Mapping):
        for key, v in values.items():
            if callable(v):
                raise InputError(f"{what}: {argument}[{key!r}] is a callable; the exported code "
                                 "cannot carry Python functions as inputs (give a number)")


def generate_c(model: Any, name: str, *, outputs: Mapping | None = None,
               constants: Any = None, initial_state: Any = None,
               what: str = "export_c", derivatives: bool = False) -> GeneratedC:
    """The generated C of ``model`` (texts and names), without writing files; see
    :func:`export_c`.  ``derivatives``: also ``name_rhs_derivative`` (exact directional
    derivatives, :mod:`.directional`; ``GeneratedC.derivatives`` says whether it is there)."""
    check_name(name)
    check_exportable(model, what)
    check_not_callable(constants, what, "constants")
    check_not_callable(initial_state, what, "initial_state")
    P = checked_constants(model, constants)
    X = None if initial_state is None else model.state_array(initial_state)
    w = _Writer(model, name, outputs, derivatives)
    names = {
        "model": getattr(model.eom, "name", None) or repr(model).strip("<>"),
        "states": tuple(symbol_name(s) for s in model.states),
        "coordinates": tuple(symbol_name(s) for s in model.coordinates),
        "speeds": tuple(symbol_name(s) for s in model.speeds),
        "constants": tuple(symbol_name(s) for s in model.constants),
        "inputs": tuple(symbol_name(s) for s in model.specifieds),
        "outputs": tuple(w.output_names),
    }
    names["model"] = names["model"].replace("*/", "* /")
    header = _header(w, names, P is not None, X is not None)
    source = _source(w, names, P, X)
    example = _example(w, P is not None, X is not None)
    readme = _readme(w, names, example)
    return GeneratedC(name=name, header=header, source=source, readme=readme, example=example,
                      states=names["states"], coordinates=names["coordinates"],
                      speeds=names["speeds"], constants=names["constants"],
                      inputs=names["inputs"], outputs=names["outputs"], layout=model.layout,
                      derivatives=bool(w.tangents))


def export_c(model: Any, directory: str | Path, *, name: str = "model",
             outputs: Mapping | None = None, constants: Any = None,
             initial_state: Any = None, events: Any = None,
             derivatives: bool = False) -> CExport:
    """Write ``model`` as standalone C99 into ``directory``: ``name.h``, ``name.c``, a
    README.md and ``name_example.c`` (RK4 with projection).

    The C needs only libm.  ``name_rhs(t, x, p, r, xdot)`` is ``model.rhs``: x' (nx,) for
    x = [q (N), u_ind (p), x_e (e)], constants p (c,) and inputs r (s,); u_dep from
    ``B_dep u_dep = -(B_ind u_ind + b)`` and u' (with λ) from ``S y = s`` by LU with
    partial pivoting (Cholesky for a symmetric mass matrix).  Also exported: the speeds,
    the system S, s ("mass matrix and forcing"), f_h and ∂f_h/∂q, B and b, the ``outputs``
    (``{name: SymPy expression}`` in t, q, u, u', constants, inputs) and ``name_project``
    (Newton on q_dep).  ``constants`` / ``initial_state``: optional values written as
    ``name_default_constants`` / ``name_default_state`` (used by the example), checked as
    ``simulate`` checks them (finite; masses positive, inertias positive semidefinite).
    ``derivatives=True`` adds ``name_rhs_derivative``: the exact directional derivative of
    x' (and of the speeds, outputs and f_h) along a direction of the state and the inputs
    (forward mode, :mod:`symbody.export.directional`), what the FMU's
    ``fmi2GetDirectionalDerivative`` calls.

    Where the model's dependent set is near singular (``|det B_dep|`` below
    ``NAME_DEPENDENT_SET_RATIO`` = 0.01 of the best-conditioned choice) these functions
    return ``NAME_ERR_DEPENDENT_SET`` (5) rather than follow a branch they cannot tell apart;
    a model whose dependent set may change also gets the full-state functions
    ``name_full_rhs`` / ``name_full_project`` (y = [q, u, x_e], the dependent set chosen
    afresh at each projection), which pass those positions.

    Refused (InputError naming it): ``events`` (impacts), and a model whose equations come
    with events (the zoo's walkers) unless ``events=False`` says they are not wanted; a
    redundant constraint set, callables given as values, a ``name`` that is not a C
    identifier, a folder that cannot be written; CompilationError for an expression C
    cannot hold.

    ``model`` may also be a compiled function or ``{name: function}`` (``make_function``'s,
    a robot's ``robot.inverse_dynamics``, ``robot.frame_function(...)``): see
    :func:`symbody.export.functions.export_c_functions`.
    """
    from .functions import export_c_functions, is_function
    if is_function(model):
        return export_c_functions(model, directory, name)
    check_identifier(name)
    check_exportable(model, "export_c")
    check_events(model, events, "export_c")
    gen = generate_c(model, name, outputs=outputs, constants=constants,
                     initial_state=initial_state, derivatives=derivatives)
    d = Path(directory)
    paths = CExport(header=d / f"{name}.h", source=d / f"{name}.c", readme=d / "README.md",
                    example=d / f"{name}_example.c")
    with OutputLocation(d, "export_c"):
        d.mkdir(parents=True, exist_ok=True)
        paths.header.write_text(gen.header)
        paths.source.write_text(gen.source)
        paths.readme.write_text(gen.readme)
        paths.example.write_text(gen.example)
    return paths
