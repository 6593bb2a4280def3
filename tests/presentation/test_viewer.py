"""The 3D viewer without a browser: scenes, poses against SymPy, the page's payload, the CLI.

The browser side (WebGL, window.symbody, pixels) is in test_viewer_browser.py.
"""

from __future__ import annotations

import base64
import json
import re
from importlib import resources
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sm
from scipy.spatial.transform import Rotation
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

import symbody as sb
from symbody.cli import main
from symbody.errors import InputError
from symbody.models.base import Drawing
from symbody.presentation import (
    Box,
    Cone,
    Cylinder,
    Plane,
    Scene,
    Segment,
    Sphere,
    Torus,
    Viewer,
    VisualizationFrame,
    view,
)
from symbody.presentation.viewer import rotation_to_quaternion, scene_samples

MODELS = list(sb.models.available())
_MODELS: dict = {}


def model_named(name: str):
    if name not in _MODELS:
        _MODELS[name] = sb.models.get(name)
    return _MODELS[name]


def state_trajectory(model, rng: np.random.Generator | None = None, k: int = 3):
    """A trajectory-like object: k samples near the model's initial state (no simulation)."""
    eom = model.eom
    q0 = np.array([model.initial_state[s] for s in eom.q], dtype=float)
    rng = rng or np.random.default_rng(0)
    q = np.tile(q0, (k, 1))
    q[1:] += rng.normal(scale=0.2, size=(k - 1, len(q0)))
    return SimpleNamespace(t=np.linspace(0.0, 1.0, k), q=np.atleast_2d(q), u=np.zeros((k, len(eom.u))),
                           coordinates=tuple(eom.q), speeds=tuple(eom.u), constants=dict(model.constants))


def sympy_value(expr, trajectory, k: int) -> np.ndarray:
    """Oracle: an expression at sample k by SymPy substitution (no compiled code)."""
    values = {c: sm.Float(v) for c, v in trajectory.constants.items()}
    values.update({s: sm.Float(v) for s, v in zip(trajectory.coordinates, trajectory.q[k], strict=True)})
    return np.array(sm.Matrix(expr).xreplace(values).evalf(), dtype=float).reshape(sm.Matrix(expr).shape)


def quaternion_matrix(q: np.ndarray) -> np.ndarray:
    return Rotation.from_quat(q).as_matrix()     # scipy: (x, y, z, w), as three.js


# --------------------------------------------------------------------------- geometry
def test_rotation_to_quaternion_matches_scipy():
    rotations = Rotation.random(500, random_state=1)
    # include the four branches of Shepperd's method: half turns about x, y, z and identity
    special = Rotation.from_rotvec([[np.pi, 0, 0], [0, np.pi, 0], [0, 0, np.pi], [0, 0, 0]])
    matrices = np.concatenate([rotations.as_matrix(), special.as_matrix()])
    q = rotation_to_quaternion(matrices)
    assert q.shape == (504, 4)
    # equal up to sign; 1e-12: a few round-offs of unit-size numbers
    np.testing.assert_allclose(quaternion_matrix(q), matrices, atol=1e-12)
    expected = Rotation.from_matrix(matrices).as_quat()
    sign = np.sign(np.sum(q * expected, axis=1))
    np.testing.assert_allclose(q * sign[:, None], expected, atol=1e-12)


@pytest.mark.parametrize("up, screen_up", [("z", [0, 0, 1]), ("y", [0, 1, 0]), ("-x", [-1, 0, 0]),
                                           ("x", [1, 0, 0]), ("-z", [0, 0, -1])])
def test_up_axis_points_up_on_screen(up, screen_up):
    from symbody.presentation.viewer import _world_quaternion

    R = quaternion_matrix(np.array(_world_quaternion(up)))
    np.testing.assert_allclose(R @ np.array(screen_up, dtype=float), [0, 1, 0], atol=1e-12)
    assert np.isclose(np.linalg.det(R), 1.0)


