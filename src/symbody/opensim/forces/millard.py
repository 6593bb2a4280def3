"""``Millard2012EquilibriumMuscle`` with a rigid tendon, as OpenSim 4.6 computes it, with its
Bezier curves (:mod:`.millard_curves`), fixed-width pennation and first-order activation.

With the path length L(q), L' = J_L u (:mod:`.geometry_path`), fiber width h = l_opt sin α_opt
and the rigid tendon of slack length l_Ts (OpenSim's ``MuscleFixedWidthPennationModel``):

    l_M = max(sqrt(h² + (L - l_Ts)²), l_min),   sin α = h/l_M,   l̃ = l_M/l_opt
    ṽ   = L' cos α / (v_max l_opt)              (0 while the tendon is slack: L - l_M cos α < l_Ts)
    F_M = F_max (a f_L(l̃) f_V(ṽ) + f_PE(l̃) + β ṽ),   F_T = max(F_M, 0) cos α
    a'  = (e - a_c)/τ,  τ = τ_a (1/2 + 3a_c/2) if e > a_c else τ_d/(1/2 + 3a_c/2)

with a_c = clamp(a_min, a, 1), l_min = max(l̃_min,act l_opt, h/sin α_max) and F_T = 0 while the
fiber is at l_min and shortening (OpenSim's clamped fiber state).  As OpenSim does for the rigid
tendon, the active force-length curve's minimum value and the force-velocity curve's slopes at
±v_max are set to 0 when positive.  The excitation e is an input (``e_<name>``), the activation
a a state (``a_<name>``), Q = -F_T J_Lᵀ.

The compliant tendon (OpenSim's default; state ``fiber_length``, the fiber velocity solving
the damped equilibrium a f_L f_V(ṽ) + f_PE + β ṽ = f_T/cos α, which
:func:`~.bezier_curves.solve_combination` writes exactly) is not built yet: its fiber-length
derivative is a symengine program (bisection and Newton steps sharing subexpressions) that the
SymPy path of extra-state derivatives would expand as a tree; such a muscle keeps its path
(lengths, moment arms) and is named in ``model.left_out``.
"""

from __future__ import annotations

import math
import re

import symengine as se
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from . import register_force
from .base import ForceContext, ForceContribution
from .bezier_curves import BezierCurve
from .millard_curves import curve_from_element, curve_parameters
from .muscles import MuscleRecord, path_of

__all__ = ["millard_muscle", "MillardRecord", "millard_curves_of"]

_SIGNIFICANT = 2.0 ** (-52 * 7 / 8)        # SimTK::SignificantReal
_MIN_DAMPING = 0.001


