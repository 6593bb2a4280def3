"""The exported code at the singular positions of its dependent set (issue 40, section 1).

The slider-crank of tests/systems/slider_crank.py with b = 0.05 < a = 0.1 and the crank
angle q1 independent meets a dead centre of q1 (det ∂f_h/∂q2 = 0) every half turn of the
rod.  ``sb.simulate`` switches the dependent set there; the reference is the same
mechanism with q2 independent (regular throughout).  The exported C's fixed-set functions
refuse the dead centres (status 5) instead of stepping onto the wrong branch, its
full-state functions in a fixed-step RK4 loop pass them, and the FMU's co-simulation
follows the reference through FMPy."""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

import symbody as sb
from export.helpers import build_program, build_shared, compiler, ptr
from symbody.formatting import symbol_name
from systems.slider_crank import CONSTANTS, slider_crank_eom, start, state_array

SPAN = 0.5
GRID = np.linspace(0.0, SPAN, 51)
TIGHT = sb.Solver(rtol=1e-11, atol=1e-12)

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "sc.h"

/* fixed-step RK4 on the full state y = [q, u], projected after each step */
int main(int argc, char **argv)
{
    double h = atof(argv[1]);
    long n_out = atol(argv[2]), per = atol(argv[3]), k, j;
    double x[SC_NX], y[SC_NY_FULL], k1[SC_NY_FULL], k2[SC_NY_FULL], k3[SC_NY_FULL];
    double k4[SC_NY_FULL], ys[SC_NY_FULL], t = 0.0;
    const double *p = sc_default_constants;
    int i, st = 0;
    for (i = 0; i < SC_NX; i++) x[i] = sc_default_state[i];
    st |= sc_project(t, x, p, 1e-12, 50);
    st |= sc_full_state(t, x, p, 0, y);
    for (k = 0; k <= n_out && !st; k++) {
        printf("%.17g", t);
        for (i = 0; i < SC_NY_FULL; i++) printf(" %.17g", y[i]);
        printf("\n");
        for (j = 0; j < per && k < n_out && !st; j++) {
            st |= sc_full_rhs(t, y, p, 0, k1);
            for (i = 0; i < SC_NY_FULL; i++) ys[i] = y[i] + 0.5 * h * k1[i];
            st |= sc_full_rhs(t + 0.5 * h, ys, p, 0, k2);
            for (i = 0; i < SC_NY_FULL; i++) ys[i] = y[i] + 0.5 * h * k2[i];
            st |= sc_full_rhs(t + 0.5 * h, ys, p, 0, k3);
            for (i = 0; i < SC_NY_FULL; i++) ys[i] = y[i] + h * k3[i];
            st |= sc_full_rhs(t + h, ys, p, 0, k4);
            for (i = 0; i < SC_NY_FULL; i++)
                y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            t = (k * per + j + 1) * h;
            st |= sc_full_project(t, y, p, 0, 1e-12, 50);
        }
    }
    return st;
}
"""


@pytest.fixture(scope="module")
def slider():
    """(model with q1 independent, its start, the reference run with q2 independent by name)."""
    model = sb.compile(slider_crank_eom("q1"))
    regular = sb.compile(slider_crank_eom("q2"))
    values = start()
    ref = sb.simulate(regular, (0.0, SPAN), state_array(regular, values), CONSTANTS, solver=TIGHT,
                      t_eval=GRID)
    assert ref.success and not ref.partition_changes
    named = {symbol_name(s): ref.q[:, i] for i, s in enumerate(regular.coordinates)}
    named.update({symbol_name(s): ref.u[:, i] for i, s in enumerate(regular.speeds)})
    assert np.ptp(named["q2"]) > 10.0        # the rod turns: dead centres of q1 on the way
    return model, state_array(model, values), named


def _first_dead_centre(named) -> float:
    """The first output time past a dead centre of q1 (cos q2 changed sign)."""
    c = np.cos(named["q2"])
    return float(GRID[np.argmax(np.sign(c) != np.sign(c[0]))])


def test_simulate_switches_and_agrees_with_the_regular_set(slider):
    model, x0, named = slider
    tr = sb.simulate(model, (0.0, SPAN), x0, CONSTANTS, solver=TIGHT, t_eval=GRID)
    assert tr.success and tr.partition_changes
    np.testing.assert_allclose(tr.q[:, 1], named["q2"], atol=1e-7)


def test_exported_c_full_state_passes_the_dead_centres(slider, tmp_path):
    compiler()
    model, x0, named = slider
    paths = sb.export_c(model, tmp_path, name="sc", constants=CONSTANTS, initial_state=x0)
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = build_program([tmp_path / "driver.c", paths.source], tmp_path / "driver")
    h, per = 1e-4, 100                                # 0.01 between outputs
    run = subprocess.run([str(exe), repr(h), str(len(GRID) - 1), str(per)], capture_output=True,
                         text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    rows = np.array([[float(v) for v in line.split()] for line in run.stdout.splitlines()])
    np.testing.assert_allclose(rows[:, 0], GRID, atol=1e-12)
    names = [symbol_name(s) for s in (*model.coordinates, *model.speeds)]
    for j, name in enumerate(names):
        scale = 1.0 if name.startswith("q") else 30.0
        np.testing.assert_allclose(rows[:, 1 + j], named[name], atol=1e-7 * scale, err_msg=name)


def test_exported_c_fixed_set_refuses_the_dead_centre(slider, tmp_path):
    """The README's RK4 loop in the model's own set stops with status 5 before the first
    dead centre instead of stepping onto the wrong branch; name_rhs and name_project say 5
    next to it and 0 away from it."""
    compiler()
    model, x0, named = slider
    paths = sb.export_c(model, tmp_path, name="sc", constants=CONSTANTS, initial_state=x0)
    exe = build_program([paths.example, paths.source], tmp_path / "example")
    t_dead = _first_dead_centre(named)
    for h in ("1e-5", "1e-3"):
        run = subprocess.run([str(exe), str(SPAN), h], capture_output=True, text=True)
        assert run.returncode == 1 and "status 5" in run.stderr, (h, run.stdout, run.stderr)
        t_fail = float(run.stderr.split("t = ")[1].split()[0])
        assert 0.0 < t_fail < t_dead
    lib = build_shared(paths.source, tmp_path / "sc.so")
    P = model.constants_array(CONSTANTS)
    a, b = CONSTANTS["a"], CONSTANTS["b"]
    for q2, expected in ((np.pi / 2 - 1e-3, 5), (np.pi / 2 - 0.5, 0)):
        q1 = np.arcsin(-b / a * np.sin(q2))
        x = np.array([q1, q2, 1.0])
        xd = np.empty(3)
        assert lib.sc_rhs(ctypes.c_double(0.0), ptr(x), ptr(P), None, ptr(xd)) == expected
        x[1] += 1e-6                                 # off the loop: projected back
        assert lib.sc_project(ctypes.c_double(0.0), ptr(x), ptr(P), ctypes.c_double(1e-12),
                              50) == expected


def test_fmu_follows_the_reference_through_the_dead_centres(slider, tmp_path):
    compiler()
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    model, x0, named = slider
    fmu = sb.export_fmu(model, tmp_path / "slider_crank.fmu", constants=CONSTANTS,
                        initial_state=x0)
    assert validate_fmu(str(fmu)) == []
    res = fmpy.simulate_fmu(str(fmu), stop_time=SPAN, output_interval=GRID[1])
    np.testing.assert_allclose(res["time"], GRID, atol=1e-12)
    for name in ("q1", "q2"):
        np.testing.assert_allclose(res[name], named[name], atol=1e-7, err_msg=name)
    for name in ("u1", "u2"):
        np.testing.assert_allclose(res[name], named[name], atol=3e-6, err_msg=name)
    assert np.abs(res["loop_residual_0"]).max() < 1e-12
