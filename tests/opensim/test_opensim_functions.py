"""OpenSim's functions as expressions equal to OpenSim's own numbers (Function.calcValue, in
OpenSim's process), inside, at and outside the knots."""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se

from symbody.opensim.functions import parse_function
from symbody.opensim.xml_tree import read_document
from systems.opensim_oracle import ask_opensim, opensim_installed

_X = "-2.0944 -1.74533 -1.39626 -1.0472 -0.698132 -0.349066 -0.174533 0.197344 0.337395 0.490178"
_Y = "-0.0032 0.00179 0.00411 0.0041 0.00212 -0.001 -0.0031 -0.005227 -0.005435 -0.005574"
CASES = {
    "SimmSpline": f"<SimmSpline><x>{_X}</x><y>{_Y}</y></SimmSpline>",
    "SimmSpline3": "<SimmSpline><x>0 0.5 2</x><y>1 -1 0.5</y></SimmSpline>",
    "SimmSpline2": "<SimmSpline><x>0 0.5</x><y>1 -1</y></SimmSpline>",
    "NaturalCubicSpline": "<NaturalCubicSpline><x>0 0.3 0.5 2</x><y>1 0.2 -1 0.5</y>"
                          "</NaturalCubicSpline>",
    "PiecewiseLinearFunction": (f"<PiecewiseLinearFunction><x>{_X}</x><y>{_Y}</y>"
                                "</PiecewiseLinearFunction>"),
    "PolynomialFunction": ("<PolynomialFunction><coefficients>0.0108 -0.0252 -0.0328 0.0791 "
                           "-1.5e-08</coefficients></PolynomialFunction>"),
    "LinearFunction": "<LinearFunction><coefficients>-1.3 0.25</coefficients></LinearFunction>",
    "StepFunction": ("<StepFunction><transition_start_time>0.2</transition_start_time>"
                     "<transition_end_time>0.7</transition_end_time><start_value>-1</start_value>"
                     "<end_value>2</end_value></StepFunction>"),
    "MultiplierFunction": (f"<MultiplierFunction><function><SimmSpline><x>{_X}</x><y>{_Y}</y>"
                           "</SimmSpline></function><scale>1.7</scale></MultiplierFunction>"),
    "Sine": ("<Sine><amplitude>0.7</amplitude><omega>5.5</omega><phase>-0.3</phase>"
             "<offset>0.2</offset></Sine>"),
    "PiecewiseConstantFunction": ("<PiecewiseConstantFunction><x>-2 -1 -0.5 0 0.25 1.5 2</x>"
                                  "<y>3 -1 2 0.5 -0.25 1 4</y></PiecewiseConstantFunction>"),
    "GCVSpline": ("<GCVSpline><half_order>1</half_order><error_variance>0</error_variance>"
                  "<x>-2 -1 -0.5 0.3 1.5</x><y>1 -2 0.5 0.25 3</y><weights>1 1 1 1 1</weights>"
                  "<coefficients>0 0 0 0 0</coefficients></GCVSpline>"),
}


def _ours(xml: str):
    doc = read_document(f'<OpenSimDocument Version="40000"><Model name="f"><Holder>{xml}'
                        "</Holder></Model></OpenSimDocument>")
    return parse_function(doc.model.children[0].children[0])


@pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
def test_functions_equal_opensim():
    names = sorted(CASES)
    xs = {n: np.concatenate([np.linspace(-3.0, 3.0, 41), getattr(_ours(CASES[n]), "x", [])])
          for n in names}
    answers = ask_opensim(None, [{"kind": "function", "xml": CASES[n], "x": xs[n].tolist()}
                                 for n in names])
    x = se.Symbol("x")
    for name, want in zip(names, answers):
        f = _ours(CASES[name])
        expr = f.expression([x])
        for v, w in zip(xs[name], want):
            got = float(expr.subs({x: se.RealDouble(float(v))}))
            assert abs(got - w) <= 1e-13 * max(1.0, abs(w)), (name, v)
            assert abs(f.value(float(v)) - w) <= 1e-13 * max(1.0, abs(w)), (name, v)
