"""Millard 2012's four muscle curves (OpenSim's ``ActiveForceLengthCurve``,
``ForceVelocityCurve``, ``FiberForceLengthCurve``, ``TendonForceLengthCurve``) as
:class:`~.bezier_curves.BezierCurve` objects, from their parameters as OpenSim's
``SmoothSegmentedFunctionFactory`` builds them (Millard, Uchida, Seth, Delp, J. Biomech.
Eng. 135(2), 2013).  Curviness c in [0, 1] is scaled to 0.1 + 0.8 c; each segment is a
quintic Bezier corner between two points with given slopes
(:func:`~.bezier_curves.corner_control_points`).

:func:`curve_from_element` reads a curve's XML element (properties absent: OpenSim's
defaults; the optional triples of the passive and tendon curves: all given or the fitted
defaults).
"""

from __future__ import annotations

from typing import Any

from .bezier_curves import BezierCurve, corner_control_points

__all__ = ["active_force_length_curve", "force_velocity_curve", "fiber_force_length_curve",
           "tendon_force_length_curve", "force_velocity_inverse_curve", "curve_from_element",
           "CURVE_DEFAULTS"]

#: OpenSim 4.6's defaults of each curve's properties
CURVE_DEFAULTS = {
    "ActiveForceLengthCurve": {
        "min_norm_active_fiber_length": 0.47 - 0.0259, "transition_norm_fiber_length": 0.73,
        "max_norm_active_fiber_length": 1.8123, "shallow_ascending_slope": 0.8616,
        "minimum_value": 0.1},
    "ForceVelocityCurve": {
        "concentric_slope_at_vmax": 0.0, "concentric_slope_near_vmax": 0.25,
        "isometric_slope": 5.0, "eccentric_slope_at_vmax": 0.0,
        "eccentric_slope_near_vmax": 0.15, "max_eccentric_velocity_force_multiplier": 1.4,
        "concentric_curviness": 0.6, "eccentric_curviness": 0.9},
    "FiberForceLengthCurve": {
        "strain_at_zero_force": 0.0, "strain_at_one_norm_force": 0.7,
        "stiffness_at_low_force": None, "stiffness_at_one_norm_force": None, "curviness": None},
    "TendonForceLengthCurve": {
        "strain_at_one_norm_force": 0.049, "stiffness_at_one_norm_force": None,
        "norm_force_at_toe_end": None, "curviness": None},
}


def _scale(curviness: float) -> float:
    return 0.1 + 0.8 * curviness


def _curve(corners: list, ends: tuple, name: str) -> BezierCurve:
    import numpy as np
    xs = np.array([c[0] for c in corners])
    ys = np.array([c[1] for c in corners])
    return BezierCurve(xs, ys, *ends, name=name)


def _require(ok: bool, name: str, text: str) -> None:
    if not ok:
        raise ValueError(f"{name}: {text}")


