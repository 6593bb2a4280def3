"""symbody.compat.matplotlib: the matplotlib internals symbody relies on still behave as relied on.

Checked on matplotlib 3.11.2 (``CHECKED_ON``).  A failure here means a matplotlib release
changed a private name or its behaviour: fix ``src/symbody/compat/matplotlib.py``, then add
the version to ``CHECKED_ON``.
"""

from __future__ import annotations

import gc
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402

from symbody.compat import matplotlib as compat  # noqa: E402


def _changed(what: str) -> str:
    return (f"matplotlib {matplotlib.__version__} changed {what} (symbody.compat.matplotlib was "
            f"checked on matplotlib {', '.join(compat.CHECKED_ON)})")


def test_checked_versions_are_named():
    assert compat.CHECKED_ON and all(v.count(".") >= 1 for v in compat.CHECKED_ON)


def test_figure_and_rendered_flag():
    fig = plt.figure()
    anim = FuncAnimation(fig, lambda i: [], frames=3)
    assert compat.animation_figure(anim) is fig, _changed("Animation._fig")
    assert hasattr(anim, "_draw_was_started"), _changed("Animation._draw_was_started")
    compat.mark_rendered(anim)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del anim
        gc.collect()
    assert not [w for w in caught if "rendering" in str(w.message)], \
        _changed("Animation._draw_was_started (deleting a rendered animation warns)")
    plt.close(fig)


def test_an_unmarked_animation_warns():
    """The flag is what silences the warning (else the test above proves nothing)."""
    fig = plt.figure()
    anim = FuncAnimation(fig, lambda i: [], frames=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del anim
        gc.collect()
    plt.close(fig)
    assert [w for w in caught if "rendering" in str(w.message)], \
        _changed("the warning for an animation deleted unrendered")
