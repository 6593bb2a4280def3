"""A planar five-link biped on the ground: torso, two thighs, two shanks, point feet with
smooth contact and friction, for gait optimization.

The classical gait model of trajectory optimization (Chevallereau et al.'s RABBIT, Kelly's
tutorial, opty's and OpenSim Moco's planar walkers) in the plane of motion (N.x forward,
N.y up).  Seven coordinates: the hip H at (x, y), the torso's pitch θ (0 upright, positive
leaning back), and for each leg i = 1, 2 the hip angle a_i (the thigh from the torso) and the
knee angle b_i (the shank flexed back from the thigh; 0 straight).  A segment turned by φ from
hanging straight down points along (sin φ, -cos φ), so

    thigh_i at φ = θ + a_i,    shank_i at φ = θ + a_i - b_i,
    knee_i = H + l_t (sin, -cos)(θ + a_i),    foot_i = knee_i + l_s (sin, -cos)(θ + a_i - b_i).

Four actuators: the hip torques τ_h1, τ_h2 (on the thigh about N.z, the opposite on the
torso) and the knee torques τ_k1, τ_k2 (flexing: on the shank about -N.z, the opposite on
the thigh).  Each foot touches the ground y = 0 through a smooth Hunt-Crossley force
(``symbody.contact.SmoothNormal``: C-infinity, so collocation goes through heel strike and
toe-off) with smooth Coulomb friction μ, regularized by the velocity scale ε.

Numbers: masses and lengths of Kelly's five-link biped (torso 20 kg, 0.625 m, its mass
centre 0.2 m above the hip; thighs 6.8 kg, shanks 3.2 kg, 0.4 m each, mass centres 0.163 m and
0.128 m from the proximal joint), central inertias of uniform rods; a soft, well damped ground
(k = 1e5 N/m^1.5, c = 2 s/m: the standing biped sinks 1.6 cm per foot, 2.5 cm on one foot,
its vertical motion on the ground a damped mode (ζ ≈ 0.6) of 0.26 s period that a
collocation grid of 10-25 ms resolves); μ = 1, ε = 0.05 m/s.  The initial state stands at
rest on straight legs, the feet under the hip at their static penetration (it needs torques
to stay there).
"""

from __future__ import annotations

import sympy as sm
from sympy.physics.mechanics import RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..contact import Contact, Friction, Plane, SmoothNormal, Sphere
from ..scene import Scene, Segment, VisualizationFrame
from ..scene import Sphere as SphereShape
from .base import Drawing, KaneSystem, Model, point_coordinates

__all__ = ["planar_biped", "planar_biped_system"]

t = TIME

DESCRIPTION = "planar five-link biped: torso, thighs, shanks, point feet on a smooth ground, 7 dof"
REFERENCES = ("C. Chevallereau et al., RABBIT: a testbed for advanced control theory, IEEE Control "
              "Systems Magazine 23(5), 2003; M. Kelly, An introduction to trajectory optimization, "
              "SIAM Review 59(4), 2017 (the five-link biped, its masses and lengths). "
              "Ground chosen here: k=1e5 N/m^1.5, c=2 s/m, mu=1, friction velocity scale 0.05 m/s.")

#: the default numbers (module docstring): masses (kg), lengths and mass-centre distances (m)
CONSTANTS = {"m_b": 20.0, "l_b": 0.625, "d_b": 0.2, "m_t": 6.8, "l_t": 0.4, "d_t": 0.163,
             "m_s": 3.2, "l_s": 0.4, "d_s": 0.128, "g": 9.81, "k": 1.0e5, "c": 2.0, "mu": 1.0}
#: the friction's velocity scale (m/s) and the normal force's smoothing (depth m, rate)
VELOCITY_SCALE = 0.05
SMOOTHING = SmoothNormal(depth=1e-3, rate=1e-2)