def active_force_length_curve(min_norm_active_fiber_length: float = 0.4441,
                              transition_norm_fiber_length: float = 0.73,
                              max_norm_active_fiber_length: float = 1.8123,
                              shallow_ascending_slope: float = 0.8616,
                              minimum_value: float = 0.1,
                              name: str = "ActiveForceLengthCurve") -> BezierCurve:
    """f_L(l̃): 5 corners through (x0, ylow), the shallow ascending limb of slope ``dydx``
    from x1, the plateau 1 at l̃ = 1 and back to ylow at x3 (curviness 1)."""
    x0, x1, x2, x3 = (min_norm_active_fiber_length, transition_norm_fiber_length, 1.0,
                      max_norm_active_fiber_length)
    ylow, dydx = minimum_value, shallow_ascending_slope
    eps = 1.4901161193847656e-08
    _require(x0 >= 0 and x1 > x0 + eps and x2 > x1 + eps and x3 > x2 + eps, name,
             "0 <= min_norm_active_fiber_length < transition_norm_fiber_length < 1 < "
             "max_norm_active_fiber_length must hold")
    _require(ylow >= 0, name, "minimum_value must be >= 0")
    _require(0 <= dydx < (1 - ylow) / (x2 - x1), name,
             f"shallow_ascending_slope must be in [0, {(1 - ylow) / (x2 - x1)})")
    c = _scale(1.0)
    xDelta = 0.05 * x2
    xs = x2 - xDelta
    y0, dydx0 = 0.0, 0.0
    y1 = 1 - dydx * (xs - x1)
    dydx01 = 1.25 * (y1 - y0) / (x1 - x0)
    x01, y01 = x0 + 0.5 * (x1 - x0), y0 + 0.5 * (y1 - y0)
    x1s, y1s = x1 + 0.5 * (xs - x1), y1 + 0.5 * (1 - y1)
    dydx1s = dydx
    y2, dydx2, y3, dydx3 = 1.0, 0.0, 0.0, 0.0
    x23 = (x2 + xDelta) + 0.5 * (x3 - (x2 + xDelta))
    y23 = y2 + 0.5 * (y3 - y2)
    dydx23 = (y3 - y2) / ((x3 - xDelta) - (x2 + xDelta))
    corners = [corner_control_points(x0, ylow, dydx0, x01, y01, dydx01, c),
               corner_control_points(x01, y01, dydx01, x1s, y1s, dydx1s, c),
               corner_control_points(x1s, y1s, dydx1s, x2, y2, dydx2, c),
               corner_control_points(x2, y2, dydx2, x23, y23, dydx23, c),
               corner_control_points(x23, y23, dydx23, x3, ylow, dydx3, c)]
    return _curve(corners, (x0, x3, ylow, ylow, 0.0, 0.0), name)


def _fv_points(fmaxE, dydxC, dydxNearC, dydxIso, dydxE, dydxNearE, concCurviness,
               eccCurviness) -> list:
    cC, cE = _scale(concCurviness), _scale(eccCurviness)
    xC, yC, xNearC = -1.0, 0.0, -0.9
    yNearC = yC + 0.5 * dydxNearC * (xNearC - xC) + 0.5 * dydxC * (xNearC - xC)
    xIso, yIso, xE, yE, xNearE = 0.0, 1.0, 1.0, fmaxE, 0.9
    yNearE = yE + 0.5 * dydxNearE * (xNearE - xE) + 0.5 * dydxE * (xNearE - xE)
    return [corner_control_points(xC, yC, dydxC, xNearC, yNearC, dydxNearC, cC),
            corner_control_points(xNearC, yNearC, dydxNearC, xIso, yIso, dydxIso, cC),
            corner_control_points(xIso, yIso, dydxIso, xNearE, yNearE, dydxNearE, cE),
            corner_control_points(xNearE, yNearE, dydxNearE, xE, yE, dydxE, cE)]


def force_velocity_curve(concentric_slope_at_vmax: float = 0.0,
                         concentric_slope_near_vmax: float = 0.25,
                         isometric_slope: float = 5.0, eccentric_slope_at_vmax: float = 0.0,
                         eccentric_slope_near_vmax: float = 0.15,
                         max_eccentric_velocity_force_multiplier: float = 1.4,
                         concentric_curviness: float = 0.6, eccentric_curviness: float = 0.9,
                         name: str = "ForceVelocityCurve") -> BezierCurve:
    """f_V(ṽ) on ṽ in [-1, 1]: 0 at -1, 1 at 0 (slope ``isometric_slope``), the eccentric
    maximum at 1; 4 corners, the near-vmax points at ṽ = ±0.9."""
    fmaxE, dC, dNC, dIso, dE, dNE = (max_eccentric_velocity_force_multiplier,
                                     concentric_slope_at_vmax, concentric_slope_near_vmax,
                                     isometric_slope, eccentric_slope_at_vmax,
                                     eccentric_slope_near_vmax)
    _require(fmaxE > 1, name, "max_eccentric_velocity_force_multiplier must be > 1")
    _require(0 <= dC < 1 and dC < dNC <= 1, name,
             "0 <= concentric_slope_at_vmax < concentric_slope_near_vmax <= 1 must hold")
    _require(dIso > 1, name, "isometric_slope must be > 1")
    _require(0 <= dE < fmaxE - 1 and dE <= dNE < fmaxE - 1, name,
             "0 <= eccentric_slope_at_vmax <= eccentric_slope_near_vmax < "
             "max_eccentric_velocity_force_multiplier - 1 must hold")
    pts = _fv_points(fmaxE, dC, dNC, dIso, dE, dNE, concentric_curviness, eccentric_curviness)
    return _curve(pts, (-1.0, 1.0, 0.0, fmaxE, dC, dE), name)


