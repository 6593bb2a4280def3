"""The frozen kernel layout (issue 23 item 1): every offset and slice it gives is where the
model's evaluation and kernels put the numbers."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import symbody as sb
from symbody.compilation import KernelLayout
from symbody.errors import InputError


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def test_layout_matches_the_kernels_and_the_argument_vector(four_bar):
    zoo, model = four_bar
    L = model.layout
    assert (L.N, L.o, L.M, L.m, L.p) == (model.N, model.o, model.M, model.m, model.p)
    assert L.augmented and model.has_multipliers and L.K == L.o + L.m
    # kernel output sizes are the ends of the layout's slices
    assert model.kernels.main.nout == L.main_size == L.N + L.K + L.K * L.K
    assert model.kernels.velocity.nout == L.velocity_rest.stop
    assert model.kernels.holonomic.nout == L.holonomic_J.stop
    P = model.constants_array(zoo.constants)
    x = model.consistent_state(model.state_array(zoo.initial_state), P)
    q, u_ind = x[:L.N], x[L.N:L.nxm]
    z = model.arguments(0.25, q, u_ind, P)
    assert z.shape == (L.nz,) and z[0] == 0.25
    assert np.array_equal(z[L.z_q], q) and np.array_equal(z[L.z_constants], P)
    u = model.full_speeds(q, u_ind, P, t=0.25)
    assert np.array_equal(z[L.z_u], u) and np.array_equal(z[L.iu:L.iud], u_ind)
    assert not z[L.z_udot].any()
    # the velocity kernel's slices: B u + b = 0 at the solved speeds
    out = model.kernels.velocity(z)
    B = out[L.velocity_B].reshape(L.m, L.o)
    np.testing.assert_allclose(B @ u + out[L.velocity_b], 0.0, atol=1e-12)
    # the main kernel's slices: S y = s solved gives the rhs's u_ind'
    main = model.kernels.main(z)
    S = main[L.main_system].reshape(L.K, L.K, order="F")
    y = np.linalg.solve(S, main[L.main_rhs])
    xdot = model.rhs(0.25, x, P)
    np.testing.assert_allclose(xdot[:L.N], main[L.main_qdot], rtol=1e-14)
    np.testing.assert_allclose(xdot[L.N:], y[:L.p], rtol=1e-10)


def test_layout_is_frozen_rebuilt_from_its_stored_fields_and_checked(four_bar):
    _, model = four_bar
    L = model.layout
    with pytest.raises(dataclasses.FrozenInstanceError):
        L.N = 3
    assert KernelLayout(**L.stored_fields()) == L
    assert pickle.loads(pickle.dumps(model)).layout == L
    bad = dict(L.stored_fields(), m=-1)
    with pytest.raises(InputError, match=r"KernelLayout\.m must be a non-negative int"):
        KernelLayout(**bad)
    with pytest.raises(InputError, match=r"KernelLayout\.main_rhs must be a slice"):
        KernelLayout(**dict(L.stored_fields(), main_rhs=3))


def test_an_unconstrained_model_has_no_velocity_slices_in_use():
    zoo = sb.models.n_link_pendulum_on_cart(2)
    model = sb.compile(zoo.eom)
    L = model.layout
    assert (L.M, L.m, L.K) == (0, 0, L.p) and not L.augmented and not L.partition_switchable
    assert model.kernels.velocity is None and model.kernels.holonomic is None
    assert L.velocity_B == slice(0, 0) and L.contiguous_state_derivative
