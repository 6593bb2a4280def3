"""``Thelen2003Muscle`` (compliant tendon, first-order activation) as OpenSim 4.6 computes it.

States, in OpenSim's order: the activation a (``<muscle>.activation``) and the fiber length
l (``<muscle>.fiber_length``); input: the excitation e (``e_<muscle>``).  With the path
length L(q) (:mod:`.geometry_path`), l_opt, l_Ts, F_iso and v_max (optimal lengths per
second) from the file and the file's curve constants (OpenSim's defaults otherwise):

    l_c = max(l, l_min),  sin φ = h/l_c,  h = l_opt sin φ_opt  (fixed-width pennation)
    l̃ = l_c/l_opt,   ε_T = (L - l_c cos φ)/l_Ts - 1,   a_c = min(max(a, a_min), 1)
    f_T(ε_T): 0 (ε_T ≤ 0); F_toe (e^{k_toe ε_T/ε_toe} - 1)/(e^{k_toe} - 1); k_lin (ε_T - ε_toe) + F_toe
    f_L = exp(-(l̃ - 1)²/γ),   f_PE = (e^{k_PE (l̃ - 1)/ε_0^M} - 1)/(e^{k_PE} - 1)  (l̃ > 1, else 0)
    F_m = f_T/cos φ - f_PE      (= a f_L f_V: the force-velocity relation inverted below)
    l' = v_max l_opt ṽ(a_c, a_c f_L, F_m)    (Thelen 2003 eq. 6-7, linear beyond F = 0 and
                                              beyond fv_linear_extrap_threshold · F_len a f_L)
    a' = (e - a_c)/τ,   τ = τ_a (1/2 + 3a_c/2) if e > a_c else τ_d/(1/2 + 3a_c/2)

l' = 0 when the fiber is at its minimum length and would shorten (OpenSim's clamp).  The
tendon force F_iso f_T acts along the path: Q = -F_iso f_T J_Lᵀ.  OpenSim 4.6 refuses
``ignore_tendon_compliance`` and ``ignore_activation_dynamics`` for this muscle ("flag is not
currently implemented"); so does this builder (the muscle is left out, named).
"""

from __future__ import annotations

import math
import re

import symengine as se
from sympy.physics.mechanics import dynamicsymbols

from . import register_force
from .base import ForceContext, ForceContribution
from .geometry_path import ForceNotBuilt
from .muscles import MuscleRecord, path_of

__all__ = ["thelen_muscle", "ThelenRecord", "tendon_force_curve", "fiber_velocity_curve"]

_EPS = 2.220446049250313e-16               # SimTK::Eps
_SIGNIFICANT = _EPS ** 0.875               # SimTK::SignificantReal