# --------------------------------------------------------------------------- poses against SymPy
def test_bicycle_poses_and_points_equal_sympy():
    model = model_named("whipple-bicycle")
    scene = model.scene
    traj = state_trajectory(model, k=4)
    samples = scene_samples(traj, scene)
    N = scene.reference_frame
    names = [vf.name for vf in scene.visualization_frames]
    for name in ("rear wheel", "front wheel", "handlebar", "rider"):
        vf = scene.visualization_frames[names.index(name)]
        for k in range(4):
            pose = samples["pose"][k, names.index(name)]
            R = sympy_value(N.dcm(vf.frame), traj, k)
            # 1e-12: compiled double-precision evaluation vs SymPy's evalf of the same expressions
            np.testing.assert_allclose(quaternion_matrix(pose[3:7]), R, atol=1e-12)
            np.testing.assert_allclose(pose[:3], sympy_value(scene.points[vf.point], traj, k).ravel(),
                                       atol=1e-12)
    for k in range(4):
        for i, name in enumerate(samples["names"]):
            np.testing.assert_allclose(samples["points"][k, i], sympy_value(scene.points[name], traj, k).ravel(),
                                       atol=1e-12, err_msg=name)
    # sizes from the constants: the tyre's centre line is r_R minus the tube
    rear = samples["sizes"][names.index("rear wheel")]
    assert rear["radius"] + rear["tube_radius"] == pytest.approx(0.3)


def test_segment_runs_from_start_to_end():
    model = model_named("four-bar")
    traj = state_trajectory(model, k=3)
    samples = scene_samples(traj, model.scene)
    names = [vf.name for vf in model.scene.visualization_frames]
    f = names.index("link B")
    for k in range(3):
        a = sympy_value(model.scene.points["P2"], traj, k).ravel()
        b = sympy_value(model.scene.points["P3"], traj, k).ravel()
        x, q, length = samples["pose"][k, f, :3], samples["pose"][k, f, 3:7], samples["pose"][k, f, 7]
        np.testing.assert_allclose(x, (a + b) / 2, atol=1e-12)
        # the cylinder's axis (y) turned by q ends at P3 from the middle
        np.testing.assert_allclose(x + quaternion_matrix(q) @ [0, length / 2, 0], b, atol=1e-12)
        assert length == pytest.approx(2.0)      # l_b, the link's length (the loop is closed)


def test_quaternions_are_continuous_for_slerp():
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [dynamicsymbols("theta"), N.z])
    theta = dynamicsymbols("theta")
    scene = Scene(N, None, VisualizationFrame("a", A, [0, 0, 0], Box(1, 1, 1)))
    t = np.linspace(0, 1, 200)
    traj = SimpleNamespace(t=t, q=(8 * np.pi * t)[:, None], u=np.zeros((200, 0)), coordinates=(theta,),
                           speeds=(), constants={})
    q = scene_samples(traj, scene)["pose"][:, 0, 3:7]
    assert np.all(np.sum(q[1:] * q[:-1], axis=1) > 0.9)      # neighbours in one hemisphere


@pytest.mark.parametrize("name", MODELS)
def test_every_zoo_model_has_a_scene_that_evaluates(name):
    model = model_named(name)
    scene = model.scene
    assert isinstance(scene, Scene)
    assert scene.visualization_frames
    assert set(scene.points) == set(model.drawing.points)
    page = view(state_trajectory(model, k=1), model)
    data = page.data
    assert np.all(np.isfinite(data["pose"])) and np.all(np.isfinite(data["points"]))
    for frame in data["frames"]:
        assert all(v > 0 for v in frame["dims"].values()), frame


def test_named_scenes_of_the_brief():
    """The bicycle (wheels, frame, fork), the disc, the four-bar, the snakeboard and the chain."""
    kinds = {name: {vf.name: getattr(vf, "shape", None) for vf in model_named(name).scene.visualization_frames}
             for name in ("whipple-bicycle", "rolling-disc", "four-bar", "snakeboard", "n-link-pendulum-on-cart")}
    bike = kinds["whipple-bicycle"]
    assert isinstance(bike["rear wheel"], Torus) and isinstance(bike["front wheel"], Torus)
    assert {"fork", "top tube", "handlebar"} <= set(bike)
    assert isinstance(kinds["rolling-disc"]["disc"], Cylinder)
    assert {"link A", "link B", "link C"} <= set(kinds["four-bar"])
    assert {"coupler", "front wheels", "rear wheels"} <= set(kinds["snakeboard"])
    assert {"cart", "link 1", "link 3"} <= set(kinds["n-link-pendulum-on-cart"])


