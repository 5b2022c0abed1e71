"""numba kernels: exact draws of a small Potts field by enumerating every labelling.

Labelling ``s`` of ``n`` points with ``G`` classes is the base-``G`` number ``s``, point 0 the
most significant digit (the order of :func:`pymc_knn.testing.all_labelings`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .signals import check_signals


@njit(cache=True)
def decode_labelling(s, G, z):
    """Write labelling number ``s`` into ``z``."""
    for i in range(z.size - 1, -1, -1):
        z[i] = s % G
        s //= G


@njit(cache=True)
def state_energies(src, dst, weight, class_weights, n, G):
    """``E(z)`` of every labelling ``z`` of ``n`` points, from an edge list."""
    S = G**n
    out = np.empty(S)
    z = np.zeros(n, dtype=np.int64)
    for s in range(S):
        if (s & 0xFFFF) == 0:  # 65536 states between checks
            check_signals()
        decode_labelling(s, G, z)
        e = 0.0
        for p in range(src.size):
            if z[src[p]] == z[dst[p]]:
                e += weight[p] * class_weights[z[src[p]]]
        out[s] = e
    return out


@njit(cache=True)
def enumerated_draw(src, dst, weight, class_weights, beta, z, u):
    """An exact draw ``z ~ f(. | beta)`` by inversion of the enumerated law with uniform ``u``."""
    G = class_weights.size
    logp = beta * state_energies(src, dst, weight, class_weights, z.size, G)
    p = np.exp(logp - logp.max())
    target = u * p.sum()
    acc = 0.0
    s = p.size - 1
    for t in range(p.size):
        acc += p[t]
        if target < acc:
            s = t
            break
    decode_labelling(s, G, z)
