"""SymPy's own tests of KanesMethod, LagrangesMethod and linearize, with symbody's classes.

The test functions of the installed sympy/physics/mechanics/tests/test_kane*.py,
test_lagrange*.py and test_linearize.py run with ``KanesMethod`` and
``LagrangesMethod`` swapped for symbody's (tests/systems/sympy_suite.py).  All of
them but one run here; benchmarks/bench_sympy_suite.py runs every one and times
it against SymPy's own run.  The two that once used API symbody lacked (SymPy's
private ``_form_fr`` and ``to_linearizer``) pass since issue 34: ``to_linearizer``
returns symbody's own Linearizer (tests/formulation/test_sympy_api_completion.py).
"""

from __future__ import annotations

import pytest

from systems import sympy_suite

UNSUPPORTED: dict = {}
# test_kane.py::test_issue_24887 (a 13 s formation of a large model) runs in the benchmark only,
# to keep CI short
BENCHMARK_ONLY = {("test_kane", "test_issue_24887")}
CASES = [c for c in sympy_suite.all_tests() if c not in UNSUPPORTED and c not in BENCHMARK_ONLY]


@pytest.mark.parametrize("case", CASES, ids=[f"{m}::{n}" for m, n in CASES])
def test_sympy_test_passes_with_symbody(case):
    sympy_suite.run(*case)

