"""Viewer pages of URDF robots with their meshes: weight and build time, and the browser's load time.

For each robot (example-robot-data, free-flyer base for the legged robots and humanoids):
``symbody.load_urdf`` (the anchor: the time to form the equations), ``scene_from_urdf``
(visuals -> Scene), ``symbody.view`` over a 2-sample trajectory at the zero pose (scene
expressions compiled, mesh files read and compressed) and the page's size against the
mesh files' raw bytes; with --browser also the time Chromium takes to load the page until
``window.symbody.ready`` (inflating and parsing every mesh).

    python benchmarks/bench_robot_pages.py                        # the default set
    python benchmarks/bench_robot_pages.py --match talos --browser

Times are wall-clock on whatever the machine is doing: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "robots"))  # robots_folder()

DEFAULT = ["so_arm_description/urdf/so100.urdf", "panda_description/urdf/panda.urdf",
           "talos_data/robots/talos_reduced.urdf", "talos_data/robots/talos_full_v2.urdf",
           "romeo_description/urdf/romeo_small.urdf"]
FLOATING = ("talos", "romeo", "solo", "anymal", "go1", "go2", "a1", "b1", "g1", "icub")


def page_load_ms(path: Path) -> float | None:
    """Milliseconds from navigation to window.symbody.ready in headless Chromium (None if absent)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).exists():
        return None
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=executable, headless=True,
                args=["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"])
            page = context.new_page()
            start = time.perf_counter()
            page.goto(path.resolve().as_uri())
            page.wait_for_function("window.symbody && (window.symbody.ready || window.symbody.error)",
                                   timeout=600_000)
            elapsed = (time.perf_counter() - start) * 1e3
            assert page.evaluate("window.symbody.error") is None
            assert page.evaluate("window.symbody.meshErrors") == []
            context.close()
            return elapsed
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    from visuals_fk import robots_folder

    import symbody as sb
    from symbody.robots.visuals import scene_from_urdf

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--match", default=None, help="only robot files whose path contains this")
    parser.add_argument("--browser", action="store_true", help="also time the page's load in Chromium")
    args = parser.parse_args()
    robots = robots_folder()
    if robots is None:
        sys.exit("example-robot-data is not installed")
    files = [f for f in DEFAULT if args.match is None or args.match in f]
    rows = []
    out_dir = Path(tempfile.mkdtemp(prefix="robot-pages-"))
    for rel in files:
        urdf = robots / rel
        floating = any(rel.startswith(prefix) for prefix in FLOATING)
        start = time.perf_counter()
        robot = sb.load_urdf(urdf, floating_base=floating)
        frames, points = robot.link_frames, robot.link_points
        t_load = time.perf_counter() - start
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scene = scene_from_urdf(urdf, frames, points, robot.world_frame, robot.world_origin)
        t_scene = time.perf_counter() - start
        x0 = robot.default_state()
        n = len(robot.coordinates)
        traj = SimpleNamespace(t=np.array([0.0, 1.0]), q=np.tile(x0[:n], (2, 1)), u=np.zeros((2, 0)),
                               coordinates=tuple(robot.coordinates), speeds=(), constants=dict(robot.constants))
        start = time.perf_counter()
        page = sb.view(traj, scene)
        path = page.save(out_dir / f"{urdf.stem}.html")
        t_view = time.perf_counter() - start
        meshes = page.data["meshes"]
        raw = sum(m["size"] for m in meshes)
        uses = sum(1 for f in page.data["frames"] if f["kind"] == "mesh")
        row = {"robot": rel.split("/")[-1], "base": "floating" if floating else "fixed",
               "links": len(frames), "visuals": len(scene.visualization_frames), "mesh uses": uses,
               "mesh files": len(meshes), "raw MB": raw / 1e6, "page MB": path.stat().st_size / 1e6,
               "load_urdf s": t_load, "scene s": t_scene, "view s": t_view, "warnings": len(caught)}
        if args.browser:
            ms = page_load_ms(path)
            row["browser load s"] = None if ms is None else ms / 1e3
        rows.append(row)
        print({k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    keys = list(rows[0])
    print("\n| " + " | ".join(keys) + " | scene / load_urdf | view / load_urdf |")
    print("|" + "---|" * (len(keys) + 2))
    for row in rows:
        cells = [f"{row[k]:.2f}" if isinstance(row[k], float) else str(row[k]) for k in keys]
        print("| " + " | ".join(cells) + f" | {row['scene s'] / row['load_urdf s']:.2f} | "
              f"{row['view s'] / row['load_urdf s']:.2f} |")
    shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
