"""The README's printed numbers and pictures come from the code as it is today.

Each block between ``<!-- generated: NAME -->`` markers is what a ``symbody`` command prints
(``docs/make_images.py`` writes them); this test runs the same commands and fails when the
README disagrees.  Fix a failure by running ``python docs/make_images.py --numbers``
(and ``python docs/make_images.py`` for the pictures) and committing the result.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _make_images():
    spec = importlib.util.spec_from_file_location("make_images", ROOT / "docs" / "make_images.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_numbers_are_what_the_code_prints():
    make_images = _make_images()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = make_images.readme_blocks(readme)
    assert set(shown) == set(make_images.BLOCKS), "every generated block is in the README once"
    computed = make_images.compute_blocks()
    for name, text in computed.items():
        assert shown[name] == text, (
            f"README block {name!r} differs from what `symbody {' '.join(make_images.BLOCKS[name])}` "
            f"prints today; run `python docs/make_images.py --numbers`.\nREADME:\n{shown[name]}\n"
            f"today:\n{text}")


def test_readme_pictures_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", readme)
    assert pictures, "the README shows pictures"
    for path in pictures:
        assert (ROOT / path).is_file(), f"README shows {path}, which docs/make_images.py did not write"


def test_block_replacement_round_trip():
    """with_blocks replaces exactly the marked blocks (what --numbers writes is what is read)."""
    make_images = _make_images()
    text = ("intro\n<!-- generated: list (x) -->\n```\nold\n```\n<!-- end generated: list -->\n"
            "```\nuntouched\n```\n")
    new = make_images.with_blocks(text, {"list": "new line\n"})
    assert make_images.readme_blocks(new) == {"list": "new line\n"}
    assert new.endswith("```\nuntouched\n```\n") and new.startswith("intro\n")
