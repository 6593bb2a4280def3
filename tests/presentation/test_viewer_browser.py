"""The 3D viewer page in headless Chromium (Debian's /usr/bin/chromium driven by Playwright).

No browser is downloaded: Playwright's Python package launches the system Chromium with
``executable_path``; the tests skip (with the reason) only when Chromium or Playwright is
absent.  Each page must load with no page errors and no network request, get a WebGL
context, report through ``window.symbody`` the positions of the trajectory at several times,
and show the bodies in its pixels.

With SYMBODY_WRITE_SCREENSHOTS=1 the bicycle and four-bar tests write their screenshots to
docs/images/ (viewer_bicycle.png, viewer_four_bar.png).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
import sympy as sm

import symbody as sb
from symbody.presentation import view
from systems.headless_browser import VIEWPORT, browser_context

REPO = Path(__file__).resolve().parents[2]
BACKGROUND = (0xF3, 0xF5, 0xF8)          # symbody.presentation.viewer.BACKGROUND


@pytest.fixture(scope="module")
def browser():
    with browser_context(VIEWPORT) as context:
        yield context


class OpenPage:
    """A page of the browser with its errors and requests recorded."""

    def __init__(self, context, path: Path):
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = context.new_page()
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.page.on("console", lambda msg: self.errors.append(f"console {msg.type}: {msg.text}")
                     if msg.type in ("error", "warning") else None)
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_function("window.symbody && (window.symbody.ready || window.symbody.error)",
                                    timeout=60_000)

    def js(self, expression: str, arg=None):
        return self.page.evaluate(expression, arg)

    def pixels(self) -> np.ndarray:
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(self.page.screenshot())).convert("RGB")).astype(int)

    def check_clean(self) -> None:
        assert self.js("window.symbody.error") is None
        assert self.errors == []
        assert self.requests == [self.url], "the page made network requests"
        assert self.js("window.symbody.webgl") in ("webgl", "webgl2")


def simulate(model, tf: float, fps: float):
    numeric = sb.compile(model.eom)
    t = np.linspace(0.0, tf, int(round(tf * fps)) + 1)
    sol = sb.simulate(numeric, (0.0, tf), numeric.state_array(model.initial_state),
                      numeric.constants_array(model.constants), t_eval=t)
    assert sol.success
    return sol


def oracle_positions(model, sol, k: int) -> dict[str, np.ndarray]:
    """The drawing's points at sample k by SymPy substitution (independent of the page's numbers)."""
    values = {c: sm.Float(v) for c, v in model.constants.items()}
    values.update({s: sm.Float(v) for s, v in zip(sol.coordinates, sol.q[k], strict=True)})
    return {name: np.array(sm.Matrix(expr).xreplace(values).evalf(), dtype=float).ravel()
            for name, expr in model.drawing.points.items()}


def background_distance(rgb: np.ndarray) -> np.ndarray:
    return np.max(np.abs(rgb - np.array(BACKGROUND)), axis=-1)


def sample(rgb: np.ndarray, xy, half: int = 1) -> np.ndarray:
    """Mean colour of the (2 half + 1)^2 pixels around screen point xy (CSS px = device px here)."""
    x, y = int(round(xy[0])), int(round(xy[1]))
    return rgb[y - half:y + half + 1, x - half:x + half + 1].reshape(-1, 3).mean(axis=0)


def maybe_write_screenshot(page: OpenPage, name: str) -> None:
    if os.environ.get("SYMBODY_WRITE_SCREENSHOTS") == "1":
        target = REPO / "docs" / "images" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        page.page.screenshot(path=str(target))


# --------------------------------------------------------------------------- the bicycle
@pytest.fixture(scope="module")
def bicycle_page(browser, tmp_path_factory):
    model = sb.models.whipple_bicycle()
    sol = simulate(model, 10.0, 60.0)            # the brief's size case: 10 s at 60 samples per second
    page_path = view(sol, model, title="whipple-bicycle").save(tmp_path_factory.mktemp("view") / "bike.html")
    return model, sol, page_path, OpenPage(browser, page_path)


def test_bicycle_page_is_small_and_clean(bicycle_page):
    model, sol, path, page = bicycle_page
    assert len(sol.t) == 601
    assert path.stat().st_size < 2_000_000
    page.check_clean()
    assert page.js("window.symbody.samples") == 601
    assert page.js("window.symbody.names()") == list(model.drawing.points)


def test_bicycle_positions_equal_the_trajectory(bicycle_page):
    model, sol, _, page = bicycle_page
    for k in (0, 137, 360, 600):
        assert page.js("t => window.symbody.setTime(t)", float(sol.t[k])) == pytest.approx(sol.t[k])
        assert page.js("window.symbody.time()") == pytest.approx(sol.t[k])
        expected = oracle_positions(model, sol, k)
        got = page.js("names => names.map(n => window.symbody.position(n))", list(expected))
        # float32 on the page: relative 6e-8 of coordinates up to ~50 m; 2e-5 m covers it
        np.testing.assert_allclose(np.array(got), np.array(list(expected.values())), atol=2e-5,
                                   err_msg=f"t = {sol.t[k]}")
    # between samples the page interpolates linearly
    t_mid = 0.5 * (sol.t[200] + sol.t[201])
    page.js("t => window.symbody.setTime(t)", t_mid)
    a, b = oracle_positions(model, sol, 200), oracle_positions(model, sol, 201)
    got = np.array(page.js("() => window.symbody.position('front_hub')"))
    np.testing.assert_allclose(got, (a["front_hub"] + b["front_hub"]) / 2, atol=2e-5)


def test_bicycle_pixels_show_the_bicycle(bicycle_page):
    model, sol, _, page = bicycle_page
    page.js("t => window.symbody.setTime(t)", 2.0)
    rgb = page.pixels()
    maybe_write_screenshot(page, "viewer_bicycle.png")
    # the tyres (#222222) are drawn along their centre lines (the rim points moved in by the
    # tube radius): dark pixels there
    from symbody.models.whipple_bicycle import TYRE

    centre_line = []
    for wheel, radius in (("rear", 0.3), ("front", 0.35)):
        hub = np.array(page.js("n => window.symbody.position(n)", f"{wheel}_hub"))
        for k in range(0, 16, 2):
            rim = np.array(page.js("n => window.symbody.position(n)", f"{wheel}_rim{k}"))
            centre_line.append(hub + (rim - hub) * (radius - TYRE) / radius)
    screen = page.js("points => points.map(p => window.symbody.project(p))", [p.tolist() for p in centre_line])
    dark = [bool(np.all(sample(rgb, xy) < 110)) for xy in screen]
    assert sum(dark) >= 13, dark      # of 16: a few may hide behind the fork, hub or other wheel
    # the rider (#e07b39, orange) where the frame's mass centre projects
    r, g, b = sample(rgb, page.js("() => window.symbody.screen('frame_cm')"), half=2)
    assert r > 150 and r - b > 60, (r, g, b)
    # and a good share of the view is not background (a blank canvas fails here)
    view_area = rgb[:-45]
    assert np.mean(background_distance(view_area) > 40) > 0.03


def test_controls_play_pause_scrub_speed_follow(bicycle_page):
    _, sol, _, page = bicycle_page
    page.js("() => window.symbody.setTime(1.0)")
    page.page.select_option("#symbody-speed", "2")
    page.page.click("#symbody-play")
    assert page.js("window.symbody.playing()")
    page.page.wait_for_timeout(400)
    page.page.click("#symbody-play")
    assert not page.js("window.symbody.playing()")
    assert page.js("window.symbody.time()") > 1.0 + 1e-3
    page.page.locator("#symbody-slider").fill("7.5")
    assert page.js("window.symbody.time()") == pytest.approx(7.5)
    assert "t = 7.500 s" in page.page.inner_text("#symbody-time")
    page.page.select_option("#symbody-follow", "")
    page.page.select_option("#symbody-follow", "front wheel")
    page.page.check("#symbody-axes")
    page.check_clean()


# --------------------------------------------------------------------------- the four-bar
def test_four_bar_page(browser, tmp_path):
    model = sb.models.four_bar()
    sol = simulate(model, 3.0, 30.0)
    path = view(sol, model, title="four-bar").save(tmp_path / "four_bar.html")
    page = OpenPage(browser, path)
    page.check_clean()
    for k in (0, 45, 90):
        page.js("t => window.symbody.setTime(t)", float(sol.t[k]))
        expected = oracle_positions(model, sol, k)
        got = page.js("names => names.map(n => window.symbody.position(n))", list(expected))
        # float32 of coordinates of a few metres
        np.testing.assert_allclose(np.array(got), np.array(list(expected.values())), atol=2e-6)
    page.js("() => window.symbody.setTime(1.0)")
    rgb = page.pixels()
    maybe_write_screenshot(page, "viewer_four_bar.png")
    for name in ("P2", "P3"):          # the particles are red spheres (#d62728)
        r, g, b = sample(rgb, page.js("n => window.symbody.screen(n)", name))
        assert r > 150 and r - g > 60 and r - b > 60, (name, r, g, b)
    # the middle of link B (#2ca02c, green)
    p2, p3 = (np.array(page.js("n => window.symbody.screen(n)", n)) for n in ("P2", "P3"))
    r, g, b = sample(rgb, (p2 + p3) / 2, half=0)
    assert g > r + 40 and g > b + 20, (r, g, b)
    page.page.close()
