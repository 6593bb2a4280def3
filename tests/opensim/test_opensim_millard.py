"""Millard2012EquilibriumMuscle (symbody.opensim.forces.millard) against OpenSim 4.6 on
gait10dof18musc, six of its 18 muscles kept (two compiles within the test budget; all 18
agree as well: benchmarks/RESULTS.md): q', u', the activations' and fiber lengths'
derivatives at random states within the coordinate ranges with given activations and
excitations, the fiber lengths near OpenSim's equilibrium; with the tendons made rigid
(``ignore_tendon_compliance``) and as the file has them (compliant, damped)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.errors import InputError
from symbody.opensim import OpenSimImportWarning, load_opensim
from symbody.opensim.muscle_states import extra_from_opensim, extra_to_opensim, opensim_state_names
from systems.opensim_oracle import opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
KEEP = ("hamstrings_r", "bifemsh_r", "glut_max_r", "vasti_l", "gastroc_l", "soleus_l")
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")

_BLOCK = re.compile(r'\s*<Millard2012EquilibriumMuscle name="(\w+)">.*?'
                    r"</Millard2012EquilibriumMuscle>", re.S)


def _gait_file(tmp_path: Path, rigid: bool) -> Path:
    """gait10dof18musc with only the muscles of KEEP (tendons rigid if ``rigid``)."""
    text = _BLOCK.sub(lambda m: m.group(0) if m.group(1) in KEEP else "",
                      (DATA / "gait10dof18musc.osim").read_text())
    if rigid:
        text = re.sub(r'(<Millard2012EquilibriumMuscle name="\w+">)',
                      r"\1<ignore_tendon_compliance>true</ignore_tendon_compliance>", text)
    out = tmp_path / ("gait_rigid.osim" if rigid else "gait_compliant.osim")
    out.write_text(text)
    return out


def _case(tmp_path: Path, rigid: bool, rng) -> tuple:
    """The model of one case and its OpenSim queries (3 random states)."""
    return _file_case(_gait_file(tmp_path, rigid), rigid, rng, KEEP)


def _file_case(path: Path, rigid: bool, rng, muscles: tuple) -> tuple:
    """The model of ``path`` (its Millard muscles ``muscles``) and its OpenSim queries (3
    random states)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)     # nothing is left out
        model = load_opensim(path)
    names = list(model.muscle_names)
    assert names == list(muscles)
    per = ["a"] if rigid else ["a", "lM"]
    assert [str(s.func) for s in model.eom.extra_states] == [f"{k}_{n}" for n in names
                                                              for k in per]
    n, k = len(model.coordinates), len(names)
    queries, states = [], []
    for _ in range(3):
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        a, e = rng.uniform(0.0, 1, k), rng.uniform(0.01, 1, k)
        Q, U = model.to_opensim_state(q, u)
        qy = {"kind": "millard", "model": str(path), "Q": Q.tolist(), "U": U.tolist(),
              "activations": dict(zip(names, a.tolist())), "excitations": dict(zip(names, e.tolist()))}
        if not rigid:
            qy["fiber_scale"] = dict(zip(names, rng.uniform(0.97, 1.03, k).tolist()))
        queries.append(qy)
        states.append((q, u, a, e))
    return model, rigid, queries, states


def _check(model, rigid: bool, states: list, answers: list) -> None:
    names = list(model.muscle_names)
    per = 1 if rigid else 2
    scale = {el.name: el.number("optimal_fiber_length") * el.number("max_contraction_velocity")
             for el in model.spec.forces}
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n, k = len(model.coordinates), len(names)
    perm = list(model.simbody_index)
    for (q, u, a, e), ans in zip(states, answers):
        # OpenSim's state variables: the same names in the same order, the values mapped
        assert list(ans["state_values"]) == list(opensim_state_names(model))
        xe = extra_from_opensim(model, ans["state_values"])
        assert np.array_equal(xe[::per], a)
        assert extra_to_opensim(model, xe) == ans["state_values"]
        x = np.concatenate([q, u, xe])
        xdot = nm.rhs(0.0, x, p, e)
        udot = np.array(ans["udot"])[perm]
        adot = np.array([ans["adot"][m] for m in names])
        ours = xdot[2 * n:].reshape(k, per)
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        # dynamic_terms takes the muscle states: M u' + g_d = 0 at the same state
        M, g_d = model.dynamic_terms(q, u, e, x_e=xe)
        assert np.abs(M @ xdot[n:2 * n] + g_d).max() <= 1e-9 * np.abs(g_d).max()
        with pytest.raises(InputError, match="x_e"):
            model.dynamic_terms(q, u, e)
        assert np.abs(ours[:, 0] - adot).max() <= 1e-9 * np.abs(adot).max()
        if not rigid:
            # OpenSim stops its Newton iteration on the fiber velocity at a force error of
            # 1e-10 F_max: |Δṽ| <= 1e-10/(β cos α) = 1e-9, |Δl_M'| <= 1e-9 l_opt v_max
            ldot = np.array([ans["ldot"][m] for m in names])
            assert np.all(np.abs(ours[:, 1] - ldot) <= 1e-9 * np.array([scale[m] for m in names]))
            assert np.abs(ldot).max() > 1e-3
        # the muscles' forces matter: half the activations (rigid tendon) or 2 % shorter
        # fibers (compliant: the tendon's force) change u' well beyond round-off
        x_half = x.copy()
        x_half[2 * n + per - 1::per] *= 0.5 if rigid else 0.98
        assert np.abs(nm.rhs(0.0, x_half, p, e)[n:2 * n] - udot).max() > 1e-4 * np.abs(udot).max()


@needs_opensim
def test_millard_agrees_with_opensim(tmp_path):
    """Rigid and compliant tendons (one OpenSim process for both)."""
    from systems.opensim_millard_worker import ask
    rng = np.random.default_rng(7)
    cases = [_case(tmp_path, True, rng), _case(tmp_path, False, rng)]
    answers = ask(None, [qy for case in cases for qy in case[2]])
    for i, (model, rigid, _, states) in enumerate(cases):
        _check(model, rigid, states, answers[3 * i:3 * i + 3])


@needs_opensim
def test_millard_curves_with_unset_optional_properties():
    """OpenSim's Tug_of_War_Millard.osim writes the curves' optional properties empty
    (``<stiffness_at_one_norm_force></stiffness_at_one_norm_force>``): unset, so OpenSim fits
    them from the strains. It loads (it was refused as "missing") and agrees with OpenSim."""
    from systems.opensim_millard_worker import ask
    model, rigid, queries, states = _file_case(DATA / "Tug_of_War_Millard.osim", False,
                                               np.random.default_rng(11),
                                               ("RightMuscle", "LeftMuscle"))
    _check(model, rigid, states, ask(None, queries))
