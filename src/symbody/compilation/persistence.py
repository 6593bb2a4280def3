"""Saving, loading and pickling a compiled :class:`~symbody.NumericModel`.

A NumericModel is numbers, names and compiled kernels (a
:class:`~.kernel_layout.CompiledParts`: layout, kernels, symbols, backend); its SymPy
equations (``model.eom``) are kept for reference only.  This module turns those parts into
a *portable state*, and back, without knowing the NumericModel class (which calls it):

* a JSON-compatible description of the layout (the given fields of
  :class:`~.kernel_layout.KernelLayout`: integers, booleans, slices) and the symbols (by
  name and assumptions, functions of time by name, derivatives of them by order), and
* one blob per kernel: for the ``llvm`` backend the object code symengine's
  ``LLVMDouble`` holds (so nothing is compiled again), and for the ``llvm`` and ``lambda``
  backends the kernel's expressions in symengine's own binary serialization (read by
  symengine's C++ deserializer, not by Python).

``model.save(path)`` writes that state as an ``.npz`` archive (``numpy.load`` with
``allow_pickle=False``: no Python object is unpickled), with the SHA-256 of every blob in
the JSON header, the versions it was built with (symbody, symengine, Python, machine,
OS), and a SHA-256 digest over the whole archive (header, arrays and blobs:
:func:`file_digest`, member ``digest``).  :func:`load_model` refuses a file whose digest or
blobs do not match (damage anywhere), machine code written by other versions or on another
platform (machine code is not portable; ``machine_code=False`` rebuilds the kernels of a
file of any known format from the stored expressions), and parses
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
portable state (:func:`pack_parts`), so the SymPy equations are left out: an unpickled
model has ``model.eom = None``.  ``dumps(model, equations=True)`` keeps them.  A pickle is
Python code to the unpickler, as always: unpickle only data you trust.

Formats: ``symbody-model-3`` (this version) is ``symbody-model-2`` (``layout``, ``symbols``,
``kernels`` and ``backend``) with the whole-file digest; files of ``symbody-model-2`` (blob
hashes only) and ``symbody-model-1`` (every attribute of the model by its name, the
private ones included) are still read.

A model rebuilt with ``machine_code=False`` equals the saved one to round-off, not to the
bit: symengine keeps the terms of a sum in a hash map, its serialization writes them in map
order and reading them back can give another map order, and the compiled code adds the
terms in that order (7e-15 apart in the four-bar's kernel, 1.7e-7 after a long run).
Compiling every kernel from its read-back form would make the two equal to the bit, but
moves every kernel's round-off; that is left to a decision (issue 34).
"""

from __future__ import annotations

import contextvars
import hashlib
import io
import json
import pickle
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sm

from ..compat.sympy import TIME, original_assumptions
from ..errors import InputError, ModelFileError
from .codegen import serialize_expressions
from .contact_persistence import decode_contacts, encode_contacts
from .kernel_layout import CompiledParts, KernelLayout, ModelKernels, ModelSymbols
from .object_code import check_object_code, check_shared_library

try:
    import symengine as se
    from symengine.lib.symengine_wrapper import llvm_loading_func
except ImportError:  # pragma: no cover - symengine is a dependency
    se = None

__all__ = ["write_parts", "read_parts", "pack_parts", "unpack_parts", "parts_state",
           "parts_from_state", "pickling_equations", "dumps", "loads", "versions", "FORMAT",
           "file_digest"]

#: file format tag; bumped when the layout of the state changes.  3: format 2 with a
#: SHA-256 digest over the whole file (:func:`file_digest`), checked on load
FORMAT = "symbody-model-3"
#: the formats this version reads
FORMATS = ("symbody-model-1", "symbody-model-2", FORMAT)
#: the archive member holding :func:`file_digest` of all the others
DIGEST_MEMBER = "digest"

_t = TIME

#: pickling with the SymPy equations (set by :func:`dumps`)
_WITH_EQUATIONS: contextvars.ContextVar[bool] = contextvars.ContextVar("symbody_pickle_eom",
                                                                       default=False)


