"""The Whipple bicycle with the benchmark parameters of Meijaard et al. (2007).

J. P. Meijaard, J. M. Papadopoulos, A. Ruina, A. L. Schwab, "Linearized dynamics
equations for the balance and steer of a bicycle: a benchmark and review",
Proc. R. Soc. A 463 (2007) 1955-1982, doi:10.1098/rspa.2007.1857.

Four rigid bodies -- rear wheel, rear frame with rider, front fork with handlebar,
front wheel -- with knife-edge wheels rolling without slip on flat ground.  The
formulation is that of SymPy's ``test_kane3`` (ported from Autolev), plus the
position of the rear contact point so that the bicycle can be drawn riding:

* frames: yaw about N.z (Y), roll about Y.x (R), pitch about R.y (the frame is R
  turned by ``pitch + h_a`` so that its x axis is the steer axis), steer about the
  steer axis (fork); the wheels spin relative to frame and fork;
* coordinates q = [x, y, yaw, roll, steer | pitch]: the rear contact (x, y),
  yaw, roll and steer independent, pitch dependent through the holonomic
  constraint that the front wheel touches the ground;
* speeds u = [u_roll, u_rear, u_steer | u_yaw, u_pitch, u_front]: roll rate, rear
  wheel rate (relative to the frame), steer rate independent; yaw rate, pitch
  rate and front wheel rate dependent through the three velocity constraints
  (the front contact point has zero velocity: two no-slip conditions and the
  time derivative of the holonomic constraint);
* the rear contact moves as x' = r_R (u_rear + u_pitch) cos(yaw),
  y' = r_R (u_rear + u_pitch) sin(yaw);
* gravity -g N.z; no other loads.  The forward speed is v = r_R u_rear in the
  upright, straight-ahead operating point (u_front = v / r_F).

The model's geometric constants follow from the benchmark's w, c, lambda, r_R,
r_F and mass-centre locations (:func:`benchmark_to_constants`); the linearized
equations reproduce the paper's Table 2 eigenvalues.  In that model the
bicycle's lean/steer dynamics have the four states [roll, steer, u_roll, u_steer]:
the position, yaw and rear wheel rate are ignorable.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import sympy as sm
from sympy.physics.mechanics import RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, dot, dynamicsymbols

from ..compat.sympy import TIME
from ..errors import InputError
from ..scene import Cylinder, Scene, Segment, Sphere, Torus, VisualizationFrame
from .base import Drawing, KaneSystem, Model, solve_dependent_coordinates

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion


__all__ = ["whipple_bicycle", "whipple_bicycle_system", "benchmark_parameters",
           "benchmark_to_constants", "lean_steer_states"]

t = TIME

DESCRIPTION = "Whipple bicycle, Meijaard et al. (2007) benchmark parameters (option v = forward speed)"
REFERENCES = ("Meijaard, Papadopoulos, Ruina, Schwab (2007), Linearized dynamics equations for the "
              "balance and steer of a bicycle: a benchmark and review, Proc. R. Soc. A 463:1955-1982, "
              "doi:10.1098/rspa.2007.1857, Table 1 (parameters) and Table 2 (eigenvalues). "
              "Formulation after SymPy's test_kane3 (Whipple model ported from Autolev).")

RIM_POINTS = 16

#: Table 1 of Meijaard et al. (2007), SI units; the benchmark frame has x forward,
#: y to the right and z down, so mass-centre heights zB, zH are negative.
_TABLE_1 = {
    "w": 1.02, "c": 0.08, "lam": math.pi / 10.0, "g": 9.81,
    "rR": 0.3, "mR": 2.0, "IRxx": 0.0603, "IRyy": 0.12,
    "xB": 0.3, "zB": -0.9, "mB": 85.0, "IBxx": 9.2, "IByy": 11.0, "IBzz": 2.8, "IBxz": 2.4,
    "xH": 0.9, "zH": -0.7, "mH": 4.0, "IHxx": 0.05892, "IHyy": 0.06, "IHzz": 0.00708,
    "IHxz": -0.00756,
    "rF": 0.35, "mF": 3.0, "IFxx": 0.1405, "IFyy": 0.28,
}


def benchmark_parameters() -> dict[str, float]:
    """The benchmark bicycle's parameters (Meijaard et al. 2007, Table 1), by the paper's names."""
    return dict(_TABLE_1)


def _symbols() -> dict[str, sm.Symbol]:
    names = ("r_R r_F h_a d_f d_o d_l c_f1 c_f3 c_h1 c_h3 m_R m_B m_H m_F I_Rxx I_Ryy I_Fxx I_Fyy "
             "I_Bxx I_Byy I_Bzz I_Bxz I_Hxx I_Hyy I_Hzz I_Hxz g")
    return {s.name: s for s in sm.symbols(names)}


def benchmark_to_constants(parameters: dict[str, float] | None = None) -> dict[str, float]:
    """Model constants (by name) from benchmark parameters (Table 1 names; defaults filled in).

    Geometry, in the upright reference configuration with the rear hub H_R at
    (0, r_R) and coordinates (forward, up); n = (cos lam, sin lam) is the
    normal to the steer axis, s = (sin lam, -cos lam) the steer axis pointing down:

    * h_a = pi/2 - lam                       head angle (steer axis from the ground)
    * d_f = (w + c) cos lam - r_R sin lam    rear hub to steer axis, along n
    * d_o = r_F sin lam - c cos lam          fork offset: steer axis to front hub, along n
    * d_l = w sin lam - (r_F - r_R) cos lam  along the steer axis, from the foot of d_f to
      the foot of d_o
    * rear frame mass centre B = (xB, -zB): c_f1 = -(B - H_R).s, c_f3 = (B - H_R).n
    * fork mass centre H = (xH, -zH): c_h1 = -(H - S).s, c_h3 = (H - S).n with the steer
      point S = H_R + d_f n
    * products of inertia change sign (the benchmark's y and z axes point the other way):
      I_Bxz = -IBxz, I_Hxz = -IHxz.
    """
    bp = dict(_TABLE_1)
    if parameters:
        unknown = sorted(set(parameters) - set(bp))
        if unknown:
            raise InputError(f"unknown benchmark parameter {unknown[0]!r}; known: {', '.join(bp)}")
        bp.update({k: float(v) for k, v in parameters.items()})
    lam, w, c, rR, rF = bp["lam"], bp["w"], bp["c"], bp["rR"], bp["rF"]
    sl, cl = math.sin(lam), math.cos(lam)
    d_f = (w + c) * cl - rR * sl
    d_o = rF * sl - c * cl
    d_l = w * sl - (rF - rR) * cl
    bx, bz = bp["xB"], -bp["zB"] - rR                  # B - H_R
    hx, hz = bp["xH"] - d_f * cl, -bp["zH"] - rR - d_f * sl   # H - S
    return {
        "r_R": rR, "r_F": rF, "h_a": math.pi / 2 - lam, "d_f": d_f, "d_o": d_o, "d_l": d_l,
        "c_f1": -(bx * sl - bz * cl), "c_f3": bx * cl + bz * sl,
        "c_h1": -(hx * sl - hz * cl), "c_h3": hx * cl + hz * sl,
        "m_R": bp["mR"], "m_B": bp["mB"], "m_H": bp["mH"], "m_F": bp["mF"],
        "I_Rxx": bp["IRxx"], "I_Ryy": bp["IRyy"], "I_Fxx": bp["IFxx"], "I_Fyy": bp["IFyy"],
        "I_Bxx": bp["IBxx"], "I_Byy": bp["IByy"], "I_Bzz": bp["IBzz"], "I_Bxz": -bp["IBxz"],
        "I_Hxx": bp["IHxx"], "I_Hyy": bp["IHyy"], "I_Hzz": bp["IHzz"], "I_Hxz": -bp["IHxz"],
        "g": bp["g"],
    }


def whipple_bicycle_system() -> tuple[KaneSystem, dict]:
    """Kinematics, constraints, bodies and loads; returns (KaneSystem, extras dict)."""
    x, y, yaw, roll, pitch, steer = dynamicsymbols("x y yaw roll pitch steer")
    u_yaw, u_roll, u_rear, u_pitch, u_steer, u_front = dynamicsymbols(
        "u_yaw u_roll u_rear u_pitch u_steer u_front")
    S = _symbols()
    rR, rF, h_a = S["r_R"], S["r_F"], S["h_a"]

    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [yaw, N.z])                 # heading
    R = Y.orientnew("R", "Axis", [roll, Y.x])                # rolled
    Fr = R.orientnew("Fr", "Axis", [pitch + h_a, R.y])       # rear frame; Fr.x = steer axis (down)
    Fr0 = Fr.orientnew("Fr0", "Axis", [-h_a, Fr.y])          # frame axes of the benchmark inertia
    Fo = Fr.orientnew("Fo", "Axis", [steer, Fr.x])           # front fork
    Fo0 = Fo.orientnew("Fo0", "Axis", [-h_a, Fo.y])
    WR = ReferenceFrame("WR")                                # wheels: angular velocity only
    WF = ReferenceFrame("WF")

    Y.set_ang_vel(N, u_yaw * Y.z)
    R.set_ang_vel(Y, u_roll * R.x)
    Fr.set_ang_vel(R, u_pitch * Fr.y)
    Fo.set_ang_vel(Fr, u_steer * Fo.x)
    WR.set_ang_vel(Fr, u_rear * Fr.y)
    WF.set_ang_vel(Fo, u_front * Fo.y)

    rear_contact = Point("rear_contact")
    rear_hub = rear_contact.locatenew("rear_hub", rR * R.z)
    steer_point = rear_hub.locatenew("steer_point", S["d_f"] * Fr.z)
    frame_cm = rear_hub.locatenew("frame_cm", -S["c_f1"] * Fr.x + S["c_f3"] * Fr.z)
    fork_cm = steer_point.locatenew("fork_cm", -S["c_h1"] * Fo.x + S["c_h3"] * Fo.z)
    front_hub = steer_point.locatenew("front_hub", S["d_l"] * Fo.x + S["d_o"] * Fo.z)
    down = (dot(Fo.y, Y.z) * Fo.y - Y.z).normalize()         # hub -> contact, in the wheel plane
    front_contact = front_hub.locatenew("front_contact", rF * down)

    rear_contact.set_vel(N, 0)
    rear_hub.v2pt_theory(rear_contact, N, WR)
    steer_point.v2pt_theory(rear_hub, N, Fr)
    frame_cm.v2pt_theory(rear_hub, N, Fr)
    fork_cm.v2pt_theory(steer_point, N, Fo)
    front_hub.v2pt_theory(steer_point, N, Fo)
    front_contact.v2pt_theory(front_hub, N, WF)

    frame = RigidBody("frame", frame_cm, Fr, S["m_B"],
                      (inertia(Fr0, S["I_Bxx"], S["I_Byy"], S["I_Bzz"], 0, 0, S["I_Bxz"]), frame_cm))
    fork = RigidBody("fork", fork_cm, Fo, S["m_H"],
                     (inertia(Fo0, S["I_Hxx"], S["I_Hyy"], S["I_Hzz"], 0, 0, S["I_Hxz"]), fork_cm))
    rear_wheel = RigidBody("rear_wheel", rear_hub, WR, S["m_R"],
                           (inertia(Fr, S["I_Rxx"], S["I_Ryy"], S["I_Rxx"]), rear_hub))
    front_wheel = RigidBody("front_wheel", front_hub, WF, S["m_F"],
                            (inertia(Fo, S["I_Fxx"], S["I_Fyy"], S["I_Fxx"]), front_hub))
    bodies = [frame, fork, rear_wheel, front_wheel]
    g = S["g"]
    loads = [(frame_cm, -S["m_B"] * g * Y.z), (fork_cm, -S["m_H"] * g * Y.z),
             (front_hub, -S["m_F"] * g * Y.z), (rear_hub, -S["m_R"] * g * Y.z)]

    roll_speed = rR * (u_rear + u_pitch)                     # speed of the rear contact's trace
    kd = [x.diff(t) - roll_speed * sm.cos(yaw), y.diff(t) - roll_speed * sm.sin(yaw),
          yaw.diff(t) - u_yaw, roll.diff(t) - u_roll, steer.diff(t) - u_steer,
          pitch.diff(t) - u_pitch]
    v_fc = front_contact.vel(N)
    velocity_constraints = [v_fc.dot(Y.x), v_fc.dot(Y.y), v_fc.dot(Y.z)]
    holonomic = [front_contact.pos_from(rear_contact).dot(Y.z)]

    system = KaneSystem(frame=N, q_ind=[x, y, yaw, roll, steer], u_ind=[u_roll, u_rear, u_steer],
                        kd_eqs=kd, bodies=bodies, loads=loads,
                        q_dep=[pitch], configuration_constraints=holonomic,
                        u_dep=[u_yaw, u_pitch, u_front], velocity_constraints=velocity_constraints)

    def at(P):
        rel = P.pos_from(rear_contact).to_matrix(N)
        return sm.Matrix([x + rel[0], y + rel[1], rel[2]])

    points = {"rear_contact": sm.Matrix([x, y, 0]), "rear_hub": at(rear_hub),
              "steer_point": at(steer_point), "frame_cm": at(frame_cm), "fork_cm": at(fork_cm),
              "front_hub": at(front_hub), "front_contact": at(front_contact)}
    Fo_x, Fo_z = Fo.x.to_matrix(N), Fo.z.to_matrix(N)
    points["handlebar"] = points["steer_point"] - 0.25 * (S["d_l"] + S["d_f"]) * Fo_x
    R_x, R_z = R.x.to_matrix(N), R.z.to_matrix(N)
    for k in range(RIM_POINTS):
        a = 2 * sm.pi * k / RIM_POINTS
        points[f"rear_rim{k}"] = points["rear_hub"] + rR * (sm.cos(a) * R_x + sm.sin(a) * R_z)
        points[f"front_rim{k}"] = points["front_hub"] + rF * (sm.cos(a) * Fo_x + sm.sin(a) * Fo_z)
    potential = g * sum(b.mass * b.masscenter.pos_from(rear_contact).dot(N.z) for b in bodies)
    extras = {"symbols": S, "q": (x, y, yaw, roll, steer, pitch),
              "u": (u_roll, u_rear, u_steer, u_yaw, u_pitch, u_front),
              "points": points, "potential": potential,
              "holonomic": sm.Matrix(holonomic), "forward_speed": roll_speed,
              "frames": {"N": N, "Fr": Fr, "Fo": Fo}}
    return system, extras


TYRE = 0.02     # tyre tube radius in the 3D scene (m); the wheels are r_R and r_F to the tyre's outside


def bicycle_scene(ex: dict) -> Scene:
    """The 3D scene: tyres and hubs on the rear frame and the fork, frame tubes, fork, handlebar, rider.

    The tubes are drawn between points fixed in the rear frame: a seat 0.55 m above and
    0.25 m ahead of the rear hub and the head tube's top 0.15 m up the steer axis.  The
    rider is a sphere at the rear frame's mass centre (rider and frame, 85 kg).  The wheels'
    spin angle is not a coordinate of the model, so the tyres turn with frame and fork only.
    """
    S, P = ex["symbols"], ex["points"]
    N, Fr, Fo = ex["frames"]["N"], ex["frames"]["Fr"], ex["frames"]["Fo"]
    h_a = S["h_a"]
    Fr_x, Fr_z = Fr.x.to_matrix(N), Fr.z.to_matrix(N)
    # (forward, up) offsets in the upright reference configuration -> rear-frame coordinates
    ahead, up = 0.25, 0.55
    seat = P["rear_hub"] + ((ahead * sm.cos(h_a) - up * sm.sin(h_a)) * Fr_x
                            + (ahead * sm.sin(h_a) + up * sm.cos(h_a)) * Fr_z)
    head_top = P["steer_point"] - 0.15 * Fr_x
    frame_color, fork_color, tyre, hub = "#1f77b4", "#4d4d4d", "#222222", "#9aa0a6"
    items = [
        VisualizationFrame("rear wheel", Fr, "rear_hub", Torus(S["r_R"] - TYRE, TYRE, color=tyre)),
        VisualizationFrame("rear wheel disc", Fr, "rear_hub",
                           Cylinder(0.004, S["r_R"] - TYRE, color="#d5d9de", opacity=0.25)),
        VisualizationFrame("rear hub", Fr, "rear_hub", Cylinder(0.12, 0.025, color=hub)),
        VisualizationFrame("front wheel", Fo, "front_hub", Torus(S["r_F"] - TYRE, TYRE, color=tyre)),
        VisualizationFrame("front wheel disc", Fo, "front_hub",
                           Cylinder(0.004, S["r_F"] - TYRE, color="#d5d9de", opacity=0.25)),
        VisualizationFrame("front hub", Fo, "front_hub", Cylinder(0.12, 0.025, color=hub)),
        Segment("chain stay", "rear_hub", "steer_point", radius=0.018, color=frame_color),
        Segment("seat stay", "rear_hub", seat, radius=0.015, color=frame_color),
        Segment("top tube", seat, head_top, radius=0.018, color=frame_color),
        Segment("head tube", head_top, "steer_point", radius=0.022, color=frame_color),
        Segment("fork", "steer_point", "front_hub", radius=0.016, color=fork_color),
        Segment("steerer", "steer_point", "handlebar", radius=0.014, color=fork_color),
        VisualizationFrame("handlebar", Fo, "handlebar", Cylinder(0.5, 0.014, color=fork_color)),
        VisualizationFrame("saddle", Fr, seat, Sphere(0.05, color="#333333")),
        VisualizationFrame("rider", Fr, "frame_cm", Sphere(0.14, color="#e07b39", opacity=0.8)),
    ]
    return Scene(N, None, *items, points=P, traces=("rear_contact", "front_contact"), up="z",
                 follow="rider", name="whipple-bicycle")


def lean_steer_states(model_or_eom: Model | EquationsOfMotion) -> tuple[list[int], list]:
    """Indices (in the linearization's state [q_ind, u_ind]) and symbols of [roll, steer, u_roll, u_steer]."""
    eom = getattr(model_or_eom, "eom", model_or_eom)
    states = list(eom.q_ind) + list(eom.u_ind)
    names = ["roll", "steer", "u_roll", "u_steer"]
    chosen = []
    for nm in names:
        hits = [s for s in states if getattr(s, "func", None) is not None and str(s.func) == nm]
        if not hits:
            raise InputError(f"the model has no state named {nm!r}; states: {', '.join(map(str, states))}")
        chosen.append(hits[0])
    return [states.index(s) for s in chosen], chosen


def whipple_bicycle(v: float = 5.0, parameters: dict[str, float] | None = None) -> Model:
    """The benchmark Whipple bicycle (see the module docstring).

    ``v``: forward speed (m/s) of the operating point (``op_parameters["v"]``)
    and of the default initial state (upright, rolling straight ahead, with a
    roll-rate perturbation of 0.5 rad/s).  ``parameters``: benchmark parameters
    (Table 1 names, e.g. ``{"c": 0.1}``) replacing the defaults.
    """
    v = float(v)
    if not math.isfinite(v):
        raise InputError(f"the forward speed v must be finite, got {v!r}")
    system, ex = whipple_bicycle_system()
    km, eom = system.form(name="whipple-bicycle")
    S = ex["symbols"]
    named = benchmark_to_constants(parameters)
    constants = {S[name]: value for name, value in named.items()}
    x, y, yaw, roll, steer, pitch = ex["q"]
    u_roll, u_rear, u_steer, u_yaw, u_pitch, u_front = ex["u"]
    fh = ex["holonomic"]

    pitch_of: dict = {}     # constants -> upright pitch (0 for geometry from benchmark_to_constants)

    def upright(values: dict, speed: float) -> dict:
        key = frozenset(values.items())
        if key not in pitch_of:
            dep = solve_dependent_coordinates(fh, [pitch], {**values, x: 0.0, y: 0.0, yaw: 0.0,
                                                            roll: 0.0, steer: 0.0}, [0.0])
            pitch_of[key] = dep[pitch]
        rR, rF = values[S["r_R"]], values[S["r_F"]]
        return {x: 0.0, y: 0.0, yaw: 0.0, roll: 0.0, steer: 0.0, pitch: pitch_of[key],
                u_roll: 0.0, u_rear: speed / rR, u_steer: 0.0,
                u_yaw: 0.0, u_pitch: 0.0, u_front: speed / rF}

    def initial_state(values: dict) -> dict:
        state = upright(values, v)
        state[u_roll] = 0.5
        for dep in (u_yaw, u_pitch, u_front):
            state.pop(dep)
        return state

    def operating_point(op: dict, values: dict) -> dict:
        speed = float(op.get("v", v))
        return upright(values, speed)

    # the velocities are linear and homogeneous in the speeds: T = u^T M_d u / 2 (unreduced M_d)
    u_all = sm.Matrix(eom.u)
    kinetic = (u_all.T * eom.dynamic_mass * u_all)[0, 0] / 2
    potential = ex["potential"]
    drawing = Drawing(
        points=ex["points"],
        lines=[["rear_contact", "rear_hub", "frame_cm", "steer_point", "front_hub", "front_contact"],
               ["steer_point", "handlebar"], ["rear_hub", "steer_point"],
               [f"rear_rim{k}" for k in range(RIM_POINTS)] + ["rear_rim0"],
               [f"front_rim{k}" for k in range(RIM_POINTS)] + ["front_rim0"]],
        traces=("rear_contact", "front_contact"), view="3d", plane=(0, 1))
    return Model.create(
        name="whipple-bicycle", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 10.0), drawing=drawing,
        energy=kinetic + potential,
        outputs={"forward_speed": ex["forward_speed"], "kinetic_energy": kinetic,
                 "potential_energy": potential, "contact_gap": fh[0]},
        op_parameters={"v": v}, operating_point_rule=operating_point, references=REFERENCES,
        scene=bicycle_scene(ex))
