"""Masses and inertias checked against the constants of a run: the check lives in
:mod:`symbody.compilation.body_check` (below the analyses and the exporters, which both
check the constants they are given)."""

from __future__ import annotations

from ..compilation.body_check import check_body_inertias

__all__ = ["check_body_inertias"]
