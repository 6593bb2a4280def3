"""URDF robots in the viewer page, in headless Chromium (Debian's /usr/bin/chromium, Playwright).

The page inflates the embedded mesh files and parses them with three.js's loaders; its
``window.symbody.meshBounds(name)`` reports the drawn vertices of a visualization frame (count
and bounding box in the world frame), compared here with the mesh files read in Python and
placed by a numpy forward kinematics.  Skipped (with the reason) without Chromium or Playwright.
"""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from visuals_fk import forward_kinematics, numeric_link_poses, robots_folder

from symbody.presentation import Mesh, view
from symbody.robots.visuals import MeshFileWarning, read_visuals, scene_from_urdf
from systems.headless_browser import browser_context

ROBOTS = robots_folder()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


@pytest.fixture(scope="module")
def browser():
    with browser_context() as context:
        yield context


def open_page(context, path: Path):
    """The loaded page, its console errors/warnings and page errors, and its requests."""
    errors: list[str] = []
    requests: list[str] = []
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}")
            if msg.type in ("error", "warning") else None)
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.resolve().as_uri())
    page.wait_for_function("window.symbody && (window.symbody.ready || window.symbody.error)", timeout=120_000)
    assert page.evaluate("window.symbody.error") is None
    assert requests == [path.resolve().as_uri()], "the page made network requests"
    return page, errors


# ----------------------------------------------------------------------------- oracles
def stl_triangles(path: Path) -> np.ndarray:
    """Triangles (n, 3, 3) of a binary or ASCII STL file."""
    raw = path.read_bytes()
    if len(raw) >= 84:
        n = int.from_bytes(raw[80:84], "little")
        if len(raw) == 84 + 50 * n:
            records = np.frombuffer(raw[84:], dtype=np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)),
                                                               ("attr", "<u2")]), count=n)
            return records["v"].astype(float)
    vertices = re.findall(rb"vertex\s+(\S+)\s+(\S+)\s+(\S+)", raw)
    return np.array(vertices, dtype=float).reshape(-1, 3, 3)


def placed(vertices: np.ndarray, p: np.ndarray, R: np.ndarray, scale) -> np.ndarray:
    return p + (np.asarray(vertices).reshape(-1, 3) * np.asarray(scale)) @ R.T


def check_bounds(page, name: str, expected: np.ndarray, count: int) -> None:
    got = page.evaluate("n => window.symbody.meshBounds(n)", name)
    assert got["vertices"] == count, name
    # float32 on the page (vertices and poses): 2e-6 m on a robot of ~1 m
    np.testing.assert_allclose(got["min"], expected.min(axis=0), atol=2e-6, err_msg=name)
    np.testing.assert_allclose(got["max"], expected.max(axis=0), atol=2e-6, err_msg=name)


def trajectory(qs, q: np.ndarray):
    return SimpleNamespace(t=np.arange(len(q), dtype=float), q=q, u=np.zeros((len(q), 0)),
                           coordinates=tuple(qs), speeds=(), constants={})


# ----------------------------------------------------------------------------- a real robot
def test_so100_page_draws_every_stl_where_the_kinematics_puts_it(browser, tmp_path):
    urdf = ROBOTS / "so_arm_description" / "urdf" / "so100.urdf"
    N, O, frames, points, qs = forward_kinematics(urdf)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MeshFileWarning)
        scene = scene_from_urdf(urdf, frames, points, N, O)
    q = np.random.default_rng(3).uniform(-1, 1, size=(2, len(qs)))
    path = view(trajectory(qs, q), scene).save(tmp_path / "so100.html")
    page, errors = open_page(browser, path)
    assert errors == []
    assert page.evaluate("window.symbody.meshErrors") == []
    robot = read_visuals(urdf)
    for k in range(2):
        page.evaluate("t => window.symbody.setTime(t)", float(k))
        poses = numeric_link_poses(urdf, dict(zip((str(s.func)[2:] for s in qs), q[k], strict=True)))
        for vf in scene.visualization_frames:
            link, _, number = vf.name.partition("#")
            visual = robot.visuals[link][int(number or 1) - 1]
            p, R = poses[link]
            R_visual = R @ Rotation.from_euler("xyz", visual.rpy).as_matrix()
            triangles = stl_triangles(vf.shape.filename)
            check_bounds(page, vf.name, placed(triangles, p + R @ visual.xyz, R_visual, vf.shape.scale),
                         3 * len(triangles))


# ----------------------------------------------------------------------------- every format
OBJ = """# a unit cube's corners, 6 quads
v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1
f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8
"""


