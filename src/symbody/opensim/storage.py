"""OpenSim's table files (``.sto``, ``.mot``): a header ending in ``endheader``, a line of
column labels (the first ``time``), then one row of numbers per time, as OpenSim's
``Storage`` reads them (tabs or spaces between the values)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError

__all__ = ["read_storage"]


def read_storage(path: str | os.PathLike) -> tuple:
    """``(labels, data)``: the column labels (c,) and the values (rows x c) of a ``.sto`` or
    ``.mot`` file.  Raises :class:`~symbody.errors.InputError` naming the file and line of
    a header without ``endheader``, a missing label line or a row of the wrong length."""
    path = os.fspath(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    try:
        end = next(i for i, line in enumerate(lines) if line.strip().lower() == "endheader")
    except StopIteration:
        raise InputError(f"{path}: no 'endheader' line (not an OpenSim .sto/.mot table)") \
            from None
    body = [(i + 1, line) for i, line in enumerate(lines[end + 1:], start=end + 1)
            if line.strip()]
    if not body:
        raise InputError(f"{path}: no column labels after 'endheader'")
    labels = body[0][1].split("\t") if "\t" in body[0][1] else body[0][1].split()
    labels = [x.strip() for x in labels]
    rows = []
    for number, line in body[1:]:
        try:
            values = [float(v) for v in line.split()]
        except ValueError:
            raise InputError(f"{path}, line {number}: not a row of numbers") from None
        if len(values) != len(labels):
            raise InputError(f"{path}, line {number}: {len(values)} values for "
                             f"{len(labels)} columns")
        rows.append(values)
    return labels, np.array(rows, dtype=float).reshape(len(rows), len(labels))
