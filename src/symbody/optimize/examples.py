"""Standard optimal control problems on symbody models (docs, tests and benchmarks).

Each function returns ``(problem, initial_guess)``; the published or independently
computed optima are checked in the tests, not stored here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..compat.sympy import TIME
from ..deprecation import moved_keywords
from ..formulation import EquationsOfMotion
from .problem import OptimalControlProblem
from .statement import Collocation

__all__ = ["pendulum_swing_up", "cart_pole_swing_up", "pendulum_equations", "n_link_cart_swing_up",
           "sleigh_equations", "sleigh_parking", "arm_reaching", "SwingUp", "cart_pole_horizon",
           "car_equations", "car_parking", "hopper_hop", "hopper_mass_centre", "jumper_jump",
           "jumper_mass_centre"]

_t = TIME

#: the options of Collocation that the examples also take as keywords of their own
_COLLOCATION_OPTIONS = ("quadrature", "hessian", "backend", "cache", "points", "dependent_speeds")


def _collocation(transcription: str | Collocation, kwargs: dict) -> Collocation:
    """The example's transcription with the Collocation options found in ``kwargs`` (taken
    out of it): ``pendulum_swing_up(hessian="limited-memory")``."""
    options = {k: kwargs.pop(k) for k in _COLLOCATION_OPTIONS if k in kwargs}
    if isinstance(transcription, Collocation):
        return replace(transcription, **options)
    return Collocation(transcription, **options)


@dataclass(frozen=True)
class SwingUp:
    """The task and the cart-pole of :func:`n_link_cart_swing_up`: the cart moves
    ``distance`` (m), abs(F) <= ``force_limit`` (N), abs(q0) <= ``track`` (m); ``cart_mass``,
    ``pole_mass`` (kg) and ``pole_length`` (m), shared equally by the n links."""

    distance: float = 1.0
    force_limit: float = 20.0
    track: float = 2.0
    cart_mass: float = 1.0
    pole_mass: float = 0.3
    pole_length: float = 0.5


def pendulum_equations() -> tuple[EquationsOfMotion, dict]:
    """opty's compound pendulum, ``I ω' + m g d sin θ - T = 0``, θ' = ω, and its constants."""
    theta, omega, T = dynamicsymbols("theta omega T")
    I, m, g, d = sm.symbols("I m g d")
    eom = EquationsOfMotion([theta], [omega], kinematic=[theta.diff(_t) - omega],
                            dynamic=[I * omega.diff(_t) + m * g * d * sm.sin(theta) - T],
                            name="torque-driven pendulum")
    return eom, {I: 1.0, m: 1.0, g: 9.81, d: 1.0}


def pendulum_swing_up(transcription: str | Collocation = "backward-euler", num_nodes: int = 501,
                      duration: float = 10.0, **kwargs) -> tuple[OptimalControlProblem, dict]:
    """opty's gallery problem "fixed duration pendulum swing up": from hanging (θ = 0) at rest
    to upright (θ = π) at rest in 10 s, abs(T) <= 2 N m, minimizing ∫ T² dt.

    In every example ``transcription`` is a method's name or a :class:`Collocation`, and
    ``quadrature=``, ``hessian=``, ``backend=``, ``cache=`` set those options of it; other
    keywords go to :class:`OptimalControlProblem`.

    The initial guess: hanging at rest, no torque (all zeros).  (θ rising linearly from 0 to
    π is a worse start: IPOPT ends at a point of locally minimal infeasibility from it.)
    """
    eom, constants = pendulum_equations()
    theta, = eom.q
    omega, = eom.u
    T, = eom.specifieds
    problem = OptimalControlProblem(
        eom, num_nodes=num_nodes, duration=duration, objective=T ** 2,
        instance_constraints=[theta.func(0.0), theta.func(duration) - math.pi,
                              omega.func(0.0), omega.func(duration)],
        bounds={T: (-2.0, 2.0)}, known_parameters=constants,
        transcription=_collocation(transcription, kwargs), **kwargs)
    guess = {theta: 0.0, omega: 0.0, T: 0.0}
    return problem, guess


