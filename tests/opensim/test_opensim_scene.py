"""The scene of an OpenSim model: meshes found beside the file (.vtp read into OBJ), shapes,
markers as named points, a warning naming the geometry files not found."""

from __future__ import annotations

import numpy as np
import pytest

from symbody.errors import InputError
from symbody.opensim import load_opensim
from symbody.opensim.scene import GeometryFileWarning
from symbody.opensim.vtp import read_vtp, vtp_as_obj
from symbody.scene import Cylinder, Mesh, Sphere

VTP = """<?xml version="1.0"?>
<VTKFile type="PolyData" version="0.1" byte_order="LittleEndian">
 <PolyData>
  <Piece NumberOfPoints="4" NumberOfPolys="2">
   <Points><DataArray type="Float32" NumberOfComponents="3" format="ascii">
     0 0 0  1 0 0  1 1 0  0 1 0
   </DataArray></Points>
   <Polys>
    <DataArray type="Int32" Name="connectivity" format="ascii">0 1 2 3 3 0 2</DataArray>
    <DataArray type="Int32" Name="offsets" format="ascii">4 7</DataArray>
   </Polys>
  </Piece>
 </PolyData>
</VTKFile>
"""

MODEL = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><Model name="drawn"><Ground name="ground"/>
<BodySet name="bodyset"><objects><Body name="b"><mass>1</mass><mass_center>0 0 0</mass_center>
<inertia>0.1 0.1 0.1 0 0 0</inertia>
<attached_geometry>
 <Mesh name="plate"><scale_factors>2 2 2</scale_factors><mesh_file>plate.vtp</mesh_file>
  <Appearance><color>1 0 0</color><opacity>0.5</opacity></Appearance></Mesh>
 <Mesh name="gone"><mesh_file>missing_bone.vtp</mesh_file></Mesh>
 <Cylinder name="rod"><radius>0.02</radius><half_height>0.25</half_height></Cylinder>
</attached_geometry></Body></objects></BodySet>
<JointSet name="jointset"><objects><PinJoint name="pin">
 <socket_parent_frame>/ground</socket_parent_frame><socket_child_frame>/bodyset/b</socket_child_frame>
 <coordinates><Coordinate name="q"/></coordinates></PinJoint></objects></JointSet>
<MarkerSet name="markerset"><objects><Marker name="tip">
 <socket_parent_frame>/bodyset/b</socket_parent_frame><location>0 -0.5 0</location>
</Marker></objects></MarkerSet>
</Model></OpenSimDocument>
"""


def test_read_vtp_triangulates_polygons(tmp_path):
    path = tmp_path / "plate.vtp"
    path.write_text(VTP)
    P, T = read_vtp(path)
    assert P.shape == (4, 3) and T.tolist() == [[0, 1, 2], [0, 2, 3], [3, 0, 2]]
    obj = vtp_as_obj(path, tmp_path / "cache")
    assert obj.read_text().count("\nf ") == 3
    with pytest.raises(InputError, match="binary data arrays are not supported"):
        bad = tmp_path / "bad.vtp"
        bad.write_text(VTP.replace('format="ascii">\n     0', 'format="binary">\n     0'))
        read_vtp(bad)


def test_scene_of_a_model(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "plate.vtp").write_text(VTP)
    (tmp_path / "drawn.osim").write_text(MODEL)
    model = load_opensim(tmp_path / "drawn.osim")
    with pytest.warns(GeometryFileWarning, match="missing_bone.vtp"):
        scene = model.scene
    shapes = {vf.name: vf.shape for vf in scene.visualization_frames}
    plate = shapes["b/plate"]
    assert isinstance(plate, Mesh) and plate.scale == (2.0, 2.0, 2.0)
    assert plate.color == "#ff0000" and plate.opacity == 0.5
    assert isinstance(shapes["b/gone"], Sphere)                 # the stand-in
    assert isinstance(shapes["b/rod"], Cylinder) and shapes["b/rod"].length == 0.5
    assert scene.up == "y" and list(scene.points) == ["tip"]
    tip = scene.points["tip"]
    q = model.coordinates[0]
    value = np.array([float(v.subs(q, 0.3)) for v in tip])
    assert np.allclose(value, model.marker_positions(np.array([0.3]))[0], atol=1e-14)
