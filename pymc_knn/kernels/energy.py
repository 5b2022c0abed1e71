"""numba kernels: energies, local fields and the log pseudo-likelihood.

See :mod:`pymc_knn.kernels.structure` for the edge-list and CSR conventions.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def energy(src, dst, weight, z, class_weights):
    """``E(z) = sum_e weight_e a_{z_src} [z_src == z_dst]`` over an edge list."""
    # branch-free (a third faster on 5e6 edges: no mispredictions), and two running sums over
    # the two halves, which the CPU adds in parallel (1.5x faster on the renumbered graph of
    # 10^6 points, 132 -> 88 ms; no change at 10^5)
    half = src.size // 2
    e0 = 0.0
    e1 = 0.0
    for p in range(half):
        g = z[src[p]]
        e0 += weight[p] * class_weights[g] * (g == z[dst[p]])
        q = p + half
        g = z[src[q]]
        e1 += weight[q] * class_weights[g] * (g == z[dst[q]])
    if src.size % 2:
        p = src.size - 1
        g = z[src[p]]
        e0 += weight[p] * class_weights[g] * (g == z[dst[p]])
    return e0 + e1


@njit(cache=True)
def equal_pairs(src, dst, z):
    """The number of edges joining equal labels: ``energy / (weight a)`` of a field whose edges
    share one weight and whose classes one weight (a kNN coupling with equal class weights),
    without reading the weights (on the ``k = 50`` graph of 10^5 points 9.2 ms against 13 for
    :func:`energy`, a 2-core Intel Xeon)."""
    # float sums (exact below 2^53): LLVM keeps them in order, so the loop stays scalar; integer
    # sums it vectorises with gathers, 2-3.4x slower than scalar loads on an Intel Xeon (Ice
    # Lake: 20.6 ms here, 28 against 8 us on Ripley's graph; benchmarks/README.md)
    half = src.size // 2
    n0 = 0.0
    n1 = 0.0
    for p in range(half):
        n0 += z[src[p]] == z[dst[p]]
        q = p + half
        n1 += z[src[q]] == z[dst[q]]
    if src.size % 2:
        n0 += z[src[-1]] == z[dst[-1]]
    return np.int64(n0 + n1)


@njit(cache=True)
def nested_equal_pairs(src, dst, z, k_big, k_small):
    """:func:`equal_pairs` of a symmetrised kNN edge list of ``k_big`` entries a row (each row's
    neighbours nearest first, :func:`~pymc_knn.kernels.structure.knn_edges`) and of the graph at
    ``k_small <= k_big``, its first ``k_small`` entries a row, in one pass: ``(big, small)``. A
    bridging field of a ``k`` move reads both counts; a row's own label is read once. Float
    sums, as in :func:`equal_pairs`, keep the loops scalar."""
    big = 0.0
    small = 0.0
    for start in range(0, src.size, k_big):
        g = z[src[start]]
        near = 0.0
        for p in range(start, start + k_small):
            near += z[dst[p]] == g
        far = 0.0
        for p in range(start + k_small, start + k_big):
            far += z[dst[p]] == g
        small += near
        big += near + far
    return np.int64(big), np.int64(small)


@njit(cache=True)
def equal_pairs_columns(src, dst, Z, m):
    """:func:`equal_pairs` of each of the first ``m`` columns of ``Z`` (points x columns, a
    small integer type) in one pass over the edge list, each the same count as alone.

    A pass reads each edge once for all the columns, and a point's labels in all of them from
    one row of ``Z``: the bridging fields of a ``k`` move count their equal pairs so
    (:func:`pymc_knn.kernels.mcmc.bridged_log_ratio`), where a pass each cost about a sweep."""
    counts = np.zeros(m, dtype=np.int64)
    for p in range(src.size):
        zi, zj = Z[np.uint64(src[p]), :m], Z[np.uint64(dst[p]), :m]
        for t in range(m):
            counts[t] += zi[t] == zj[t]
    return counts


@njit(cache=True)
def nested_equal_pairs_columns(src, dst, Z, m, k_big, k_small):
    """:func:`nested_equal_pairs` of each of the first ``m`` columns of ``Z`` (as in
    :func:`equal_pairs_columns`), in one pass: ``(big, small)``, two arrays of ``m`` counts."""
    big = np.zeros(m, dtype=np.int64)
    small = np.zeros(m, dtype=np.int64)
    for start in range(0, src.size, k_big):
        zi = Z[np.uint64(src[start]), :m]
        for p in range(start, start + k_small):
            zj = Z[np.uint64(dst[p]), :m]
            for t in range(m):
                small[t] += zi[t] == zj[t]
        for p in range(start + k_small, start + k_big):
            zj = Z[np.uint64(dst[p]), :m]
            for t in range(m):
                big[t] += zi[t] == zj[t]
    for t in range(m):
        big[t] += small[t]
    return big, small


@njit(cache=True)
def knn_energy_all_k(neighbours, reverse_rank, z, class_weights, equal):
    """Energies ``E_k(z)`` for ``k = 1..K`` of a kNN model in one pass over the ranks.

    Because ``E_k`` is linear in the pair indicators, it is a prefix sum over neighbour ranks: the
    entry of rank ``r`` belongs to every ``k > r`` (symmetrised model); for the equal-weight model a
    pair enters at rank ``min(r_ij, r_ji)`` and is counted once.
    """
    n, K = neighbours.shape
    contrib = np.zeros(K)
    for i in range(n):
        g = z[i]
        for r in range(K):
            j = neighbours[i, r]
            if z[j] != g:
                continue
            if equal:
                rr = reverse_rank[i, r]
                if r > rr or (r == rr and i > j):
                    continue
            contrib[r] += class_weights[g]
    out = np.empty(K)
    total = 0.0
    for r in range(K):
        total += contrib[r]
        out[r] = total / (r + 1)
    return out


@njit(cache=True)
def neighbour_counts(indptr, indices, data, z, n_classes):
    """``c[i, g] = sum_j A_ij [z_j == g]`` from a CSR coupling matrix."""
    n = indptr.size - 1
    c = np.zeros((n, n_classes))
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            c[i, z[indices[p]]] += data[p]
    return c


@njit(cache=True)
def local_fields(indptr, indices, data, z, class_weights):
    """Local fields ``h[i, g] = a_g sum_j A_ij [z_j == g]``; ``P(z_i = g | z_-i) ∝ exp(beta h[i, g])``."""
    h = neighbour_counts(indptr, indices, data, z, class_weights.size)
    for i in range(h.shape[0]):
        for g in range(h.shape[1]):
            h[i, g] *= class_weights[g]
    return h


@njit(cache=True)
def log_pl_derivatives(h, y, beta, weights=None):
    """The log pseudo-likelihood at ``beta`` and its first two derivatives in ``beta``.

    With fields ``h[i, g]`` (``P(y_i = g | y_-i) ∝ exp(beta h[i, g])``)::

        log PL = sum_i beta h[i, y_i] - log sum_g exp(beta h[i, g])
        d/dbeta = sum_i h[i, y_i] - E_i[h],   d2/dbeta2 = -sum_i Var_i[h]

    with ``E_i``, ``Var_i`` under the conditional of point ``i``; ``log PL`` is concave in beta.
    ``weights[i]`` (optional) counts row ``i`` that many times: rows of equal fields and label
    merged (:func:`pymc_knn.approx.korea`).
    """
    n, G = h.shape
    value = 0.0
    d1 = 0.0
    d2 = 0.0
    for i in range(n):
        mx = -np.inf
        for g in range(G):
            if beta * h[i, g] > mx:
                mx = beta * h[i, g]
        s = 0.0
        m1 = 0.0
        m2 = 0.0
        for g in range(G):
            e = np.exp(beta * h[i, g] - mx)
            s += e
            m1 += e * h[i, g]
            m2 += e * h[i, g] * h[i, g]
        m1 /= s
        m2 /= s
        w = 1.0 if weights is None else weights[i]
        value += w * (beta * h[i, y[i]] - mx - np.log(s))
        d1 += w * (h[i, y[i]] - m1)
        d2 -= w * (m2 - m1 * m1)
    return value, d1, d2


@njit(cache=True)
def log_pseudo_likelihood(indptr, indices, data, z, beta, class_weights):
    """``sum_i log P(z_i | z_-i)`` with the conditionals given by the CSR rows.

    With the symmetric couplings ``A = W + W^T`` this is the pseudo-likelihood of Cucala et al.
    (2009), eq. 8, and of Friel and Pettitt (2011), section 4.1 (the product of the true full
    conditionals). With the directed rows of the Holmes-Adams neighbourhood it is eq. 2 of
    Cucala et al., which is not the pseudo-likelihood of any joint model.
    """
    h = local_fields(indptr, indices, data, z, class_weights)
    return log_pl_derivatives(h, z, beta)[0]
