"""3D viewer: page size and page load to first frame for the Whipple bicycle, beside PyDy's scene.

The bicycle is simulated for 10 s and sampled at 60 per second (601 samples).

* symbody: ``symbody.view(trajectory, model.scene).save(...)``: one HTML file; load to first
  frame is ``window.symbody.firstFrameMs`` (performance.now() when the first frame has been
  rendered, measured from navigation start), opened from file://.
* PyDy (anchor, same run): ``pydy.viz.Scene`` with the same shapes on the same frames
  (symbody's Segments have no PyDy counterpart and are left out, which favours PyDy),
  ``create_static_html()``; PyDy's page fetches its JSON files with XHR, so it is served
  by a local http.server (127.0.0.1, no outside network).  Its first frame is when the
  simulation data are loaded and the scene is set to the start time
  (``DynamicsVisualizer.Scene.setAnimationTime`` has returned; detected by polling every
  animation frame).  Size: the bytes the page downloads, and the directory PyDy writes.

Both in headless Debian Chromium with SwiftShader (software WebGL), median of ``--repeat``
fresh page loads.  Usage::

    python benchmarks/bench_viewer.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

import symbody as sb

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def bicycle_trajectory():
    model = sb.models.whipple_bicycle()
    numeric = sb.compile(model.eom)
    t = np.linspace(0.0, 10.0, 601)
    sol = sb.simulate(numeric, (0.0, 10.0), numeric.state_array(model.initial_state),
                      numeric.constants_array(model.constants), t_eval=t)
    assert sol.success, sol.message
    return model, sol


def pydy_scene(model, sol):
    """PyDy's Scene with symbody's frame-attached shapes (Segments have no PyDy counterpart)."""
    from pydy.viz import Scene as PyDyScene
    from pydy.viz import VisualizationFrame as PyDyFrame
    from pydy.viz import shapes
    from sympy.physics.vector import Point

    from symbody.presentation.scene import Segment

    scene = model.scene
    N = scene.reference_frame
    origin = Point("O")
    frames = []
    for item in scene.visualization_frames:
        if isinstance(item, Segment):
            continue
        xyz = scene.points[item.point] if isinstance(item.point, str) else item.point
        point = origin.locatenew(item.name.replace(" ", "_"), xyz[0] * N.x + xyz[1] * N.y + xyz[2] * N.z)
        sizes = {k: float(v.xreplace(model.constants)) if hasattr(v, "xreplace") else v
                 for k, v in item.shape.sizes().items()}
        kind = item.shape.kind
        if kind == "torus":
            shape = shapes.Torus(radius=sizes["radius"], tube_radius=sizes["tube_radius"])
        elif kind == "cylinder":
            shape = shapes.Cylinder(length=sizes["length"], radius=sizes["radius"])
        elif kind == "sphere":
            shape = shapes.Sphere(radius=sizes["radius"])
        else:
            raise ValueError(kind)
        frames.append(PyDyFrame(item.name, item.frame or N, point, shape))
    return PyDyScene(N, origin, *frames, times=sol.t, states_symbols=list(sol.coordinates),
                     states_trajectories=sol.q, constants=dict(model.constants)), len(frames)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def directory_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    model, sol = bicycle_trajectory()
    work = Path(tempfile.mkdtemp(prefix="symbody-bench-viewer-"))
    start = time.perf_counter()
    page_obj = sb.view(sol, model)
    html_path = page_obj.save(work / "bike.html")
    build_s = time.perf_counter() - start
    html_size = html_path.stat().st_size

    pydy_ok, pydy_note = True, ""
    try:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pscene, n_pydy = pydy_scene(model, sol)
            cwd = os.getcwd()
            os.chdir(work)
            try:
                pscene.create_static_html(overwrite=True, silent=True, prefix="bike")
            finally:
                os.chdir(cwd)
        pydy_build_s = time.perf_counter() - start
        pydy_dir = work / pscene.pydy_directory
        pydy_json = sum((pydy_dir / f).stat().st_size for f in (pscene._scene_json_file,
                                                                 pscene._simulation_json_file))
    except Exception as exc:  # report, do not hide
        pydy_ok, pydy_note = False, f"PyDy's scene could not be produced: {type(exc).__name__}: {exc}"

    results = {"symbody": [], "pydy": []}
    pydy_bytes: list[int] = []
    pydy_external: set[str] = set()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)

        def fresh_page():      # a new context each time: empty cache, as a first visit
            return browser.new_context(viewport={"width": 900, "height": 600}).new_page()

        fresh_page().goto("about:blank")   # start the GPU process before timing
        for _ in range(args.repeat):
            page = fresh_page()
            page.goto(html_path.as_uri())
            page.wait_for_function("window.symbody && window.symbody.ready", timeout=120_000)
            results["symbody"].append(page.evaluate("window.symbody.firstFrameMs"))
            page.close()
        if pydy_ok:
            handler = functools.partial(QuietHandler, directory=str(pydy_dir))
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            url = f"http://127.0.0.1:{server.server_port}/index.html?load={pscene._scene_json_file}"
            try:
                for _ in range(args.repeat):
                    page = fresh_page()
                    loaded = []
                    page.on("response", lambda r, loaded=loaded: loaded.append(r))
                    page.on("request", lambda r: pydy_external.add(r.url)
                            if not r.url.startswith("http://127.0.0.1") else None)
                    page.add_init_script("""
                        window.__firstFrame = null;
                        const hook = () => {
                          const dv = window.DynamicsVisualizer;
                          if (dv && dv.Scene && dv.Scene.setAnimationTime && !dv.Scene.__hooked) {
                            const original = dv.Scene.setAnimationTime;
                            dv.Scene.setAnimationTime = function () {
                              const out = original.apply(this, arguments);
                              if (window.__firstFrame === null) window.__firstFrame = performance.now();
                              return out;
                            };
                            dv.Scene.__hooked = true;
                          }
                          if (window.__firstFrame === null) requestAnimationFrame(hook);
                        };
                        requestAnimationFrame(hook);""")
                    page.goto(url)
                    try:
                        page.wait_for_function("window.__firstFrame !== null", timeout=120_000)
                        results["pydy"].append(page.evaluate("window.__firstFrame"))
                    except Exception as exc:
                        pydy_ok, pydy_note = False, f"PyDy's page did not reach its first frame: {exc}"
                        page.close()
                        break
                    page.wait_for_timeout(200)
                    total = 0
                    for response in loaded:
                        try:
                            total += len(response.body())
                        except Exception:
                            pass
                    pydy_bytes.append(total)
                    page.close()
            finally:
                server.shutdown()
        browser.close()

    print("Whipple bicycle, 10 s at 60 samples per second (601 samples), headless Chromium + SwiftShader")
    print(f"{'':28}{'load to first frame [ms]':>26}{'page size [MB]':>17}")
    sym_ms = statistics.median(results["symbody"])
    print(f"{'symbody.view (1 file)':28}{sym_ms:>26.0f}{html_size / 1e6:>17.2f}")
    if pydy_ok and results["pydy"]:
        py_ms = statistics.median(results["pydy"])
        print(f"{'PyDy Scene (http server)':28}{py_ms:>26.0f}{statistics.median(pydy_bytes) / 1e6:>17.2f}"
              f"   (downloaded; directory {directory_size(pydy_dir) / 1e6:.1f} MB, "
              f"JSON {pydy_json / 1e6:.2f} MB, {n_pydy} shapes)")
        print(f"ratio PyDy / symbody: load {py_ms / sym_ms:.2f}x, bytes "
              f"{statistics.median(pydy_bytes) / html_size:.2f}x")
        if pydy_external:
            print(f"PyDy's page asked for outside resources: {sorted(pydy_external)}")
        print(f"build: symbody.view + save {build_s:.2f} s, PyDy create_static_html {pydy_build_s:.2f} s")
    else:
        print(pydy_note)
        print(f"build: symbody.view + save {build_s:.2f} s")
    print(f"symbody samples of load to first frame [ms]: {[round(v) for v in results['symbody']]}")
    if results["pydy"]:
        print(f"PyDy samples of load to first frame [ms]: {[round(v) for v in results['pydy']]}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
