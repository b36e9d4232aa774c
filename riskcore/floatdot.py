"""Products of float arrays that give the same bits on every machine.

numpy's `@` on floats calls BLAS, and OpenBLAS picks its kernels by CPU; they add in different orders, so the
last bits differ between machines, and with them a search's tie-breaks: the genetic tuning of the minimax agent
tuned other weights on another CPU from the same seed. Here the products are taken element by element (exactly
rounded) and summed by numpy's own reduction, whose order is fixed by the code, not the CPU.
"""

from __future__ import annotations

import numpy as np


def dot(a, b) -> np.ndarray | float:
    """`a @ b` for a vector or matrix `a` and a vector `b`, or a vector `a` and a matrix `b`."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if b.ndim == 1 and a.ndim in (1, 2) and a.shape[-1] == b.shape[0]:
        return (a * b).sum(axis=-1)
    if a.ndim == 1 and b.ndim == 2 and a.shape[0] == b.shape[0]:
        return (a[:, None] * b).sum(axis=0)
    raise ValueError(f"dot: cannot multiply shapes {a.shape} and {b.shape}")