def versions() -> dict[str, str]:
    """What a saved model depends on: library versions and the platform."""
    from ..version import __version__
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
        k = k.realize()                        # a lazy kernel generates its code now
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
                src["serialized"] = serialize_expressions(src["exprs"])
            lam = src.get("lambdify")
            desc["expressions"] = self._blob(src["serialized"])
            if k.backend == "llvm" and lam is not None and self.keep_machine_code:
                args = list(lam.__reduce__()[1])
                code = args[-1]
                dtype = args[-2]
                if dtype is not np.float64:
                    raise InputError(f"kernel {k.name!r} is not a float64 kernel")
                desc["llvm"] = {"args": _jsonable(args[:-2]), "code": self._blob(code)}
            library = getattr(getattr(k, "library", None), "_name", None)    # the loaded .so
            if k.backend == "c" and library and self.keep_machine_code:
                try:
                    desc["c"] = {"code": self._blob(Path(library).read_bytes())}
                except OSError:        # a scratch library (cache=False): rebuilt when loaded
                    pass
        self._kernels[id(k)] = desc
        return desc

    def _blob(self, data: bytes) -> dict:
        key = f"b{len(self.blobs)}"
        self.blobs[key] = data
        return {"blob": key, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}

    #: a blob of ``data`` stored with the file (its description for the header)
    blob = _blob


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
def parts_state(parts: CompiledParts, name: str | None = None, machine_code: bool = True,
                allow_pickle: bool = False) -> tuple[dict, dict, dict]:
    """(header, arrays, blobs): the portable state of a compiled model's ``parts`` (see the
    module docstring); ``name``: the equations' name, kept for reference.

    ``allow_pickle``: for pickling only, numpy-backend kernels keep their SymPy expressions
    as a pickle (a saved file never holds one)."""
    enc = _Encoder(keep_machine_code=machine_code, allow_pickle=allow_pickle)
    header = {"format": FORMAT, "versions": versions(), "class": "NumericModel", "name": name,
              "backend": parts.backend,
              "layout": {k: enc(v, k) for k, v in parts.layout.stored_fields().items()},
              "symbols": {k: enc(v, k) for k, v in parts.symbols.items()},
              "kernels": {k: enc(v, f"the {k} kernel") for k, v in parts.kernels.items()}}
    contacts = encode_contacts(parts.contacts, _encode_symbol, enc.blob)
    if contacts is not None:
        header["contacts"] = contacts
    return header, enc.arrays, enc.blobs


def _check_versions(header: dict, machine_code: bool, source: str) -> bool:
    """Whether the machine code can be used; raises ModelFileError for a file of another
    format or symbody version, or machine code of other versions or another platform."""
    if header.get("format") not in FORMATS:
        raise ModelFileError(f"{source} is not a symbody model file of format {FORMAT!r} "
                             f"(found {header.get('format')!r})")
    if header.get("class") != "NumericModel":
        raise ModelFileError(f"{source} holds a {header.get('class')!r}, not a NumericModel")
    mine, theirs = versions(), header.get("versions", {})
    # the format decides what can be read; the versions only whether the machine code can run
    # here: machine_code=False rebuilds the kernels of a file of any known format
    for key in ("symbody", "symengine", "python", "machine", "platform"):
        if theirs.get(key) == mine[key]:
            continue
        if machine_code:
            raise ModelFileError(
                f"{source} was built with {key} {theirs.get(key)!r}, but this is {key} {mine[key]!r}: its "
                "machine code cannot be used here.  Compile the model again from its equations, or "
                "load it with machine_code=False to rebuild its kernels from the stored expressions")
    return machine_code