@moved_keywords("n_link_cart_swing_up", {"task": (SwingUp, ("distance", "force_limit", "track",
                                                                "cart_mass", "pole_mass",
                                                                "pole_length"))})
def n_link_cart_swing_up(n: int = 1, transcription: str | Collocation = "midpoint",
                         num_nodes: int = 101, duration: float = 2.0, task: SwingUp | None = None,
                         **kwargs) -> tuple[OptimalControlProblem, dict]:
    """Swing-up of the n-link pendulum on a cart (:func:`symbody.models.n_link_pendulum_on_cart`
    with the force F(t)) from hanging (q_i = -π/2) to upright (q_i = π/2), the cart moving
    ``task.distance``, at rest at both ends, abs(F) <= ``task.force_limit``, abs(q0) <=
    ``task.track``, minimizing ∫ F² dt (:class:`SwingUp`; its fields as keywords warn).  With
    n = 1 and the defaults this is Kelly's (2017) cart-pole swing-up: cart 1 kg, pole 0.3 kg
    at 0.5 m, 2 s, 1 m, 20 N.  With n links each has length ``pole_length / n`` and a bob of
    ``pole_mass / n``.

    The initial guess: all coordinates linear in time between the end conditions.
    """
    task = task or SwingUp()
    distance = task.distance
    from ..models import n_link_pendulum_on_cart
    model = n_link_pendulum_on_cart(n, force=True)
    eom = model.eom
    q, u = eom.q, eom.u
    F, = eom.specifieds
    m = sm.symbols(f"m:{n + 1}")
    l = sm.symbols(f"l:{n}")
    g = sm.Symbol("g")
    constants = {g: 9.81, m[0]: task.cart_mass}
    for i in range(n):
        constants[m[i + 1]] = task.pole_mass / n
        constants[l[i]] = task.pole_length / n
    inst = [q[0].func(0.0), q[0].func(duration) - distance]
    inst += [qi.func(0.0) + math.pi / 2 for qi in q[1:]]
    inst += [qi.func(duration) - math.pi / 2 for qi in q[1:]]
    inst += [ui.func(0.0) for ui in u] + [ui.func(duration) for ui in u]
    problem = OptimalControlProblem(
        model, num_nodes=num_nodes, duration=duration, objective=F ** 2,
        instance_constraints=inst,
        bounds={F: (-task.force_limit, task.force_limit), q[0]: (-task.track, task.track)},
        known_parameters=constants, transcription=_collocation(transcription, kwargs), **kwargs)
    tt = np.linspace(0.0, 1.0, num_nodes)
    guess = {q[0]: distance * tt}
    for qi in q[1:]:
        guess[qi] = -math.pi / 2 + math.pi * tt
    return problem, guess


def cart_pole_swing_up(transcription: str | Collocation = "midpoint", num_nodes: int = 101,
                       quadrature: str = "rectangle", **kwargs) -> tuple[OptimalControlProblem, dict]:
    """Kelly's (2017) cart-pole swing-up: :func:`n_link_cart_swing_up` with n = 1.

    The cost ``∫ F² dt`` is summed by the rectangle rule over all nodes, ``h Σ_k F_k²``, as an
    opty user writes it (``interval * np.sum(F**2)``); ``quadrature="transcription"`` sums
    the midpoint values instead.
    """
    return n_link_cart_swing_up(1, transcription=transcription, num_nodes=num_nodes,
                                quadrature=quadrature, **kwargs)