# --------------------------------------------------------------------------- the page
def payload_of(text: str) -> dict:
    match = re.search(r'<script type="application/json" id="symbody-data">(.*?)</script>', text, re.S)
    assert match
    return json.loads(match.group(1))


def test_page_is_self_contained_and_carries_the_numbers(tmp_path):
    model = model_named("four-bar")
    traj = state_trajectory(model, k=5)
    page = view(traj, model, title="four-bar <test>")
    text = page.to_html()
    assert "three.js authors" in text and "MIT" in text          # the licence notice travels along
    vendor = resources.files("symbody.presentation").joinpath("viewer_assets", "vendor")
    assert "The MIT License" in vendor.joinpath("LICENSE-three.txt").read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text)
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", text)
    assert "four-bar &lt;test&gt;" in text
    data = payload_of(text)
    t = np.frombuffer(base64.b64decode(data["t"]), "<f8")
    np.testing.assert_array_equal(t, traj.t)
    pts = np.frombuffer(base64.b64decode(data["pts"]), "<f4").reshape(5, len(data["points"]), 3)
    np.testing.assert_array_equal(pts, page.data["points"].astype(np.float32))
    pose = np.frombuffer(base64.b64decode(data["pose"]), "<f4").reshape(5, len(data["frames"]), 8)
    np.testing.assert_array_equal(pose, page.data["pose"].astype(np.float32))
    path = page.save(tmp_path / "four_bar")
    assert path.suffix == ".html" and path.read_text(encoding="utf-8") == text
    inline = page._repr_html_()
    assert inline.startswith("<iframe srcdoc=") and "&lt;script" in inline


def test_view_resamples_at_fps_and_caps_samples():
    model = model_named("four-bar")
    traj = state_trajectory(model, k=11)
    assert len(view(traj, model, fps=30).data["t"]) == 31
    assert len(view(traj, model, max_samples=4).data["t"]) == 4
    with pytest.raises(InputError, match="fps"):
        view(traj, model, fps=-1)
    with pytest.raises(InputError, match="max_samples"):
        view(traj, model, fps=1000, max_samples=100)


def test_scene_from_a_drawing_and_a_hand_made_scene():
    q = dynamicsymbols("q")
    L = sm.Symbol("L")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q, N.z])
    O = Point("O")
    P = O.locatenew("P", L * A.x)
    drawing = Drawing(points={"O": sm.Matrix([0, 0, 0]), "P": sm.Matrix(P.pos_from(O).to_matrix(N))},
                      lines=[["O", "P"]], traces=("P",))
    traj = SimpleNamespace(t=np.array([0.0, 1.0]), q=np.array([[0.0], [np.pi / 2]]), u=np.zeros((2, 0)),
                           coordinates=(q,), speeds=(), constants={L: 2.0})
    page = view(traj, drawing)
    assert page.data["names"] == ["O", "P"]
    np.testing.assert_allclose(page.data["points"][1, 1], [0, 2, 0], atol=1e-12)
    scene = Scene(N, O,
                  VisualizationFrame("rod", A, O.locatenew("M", L / 2 * A.x), Cylinder(L, 0.05)),
                  VisualizationFrame("tip", A, P, Sphere(0.1, color="red"), axes=True),
                  VisualizationFrame("cone", A, "P", Cone(0.2, 0.1, opacity=0.5)),
                  VisualizationFrame("floor", None, [0, 0, -1], Plane(3, 3)),
                  VisualizationFrame("torus", A, O, Torus(L, 0.1)),
                  points=drawing.points, traces=["P"], up="y", follow="tip")
    page = view(traj, scene)
    frames = {f["name"]: f for f in page.data["frames"]}
    assert frames["rod"]["dims"] == {"length": 2.0, "radius": 0.05}
    assert frames["tip"]["axes"] and not frames["rod"]["axes"]
    assert frames["tip"]["color"] == "#d62728"
    np.testing.assert_allclose(page.data["pose"][1, 1, :3], [0, 2, 0], atol=1e-12)
    np.testing.assert_allclose(page.data["pose"][1, 0, :3], [0, 1, 0], atol=1e-12)
    assert page.data["follow"] == "tip"
    assert view(traj, scene, follow="").data["follow"] is None