class _Decoder:
    """JSON descriptions -> values, kernels rebuilt from their blobs (hashes checked, machine
    code parsed before it is mapped)."""

    def __init__(self, arrays: dict, blobs: dict, use_code: bool, source: str, allow_pickle: bool):
        self.arrays, self.blobs, self.use_code = arrays, blobs, use_code
        self.source, self.allow_pickle = source, allow_pickle
        self.dummies: dict = {}
        self.kernels: dict[Any, Any] = {}

    def blob(self, desc: dict) -> bytes:
        data = self.blobs.get(desc["blob"])
        if data is None or len(data) != desc["size"] or hashlib.sha256(data).hexdigest() != desc["sha256"]:
            raise ModelFileError(f"{self.source} is damaged: the data of a compiled kernel does not "
                                 "match its SHA-256 hash")
        return data

    def kernel(self, desc: dict) -> Any:
        from .codegen import (
            Kernel,
            deserialize_expressions,
            kernel_from_lambdify,
            kernel_from_library,
            numpy_kernel,
        )
        first = desc.get("expressions") or desc.get("sympy")
        key = first["blob"] if first else id(desc)
        if key in self.kernels:
            return self.kernels[key]
        nargs, nout, backend, name = desc["nargs"], desc["nout"], desc["backend"], desc["name"]
        if nout == 0:
            k = Kernel(nargs, 0, backend, name, lambda z, out: None, lambda Z: np.empty((len(Z), 0)))
        elif "sympy" in desc:
            if not self.allow_pickle:
                raise ModelFileError(f"{self.source} holds a pickled kernel, which is not loaded from files")
            k = numpy_kernel(nargs, pickle.loads(self.blob(desc["sympy"])), name)
        else:
            exprs_data = self.blob(desc["expressions"])
            lam = None
            if self.use_code and "llvm" in desc:
                code = self.blob(desc["llvm"]["code"])
                # parsed before LLVM maps it: a malformed object aborts the interpreter there
                check_object_code(code, f"{self.source}, kernel {name!r}")
                args = list(_unjson(desc["llvm"]["args"])) + [np.float64, code]
                lam = llvm_loading_func(*args)
            k = None
            if self.use_code and "c" in desc and backend == "c":
                code = self.blob(desc["c"]["code"])
                check_shared_library(code, f"{self.source}, kernel {name!r}")
                try:
                    k = kernel_from_library(nargs, nout, name, code, exprs_data)
                except OSError:        # not loadable here: compiled again from the expressions
                    k = None
            if k is None:
                k = kernel_from_lambdify(nargs, nout, backend, name, lam, exprs_data,
                                         lambda: deserialize_expressions(exprs_data))
        self.kernels[key] = k
        return k

    def __call__(self, v):
        if v is None or isinstance(v, (bool, str)):
            return v
        (tag, val), = v.items()
        simple = {"int": int, "float": float.fromhex, "array": self.arrays.__getitem__,
                  "sympy": lambda d: _decode_symbol(d, self.dummies), "kernel": self.kernel}
        if tag in simple:
            return simple[tag](val)
        if tag == "tuple":
            return tuple(self(x) for x in val)
        if tag == "list":
            return [self(x) for x in val]
        if tag == "slice":
            return slice(*(self(x) for x in val))
        if tag == "dict":
            return {self(k): self(x) for k, x in val}
        if tag == "partition":          # format 1: the model's default partition (derived now)
            return (tuple(val[0]), tuple(val[1]), int(val[2]), int(val[3]))
        raise ModelFileError(f"{self.source}: unknown value tag {tag!r}")


#: format 1 (every attribute of the model by name): the kernel slots and layout fields
_V1_KERNELS = {"main": "_k_main", "velocity": "_k_vel", "acceleration": "_k_acc",
               "extra": "_k_extra", "holonomic": "_k_hol", "auxiliary": "_k_aux"}


def _parts_v1(a: dict) -> CompiledParts:
    """CompiledParts from the decoded attributes of a format-1 file."""
    symbols = ModelSymbols(**{k: tuple(a.get(k, ())) for k in ModelSymbols.__dataclass_fields__})
    layout = KernelLayout(
        n=a["n"], M=a["M"], p=a["p"], m=a["m"], e=a.get("e", 0), s=len(symbols.specifieds),
        c=len(symbols.constants), K=a["_K"], naux=a.get("_naux", 0),
        nnc=len(symbols.noncontributing), main_rhs=a["_s_rhs"], main_system=a["_s_S"],
        dynamic_reduced=a["dynamic_reduced"], augmented=a["_augmented"],
        mass_symmetric=a["_Md_symmetric"], kinematics_use_specifieds=a["_kin_uses_r"],
        velocity_constraints_use_specifieds=a["_vel_uses_r"])
    kernels = ModelKernels(**{slot: a.get(attr) for slot, attr in _V1_KERNELS.items()})
    return CompiledParts(layout, kernels, symbols, a["backend"])