def sleigh_equations() -> tuple[Any, dict]:
    """A Chaplygin sleigh (:mod:`symbody.models.chaplygin_sleigh`) driven by a thrust F(t)
    along its blade at the knife-edge contact P and a yaw torque T(t), formed by symbody's
    KanesMethod with the sideways speed u2 dependent (the knife-edge constraint
    ``v_P · A.y = 0``): the unreduced dynamic block with its multiplier.  Returns
    (EquationsOfMotion, constants m = 1 kg, I = 0.1 kg m², a = 0.3 m)."""
    from sympy.physics.mechanics import RigidBody, outer
    from sympy.physics.vector import Point, ReferenceFrame

    from ..formulation import KanesMethod
    q1, q2, q3 = dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = dynamicsymbols("u1, u2, u3")
    F, T = dynamicsymbols("F, T")
    m, I, a = sm.symbols("m, I, a")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", (q3, N.z))
    A.set_ang_vel(N, u3 * N.z)
    O, P, G = Point("O"), Point("P"), Point("G")
    O.set_vel(N, 0)
    P.set_pos(O, q1 * N.x + q2 * N.y)
    P.set_vel(N, u1 * A.x + u2 * A.y)
    G.set_pos(P, a * A.x)
    G.v2pt_theory(P, N, A)
    kd = [q1.diff(_t) - (u1 * sm.cos(q3) - u2 * sm.sin(q3)),
          q2.diff(_t) - (u1 * sm.sin(q3) + u2 * sm.cos(q3)),
          q3.diff(_t) - u3]
    body = RigidBody("A", G, A, m, (I * outer(A.z, A.z), G))
    km = KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u3], kd_eqs=kd, u_dependent=[u2],
                     velocity_constraints=[P.vel(N).dot(A.y)])
    km.kanes_equations([body], [(P, F * A.x), (A, T * N.z)])
    return km.to_eom(name="driven Chaplygin sleigh"), {m: 1.0, I: 0.1, a: 0.3}


def sleigh_parking(transcription: str | Collocation = "hermite-simpson", num_nodes: int = 51,
                   duration: float = 4.0, offset: float = 0.5,
                   **kwargs) -> tuple[OptimalControlProblem, dict]:
    """Parallel parking of the driven Chaplygin sleigh: from rest at the origin heading along x
    to rest at (0, ``offset``) with the same heading in ``duration`` seconds, minimizing
    ``∫ (F² + T²) dt``.  A sleigh cannot move sideways: it must turn, drive, and turn back.

    The initial guess: a lateral S-curve, q2 rising smoothly, the heading following the path.
    """
    eom, constants = sleigh_equations()
    q1, q2, q3 = eom.q
    u = eom.u
    F, T = eom.specifieds
    inst = [q1.func(0.0), q2.func(0.0), q3.func(0.0), q1.func(duration),
            q2.func(duration) - offset, q3.func(duration)]
    inst += [ui.func(0.0) for ui in u] + [ui.func(duration) for ui in u]
    problem = OptimalControlProblem(eom, num_nodes=num_nodes, duration=duration,
                                    objective=F ** 2 + T ** 2, instance_constraints=inst,
                                    known_parameters=constants,
                                    transcription=_collocation(transcription, kwargs), **kwargs)
    s = np.linspace(0.0, 1.0, num_nodes)
    guess = {q1: 0.3 * np.sin(2 * np.pi * s), q2: offset * (s - np.sin(2 * np.pi * s) / (2 * np.pi)),
             q3: 0.5 * np.sin(2 * np.pi * s)}
    return problem, guess


