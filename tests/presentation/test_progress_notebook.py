"""The progress line in a Jupyter notebook: drawn on stderr although stderr is not a TTY."""

from __future__ import annotations

import io
import sys
import types

import symbody.progress as progress


def _fake_kernel(monkeypatch):
    ip = types.SimpleNamespace(config={"IPKernelApp": {}})
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: ip))
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)       # no widgets: the text line


def test_notebook_gets_the_progress_line(monkeypatch):
    monkeypatch.delenv("SYMBODY_QUIET", raising=False)
    err = io.StringIO()                     # a notebook's stderr is not a TTY
    monkeypatch.setattr(sys, "stderr", err)
    assert not progress.in_notebook() and not progress.progress_enabled()
    _fake_kernel(monkeypatch)
    assert progress.in_notebook() and progress.progress_enabled()
    with progress.Progress("compiling", total=4, delay=0, min_interval=0) as bar:
        bar.update(2, "kernel 2 of 4")
    assert "compiling [##########..........]  50%  kernel 2 of 4" in err.getvalue()
    monkeypatch.setenv("SYMBODY_QUIET", "1")
    assert not progress.progress_enabled()
