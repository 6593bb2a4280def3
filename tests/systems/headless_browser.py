"""Debian's Chromium, headless, through Playwright's Python package (no browser download):
the one set-up the viewer's browser tests share.  ``browser_context`` skips the calling test
(with the reason) when Playwright or Chromium is absent."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

VIEWPORT = {"width": 900, "height": 600}


def chromium_path() -> str | None:
    """$SYMBODY_CHROMIUM, /usr/bin/chromium or a chromium on PATH; None without one."""
    for candidate in (os.environ.get("SYMBODY_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@contextmanager
def browser_context(viewport: dict | None = None) -> Iterator:
    """A persistent headless Chromium context (software WebGL), closed and its profile
    removed on exit."""
    playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package "
                                         "is not installed (pip install -e '.[browser]')")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium; .ci/run does this in CI)")
    profile = tempfile.mkdtemp(prefix="symbody-chromium-")
    with playwright_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, viewport=viewport or VIEWPORT,
            args=["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                  "--no-first-run", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-default-apps"])
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)
