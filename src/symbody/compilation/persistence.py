"""Saving, loading and pickling a compiled :class:`~symbody.NumericModel`.

A NumericModel is numbers, names and compiled kernels; its SymPy equations (``model.eom``)
are kept for reference only.  This module turns a model into a *portable state*:

* a JSON-compatible description of every attribute (integers, floats, strings, tuples,
  index arrays, :class:`Partition`, slices; symbols by name and assumptions, functions of
  time by name, derivatives of them by order), and
* one blob per kernel: for the ``llvm`` backend the object code symengine's
  ``LLVMDouble`` holds (so nothing is compiled again), and for the ``llvm`` and ``lambda``
  backends the kernel's expressions in symengine's own binary serialization (read by
  symengine's C++ deserializer, not by Python).

``model.save(path)`` writes that state as an ``.npz`` archive (``numpy.load`` with
``allow_pickle=False``: no Python object is unpickled), with the SHA-256 of every blob in
the JSON header and the versions it was built with (symbody, symengine, Python, machine,
OS).  :func:`load_model` refuses a file written by other versions or another platform
(machine code is not portable) and a file whose blobs do not match their hashes, and parses
each machine-code blob as an object file before LLVM maps it
(:mod:`.object_code`): every problem is a :class:`~symbody.ModelFileError` naming the
file, never a KeyError from deep inside or an interpreter abort.

Trust.  The ``llvm`` blobs are native machine code that runs when the model is
evaluated, exactly like a shared library: **load only files you trust** (that you wrote
or got from someone you trust).  ``load_model(path, machine_code=False)`` never uses the
machine code: it rebuilds the kernels from the stored expressions with symengine (this
compiles again, but reads nothing that can run), which is the way to open a file of
unknown origin.

Pickling (``pickle.dumps(model)``, multiprocessing with "spawn", Dask) uses the same
portable state, so the SymPy equations are left out: an unpickled model has
``model.eom = None``.  ``dumps(model, equations=True)`` keeps them.  A pickle is Python
code to the unpickler, as always: unpickle only data you trust.
"""

from __future__ import annotations

import contextvars
import hashlib
import io
import json
import pickle
import platform
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm

from ..compat.sympy import TIME, original_assumptions
from ..errors import InputError, ModelFileError
from .object_code import check_object_code

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion
    from .numeric_model import NumericModel


try:
    import symengine as se
    from symengine.lib.symengine_wrapper import llvm_loading_func, load_basic
except ImportError:  # pragma: no cover - symengine is a dependency
    se = None

__all__ = ["save_model", "load_model", "dumps", "loads", "model_state", "model_from_state",
           "FORMAT"]

#: file format tag; bumped when the layout of the state changes
FORMAT = "symbody-model-1"

_t = TIME

#: attributes that hold per-process caches or work buffers: recreated empty, never stored
_TRANSIENT: dict[str, Callable[[], Any]] = {"_local": threading.local, "_derivatives": dict}

#: pickling with the SymPy equations (set by :func:`dumps`)
_WITH_EQUATIONS: contextvars.ContextVar[bool] = contextvars.ContextVar("symbody_pickle_eom",
                                                                       default=False)


def versions() -> dict[str, str]:
    """What a saved model depends on: library versions and the platform."""
    from .. import __version__
    return {
        "symbody": __version__,
        "symengine": getattr(se, "__version__", "none"),
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "machine": platform.machine(),
        "platform": sys.platform,
    }


