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
        difference = make_images.figures_agree(shown[name], text, make_images.TOLERANCES[name])
        assert difference is None, (
            f"README block {name!r} differs from what `symbody {' '.join(make_images.BLOCKS[name])}` "
            f"prints today ({difference}); run `python docs/make_images.py --numbers`.\n"
            f"README:\n{shown[name]}\ntoday:\n{text}")


def test_figures_agree_to_the_integration_tolerance():
    """The other CPU's demo (loop opening 0.0935 m, not 0.089 m, at rtol = 1e-3) passes; a
    figure off by more than the tolerance, a changed word or a round-off bound that no longer
    holds fails."""
    make_images = _make_images()
    rtol = make_images.TOLERANCES["demo-summary"]
    here = make_images.machine_independent(
        "demo-summary", "max |f_h| 0.089 energy 0.51 calls 1094 closed to 8.88e-16 m\n")
    assert here == "max |f_h| 0.089 energy 0.51 calls 1094 closed to <1e-12 m\n"
    there = make_images.machine_independent(
        "demo-summary", "max |f_h| 0.0935 energy 0.49 calls 1101 closed to 1.33e-15 m\n")
    assert make_images.figures_agree(here, there, rtol) is None
    for wrong in ("max |f_h| 0.12 energy 0.51 calls 1094 closed to   <1e-12 m\n",
                  "max |f_h| 0.089 energy 0.51 calls 1094 closed to    3e-09 m\n",
                  "max |f_x| 0.089 energy 0.51 calls 1094 closed to   <1e-12 m\n",
                  "max |f_h| 0.089 energy 0.51 calls 1500 closed to   <1e-12 m\n"):
        assert make_images.figures_agree(here, wrong, rtol) is not None, wrong
    # the linearization is exact to round-off: a change of two units in the sixth digit fails
    assert make_images.figures_agree("-0.775342+4.46487j", "-0.775342+4.46487j", 1e-9) is None
    assert make_images.figures_agree("-0.775342+4.46487j", "-0.775344+4.46487j", 1e-9)
    assert make_images.figures_agree("-0.775342+4.46487j", "-0.775342+4.46485j", 1e-9)


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
