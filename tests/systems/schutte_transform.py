"""arm26 with its Thelen2003Muscles rewritten as Schutte1993Muscle_Deprecated (an XML
transform: same path, F_max, l_opt, l_Ts, pennation; SIMM's standard tendon, active and
passive force-length splines, as OpenSim's wrist model gives them), for the Schutte tests and
benchmarks: OpenSim loads the same file as the oracle."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path

KEPT = ("appliesForce", "GeometryPath", "max_isometric_force", "optimal_fiber_length",
        "tendon_slack_length", "pennation_angle_at_optimal")

CURVES = {
    "tendon_force_length_curve": (
        "-10 -0.002 -0.001 0 0.00131 0.00281 0.00431 0.00581 0.00731 0.00881 0.0103 0.0118 "
        "0.0123 9.2 9.201 9.202 20",
        "0 0 0 0 0.0108 0.0257 0.0435 0.0652 0.0915 0.123 0.161 0.208 0.227 345 345 345 345"),
    "active_force_length_curve": (
        "-35 0 0.401 0.402 0.4035 0.52725 0.62875 0.71875 0.86125 1.045 1.2175 1.43875 "
        "1.61875 1.62 1.621 2.2 35",
        "0 0 0 0 0 0.226667 0.636667 0.856667 0.95 0.993333 0.77 0.246667 0 0 0 0 0"),
    "passive_force_length_curve": (
        "-35 0.998 0.999 1.15 1.25 1.35 1.45 1.55 1.65 1.75 1.7501 1.7502 35",
        "0 0 0 0 0.035 0.12 0.26 0.55 1.17 2 2 2 2"),
}


def schutte_model(source: Path | str, out: Path | str, settings: dict | None = None,
                  no_passive_curve: tuple = (), no_curves: tuple = ()) -> Path:
    """Write ``source`` with every Thelen2003Muscle made a Schutte1993Muscle_Deprecated to
    ``out``; ``settings``: {muscle: {property: value}} (time_scale, damping, activation1/2,
    pennation_angle_at_optimal); muscles in ``no_passive_curve`` get OpenSim's default
    (exponential) passive force, those in ``no_curves`` OpenSim's default curves."""
    settings = {k: dict(v) for k, v in (settings or {}).items()}
    tree = ET.parse(source)
    for parent in tree.iter():
        for k, old in enumerate(list(parent)):
            if old.tag != "Thelen2003Muscle":
                continue
            name = old.get("name")
            new = ET.Element("Schutte1993Muscle_Deprecated", name=name)
            own = settings.pop(name, {})
            for tag in KEPT:
                child = old.find(tag)
                if tag in own:
                    ET.SubElement(new, tag).text = repr(float(own.pop(tag)))
                elif child is not None:
                    new.append(copy.deepcopy(child))
            for tag, value in own.items():
                ET.SubElement(new, tag).text = repr(float(value))
            for tag, (x, y) in CURVES.items():
                if name in no_curves or (tag == "passive_force_length_curve"
                                         and name in no_passive_curve):
                    continue
                spline = ET.SubElement(new, "SimmSpline", name=tag)
                ET.SubElement(spline, "x").text = x
                ET.SubElement(spline, "y").text = y
            parent.remove(old)
            parent.insert(k, new)
    if settings:
        raise KeyError(f"no Thelen muscle {sorted(settings)[0]!r} in {source}")
    tree.write(out, encoding="UTF-8", xml_declaration=True)
    return Path(out)
