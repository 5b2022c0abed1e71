"""numba helpers on node sets stored as ``uint64`` bit masks (bit ``j`` is node ``j``, p <= 64).

numba turns ``uint64 op int64`` into float64, so every constant here is a ``np.uint64``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ONE = np.uint64(1)
ZERO = np.uint64(0)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
MAX_NODES = 64
"""The largest number of features (nodes) a bit mask holds."""


@njit(cache=True)
def bit(j):
    """The mask of the single node ``j``."""
    return ONE << np.uint64(j)


@njit(cache=True)
def popcount(x):
    """Number of nodes in the mask ``x`` (SWAR population count)."""
    x = x - ((x >> ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True)
def lowest(x):
    """Index of the lowest node of a non-empty mask."""
    return popcount((x & (~x + ONE)) - ONE)


@njit(cache=True)
def members(x, out):
    """Write the nodes of ``x`` in increasing order into ``out``; return how many."""
    a = 0
    while x != ZERO:
        j = lowest(x)
        out[a] = j
        a += 1
        x &= x - ONE
    return a


@njit(cache=True)
def nth_member(x, r):
    """The ``r``-th (0-based, increasing order) node of the mask ``x``."""
    for _ in range(r):
        x &= x - ONE
    return lowest(x)


def mask_of(nodes) -> np.uint64:
    """The mask of an iterable of node indices (Python side)."""
    m = 0
    for j in nodes:
        m |= 1 << int(j)
    return np.uint64(m)


def nodes_of(mask) -> list[int]:
    """The sorted node indices of a mask (Python side)."""
    m = int(mask)
    return [j for j in range(MAX_NODES) if m >> j & 1]