# ----------------------------------------------------------------- encoding
class _Encoder:
    """Attribute values -> JSON-compatible descriptions; arrays and kernel blobs aside."""

    def __init__(self, keep_machine_code: bool = True, allow_pickle: bool = False):
        self.allow_pickle = allow_pickle
        self.blobs: dict[str, bytes] = {}
        self.arrays: dict[str, np.ndarray] = {}
        self.keep_machine_code = keep_machine_code
        self._kernels: dict[int, dict] = {}

    def __call__(self, v, where: str):
        from .numeric_model import Partition

        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, np.integer)):
            return {"int": int(v)}
        if isinstance(v, (float, np.floating)):
            return {"float": float(v).hex()}
        if isinstance(v, tuple):
            return {"tuple": [self(x, where) for x in v]}
        if isinstance(v, list):
            return {"list": [self(x, where) for x in v]}
        if isinstance(v, slice):
            return {"slice": [self(v.start, where), self(v.stop, where), self(v.step, where)]}
        if isinstance(v, np.ndarray):
            if v.dtype == object:
                raise InputError(f"cannot save the attribute {where}: an object array")
            key = f"a{len(self.arrays)}"
            self.arrays[key] = v
            return {"array": key}
        if isinstance(v, Partition):
            return {"partition": [list(v.dependent_coordinates), list(v.dependent_speeds), v.N, v.o]}
        if isinstance(v, dict):
            return {"dict": [[self(k, where), self(x, where)] for k, x in v.items()]}
        if isinstance(v, sm.Basic):
            return {"sympy": _encode_symbol(v, where)}
        if hasattr(v, "nargs") and hasattr(v, "nout") and hasattr(v, "backend"):
            return {"kernel": self._kernel(v, where)}
        raise InputError(f"cannot save the attribute {where} of type {type(v).__name__}")

    def _kernel(self, k, where: str) -> dict:
        if id(k) in self._kernels:
            return self._kernels[id(k)]
        if hasattr(k, "_realize"):             # lazy kernel: generate its code now
            k = k._realize()
        src = getattr(k, "source", None)
        desc: dict[str, Any] = {"nargs": k.nargs, "nout": k.nout, "backend": k.backend, "name": k.name}
        if k.nout:
            if src is None:
                raise InputError(f"cannot save the kernel {k.name!r} ({where}): it keeps no source")
            if src.get("kind") == "sympy" and self.allow_pickle:
                desc["sympy"] = self._blob(pickle.dumps(src["exprs"], protocol=pickle.HIGHEST_PROTOCOL))
                self._kernels[id(k)] = desc
                return desc
            if src.get("kind") != "symengine":
                raise InputError(f"kernel {k.name!r} uses the {k.backend!r} backend, whose "
                                 "functions cannot be saved; compile with backend='llvm' or 'lambda'")
            if src.get("serialized") is None:
                src["serialized"] = b"".join(_frame(_basic_bytes(e)) for e in src["exprs"])
            lam = src.get("lambdify")
            desc["expressions"] = self._blob(src["serialized"])
            if k.backend == "llvm" and lam is not None and self.keep_machine_code:
                args = list(lam.__reduce__()[1])
                code = args[-1]
                dtype = args[-2]
                if dtype is not np.float64:
                    raise InputError(f"kernel {k.name!r} is not a float64 kernel")
                desc["llvm"] = {"args": _jsonable(args[:-2]), "code": self._blob(code)}
        self._kernels[id(k)] = desc
        return desc

    def _blob(self, data: bytes) -> dict:
        key = f"b{len(self.blobs)}"
        self.blobs[key] = data
        return {"blob": key, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def _frame(b: bytes) -> bytes:
    return len(b).to_bytes(8, "little") + b


def _unframe(data: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 8], "little")
        out.append(data[i + 8:i + 8 + n])
        i += 8 + n
    return out


def _basic_bytes(e) -> bytes:
    red = e.__reduce__()
    if red[0] is not load_basic:           # pragma: no cover - symengine API change
        raise InputError("this symengine cannot serialize expressions")
    return red[1][0]


def _jsonable(v):
    if isinstance(v, (list, tuple)):
        return {"seq": [_jsonable(x) for x in v], "tuple": isinstance(v, tuple)}
    if isinstance(v, (bool, int, str, float)) or v is None:
        return v
    raise InputError(f"unexpected value {v!r} in a compiled kernel's description")


def _unjson(v):
    if isinstance(v, dict):
        seq = [_unjson(x) for x in v["seq"]]
        return tuple(seq) if v["tuple"] else seq
    return v


