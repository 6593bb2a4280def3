"""The contact records of a compiled model in a saved file (and a pickle).

A :class:`~symbody.formulation.contact_record.ContactRecord` is a name, a friction mode and
SymPy expressions.  In the file's JSON header each record is its name, mode, switching
function names and, for every expression field, an index into one blob of expressions in
symengine's own binary serialization (read back by symengine's C++ deserializer: nothing
in the file is evaluated as Python), written over placeholder symbols ``_c0, _c1, ...``
that the header lists as the atoms they stand for (symbols, functions of time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy as sm

from ..errors import ModelFileError
from ..formulation.contact_record import ContactRecord
from .codegen import deserialize_expressions, serialize_expressions

__all__ = ["encode_contacts", "decode_contacts"]


def _atoms(records: Sequence[ContactRecord]) -> list:
    found: set = set()
    for rec in records:
        found |= rec.atoms()
    return sorted(found, key=lambda a: (isinstance(a, sm.Symbol), str(a)))


def encode_contacts(records: Sequence[ContactRecord], encode_atom: Callable[[Any, str], Any],
                    blob: Callable[[bytes], dict]) -> dict | None:
    """The header entry of ``records`` (None when there are none); ``encode_atom(atom, where)``
    and ``blob(data)`` are the file encoder's."""
    import symengine as se

    if not records:
        return None
    atoms = _atoms(records)
    stand_in = {a: sm.Symbol(f"_c{i}") for i, a in enumerate(atoms)}
    exprs: list = []
    entries = []
    for rec in records:
        fields: dict[str, Any] = {}
        for key, value in rec.expressions().items():
            if value is None:
                fields[key] = None
                continue
            values = value if isinstance(value, tuple) else (value,)
            idx = []
            for e in values:
                idx.append(len(exprs))
                exprs.append(se.sympify(sm.sympify(e).xreplace(stand_in)))
            fields[key] = idx if isinstance(value, tuple) else idx[0]
        entries.append({"name": rec.name, "friction_mode": rec.friction_mode,
                        "switching": [n for n, _ in rec.switching], "fields": fields})
    return {"atoms": [encode_atom(a, "a contact record") for a in atoms],
            "expressions": blob(serialize_expressions(exprs)), "records": entries}


def decode_contacts(entry: dict | None, decode_atom: Callable[[Any], Any],
                    blob: Callable[[dict], bytes], source: str) -> tuple[ContactRecord, ...]:
    """The records of a header entry :func:`encode_contacts` made."""
    if not entry:
        return ()
    try:
        atoms = [decode_atom(a) for a in entry["atoms"]]
        back = {sm.Symbol(f"_c{i}"): a for i, a in enumerate(atoms)}
        exprs = [e._sympy_().xreplace(back) for e in deserialize_expressions(blob(entry["expressions"]))]
        out = []
        for rec in entry["records"]:
            fields = rec["fields"]

            def value(key: str, fields: dict = fields) -> Any:
                idx = fields.get(key)
                if idx is None:
                    return None
                return tuple(exprs[i] for i in idx) if isinstance(idx, list) else exprs[idx]

            kwargs = {k: value(k) for k in ContactRecord.SCALARS}
            kwargs.update({k: value(k) or () for k in ContactRecord.TUPLES})
            switching = tuple(zip(rec["switching"], value("switching") or ()))
            out.append(ContactRecord(name=rec["name"], friction_mode=rec["friction_mode"],
                                     switching=switching, **kwargs))
        return tuple(out)
    except ModelFileError:
        raise
    except Exception as exc:        # a damaged entry
        raise ModelFileError(f"{source}: the contact records do not decode ({type(exc).__name__}: "
                             f"{exc})") from None