def parts_from_state(header: dict, arrays: dict, blobs: dict, machine_code: bool = True,
                     source: str = "the saved model", allow_pickle: bool = False) -> CompiledParts:
    """The :class:`~.kernel_layout.CompiledParts` from the pieces :func:`parts_state` made
    (hashes and versions checked, machine code parsed before it is mapped:
    :func:`.object_code.check_object_code`); format-1 files are read as well.

    Raises :class:`~symbody.ModelFileError` naming ``source`` and what is wrong.
    """
    use_code = _check_versions(header, machine_code, source)
    dec = _Decoder(arrays, blobs, use_code, source, allow_pickle)
    if header["format"] == "symbody-model-1":
        return _parts_v1({name: dec(value) for name, value in header["attributes"].items()})
    layout = KernelLayout(**{k: dec(v) for k, v in header["layout"].items()})
    symbols = ModelSymbols(**{k: dec(v) for k, v in header["symbols"].items()})
    kernels = ModelKernels(**{k: dec(v) for k, v in header["kernels"].items()})
    contacts = decode_contacts(header.get("contacts"), lambda d: _decode_symbol(d, dec.dummies),
                               dec.blob, source)
    return CompiledParts(layout, kernels, symbols, header["backend"], contacts)


# ----------------------------------------------------------------- files
def file_digest(members: dict[str, np.ndarray]) -> str:
    """SHA-256 over every member of a model archive but the digest itself: per member, in
    the order of the names, its name, dtype, shape and bytes (each framed by its length), so
    that a change anywhere -- the JSON header, an array, a kernel blob, a member added or
    removed -- changes it."""
    from .codegen import frame

    h = hashlib.sha256()
    for name in sorted(members):
        if name == DIGEST_MEMBER:
            continue
        a = np.ascontiguousarray(members[name])
        for part in (name.encode(), a.dtype.str.encode(), repr(a.shape).encode(), a.tobytes()):
            h.update(frame(part))
    return h.hexdigest()


def _npz_bytes(header: dict, arrays: dict, blobs: dict) -> dict[str, np.ndarray]:
    payload = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
    for k, a in arrays.items():
        payload["array_" + k] = a
    for k, b in blobs.items():
        payload["blob_" + k] = np.frombuffer(b, dtype=np.uint8)
    payload[DIGEST_MEMBER] = np.frombuffer(file_digest(payload).encode(), dtype=np.uint8)
    return payload


def _check_digest(members: dict[str, np.ndarray], header: dict, path: Path) -> None:
    """Refuse a file of the current format whose whole-file digest is missing or wrong."""
    if header.get("format") != FORMAT:
        return                         # formats 1 and 2 had SHA-256 sums of the blobs only
    stored = members.get(DIGEST_MEMBER)
    if stored is None:
        raise ModelFileError(f"{path} is damaged: it has no digest (member {DIGEST_MEMBER!r}), "
                             f"which every {FORMAT} file has")
    if stored.dtype != np.uint8 or stored.tobytes().decode("ascii", "replace") != file_digest(members):
        raise ModelFileError(f"{path} is damaged: its SHA-256 digest over the whole file does not "
                             "match (the header, an array or a kernel was changed after the file "
                             "was written)")


