"""OpenSim's ``ToyReflexController`` (osimExampleComponents) as expressions of the state.

OpenSim 4.6 (``ToyReflexController::computeControls``) adds to the control of each muscle m
it drives

    c_m = 0.5 g (|L_m'| + L_m') / (l_opt,m v_max,m)  =  g max(L_m', 0) / (l_opt,m v_max,m)

with g the controller's ``gain``, L_m' the musculotendon path's lengthening speed
(``Muscle::getLengtheningSpeed``), l_opt,m its ``optimal_fiber_length`` and v_max,m its
``max_contraction_velocity`` (optimal fiber lengths per second): a stretch reflex, zero while
the muscle shortens.  It drives only muscles (OpenSim refuses any other actuator in its list,
``ALL`` included); ``enabled`` false: it gives nothing.

Here L_m' = J_m(q) u (:mod:`.forces.geometry_path`) as a SymPy expression of the model's
state x = [q, u_ind, ...]: the dependent speeds of the velocity constraints
B u + b = 0 are replaced by their solution u_dep = -B_dep⁻¹ (B_ind u_ind + b) where B_dep is
one entry per row (locked coordinates, coordinate couplers, prescribed coordinates); a
muscle whose speed needs closed loops' dependent speeds, or whose path goes over an
ellipsoid (its stations are computed numerically), leaves the controller out, naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import symengine as se
import sympy as sm

from ..compat.sympy import TIME
from ..formatting import symbol_name

__all__ = ["ReflexControllerRecord", "build_reflex_controller", "is_muscle"]


class ReflexNotBuilt(Exception):  # noqa: N818  (a reason, not an error of the caller)
    """The reason a ToyReflexController is left out."""


def is_muscle(tag: str) -> bool:
    """Whether an actuator's tag is one of OpenSim's ``Muscle`` classes."""
    return tag.endswith(("Muscle", "Muscle_Deprecated"))


@dataclass
class ReflexControllerRecord:
    """A ToyReflexController read from the file.

    ``name``, ``line``, ``enabled``, ``gain``: the file's; ``actuators``: the muscles it
    drives (list order); ``inputs``: the input name (``input_names``) each drives (None for a
    muscle the model does not build); ``max_speeds``: l_opt v_max of each (m/s);
    ``speeds``: each muscle's lengthening speed L' (symengine, in t, q and u_ind; None where
    ``inputs`` is None); ``to_sympy``: their converter to SymPy; ``arguments``: the
    symengine symbols of [t, q, u_ind] they are in."""

    name: str
    line: int
    enabled: bool
    gain: float
    actuators: tuple
    inputs: tuple
    max_speeds: tuple
    speeds: tuple
    to_sympy: Any = field(default=None, repr=False)
    #: the symengine symbols of [t, q, u_ind] the speeds are in (``eom.states`` order)
    arguments: tuple = field(default=(), repr=False)

    def control_symengine(self) -> list:
        """[(input name, c_m in symengine)] of the built muscles
        (``0.5 g (|L'| + L') / (l_opt v_max)``, OpenSim's operations in its order)."""
        half_gain = se.Float(0.5 * self.gain)
        return [(name, half_gain * (se.Abs(v) + v) / se.Float(top))
                for name, v, top in zip(self.inputs, self.speeds, self.max_speeds)
                if name is not None]

    def control_expressions(self) -> list:
        """[(input name, c_m as a SymPy expression of t and the state)] of the built
        muscles (:meth:`control_symengine`'s expression in SymPy, left unevaluated)."""
        out = []
        for name, v, top in zip(self.inputs, self.speeds, self.max_speeds):
            if name is None:
                continue
            V = self.to_sympy(v)
            # (unevaluated: SymPy's Abs would ask the sign of the whole path speed)
            stretch = sm.Add(sm.Abs(V, evaluate=False), V, evaluate=False)
            out.append((name, sm.Mul(sm.Float(0.5 * self.gain), stretch,
                                     sm.Pow(sm.Float(top), -1, evaluate=False),
                                     evaluate=False)))
        return out


def build_reflex_controller(el: Any, names: list, force_elements: list, force_inputs: dict,
                            speed_of: Any, enabled: bool) -> ReflexControllerRecord:
    """The record of the ToyReflexController ``el`` driving the actuators ``names``.

    ``force_elements``: the file's forces; ``force_inputs``: {built force: its inputs};
    ``speed_of(name)``: the muscle's lengthening speed as a SymPy expression of the state
    (raises :class:`ReflexNotBuilt` with the reason it cannot be).  Raises
    :class:`~symbody.errors.InputError` (controller and line) where OpenSim refuses it: a
    named actuator not in the model, not a muscle, named twice."""
    elements = {f.name: f for f in force_elements}
    if len(set(names)) != len(names):
        raise el.error("names an actuator twice")
    inputs, tops, speeds = [], [], []
    for name in names:
        f = elements.get(name)
        if f is None:
            raise el.error(f"names the actuator {name!r}, which is not in the model")
        if not is_muscle(f.tag):
            raise el.error(f"names {name!r}, a {f.tag}, which is not a muscle; OpenSim "
                           "refuses it too ('Expected only muscle actuators')")
        top = f.number("optimal_fiber_length", 0.1) * f.number("max_contraction_velocity", 10.0)
        if not top > 0:
            raise f.error("optimal_fiber_length * max_contraction_velocity must be > 0 for "
                          f"the ToyReflexController {el.name!r}")
        specs = force_inputs.get(name)
        if specs is None:               # left out or disabled: its control moves nothing
            inputs.append(None)
            speeds.append(None)
        else:
            inputs.append(symbol_name(specs[0]))
            speeds.append(speed_of(name))
        tops.append(top)
    gain = el.number("gain", 1.0)
    return ReflexControllerRecord(el.name or f"ToyReflexController_line{el.line}", el.line,
                                  enabled, gain, tuple(names), tuple(inputs), tuple(tops),
                                  tuple(speeds), getattr(speed_of, "to_sympy", None),
                                  tuple(getattr(speed_of, "arguments", ())))


def lengthening_speed_of(model: Any) -> Any:
    """``speed_of(name)`` for :func:`build_reflex_controller`: muscle ``name``'s
    L' = Σ_k J_k u_k (the row of :func:`~.forces.path_forces.lengthening_speed`) in
    symengine, the dependent speeds replaced by their expressions of t, q and u_ind;
    ``speed_of.to_sympy`` converts them; ``speed_of.arguments``: the symengine symbols of
    [t, q, u_ind] (``eom.states`` order)."""
    eom = model._eom  # noqa: SLF001 (the loader's own equations, before the checks of .eom)
    ctx = model.force_context
    se_of = {a: ctx.symbol(a) for a in (*eom.q, *eom.u_ind, *eom.u_dep)}
    arguments = [ctx.time] + [se_of[a] for a in (*eom.q, *eom.u_ind)]
    allowed = set(arguments)
    solution: dict = {}

    def speed_of(name: str) -> se.Basic:
        path = getattr(model.forces.get(name), "path", None)
        if path is None:
            raise ReflexNotBuilt(f"the path of the muscle {name!r} is not built")
        if not solution:
            solution.update(_dependent_speeds(eom, se_of, ctx.time))
        v = se.Integer(0)
        for c in (ctx.coordinate(n) for n in ctx.coordinate_names):
            row = path.speed_row[c[4]]
            if row != 0:
                v = v + row * solution.get(c[1], c[1])
        bad = sorted(str(model.sympy_converter(a)) for a in v.free_symbols if a not in allowed)
        if bad:
            raise ReflexNotBuilt(f"the lengthening speed of the muscle {name!r} needs "
                                 f"{bad[0]}, which is not a state (a path over an ellipsoid "
                                 "or a closed loop's dependent speed)")
        return v

    speed_of.to_sympy = model.sympy_converter
    speed_of.arguments = arguments
    return speed_of


def _dependent_speeds(eom: Any, se_of: dict, time: Any) -> dict:
    """{symengine u_dep: its symengine expression of t, q and u_ind} from B u + b = 0 where
    each row has one dependent speed (u_dep_j = -(B_ind,i u_ind + b_i) / B_ij); the others
    are left out (their speeds then fail the check of :func:`lengthening_speed_of`)."""
    B, b = eom.velocity_matrix, eom.velocity_rest
    p = len(eom.u_ind)
    names = {a: sm.Symbol(str(s)) for a, s in se_of.items()}
    names[TIME] = sm.Symbol(str(time))
    out: dict = {}
    for i in range(B.rows):
        cols = [j for j in range(p, B.cols) if B[i, j] != 0]
        if len(cols) != 1 or any(B[k, cols[0]] != 0 for k in range(B.rows) if k != i):
            continue
        rest = sum((B[i, j] * eom.u_ind[j] for j in range(p)), sm.Integer(0)) + b[i]
        value = (-rest / B[i, cols[0]]).xreplace(names)
        out[se_of[eom.u_dep[cols[0] - p]]] = se.sympify(value)
    return out
