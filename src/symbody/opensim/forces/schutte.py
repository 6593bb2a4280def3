"""``Schutte1993Muscle_Deprecated`` (compliant tendon, Schutte's activation and damped
force-velocity) as OpenSim 4.6 computes it.

States, in OpenSim's order: the activation a (``<muscle>.activation``) and the fiber length
l (``<muscle>.fiber_length``); input: the excitation e (``e_<muscle>``).  With the path
length L(q) and lengthening speed L' (:mod:`.geometry_path`), l_opt, l_Ts, F_iso, φ_opt,
time_scale s, activation1/2 (c1, c2), damping d and the file's curves f_T, f_L, f_P:

    l̃ = l/l_opt,  sin φ = sin φ_opt / l̃ (φ = π/2 when ≥ 1),  l̃_T = L/l_opt - l̃ cos φ
    ε = (l̃_T - l_Ts/l_opt)/(l_Ts/l_opt),  F_T = f_T(ε) (0 when ε < 0),  F_A = max(f_L(l̃), 0)
    F_P = f_P(l̃)  (e^{8(l̃-1)}/e^4 when the file gives no passive curve)
    F_v = max(F_T/cos φ - F_P, 0);  ṽ = (-b - √(b²-4c))/2 with c = k(F_v - aF_A)/d,
      b = -k(F_v/k + aF_A + d)/d  when F_v < aF_A; else ṽ = (-b + √(b²-4c))/2 with
      c = -(σk/(d(k+1)))(F_v - aF_A), b = -(F_v/d - 1.4 aF_A/d - σk/(k+1))  (k=.15, σ=.13)
    l' = ṽ l_opt / s   (when cos φ = 0: 0 if F_T = 0, else L' cos φ_new with OpenSim's φ_new)
    a' = (e - a)(c1 e + c2)/s if e ≥ a else (e - a) c2/s

The tendon force F_iso F_T acts along the path: Q = -F_iso F_T J_Lᵀ.  A missing tendon or
active force-length curve is OpenSim's default SimmSpline (its constructProperties points).
"""

from __future__ import annotations

import math

import symengine as se
from sympy.physics.mechanics import dynamicsymbols

from ..functions import SimmSplineFunction, function_of
from ..xml_tree import _xml_tree
from . import register_force
from .base import ForceContext, ForceContribution
from .muscles import path_of
from .thelen import ThelenRecord, _ident

__all__ = ["schutte_muscle", "schutte_fiber_velocity"]

_EPS = 2.220446049250313e-16               # SimTK::Eps
_ROUNDOFF = 0.0000000000002                # OpenSim's ROUNDOFF_ERROR (SimmMacros.h)
_KV, _SLOPE_K, _FMAX = 0.15, 0.13, 1.4
#: OpenSim's default curves (Schutte1993Muscle_Deprecated::constructProperties), x and y
_DEFAULT_CURVES = {
    "tendon_force_length_curve": (
        "-10 -0.002 -0.001 0 0.00131 0.00281 0.00431 0.00581 0.00731 0.00881 0.0103 0.0118 "
        "0.0123 9.2 9.201 9.202 20",
        "0 0 0 0 0.0108 0.0257 0.0435 0.0652 0.0915 0.123 0.161 0.208 0.227 345 345 345 345"),
    "active_force_length_curve": (
        "-5.307692 -4.307692 -1.923077 -0.884615 -0.269231 0.230769 0.461538 0.52725 0.62875 "
        "0.71875 0.86125 1.045 1.2175 1.43875 1.5 1.615385 2 2.961538 3.692308 5.461538 "
        "9.901902",
        "0.012188 0.021899 0.036466 0.052493 0.075312 0.114158 0.157859 0.226667 0.636667 "
        "0.856667 0.95 0.993333 0.77 0.246667 0.193821 0.133252 0.072683 0.044417 0.036341 "
        "0.021899 0.007332"),
}


def _default_curve(tag: str) -> SimmSplineFunction:
    x, y = _DEFAULT_CURVES[tag]
    return SimmSplineFunction(_xml_tree(f'<SimmSpline name="{tag}"><x>{x}</x><y>{y}</y>'
                                        "</SimmSpline>", f"OpenSim's default {tag}"))


