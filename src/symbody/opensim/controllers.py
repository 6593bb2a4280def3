"""OpenSim's controllers as the model's inputs: ``PrescribedController``.

OpenSim 4.6 computes the controls of a model's actuators as (``Model::getControls``)

    c_a(t) = Σ_k f_k,a(t)

over the enabled controllers k that drive actuator a (each adds its value to the actuator's
control, which starts at 0; two controllers on one actuator add up).  The controls are not
clamped to the actuator's ``min_control``/``max_control`` (those bound OpenSim's optimizers:
static optimization, CMC; a muscle bounds its own excitation where its model says so, which
the muscle builders reproduce).  A ``PrescribedController`` holds one function of time per
actuator: function i drives the i-th actuator of its ``actuator_list`` (3.x and 4.x before
40600; ``ALL``: every actuator of the model, in file order) or of its ``socket_actuators``
(paths, 40600 and later), whatever the functions' own names.  Its functions are any of
:data:`~.functions.SUPPORTED_FUNCTIONS`, evaluated as OpenSim evaluates them; ``enabled``
(before 30509: ``isDisabled``) false: the controller gives nothing, as in OpenSim.  A
``controls_file`` (a ``.sto``/``.mot`` table of controls over time; a relative name is looked
for beside the model file, where OpenSim looks in its working directory) adds a function
for each column that names an actuator not listed: the polygon through the column, constant
outside the table (``interpolation_method`` 1, the default: OpenSim's GCVSpline of degree
1) or the step function (0).

:class:`ControllerInputs` is the controls as ``r(t, x) -> (len(input_names),)`` for
``simulate(..., specifieds=model.controls)``: each actuator's control at its input's place
(a muscle's excitation ``e_<muscle>``, an actuator's ``control_<name>``); the inputs no
controller drives are 0 (OpenSim's default control) unless given with
:meth:`ControllerInputs.with_inputs`.  A ``ToyReflexController`` (:mod:`.reflex`) adds its
controls of the state x to the same sum (OpenSim's ``addInControls``), as SymPy expressions
of t and x (:meth:`ControllerInputs.expressions`, compiled into the simulation's steps).
Other controller types, functions symbody cannot evaluate exactly (smoothing or
higher-degree ``GCVSpline``s, also as a controls file's ``interpolation_method``) and a
controls file that is not found are left out by name and line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import symengine as se
import sympy as sm

from ..compat.sympy import TIME
from ..errors import InputError
from ..formatting import symbol_name
from .functions import GCVSplineOsim, PiecewiseConstantFunctionOsim, parse_function
from .model_spec import LeftOut
from .reflex import ReflexNotBuilt, build_reflex_controller
from .storage import read_storage
from .xml_tree import OsimElement

__all__ = ["PrescribedControllerRecord", "ControllerInputs", "build_controllers",
           "controllers_note"]

#: the tags of OpenSim's Actuator classes (for ``ALL``)
_ACTUATOR_SUFFIXES = ("Muscle", "Actuator", "Muscle_Deprecated")
_ACTUATOR_TAGS = ("ClutchedPathSpring",)


@dataclass
class PrescribedControllerRecord:
    """A PrescribedController read from the file.

    ``name``: the file's (an unnamed one: ``PrescribedController_line<line>``);
    ``actuators``: the names it drives (list order); ``functions``: one
    :class:`~.functions.OsimFunction` of time each; ``inputs``: the input name
    (``input_names``) each drives, None for an actuator the model does not build (left out
    or disabled: its control moves nothing); ``enabled``: the file's flag."""

    name: str
    line: int
    enabled: bool
    actuators: tuple
    functions: tuple
    inputs: tuple

    def controls(self, t: float) -> np.ndarray:
        """f_i(t) for each actuator (``actuators`` order)."""
        return np.array([f.value(float(t)) for f in self.functions])