def planar_biped_system() -> tuple[KaneSystem, dict]:
    """The biped's kinematics, contacts and loads; returns (KaneSystem, extras)."""
    q = list(dynamicsymbols("x y theta a1 a2 b1 b2"))
    u = list(dynamicsymbols("u_x u_y u_theta u_a1 u_a2 u_b1 u_b2"))
    x, y, theta, a1, a2, b1, b2 = q
    ux, uy, uth, ua1, ua2, ub1, ub2 = u
    inputs = list(dynamicsymbols("tau_h1 tau_h2 tau_k1 tau_k2"))
    names = ("m_b", "l_b", "d_b", "m_t", "l_t", "d_t", "m_s", "l_s", "d_s", "g", "k", "c", "mu")
    sy = {name: sm.Symbol(name) for name in names}
    N = ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (theta, N.z))
    B.set_ang_vel(N, uth * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    H = O.locatenew("H", x * N.x + y * N.y)
    H.set_vel(N, ux * N.x + uy * N.y)
    torso_centre = H.locatenew("torso_centre", sy["d_b"] * B.y)
    torso_centre.v2pt_theory(H, N, B)
    head = H.locatenew("head", sy["l_b"] * B.y)
    head.v2pt_theory(H, N, B)
    bodies = [RigidBody("torso", torso_centre, B, sy["m_b"],
                        (inertia(B, 0, 0, sy["m_b"] * sy["l_b"] ** 2 / 12), torso_centre))]
    loads: list = []
    points = {"hip": H, "head": head}
    contacts = []
    for side, (a, b, ua, ub, tau_h, tau_k) in enumerate(
            ((a1, b1, ua1, ub1, inputs[0], inputs[2]), (a2, b2, ua2, ub2, inputs[1], inputs[3])), 1):
        T = B.orientnew(f"T{side}", "Axis", (a, N.z))
        T.set_ang_vel(B, ua * N.z)
        S = T.orientnew(f"S{side}", "Axis", (-b, N.z))
        S.set_ang_vel(T, -ub * N.z)
        thigh_centre = H.locatenew(f"thigh{side}_centre", -sy["d_t"] * T.y)
        thigh_centre.v2pt_theory(H, N, T)
        knee = H.locatenew(f"knee{side}", -sy["l_t"] * T.y)
        knee.v2pt_theory(H, N, T)
        shank_centre = knee.locatenew(f"shank{side}_centre", -sy["d_s"] * S.y)
        shank_centre.v2pt_theory(knee, N, S)
        foot = knee.locatenew(f"foot{side}", -sy["l_s"] * S.y)
        foot.v2pt_theory(knee, N, S)
        bodies += [RigidBody(f"thigh{side}", thigh_centre, T, sy["m_t"],
                             (inertia(T, 0, 0, sy["m_t"] * sy["l_t"] ** 2 / 12), thigh_centre)),
                   RigidBody(f"shank{side}", shank_centre, S, sy["m_s"],
                             (inertia(S, 0, 0, sy["m_s"] * sy["l_s"] ** 2 / 12), shank_centre))]
        loads += [(T, tau_h * N.z), (B, -tau_h * N.z), (S, -tau_k * N.z), (T, tau_k * N.z)]
        contact = Contact(Plane(O, N.y), Sphere(foot, 0), stiffness=sy["k"], exponent=1.5,
                          damping=sy["c"], friction=Friction(sy["mu"], velocity_scale=VELOCITY_SCALE),
                          smoothing=SMOOTHING, name=f"foot{side}")
        contacts.append(contact)
        loads += contact.to_loads()
        points.update({f"knee{side}": knee, f"foot{side}": foot})
    loads += [(body.masscenter, -body.mass * sy["g"] * N.y) for body in bodies]
    system = KaneSystem(frame=N, q_ind=q, u_ind=u, kd_eqs=[qi.diff(t) - ui for qi, ui in zip(q, u)],
                        bodies=bodies, loads=loads)
    kinetic = sum(body.kinetic_energy(N) for body in bodies)
    potential = sy["g"] * sum(body.mass * body.masscenter.pos_from(O).dot(N.y) for body in bodies)
    return system, {"q": tuple(q), "u": tuple(u), "inputs": tuple(inputs), "symbols": sy,
                    "points": {n: point_coordinates(P, O, N) for n, P in points.items()},
                    "frame": N, "origin": O, "contacts": tuple(contacts),
                    "kinetic": kinetic, "potential": potential}


def planar_biped() -> Model:
    """The five-link biped standing at rest on straight legs, both feet under the hip at their
    static penetration; the four joint torques are specified inputs (module docstring)."""
    system, ex = planar_biped_system()
    km, eom = system.form(name="planar-biped")
    sy = ex["symbols"]
    y = ex["q"][1]
    constants = {sy[name]: value for name, value in CONSTANTS.items()}

    def initial_state(values: dict) -> dict:
        mass = values[sy["m_b"]] + 2 * (values[sy["m_t"]] + values[sy["m_s"]])
        depth = (mass * values[sy["g"]] / 2 / values[sy["k"]]) ** (1.0 / 1.5)
        state = {s: 0.0 for s in ex["q"] + ex["u"]}
        state[y] = values[sy["l_t"]] + values[sy["l_s"]] - depth
        return state

    lines = [["hip", "head"], ["hip", "knee1", "foot1"], ["hip", "knee2", "foot2"]]
    drawing = Drawing(points=ex["points"], lines=lines, traces=("hip", "foot1", "foot2"), view="2d")
    colors = {"1": "#4c72b0", "2": "#dd8452"}
    segments = [Segment("torso", "hip", "head", radius=0.05, color="#55a868")]
    for side in "12":
        segments += [Segment(f"thigh{side}", "hip", f"knee{side}", radius=0.035, color=colors[side]),
                     Segment(f"shank{side}", f"knee{side}", f"foot{side}", radius=0.025,
                             color=colors[side]),
                     VisualizationFrame(f"foot{side}", None, f"foot{side}",
                                        SphereShape(0.03, color="#333333"))]
    scene = Scene(ex["frame"], ex["origin"], *segments, points=ex["points"],
                  traces=("hip", "foot1", "foot2"), up="y", ground=True, name="planar-biped")
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    first, second = ex["contacts"]
    return Model.create(
        name="planar-biped", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 1.0), drawing=drawing,
        outputs={"kinetic_energy": kinetic, "potential_energy": ex["potential"],
                 "foot1_force": first.normal_force, "foot2_force": second.normal_force},
        references=REFERENCES, scene=scene)
