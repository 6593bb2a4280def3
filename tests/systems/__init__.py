"""The systems that tests and benchmarks build, in one place.

``seed_eoms``         the seed chapters' hand-derived equations (four-bar, snakeboard, ...)
``kane_systems``      small Kane systems built with sympy.physics.mechanics kinematics
``numeric_oracle``    numeric reference evaluations (dependent speeds, augmented accelerations)
``random_oracle``     random models from ``symbody.testing`` and their SymPy oracles
``benchmark_systems`` the n-link pendulum on a cart and the Whipple bicycle of SymPy's test_kane3

The model zoo (``symbody.models``) builds some of the same systems separately, on purpose:
the tests compare the zoo against these independent copies.

``tests/`` is on ``sys.path`` (pytest's ``pythonpath`` option; the benchmarks insert it), so
``from systems.seed_eoms import four_bar`` works from any test or benchmark.
"""

from .benchmark_systems import n_link_pendulum_on_cart, whipple_bicycle_sympy_test_kane3

__all__ = ["n_link_pendulum_on_cart", "whipple_bicycle_sympy_test_kane3"]
