"""The README and the guides: printed numbers and pictures come from the code as it is today.

Each block between ``<!-- generated: NAME -->`` markers (in the guides of
``docs/make_images.DOCUMENTS``) is what a ``symbody`` command prints, its figures rounded to
what does not depend on the machine (``docs/make_images.py`` writes them); this test runs the
same commands and fails when a page disagrees by more than the block's tolerance, which
follows from the integration tolerance (docs/guides/reproducibility.md).  Fix a failure by
running ``python docs/make_images.py --numbers`` (and ``python docs/make_images.py`` for the
pictures) and committing the result.  The README's own example runs here too.
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
    shown = make_images.document_blocks()
    assert set(shown) == set(make_images.BLOCKS), "every generated block is in the pages once"
    # as printed: a figure of a loose-tolerance run must lie below the bound the page shows
    computed = make_images.compute_blocks(raw=True)
    for name, text in computed.items():
        difference = make_images.figures_agree(shown[name], text, make_images.TOLERANCES[name])
        assert difference is None, (
            f"README block {name!r} differs from what `symbody {' '.join(make_images.BLOCKS[name])}` "
            f"prints today ({difference}); run `python docs/make_images.py --numbers`.\n"
            f"README:\n{shown[name]}\ntoday:\n{text}")


def test_figures_agree_to_the_integration_tolerance():
    """Figures of a run at a tight tolerance agree to 100 rtol relative; those of a run at the
    book's loose tolerance are shown as bounds, which hold on another CPU (energy drift 0.69 J,
    not 0.94 J; loop opening 0.0935 m, not 0.089 m, at rtol = 1e-3); a figure off by more than
    the tolerance, a figure above its bound, a changed word or a round-off bound that no
    longer holds fails."""
    make_images = _make_images()
    rtol = make_images.TOLERANCES["demo-summary"]
    line = ("constraints='none', rtol=0.001      0.089     0.94   1094\n"
            "constraints='auto', rtol=1e-06   8.88e-16  0.00015   5528\n"
            "Energy drift: 0.94 J at rtol=0.001, 0.00015 J at rtol=1e-06.\n")
    here = make_images.machine_independent("demo-summary", line)
    assert here == ("constraints='none', rtol=0.001       <0.2       <2   1094\n"
                    "constraints='auto', rtol=1e-06     <1e-12  0.00015   5528\n"
                    "Energy drift: <2 J at rtol=0.001, 0.00015 J at rtol=1e-06.\n")
    there = line.replace("0.089", "0.0935").replace("0.94", "0.69").replace("1094", "1101") \
        .replace("8.88e-16", "1.33e-15").replace("0.00015", "0.000152")
    assert make_images.figures_agree(here, there, rtol) is None
    assert make_images.figures_agree(here, make_images.machine_independent("demo-summary", there),
                                     rtol) is None
    for wrong in (there.replace("0.69", "2.1"),                 # above its bound
                  there.replace("0.000152", "0.00025"),         # a tight figure off by 40 %
                  there.replace("1.33e-15", "3e-09"),           # no longer round-off
                  there.replace("Energy", "Power"),            # a changed word
                  there.replace("5528", "7000")):               # a count off by 27 %
        assert make_images.figures_agree(here, wrong, rtol) is not None, wrong
    # the linearization is exact to round-off: a change of two units in the sixth digit fails
    assert make_images.figures_agree("-0.775342+4.46487j", "-0.775342+4.46487j", 1e-9) is None
    assert make_images.figures_agree("-0.775342+4.46487j", "-0.775344+4.46487j", 1e-9)
    assert make_images.figures_agree("-0.775342+4.46487j", "-0.775342+4.46485j", 1e-9)


def test_readme_pictures_and_links_exist():
    make_images = _make_images()
    for document in make_images.DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        pictures = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
        assert pictures, f"{document.name} shows pictures"
        for path in pictures:
            assert (document.parent / path).is_file(), f"{document.name} shows {path}, which is missing"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)\)", readme):
        assert (ROOT / link).is_file(), f"the README links to {link}, which does not exist"


def test_readme_is_a_landing_page():
    """Under 8 kB, the two commands first, an install section, the limitations listed."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) < 8000
    first_block = re.search(r"```\n(.*?)```", readme, re.S).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in first_block] == ["make demo", "make test"]
    for heading in ("## Install", "## Limitations"):
        assert heading in readme
    for extra in ("[sweep]", "[browser]", "[docs]", "[bench]"):
        assert f'pip install -e ".{extra}"' in readme


def test_readme_example_runs(tmp_path, monkeypatch):
    """The README's example (shortened to 3 s) keeps the loop closed and writes its files."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    assert "(0, 30)" in code
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code.replace("(0, 30)", "(0, 3)"), "README.md", "exec"), namespace)
    assert namespace["sol"].max_holonomic_residual < 1e-10
    assert (tmp_path / "four_bar.png").stat().st_size > 0
    assert (tmp_path / "four_bar.html").stat().st_size > 0
    assert namespace["A"].shape == (2, 2)                  # one degree of freedom: [q1, u1]


def test_block_replacement_round_trip():
    """with_blocks replaces exactly the marked blocks (what --numbers writes is what is read)."""
    make_images = _make_images()
    text = ("intro\n<!-- generated: list (x) -->\n```\nold\n```\n<!-- end generated: list -->\n"
            "```\nuntouched\n```\n")
    new = make_images.with_blocks(text, {"list": "new line\n"})
    assert make_images.readme_blocks(new) == {"list": "new line\n"}
    assert new.endswith("```\nuntouched\n```\n") and new.startswith("intro\n")
