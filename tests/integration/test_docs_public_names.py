"""Every ``sb.<name>`` used by the tutorials, the examples and the Markdown pages is a public
name of the package (``symbody.__all__``): a submodule that only happens to be imported by
an earlier call (``sb.presentation`` after ``sb.plot``) fails when a script runs alone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import symbody

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "docs" / "tutorials").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _sb_attributes(source: str) -> set[str]:
    """The names ``x`` of every ``sb.x`` in ``source`` (Python)."""
    return {node.attr for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "sb"}


def _sources():
    for path in SCRIPTS:
        yield path.relative_to(ROOT).as_posix(), path.read_text()
    for path in PAGES:
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)):
            try:
                ast.parse(block)
            except SyntaxError:           # an indented block inside a list item
                block = "\n".join(line[3:] if line.startswith("   ") else line
                                  for line in block.splitlines())
            yield f"{path.relative_to(ROOT).as_posix()} block {i}", block


SOURCES = list(_sources())


@pytest.mark.parametrize("where, source", SOURCES, ids=[where for where, _ in SOURCES])
def test_sb_names_in_docs_and_scripts_are_public(where, source):
    unknown = _sb_attributes(source) - set(symbody.__all__) - {"__version__"}
    assert not unknown, f"{where} uses sb.{', sb.'.join(sorted(unknown))}, not in symbody.__all__"
