"""Millard 2012's muscle curves (symbody.opensim.forces.millard_curves) against OpenSim 4.6's
curve objects read from the same XML (calcValue, calcDerivative), inside and outside their
domains, with default and given parameters; and against a 40-digit root of the Bezier
parameter (OpenSim stops its Newton iteration at |x(s) - x| < 100 eps, which leaves up to
~2e-11 in its slopes of the steep tendon curve: the slopes are compared more loosely)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
import symengine as se
import sympy as sm

from symbody.compilation.codegen import compile_kernel
from symbody.opensim.forces.bezier_curves import power_coefficients
from symbody.opensim.forces.millard_curves import curve_from_element, tendon_force_length_curve
from symbody.opensim.xml_tree import read_document
from systems.opensim_oracle import opensim_installed

CASES = {
    "ActiveForceLengthCurve": ["", "<min_norm_active_fiber_length>0.5</min_norm_active_fiber_length>"
                               "<transition_norm_fiber_length>0.75</transition_norm_fiber_length>"
                               "<max_norm_active_fiber_length>1.7</max_norm_active_fiber_length>"
                               "<shallow_ascending_slope>0.7</shallow_ascending_slope>"
                               "<minimum_value>0</minimum_value>"],
    "ForceVelocityCurve": ["", "<concentric_slope_at_vmax>0.1</concentric_slope_at_vmax>"
                           "<concentric_slope_near_vmax>0.3</concentric_slope_near_vmax>"
                           "<isometric_slope>4</isometric_slope>"
                           "<eccentric_slope_at_vmax>0.05</eccentric_slope_at_vmax>"
                           "<eccentric_slope_near_vmax>0.2</eccentric_slope_near_vmax>"
                           "<max_eccentric_velocity_force_multiplier>1.6"
                           "</max_eccentric_velocity_force_multiplier>"
                           "<concentric_curviness>0.4</concentric_curviness>"
                           "<eccentric_curviness>0.7</eccentric_curviness>"],
    "FiberForceLengthCurve": ["", "<strain_at_zero_force>0.1</strain_at_zero_force>"
                              "<strain_at_one_norm_force>0.6</strain_at_one_norm_force>"
                              "<stiffness_at_low_force>0.3</stiffness_at_low_force>"
                              "<stiffness_at_one_norm_force>5</stiffness_at_one_norm_force>"
                              "<curviness>0.6</curviness>"],
    "TendonForceLengthCurve": ["", "<strain_at_one_norm_force>0.04</strain_at_one_norm_force>"
                               "<stiffness_at_one_norm_force>40</stiffness_at_one_norm_force>"
                               "<norm_force_at_toe_end>0.6</norm_force_at_toe_end>"
                               "<curviness>0.4</curviness>"],
}


def _element(xml: str):
    doc = read_document(f'<OpenSimDocument Version="40000"><Model name="m"><Holder>{xml}'
                        "</Holder></Model></OpenSimDocument>")
    return doc.model.children[0].children[0]


@pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
def test_curves_equal_opensim():
    from systems.opensim_millard_worker import ask
    rng = np.random.default_rng(3)
    items, queries = [], []
    for tag, bodies in CASES.items():
        for body in bodies:
            xml = f'<{tag} name="c">{body}</{tag}>'
            curve = curve_from_element(tag, _element(xml))
            knots = [curve.x0] + [p[5] for p in curve.x_points]
            span = curve.x1 - curve.x0
            x = np.concatenate([rng.uniform(curve.x0 - 0.2 * span, curve.x1 + 0.2 * span, 120),
                                knots, np.nextafter(knots, -np.inf), np.nextafter(knots, np.inf)])
            items.append((tag, curve, x))
            queries.append({"kind": "curve", "xml": xml, "x": x.tolist()})
    answers = ask(None, queries)
    # all curves' expressions in one compiled kernel of their own variables (one C build)
    xs = [se.Symbol(f"x{i}") for i in range(len(items))]
    exprs = [e for (_, curve, _), x in zip(items, xs) for e in curve.expressions(x)]
    kernel = compile_kernel([sm.Symbol(x.name) for x in xs], exprs, backend="c",
                            name="millard_curves")
    for i, ((tag, _, x), ans) in enumerate(zip(items, answers)):
        Z = np.zeros((len(x), len(items)))
        Z[:, i] = x
        out = kernel.many(Z)
        y, d = out[:, 2 * i], out[:, 2 * i + 1]
        assert np.max(np.abs(y - ans["value"])) < 1e-12, tag
        assert np.max(np.abs(d - ans["derivative"]) / np.maximum(1, np.abs(d))) < 1e-10, tag


def _slope_40_digits(curve, x: float) -> float:
    i = max(k for k, p in enumerate(curve.x_points) if p[0] <= x)
    cx = [mp.mpf(float(c)) for c in power_coefficients(curve.x_points[i])]
    cy = [mp.mpf(float(c)) for c in power_coefficients(curve.y_points[i])]
    with mp.workdps(40):
        s = mp.findroot(lambda s: sum(c * s ** k for k, c in enumerate(cx)) - mp.mpf(x),
                        (mp.mpf(0), mp.mpf(1)), solver="anderson")
        return float(sum(k * c * s ** (k - 1) for k, c in enumerate(cy) if k)
                     / sum(k * c * s ** (k - 1) for k, c in enumerate(cx) if k))


def test_tendon_slope_is_exact_to_round_off():
    curve = tendon_force_length_curve()
    x = np.random.default_rng(4).uniform(curve.x0, curve.x1, 25)
    d = curve(x, 1)
    ref = np.array([_slope_40_digits(curve, v) for v in x])
    assert np.max(np.abs(d - ref)) < 1e-12 * np.max(np.abs(ref))


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="curviness"):
        curve_from_element("TendonForceLengthCurve", _element(
            '<TendonForceLengthCurve name="c"><curviness>0.4</curviness></TendonForceLengthCurve>'))


def test_damped_equilibrium_solve_is_exact():
    """solve_combination: α f_V(v) + β v = r to round-off (a bracketing root finder on the
    curve itself), inside the curve's domain and on its end lines."""
    import symengine as se
    import sympy as sm
    from scipy.optimize import brentq

    from symbody.compilation.codegen import compile_kernel
    from symbody.opensim.forces.bezier_curves import solve_combination
    from symbody.opensim.forces.millard_curves import force_velocity_curve

    fv = force_velocity_curve()
    alpha, r = se.symbols("alpha r")
    v, y = solve_combination(fv, alpha, 0.1, r)
    k = compile_kernel([sm.Symbol("alpha"), sm.Symbol("r")], [v, y], backend="c", name="fv_solve")
    rng = np.random.default_rng(6)
    A = rng.uniform(0, 1, 40)
    R = A * rng.uniform(-0.2, 1.6, 40) + 0.1 * rng.uniform(-1.2, 1.2, 40)
    for a, rr in zip(A, R):
        vv, yy = k(np.array([a, rr]))
        ref = brentq(lambda x, a=a, rr=rr: a * fv(x) + 0.1 * x - rr, -30, 30, xtol=1e-15,
                     rtol=1e-15)
        assert abs(vv - ref) < 1e-12 and abs(yy - fv(ref)) < 1e-12
