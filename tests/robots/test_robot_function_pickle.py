"""A robot's compiled functions through the one-state entry whatever their kernel's backend
(generated C or symengine's LLVM), and pickled: into this process and a fresh one, the same
numbers to the bit (the kernel's machine code travels with it)."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import symbody as sb
from systems.pinocchio_oracle import robots_dir

ROBOTS = robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
UR5 = "ur_description/urdf/ur5_robot.urdf"    # its derivative kernels: test_dynamics_derivatives


@pytest.fixture(scope="module")
def ur5():
    return sb.load_urdf(ROBOTS / UR5)


@pytest.fixture(scope="module")
def state():
    q, u, a = np.random.default_rng(3).standard_normal((3, 6))
    return q, u, a


def test_entry_of_llvm_and_c_kernels_equals_the_careful_path(ur5, state):
    q, u, a = state
    M = ur5.mass_matrix                              # a small kernel: LLVM
    D = ur5.inverse_dynamics_derivatives             # always generated C
    assert M.kernel.realize().backend in ("llvm", "c")
    for f, args in ((M, (q,)), (D, (q, u, a)), (ur5.frame_function("tool0", "jacobian"), (q,))):
        y = f(*args)
        if f.__dict__.get("_entry"):                 # a C compiler for the entry
            assert type(f._entry).__name__ == "FunctionEntry"
        assert np.array_equal(y, f._careful(args, None))
        assert np.array_equal(y, f(*[list(x) for x in args]))     # lists: the careful path
        assert f(*args) is not y


def _calls(robot, state) -> list:
    q, u, a = state
    return [(robot.mass_matrix, (q,)), (robot.frame_function("tool0", "velocity", "world"), (q, u)),
            (robot.inverse_dynamics, (q, u, a)), (robot.inverse_dynamics_derivatives, (q, u, a)),
            (robot.forward_dynamics_derivatives, (q, u, a))]


def test_pickled_functions_give_the_same_numbers(ur5, state):
    calls = _calls(ur5, state)
    for f, args in calls:
        g = pickle.loads(pickle.dumps(f))
        assert type(g) is type(f)
        assert np.array_equal(np.asarray(g(*args)), np.asarray(f(*args))), f
    J = pickle.loads(pickle.dumps(ur5.frame_function("tool0", "jacobian")))
    Q = np.array([state[0], state[1]])
    assert np.array_equal(J(Q), ur5.frame_jacobian("tool0", Q))      # batches too


def test_pickled_functions_run_in_a_fresh_process(ur5, state, tmp_path):
    calls = _calls(ur5, state)
    path = tmp_path / "functions.pickle"
    path.write_bytes(pickle.dumps([(f, args) for f, args in calls]))
    code = ("import pickle, sys, numpy as np\n"
            "calls = pickle.loads(open(sys.argv[1], 'rb').read())\n"
            "out = [np.asarray(f(*args)) for f, args in calls]\n"
            "open(sys.argv[1], 'wb').write(pickle.dumps(out))\n")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    for (f, args), y in zip(calls, pickle.loads(path.read_bytes())):
        assert np.array_equal(y, np.asarray(f(*args))), f
