"""The zoo's contact models: their outputs are in q, u and the constants (q' replaced), they
simulate with them, and their scenes know their points (issue 37)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm

import symbody as sb
from symbody.compat.sympy import TIME

CONTACT_MODELS = ["ball-on-plane", "block-on-slope", "cylinder-on-slope", "jumper"]


@pytest.mark.parametrize("name", CONTACT_MODELS)
def test_contact_model_outputs_simulate(name):
    model = sb.models.get(name)
    eom = model.eom
    assert eom.contacts and set(model.constants) == set(eom.constants)
    allowed = set(eom.q) | set(eom.u) | set(model.constants) | set(eom.specifieds)
    for key, expr in model.outputs.items():
        atoms = sm.sympify(expr).free_symbols | set(sm.sympify(expr).atoms(sm.core.function.AppliedUndef))
        assert not sm.sympify(expr).atoms(sm.Derivative), key
        assert atoms - {TIME} <= allowed, key
    numeric = sb.compile(eom)
    specifieds = {str(r): 0.0 for r in eom.specifieds} or None
    sol = sb.simulate(numeric, (model.t_span[0], model.t_span[0] + 0.05), model.initial_state,
                      model.constants, specifieds=specifieds, outputs=model.outputs)
    assert sol.success, sol.message
    assert all(np.isfinite(v).all() for v in sol.outputs.values())
    assert set(sol.contacts) == {r.name for r in eom.contacts}