def _encode_symbol(s, where: str) -> dict:
    if isinstance(s, sm.Dummy):
        return {"dummy": s.name, "index": s.dummy_index, "assumptions": original_assumptions(s)}
    if isinstance(s, sm.Symbol):
        return {"symbol": s.name, "assumptions": {k: bool(v) for k, v in original_assumptions(s).items()}}
    if isinstance(s, sm.core.function.AppliedUndef) and s.args == (_t,):
        return {"function": s.func.__name__}
    if isinstance(s, sm.Derivative) and s.variables and all(v == _t for v in s.variables):
        inner = s.expr
        if isinstance(inner, sm.core.function.AppliedUndef) and inner.args == (_t,):
            return {"derivative": inner.func.__name__, "order": len(s.variables)}
    raise InputError(f"cannot save the attribute {where}: the SymPy object {s} is not a symbol, "
                     "a function of time or a derivative of one")


def _decode_symbol(d: dict, dummies: dict):
    if "symbol" in d:
        return sm.Symbol(d["symbol"], **d["assumptions"])
    if "function" in d:
        return sm.Function(d["function"])(_t)
    if "derivative" in d:
        return sm.Function(d["derivative"])(_t).diff(_t, d["order"])
    if "dummy" in d:
        key = (d["dummy"], d["index"])
        if key not in dummies:
            dummies[key] = sm.Dummy(d["dummy"], **d["assumptions"])
        return dummies[key]
    raise ModelFileError(f"unknown symbol description {d}")


# ----------------------------------------------------------------- state
def model_state(model: NumericModel, machine_code: bool = True,
                allow_pickle: bool = False) -> tuple[dict, dict, dict]:
    """(header, arrays, blobs): the portable state of ``model`` (see the module docstring).

    ``allow_pickle``: for pickling only, numpy-backend kernels keep their SymPy expressions
    as a pickle (a saved file never holds one)."""
    enc = _Encoder(keep_machine_code=machine_code, allow_pickle=allow_pickle)
    attrs = {}
    for name, value in vars(model).items():
        if name in _TRANSIENT or isinstance(value, threading.local):
            continue
        if name == "eom":
            continue
        attrs[name] = enc(value, name)
    header = {"format": FORMAT, "versions": versions(), "class": type(model).__name__,
              "attributes": attrs, "transient": sorted(n for n in vars(model) if n in _TRANSIENT
                                                       or isinstance(vars(model)[n], threading.local)),
              "name": getattr(getattr(model, "eom", None), "name", None)}
    return header, enc.arrays, enc.blobs