class ControllerInputs:
    """The controllers' controls as ``r(t, x=None) -> (len(input_names),)``: at each input,
    the sum of the enabled controllers' controls driving its actuator (PrescribedControllers'
    functions of time, ToyReflexControllers' functions of the state x = [q, u_ind, ...],
    ``states`` order, which ``x`` must then be given in), plus the inputs given with
    :meth:`with_inputs` (default 0).  ``driven``: the input names some enabled controller
    drives."""

    def __init__(self, input_names: tuple, records: list, others: Any = None,
                 states: tuple = ()):
        self.input_names = tuple(input_names)
        self.records = list(records)
        self.states = tuple(states)
        index = {n: i for i, n in enumerate(self.input_names)}
        self._terms = [(index[name], f) for r in self.records
                       if r.enabled and hasattr(r, "functions")
                       for name, f in zip(r.inputs, r.functions) if name is not None]
        reflexes = [r for r in self.records if r.enabled and hasattr(r, "control_symengine")]
        self._state_terms = [(index[name], e) for r in reflexes
                             for name, e in r.control_symengine()]
        self._reflexes = reflexes
        self._state_reason = next((f"the ToyReflexController {r.name!r}"
                                   for r in self.records
                                   if r.enabled and hasattr(r, "control_expressions")), "")
        driven = {i for i, _ in self._terms} | {i for i, _ in self._state_terms}
        self.driven = tuple(n for i, n in enumerate(self.input_names) if i in driven)
        self._others = others
        self._kernel: Any = None

    def __call__(self, t: float, x: Any = None) -> np.ndarray:
        out = self._base(t, x)
        for i, f in self._terms:
            out[i] += f.value(float(t))
        if self._state_terms:
            if x is None:
                raise InputError(f"model.controls(t, x): {self._state_reason} computes its "
                                 "controls from the state; "
                                 f"give x = [q, u_ind, ...] ({len(self.states)} values)")
            x = np.asarray(x, dtype=float).ravel()
            if x.shape != (len(self.states),):
                raise InputError(f"model.controls(t, x): x must be the {len(self.states)} "
                                 f"states, got shape {x.shape}")
            kernels, k = self._state_kernel()
            args = np.concatenate([[float(t)], x[:k]])
            for (i, _), f in zip(self._state_terms, kernels):
                out[i] += float(np.asarray(f(args)).ravel()[0])
        return out

    def _state_kernel(self) -> tuple:
        """(a symengine Lambdify of [t, q, u_ind] per state-dependent term (common
        subexpressions shared; one per muscle, as :mod:`.muscle_views` does: symengine's
        cse over several wrapped paths together does not finish), the number of states they
        read), built once."""
        if self._kernel is None:
            args = list(self._reflexes[0].arguments)
            self._kernel = ([se.Lambdify(args, [e], cse=True, real=True, backend="lambda")
                             for _, e in self._state_terms], len(args) - 1)
        return self._kernel

    def _base(self, t: float, x: Any) -> np.ndarray:
        n = len(self.input_names)
        if self._others is None:
            return np.zeros(n)
        r = self._others(t, x) if callable(self._others) else self._others
        r = np.array(r, dtype=float).ravel()
        if r.shape != (n,):
            raise InputError(f"with_inputs: the other inputs must be {n} values "
                             f"(input_names order), got shape {r.shape}")
        return r

    def expressions(self) -> dict | None:
        """{input name: SymPy expression of t and the state} of the controls (the functions'
        exact expressions and the reflexes' expressions of the state, summed per input; the
        constant ``with_inputs`` values added), which ``sb.simulate(..., specifieds=...)``
        compiles so that the steps run in C; None when the other inputs are a Python
        function."""
        if self._others is not None and callable(self._others):
            return None
        base = self._base(0.0, None)
        time = se.Symbol(str(TIME))
        exprs: dict = {n: se.Float(float(base[i])) if base[i] else se.Integer(0)
                       for i, n in enumerate(self.input_names)}
        for i, f in self._terms:
            try:
                term = f.expression([time])
            except NotImplementedError:          # (a function without an exact expression)
                return None
            exprs[self.input_names[i]] = exprs[self.input_names[i]] + term
        out = {n: sm.sympify(e) for n, e in exprs.items()}
        for r in self._reflexes:
            for name, e in r.control_expressions():
                out[name] = out[name] + e
        return out

    def with_inputs(self, others: Any) -> ControllerInputs:
        """The controls plus ``others`` (an array (len(input_names),) or a callable
        ``r(t, x)`` returning one): OpenSim adds every controller's controls, so inputs for
        the actuators no controller drives (and additions to those it does) go here."""
        if not callable(others):
            values = np.array(others, dtype=float).ravel()
            if values.shape != (len(self.input_names),):
                raise InputError(f"with_inputs: others must be {len(self.input_names)} values "
                                 f"(input_names order), got shape {values.shape}")
            others = values
        out = ControllerInputs(self.input_names, self.records, others, self.states)
        out._kernel = self._kernel          # (the same reflex terms: their kernel shared)
        return out

    def __repr__(self) -> str:
        return (f"<ControllerInputs: {len(self.driven)} of {len(self.input_names)} inputs "
                f"driven by {sum(r.enabled for r in self.records)} controller(s)>")


