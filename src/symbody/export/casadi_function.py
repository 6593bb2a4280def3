"""A compiled model's equations as CasADi SX functions (:func:`to_casadi`).

The symbolic blocks that a :class:`~symbody.NumericModel`'s kernels were generated from
(symengine expressions in the kernels' argument vector
``z = [t, q, u, r, constants, u', x_e]``, see :mod:`symbody.compilation.kernel_layout`) are
rebuilt as CasADi ``SX`` expressions by one memoized walk over each expression DAG
(:class:`SXConverter`), and the right-hand side does what ``model.rhs`` does, symbolically:

* the dependent speeds from ``B u + b = 0``: ``u_dep = B_dep^-1 (-(B_ind u_ind + b))``;
* ``q'`` from the kinematic equations (already solved for q' in the main kernel);
* ``[u'; λ] = S^-1 s`` with ``S = [[M_d, -B_a^T], [B_a, 0]]`` (or ``M_d`` for reduced or
  unconstrained dynamics), CasADi's symbolic linear solve ``casadi.solve``;
* the extra states' ``x_e'``.

A model compiled with a tree's forward-dynamics recursion (a URDF robot: ``kernels.forward``,
the articulated-body algorithm with the robot's numbers folded, O(n) in the joints) gives
``rhs`` from those expressions instead: ``[q'; u']`` written out, no mass matrix and no
solve, so the SX graph has the recursion's size (and the dense ``S``, ``s`` are only formed
when ``mass_matrix`` or ``forcing`` is asked for).

So CasADi's algorithmic differentiation, code generation, integrators and NLP solvers
apply to the result.  :func:`sx_expressions` is the converter on its own (used by
:mod:`symbody.optimize` to hand its NLP to CasADi's ``nlpsol``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..errors import InputError

__all__ = ["CasadiModel", "SXConverter", "sx_expressions", "to_casadi", "import_casadi"]


def import_casadi() -> Any:
    """The ``casadi`` module, or an InputError saying how to install it."""
    try:
        import casadi
    except ImportError as exc:
        raise InputError("this needs CasADi: pip install casadi (or pip install "
                         "'symbody[optimize]')") from exc
    return casadi


#: symengine function class name -> CasADi function of its arguments
def _casadi_functions(ca: Any) -> dict[str, Callable]:
    return {
        "sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "asin": ca.asin, "acos": ca.acos,
        "atan": ca.atan, "sinh": ca.sinh, "cosh": ca.cosh, "tanh": ca.tanh,
        "asinh": ca.asinh, "acosh": ca.acosh, "atanh": ca.atanh, "exp": ca.exp,
        "log": ca.log, "Abs": ca.fabs, "sign": ca.sign, "floor": ca.floor,
        "ceiling": ca.ceil, "erf": ca.erf,
        "atan2": lambda y, x: ca.atan2(y, x), "ATan2": lambda y, x: ca.atan2(y, x),
        "Max": lambda *a: _reduce(ca.fmax, a), "Min": lambda *a: _reduce(ca.fmin, a),
        "cot": lambda a: 1 / ca.tan(a), "sec": lambda a: 1 / ca.cos(a),
        "csc": lambda a: 1 / ca.sin(a),
        "StrictLessThan": lambda a, b: a < b, "LessThan": lambda a, b: a <= b,
        "StrictGreaterThan": lambda a, b: a > b, "GreaterThan": lambda a, b: a >= b,
        "Equality": lambda a, b: a == b, "Unequality": lambda a, b: a != b,
        "And": lambda *a: _reduce(ca.logic_and, a), "Or": lambda *a: _reduce(ca.logic_or, a),
        "Not": ca.logic_not,
    }


def _reduce(f: Callable, args: Sequence) -> Any:
    out = args[0]
    for a in args[1:]:
        out = f(out, a)
    return out


class SXConverter:
    """symengine expressions -> CasADi SX, each distinct subexpression converted once.

    ``leaves``: symengine symbol name -> SX scalar.  A symbol not among them, or a function
    CasADi has no counterpart for, raises InputError naming it (``what`` says where).
    Memoized by the expression itself (symengine hashes are cached), so the shared
    subexpressions of the equations stay shared in the SX graph.
    """

    def __init__(self, leaves: Mapping[str, Any], what: str = "the equations") -> None:
        self.ca = import_casadi()
        self.leaves = dict(leaves)
        self.what = what
        self.memo: dict = {}
        self.functions = _casadi_functions(self.ca)

    def __call__(self, e: Any) -> Any:
        hit = self.memo.get(e)
        if hit is None:
            hit = self._convert(e)
            self.memo[e] = hit
        return hit

    def many(self, exprs: Sequence) -> list:
        """The SX scalars of ``exprs`` (symengine, SymPy or numbers)."""
        import symengine as se
        return [self(e if isinstance(e, se.Basic) else se.sympify(e)) for e in exprs]

    def _convert(self, e: Any) -> Any:
        ca = self.ca
        cls = type(e).__name__
        args = e.args
        if not args:
            if e.is_Symbol:
                leaf = self.leaves.get(e.name)
                if leaf is None:
                    raise InputError(f"{self.what} depend on {e.name}, which is not an input of "
                                     "the CasADi function")
                return leaf
            if cls == "Pi":
                return ca.SX(3.141592653589793)
            if cls in ("E", "Exp1"):
                return ca.SX(2.718281828459045)
            if cls in ("BooleanTrue", "BooleanFalse"):
                return ca.SX(1.0 if cls == "BooleanTrue" else 0.0)
            try:
                return ca.SX(float(e))
            except (TypeError, RuntimeError, ValueError) as exc:
                raise InputError(f"{self.what} hold {e} ({cls}), which has no CasADi "
                                 "counterpart") from exc
        if cls == "Piecewise":
            return self._piecewise(args)
        parts = [self(a) for a in args]
        if cls == "Add":
            out = parts[0]
            for p in parts[1:]:
                out = out + p
            return out
        if cls == "Mul":
            out = parts[0]
            for p in parts[1:]:
                out = out * p
            return out
        if cls == "Pow":
            base, expo = parts
            ex = args[1]
            if ex.is_Number:
                v = float(ex)
                if v == 0.5:
                    return ca.sqrt(base)
                if v == -0.5:
                    return 1 / ca.sqrt(base)
                if v == -1:
                    return 1 / base
                if v == int(v):
                    return ca.constpow(base, v)
            if type(args[0]).__name__ in ("E", "Exp1"):
                return ca.exp(expo)
            return ca.power(base, expo)
        f = self.functions.get(cls)
        if f is None:
            raise InputError(f"{self.what} use the function {cls} ({e}), which CasADi's SX "
                             "has no counterpart for")
        return f(*parts)

    def _piecewise(self, args: Sequence) -> Any:
        """``Piecewise((e1, c1), (e2, c2), ...)``: the first true condition's value (NaN
        when none is)."""
        ca = self.ca
        out = ca.SX.nan()
        for i in range(len(args) - 2, -1, -2):
            expr, cond = args[i], args[i + 1]
            if type(cond).__name__ == "BooleanTrue":
                out = self(expr)
            else:
                out = ca.if_else(self(cond), self(expr), out)
        return out


def sx_expressions(exprs: Sequence, leaves: Mapping[str, Any],
                   what: str = "the expressions") -> list:
    """``exprs`` (symengine or SymPy, in symbols named as the keys of ``leaves``) as SX
    scalars (one :class:`SXConverter` shared by all of them)."""
    return SXConverter(leaves, what).many(exprs)


@dataclass(frozen=True)
class CasadiModel:
    """A model's equations as ``casadi.Function`` objects of SX.

    Inputs (column vectors): ``x`` the state ``[q (N), u_ind (p), x_e (e)]`` (``model.states``
    order), ``p`` the constants (``model.constants``), ``r`` the specified inputs
    (``model.specifieds``, size 0 when there are none) and, only when the equations depend
    on time explicitly (``time_dependent``), ``t`` as a fourth input.

    - ``rhs(x, p, r) -> xdot`` (nx): the ODE, equal to ``model.rhs``;
    - ``speeds(x, p, r) -> u`` (o): all speeds, the dependent ones from ``B u + b = 0``;
    - ``mass_matrix(x, p, r) -> S`` (K, K) and ``forcing(x, p, r) -> s`` (K): the system
      ``S y = s`` solved for ``y = [u'; λ]`` (``S = [[M_d, -B_a^T], [B_a, 0]]``,
      ``s = [-g_d; -b_a]``), or ``M_d u' = -g_d`` without multipliers;
    - ``holonomic(x, p, r) -> f_h`` (M) and ``velocity_residual(q, u, p, r) -> B u + b`` (m)
      for any coordinates q (N) and speeds u (o); None when the model has no such
      constraints.

    With ``to_casadi(..., linear_solver=...)`` the first four are MX functions.
    ``recursion``: True when ``rhs`` is the tree's forward-dynamics recursion (then
    ``mass_matrix`` and ``forcing`` are built on first access).
    """

    rhs: Any
    speeds: Any
    holonomic: Any | None
    velocity_residual: Any | None
    states: tuple
    constants: tuple
    specifieds: tuple
    time_dependent: bool
    recursion: bool
    dense: Callable[[], tuple] = field(repr=False, compare=False)

    @cached_property
    def _dense_functions(self) -> tuple:
        return self.dense()

    @property
    def mass_matrix(self) -> Any:
        """``S(x, p, r)`` (K, K)."""
        return self._dense_functions[0]

    @property
    def forcing(self) -> Any:
        """``s(x, p, r)`` (K)."""
        return self._dense_functions[1]

    @property
    def functions(self) -> dict:
        """Every function of the model by name (the ones it has)."""
        out = {"rhs": self.rhs, "speeds": self.speeds, "mass_matrix": self.mass_matrix,
               "forcing": self.forcing}
        if self.holonomic is not None:
            out["holonomic"] = self.holonomic
        if self.velocity_residual is not None:
            out["velocity_residual"] = self.velocity_residual
        return out


def _as_numeric_model(model: Any) -> Any:
    from ..compilation import NumericModel
    from ..compilation import compile as compile_model
    from ..formulation import EquationsOfMotion

    events = getattr(model, "events", ())
    if events:
        names = ", ".join(str(getattr(ev, "name", ev)) for ev in events)
        raise InputError(f"to_casadi: the model has events with impacts ({names}); a CasADi "
                         "function is one smooth vector field and cannot carry them: export the "
                         "model's eom and handle the impacts in your own loop")
    if not isinstance(model, (NumericModel, EquationsOfMotion)):
        eom = getattr(model, "eom", None)
        if not isinstance(eom, EquationsOfMotion):
            raise InputError(f"to_casadi needs a NumericModel, an EquationsOfMotion or a zoo "
                             f"Model; got {type(model).__name__}")
        model = eom
    if isinstance(model, EquationsOfMotion):
        if getattr(model, "constraint_excess", 0) > 0:
            raise InputError("to_casadi: the equations hold a redundant set of configuration "
                             "constraints (more holonomic equations than dependent coordinates); "
                             "its right-hand side is not one closed-form function: form the "
                             "equations with an independent set")
        model = compile_model(model)
    if hasattr(model, "constraint_rows"):        # compilation.redundant.RedundantModel
        raise InputError("to_casadi: the model holds a redundant set of configuration "
                         f"constraints ({', '.join(model.constraint_names)}); its right-hand "
                         "side is not one closed-form function: form the equations with an "
                         "independent set")
    return model


def _kernel_exprs(kernel: Any, what: str) -> list:
    real = kernel.realize() if hasattr(kernel, "realize") else kernel
    src = getattr(real, "source", None)
    if not src or src.get("kind") != "symengine":
        raise InputError(f"to_casadi: the {what} kernel keeps no symengine expressions (a model "
                         "compiled with backend='numpy' or loaded from a file without them); "
                         "compile the equations with backend='auto', 'c' or 'llvm'")
    exprs = src.get("exprs")
    if exprs is None or (len(exprs) == 0 and real.nout):
        raise InputError(f"to_casadi: the {what} kernel's expressions are not available; "
                         "compile the equations again")
    return list(exprs)


def to_casadi(model: Any, *, r: Any = None, linear_solver: str | None = None) -> Any:
    """The equations of ``model`` as CasADi SX functions (see :class:`CasadiModel`).

    ``model``: a NumericModel (``sb.compile``), an EquationsOfMotion or a zoo Model (its
    equations; the constants stay an input ``p``).  ``r``: None; the specified inputs are
    always the function's input ``r`` (a callable ``r(t, x)`` cannot be carried into SX and
    is refused).

    ``rhs(x, p, r)`` is ``model.rhs(t, x, p, r)`` symbolically: ``u_dep = B_dep^-1
    (-(B_ind u_ind + b))``, ``q'`` from the kinematics, ``[u'; λ] = S^-1 s`` by
    ``casadi.solve``, ``x_e'``.  Shapes: x (nx, 1), p (c, 1), r (s, 1) -> (nx, 1).

    ``linear_solver``: None (default) solves the two linear systems symbolically in SX
    (CasADi's QR of each block of the block-triangular form, O(K^3) operations: fine for
    tens of unknowns; the 40-four-bar chain's K = 161 system takes 3.3 million); a CasADi
    linear solver plugin ("qr", "ldl", "csparse", "ma27", ...) keeps them as linear-solve
    nodes instead: then ``rhs``, ``speeds``, ``mass_matrix`` and ``forcing`` are MX
    functions (AD and code generation still apply; the blocks inside stay SX).

    Refused with InputError: events with impacts (zoo walking models), a redundant set of
    configuration constraints, callable inputs, functions without a CasADi counterpart.

    A compiled function (``make_function``'s, a robot's ``robot.inverse_dynamics``,
    ``robot.frame_function(...)``) gives one ``casadi.Function`` of its argument groups
    (:func:`symbody.export.functions.function_to_casadi`).
    """
    from .functions import function_to_casadi, is_function
    if is_function(model) and not isinstance(model, Mapping):
        return function_to_casadi(model)
    if r is not None:
        kind = "a callable" if callable(r) else type(r).__name__
        raise InputError(f"to_casadi: r is {kind}; the specified inputs of a CasADi function are "
                         "its input r (callables such as r(t, x) cannot be carried into SX): "
                         "call rhs(x, p, r) with the values, or write the input law into the "
                         "equations")
    if linear_solver is not None and not isinstance(linear_solver, str):
        raise InputError(f"to_casadi: linear_solver must be None or the name of a CasADi linear "
                         f"solver plugin ('qr', 'ldl', 'csparse', ...), got {linear_solver!r}")
    ca = import_casadi()
    if linear_solver is not None and not ca.has_linsol(linear_solver):
        raise InputError(f"to_casadi: CasADi has no linear solver plugin {linear_solver!r} "
                         "(try 'qr', 'ldl' or 'csparse')")
    mdl = _as_numeric_model(model)
    L = mdl.layout
    N, p_, o, m, e, s, c, K = L.N, L.p, L.o, L.m, L.e, L.s, L.c, L.K
    x = ca.SX.sym("x", L.nx)
    P = ca.SX.sym("p", c)
    R = ca.SX.sym("r", s)
    T = ca.SX.sym("t")
    udot = ca.SX.sym("udot", o)          # in z, read by no block of the right-hand side
    # z = [t, q, u, r, constants, u', x_e]; u_dep stands for the velocity solve's result
    ud = ca.SX.sym("udep", m)
    z = [T] + [x[i] for i in range(N + p_)] + [ud[i] for i in range(m)]
    z += [R[i] for i in range(s)] + [P[i] for i in range(c)] + [udot[i] for i in range(o)]
    z += [x[N + p_ + i] for i in range(e)]
    conv = SXConverter({f"_a{i}": zi for i, zi in enumerate(z)}, "the equations")
    kern = mdl.kernels

    def block(kernel: Any, what: str) -> Any:
        return ca.vertcat(*conv.many(_kernel_exprs(kernel, what)))

    empty = ca.SX(0, 1)
    vel = block(kern.velocity, "velocity") if m else empty
    forward = getattr(kern, "forward", None)
    recursion = forward is not None and not e
    # [q'; u'] of the tree's recursion, or [q'; s; S] of the dense system (S y = s)
    dyn = block(forward, "forward dynamics") if recursion else block(kern.main, "dynamics")
    xe = block(kern.extra, "extra states") if e else empty
    hol = block(kern.holonomic, "holonomic")[L.holonomic_f] if L.M else None
    time_dep = _depends_on(ca, [vel, dyn, xe] + ([hol] if hol is not None else []), T)

    def timeless(v: Any) -> Any:
        return v if time_dep else ca.substitute(v, T, ca.SX(0.0))

    vel, dyn, xe = timeless(vel), timeless(dyn), timeless(xe)
    if hol is not None:
        hol = timeless(hol)
    # (sparsify: entries that are 0 symbolically become structural zeros)
    Bdep = ca.sparsify(ca.reshape(vel[L.velocity_Bdep], m, m)) if m else ca.SX(0, 0)
    vrest = vel[L.velocity_rest] if m else empty
    u_ind = x[N:N + p_]

    def system(main: Any) -> tuple:
        """(q', s, S) of the dense system's block."""
        if L.augmented or L.mass_symmetric:
            S = ca.reshape(main[L.main_system], K, K)             # column by column
        else:
            S = ca.reshape(main[L.main_system], K, K).T           # row by row
        return main[L.main_qdot], main[L.main_rhs], ca.sparsify(S)

    def dense_main() -> Any:
        return dyn if not recursion else timeless(block(kern.main, "dynamics"))

    ins, in_names = [x, P, R] + ([T] if time_dep else []), ["x", "p", "r"] + \
        (["t"] if time_dep else [])

    def fn(name: str, out: Any, out_name: str, fin: list) -> Any:
        # the recursion's SX graph through CasADi's common-subexpression pass (~6% fewer
        # instructions on a humanoid, and a smaller Jacobian graph; 0.06 s on Talos)
        opts = {"cse": True} if recursion and linear_solver is None else {}
        return ca.Function(name, fin, [out], in_names, [out_name], opts)

    if linear_solver is None:
        u_dep = ca.solve(Bdep, vrest) if m else empty
        if recursion:
            xdot = ca.vertcat(dyn[:N + p_], xe)
        else:
            qdot, forcing, S = system(dyn)
            xdot = ca.vertcat(qdot, ca.solve(S, forcing)[:p_], xe)
        outs = [xdot, ca.vertcat(u_ind, u_dep)]
        if m:
            outs = ca.substitute(outs, [ud], [u_dep])

        def dense() -> tuple:
            _, forcing, S = system(dense_main())
            S, forcing = ca.substitute([S, forcing], [ud], [u_dep]) if m else (S, forcing)
            return fn("mass_matrix", S, "S", ins), fn("forcing", forcing, "s", ins)
        fin = ins
    else:
        # the blocks as SX functions, the two solves as CasADi linear-solver nodes (MX)
        fv = ca.Function("velocity_blocks", ins, [Bdep, vrest])
        fin = [ca.MX.sym(nm, v.sparsity()) for nm, v in zip(in_names, ins)]
        Bm, vm = fv(*fin)
        u_dep = ca.solve(Bm, vm, linear_solver) if m else ca.MX(0, 1)
        if recursion:
            fm = ca.Function("dynamics_blocks", ins + [ud], [dyn[:N + p_], xe])
            xdot = ca.vertcat(*fm(*fin, u_dep))
        else:
            qdot, forcing, S = system(dyn)
            fm = ca.Function("dynamics_blocks", ins + [ud], [qdot, forcing, S, xe])
            qd, fo, Sm, xem = fm(*fin, u_dep)
            xdot = ca.vertcat(qd, ca.solve(Sm, fo, linear_solver)[:p_], xem)
        outs = [xdot, ca.vertcat(fin[0][N:N + p_], u_dep)]

        def dense() -> tuple:
            _, forcing, S = system(dense_main())
            fo, Sm = ca.Function("system_blocks", ins + [ud], [forcing, S])(*fin, u_dep)
            return fn("mass_matrix", Sm, "S", fin), fn("forcing", fo, "s", fin)

    vres = None
    if m:
        U = ca.SX.sym("u", o)
        Bm_ = ca.reshape(vel[L.velocity_B], o, m).T               # B row by row (m, o)
        res = ca.mtimes(Bm_, U) + vel[L.velocity_b]
        Q = ca.SX.sym("q", N)
        res = ca.substitute(res, x[:N], Q)
        vins, vnames = [Q, U, P, R], ["q", "u", "p", "r"]
        if time_dep:
            vins, vnames = vins + [T], vnames + ["t"]
        vres = ca.Function("velocity_residual", vins, [res], vnames, ["residual"])
    holf = None
    if hol is not None:
        holf = ca.Function("holonomic", ins, [hol], in_names, ["f_h"])
    return CasadiModel(
        rhs=fn("rhs", outs[0], "xdot", fin), speeds=fn("speeds", outs[1], "u", fin),
        holonomic=holf, velocity_residual=vres, states=tuple(mdl.states),
        constants=tuple(mdl.constants), specifieds=tuple(mdl.specifieds),
        time_dependent=time_dep, recursion=recursion, dense=dense)


def _depends_on(ca: Any, exprs: list, sym: Any) -> bool:
    return any(ca.depends_on(ex, sym) for ex in exprs if ex.numel())
