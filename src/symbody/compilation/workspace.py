"""Work buffers for evaluating a compiled model: the "Data" half of the Model/Data split.

A :class:`~symbody.compilation.NumericModel` is immutable and may be shared by threads
(and, pickled, by processes); everything an evaluation writes goes into a
:class:`Workspace` instead: the flat argument vector ``z = [t, q, u, r, constants, u']``,
the output buffers of the compiled kernels and the matrix of the augmented system.
Each thread gets its own (``model.workspace()``), created on first use, so the hot path
allocates nothing but the returned derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Workspace"]


class Workspace:
    """Preallocated buffers for one model in one thread.

    ``z`` (nz,): kernel arguments; ``main``, ``velocity``, ``holonomic``: kernel outputs;
    ``system`` ((o + m) x (o + m), Fortran order) and ``system_rhs`` (o + m,): the
    augmented system [[M_d, B_a^T], [B_a, 0]] [u'; λ] = [-g_d; -b_a] (or M_d u' = -g_d).
    """

    __slots__ = ("z", "main", "velocity", "holonomic", "system", "system_rhs")

    def __init__(self, nz: int, kernel_sizes: dict[str, int], system_size: int) -> None:
        self.z = np.zeros(nz)
        self.main = np.empty(kernel_sizes.get("main", 0))
        self.velocity = np.empty(kernel_sizes.get("velocity", 0))
        self.holonomic = np.empty(kernel_sizes.get("holonomic", 0))
        self.system = np.zeros((system_size, system_size), order="F")
        self.system_rhs = np.empty(system_size)

    def __repr__(self) -> str:
        sizes: dict[str, Any] = {name: getattr(self, name).shape for name in self.__slots__}
        return f"<Workspace {sizes}>"
