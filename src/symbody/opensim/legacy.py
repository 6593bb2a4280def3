"""Reading the older OpenSim formats (3.x, ``Version`` 30000-30516, 2.x and 1.9, 10901-20303,
which OpenSim 4 upgrades on load) into the same :class:`~.model_spec.ModelSpec` as 4.x files.

What differs from 4.x: the ground is the body named ``ground`` in the BodySet; each body holds
its joint (``<Body><Joint><CustomJoint>``) with ``parent_body``, ``location_in_parent``,
``orientation_in_parent`` (the parent frame F) and ``location``, ``orientation`` (the child
frame M), its ``<CoordinateSet>`` and, for a CustomJoint, the ``<SpatialTransform>`` whose
functions are wrapped in ``<function>``; markers, point and weld constraints name bodies
(``<body>``, ``<body_1>``) instead of frames; geometry is a ``<VisibleObject>`` with
``<GeometrySet>``/``<DisplayGeometry>`` (or ``<geometry_files>``) and a transform.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .model_spec import (
    BodySpec,
    ConstraintSpec,
    GeometrySpec,
    LeftOut,
    MarkerSpec,
    ModelSpec,
    Placement,
    body_fixed_xyz,
)
from .parse import (
    CONSTRAINT_TYPES,
    controller_elements,
    coupler_data,
    finish_joint,
    point_on_line_data,
    read_body_inertia,
    read_coordinate,
)
from .xml_tree import OsimDocument, OsimElement

__all__ = ["parse_legacy_model"]


def upgrade_rounding(values: np.ndarray) -> np.ndarray:
    """Numbers as OpenSim 4's upgrade of an old file writes them back (a C++ stream's default
    format: 6 significant digits), so that both tools load the same model."""
    return np.array([float(f"{float(v):g}") for v in values])


def _placement(el: OsimElement, body: str, loc_tag: str, ori_tag: str,
               rounding: bool = True) -> Placement:
    ori = el.numbers(ori_tag, 3, default=(0, 0, 0))
    p = el.numbers(loc_tag, 3, default=(0, 0, 0))
    if rounding:
        ori, p = upgrade_rounding(ori), upgrade_rounding(p)
    return Placement(body, body_fixed_xyz(ori), p, body)


def legacy_inertia(b: OsimElement) -> tuple:
    """(mass, com, inertia about the com) of a pre-30500 body as OpenSim 4 upgrades it: the six
    ``inertia_xx``... values (a missing moment is 1, a missing product 0) written with 6
    significant digits."""
    if b.find("inertia") is not None:
        return read_body_inertia(b)
    m, com, _ = read_body_inertia(b)
    v = np.array([b.number(f"inertia_{a}", d) for a, d in
                  (("xx", 1.0), ("yy", 1.0), ("zz", 1.0), ("xy", 0.0), ("xz", 0.0), ("yz", 0.0))])
    xx, yy, zz, xy, xz, yz = upgrade_rounding(v)
    return m, com, np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _visible_geometry(body: OsimElement, name: str) -> list:
    vo = body.find("VisibleObject")
    if vo is None:
        return []
    base_scale = vo.numbers("scale_factors", 3, default=(1, 1, 1))
    t = vo.numbers("transform", 6, default=(0, 0, 0, 0, 0, 0))
    base = Placement(name, body_fixed_xyz(t[:3]), t[3:].copy(), name)
    out: list = []
    gs = vo.find("GeometrySet")
    for dg in gs.objects() if gs is not None else []:
        f = (dg.text_of("geometry_file") or "").strip()
        if dg.tag != "DisplayGeometry" or not f:
            continue
        tt = dg.numbers("transform", 6, default=(0, 0, 0, 0, 0, 0))
        place = base.compose(body_fixed_xyz(tt[:3]), tt[3:])
        scale = base_scale * dg.numbers("scale_factors", 3, default=(1, 1, 1))
        out.append(GeometrySpec(f, "mesh", place, file=f, scale=tuple(scale),
                                color=tuple(dg.numbers("color", 3, default=(1, 1, 1))),
                                opacity=dg.number("opacity", 1.0), line=dg.line))
    files = (vo.text_of("geometry_files") or "").split()
    for f in files:
        out.append(GeometrySpec(f, "mesh", base, file=f, scale=tuple(base_scale), line=vo.line))
    return out


def _body_frame(names: set, ground: str):
    """``frame_of(element, socket)`` of a 3.x file: the ``<body>`` (or ``<parent_body>``) the
    element names, at its origin."""
    def frame_of(owner: OsimElement, socket: str = "parent_frame") -> Placement:
        body = (owner.text_of("body") or owner.text_of("parent_body") or "").strip()
        if not body:    # a 4.x element in a 3.x file (OpenSim reads its socket as it is)
            body = (owner.text_of(f"socket_{socket}") or "").strip().rstrip("/")
            body = body.rsplit("/", 1)[-1]
        if body not in names:
            raise owner.error(f"names the body {body!r}, which is not in the BodySet")
        return Placement(body, np.eye(3), np.zeros(3), body)
    return frame_of


def parse_legacy_model(doc: OsimDocument) -> ModelSpec:
    """The :class:`ModelSpec` of a 3.x or 2.x document."""
    model = doc.model
    if doc.version < 10901:
        raise model.error(f"the file format version {doc.version} is older than 10901 "
                          "(OpenSim 1.9.1), which OpenSim 4 refuses too; open and save the "
                          "model in OpenSim 3.3 to upgrade it")
    if doc.version < 20300:
        # OpenSim 4 upgrades the muscles of these files (renamed and rescaled parameters) in
        # ways not reproduced here: their forces disagreed (opensim-core's arm26_20.osim)
        fs = model.find("ForceSet")
        for f in fs.objects() if fs is not None else []:
            if f.tag.endswith("Muscle"):
                raise f.error(f"a muscle of a format {doc.version} file (older than 20300, "
                              "OpenSim 2.3) is not read as OpenSim 4 upgrades it; open and "
                              "save the model in OpenSim 4 first")
    bs = model.find("BodySet")
    if bs is None:
        raise model.error("no <BodySet>")
    gravity = model.numbers("gravity", 3, default=(0.0, -9.80665, 0.0))
    ground = "ground"
    bodies: dict = {}
    ground_geometry: tuple = ()
    joints = []
    body_elements = bs.objects()
    names = {b.name for b in body_elements}
    if ground not in names:
        raise model.error("a 3.x model needs a body named 'ground' in its BodySet")
    for b in body_elements:
        if b.tag != "Body":
            raise b.error(f"a {b.tag} in the BodySet is not supported (only Body)")
        if b.name == ground:
            ground_geometry = tuple(_visible_geometry(b, ground))
            continue
        m, com, I = legacy_inertia(b)
        bodies[b.name] = BodySpec(b.name, m, com, I, b, tuple(_visible_geometry(b, b.name)))
        holder = b.find("Joint")
        jel = holder.children[0] if holder is not None and holder.children else None
        if jel is None:
            continue        # a body without a joint: OpenSim adds a free joint (see multibody)
        if jel.flag("reverse", False):
            raise jel.error("<reverse>true</reverse> (a joint defined child to parent) is not "
                            "supported")
        parent_name = (jel.text_of("parent_body") or "").strip()
        if parent_name not in names:
            raise jel.error(f"<parent_body> names {parent_name!r}, which is not in the BodySet")
        parent = _placement(jel, parent_name, "location_in_parent", "orientation_in_parent")
        child = _placement(jel, b.name, "location", "orientation")
        cs = jel.find("CoordinateSet")
        coords = tuple(read_coordinate(c, jel.name) for c in (cs.objects() if cs is not None
                                                               else []) if c.tag == "Coordinate")
        joints.append(finish_joint(jel, parent, child, coords))
    left_out: list = []
    constraints = []
    cs = model.find("ConstraintSet")
    for el in cs.objects() if cs is not None else []:
        enforced = not el.flag("isDisabled", False)
        if el.tag not in CONSTRAINT_TYPES:
            left_out.append(LeftOut(el.tag, el.name, el.line, "constraint type not supported"
                                    if enforced else "not enforced"))
            continue
        if el.tag == "CoordinateCouplerConstraint":
            data = coupler_data(el)
        elif el.tag == "PointOnLineConstraint":
            ends = [(el.text_of(tag) or "").strip() for tag in ("line_body", "follower_body")]
            for b in ends:
                if b not in names:
                    raise el.error(f"names the body {b!r}, which is not in the BodySet")
            data = point_on_line_data(el, *(Placement(b, np.eye(3), np.zeros(3), b)
                                            for b in ends))
        else:
            b1 = (el.text_of("body_1") or "").strip()
            b2 = (el.text_of("body_2") or "").strip()
            for b in (b1, b2):
                if b not in names:
                    raise el.error(f"names the body {b!r}, which is not in the BodySet")
            if el.tag == "PointConstraint":
                f1 = Placement(b1, np.eye(3), np.zeros(3), b1)
                f2 = Placement(b2, np.eye(3), np.zeros(3), b2)
                data = {"frame1": f1, "frame2": f2,
                        "point1": el.numbers("location_body_1", 3, default=(0, 0, 0)),
                        "point2": el.numbers("location_body_2", 3, default=(0, 0, 0))}
            else:
                data = {"frame1": _placement(el, b1, "location_body_1", "orientation_body_1"),
                        "frame2": _placement(el, b2, "location_body_2", "orientation_body_2")}
        constraints.append(ConstraintSpec(el.name, el.tag, data, enforced, el))
    markers = []
    ms = model.find("MarkerSet")
    for el in ms.objects() if ms is not None else []:
        body = (el.text_of("body") or "").strip()
        if body not in names:
            raise el.error(f"<body> names {body!r}, which is not in the BodySet")
        markers.append(MarkerSpec(el.name, body, el.numbers("location", 3, default=(0, 0, 0)), el))
    fs = model.find("ForceSet")
    forces = list(fs.objects()) if fs is not None else []
    ps = model.find("ProbeSet")
    for el in ps.objects() if ps is not None else []:
        left_out.append(LeftOut(el.tag, el.name, el.line, "probes are not built"))
    if not np.all(np.isfinite(gravity)):
        raise InputError(f"{model.describe()}: <gravity> must be finite")
    return ModelSpec(name=model.name or "model", version=doc.version, path=doc.path,
                     where=doc.where, gravity=gravity, ground=ground, bodies=bodies,
                     joints=joints, constraints=constraints, markers=markers, forces=forces,
                     left_out=left_out, ground_geometry=ground_geometry,
                     credits=model.text_of("credits") or "",
                     publications=model.text_of("publications") or "", element=model,
                     frame_of=_body_frame(names, ground), controllers=controller_elements(model))
