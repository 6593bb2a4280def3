"""``Millard2012EquilibriumMuscle`` as OpenSim 4.6 computes it: its Bezier curves
(:mod:`.millard_curves`), fixed-width pennation, first-order activation, and a rigid or a
compliant (damped or classic-Hill) tendon.

With the path length L(q), L' = J_L u (:mod:`.geometry_path`), fiber width h = l_opt sin α_opt,
l_min = max(l̃_min,act l_opt, h/sin α_max), the fiber length l_M clamped to l_min, sin α = h/l_M,
l̃ = l_M/l_opt, a_c = clamp(a_min, a, 1) and

    a' = (e - a_c)/τ,   τ = τ_a (1/2 + 3a_c/2) if e > a_c else τ_d/(1/2 + 3a_c/2)

Rigid tendon (``ignore_tendon_compliance``): l_M = sqrt(h² + (L - l_Ts)²),
ṽ = L' cos α / (v_max l_opt) (0 while the tendon is slack),
F_M = F_max (a_c f_L(l̃) f_V(ṽ) + f_PE(l̃) + β ṽ), F_T = max(F_M, 0) cos α.

Compliant tendon (the default; state l_M, ``lM_<name>``): F_T = F_max f_T((L - l_M cos α)/l_Ts)
and l_M' = v_max l_opt ṽ with ṽ solving the damped equilibrium (β > 0)

    a_c f_L f_V(ṽ) + f_PE + β ṽ = f_T / cos α

written exactly by :func:`~.bezier_curves.solve_combination` (OpenSim iterates Newton's method
to a force error of 1e-10 F_max), or without damping ṽ = f_V⁻¹((f_T/cos α - f_PE)/(a_c f_L)).

F_T = 0 (rigid) or l_M' = 0 (compliant) while the fiber is at l_min and shortening (OpenSim's
clamped fiber state).  The curves are adjusted as OpenSim adjusts them
(:func:`millard_curves_of`).  The excitation e is an input (``e_<name>``), the activation a a
state (``a_<name>``), Q = -F_T J_Lᵀ.  The compliant tendon's derivative is a symengine program
of shared subexpressions (bisection and Newton steps), kept small by the equations' symengine
path of extra-state derivatives.
"""

from __future__ import annotations

import math
import re