def _enabled(el: OsimElement) -> bool:
    if el.find("enabled") is not None:
        return el.flag("enabled", True)
    return not el.flag("isDisabled", False)


def _actuator_names(el: OsimElement, force_elements: list) -> list:
    """The actuators a controller names, in its list's order (4.6: paths; their last name)."""
    text = el.text_of("socket_actuators")
    if text is None:
        text = el.text_of("actuator_list") or ""
    names = [p.rstrip("/").rsplit("/", 1)[-1] for p in text.split()]
    if any(n.upper() == "ALL" for n in names):
        return [f.name for f in force_elements if _is_actuator(f)]
    return names


def _functions(el: OsimElement) -> list:
    fs = el.find("FunctionSet")
    if fs is None:
        fs = el.find("ControlFunctions")
    if fs is None:
        return []
    return [parse_function(f) for f in fs.objects()]


def _is_actuator(el: OsimElement) -> bool:
    return el.tag.endswith(_ACTUATOR_SUFFIXES) or el.tag in _ACTUATOR_TAGS


class _NotBuilt(Exception):
    """A controller symbody leaves out (the reason)."""


def build_controllers(controllers: list, force_elements: list, force_inputs: dict,
                      model: OsimElement | None = None, folder: str | None = None,
                      speed_of: Any = None) -> tuple:
    """``(records, left_out)``: a :class:`PrescribedControllerRecord` of each
    PrescribedController and a :class:`~.reflex.ReflexControllerRecord` of each
    ToyReflexController that can be built, and a :class:`~.model_spec.LeftOut` for each
    other controller (type, controls file or function not supported) and each disabled one.

    ``force_elements``: the file's forces (ForceSet then ``<components>``); ``force_inputs``:
    {name of a built force: its specified inputs (SymPy functions of time)}; ``model``: the
    file's ``<Model>`` (its ``<components>`` are looked at for ``ALL``); ``folder``: where a
    relative ``controls_file`` is looked for (the model file's folder; default the working
    directory); ``speed_of(muscle name)``: its lengthening speed as a SymPy expression of the
    state (:func:`~.reflex.lengthening_speed_of`; None: ToyReflexControllers are left out).
    Raises :class:`~symbody.errors.InputError` (controller and line) where
    OpenSim refuses the model: a named actuator not in the model or not an actuator, as
    many functions as actuators not given, a controls file's column naming no actuator."""
    records: list = []
    left_out: list = []
    known = {f.name for f in force_elements if _is_actuator(f)}
    comps = model.find("components") if model is not None else None
    component_actuators = any(_is_actuator(c) for c in (comps.children if comps is not None
                                                         else []))
    for el in controllers:
        try:
            if component_actuators and "ALL" in (el.text_of("actuator_list") or "").upper():
                raise _NotBuilt("ALL actuators with actuators among <components> (OpenSim's "
                                "order of them is not read)")
            if el.tag == "ToyReflexController" and speed_of is not None:
                names = _actuator_names(el, force_elements)
                records.append(build_reflex_controller(el, names, force_elements,
                                                       force_inputs, speed_of, _enabled(el)))
                if not records[-1].enabled:
                    left_out.append(LeftOut(el.tag, el.name, el.line,
                                            "disabled in the file (OpenSim ignores it too)"))
                continue
            if el.tag != "PrescribedController":
                raise _NotBuilt("controller type not supported (give its inputs yourself)")
            try:
                functions = _functions(el)
            except InputError as exc:
                raise _NotBuilt(f"a control function symbody does not evaluate exactly "
                                f"({exc}; give the inputs yourself)") from None
            names = _actuator_names(el, force_elements)
            if len(functions) != len(names):
                raise el.error(f"has {len(functions)} control function(s) for {len(names)} "
                               f"actuator(s) ({', '.join(names) or 'none'}); OpenSim refuses "
                               "it too")
            names, functions = _with_controls_file(el, names, functions, known, folder)
        except (_NotBuilt, ReflexNotBuilt) as exc:
            left_out.append(LeftOut(el.tag, el.name, el.line, str(exc)))
            continue
        records.append(_record(el, names, functions, known, force_inputs))
        if not records[-1].enabled:
            left_out.append(LeftOut(el.tag, el.name, el.line,
                                    "disabled in the file (OpenSim ignores it too)"))
    return records, left_out


