"""The checkpoint file (.jsonl): its key, reading it back, a row cut short."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from ...errors import InputError


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


def _checkpoint_key(cases: list, t_span: Any) -> str:
    text = json.dumps({"t_span": t_span, "cases": [{str(k): v for k, v in c.items()} for c in cases]},
                      sort_keys=True, default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()


def _read_checkpoint(path: str, key: str, n: int) -> dict[int, dict]:
    """Records already in the checkpoint file (case index -> record); {} when it is new."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return {}
    done: dict[int, dict] = {}
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    try:
        header = json.loads(lines[0])
    except (json.JSONDecodeError, IndexError):
        header = None
    if not isinstance(header, dict) or "symbody_sweep" not in header:
        raise InputError(f"checkpoint={path!r} exists and is not a symbody sweep checkpoint; "
                         "remove it or choose another file")
    if header.get("key") != key or header.get("n_cases") != n:
        raise InputError(f"checkpoint={path!r} was written by a sweep with other cases or t_span "
                         f"({header.get('n_cases')} cases); remove it or choose another file")
    for k, line in enumerate(lines[1:], start=2):
        try:
            row = json.loads(line)
            done[int(row["case"])] = row["record"]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            if k == len(lines):           # a row cut short when the sweep was killed: redone
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write("\n".join(lines[:-1]) + "\n")
                continue
            raise InputError(f"checkpoint={path!r}: line {k} is not a sweep row") from None
    return done