import symengine as se
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from . import register_force
from .base import ForceContext, ForceContribution
from .bezier_curves import BezierCurve, solve_combination
from .millard_curves import curve_from_element, curve_parameters, force_velocity_inverse_curve
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
    (symengine, in the model's internal symbols), ``fiber_length``: the SymPy state of the
    compliant tendon's fiber length (None: rigid tendon)."""

    def __init__(self, tag, path, excitation, activation, curves, tendon_force,
                 fiber_length=None):
        super().__init__(tag, path, None)
        self.excitation, self.activation = excitation, activation
        self.curves, self.tendon_force = curves, tendon_force
        self.fiber_length = fiber_length


def millard_curves_of(element, classic_hill: bool = False) -> dict:
    """The four curves of a ``Millard2012EquilibriumMuscle`` element, adjusted as OpenSim
    adjusts them: for the rigid-tendon or damped model f_L's minimum and f_V's slopes at
    ±v_max lowered to 0; for the compliant undamped (classic Hill) model f_L's minimum
    raised to 0.1 and f_V's slopes at ±v_max to half the slopes near v_max."""
    name = element.name
    out = {}
    for tag in ("ActiveForceLengthCurve", "ForceVelocityCurve", "FiberForceLengthCurve",
                "TendonForceLengthCurve"):
        sub = element.find(tag)
        p = curve_parameters(tag, sub)
        if tag == "ActiveForceLengthCurve":
            p["minimum_value"] = (max(p["minimum_value"], 0.1) if classic_hill
                                  else min(p["minimum_value"], 0.0))
        if tag == "ForceVelocityCurve":
            for end in ("concentric", "eccentric"):
                at, near = f"{end}_slope_at_vmax", f"{end}_slope_near_vmax"
                p[at] = max(p[at], 0.5 * p[near]) if classic_hill else min(p[at], 0.0)
        try:
            out[tag] = curve_from_element(tag, None, name=f"{name}_{tag}", **p)
        except ValueError as exc:
            raise element.error(f"{element.tag} {name!r}: {exc}") from None
    return out


def fv_inverse_of(element):
    """OpenSim's inverse force-velocity curve of the element's force-velocity parameters
    (end slopes half the slopes near v_max: finite)."""
    p = curve_parameters("ForceVelocityCurve", element.find("ForceVelocityCurve"))
    p["concentric_slope_at_vmax"] = 0.5 * p["concentric_slope_near_vmax"]
    p["eccentric_slope_at_vmax"] = 0.5 * p["eccentric_slope_near_vmax"]
    try:
        return force_velocity_inverse_curve(**p, name=f"{element.name}_ForceVelocityInverse")
    except ValueError as exc:
        raise element.error(f"{element.tag} {element.name!r}: {exc}") from None


def _clamp_below(x, lo: float):
    return se.Piecewise((se.RealDouble(lo), se.Lt(x, se.RealDouble(lo))), (x, se.true))


@register_force("Millard2012EquilibriumMuscle")
def millard_muscle(element, ctx: ForceContext) -> ForceContribution:
    """The muscle's tendon force on its path, its activation state and excitation input."""
    path = path_of(element, ctx)
    compliant = not element.flag("ignore_tendon_compliance", False)
    par = _parameters(element, compliant)
    name = _ident(element.name)
    R = se.RealDouble
    L = path.length
    coords = [ctx.coordinate(n) for n in ctx.coordinate_names]
    V = sum((path.speed_row[c[4]] * c[1] for c in coords), se.Integer(0))
    # the activation and its dynamics
    e = dynamicsymbols(f"e_{name}")
    e_se = ctx.symbol(e)
    extra: dict = {}
    a_sym = None
    if element.flag("ignore_activation_dynamics", False):
        a_used = e_se
    else:
        a_sym = dynamicsymbols(f"a_{name}")
        a_used = ctx.symbol(a_sym)
        ac = sm.Min(sm.Max(a_sym, sm.Float(par.a_min)), 1)
        half, three_halves = sm.Rational(1, 2), sm.Rational(3, 2)
        tau = sm.Piecewise((sm.Float(par.tau_a) * (half + three_halves * ac), e > ac),
                           (sm.Float(par.tau_d) / (half + three_halves * ac), True))
        extra[a_sym] = (e - ac) / tau
    a_c = se.Piecewise((R(par.a_min), se.Lt(a_used, R(par.a_min))),
                       (se.Integer(1), se.Lt(1, a_used)), (a_used, se.true))
    if compliant:
        l_sym = dynamicsymbols(f"lM_{name}")
        F_T, l_dot = _compliant_tendon(par, ctx.symbol(l_sym), L, a_c)
        extra[l_sym] = l_dot
    else:
        l_sym = None
        F_T = _rigid_tendon(par, L, V, a_c)
    Q = [-F_T * j for j in path.jacobian]
    record = MillardRecord(element.tag, path, e, a_sym, par.curves, F_T, l_sym)
    return ForceContribution(generalized=Q, specifieds=(e,), extra_states=extra, record=record)


class _Parameters:
    """A Millard muscle's numbers, curves and minimum fiber lengths (OpenSim's defaults)."""

    def __init__(self, element, compliant: bool):
        num = element.number
        self.F_max = num("max_isometric_force", 1000.0)
        self.l_opt = num("optimal_fiber_length", 0.1)
        self.l_Ts = num("tendon_slack_length", 0.2)
        self.alpha = num("pennation_angle_at_optimal", 0.0)
        self.v_max = num("max_contraction_velocity", 10.0)
        beta = num("fiber_damping", 0.1)
        self.beta = 0.0 if beta < _MIN_DAMPING else beta
        self.damped = self.beta > 0
        a_min = num("minimum_activation", 0.01)
        hill = compliant and not self.damped
        if hill and a_min < 0.01:
            raise element.error(f"{element.tag} {element.name!r}: minimum_activation must be at "
                                "least 0.01 with a compliant tendon and no fiber damping")
        self.a_min = a_min if hill else min(max(a_min, 0.0), 1.0)
        self.alpha_max = num("maximum_pennation_angle", math.acos(0.1))
        self.tau_a = num("activation_time_constant", 0.010)
        self.tau_d = num("deactivation_time_constant", 0.040)
        self.curves = millard_curves_of(element, classic_hill=hill)
        self.fal = self.curves["ActiveForceLengthCurve"]
        self.fv = self.curves["ForceVelocityCurve"]
        self.fpe = self.curves["FiberForceLengthCurve"]
        self.fse = self.curves["TendonForceLengthCurve"]
        if hill:
            self.fv_inverse = fv_inverse_of(element)
        # fixed-width pennation: the minimum fiber lengths
        self.h = self.l_opt * math.sin(self.alpha)
        self.l_pen_min = (self.h / math.sin(self.alpha_max) if self.alpha_max > _SIGNIFICANT
                          else 0.01 * self.l_opt)
        self.l_pen_min_along = self.l_pen_min * math.cos(self.alpha_max)
        self.l_min = max(_SIGNIFICANT, max(self.fal.x0 * self.l_opt, self.l_pen_min))
        self.pennated = self.alpha > 2.220446049250313e-16

    def cos_pennation(self, l_M):
        if not self.pennated:
            return se.Integer(1)
        return se.sqrt(1 - (se.RealDouble(self.h) / l_M) ** 2)


def _parameters(element, compliant: bool) -> _Parameters:
    return _Parameters(element, compliant)


def _rigid_tendon(par: _Parameters, L, V, a_c):
    """F_T of the rigid tendon (module docstring)."""
    R = se.RealDouble
    along = L - R(par.l_Ts)
    l_raw = se.Piecewise((se.sqrt(R(par.h * par.h) + along ** 2),
                          se.Le(R(par.l_pen_min_along), along)), (R(par.l_pen_min), se.true))
    l_M = _clamp_below(l_raw, par.l_min)
    cos_p = par.cos_pennation(l_M)
    l_n = l_M / R(par.l_opt)
    slack = se.Lt(L - l_M * cos_p, R(par.l_Ts - _SIGNIFICANT))
    v_n = se.Piecewise((se.Integer(0), slack), (V * cos_p / R(par.v_max * par.l_opt), se.true))
    f_v = se.Piecewise((se.Integer(1), slack), (_value(par.fv, v_n), se.true))
    F_M = R(par.F_max) * (a_c * _value(par.fal, l_n) * f_v + _value(par.fpe, l_n)
                          + R(par.beta) * v_n)
    clamped = se.And(se.Le(l_raw, R(par.l_min)), se.Le(v_n, 0))
    return se.Piecewise((se.Integer(0), clamped), (se.Integer(0), se.Lt(F_M, 0)),
                        (F_M * cos_p, se.true))


def _compliant_tendon(par: _Parameters, l_state, L, a_c) -> tuple:
    """(F_T, l_M') of the compliant tendon: F_T = F_max f_T(l̃_T), l_T = L - l_M cos α, and the
    fiber velocity from a f_L f_V(ṽ) + f_PE + β ṽ = f_T/cos α (damped; exact by
    :func:`~.bezier_curves.solve_combination`) or f_V = (f_T/cos α - f_PE)/(a f_L),
    ṽ = f_V⁻¹ (no damping); 0 while the fiber is at l_min and shortening."""
    R = se.RealDouble
    l_M = _clamp_below(l_state, par.l_min)
    cos_p = par.cos_pennation(l_M)
    l_n = l_M / R(par.l_opt)
    f_T = _value(par.fse, (L - l_M * cos_p) / R(par.l_Ts))
    f_L, f_PE = _value(par.fal, l_n), _value(par.fpe, l_n)
    if par.damped:
        v_n, _ = solve_combination(par.fv, a_c * f_L, par.beta, f_T / cos_p - f_PE)
    else:
        v_n = _value(par.fv_inverse, (f_T / cos_p - f_PE) / (a_c * f_L))
    v = v_n * R(par.l_opt * par.v_max)
    clamped = se.And(se.Le(l_state, R(par.l_min)), se.Le(v, 0))
    l_dot = se.Piecewise((se.Integer(0), clamped), (v, se.true))
    return R(par.F_max) * f_T, l_dot


def _value(curve: BezierCurve, x):
    return curve.expressions(x)[0]
