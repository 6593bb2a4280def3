"""EquationsOfMotion -> :class:`~.kernel_layout.CompiledParts`: the kernels of a numeric model.

Each symbolic block of the canonical form becomes the output of one compiled kernel of the
shared argument vector ``z = [t, q, u, r, constants, u', x_e]`` (see :mod:`.kernel_layout`
for where every number sits):

* main: ``[q' (N), s (K), S (K*K, column by column)]``, with ``S y = s`` the augmented
  system ``[[M_d, -B_a^T], [B_a, 0]] [u'; λ] = [-g_d; -b_a]`` of an unreduced dynamic
  block with velocity constraints (λ with the sign of SymPy's ``LagrangesMethod.rhs()``,
  ``M_d u' + g_d = B_a^T λ``), else ``M_d u' = -g_d``: the right-hand sides come out of
  the kernel already negated, so that one LAPACK call solves the kernel's output in place;
* velocity ``[B, b, B_dep, -(B_ind u_ind + b)]``, holonomic ``[f_h, ∂f_h/∂q]``,
  acceleration ``[B_a, b_a]`` (reduced dynamics), extra ``x_e'`` and auxiliary
  ``[A_nc, rest]`` (a = A_nc F_nc + rest) when the equations have them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import sympy as sm

from ..compat.sympy import TIME
from ..errors import CompilationError
from ..progress import as_progress
from . import c_lanes
from .codegen import compile_kernel, resolve_backend
from .kernel_layout import CompiledParts, KernelLayout, ModelKernels, ModelSymbols

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion

__all__ = ["assemble", "model_symbols"]


def ordering(given: Sequence | None, needed: Sequence, what: str) -> tuple:
    """``given`` (an ordering of symbols) checked to hold every symbol of ``needed``; ``needed``
    itself when None.  Raises CompilationError naming a duplicate or a missing symbol."""
    needed = tuple(needed)
    if given is None:
        return needed
    given = tuple(given)
    if len(set(given)) != len(given):
        dup = [g for g in given if given.count(g) > 1][0]
        raise CompilationError(f"{what} lists {dup} more than once")
    missing = [s for s in needed if s not in given]
    if missing:
        raise CompilationError(f"the equations depend on {missing[0]}, which is missing from the "
                               f"{what} given ({', '.join(map(str, given))})")
    return given


def model_symbols(eom: EquationsOfMotion, constants: Sequence | None,
                  specifieds: Sequence | None) -> ModelSymbols:
    """The names of a model's numbers from ``eom`` (``constants`` / ``specifieds``: optional
    orderings, checked to hold every symbol the equations use)."""
    return ModelSymbols(
        coordinates=tuple(eom.q), speeds=tuple(eom.u),
        independent_coordinates=tuple(eom.q_ind), dependent_coordinates=tuple(eom.q_dep),
        independent_speeds=tuple(eom.u_ind), dependent_speeds=tuple(eom.u_dep),
        extra_states=tuple(getattr(eom, "extra_states", ())),
        constants=ordering(constants, eom.constants, "constants"),
        specifieds=ordering(specifieds, eom.specifieds, "specifieds"),
        noncontributing=tuple(eom.noncontributing))


def _uses(blocks: list, symbols: tuple) -> bool:
    return bool(symbols) and any(e.has(*symbols) for blk in blocks for e in blk)


def _dynamic_rows(eom: EquationsOfMotion, dyn: Any) -> tuple[list, list]:
    """(rows of M_d, -g_d): the symengine block the formulation formed when there is one
    (no SymPy round trip), else the SymPy one."""
    if dyn is not None:
        rows = dyn.mass
        width = len(rows[0]) if rows else 0
        if any(len(row) != width for row in rows):
            raise CompilationError("the dynamic mass matrix's rows differ in length")
        return rows, [-e for e in dyn.rest]
    return eom.dynamic_mass.tolist(), [-e for e in eom.dynamic_rest]


def _main_outputs(eom: EquationsOfMotion, rows: list, neg_gd: list, augmented: bool,
                  o: int) -> tuple[list, int]:
    """The main kernel's expressions ``[q', s, S column by column]`` and K (see the module
    docstring)."""
    if augmented:
        Ba = eom.acceleration_matrix
        K = o + Ba.rows

        def S_at(i, j):
            if i < o:
                return rows[i][j] if j < o else -Ba[j - o, i]
            return Ba[i - o, j] if j < o else sm.S.Zero
        rhs = neg_gd + [-e for e in eom.acceleration_rest]
        entries = [S_at(i, j) for j in range(K) for i in range(K)]
    else:
        K = len(rows)
        rhs = neg_gd
        # M_d row by row as the eom has it (the same numbers when it is symmetric, and then
        # LAPACK reads it in place as well)
        entries = [e for row in rows for e in row]
    return list(eom.qdot_solution) + rhs + entries, K


def _velocity_outputs(eom: EquationsOfMotion, p: int, o: int) -> list:
    """``[B, b, B_dep (column by column), -(B_ind u_ind + b)]``: u_dep by one LAPACK call on
    the kernel's output."""
    B, b, u = eom.velocity_matrix, eom.velocity_rest, tuple(eom.u)
    m = B.rows
    Bdep = [B[i, j] for j in range(p, o) for i in range(m)]
    rest = [-(sum((B[i, j] * u[j] for j in range(p)), sm.S.Zero) + b[i]) for i in range(m)]
    return list(B) + list(b) + Bdep + rest


