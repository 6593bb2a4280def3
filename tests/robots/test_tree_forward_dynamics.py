"""The tree forward dynamics of URDF robots (robots/articulated_body.py and the forward kernel):
the recursion's numbers against Pinocchio's ABA (with external forces) and against the
mass-matrix solve with mimic constraints; the compiled kernel against M_d and g_d solved,
rhs_many (SIMD lanes) against rhs to the bit; the exported C."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import symbody as sb
from export.helpers import build_shared, ptr
from symbody.errors import CompilationError
from symbody.robots.articulated_body import ArticulatedBody
from symbody.robots.spatial import FLOATS
from systems.pinocchio_oracle import pinocchio_model, random_state, robots_dir

#: every joint kind the recursion distinguishes: an axis off the coordinate axes, a weld, a
#: prismatic joint, a continuous one, a mimic joint (one constraint row) and a second branch
URDF = """<robot name="tree">
  <link name="base"><inertial><mass value="2.0"/>
    <inertia ixx="0.05" iyy="0.06" izz="0.07" ixy="0.001" ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><origin xyz="0.1 0.02 0.3" rpy="0.2 0.1 -0.3"/><mass value="1.5"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.025" ixy="0.001" ixz="-0.002" iyz="0.0005"/></inertial></link>
  <link name="a_tip"><inertial><origin xyz="0 0 0.1"/><mass value="0.3"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.05 0 0"/><mass value="0.8"/>
    <inertia ixx="0.004" iyy="0.005" izz="0.006" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="d"><inertial><origin xyz="0 0.03 0"/><mass value="0.2"/>
    <inertia ixx="0.001" iyy="0.002" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="e"><inertial><origin xyz="0 0 -0.2"/><mass value="0.7"/>
    <inertia ixx="0.003" iyy="0.003" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.2" rpy="0.3 0 0"/>
    <axis xyz="0 0.6 0.8"/><limit lower="-2" upper="2" effort="1" velocity="1"/>
    <dynamics damping="0.3" friction="0.1"/></joint>
  <joint name="weld" type="fixed"><parent link="a"/><child link="a_tip"/><origin xyz="0 0.1 0.4" rpy="0 1.2 0"/></joint>
  <joint name="j2" type="prismatic"><parent link="a_tip"/><child link="b"/><origin xyz="0.1 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="j3" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0 0.2 0" rpy="0 0 0.5"/>
    <axis xyz="0 0 -1"/></joint>
  <joint name="j4" type="revolute"><parent link="b"/><child link="d"/><origin xyz="0 -0.2 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="j3" multiplier="-0.5" offset="0.1"/></joint>
  <joint name="j5" type="revolute"><parent link="base"/><child link="e"/><origin xyz="0.2 0 0" rpy="0 0.4 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def _state(model, robot, rng):
    P = model.constants_array(robot.constants)
    x = robot.default_state()
    x[:model.N] += rng.uniform(-0.8, 0.8, model.N)
    x[model.N:] = rng.normal(size=model.p)
    return model.consistent_state(x, P) if model.M else x, P


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "free-flyer"])
def test_forward_kernel_equals_the_mass_matrix_solve(floating):
    robot = sb.load_urdf(URDF, floating_base=floating)
    tree = sb.compile(robot.eom, forward_dynamics="recursion")
    dense = sb.compile(robot.eom, forward_dynamics="solve")
    assert tree.kernels.forward is not None and dense.kernels.forward is None
    rng = np.random.default_rng(3)
    X, R = [], []
    for _ in range(8):
        x, P = _state(tree, robot, rng)
        r = rng.normal(size=len(robot.inputs))
        a, b = tree.rhs(0.3, x, P, r), dense.rhs(0.3, x, P, r)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
        np.testing.assert_allclose(tree.rhs_function(P)(0.3, x, r), b, rtol=1e-12,
                                   atol=1e-12 * np.abs(b).max())
        X.append(x)
        R.append(r)
    X, R = np.array(X), np.array(R)
    # many states: the SIMD-lane build (when the compiler has it) gives the same bits
    if tree.kernels.forward_many is not None:
        tree.kernels.forward_many.realize()
    one_by_one = np.array([tree.rhs(0.3, x, P, r) for x, r in zip(X, R)])
    assert np.array_equal(tree.rhs_many(0.3, X, P, R), one_by_one)
    assert np.array_equal(sb.compilation.NumericModel.rhs_many(tree, 0.3, X, P, R), one_by_one)


def test_saved_model_keeps_the_forward_kernel(tmp_path):
    robot = sb.load_urdf(URDF)
    model = sb.compile(robot.eom)
    loaded = sb.load_model(model.save(tmp_path / "tree.symbody"))
    assert loaded.kernels.forward is not None
    x, P = _state(model, robot, np.random.default_rng(4))
    r = np.ones(len(robot.inputs))
    assert np.array_equal(loaded.rhs(0.0, x, P, r), model.rhs(0.0, x, P, r))
    X = np.tile(x, (5, 1))
    assert np.array_equal(loaded.rhs_many(0.0, X, P, r), model.rhs_many(0.0, X, P, r))


def test_forward_dynamics_option_is_checked():
    robot = sb.load_urdf(URDF)
    with pytest.raises(CompilationError, match="forward_dynamics must be one of"):
        sb.compile(robot.eom, forward_dynamics="aba")