def force_velocity_inverse_curve(concentric_slope_at_vmax: float,
                                 concentric_slope_near_vmax: float, isometric_slope: float,
                                 eccentric_slope_at_vmax: float,
                                 eccentric_slope_near_vmax: float,
                                 max_eccentric_velocity_force_multiplier: float,
                                 concentric_curviness: float, eccentric_curviness: float,
                                 name: str = "ForceVelocityInverseCurve") -> BezierCurve:
    """ṽ(f_V): the force-velocity curve of these parameters with x and y swapped (end slopes
    must be positive); OpenSim's ``ForceVelocityInverseCurve``."""
    _require(concentric_slope_at_vmax > 0 and eccentric_slope_at_vmax > 0, name,
             "the slopes at vmax must be positive for the inverse curve")
    fv = force_velocity_curve(concentric_slope_at_vmax, concentric_slope_near_vmax,
                              isometric_slope, eccentric_slope_at_vmax,
                              eccentric_slope_near_vmax,
                              max_eccentric_velocity_force_multiplier, concentric_curviness,
                              eccentric_curviness, name)
    return fv.swapped(name)


def fiber_force_length_curve(strain_at_zero_force: float = 0.0,
                             strain_at_one_norm_force: float = 0.7,
                             stiffness_at_low_force: float | None = None,
                             stiffness_at_one_norm_force: float | None = None,
                             curviness: float | None = None,
                             name: str = "FiberForceLengthCurve") -> BezierCurve:
    """f_PE(l̃): 0 up to l̃ = 1 + e0, 1 at 1 + e1 with slope k_iso; two corners (the optional
    parameters absent: k_iso = 2/(e1 - e0), k_low = 0.2, curviness 0.75)."""
    e0, e1 = strain_at_zero_force, strain_at_one_norm_force
    opt = (stiffness_at_low_force, stiffness_at_one_norm_force, curviness)
    if all(v is None for v in opt):
        kLow, kIso, curv = 0.2, 2.0 / (e1 - e0), 0.75
    elif any(v is None for v in opt):
        raise ValueError(f"{name}: stiffness_at_low_force, stiffness_at_one_norm_force and "
                         "curviness must all be given or all be absent")
    else:
        kLow, kIso, curv = opt
    _require(e1 > e0, name, "strain_at_one_norm_force must exceed strain_at_zero_force")
    _require(kIso > 1 / (e1 - e0), name, "stiffness_at_one_norm_force must exceed "
             f"1/(e1 - e0) = {1 / (e1 - e0)}")
    _require(0 < kLow < 1 / (e1 - e0), name, "stiffness_at_low_force must be in "
             f"(0, {1 / (e1 - e0)})")
    c = _scale(curv)
    xZero, yZero, xIso, yIso = 1 + e0, 0.0, 1 + e1, 1.0
    deltaX = min(0.1 * (1.0 / kIso), 0.1 * (xIso - xZero))
    xLow = xZero + deltaX
    xfoot = xZero + 0.5 * (xLow - xZero)
    yLow = kLow * (xLow - xfoot)
    corners = [corner_control_points(xZero, yZero, 0.0, xLow, yLow, kLow, c),
               corner_control_points(xLow, yLow, kLow, xIso, yIso, kIso, c)]
    return _curve(corners, (xZero, xIso, yZero, yIso, 0.0, kIso), name)


