"""Issue 40 §3: the URDF loader's messages -- a free body with a singular inertia, zero
gravity and the g symbol, inertias that violate the triangle inequality."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError
from symbody.robots.terms import dynamic_terms
from symbody.robots.urdf_parse import InvalidInertiaWarning


def box(ixx: float = 0.1, iyy: float = 0.1, izz: float = 0.1, extra: str = "") -> str:
    return (f'<robot name="box">\n  <link name="base">\n    <inertial><mass value="1"/>\n'
            f'      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>\n'
            f'    </inertial>\n  </link>\n{extra}</robot>')


PENDULUM_LINKS = ('  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>'
                  '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.2"/></inertial></link>\n'
                  '  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
                  '<axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>\n')


def test_a_free_body_without_inertia_about_an_axis_names_the_link_and_line():
    """58 of pybullet_data's object files have izz="0": a free body then cannot turn about z.
    Before: a FormulationError about base_wz(t), naming neither link nor line."""
    with pytest.raises(InputError, match=r"link 'base' \(line 4\): the floating base has no "
                                         r"rotational inertia about the axis \(0, 0, 1\)"):
        sb.load_urdf(box(izz=0.0), floating_base=True)
    # a point mass (no inertia at all) and a massless base are refused the same way
    with pytest.raises(InputError, match=r"link 'base' \(line 4\).*no rotational inertia"):
        sb.load_urdf(box(0.0, 0.0, 0.0), floating_base=True)
    with pytest.raises(InputError, match=r"link 'base' \(line \d\).* has no mass"):
        sb.load_urdf(box().replace('value="1"', 'value="0"'), floating_base=True)
    # the same body carrying an arm off the z axis has inertia about z: it loads, and the
    # mass matrix is then positive definite
    robot = sb.load_urdf(box(izz=0.0, extra=PENDULUM_LINKS), floating_base=True)
    model = sb.compile(robot.eom)
    x = robot.default_state()
    M, _ = dynamic_terms(model, x[:model.N], np.zeros(model.o), robot.constants,
                         np.zeros(len(robot.inputs)))
    assert np.linalg.eigvalsh(M).min() > 1e-3


def test_zero_gravity_keeps_the_direction_minus_z_and_g_is_its_magnitude():
    """gravity=(0, 0, 0) used to leave a g that did nothing (g = 9.81 given later changed
    nothing): now g = 0 along -z, and giving g a value is the default gravity."""
    urdf = box(extra=PENDULUM_LINKS)
    still = sb.load_urdf(urdf, gravity=(0.0, 0.0, 0.0))
    default = sb.load_urdf(urdf)
    assert still.constants[still.g] == 0.0
    np.testing.assert_array_equal(still.gravity_direction, [0.0, 0.0, -1.0])
    m0, m1 = sb.compile(still.eom), sb.compile(default.eom)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x, tau = rng.normal(size=2), rng.normal(size=1)
        np.testing.assert_allclose(m0.rhs(0.0, x, {"g": 9.81}, tau), m1.rhs(0.0, x, {"g": 9.81}, tau),
                                   rtol=1e-13, atol=1e-13)
        # without gravity and torque: u' = -C(q, u) u / M, no g term (the arm's com at 0.5 m)
        xd = m0.rhs(0.0, np.array([x[0], 0.0]), still.constants, [0.0])
        assert xd[1] == 0.0
    # the direction is kept for any nonzero vector, its magnitude the value of g
    up = sb.load_urdf(urdf, gravity=(0.0, 0.0, 3.0))
    np.testing.assert_array_equal(up.gravity_direction, [0.0, 0.0, 1.0])
    assert up.constants[up.g] == 3.0


def test_inertias_that_violate_the_triangle_inequality_warn_naming_the_link():
    with pytest.warns(InvalidInertiaWarning, match=r"link 'base' \(line 4\): the principal "
                                                   r"moments .* violate the triangle inequality"):
        sb.load_urdf(box(izz=0.3), floating_base=True)
    # a flat plate (I_1 + I_2 = I_3, numbers rounded to 3 digits) and a rod are physical
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb.load_urdf(box(0.0833, 0.0333, 0.1167), floating_base=True)
        sb.load_urdf(box(0.1, 0.1, 1e-9), floating_base=True)
