"""``import symbody`` loads the formulation layer only: the heavy layers load on first use."""

from __future__ import annotations

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_import_symbody_is_light():
    loaded = _modules_after("import symbody")
    for heavy in ("scipy.integrate", "scipy.optimize", "scipy.linalg", "matplotlib", "numpy",
                  "symengine", "symbody.models", "symbody.analysis", "symbody.compilation"):
        assert heavy not in loaded, f"import symbody imported {heavy}"


def test_lazy_names_still_work():
    loaded = _modules_after(
        "import symbody as sb\n"
        "assert callable(sb.compile) and callable(sb.simulate) and callable(sb.plot)\n"
        "assert callable(sb.models.four_bar) and sb.NumericModel.__name__ == 'NumericModel'\n"
        "from symbody import models, linearize, Trajectory, make_function, animate\n"
        "assert 'simulate' in dir(sb)")
    assert "scipy.integrate" in loaded and "symbody.models" in loaded