def test_bad_scenes_are_refused_with_the_culprit_named():
    q = dynamicsymbols("q")
    N, B = ReferenceFrame("N"), ReferenceFrame("B")
    traj = SimpleNamespace(t=np.array([0.0]), q=np.array([[0.0]]), u=np.zeros((1, 0)), coordinates=(q,),
                           speeds=(), constants={})
    with pytest.raises(InputError, match="colour 'glow'"):
        Sphere(1.0, color="glow")
    with pytest.raises(InputError, match="opacity"):
        Box(1, 1, 1, opacity=0)
    with pytest.raises(InputError, match="positive"):
        Sphere(-1.0)
    with pytest.raises(InputError, match="up must be"):
        Scene(N, None, up="w")
    with pytest.raises(InputError, match="unique"):
        Scene(N, None, VisualizationFrame("a", None, [0, 0, 0], Sphere(1)),
              VisualizationFrame("a", None, [0, 0, 0], Sphere(1)))
    with pytest.raises(InputError, match="follow='b'"):
        Scene(N, None, VisualizationFrame("a", None, [0, 0, 0], Sphere(1)), follow="b")
    with pytest.raises(InputError, match="unknown point 'X'"):
        Scene(N, None, points={"O": [0, 0, 0]}, lines=[["O", "X"]])
    with pytest.raises(InputError, match="frame B has no orientation"):
        scene_samples(traj, Scene(N, None, VisualizationFrame("b", B, [0, 0, 0], Sphere(1))))
    with pytest.raises(InputError, match="no origin"):
        scene_samples(traj, Scene(N, None, VisualizationFrame("p", None, Point("P"), Sphere(1))))
    with pytest.raises(InputError, match="no named point 'Q'"):
        scene_samples(traj, Scene(N, None, VisualizationFrame("p", None, "Q", Sphere(1))))
    with pytest.raises(InputError, match="needs a value for r"):
        scene_samples(traj, Scene(N, None, VisualizationFrame("p", None, [0, 0, 0], Sphere(sm.Symbol("r")))))
    with pytest.raises(InputError, match="Scene, a zoo Model"):
        view(traj, 42)
    with pytest.raises(InputError, match="shape must be"):
        VisualizationFrame("p", None, [0, 0, 0], "ball")
    assert isinstance(Segment("s", [0, 0, 0], [1, 0, 0]).shape, Cylinder)


# --------------------------------------------------------------------------- command line
def test_cli_view_writes_a_page(tmp_path, capsys):
    out = tmp_path / "fb.html"
    assert main(["view", "four-bar", "--tf", "0.5", "--fps", "20", "--out", str(out), "--quiet"]) == 0
    assert "wrote" in capsys.readouterr().out
    data = payload_of(out.read_text(encoding="utf-8"))
    assert len(np.frombuffer(base64.b64decode(data["t"]), "<f8")) == 11
    assert main(["view", "four-bar", "--follow", "nope", "--out", str(out), "--quiet"]) == 2
    assert "--follow 'nope'" in capsys.readouterr().err
    assert isinstance(view, type(sb.view)) and isinstance(sb.view(
        state_trajectory(model_named("four-bar"), k=1), model_named("four-bar")), Viewer)


def test_readme_viewer_example_runs(tmp_path, monkeypatch):
    """The viewer example of docs/guides/command_line.md (shortened to 1 s) writes a page with the bicycle's samples."""
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "command_line.md"
    section = guide.read_text(encoding="utf-8").split("## Watching it move: the 3D viewer", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "(0, 10)" in code and "np.linspace(0, 10, 601)" in code
    code = code.replace("(0, 10)", "(0, 1)").replace("np.linspace(0, 10, 601)", "np.linspace(0, 1, 61)")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/guides/command_line.md", "exec"), {})
    data = payload_of((tmp_path / "bike.html").read_text(encoding="utf-8"))
    assert len(np.frombuffer(base64.b64decode(data["t"]), "<f8")) == 61
    assert "rear_hub" in data["points"]