def _with_controls_file(el: OsimElement, names: list, functions: list, known: set,
                        folder: str | None) -> tuple:
    """The actuators and functions with those of the controller's ``controls_file`` added
    (OpenSim 4.6's ``PrescribedController::extendConnectToModel``): a column per actuator
    (its name or path) not already listed, interpolated as ``interpolation_method`` says
    (1, the default: OpenSim's GCVSpline of degree 1, the polygon, constant outside the
    table; 0: piecewise constant; higher degrees are left out)."""
    text = (el.text_of("controls_file") or "").strip()
    if not text:
        return names, functions
    path = text if os.path.isabs(text) else os.path.join(folder or os.getcwd(), text)
    if not os.path.isfile(path):
        raise _NotBuilt(f"its controls file {text!r} is not found next to the model ({path})")
    method = el.number("interpolation_method", 1.0)
    if method not in (0.0, 1.0):
        raise _NotBuilt(f"its controls file is interpolated with interpolation_method "
                        f"{method:g} (a GCVSpline of degree {method:g}), which has no exact "
                        "evaluation in symbody (supported: 0 piecewise constant, 1 linear)")
    labels, data = read_storage(path)
    tcol = "time" if "time" in labels else "t" if "t" in labels else None
    if tcol is None:
        raise el.error(f"the controls file {path} has no 'time' column; OpenSim refuses it too")
    time = data[:, labels.index(tcol)]
    if time.size < 2 or np.any(np.diff(time) <= 0):
        raise el.error(f"the controls file {path}: the times must increase, 2 or more rows")
    listed = set(_listed_labels(el, names))
    names, functions = list(names), list(functions)
    kind = GCVSplineOsim if method == 1.0 else PiecewiseConstantFunctionOsim
    for k, label in enumerate(labels):
        if label == tcol or label in listed:
            continue
        name = label.rstrip("/").rsplit("/", 1)[-1]
        if name not in known:
            raise el.error(f"the controls file {path} has the column {label!r}, which names "
                           "no actuator of the model; OpenSim refuses it too")
        if name in names:
            raise el.error(f"the actuator {name!r} gets two control functions (the list and "
                           f"the controls file's column {label!r}); OpenSim refuses it too")
        names.append(name)
        functions.append(kind.from_points(time, data[:, k], el))
    return names, functions


def _listed_labels(el: OsimElement, names: list) -> list:
    """OpenSim's labels of the listed actuators: as written (``ALL``: their paths)."""
    text = el.text_of("socket_actuators")
    if text is None:
        text = el.text_of("actuator_list") or ""
    if any(p.upper() == "ALL" for p in text.split()):
        return [f"/forceset/{n}" for n in names]
    return text.split()


def _record(el: OsimElement, names: list, functions: list, known: set,
            force_inputs: dict) -> PrescribedControllerRecord:
    if len(set(names)) != len(names):
        raise el.error("names an actuator twice")
    inputs = []
    for name in names:
        if name not in known:
            raise el.error(f"names the actuator {name!r}, which is not an actuator of the "
                           "model")
        specs = force_inputs.get(name)
        if specs is None:               # left out or disabled: its control moves nothing
            inputs.append(None)
            continue
        if len(specs) != 1:
            raise el.error(f"names {name!r}, which is not an actuator with one control")
        inputs.append(symbol_name(specs[0]))
    return PrescribedControllerRecord(el.name or f"PrescribedController_line{el.line}",
                                      el.line, _enabled(el), tuple(names),
                                      tuple(functions), tuple(inputs))


def controllers_note(records: list, left_out: list) -> str:
    """What the load warning says of the controllers ("" when the file has none)."""
    built = [f"{r.name!r} (line {r.line}, {len(r.actuators)} actuator(s))" for r in records
             if r.enabled and isinstance(r, PrescribedControllerRecord)]
    reflexes = [f"{r.name!r} (line {r.line}, {len(r.actuators)} muscle(s), gain {r.gain:g})"
                for r in records if r.enabled and not isinstance(r, PrescribedControllerRecord)]
    parts = []
    if built or reflexes:
        kinds = ([("PrescribedController " + ", ".join(built))] if built else []) + \
            ([("ToyReflexController " + ", ".join(reflexes))] if reflexes else [])
        parts.append("controllers built as model.controls (pass specifieds=model.controls "
                     "or model.controls.expressions() to simulate): " + "; ".join(kinds))
    off = [x for x in left_out if x.tag.endswith("Controller")]
    if off:
        parts.append("controllers not built: " + "; ".join(str(x) for x in off))
    return "; ".join(parts)