def car_equations() -> tuple[Any, dict]:
    """opty's gallery car ("Parallel Park a Car"): the nonholonomic bicycle model, a body A
    (mass m, yaw inertia I; mass centre A_o at (x, y), heading θ) with a steered front
    wheel B (m/6, I/32; steer angle δ) at P_f = A_o + a A.x and the rear axle
    P_r = A_o - b A.x, neither slipping sideways (the dependent speeds v_y and ω); the
    propulsion force F along A.x at P_r and the steering torque T between A and B.
    Formed by symbody's KanesMethod with opty's kinematic equations.  Returns
    (EquationsOfMotion, constants m = 1200 kg, I = 1300 kg m², a = b = 1.5 m)."""
    from sympy.physics.mechanics import RigidBody, inertia
    from sympy.physics.vector import Point, ReferenceFrame

    from ..formulation import KanesMethod
    m, I, a, b = sm.symbols("m, I, a, b", real=True)
    x, y, vx, vy = dynamicsymbols("x, y, v_x, v_y", real=True)
    theta, omega = dynamicsymbols("theta, omega", real=True)
    delta, beta = dynamicsymbols("delta, beta", real=True)
    T, F = dynamicsymbols("T, F", real=True)
    N, A, B = ReferenceFrame("N"), ReferenceFrame("A"), ReferenceFrame("B")
    A.orient_axis(N, theta, N.z)
    B.orient_axis(A, delta, A.z)
    O, Ao, Pr, Pf = Point("O"), Point("A_o"), Point("P_r"), Point("P_F")
    Ao.set_pos(O, x * N.x + y * N.y)
    Pr.set_pos(Ao, -b * A.x)
    Pf.set_pos(Ao, a * A.x)
    A.set_ang_vel(N, omega * N.z)
    velocity = x.diff(_t) * N.x + y.diff(_t) * N.y
    kinematic = [vx - velocity.dot(A.x), vy - velocity.dot(A.y), omega - theta.diff(_t),
                 beta - delta.diff(_t)]
    O.set_vel(N, 0)
    Ao.set_vel(N, vx * A.x + vy * A.y)
    Pr.v2pt_theory(Ao, N, A)
    Pf.v2pt_theory(Ao, N, A)
    body = RigidBody("A", Ao, A, m, (inertia(A, 0, 0, I), Ao))
    wheel = RigidBody("B", Pf, B, m / 6, (inertia(B, 0, 0, I / 32), Pf))
    km = KanesMethod(N, [x, y, theta, delta], [vx, beta], kd_eqs=kinematic, u_dependent=[vy, omega],
                     velocity_constraints=[Pr.vel(N).dot(A.y), Pf.vel(N).dot(B.y)])
    km.kanes_equations([body, wheel], [(Pr, F * A.x), (A, -T * B.z), (B, T * B.z)])
    return km.to_eom(name="opty's parking car"), {I: 1200 * (2 ** 2 + 3 ** 2) / 12, m: 1200.0,
                                                  a: 1.5, b: 1.5}


def car_parking(transcription: str | Collocation = "backward-euler", num_nodes: int = 121,
                duration: float = 30.0, **kwargs) -> tuple[OptimalControlProblem, dict]:
    """opty's gallery problem "Parallel Park a Car" (:func:`car_equations`): from rest at
    the origin to rest 2 m to the side with the same heading in 30 s, -45° <= δ <= 45°,
    -50 <= T <= 50 N m, -300 <= F <= 300 N, minimizing ∫ (F² + T²) dt.  With
    ``dependent_speeds="differenced"`` the NLP is opty's (see :class:`Collocation`).

    The initial guess: opty's, x out to 6 m and back, y rising linearly, every other state
    and the inputs 1.  IPOPT needs ``options={"nlp_scaling_method": "gradient-based"}``
    here, as opty's example sets it.
    """
    eom, constants = car_equations()
    x, y, theta, delta = eom.q
    states = list(eom.q) + list(eom.u)
    T, F = eom.specifieds
    inst = [s.func(0.0) for s in states] + [x.func(duration), y.func(duration) - 2.0]
    inst += [s.func(duration) for s in states[2:]]
    problem = OptimalControlProblem(
        eom, num_nodes=num_nodes, duration=duration, objective=F ** 2 + T ** 2,
        instance_constraints=inst, known_parameters=constants,
        bounds={delta: (-math.pi / 4, math.pi / 4), T: (-50.0, 50.0), F: (-300.0, 300.0)},
        transcription=_collocation(transcription, kwargs), **kwargs)
    s = np.linspace(0.0, 1.0, num_nodes)
    guess: dict = {c: 1.0 for c in states[2:]}
    guess.update({x: np.where(s < 0.5, 6.0 * s, 6.0 - 6.0 * s), y: 2.0 * s, T: 1.0, F: 1.0})
    return problem, guess


