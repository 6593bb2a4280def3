"""The MODEL argument: a zoo name or a user's ``FILE.py:FUNCTION``, formed with its ``--set``
options and constants, and its time span."""

from __future__ import annotations

import argparse
import difflib
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .arguments import _parse_number, _parse_option, _parse_sets, _symbol_name
from .console import Console, UsageError, _Timer


def _known_models() -> dict[str, str]:
    from .. import models

    return models.available()


def _model_key(name: str) -> str:
    known = _known_models()
    key = str(name).strip().lower().replace("_", "-")
    if key not in known:
        close = difflib.get_close_matches(key, list(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"unknown model {name!r}{hint}; known models: {', '.join(known)}")
    return key


def _user_model(spec: str) -> tuple[str, Callable] | None:
    """(key, function) of a user's model ``FILE.py:FUNCTION`` (None for any other name): the
    file is imported as a module (its top level runs) and ``FUNCTION(**options)`` must return
    a :class:`symbody.models.Model`."""
    import importlib.util

    path_text, sep, func_name = str(spec).rpartition(":")
    if not sep or not path_text.endswith(".py"):
        return None
    path = Path(path_text)
    if not func_name.isidentifier():
        raise UsageError(f"{spec!r}: expected FILE.py:FUNCTION with a function name after the colon")
    if not path.is_file():
        raise UsageError(f"{spec!r}: no such file {path}")
    module_name = f"symbody_user_model_{abs(hash(str(path.resolve())))}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise UsageError(f"{spec!r}: cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise UsageError(f"{spec!r}: importing {path} failed: {type(exc).__name__}: {exc}") from exc
    factory = getattr(module, func_name, None)
    if not callable(factory):
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module_name)
        raise UsageError(f"{spec!r}: {path} has no function {func_name!r}"
                         + (f"; its functions: {', '.join(names)}" if names else ""))
    return f"{path.stem}-{func_name}".replace("_", "-"), factory


def _model_source(name: str) -> tuple[str, Callable | None]:
    """(key, factory) of the MODEL argument: a user's ``FILE.py:FUNCTION``, or a zoo name
    (factory None: ``symbody.models.get``)."""
    user = _user_model(name)
    if user is not None:
        return user
    return _model_key(name), None


def _factory_parameters(key: str, factory: Callable | None = None) -> dict[str, inspect.Parameter]:
    """Explicit keyword options of the model function (e.g. n for the n-link pendulum)."""
    from .. import models

    if factory is None:
        factory = getattr(models, key.replace("-", "_"), None)
    if factory is None:
        return {}
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return {}
    return {name: p for name, p in signature.parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _build_model(key: str, sets: Sequence[tuple[str, str]], console: Console,
                 factory: Callable | None = None):
    """Form the model (factory options from --set) and apply the other --set values.
    ``factory``: the model function (default: the zoo's ``key``).

    Returns (model, inputs): inputs {name: value} for the specified inputs r(t), held constant.
    """
    from .. import models

    parameters = _factory_parameters(key, factory)
    options = {name: _parse_option(name, text, parameters[name]) for name, text in sets
               if name in parameters}
    label = f"{key}" + (f" ({', '.join(f'{k}={v}' for k, v in options.items())})" if options else "")
    console.step(f"forming the equations of motion of {label} ...")
    with _Timer() as timer:
        model = models.get(key, **options) if factory is None else factory(**options)
    if not isinstance(model, models.Model):
        raise UsageError(f"the model function of {key} returned a {type(model).__name__}, not a "
                         "symbody.models.Model (see docs/guides/command_line.md: your own models)")
    values = {name: _parse_number(name, text) for name, text in sets if name not in parameters}
    input_names = [_symbol_name(r) for r in model.eom.specifieds]
    inputs = {name: values.pop(name) for name in list(values) if name in input_names}
    if values:
        known = (sorted(map(str, model.constants)) + sorted(model.op_parameters) + sorted(parameters)
                 + input_names)
        for name in values:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise UsageError(f"unknown parameter {name!r} for model {key}{hint}; known parameters: "
                                 f"{', '.join(known)}")
        model = model.with_constants(**values)
    # specified inputs r(t) are held constant: zero unless given with --set
    inputs = {name: inputs.get(name, 0.0) for name in input_names}
    eom = model.eom
    console.step(f"  formed in {timer.seconds:.1f} s: {eom.n + eom.M} coordinates ({eom.M} dependent), "
                 f"{eom.p + eom.m} speeds ({eom.m} dependent), {len(model.constants)} constants"
                 + (f", inputs {', '.join(f'{k} = {v:g}' for k, v in inputs.items())} (held constant)"
                    if inputs else ""))
    return model, inputs


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    known = _known_models()
    width = max(map(len, known))
    for name, description in known.items():
        console.always(f"{name:<{width}}  {description}")
    return 0


def _model_and_time_span(args: argparse.Namespace, console: Console):
    """The model named on the command line, its ``--set`` inputs and the time span (t0, tf):
    ``--tf`` when given (it must come after the model's start time), else the model's own."""
    key, factory = _model_source(args.model)
    model, inputs = _build_model(key, _parse_sets(args.set), console, factory)
    t0 = float(model.t_span[0])
    tf = float(args.tf) if args.tf is not None else float(model.t_span[1])
    if not tf > t0:
        raise UsageError(f"--tf must be greater than the start time {t0:g} s, got {tf:g}")
    return key, model, inputs, t0, tf
