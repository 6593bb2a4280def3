"""``robot.inverse_dynamics_derivatives`` of a big tree: factors emitted, products in C.

Written out as straight-line code, ∂τ/∂q, ∂τ/∂u and M of TIAGo dual (101 speeds) are one
kernel of 30 603 outputs, 84 % of them zero, 1.5 MB of machine code: 57 µs a call in a
loop, but about 100 µs when each call follows one of Pinocchio's (the code no longer stays
in the caches).  Every entry is a dot product of short per-speed vectors
(:class:`.rnea_derivatives.RneaFactors`), so from ``PRODUCTS_MIN_ENTRIES`` entries on the
emitted kernel gives only those (42 values a speed, O(n) code) and the same compiled call
forms the products on the tree's sparsity pattern
(:mod:`symbody.compilation.native_tree_products`).  The dense kernel stays the function's
kernel for everything else (batches, ``into``, export, CasADi), built only when one of
those first needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..compilation.codegen import compile_kernel
from ..compilation.compiled_kernel import LazyKernel
from .functions import RobotFunction
from .rnea_derivatives import FACTOR_WIDTH, rnea_derivative_factors

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["PRODUCTS_MIN_ENTRIES", "folded_entries", "inverse_derivatives_function"]

#: from this many :func:`folded_entries` on, the one-state call forms the products in C.
#: Measured (2026-11-28, benchmarks/RESULTS.md): at 36-85 entries (Solo12, Panda, b1-z1
#: and the free-flyers of 18-25 speeds, whose six columns the dense kernel folds) the dense
#: kernel is up to 22 % faster; from 159 (Baxter, 19 speeds) on the products are as fast
#: (within the 2 % noise) or up to 48 % faster (TIAGo dual)
PRODUCTS_MIN_ENTRIES = 120


def inverse_derivatives_function(robot: Robot, build: Any) -> RobotFunction:
    """The (3, o, o) function of (q, u, u_dot, p); ``build() -> (exprs, shape)``: its dense
    expressions.  Below ``PRODUCTS_MIN_ENTRIES``, or without a C compiler, their kernel
    compiled now; else one state given as float vectors goes through the factors' kernel and
    the products, and the dense kernel is compiled when something else first needs it."""
    us = robot.symengine_symbols[1]
    arguments = ("q", "u", "u_dot", "p")
    key = ("inverse_dynamics_derivatives",)

    def dense_now() -> RobotFunction:
        return robot._function(key, arguments, build, always_c=True)  # noqa: SLF001 (its helper)

    parts = robot._symbolic      # noqa: SLF001 (the robot's functions and symbols)
    cache = parts["functions"]
    if folded_entries(robot) < PRODUCTS_MIN_ENTRIES:
        return dense_now()
    products_key = (*key, "products")
    if products_key in cache:
        return cache[products_key]

    def careful(*values: Any) -> np.ndarray:     # what the compiled entry does not take
        out = f._one_state(values)       # noqa: SLF001 (the module's own class)
        return out if out is not None else f._careful(values, None)  # noqa: SLF001

    entry = _products_entry(robot, careful)
    if entry is None:
        return dense_now()
    groups = {a: parts["groups"][a] for a in arguments}
    flat = [a for g in groups.values() for a in g]
    name = key[0]

    def dense_kernel():
        exprs, _ = build()
        return compile_kernel(flat, exprs, name=name, symengine_names=parts["names"],
                              model_kernel=True)

    o = len(us)
    f = RobotFunction.__new__(RobotFunction)
    f._setup(name, groups, (3, o, o), parts["constants"],   # noqa: SLF001 (the module's own class)
             LazyKernel(len(flat), 3 * o * o, "c", name, dense_kernel))
    f.__dict__["_entry"] = entry
    cache[products_key] = f
    return f


def folded_entries(robot: Robot) -> int:
    """The entries (k, c) of ∂τ/∂q's tree pattern (k in the subtree of c's body or above
    it) with neither k nor c a free-flyer's speed: Σ_i n_i (n_sub(i) + n_anc(i)) over the
    moving bodies, n_i their speeds.  The free-flyer's columns are constant unit vectors the
    dense kernel folds; these are the entries it cannot, the work the products share."""
    layout, parent = robot.tree_layout, [b.parent for b in robot.tree.bodies]
    n = [0] + [s.stop - s.start for s in layout.u_slices[1:]]
    sub, anc = list(n), [0] * len(n)
    for i in range(len(n) - 1, 0, -1):          # depth-first: children after parents
        sub[parent[i]] += sub[i]
    for i in range(1, len(n)):
        anc[i] = anc[parent[i]] + n[parent[i]]
    return sum(n[i] * (sub[i] + anc[i]) for i in range(1, len(n)))


def _products_entry(robot: Robot, careful: Any) -> Any:
    """The compiled one-state call ``entry(q, u, u_dot)`` of the factors' kernel and the
    products (other arguments go to ``careful``), None without a C compiler."""
    from ..compilation.c_kernels import compiler_available
    from ..compilation.native_tree_products import tree_products_entry
    if not compiler_available():
        return None
    qs, us, uds, _ = robot.symengine_symbols
    t = rnea_derivative_factors(robot.tree, qs, us, uds,
                                robot._gravity_vector(),  # noqa: SLF001 (the robot's helper)
                                robot.tree_inertias, robot.floating_base)

    def build():
        return [x for row in t.rows for x in row], (len(t.rows) * FACTOR_WIDTH,)

    factors = robot._function(("inverse_dynamics_factors",),  # noqa: SLF001 (its helper)
                              ("q", "u", "u_dot", "p"), build, always_c=True)
    o, perm = len(us), robot.speed_permutation
    pos = [0] * o
    for a, k in enumerate(perm):
        pos[k] = a
    diagonal = np.zeros(o)
    damping = robot._joint_damping_friction()[0]     # noqa: SLF001 (the robot's helper)
    for k, d in damping.items():
        diagonal[k] = float(d)
    return tree_products_entry(factors.kernel, (len(qs), o, o), factors.constants,
                               t.subtree, t.above, pos, diagonal, careful)