def arm_reaching(transcription: str | Collocation = "hermite-simpson", num_nodes: int = 51,
                 duration: float = 1.0, target_deg: float = 120.0,
                 **kwargs) -> tuple[OptimalControlProblem, dict]:
    """Elbow flexion with the musculoskeletal arm (:func:`symbody.models.musculoskeletal_arm`:
    biceps and triceps with DeGroote 2016 muscle and activation dynamics): from the model's
    initial state (75 deg, at rest, both muscles inactive) to ``target_deg`` at rest in
    ``duration`` seconds with the least ``∫ (e_biceps² + e_triceps²) dt``; excitations and
    activations in [0, 1], the elbow within [0, 150] deg.

    The initial guess: the elbow angle linear in time, activations and excitations 0.2.
    """
    from ..models import musculoskeletal_arm
    model = musculoskeletal_arm()
    eom = model.eom
    q, = eom.q
    u, = eom.u
    a_b, a_t = eom.extra_states
    e_b, e_t = eom.specifieds
    q0 = model.initial_state[q]
    q1 = math.radians(target_deg)
    inst = [q.func(0.0) - q0, u.func(0.0), a_b.func(0.0) - model.initial_state[a_b],
            a_t.func(0.0) - model.initial_state[a_t], q.func(duration) - q1, u.func(duration)]
    problem = OptimalControlProblem(
        model, num_nodes=num_nodes, duration=duration, objective=e_b ** 2 + e_t ** 2,
        instance_constraints=inst,
        bounds={e_b: (0.0, 1.0), e_t: (0.0, 1.0), a_b: (0.0, 1.0), a_t: (0.0, 1.0),
                q: (0.0, math.radians(150.0))},
        transcription=_collocation(transcription, kwargs), **kwargs)
    s = np.linspace(0.0, 1.0, num_nodes)
    guess = {q: q0 + (q1 - q0) * s, a_b: 0.2, a_t: 0.2, e_b: 0.2, e_t: 0.2}
    return problem, guess


def cart_pole_horizon(num_nodes: int = 50, period: float = 0.02, force_limit: float = 20.0,
                      transcription: str | Collocation = "backward-euler", track: float = 2.0,
                      **kwargs) -> tuple[OptimalControlProblem, dict]:
    """The horizon problem of a receding-horizon controller
    (:class:`~symbody.optimize.ModelPredictiveController`) for Kelly's cart-pole (cart 1 kg,
    pole 0.3 kg at 0.5 m; the pole upright at q1 = π/2): ``num_nodes`` nodes ``period``
    apart, abs(F) <= ``force_limit``, abs(q0) <= ``track``, minimizing
    ``∫ 5 q0² + 20 (1 - sin q1) + 0.1 (u0² + u1²) + 0.01 F² dt`` (zero upright at the origin;
    ``1 - sin q1`` swings the pole up from anywhere).  No initial conditions: the controller
    fixes the initial state.  The guess of the first solve: the pole turning from hanging
    (q1 = -π/2) to upright over the horizon (from hanging at rest, a guess that stays there is
    a stationary point of the symmetric problem: IPOPT would not leave it).
    """
    from ..models import n_link_pendulum_on_cart
    model = n_link_pendulum_on_cart(1, force=True)
    q0, q1 = model.eom.q
    u0, u1 = model.eom.u
    F, = model.eom.specifieds
    constants = {"g": 9.81, "m0": 1.0, "m1": 0.3, "l0": 0.5}
    cost = 5 * q0 ** 2 + 20 * (1 - sm.sin(q1)) + 0.1 * (u0 ** 2 + u1 ** 2) + 0.01 * F ** 2
    problem = OptimalControlProblem(
        model, num_nodes=num_nodes, duration=period * (num_nodes - 1), objective=cost,
        bounds={F: (-force_limit, force_limit), q0: (-track, track)},
        known_parameters=constants, transcription=_collocation(transcription, kwargs), **kwargs)
    return problem, {q1: np.linspace(-math.pi / 2, math.pi / 2, num_nodes)}


# optimal control through contact (a module of its own; it uses _collocation above)
from .contact_examples import hopper_hop, hopper_mass_centre, jumper_jump, jumper_mass_centre  # noqa: E402,I001