def _ident(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


class MillardRecord(MuscleRecord):
    """A Millard muscle's record: its path, the SymPy excitation and activation, the curves
    in use (``curves``: {"ActiveForceLengthCurve": BezierCurve, ...}) and ``tendon_force``
    (symengine, in the model's internal symbols)."""

    def __init__(self, tag, path, excitation, activation, curves, tendon_force):
        super().__init__(tag, path, None)
        self.excitation, self.activation = excitation, activation
        self.curves, self.tendon_force = curves, tendon_force


def millard_curves_of(element, rigid_or_damped: bool = True) -> dict:
    """The four curves of a ``Millard2012EquilibriumMuscle`` element, adjusted as OpenSim
    adjusts them for the rigid-tendon or damped model (f_L's minimum 0, f_V's slopes at
    ±v_max 0, when positive)."""
    name = element.name
    out = {}
    for tag in ("ActiveForceLengthCurve", "ForceVelocityCurve", "FiberForceLengthCurve",
                "TendonForceLengthCurve"):
        sub = element.find(tag)
        p = curve_parameters(tag, sub)
        if rigid_or_damped and tag == "ActiveForceLengthCurve":
            p["minimum_value"] = min(p["minimum_value"], 0.0)
        if rigid_or_damped and tag == "ForceVelocityCurve":
            p["concentric_slope_at_vmax"] = min(p["concentric_slope_at_vmax"], 0.0)
            p["eccentric_slope_at_vmax"] = min(p["eccentric_slope_at_vmax"], 0.0)
        try:
            out[tag] = curve_from_element(tag, None, name=f"{name}_{tag}", **p)
        except ValueError as exc:
            raise element.error(f"{element.tag} {name!r}: {exc}") from None
    return out


def _clamp_below(x, lo: float):
    return se.Piecewise((se.RealDouble(lo), se.Lt(x, se.RealDouble(lo))), (x, se.true))


@register_force("Millard2012EquilibriumMuscle")
def millard_muscle(element, ctx: ForceContext) -> ForceContribution:
    """The muscle's tendon force on its path, its activation state and excitation input."""
    path = path_of(element, ctx)
    if not element.flag("ignore_tendon_compliance", False):
        return ForceContribution(
            record=MuscleRecord(element.tag, path),
            left_out="its compliant tendon (state fiber_length) is not built: its path only "
                     "(lengths and moment arms), no force")
    if path.wraps:
        return ForceContribution(
            record=MuscleRecord(element.tag, path),
            left_out=f"its force over the wrap object {path.wraps[0]!r} is not built: its path "
                     "only (lengths and moment arms), no force")
    num = element.number
    F_max = num("max_isometric_force", 1000.0)
    l_opt = num("optimal_fiber_length", 0.1)
    l_Ts = num("tendon_slack_length", 0.2)
    alpha = num("pennation_angle_at_optimal", 0.0)
    v_max = num("max_contraction_velocity", 10.0)
    beta = num("fiber_damping", 0.1)
    beta = 0.0 if beta < _MIN_DAMPING else beta
    a_min = min(max(num("minimum_activation", 0.01), 0.0), 1.0)
    alpha_max = num("maximum_pennation_angle", math.acos(0.1))
    tau_a = num("activation_time_constant", 0.010)
    tau_d = num("deactivation_time_constant", 0.040)
    curves = millard_curves_of(element)
    fal, fv, fpe = (curves["ActiveForceLengthCurve"], curves["ForceVelocityCurve"],
                    curves["FiberForceLengthCurve"])
    # fixed-width pennation: the minimum fiber lengths
    h = l_opt * math.sin(alpha)
    l_pen_min = h / math.sin(alpha_max) if alpha_max > _SIGNIFICANT else 0.01 * l_opt
    l_pen_min_along = l_pen_min * math.cos(alpha_max)
    l_min = max(_SIGNIFICANT, max(fal.x0 * l_opt, l_pen_min))
    pennated = alpha > 2.220446049250313e-16
    R = se.RealDouble
    L = path.length
    coords = [ctx.coordinate(n) for n in ctx.coordinate_names]
    V = sum((path.jacobian[c[4]] * c[1] for c in coords), se.Integer(0))
    along = L - R(l_Ts)
    l_raw = se.Piecewise((se.sqrt(R(h * h) + along ** 2), se.Le(R(l_pen_min_along), along)),
                         (R(l_pen_min), se.true))
    l_M = _clamp_below(l_raw, l_min)
    cos_p = se.sqrt(1 - (R(h) / l_M) ** 2) if pennated else se.Integer(1)
    l_n = l_M / R(l_opt)
    slack = se.Lt(L - l_M * cos_p, R(l_Ts - _SIGNIFICANT))
    v_n = se.Piecewise((se.Integer(0), slack), (V * cos_p / R(v_max * l_opt), se.true))
    f_v = se.Piecewise((se.Integer(1), slack), (_value(fv, v_n), se.true))
    # the activation and its dynamics
    name = _ident(element.name)
    e = dynamicsymbols(f"e_{name}")
    e_se = ctx.symbol(e)
    if element.flag("ignore_activation_dynamics", False):
        a_used, extra = e_se, {}
        a_sym = None
    else:
        a_sym = dynamicsymbols(f"a_{name}")
        a_used = ctx.symbol(a_sym)
        ac = sm.Min(sm.Max(a_sym, sm.Float(a_min)), 1)
        tau = sm.Piecewise((sm.Float(tau_a) * (sm.Rational(1, 2) + sm.Rational(3, 2) * ac), e > ac),
                           (sm.Float(tau_d) / (sm.Rational(1, 2) + sm.Rational(3, 2) * ac), True))
        extra = {a_sym: (e - ac) / tau}
    a_c = se.Piecewise((R(a_min), se.Lt(a_used, R(a_min))), (se.Integer(1), se.Lt(1, a_used)),
                       (a_used, se.true))
    F_M = R(F_max) * (a_c * _value(fal, l_n) * f_v + _value(fpe, l_n) + R(beta) * v_n)
    clamped = se.And(se.Le(l_raw, R(l_min)), se.Le(v_n, 0))
    F_T = se.Piecewise((se.Integer(0), clamped), (se.Integer(0), se.Lt(F_M, 0)),
                       (F_M * cos_p, se.true))
    Q = [-F_T * j for j in path.jacobian]
    record = MillardRecord(element.tag, path, e, a_sym, curves, F_T)
    return ForceContribution(generalized=Q, specifieds=(e,), extra_states=extra, record=record)


def _value(curve: BezierCurve, x):
    return curve.expressions(x)[0]