def _auxiliary_outputs(eom: EquationsOfMotion, noncontributing: tuple) -> list:
    """``[A_nc, rest]`` of the auxiliary equations a = A_nc F_nc + rest."""
    aux = sm.Matrix(eom.auxiliary)
    A_nc = aux.jacobian(sm.Matrix(noncontributing))
    rest = aux.xreplace(dict.fromkeys(noncontributing, 0))
    if any(e.has(*noncontributing) for e in A_nc):
        raise CompilationError("the auxiliary equations are not linear in the noncontributing "
                               "forces " + ", ".join(map(str, noncontributing)))
    return list(A_nc) + list(rest)


def _holonomic_outputs(eom: EquationsOfMotion, coordinates: Sequence) -> tuple:
    """``(f_h, ∂f_h/∂q (row by row), names)``: the Jacobian differentiated in symengine (SymPy's
    ``jacobian`` of long constraint expressions takes seconds per row), its stand-in symbols'
    names -> the SymPy atoms."""
    import symengine as se

    from ..symengine_bridge import SymbolTable

    table = SymbolTable()
    qs = [table.add(q) for q in coordinates]
    se_fh = table.to_se_many(list(eom.holonomic))
    t = se.Symbol(TIME.name)
    if any(t in f.free_symbols and any(t in f.diff(q).free_symbols for q in qs) for f in se_fh):
        # a node symengine took whole (a Piecewise) kept a function of time: SymPy's jacobian
        fh = sm.Matrix(eom.holonomic)
        return list(fh), list(fh.jacobian(sm.Matrix(coordinates))), None
    jac = [f.diff(q) for f in se_fh for q in qs]
    names = {s.name: atom for atom, s in table.se_of.items()}
    return list(eom.holonomic), jac, names


def _kernel_builder(args: list, backend: str, cache: bool, progress: Any, bar: Any,
                    se_names: dict | None, model_kernels: bool = True) -> Callable[..., Any]:
    def build(name: str, exprs: list, names: dict | None = None,
              background: bool | None = None, lanes: int = 0) -> Any:
        # big kernels take seconds to compile: say which one is being built
        bar.set(0.5, f"{name}: {len(exprs)} expressions ({backend})", force=len(exprs) > 200)
        # the constraint kernels (every analysis needs them) are built at once in the
        # background; the dynamics, the extra states and the auxiliary equations when first
        # used (a linearization never evaluates them: issue 40, the bicycle's pipeline)
        return compile_kernel(args, exprs, backend=backend, cache=cache, name=name, lazy=True,
                              progress=progress,
                              symengine_names={**(se_names or {}), **(names or {})} if names
                              else se_names, model_kernel=model_kernels,
                              lanes=lanes, background=background if background is not None else
                              None if "constraints" in name or name == "forward dynamics"
                              else False)
    return build


#: ``forward_dynamics="auto"`` takes the formulation's recursion for u' (a kinematic tree's
#: articulated-body algorithm) from this many speeds on: it was faster than M_d, g_d and the
#: dense solve on every URDF robot measured, from 2 speeds up (benchmarks/bench_robot_speed.py)
RECURSION_MIN_SPEEDS = 1

FORWARD_DYNAMICS = ("auto", "recursion", "solve")


def _use_recursion(dyn: Any, forward_dynamics: str, o: int) -> bool:
    """Whether to build the forward-dynamics kernel from the formulation's recursion."""
    if forward_dynamics not in FORWARD_DYNAMICS:
        raise CompilationError(f"forward_dynamics must be one of {', '.join(FORWARD_DYNAMICS)}, "
                               f"got {forward_dynamics!r}")
    if dyn is None or getattr(dyn, "forward", None) is None or forward_dynamics == "solve":
        return False
    return forward_dynamics == "recursion" or o >= RECURSION_MIN_SPEEDS