def model_from_state(header: dict, arrays: dict, blobs: dict, machine_code: bool = True,
                     eom: EquationsOfMotion | None = None, source: str = "the saved model",
                     allow_pickle: bool = False) -> NumericModel:
    """A NumericModel from the pieces :func:`model_state` made (hashes and versions checked,
    machine code parsed before it is mapped: :func:`.object_code.check_object_code`).

    Raises :class:`~symbody.ModelFileError` naming ``source`` and what is wrong.
    """
    from .numeric_model import NumericModel, Partition

    if header.get("format") != FORMAT:
        raise ModelFileError(f"{source} is not a symbody model file of format {FORMAT!r} "
                         f"(found {header.get('format')!r})")
    mine, theirs = versions(), header.get("versions", {})
    use_code = machine_code
    for key in ("symbody", "symengine", "python", "machine", "platform"):
        if theirs.get(key) != mine[key]:
            if key in ("symbody",) or not machine_code:
                if key == "symbody":
                    raise ModelFileError(f"{source} was written by symbody {theirs.get(key)}; this is symbody "
                                     f"{mine[key]}: compile the model again from its equations")
                continue
            raise ModelFileError(
                f"{source} was built with {key} {theirs.get(key)!r}, but this is {key} {mine[key]!r}: its "
                "machine code cannot be used here.  Compile the model again from its equations, or "
                "load it with machine_code=False to rebuild its kernels from the stored expressions")
    dummies: dict = {}
    kernels: dict[int, Any] = {}

    def blob(desc: dict) -> bytes:
        data = blobs.get(desc["blob"])
        if data is None or len(data) != desc["size"] or hashlib.sha256(data).hexdigest() != desc["sha256"]:
            raise ModelFileError(f"{source} is damaged: the data of a compiled kernel does not match "
                             "its SHA-256 hash")
        return data

    def kernel(desc: dict):
        from .codegen import Kernel, kernel_from_lambdify
        first = desc.get("expressions") or desc.get("sympy")
        key = first["blob"] if first else id(desc)
        if key in kernels:
            return kernels[key]
        nargs, nout, backend, name = desc["nargs"], desc["nout"], desc["backend"], desc["name"]
        if nout == 0:
            k = Kernel(nargs, 0, backend, name, lambda z, out: None, lambda Z: np.empty((len(Z), 0)))
        elif "sympy" in desc:
            if not allow_pickle:
                raise ModelFileError(f"{source} holds a pickled kernel, which is not loaded from files")
            from .codegen import _numpy_kernel
            k = _numpy_kernel(nargs, pickle.loads(blob(desc["sympy"])), name)
        else:
            exprs_data = blob(desc["expressions"])
            lam = None
            if use_code and "llvm" in desc:
                code = blob(desc["llvm"]["code"])
                # parsed before LLVM maps it: a malformed object aborts the interpreter there
                check_object_code(code, f"{source}, kernel {name!r}")
                args = list(_unjson(desc["llvm"]["args"])) + [np.float64, code]
                lam = llvm_loading_func(*args)
            k = kernel_from_lambdify(nargs, nout, backend, name, lam, exprs_data,
                                     lambda: [load_basic(b) for b in _unframe(exprs_data)])
        kernels[key] = k
        return k

    def dec(v):
        if v is None or isinstance(v, (bool, str)):
            return v
        (tag, val), = v.items()
        if tag == "int":
            return int(val)
        if tag == "float":
            return float.fromhex(val)
        if tag == "tuple":
            return tuple(dec(x) for x in val)
        if tag == "list":
            return [dec(x) for x in val]
        if tag == "slice":
            return slice(*(dec(x) for x in val))
        if tag == "array":
            return arrays[val]
        if tag == "partition":
            return Partition(tuple(val[0]), tuple(val[1]), int(val[2]), int(val[3]))
        if tag == "dict":
            return {dec(k): dec(x) for k, x in val}
        if tag == "sympy":
            return _decode_symbol(val, dummies)
        if tag == "kernel":
            return kernel(val)
        raise ModelFileError(f"{source}: unknown value tag {tag!r}")

    if header.get("class") != NumericModel.__name__:
        raise ModelFileError(f"{source} holds a {header.get('class')!r}, not a NumericModel")
    model = NumericModel.__new__(NumericModel)
    for name, value in header["attributes"].items():
        object.__setattr__(model, name, dec(value))
    for name in header.get("transient", ()):
        object.__setattr__(model, name, _TRANSIENT.get(name, threading.local)())
    object.__setattr__(model, "eom", eom)
    object.__setattr__(model, "_frozen", True)
    return model


# ----------------------------------------------------------------- files
def save_model(model: NumericModel, path: str | Path, machine_code: bool = True) -> Path:
    """Write ``model`` to ``path`` (``.symbody.npz`` appended unless it ends in ``.npz``).

    The archive holds a JSON header (format, versions, attributes, SHA-256 of each blob),
    the model's arrays and one blob per kernel (machine code for the ``llvm`` backend,
    symengine-serialized expressions for ``llvm`` and ``lambda``).  ``machine_code=False``
    leaves the machine code out (smaller, portable across platforms; loading compiles).
    Returns the path written.
    """
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".symbody.npz")
    header, arrays, blobs = model_state(model, machine_code=machine_code)
    payload = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
    for k, a in arrays.items():
        payload["array_" + k] = a
    for k, b in blobs.items():
        payload["blob_" + k] = np.frombuffer(b, dtype=np.uint8)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **payload)
    tmp.replace(path)
    return path