def _ident(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


class ThelenRecord(MuscleRecord):
    """``model.forces[name]`` of a Thelen2003Muscle: its path plus ``activation``,
    ``fiber_length`` (the state functions), ``excitation`` (the input) and ``tendon_force``
    (symengine, in q and the states)."""

    def __init__(self, tag, path, activation, fiber_length, excitation, tendon_force):
        super().__init__(tag, path)
        self.activation, self.fiber_length = activation, fiber_length
        self.excitation, self.tendon_force = excitation, tendon_force


def tendon_force_curve(strain, e0: float):
    """Thelen's normalized tendon force f_T(ε_T) (OpenSim's exact toe constants): exponential
    toe up to ε_toe = 99 e0 e³/(166 e³ - 67), then linear of slope k_lin; 0 when slack
    (symengine)."""
    e3 = math.exp(3.0)
    e_toe = 99.0 * e0 * e3 / (166.0 * e3 - 67.0)
    k_lin = 0.67 / (e0 - e_toe)
    f_toe = 0.33
    toe = f_toe / (e3 - 1.0) * (se.exp(3.0 / e_toe * strain) - 1)
    return se.Piecewise((k_lin * (strain - e_toe) + f_toe, strain > e_toe),
                        (toe, strain > 0), (se.Integer(0), True))


def fiber_velocity_curve(a, afl, Fm, af: float, flen: float, threshold: float):
    """Thelen 2003 eq. 6-7 solved for the normalized fiber velocity ṽ at activation ``a``,
    a f_L = ``afl`` and the fiber force a f_L f_V = ``Fm``; linear in Fm below 0 and above
    ``threshold`` · flen · afl, continuing the curve's value and slope there (OpenSim;
    symengine)."""
    gain = 0.25 + 0.75 * a
    ecc = (2 + 2 / af) / (flen - 1)

    def b_con(F):
        return afl + F / af

    def b_ecc(F):
        return ecc * (afl * flen - F)

    def extrapolated(F0, b, db):
        return gain * (F0 - afl) / b + (gain / b - gain * (F0 - afl) / b ** 2 * db) * (Fm - F0)

    F_hi = threshold * flen * afl
    return se.Piecewise((extrapolated(0, b_con(0), 1 / af), Fm <= 0),
                        (gain * (Fm - afl) / b_con(Fm), Fm <= afl),
                        (gain * (Fm - afl) / b_ecc(Fm), Fm < F_hi),
                        (extrapolated(F_hi, b_ecc(F_hi), -ecc), True))


@register_force("Thelen2003Muscle")
def thelen_muscle(element, ctx: ForceContext) -> ForceContribution:
    """The tendon force on the muscle's path, its activation and fiber-length states."""
    for flag in ("ignore_tendon_compliance", "ignore_activation_dynamics"):
        if element.flag(flag, False):
            raise ForceNotBuilt(f"{flag} is set, which OpenSim 4.6 refuses for a "
                                "Thelen2003Muscle too ('flag is not currently implemented')")
    path = path_of(element, ctx)
    num = element.number
    F_iso = num("max_isometric_force", 1000.0)
    l_opt = num("optimal_fiber_length", 0.1)
    l_Ts = num("tendon_slack_length", 0.2)
    phi_opt = num("pennation_angle_at_optimal", 0.0)
    phi_max = num("maximum_pennation_angle", math.acos(0.1))
    v_max = num("max_contraction_velocity", 10.0)
    a_min = num("minimum_activation", 0.01)
    tau_a, tau_d = num("activation_time_constant", 0.015), num("deactivation_time_constant", 0.05)
    e0_T, e0_M = num("FmaxTendonStrain", 0.04), num("FmaxMuscleStrain", 0.6)
    k_act, k_pe = num("KshapeActive", 0.45), num("KshapePassive", 5.0)
    af, flen = num("Af", 0.25), num("Flen", 1.4)
    threshold = num("fv_linear_extrap_threshold", 0.95)
    for what, ok in (("FmaxTendonStrain", e0_T > 0), ("FmaxMuscleStrain", e0_M > 0),
                     ("KshapeActive", k_act > 0), ("KshapePassive", k_pe > 0), ("Af", af > 0),
                     ("Flen", flen > 1), ("fv_linear_extrap_threshold", threshold > 1 / flen),
                     ("minimum_activation", a_min >= 0.01), ("optimal_fiber_length", l_opt > 0),
                     ("pennation_angle_at_optimal", 0 <= phi_opt < math.pi / 2 - _SIGNIFICANT),
                     ("maximum_pennation_angle", 0 <= phi_max <= math.pi / 2)):
        if not ok:
            raise element.error(f"<{what}> is out of its range (OpenSim refuses it too)")
    name = element.name
    a_f, l_f, e_f = (dynamicsymbols(f"{name}.activation"), dynamicsymbols(f"{name}.fiber_length"),
                     dynamicsymbols(f"e_{_ident(name)}"))
    a, l, e = (ctx.symbol(x) for x in (a_f, l_f, e_f))
    h = l_opt * math.sin(phi_opt)
    l_min = h / math.sin(phi_max) if phi_max > _SIGNIFICANT else 0.01 * l_opt
    l_c = se.Max(l, se.Float(l_min))
    if phi_opt > _EPS:
        cos_phi = se.sqrt(1 - h ** 2 / l_c ** 2) if phi_max > _SIGNIFICANT \
            else se.Float(math.cos(phi_max))
    else:
        cos_phi = se.Integer(1)
    l_n = l_c / l_opt
    f_T = tendon_force_curve((path.length - l_c * cos_phi) / l_Ts - 1, e0_T)
    f_L = se.exp(-(l_n - 1) ** 2 / k_act)
    f_PE = se.Piecewise(((se.exp(k_pe / e0_M * (l_n - 1)) - 1) / (math.exp(k_pe) - 1), l_n > 1),
                        (se.Integer(0), True))
    a_c = se.Min(se.Max(a, se.Float(a_min)), se.Integer(1))
    v_n = fiber_velocity_curve(a_c, a_c * f_L, f_T / cos_phi - f_PE, af, flen, threshold)
    clamped = se.And(l <= l_min, v_n <= 0)
    l_dot = se.Piecewise((se.Integer(0), clamped), (v_max * l_opt * v_n, True))
    rate = 0.5 + 1.5 * a_c
    tau = se.Piecewise((tau_a * rate, e > a_c), (tau_d / rate, True))
    a_dot = (e - a_c) / tau
    force = F_iso * f_T
    extra = {a_f: a_dot, l_f: l_dot}
    Q = [-force * j for j in path.jacobian]
    return ForceContribution(generalized=Q, specifieds=(e_f,), extra_states=extra,
                             record=ThelenRecord(element.tag, path, a_f, l_f, e_f, force))