def assemble(eom: EquationsOfMotion, constants: Sequence | None = None,
             specifieds: Sequence | None = None, backend: str = "auto", cache: bool = True,
             progress: Any = None, model_kernels: bool = True,
             forward_dynamics: str = "auto") -> CompiledParts:
    """The layout, kernels and symbols of ``eom`` compiled (see :func:`symbody.compile`);
    ``model_kernels``: under ``backend="auto"``, C kernels whatever their size (False: the
    size rule of :func:`.codegen.compile_kernel`).  ``forward_dynamics``: "auto", "recursion"
    or "solve" (see :func:`symbody.compile`)."""
    from ..formulation import EquationsOfMotion

    if not isinstance(eom, EquationsOfMotion):
        raise CompilationError(f"compile() needs an EquationsOfMotion, got {type(eom).__name__}; "
                               "build one with KanesMethod(...).to_eom() or EquationsOfMotion(...)")
    backend = resolve_backend(backend)
    sy = model_symbols(eom, constants, specifieds)
    n, M, p, m = (len(sy.independent_coordinates), len(sy.dependent_coordinates),
                  len(sy.independent_speeds), len(sy.dependent_speeds))
    N, o = n + M, p + m
    args = [TIME, *sy.coordinates, *sy.speeds, *sy.specifieds, *sy.constants, *eom.udot,
            *sy.extra_states]
    bar = as_progress(progress, "compiling", total=1.0)
    dyn = eom.symengine_dynamics() if backend != "numpy" else None
    build = _kernel_builder(args, backend, cache, progress, bar,
                            dyn.names if dyn is not None else None, model_kernels)

    rows, neg_gd = _dynamic_rows(eom, dyn)
    reduced = bool(eom.dynamic_reduced)
    expected = p if reduced else o
    shape = (len(rows), len(rows[0]) if rows else 0)
    if shape != (expected, expected):
        raise CompilationError(f"the dynamic mass matrix is {shape}; expected ({expected}, {expected})")
    augmented = (not reduced) and m > 0
    main, K = _main_outputs(eom, rows, neg_gd, augmented, o)
    kernels: dict[str, Any] = {}
    if _use_recursion(dyn, forward_dynamics, o) and not reduced and not sy.extra_states:
        # u' written out by the recursion: the rhs needs no M_d, whose kernel (for
        # accelerations, multipliers, derivatives) is then built on first use only
        exprs = list(eom.qdot_solution) + dyn.forward()
        kernels["forward"] = build("forward dynamics", exprs)
        if backend in ("auto", "c") and c_lanes.available():
            # many states at once in SIMD lanes: built after the forward kernel, in the
            # background (nothing waits for it, the end of the process neither; rhs_many
            # takes it once built)
            lanes = build("forward dynamics (lanes)", exprs, background=False, lanes=c_lanes.LANES)
            kernels["forward_many"] = lanes
            if hasattr(kernels["forward"], "when_built"):
                kernels["forward"].when_built(lambda _: lanes.start(daemon=True))
        kernels["main"] = build("dynamics", main, background=False)
    else:
        kernels["main"] = build("dynamics", main)
    if m:
        kernels["velocity"] = build("velocity constraints", _velocity_outputs(eom, p, o))
        if reduced:
            kernels["acceleration"] = build("acceleration constraints",
                                            list(eom.acceleration_matrix) + list(eom.acceleration_rest))
    if sy.extra_states:
        extra = eom.symengine_extra_derivatives() if dyn is not None else None
        kernels["extra"] = build("extra states",
                                 extra if extra is not None else list(eom.extra_derivatives))
    if M:
        fh, jac, names = _holonomic_outputs(eom, sy.coordinates)
        kernels["holonomic"] = build("holonomic constraints", fh + jac, names)
    naux = eom.auxiliary.rows
    if naux and sy.noncontributing:
        kernels["auxiliary"] = build("auxiliary equations", _auxiliary_outputs(eom, sy.noncontributing))
    bar.close()
    if backend == "c" or (backend == "auto" and model_kernels):
        from .native_entry import prepare_in_background
        prepare_in_background()            # the compiled rhs entry's fixed helpers
    spec = tuple(sy.specifieds)
    layout = KernelLayout(
        n=n, M=M, p=p, m=m, e=len(sy.extra_states), s=len(spec), c=len(sy.constants), K=K,
        naux=naux, nnc=len(sy.noncontributing),
        main_rhs=slice(N, N + K), main_system=slice(N + K, N + K + K * K),
        dynamic_reduced=reduced, augmented=augmented,
        mass_symmetric=all(rows[i][j] == rows[j][i] for i in range(len(rows)) for j in range(i)),
        kinematics_use_specifieds=_uses([eom.qdot_solution, eom.velocity_matrix,
                                         eom.velocity_rest], spec),
        velocity_constraints_use_specifieds=_uses([eom.velocity_matrix, eom.velocity_rest], spec))
    return CompiledParts(layout, ModelKernels(**kernels), sy, backend,
                         tuple(getattr(eom, "contacts", ()) or ()))
