import os

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SYMBODY_QUIET", "1")

import pytest  # noqa: E402


@pytest.fixture
def compiled_steps_taken(monkeypatch):
    """A list that gets, for every ``sb.simulate`` stepper built while the test runs,
    whether its steps run in compiled code (``native_rk.native_solver`` found one)."""
    import symbody.analysis.simulation.native_rk as native_rk

    taken: list = []
    real = native_rk.native_solver

    def spy(*args, **kwargs):
        found = real(*args, **kwargs)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(native_rk, "native_solver", spy)
    return taken
