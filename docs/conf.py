"""Sphinx configuration of the symbody documentation (``make docs``).

The tutorials in ``docs/tutorials/`` are sphinx-gallery scripts: every one is executed on
each build and a failing tutorial fails the build.  Markdown pages (``.md``) are read
with myst-parser.  The API reference is generated from the docstrings (autosummary).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SYMBODY_QUIET", "1")

import symbody  # noqa: E402

project = "symbody"
author = "the symbody developers"
copyright = "the symbody developers, BSD-3-Clause"
release = version = getattr(symbody, "__version__", "0.1.0")

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "images/README*", "tutorials/GALLERY_HEADER.rst",
                    "generated/tutorials/*.ipynb", "**.ipynb_checkpoints"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

html_theme = "alabaster"
html_title = "symbody"
html_theme_options = {"description": "Multibody dynamics: Kane and Lagrange, compiled, drift-free",
                      "fixed_sidebar": True, "page_width": "1100px"}
html_static_path: list[str] = []

autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

# Pages other parts of the project write (the design map, the testing guide) are linked
# when they exist: generated/project.md holds their toctree.
_PROJECT_PAGES = [("design", "Design: layers, the canonical form, strategies"),
                  ("testing", "Testing: oracles, invariants, mutation testing"),
                  ("testing_log", "Testing log: planted bugs and mutation runs")]
(ROOT / "docs" / "generated").mkdir(exist_ok=True)
_present = [name for name, _ in _PROJECT_PAGES if (ROOT / "docs" / f"{name}.md").is_file()]
_project_page = ["# The project", "",
                 "How symbody is built and how it is checked; the source is on the project's "
                 "repository, with `README.md` for the command line and `benchmarks/RESULTS.md` "
                 "for the measured speed.", ""]
if _present:
    _project_page += ["```{toctree}", ":maxdepth: 2", "", *[f"/{name}" for name in _present], "```", ""]
_text = "\n".join(_project_page)
_path = ROOT / "docs" / "generated" / "project.md"
if not _path.is_file() or _path.read_text(encoding="utf-8") != _text:
    _path.write_text(_text, encoding="utf-8")

sphinx_gallery_conf = {
    "examples_dirs": ["tutorials"],
    "gallery_dirs": ["generated/tutorials"],
    "filename_pattern": r"/tutorial_",       # every tutorial is executed
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "capture_repr": ("_repr_html_", "__repr__"),
    "abort_on_example_error": False,           # run them all, then fail listing every error
    "only_warn_on_example_error": False,
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "plot_gallery": "True",
}


class _DocstringWarningsAsInfo(logging.Filter):
    """Formatting slips inside library docstrings are reported, not fatal.

    The build runs with -W: warnings in the tutorials and the site's own pages (broken
    references, markup errors, failing examples) fail it; warnings located in a docstring
    or in a linked project page (design.md, testing.md; written across the code base) are
    printed as "docstring warning:" lines so that one odd docstring does not take the site
    down.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        location = getattr(record, "location", None)
        if hasattr(location, "source") or hasattr(location, "parent"):   # a docutils node
            from docutils.utils import get_source_line

            location = "{}:{}".format(*get_source_line(location))
        if isinstance(location, tuple):                                   # (docname, line)
            location = ":".join(str(part) for part in location if part is not None)
        where = str(location or "")
        page = where.split(":")[0]
        linked_page = any(page.endswith((f"{name}.md", name)) for name, _ in _PROJECT_PAGES)
        if "docstring of" not in where and not linked_page:
            return True
        try:
            message = record.msg % record.args if record.args else record.msg
        except (TypeError, ValueError):
            message = record.msg
        print(f"docstring warning: {where}: {message}", file=sys.stderr)
        return False


def setup(app) -> None:
    from sphinx.util.logging import NAMESPACE, WarningStreamHandler

    for handler in logging.getLogger(NAMESPACE).handlers:
        if isinstance(handler, WarningStreamHandler):
            handler.filters.insert(0, _DocstringWarningsAsInfo())
