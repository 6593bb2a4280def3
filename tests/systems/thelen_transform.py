"""gait10dof18musc with its Millard2012EquilibriumMuscles rewritten as Thelen2003Muscles (an
XML transform: same path, F_max, l_opt, l_Ts, v_max and time constants; pennation angles as
given, OpenSim's Thelen defaults otherwise), for the Thelen tests and benchmarks: OpenSim
loads the same file as the oracle."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path

#: the Millard properties carried over (the same meaning in Thelen2003Muscle)
KEPT = ("appliesForce", "GeometryPath", "max_isometric_force", "optimal_fiber_length",
        "tendon_slack_length", "max_contraction_velocity", "activation_time_constant",
        "deactivation_time_constant")


def thelen_model(source: Path | str, out: Path | str, pennation: dict | None = None) -> Path:
    """Write ``source`` with every Millard2012EquilibriumMuscle made a Thelen2003Muscle to
    ``out`` (``pennation``: {muscle: pennation angle at optimal fiber length})."""
    pennation = dict(pennation or {})
    tree = ET.parse(source)
    for parent in tree.iter():
        for k, old in enumerate(list(parent)):
            if old.tag != "Millard2012EquilibriumMuscle":
                continue
            new = ET.Element("Thelen2003Muscle", name=old.get("name"))
            for tag in KEPT:
                child = old.find(tag)
                if child is not None:
                    new.append(copy.deepcopy(child))
            angle = ET.SubElement(new, "pennation_angle_at_optimal")
            angle.text = repr(float(pennation.pop(old.get("name"), 0.0)))
            parent.remove(old)
            parent.insert(k, new)
    if pennation:
        raise KeyError(f"no Millard muscle {sorted(pennation)[0]!r} in {source}")
    tree.write(out, encoding="UTF-8", xml_declaration=True)
    return Path(out)