def write_parts(parts: CompiledParts, path: str | Path, machine_code: bool = True,
                name: str | None = None) -> Path:
    """Write a compiled model's ``parts`` to ``path`` (``.symbody.npz`` appended unless it
    ends in ``.npz``): ``model.save(path)``.

    The archive holds a JSON header (format, versions, layout, symbols, SHA-256 of each
    blob), the arrays and one blob per kernel (machine code for the ``llvm`` backend,
    symengine-serialized expressions for ``llvm`` and ``lambda``).  ``machine_code=False``
    leaves the machine code out (smaller, portable across platforms; loading compiles).
    Returns the path written.
    """
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".symbody.npz")
    payload = _npz_bytes(*parts_state(parts, name=name, machine_code=machine_code))
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **payload)
    tmp.replace(path)
    return path


def read_parts(path: str | Path, machine_code: bool = True) -> CompiledParts:
    """The parts of a model written by ``model.save(path)`` (``symbody.load_model`` makes
    the model); nothing is compiled (``machine_code=True``).

    Raises :class:`~symbody.ModelFileError` (a :class:`~symbody.SymbodyFileError`, an
    InputError) naming the file and what is wrong: missing, not a symbody model, written by
    other versions of symbody / symengine / Python or on another platform, or damaged (a
    zip member failing its CRC, a blob failing its SHA-256, an attribute that does not
    decode, machine code that is not a well-formed object file for this machine -- parsed
    before it is mapped, so a damaged object is an error, not an interpreter abort).

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
            members = {k: data[k] for k in data.files}
            _check_digest(members, header, path)
            arrays = {k[len("array_"):]: v for k, v in members.items() if k.startswith("array_")}
            blobs = {k[len("blob_"):]: v.tobytes() for k, v in members.items()
                     if k.startswith("blob_")}
    except ModelFileError:
        raise
    except Exception as exc:        # zipfile, zlib, numpy header errors: a damaged archive
        raise ModelFileError(f"{path}: damaged model file ({_describe(exc)})") from None
    try:
        return parts_from_state(header, arrays, blobs, machine_code=machine_code, source=str(path))
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
def pack_parts(parts: CompiledParts, name: str | None = None) -> bytes:
    """The portable state of ``parts`` in one bytes object (``NumericModel.__reduce__``)."""
    buf = io.BytesIO()
    np.savez(buf, **_npz_bytes(*parts_state(parts, name=name, allow_pickle=True)))
    return buf.getvalue()


def unpack_parts(data: bytes) -> CompiledParts:
    """The parts :func:`pack_parts` packed."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        header = json.loads(z["header"].tobytes().decode())
        arrays = {k[len("array_"):]: z[k] for k in z.files if k.startswith("array_")}
        blobs = {k[len("blob_"):]: z[k].tobytes() for k in z.files if k.startswith("blob_")}
    return parts_from_state(header, arrays, blobs, source="the pickled model", allow_pickle=True)


def pack_kernel(kernel: Any) -> dict:
    """The portable state of one kernel (for pickling the functions built on it): its stored
    expressions and, on the same platform and versions, its machine code."""
    enc = _Encoder(allow_pickle=True)
    return {"versions": versions(), "kernel": enc(kernel, f"the kernel {kernel.name!r}"),
            "blobs": enc.blobs}


def unpack_kernel(state: dict) -> Any:
    """The kernel :func:`pack_kernel` packed: its machine code when it was made by the same
    platform and versions (the same numbers to the bit), else compiled again from the stored
    expressions."""
    mine = versions()
    use_code = all(state["versions"].get(key) == mine[key]
                   for key in ("symbody", "symengine", "python", "machine", "platform"))
    return _Decoder({}, state["blobs"], use_code, "the pickled function", True)(state["kernel"])


def pickling_equations() -> bool:
    """True while :func:`dumps` pickles a model with its SymPy equations."""
    return _WITH_EQUATIONS.get()


def dumps(model: Any, equations: bool = False) -> bytes:
    """``pickle.dumps(model)`` of a NumericModel, with its SymPy equations ``model.eom``
    when ``equations``."""
    token = _WITH_EQUATIONS.set(bool(equations))
    try:
        return pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        _WITH_EQUATIONS.reset(token)


def loads(data: bytes) -> Any:
    """``pickle.loads``: only for data you trust (a pickle can run code)."""
    return pickle.loads(data)
