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
(before 30509: ``isDisabled``) false: the controller gives nothing, as in OpenSim.

:class:`ControllerInputs` is the controls as ``r(t, x) -> (len(input_names),)`` for
``simulate(..., specifieds=model.controls)``: each actuator's control at its input's place
(a muscle's excitation ``e_<muscle>``, an actuator's ``control_<name>``); the inputs no
controller drives are 0 (OpenSim's default control) unless given with
:meth:`ControllerInputs.with_inputs`.  Other controller types (``ToyReflexController``, ...),
a controller whose controls come from a file (``controls_file``: OpenSim's default
interpolation of it is a GCVSpline) or whose functions symbody cannot evaluate exactly
(``GCVSpline``) are left out by name and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..formatting import symbol_name
from .functions import parse_function
from .model_spec import LeftOut
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
    the sum of the enabled controllers' functions of time driving its actuator, plus the
    inputs given with :meth:`with_inputs` (default 0).  ``driven``: the input names some
    enabled controller drives."""

    def __init__(self, input_names: tuple, records: list, others: Any = None):
        self.input_names = tuple(input_names)
        self.records = list(records)
        index = {n: i for i, n in enumerate(self.input_names)}
        self._terms = [(index[name], f) for r in self.records if r.enabled
                       for name, f in zip(r.inputs, r.functions) if name is not None]
        self.driven = tuple(n for n in self.input_names
                            if any(index[n] == i for i, _ in self._terms))
        self._others = others

    def __call__(self, t: float, x: Any = None) -> np.ndarray:
        out = self._base(t, x)
        for i, f in self._terms:
            out[i] += f.value(float(t))
        return out

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
        return ControllerInputs(self.input_names, self.records, others)

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


def build_controllers(controllers: list, force_elements: list, force_inputs: dict,
                      model: OsimElement | None = None) -> tuple:
    """``(records, left_out)``: a :class:`PrescribedControllerRecord` of each
    PrescribedController that can be built, and a :class:`~.model_spec.LeftOut` for each
    other controller (type, controls file or function not supported) and each disabled one.

    ``force_elements``: the file's forces (ForceSet then ``<components>``); ``force_inputs``:
    {name of a built force: its specified inputs (SymPy functions of time)}; ``model``: the
    file's ``<Model>`` (its ``<components>`` are looked at for ``ALL``).  Raises
    :class:`~symbody.errors.InputError` (controller and line) where OpenSim refuses the
    model: a named actuator not in the model or not an actuator, or as many functions as
    actuators not given."""
    records: list = []
    left_out: list = []
    known = {f.name for f in force_elements}
    comps = model.find("components") if model is not None else None
    component_actuators = any(_is_actuator(c) for c in (comps.children if comps is not None
                                                         else []))
    for el in controllers:
        if el.tag != "PrescribedController":
            left_out.append(LeftOut(el.tag, el.name, el.line, "controller type not supported "
                                    "(give its inputs yourself)"))
            continue
        for tag in ("controls_file", "prescribed_controls_file"):
            if (el.text_of(tag) or "").strip():
                left_out.append(LeftOut(el.tag, el.name, el.line, f"controls from a file "
                                        f"(<{tag}>) are not built (give the inputs yourself)"))
                break
        else:
            try:
                functions = _functions(el)
            except InputError as exc:
                left_out.append(LeftOut(el.tag, el.name, el.line, "a control function symbody "
                                        f"does not evaluate exactly ({exc}; give the inputs "
                                        "yourself)"))
                continue
            names = _actuator_names(el, force_elements)
            if component_actuators and "ALL" in (el.text_of("actuator_list") or "").upper():
                left_out.append(LeftOut(el.tag, el.name, el.line, "ALL actuators with "
                                        "actuators among <components> (OpenSim's order of "
                                        "them is not read)"))
                continue
            records.append(_record(el, names, functions, known, force_inputs))
            if not records[-1].enabled:
                left_out.append(LeftOut(el.tag, el.name, el.line,
                                        "disabled in the file (OpenSim ignores it too)"))
    return records, left_out


def _record(el: OsimElement, names: list, functions: list, known: set,
            force_inputs: dict) -> PrescribedControllerRecord:
    if len(functions) != len(names):
        raise el.error(f"has {len(functions)} control function(s) for {len(names)} "
                       f"actuator(s) ({', '.join(names) or 'none'}); OpenSim refuses it too")
    if len(set(names)) != len(names):
        raise el.error("names an actuator twice")
    inputs = []
    for name in names:
        if name not in known:
            raise el.error(f"names the actuator {name!r}, which is not in the model's forces")
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
             if r.enabled]
    parts = []
    if built:
        parts.append("controllers built as model.controls (pass specifieds=model.controls to "
                     "simulate): PrescribedController " + ", ".join(built))
    off = [x for x in left_out if x.tag.endswith("Controller")]
    if off:
        parts.append("controllers not built: " + "; ".join(str(x) for x in off))
    return "; ".join(parts)

