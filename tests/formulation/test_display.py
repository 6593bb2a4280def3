"""Jupyter display of EquationsOfMotion: equations when small, a bounded summary when large."""

from __future__ import annotations

import sympy as sm

import symbody
from symbody.formulation import _display


def test_small_system_displays_its_equations():
    eom = symbody.models.four_bar().eom
    text = eom._repr_latex_()
    assert text.startswith("$\\displaystyle") and "=" in text
    # every printed block appears: kinematic, dynamic (mass matrix times u'), holonomic
    assert "\\dot" in text and "\\left[" in text
    assert eom._repr_html_() is None and eom._repr_markdown_() is None   # Jupyter shows the LaTeX


def test_bicycle_display_is_a_bounded_summary():
    """The Whipple bicycle's blocks have about 1.5 million tree nodes (printing them took
    110 s and 10 MB): every display format is a summary under 200 kB."""
    eom = symbody.models.whipple_bicycle().eom
    assert not _display.is_small(eom)
    outputs = [eom._repr_latex_(), eom._repr_html_(), eom._repr_markdown_()]
    for out in outputs:
        assert out is not None and len(out.encode()) < 200_000
    html = outputs[1]
    assert "mass matrix" in html and "6 &times; 6" in html
    sizes = {row[0]: row for row in _display.block_sizes(eom)}
    assert sizes["mass matrix"][2] == (6, 6) and sizes["dynamic rest"][2] == (6, 1)
    assert f"{sizes['dynamic rest'][4]:,}" in outputs[2]


def test_tree_size_counts_shared_subtrees_at_every_use():
    x = sm.Symbol("x")
    e = sm.sin(x) + 1
    f = sm.Mul(e, sm.Add(e, 2, evaluate=False), evaluate=False)
    # e = Add(1, sin(x)) has 4 nodes, Add(e, 2) 6, Mul 1 + 4 + 6
    assert _display.tree_size([e]) == 4
    assert _display.tree_size([f]) == 11
    assert _display.tree_size([f], cap=5) == 5