def test_exported_c_rhs_is_the_forward_kernel(tmp_path):
    robot = sb.load_urdf(URDF)
    model = sb.compile(robot.eom)
    paths = sb.export_c(model, tmp_path, name="tree", constants=robot.constants)
    assert "tree_kernel_forward(z, out)" in paths.source.read_text()
    lib = build_shared(paths.source, tmp_path / "tree.so")
    rng = np.random.default_rng(5)
    for _ in range(4):
        x, P = _state(model, robot, rng)
        r = rng.normal(size=len(robot.inputs))
        xd = np.empty(model.layout.nx)
        assert lib.tree_rhs(ctypes.c_double(0.0), ptr(x), ptr(P), ptr(r), ptr(xd)) == 0
        ref = model.rhs(0.0, x, P, r)
        np.testing.assert_allclose(xd, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


# ------------------------------------------------------------------ against Pinocchio
pin = pytest.importorskip("pinocchio")
ROBOTS = robots_dir()
needs_files = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def _tree_state(robot, pm, rng):
    """Pinocchio's (q, v) and the recursion's q (tree order)."""
    qp, v = random_state(pin, pm, rng)
    x = robot.from_pinocchio(qp, v)
    qp, v = robot.to_pinocchio(x)
    q_tree = np.empty(len(robot.tree_coordinates))
    for k, c in enumerate(robot.coordinates):
        q_tree[robot.tree_coordinates.index(c)] = x[k]
    return qp, v, q_tree


def _recursion(robot, q_tree, v, constraints=(), external=None):
    inertias = [(b.mass, list(b.h), [list(r) for r in b.I_o]) for b in robot.tree.bodies]
    return ArticulatedBody(robot.tree, list(q_tree), list(v), list(robot.gravity), inertias,
                           robot.floating_base, external=external, constraints=constraints,
                           algebra=FLOATS)


@needs_files
@pytest.mark.parametrize(("path", "floating"), [
    ("ur_description/urdf/ur5_robot.urdf", False),
    ("solo_description/robots/solo12.urdf", True),
    ("talos_data/robots/talos_reduced.urdf", True),
    ("tiago_description/robots/tiago_dual.urdf", False),
], ids=["ur5", "solo12", "talos", "tiago_dual"])
def test_recursion_equals_pinocchio_aba_with_external_forces(path, floating):
    f = ROBOTS / path
    robot = sb.load_urdf(f, floating_base=floating, joint_dynamics=False, mimic=False,
                         invalid_inertia="warn")
    pm = pinocchio_model(pin, f, floating)
    pd = pm.createData()
    rng = np.random.default_rng(11)
    for _ in range(2):
        qp, v, q_tree = _tree_state(robot, pm, rng)
        tau = rng.normal(size=pm.nv)
        wrenches = rng.normal(size=(len(robot.tree.bodies), 6))
        # Pinocchio's joint i is body i (the universe, 0, takes none with a fixed base)
        fext = [pin.Force.Zero() for _ in range(pm.njoints)]
        external = {}
        for b in range(len(robot.tree.bodies)):
            j = b + 1 if floating else b
            if j == 0:
                continue
            fext[j] = pin.Force(wrenches[b, 3:], wrenches[b, :3])     # (linear, angular)
            external[b] = (wrenches[b, :3], wrenches[b, 3:])             # (moment, force)
        ref = pin.aba(pm, pd, qp, v, tau, fext)
        got = np.array(_recursion(robot, q_tree, v, external=external).accelerations(list(tau)))
        assert np.abs(got - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max())


@needs_files
@pytest.mark.parametrize("path", ["talos_data/robots/talos_full_v2.urdf",
                                  "pr2_description/urdf/pr2.urdf"], ids=["talos", "pr2"])
def test_mimic_constraints_condensed_equal_the_augmented_solve(path):
    """Talos's grippers (12 mimic joints, six in each hand) and PR2's (10): u' of
    [[M, -Bᵀ], [B, 0]] [u'; λ] = [Q - b; 0] with Pinocchio's M and b."""
    f = ROBOTS / path
    floating = "talos" in path
    robot = sb.load_urdf(f, floating_base=floating, joint_dynamics=False, invalid_inertia="warn")
    pm = pinocchio_model(pin, f, floating)
    pd = pm.createData()
    ub = 6 if floating else 0
    index = {b.joint.name: i for i, b in enumerate(robot.tree.moving)}
    rows = []
    for i in robot.mimic_bodies:
        target, a, _ = robot.tree.moving[i].joint.mimic
        rows.append({ub + i: 1.0, ub + index[target]: -float(a)})
    B = np.zeros((len(rows), pm.nv))
    for r, row in enumerate(rows):
        for k, c in row.items():
            B[r, k] = c
    rng = np.random.default_rng(2)
    qp, v, q_tree = _tree_state(robot, pm, rng)
    Q = rng.normal(size=pm.nv)
    Q[[ub + i for i in robot.mimic_bodies]] = 0.0
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T
    bias = pin.rnea(pm, pd, qp, v, np.zeros(pm.nv))
    m = len(rows)
    K = np.block([[M, -B.T], [B, np.zeros((m, m))]])
    ref = np.linalg.solve(K, np.concatenate([Q - bias, np.zeros(m)]))[:pm.nv]
    got = np.array(_recursion(robot, q_tree, v, constraints=rows).accelerations(list(Q)))
    assert np.abs(got - ref).max() <= 1e-11 * max(1.0, np.abs(ref).max())
    assert np.abs(B @ got).max() <= 1e-12 * max(1.0, np.abs(ref).max())