@pytest.mark.slow      # 16-27 s on 2 busy cores: a C compilation, Chromium parsing three formats
def test_stl_obj_collada_scales_origins_and_a_broken_file(browser, tmp_path):
    hector = ROBOTS / "hector_description" / "meshes" / "quadrotor"
    so100 = ROBOTS / "so_arm_description" / "meshes" / "so100"
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "cube.obj").write_text(OBJ, encoding="utf-8")
    (tmp_path / "meshes" / "broken.dae").write_text("<COLLADA><nothing/></COLLADA>", encoding="utf-8")
    urdf = tmp_path / "formats.urdf"
    urdf.write_text(f"""<robot name="formats">
  <link name="body">
    <visual><origin xyz="0.1 -0.2 0.3" rpy="0.4 0.5 -0.6"/>
      <geometry><mesh filename="package://example-robot-data/robots/hector_description/meshes/quadrotor/quadrotor_base.dae"
        scale="1 2 0.5"/></geometry></visual>
  </link>
  <link name="arm">
    <visual><origin xyz="0 0.05 0" rpy="0 1.2 0"/>
      <geometry><mesh filename="file://{so100 / 'Moving_Jaw.stl'}" scale="2 2 2"/></geometry></visual>
    <visual><origin xyz="0.3 0 0" rpy="0 0 0.7"/>
      <geometry><mesh filename="meshes/cube.obj" scale="0.1 0.2 0.05"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
    <visual><geometry><mesh filename="meshes/broken.dae"/></geometry></visual>
  </link>
  <joint name="j" type="revolute"><parent link="body"/><child link="arm"/>
    <origin xyz="0 0 0.2" rpy="0.3 0 0"/><axis xyz="0 1 1"/></joint>
</robot>""", encoding="utf-8")
    N, O, frames, points, qs = forward_kinematics(urdf)
    scene = scene_from_urdf(urdf, frames, points, N, O, package_dirs={"example-robot-data": ROBOTS.parent})
    assert all(isinstance(vf.shape, Mesh) for vf in scene.visualization_frames)
    q = np.array([[0.0], [0.8]])
    path = view(trajectory(qs, q), scene).save(tmp_path / "formats.html")
    page, errors = open_page(browser, path)
    # the broken file: reported by the page (message and meshErrors), drawn as a box
    assert [e for e in errors if "broken" not in e.lower() and "collada" not in e.lower()] == []
    assert len(page.evaluate("window.symbody.meshErrors")) == 1
    assert "broken.dae" in page.evaluate("window.symbody.meshErrors")[0]
    assert "broken.dae" in page.inner_text("#symbody-message")
    assert page.evaluate("n => window.symbody.meshBounds(n)", "arm#3")["vertices"] == 24     # the box
    # the Collada file, read as written (Z_UP kept, as RViz): positions x its node's scale
    dae = ET.parse(hector / "quadrotor_base.dae").getroot()
    ns = {"c": dae.tag[1:].split("}")[0]}
    positions = np.array(dae.find(".//c:float_array[@id='Cube_002-mesh-positions-array']", ns).text.split(),
                         dtype=float).reshape(-1, 3)
    node_scale = np.array(dae.find(".//c:node/c:scale", ns).text.split(), dtype=float)
    assert dae.find(".//c:up_axis", ns).text == "Z_UP"
    corners = sum(3 * (int(n) - 2) for polylist in dae.iterfind(".//c:polylist", ns)
                  for n in polylist.find("c:vcount", ns).text.split())
    robot = read_visuals(urdf)

    def at(k: int, link: str, i: int):
        """Position, rotation and scale of visual i of link at sample k."""
        v = robot.visuals[link][i]
        p, R = numeric_link_poses(urdf, {"j": q[k, 0]})[link]
        return p + R @ v.xyz, R @ Rotation.from_euler("xyz", v.rpy).as_matrix(), v.geometry.scale

    for k in range(2):
        page.evaluate("t => window.symbody.setTime(t)", float(k))
        check_bounds(page, "body", placed(positions * node_scale, *at(k, "body", 0)), corners)
        triangles = stl_triangles(so100 / "Moving_Jaw.stl")
        check_bounds(page, "arm", placed(triangles, *at(k, "arm", 0)), 3 * len(triangles))
        cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
        check_bounds(page, "arm#2", placed(cube, *at(k, "arm", 1)), 6 * 2 * 3)
    # the OBJ takes the URDF's colour (red), the page shows it where the cube is
    page.evaluate("t => window.symbody.setTime(t)", 0.0)
    p, R, scale = at(0, "arm", 1)
    centre = p + R @ (np.array(scale) * 0.5)
    x, y = page.evaluate("xyz => window.symbody.project(xyz)", centre.tolist())
    from io import BytesIO

    from PIL import Image

    rgb = np.asarray(Image.open(BytesIO(page.screenshot())).convert("RGB")).astype(int)
    r, g, b = rgb[int(round(y)) - 1:int(round(y)) + 2, int(round(x)) - 1:int(round(x)) + 2].reshape(-1, 3).mean(axis=0)
    assert r > 120 and r - g > 60 and r - b > 60, (r, g, b)