def schutte_fiber_velocity(a, active, F_v, damping: float):
    """Schutte's inverse force-velocity relation with damping: the normalized fiber velocity
    at activation ``a``, active force-length ``active`` and velocity-dependent force
    ``F_v`` ≥ 0 (OpenSim's calcFiberVelocity; its branch F_v < -d cannot occur; symengine)."""
    d, k = damping, _KV
    aF = a * active
    c_con = k * (F_v - aF) / d
    b_con = -k * (F_v / k + aF + d) / d
    c_ecc = -(_SLOPE_K * k / (d * (k + 1))) * (F_v - aF)
    b_ecc = -(F_v / d - _FMAX * aF / d - _SLOPE_K * k / (k + 1))
    return se.Piecewise(((-b_con - se.sqrt(b_con * b_con - 4 * c_con)) / 2, F_v < aF),
                        ((-b_ecc + se.sqrt(b_ecc * b_ecc - 4 * c_ecc)) / 2, True))


def _pennation(l_n, sin_opt: float):
    """OpenSim's calcPennation(l̃, 1, φ_opt): asin(sin φ_opt / l̃), 0 and π/2 at the ends."""
    if sin_opt <= 0.0:
        return se.Integer(0)
    value = sin_opt / l_n
    return se.Piecewise((se.Integer(0), l_n < _EPS), (se.Integer(0), value <= 0),
                        (se.Float(math.pi / 2), value >= 1), (se.asin(value), True))


@register_force("Schutte1993Muscle_Deprecated")
def schutte_muscle(element, ctx: ForceContext) -> ForceContribution:
    """The tendon force on the muscle's path, its activation and fiber-length states."""
    path = path_of(element, ctx)
    num = element.number
    F_iso = num("max_isometric_force", 1000.0)
    l_opt = num("optimal_fiber_length", 0.1)
    l_Ts = num("tendon_slack_length", 0.2)
    phi_opt = num("pennation_angle_at_optimal", 0.0)
    s = num("time_scale", 0.1)
    c1, c2 = num("activation1", 7.667), num("activation2", 1.459854)
    damping = num("damping", 0.1)
    for what, ok in (("optimal_fiber_length", l_opt > _ROUNDOFF),
                     ("tendon_slack_length", l_Ts > _ROUNDOFF), ("time_scale", s > 0),
                     ("damping", damping > 0)):
        if not ok:
            raise element.error(f"<{what}> must be positive for the Schutte1993Muscle_Deprecated"
                                " dynamics to be built")
    curves = {}
    for tag in ("tendon_force_length_curve", "active_force_length_curve",
                "passive_force_length_curve"):
        curves[tag] = function_of(element, tag)
        if curves[tag] is None and tag != "passive_force_length_curve":
            curves[tag] = _default_curve(tag)
    name = element.name
    a_f, l_f, e_f = (dynamicsymbols(f"{name}.activation"), dynamicsymbols(f"{name}.fiber_length"),
                     dynamicsymbols(f"e_{_ident(name)}"))
    a, l, e = (ctx.symbol(x) for x in (a_f, l_f, e_f))
    sin_opt = math.sin(phi_opt)
    l_n = l / l_opt
    ca = se.cos(_pennation(l_n, sin_opt))
    norm_mt = path.length / l_opt
    rest = l_Ts / l_opt
    strain = (norm_mt - l_n * ca - rest) / rest
    f_T = se.Piecewise((se.Integer(0), strain < 0),
                       (curves["tendon_force_length_curve"].expression([strain]), True))
    f_P = (curves["passive_force_length_curve"].expression([l_n])
           if curves["passive_force_length_curve"] is not None
           else se.exp(8.0 * (l_n - 1)) / math.exp(4.0))
    f_A = se.Max(curves["active_force_length_curve"].expression([l_n]), se.Integer(0))
    F_v = se.Max(f_T / ca - f_P, se.Integer(0))
    v_n = schutte_fiber_velocity(a, f_A, F_v, damping)
    coords = [ctx.coordinate(n) for n in ctx.coordinate_names]
    speed = sum((path.speed_row[c[4]] * c[1] for c in coords), se.Integer(0))
    h = norm_mt - l_Ts                    # OpenSim mixes normalized and absolute lengths here
    w = l_opt * sin_opt
    new_ca = se.cos(_pennation(se.sqrt(h * h + w * w) / l_opt, sin_opt))
    stiff = se.Piecewise((se.Integer(0), se.Abs(f_T) <= _ROUNDOFF),
                         (speed * s / l_opt * new_ca, True))
    v_all = se.Piecewise((stiff, se.Abs(ca) <= _ROUNDOFF), (v_n, True))
    l_dot = v_all * (l_opt / s)
    a_dot = se.Piecewise(((e - a) * (c1 * e + c2), e >= a), ((e - a) * c2, True)) / s
    force = F_iso * f_T
    Q = [-force * j for j in path.jacobian]
    return ForceContribution(generalized=Q, specifieds=(e_f,),
                             extra_states={a_f: a_dot, l_f: l_dot},
                             record=ThelenRecord(element.tag, path, a_f, l_f, e_f, force))