def tendon_force_length_curve(strain_at_one_norm_force: float = 0.049,
                              stiffness_at_one_norm_force: float | None = None,
                              norm_force_at_toe_end: float | None = None,
                              curviness: float | None = None,
                              name: str = "TendonForceLengthCurve") -> BezierCurve:
    """f_T(l̃_T): 0 at l̃_T = 1, the toe region up to f_toe, then the line of slope k_iso
    through (1 + e_iso, 1); two corners (the optional parameters absent: k_iso = 1.375/e_iso,
    f_toe = 2/3, curviness 0.5)."""
    eIso = strain_at_one_norm_force
    opt = (stiffness_at_one_norm_force, norm_force_at_toe_end, curviness)
    if all(v is None for v in opt):
        kIso, fToe, curv = 1.375 / eIso, 2.0 / 3.0, 0.5
    elif any(v is None for v in opt):
        raise ValueError(f"{name}: stiffness_at_one_norm_force, norm_force_at_toe_end and "
                         "curviness must all be given or all be absent")
    else:
        kIso, fToe, curv = opt
    _require(eIso > 0, name, "strain_at_one_norm_force must be positive")
    _require(0 < fToe < 1, name, "norm_force_at_toe_end must be in (0, 1)")
    _require(kIso > 1 / eIso, name, f"stiffness_at_one_norm_force must exceed {1 / eIso}")
    c = _scale(curv)
    x0, y0, dydx0 = 1.0, 0.0, 0.0
    xIso, yIso = 1.0 + eIso, 1.0
    yToe = fToe
    xToe = (yToe - 1) / kIso + xIso
    xFoot, yFoot = 1.0 + (xToe - 1.0) / 10.0, 0.0
    yToeMid = yToe * 0.5
    xToeMid = (yToeMid - yIso) / kIso + xIso
    dydxToeMid = (yToeMid - yFoot) / (xToeMid - xFoot)
    xToeCtrl = xFoot + 0.5 * (xToeMid - xFoot)
    yToeCtrl = yFoot + dydxToeMid * (xToeCtrl - xFoot)
    corners = [corner_control_points(x0, y0, dydx0, xToeCtrl, yToeCtrl, dydxToeMid, c),
               corner_control_points(xToeCtrl, yToeCtrl, dydxToeMid, xToe, yToe, kIso, c)]
    return _curve(corners, (x0, xToe, y0, yToe, dydx0, kIso), name)


_FACTORIES = {"ActiveForceLengthCurve": active_force_length_curve,
              "ForceVelocityCurve": force_velocity_curve,
              "FiberForceLengthCurve": fiber_force_length_curve,
              "TendonForceLengthCurve": tendon_force_length_curve}


def curve_parameters(tag: str, element: Any = None, **overrides: float) -> dict:
    """The parameters of a curve of type ``tag`` from its XML element (None: all defaults),
    then ``overrides``.  An empty element (``<curviness></curviness>``, as OpenSim writes an
    optional property that is not set) is absent, as OpenSim reads it."""
    params = dict(CURVE_DEFAULTS[tag])
    if element is not None:
        for key in params:
            child = element.find(key)
            if child is not None and child.text.strip():
                params[key] = element.number(key)
    params.update(overrides)
    return params


def curve_from_element(tag: str, element: Any = None, name: str | None = None,
                       **overrides: float) -> BezierCurve:
    """The curve of type ``tag`` ("ActiveForceLengthCurve", ...) from its XML element."""
    params = curve_parameters(tag, element, **overrides)
    return _FACTORIES[tag](**params, name=name or tag)
