"""How the forward-dynamics derivatives' expressions are formed: one DAG shared by the two
formations of the tree (what keeps their cold build at seconds on iCub and the human; the
numbers are checked against Pinocchio in test_dynamics_derivatives.py)."""

from __future__ import annotations

import pytest

import symbody as sb
from systems.pinocchio_oracle import robots_dir

ROBOTS = robots_dir()


@pytest.fixture(scope="module")
def solo():
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    return sb.load_urdf(ROBOTS / "solo_description/robots/solo12.urdf", floating_base=True), None


def test_tree_solve_terms_form_within_one_interning_scope(solo, monkeypatch):
    # the FD terms form the tree twice (the bias and M for u', then the derivatives at u'):
    # both formations run in ONE interned_sums scope, so they share every boxed sum instead of
    # being two equal DAGs side by side (which the kernel compiler compared node by node:
    # 500-800 s for the iCub and human builds)
    from symbody.robots import aba_derivatives, spatial
    robot, _ = solo
    tables = []
    formed = aba_derivatives.rnea_derivatives

    def spy(*args):
        tables.append(spatial._INTERNED.get())
        return formed(*args)

    monkeypatch.setattr(aba_derivatives, "rnea_derivatives", spy)
    qs, us, uds, _ = robot.symengine_symbols
    t = aba_derivatives.forward_derivative_terms(
        robot.tree, qs, us, uds, robot._gravity_vector(), robot.tree_inertias, True,
        parent=robot._speed_parents())
    assert len(tables) == 2 and tables[0] is tables[1] and len(tables[0]) > 100
    assert spatial._INTERNED.get() is None        # the scope ends with the formation
    o = len(us)
    assert len(t.udot) == o and len(t.dtau_dq) == o and t.factor[o - 1, o - 1] != 0


def test_interned_sums_keep_a_sum_and_its_negative_once():
    # symengine hashes a double by its low 32 bits (c and -c collide): two opposite sums formed
    # apart (M's entries along a chain of massless links) were compared node by node whenever
    # a product held both; within interned_sums the box keeps one and the other as its negative
    import symengine as se

    from symbody.robots.spatial import SYMENGINE, interned_sums
    x, y, z = se.symbols("x y z")

    def formed(sign):       # a new sum each call, its terms' coefficients times sign
        return se.Add(*[se.RealDouble(sign * c) * t for c, t in ((0.3, x * y), (0.7, se.sin(z)),
                                                                 (1.5, x))])

    box = SYMENGINE.box
    a, b = box(formed(1.0)), box(formed(-1.0))
    assert hash(a.args[1]) == hash(b.args[1]) and [type(f).__name__ for f in (a * b).args] \
        == ["RealDouble", "Add", "Add"]                 # the collision, outside the scope
    with interned_sums():
        a, b = box(formed(1.0)), box(formed(-1.0))
    product = a * b      # one sum, squared
    assert [type(f).__name__ for f in product.args] == ["RealDouble", "Pow"]
    assert float((a + b).subs({x: 0.4, y: -1.3, z: 0.2})) == 0.0
