"""Work buffers for evaluating a compiled model: the "Data" half of the Model/Data split.

A :class:`~symbody.compilation.NumericModel` is immutable and may be shared by threads
(and, pickled, by processes); everything an evaluation writes goes into a
:class:`Workspace` instead: the flat argument vector ``z = [t, q, u, r, constants, u']`` and the output buffers of
the compiled kernels (the kernels write the linear systems of the right-hand side in the
layout LAPACK solves in place).
Each thread gets its own (``model.workspace()``), created on first use, so the hot path
allocates nothing but the returned derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Workspace"]


class Workspace:
    """Preallocated buffers for one model in one thread.

    ``z`` (nz,): kernel arguments; ``main``, ``velocity``, ``holonomic``, ``forward``: kernel
    outputs (the main one holds q', the system matrix S column by column and its right-hand
    side, solved in place for u' and λ; the forward one [q', u']).
    """

    __slots__ = ("z", "main", "velocity", "holonomic", "forward")

    def __init__(self, nz: int, kernel_sizes: dict[str, int]) -> None:
        self.z = np.zeros(nz)
        self.main = np.empty(kernel_sizes.get("main", 0))
        self.velocity = np.empty(kernel_sizes.get("velocity", 0))
        self.holonomic = np.empty(kernel_sizes.get("holonomic", 0))
        self.forward = np.empty(kernel_sizes.get("forward", 0))

    def __repr__(self) -> str:
        sizes: dict[str, Any] = {name: getattr(self, name).shape for name in self.__slots__}
        return f"<Workspace {sizes}>"
