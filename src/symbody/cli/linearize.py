"""``symbody linearize``: A about the operating point, its eigenvalues, the steady-state check
and the ``--speeds`` sweep."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .arguments import _parse_sets, _parse_speeds, _symbol_name
from .console import Console, UsageError
from .models import _build_model, _model_source
from .output import _list_written, _save_figure
from .running import _compile


def _operating_point(model) -> tuple[dict, str]:
    if model.operating_point is not None:
        params = ", ".join(f"{k} = {v:g}" for k, v in model.op_parameters.items())
        return model.operating_point(dict(model.op_parameters)), (
            f"the operating point{f' ({params})' if params else ''}")
    return dict(model.initial_state), "the initial state (the model defines no operating point)"


def _linearize(numeric, point: dict, p: np.ndarray, inputs: dict | None = None):
    from ..analysis import linearize

    r = np.array([inputs[_symbol_name(s)] for s in numeric.specifieds]) if inputs else None
    A, _ = linearize(numeric, point, p, r=r, check_equilibrium=False)   # checked below, reported
    return np.asarray(A, dtype=float)


#: |x'_i| below this (relative to the state's scale) counts as zero in the equilibrium check:
#: the rhs at an exact operating point is round-off, ~1e-15 of the terms that cancel.
EQUILIBRIUM_TOL = 1e-8


def _steady_state_check(numeric, point: dict, p: np.ndarray, A: np.ndarray, states: Sequence,
                        inputs: dict | None = None) -> str | None:
    """None if ``point`` is an equilibrium or a steady motion, else what moves.

    Eigenvalues say something about stability only about such a state: every independent
    state's rate x'_i = f_i(x0) must vanish, except for coordinates the dynamics do not depend
    on (zero column of A: position and heading of a vehicle riding steadily).
    """
    r = np.array([inputs[_symbol_name(s)] for s in numeric.specifieds]) if inputs else None
    x = numeric.state_array(point)
    xdot = np.asarray(numeric.rhs(0.0, x, p, r), dtype=float)
    order = list(numeric.states)
    scale = max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    column_scale = max(1.0, float(np.max(np.abs(A))) if A.size else 1.0)
    moving = []
    for j, symbol in enumerate(states):
        rate = xdot[order.index(symbol)]
        if abs(rate) > EQUILIBRIUM_TOL * scale and np.any(np.abs(A[:, j]) > 1e-12 * column_scale):
            moving.append(f"{_symbol_name(symbol)}' = {rate:.3g}")
    return ", ".join(moving) if moving else None


def _sorted_eigenvalues(A: np.ndarray) -> np.ndarray:
    ev = np.linalg.eigvals(A)
    return ev[np.lexsort((-ev.imag, -ev.real))]


def _clean(x: float, scale: float = 1.0) -> float:
    """Round-off (|x| < 1e-12 scale) and negative zero shown as 0."""
    return 0.0 if abs(x) < 1e-12 * max(scale, 1.0) else float(x)


def _format_complex(z: complex) -> str:
    scale = abs(z)
    re, im = _clean(z.real, scale), _clean(z.imag, scale)
    if im == 0.0:
        return f"{re:.6g}"
    return f"{re:.6g}{im:+.6g}j"


def cmd_linearize(args: argparse.Namespace, console: Console) -> int:
    key, factory = _model_source(args.model)
    speeds = _parse_speeds(args.speeds) if args.speeds else None
    model, inputs = _build_model(key, _parse_sets(args.set), console, factory)
    if speeds is not None and not model.op_parameters:
        raise UsageError(f"--speeds sweeps an operating-point parameter, but model {key} has none")
    numeric = _compile(model, console, args.quiet)
    p = numeric.constants_array(model.constants)
    states = [*model.eom.q_ind, *model.eom.u_ind, *getattr(model.eom, "extra_states", ())]
    names = [_symbol_name(s) for s in states]

    if speeds is None:
        point, where = _operating_point(model)
        A = _linearize(numeric, point, p, inputs)
        ev = _sorted_eigenvalues(A)
        console.always(f"{key}: A about {where}")
        console.always(f"states x = [{', '.join(names)}]  (x' = A x + B r)")
        width = max(8, max(map(len, names)))
        console.always(" " * width + "".join(f"{n:>13}" for n in names))
        scale = float(np.max(np.abs(A))) if A.size else 1.0
        for name, row in zip(names, A, strict=True):
            console.always(f"{name:>{width}}" + "".join(f"{_clean(v, scale):13.6g}" for v in row))
        console.always("eigenvalues:")
        for z in ev:
            console.always(f"  {_format_complex(complex(z))}")
        largest = f"largest real part {_clean(float(np.max(ev.real)), float(np.max(np.abs(ev)))):.6g}"
        moving = _steady_state_check(numeric, point, p, A, states, inputs)
        if moving is None:
            stable = bool(np.all(ev.real < 1e-9))
            console.always(f"{largest} ({'no growing mode' if stable else 'unstable'})")
        else:
            # about a state that moves the eigenvalues describe nearby motion for an instant
            # only: no stability verdict
            console.always(f"{largest} (not an equilibrium: {moving}; no stability verdict)")
        return 0

    from ..presentation.options import FigureOptions
    from ..presentation.plot import plot_eigenvalues

    name = next(iter(model.op_parameters))
    table = []
    not_steady: list[str] = []
    for value in speeds:
        op = dict(model.op_parameters)
        op[name] = float(value)
        point = model.operating_point(op)
        A = _linearize(numeric, point, p, inputs)
        moving = _steady_state_check(numeric, point, p, A, states, inputs)
        if moving is not None:
            not_steady.append(f"{name} = {value:g} ({moving})")
        table.append(_sorted_eigenvalues(A))
    table = np.array(table)
    if not_steady:
        console.always(f"note: not an equilibrium at {'; '.join(not_steady[:3])}"
                       + (" ..." if len(not_steady) > 3 else "") + ": no stability shading")
    # zero eigenvalues (ignorable coordinates such as position and heading) are left out
    rest = [row[np.abs(row) >= 1e-9 * max(1.0, float(np.max(np.abs(row))))] for row in table]
    width = max(1, max(len(r) for r in rest))
    zeros = sorted({len(row) - len(r) for row, r in zip(table, rest, strict=True)})
    console.always(f"{key}: eigenvalues of A against the operating-point parameter {name}"
                   + (f" (zero eigenvalues not shown: {'/'.join(map(str, zeros))} per row)"
                      if zeros != [0] else ""))
    console.always(f"{name:>8}  " + "".join(f"{'eigenvalue ' + str(i + 1):>22}" for i in range(width)))
    for value, row in zip(speeds, rest, strict=True):
        console.always(f"{value:8.4g}  " + "".join(f"{_format_complex(complex(z)):>22}" for z in row))
    out = Path(args.out) if args.out else Path("symbody-output") / key
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    fig = plot_eigenvalues(speeds, table, parameter_name=name, unit="m/s" if name == "v" else "",
                           stability=not not_steady,
                           figure=FigureOptions(title=f"{key}: eigenvalues against {name}"))
    _save_figure(fig, out / f"eigenvalues_vs_{name}.png", written)
    csv_path = out / f"eigenvalues_vs_{name}.csv"
    columns = [name] + [f"{part}{i + 1}" for i in range(table.shape[1]) for part in ("re", "im")]
    data = np.column_stack([speeds] + [c for i in range(table.shape[1])
                                       for c in (table[:, i].real, table[:, i].imag)])
    np.savetxt(csv_path, data, delimiter=",", header=",".join(columns), comments="", fmt="%.10g")
    written.append(csv_path)
    _list_written(console, written, f"wrote {len(written)} files to {out}/:")
    return 0