def load_model(path: str | Path, machine_code: bool = True) -> NumericModel:
    """Read a model written by ``model.save(path)``; nothing is compiled (``machine_code=True``).

    Raises :class:`~symbody.ModelFileError` (a :class:`~symbody.SymbodyFileError`, an
    InputError) naming the file and what is wrong: missing, not a symbody model, written by
    other versions of symbody / symengine / Python or on another platform, or damaged (a
    zip member failing its CRC, a blob failing its SHA-256, an attribute that does not
    decode, machine code that is not a well-formed object file for this machine -- parsed
    before it is mapped, so a damaged object is an error, not an interpreter abort).  The
    returned model has ``eom = None``.

    The file's machine code runs when the model is evaluated: **load only files you
    trust.**  The checks catch damage, not malice: valid machine code that does something
    else passes them.  ``machine_code=False`` ignores it and compiles the kernels again from
    the stored expressions (symengine only; nothing in the file can run), which also opens
    files from another platform or symengine version.
    """
    path = Path(path)
    if not path.exists() and path.with_name(path.name + ".symbody.npz").exists():
        path = path.with_name(path.name + ".symbody.npz")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        raise ModelFileError(f"no such model file: {path}") from None
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model file ({exc.strerror or exc})") from None
    if head != b"PK\x03\x04":
        raise ModelFileError(f"{path} is not a symbody model file (not an .npz archive: "
                             "model.save writes one)")
    try:
        with np.load(path, allow_pickle=False) as data:
            if "header" not in data.files:
                raise ModelFileError(f"{path} is not a symbody model file (no header)")
            try:
                header = json.loads(data["header"].tobytes().decode())
            except (ValueError, UnicodeDecodeError) as exc:
                raise ModelFileError(f"{path}: unreadable header ({exc})") from None
            if not isinstance(header, dict):
                raise ModelFileError(f"{path}: unreadable header (not a JSON object)")
            arrays = {k[len("array_"):]: data[k] for k in data.files if k.startswith("array_")}
            blobs = {k[len("blob_"):]: data[k].tobytes() for k in data.files if k.startswith("blob_")}
    except ModelFileError:
        raise
    except Exception as exc:        # zipfile, zlib, numpy header errors: a damaged archive
        raise ModelFileError(f"{path}: damaged model file ({_describe(exc)})") from None
    try:
        return model_from_state(header, arrays, blobs, machine_code=machine_code, source=str(path))
    except ModelFileError:
        raise
    except Exception as exc:        # an attribute or kernel description that does not decode
        raise ModelFileError(f"{path}: damaged model file ({_describe(exc)})") from None


def _describe(exc: BaseException) -> str:
    """An exception as 'Type: message' (numpy's advice to load pickles left out)."""
    text = str(exc)
    if "pickle" in text:
        text = "a member holds Python objects (pickled data), which a symbody file never does"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# ----------------------------------------------------------------- pickling
def reduce_model(model: NumericModel) -> tuple[Callable, tuple]:
    """``NumericModel.__reduce__``: the portable state in one bytes object (+ eom if asked)."""
    header, arrays, blobs = model_state(model, allow_pickle=True)
    buf = io.BytesIO()
    np.savez(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
             **{"array_" + k: a for k, a in arrays.items()},
             **{"blob_" + k: np.frombuffer(b, dtype=np.uint8) for k, b in blobs.items()})
    eom = model.eom if _WITH_EQUATIONS.get() else None
    return _unpickle_model, (buf.getvalue(), eom)


def _unpickle_model(data: bytes, eom=None):
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        header = json.loads(z["header"].tobytes().decode())
        arrays = {k[len("array_"):]: z[k] for k in z.files if k.startswith("array_")}
        blobs = {k[len("blob_"):]: z[k].tobytes() for k in z.files if k.startswith("blob_")}
    return model_from_state(header, arrays, blobs, eom=eom, source="the pickled model", allow_pickle=True)


def dumps(model: NumericModel, equations: bool = False) -> bytes:
    """``pickle.dumps(model)``, with the SymPy equations ``model.eom`` when ``equations``."""
    token = _WITH_EQUATIONS.set(bool(equations))
    try:
        return pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        _WITH_EQUATIONS.reset(token)


def loads(data: bytes) -> NumericModel:
    """``pickle.loads``: only for data you trust (a pickle can run code)."""
    return pickle.loads(data)
