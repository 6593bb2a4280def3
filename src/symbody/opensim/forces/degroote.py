"""``DeGrooteFregly2016Muscle`` with a rigid tendon, as OpenSim 4.6 computes it, through
SymPy's ``sympy.physics.biomechanics`` (its De Groote 2016 curves and activation dynamics).

With the path length L(q) and L' = J_L u (:mod:`.geometry_path`), fiber width
w = l_opt sin α_opt, and the rigid tendon of slack length l_Ts:

    l_M = sqrt((L - l_Ts)² + w²),   cos α = (L - l_Ts)/l_M,   l̃ = l_M/l_opt
    ṽ   = L' cos α / (v_max l_opt)                   (v_max in optimal lengths per second)
    F_T = F_max (a f_act(x) f_v(ṽ) + f_pas(l̃) + β ṽ) cos α,   x = (l̃ - 1)/s_w + 1
    a'  = [(f + 1/2)/(τ_a z) + (1/2 - f) z/τ_d] (e - a),   f = tanh(b (e - a))/2, z = 1/2 + 3a/2

f_act, f_v: SymPy's ``FiberForceLengthActiveDeGroote2016`` and ``FiberForceVelocityDeGroote2016``
with OpenSim's constants (more digits than the paper's); f_pas: OpenSim's passive curve,
(exp(k(l̃-1)/e0) - c)/(exp(k) - c) with c = exp(k(0.2-1)/e0), which is SymPy's
``FiberForceLengthPassiveDeGroote2016`` (offset 1) rescaled: A f_pas,SymPy + B.  The
activation a' is SymPy's ``FirstOrderActivationDeGroote2016`` with the file's time constants
and smoothing (OpenSim's default 0.1).  The excitation e is an input (``e_<name>``), the
activation a a state (``a_<name>``).  Q = -F_T J_Lᵀ.  A compliant tendon
(``ignore_tendon_compliance`` false) is not built: the muscle is left out, named.
"""

from __future__ import annotations

import math
import re

import symengine as se
import sympy as sm
from sympy.physics.biomechanics import (
    FiberForceLengthActiveDeGroote2016,
    FiberForceLengthPassiveDeGroote2016,
    FiberForceVelocityDeGroote2016,
    FirstOrderActivationDeGroote2016,
)

from . import register_force
from .base import ForceContext, ForceContribution
from .geometry_path import ForceNotBuilt
from .muscles import MuscleRecord, path_of

__all__ = ["degroote_muscle", "OPENSIM_ACTIVE_FL", "OPENSIM_FV"]

#: OpenSim 4.6's constants of the active force-length curve (b11, b21, b31, b41, b12, ...)
OPENSIM_ACTIVE_FL = (0.8150671134243542, 1.055033428970575, 0.162384573599574,
                     0.063303448465465, 0.433004984392647, 0.716775413397760,
                     -0.029947116970696, 0.200356847296188, 0.1, 1.0,
                     0.5 * math.sqrt(0.5), 0.0)
#: OpenSim 4.6's constants of the force-velocity curve (d1..d4)
OPENSIM_FV = (-0.3211346127989808, -8.149, -0.374, 0.8825327733249912)
_KPE, _MIN_NORM_FIBER_LENGTH = 4.0, 0.2


def _ident(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


@register_force("DeGrooteFregly2016Muscle")
def degroote_muscle(element, ctx: ForceContext) -> ForceContribution:
    """The muscle's tendon force on its path, its activation state and excitation input."""
    if not element.flag("ignore_tendon_compliance", False):
        raise ForceNotBuilt("a compliant tendon (ignore_tendon_compliance false) is not built")
    path = path_of(element, ctx)
    num = element.number
    F_max = num("max_isometric_force", 1000.0)
    l_opt = num("optimal_fiber_length", 0.1)
    l_Ts = num("tendon_slack_length", 0.2)
    alpha = num("pennation_angle_at_optimal", 0.0)
    v_max = num("max_contraction_velocity", 10.0)
    width_scale = num("active_force_width_scale", 1.0)
    beta = num("fiber_damping", 0.0)
    e0 = num("passive_fiber_strain_at_one_norm_force", 0.6)
    name = _ident(element.name)
    act = FirstOrderActivationDeGroote2016(
        name, activation_time_constant=sm.Float(num("activation_time_constant", 0.015)),
        deactivation_time_constant=sm.Float(num("deactivation_time_constant", 0.060)),
        smoothing_rate=sm.Float(num("activation_dynamics_smoothing", 0.1)))
    e, a = act.excitation, act.activation
    L, V = sm.symbols("L_MT V_MT")
    width = sm.Float(l_opt * math.sin(alpha))
    along = L - sm.Float(l_Ts)
    l_M = sm.sqrt(along ** 2 + width ** 2)
    cos_p = along / l_M
    l_n = l_M / sm.Float(l_opt)
    v_n = V * cos_p / sm.Float(v_max * l_opt)
    x = (l_n - 1) / sm.Float(width_scale) + 1
    f_act = FiberForceLengthActiveDeGroote2016(x, *map(sm.Float, OPENSIM_ACTIVE_FL)).doit()
    f_v = FiberForceVelocityDeGroote2016(v_n, *map(sm.Float, OPENSIM_FV)).doit()
    if element.flag("ignore_passive_fiber_force", False):
        f_pas = sm.Float(0.0)
    else:
        c = math.exp(_KPE * (_MIN_NORM_FIBER_LENGTH - 1.0) / e0)
        A = (math.exp(_KPE) - 1.0) / (math.exp(_KPE) - c)
        B = (1.0 - c) / (math.exp(_KPE) - c)
        f_pas = sm.Float(A) * FiberForceLengthPassiveDeGroote2016(
            l_n, sm.Float(e0), sm.Float(_KPE)).doit() + sm.Float(B)
    if element.flag("ignore_activation_dynamics", False):
        a_used, extra = e, {}
    else:
        a_used, extra = a, {a: act.rhs()[0]}
    F_T = sm.Float(F_max) * (a_used * f_act * f_v + f_pas + sm.Float(beta) * v_n) * cos_p
    a_se = ctx.symbol(a_used)
    coords = [ctx.coordinate(n) for n in ctx.coordinate_names]
    rate = sum((path.speed_row[c[4]] * c[1] for c in coords), se.Integer(0))
    force = se.sympify(F_T.xreplace({a_used: sm.Symbol(a_se.name)})).xreplace(
        {se.Symbol("L_MT"): path.length, se.Symbol("V_MT"): rate})
    ctx.symbol(e)
    Q = [-force * j for j in path.jacobian]
    return ForceContribution(generalized=Q, specifieds=(e,), extra_states=extra,
                             record=MuscleRecord(element.tag, path, act))
