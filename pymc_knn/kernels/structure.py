"""numba builders of neighbour structures: distances, kNN edge lists, d-nn weights, CSR.

Conventions shared by every kernel of the package
-------------------------------------------------
A model's energy is ``E(y) = sum_i sum_{j != i} W_ij a_{y_i} [y_i == y_j]``. Kernels never see
``W`` itself but two views of the symmetric couplings ``A = W + W^T``:

* an *edge list* ``(src, dst, weight)`` in which the weights of the entries of one pair add up to
  ``A_ij`` (a pair may appear twice: mutual kNN neighbours do), so that
  ``E(y) = sum_e weight_e a_{y_src} [y_src == y_dst]``;
* a symmetric *CSR* matrix ``(indptr, indices, data)`` holding every edge in both rows, so that the
  local field of point ``i`` is ``h_i(g) = a_g sum_j A_ij [y_j == g]`` and
  ``P(y_i = g | y_-i) ∝ exp(beta h_i(g))``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def squared_distances(A, B):
    """Squared Euclidean distances ``(m, n)`` between the rows of ``A`` and ``B``.

    Computed as the sum of squared coordinate differences, so ``d(a, b) == d(b, a)`` bit for bit
    and equal distances are equal in floating point: tie rules then act on real ties.
    """
    m, p = A.shape
    n = B.shape[0]
    out = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            s = 0.0
            for c in range(p):
                diff = A[i, c] - B[j, c]
                s += diff * diff
            out[i, j] = s
    return out


@njit(cache=True)
def reverse_ranks(neighbours):
    """``rev[i, r]``: the rank of ``i`` in the list of ``j = neighbours[i, r]``, or ``K`` if absent."""
    n, K = neighbours.shape
    rank_of = np.full(n, K, dtype=np.int64)
    rev = np.empty((n, K), dtype=np.int64)
    # Entries grouped by target j (counting sort); rank_of holds j's ranks while j is processed.
    pos = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        for r in range(K):
            pos[neighbours[i, r] + 1] += 1
    for j in range(n):
        pos[j + 1] += pos[j]
    src_i = np.empty(n * K, dtype=np.int64)
    src_r = np.empty(n * K, dtype=np.int64)
    fill = pos[:-1].copy()
    for i in range(n):
        for r in range(K):
            j = neighbours[i, r]
            src_i[fill[j]] = i
            src_r[fill[j]] = r
            fill[j] += 1
    for j in range(n):
        for r in range(K):
            rank_of[neighbours[j, r]] = r
        for p in range(pos[j], pos[j + 1]):
            rev[src_i[p], src_r[p]] = rank_of[src_i[p]]
        for r in range(K):
            rank_of[neighbours[j, r]] = K
    return rev


NO_ORDER = np.zeros(0, dtype=np.int64)
"""``perm`` and ``rank`` of :func:`knn_edges` and :func:`knn_csr` for the points' own order."""


@njit(cache=True)
def knn_edges(neighbours, reverse_rank, k, equal, perm, rank):
    """Edge list of the kNN model at ``k``.

    Symmetrised model (Cucala et al. 2009, eq. 3): one entry ``i -> j`` of weight ``1/k`` for each
    of the ``k`` nearest neighbours ``j`` of ``i``; a mutual pair gets two entries (weight ``2/k``).
    Equal-weight model (Yoon and Friel 2015, Boltzmann(2)): each pair of the undirected kNN graph
    once, weight ``1/k``; a mutual pair is kept from the side ``i < j``.

    ``perm``, ``rank`` (inverse permutations, or both :data:`NO_ORDER`): the points renumbered,
    point ``perm[r]`` becoming ``r``, and the edges listed row by row in that order.
    """
    n = neighbours.shape[0]
    same = perm.size == 0
    count = n * k  # every entry of the symmetrised model
    if equal:
        count = 0
        for i in range(n):
            for r in range(k):
                if reverse_rank[i, r] >= k or i < neighbours[i, r]:
                    count += 1
    src = np.empty(count, dtype=np.int32)  # int32: a sweep reads half the bytes
    dst = np.empty(count, dtype=np.int32)
    e = 0
    for row in range(n):
        i = row if same else perm[row]
        for r in range(k):
            j = neighbours[i, r]
            if not equal or reverse_rank[i, r] >= k or i < j:
                src[e] = row
                dst[e] = j if same else rank[j]
                e += 1
    weight = np.full(count, 1.0 / k)
    return src, dst, weight


@njit(cache=True)
def knn_csr(neighbours, reverse_rank, k, equal, perm, rank):
    """Symmetric CSR of the kNN couplings at ``k``, one entry per neighbouring pair.

    Row ``i`` holds its ``k`` nearest (weight ``2/k`` for a mutual pair in the symmetrised model,
    ``1/k`` otherwise) and then the points that count ``i`` among their ``k`` nearest without
    being among ``i``'s (weight ``1/k``). Merging mutual pairs keeps rows short for the samplers.
    ``perm``, ``rank``: the points renumbered as in :func:`knn_edges`.
    """
    n = neighbours.shape[0]
    same = perm.size == 0
    w = 1.0 / k
    length = np.full(n, k, dtype=np.int64)
    for i in range(n):
        for r in range(k):
            if reverse_rank[i, r] >= k:
                j = neighbours[i, r]
                length[j if same else rank[j]] += 1
    indptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        indptr[i + 1] = indptr[i] + length[i]
    indices = np.empty(indptr[n], dtype=np.int64)
    data = np.empty(indptr[n])
    fill = indptr[:-1] + k
    for row in range(n):
        i = row if same else perm[row]
        for r in range(k):
            j = neighbours[i, r]
            j = j if same else rank[j]
            p = indptr[row] + r
            indices[p] = j
            if reverse_rank[i, r] < k:
                data[p] = w if equal else 2.0 * w
            else:
                data[p] = w
                indices[fill[j]] = row
                data[fill[j]] = w
                fill[j] += 1
    return indptr, indices, data


@njit(cache=True)
def breadth_first_order(neighbours, width):
    """The points in breadth-first order over their ``width`` nearest neighbours (each component
    from its lowest index): neighbours get nearby numbers, so a sweep over the renumbered graph
    reads and writes the labels and the union-find arrays in nearby places, in any dimension."""
    n = neighbours.shape[0]
    width = min(width, neighbours.shape[1])
    seen = np.zeros(n, dtype=np.bool_)
    out = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    for s in range(n):
        if seen[s]:
            continue
        seen[s] = True
        out[tail] = s
        tail += 1
        while head < tail:
            i = out[head]
            head += 1
            for r in range(width):
                j = neighbours[i, r]
                if not seen[j]:
                    seen[j] = True
                    out[tail] = j
                    tail += 1
    return out


@njit(cache=True)
def knn_counts_next(counts, neighbours, reverse_rank, y, k, kind):
    """Class counts of each point's kNN neighbourhood from ``k - 1`` to ``k``, in place.

    ``counts[i, g]`` is the number of entries of row ``i`` (in units of ``1/k``) in class ``g``,
    so that the local fields are ``a_g counts[i, g] / k``: ``kind`` 0 (symmetrised, eq. 3 of
    Cucala et al. 2009) adds each point's ``k``-th nearest to its row and the point to that
    neighbour's row; 1 (equal weights, Boltzmann(2)) does so only for a pair not yet joined
    (a pair joined from both sides at once counts from its lower index); 2 (asymmetric) adds
    the ``k``-th nearest to the point's row only. ``O(n)`` per ``k``.
    """
    r = k - 1
    for i in range(neighbours.shape[0]):
        j = neighbours[i, r]
        rank = reverse_rank[i, r]  # where i stands in j's list
        if kind == 1 and (rank < r or (rank == r and j < i)):
            continue  # already joined, or joined from j's side now
        counts[i, y[j]] += 1
        if kind != 2:
            counts[j, y[i]] += 1


@njit(cache=True)
def csr_from_edges(n, src, dst, weight):
    """Symmetric CSR ``(indptr, indices, data)``: each edge stored in both of its rows."""
    indptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(src.size):
        indptr[src[e] + 1] += 1
        indptr[dst[e] + 1] += 1
    for i in range(n):
        indptr[i + 1] += indptr[i]
    fill = indptr[:-1].copy()
    indices = np.empty(indptr[n], dtype=np.int64)
    data = np.empty(indptr[n])
    for e in range(src.size):
        i = src[e]
        j = dst[e]
        indices[fill[i]] = j
        data[fill[i]] = weight[e]
        fill[i] += 1
        indices[fill[j]] = i
        data[fill[j]] = weight[e]
        fill[j] += 1
    return indptr, indices, data


@njit(cache=True)
def directed_knn_csr(neighbours, k):
    """CSR of the asymmetric (Holmes-Adams) neighbourhood: row ``i`` holds its ``k`` nearest."""
    n = neighbours.shape[0]
    indptr = np.arange(n + 1) * k
    indices = np.ascontiguousarray(neighbours[:, :k]).reshape(n * k)
    data = np.full(n * k, 1.0 / k)
    return indptr, indices, data


GAUSSIAN, BALL, EXPONENTIAL = 0, 1, 2
LOG_NEGLIGIBLE = -54.0 * np.log(2.0)
"""Log of a weight, relative to a row's largest, below which adding it to the row's running sums
changes nothing in float64 (it is under half an ulp of each of them)."""
SIGMA_RANGE = 1e150
"""The gaussian and ball kernels' ``sigma`` is taken at least ``1 / SIGMA_RANGE``: below it
``sigma**2`` leaves float64 (0, then NaN weights or a ball without its centre), while the weights,
taken relative to each row's nearest point (:func:`dnn_log_ratio`), already equal their limit for
any two squared distances that differ by more than 1e-297."""


@njit(cache=True)
def gaussian_factor(sigma):
    """``-1 / (2 sigma^2)``, finite for every ``sigma > 0`` (see :data:`SIGMA_RANGE`)."""
    s = max(sigma, 1.0 / SIGMA_RANGE)
    return -0.5 / (s * s)


@njit(cache=True)
def ball_radius2(sigma):
    """The ball kernel's squared radius ``sigma^2``, at least ``SIGMA_RANGE**-2``."""
    s = max(sigma, 1.0 / SIGMA_RANGE)
    return s * s


@njit(cache=True)
def smallest_positive_sq(sorted_sq):
    """The smallest positive entry of a table of rows sorted in increasing order: the data's
    smallest positive squared distance, every row's first positive entry being its nearest other
    point not at distance 0; ``inf`` when a row holds no positive entry (its nearest such point
    may lie beyond the table)."""
    best = np.inf
    for i in range(sorted_sq.shape[0]):
        r = np.searchsorted(sorted_sq[i], 0.0, side="right")
        if r == sorted_sq.shape[1]:
            return np.inf
        best = min(best, sorted_sq[i, r])
    return best


@njit(cache=True)
def dnn_log_ratio(sq, sq_ref, sigma, kernel, epsilon):
    """``log K(d) - log K(d_ref)`` for the kernels of Friel and Pettitt (2011), d-nn1 to d-nn3,
    at squared distances ``sq`` and ``sq_ref``.

    Taken as a difference before any exponent, so that it is never NaN: 0 where ``d == d_ref``,
    and ``-inf`` (or ``+inf``) where the weight is negligible beside (or dominates) the
    reference's, for any ``sigma > 0`` and covariates of any magnitude.
    """
    if kernel == GAUSSIAN:
        return (sq - sq_ref) * gaussian_factor(sigma)
    if kernel == EXPONENTIAL:
        return (np.sqrt(sq_ref) - np.sqrt(sq)) * sigma
    r2 = ball_radius2(sigma)
    return (0.0 if sq < r2 else np.log(epsilon)) - (0.0 if sq_ref < r2 else np.log(epsilon))


@njit(cache=True)
def dnn_log_ratios(sqdist, sq_ref, sigma, kernel, epsilon):
    """:func:`dnn_log_ratio` of each entry of the array ``sqdist``."""
    out = np.empty(sqdist.size)
    for j in range(sqdist.size):
        out[j] = dnn_log_ratio(sqdist[j], sq_ref, sigma, kernel, epsilon)
    return out


@njit(cache=True)
def row_reference(sqdist, skip):
    """The smallest of ``sqdist`` without entry ``skip``: the nearest point's squared distance,
    whose weight is the largest of the row."""
    ref = np.inf
    for j in range(sqdist.size):
        if j != skip and sqdist[j] < ref:
            ref = sqdist[j]
    return ref


@njit(cache=True)
def shifted_row(logw, skip):
    """``(M, S)``: the largest of ``logw`` without entry ``skip``, and ``sum exp(logw - M)``."""
    m = -np.inf
    for j in range(logw.size):
        if j != skip and logw[j] > m:
            m = logw[j]
    total = 0.0
    for j in range(logw.size):
        if j != skip:
            total += np.exp(logw[j] - m)
    return m, total


@njit(cache=True)
def dnn_weights(sqdist, sigma, kernel, epsilon):
    """Row-normalised weights ``W_ij``, ``j != i`` (zero diagonal), stable for any ``sigma``."""
    n = sqdist.shape[0]
    W = np.zeros((n, n))
    for i in range(n):
        logw = dnn_log_ratios(sqdist[i], row_reference(sqdist[i], i), sigma, kernel, epsilon)
        m, total = shifted_row(logw, i)
        for j in range(n):
            if j != i:
                W[i, j] = np.exp(logw[j] - m) / total
    return W


@njit(cache=True)
def dense_edges(W):
    """Edge list of all pairs ``i < j`` with weight ``W_ij + W_ji``."""
    n = W.shape[0]
    m = n * (n - 1) // 2
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    weight = np.empty(m)
    e = 0
    for i in range(n):
        for j in range(i + 1, n):
            src[e] = i
            dst[e] = j
            weight[e] = W[i, j] + W[j, i]
            e += 1
    return src, dst, weight


@njit(cache=True)
def knn_enter_ranks(sq_new, sq_sorted):
    """For new points, the ``k`` from which each training point counts them among its neighbours.

    ``sq_new[m, j]`` is the squared distance from new point ``m`` to training point ``j``;
    ``sq_sorted[j, r]`` the squared distance from ``j`` to its ``r``-th nearest training point.
    A new point ranks after training points at an equal distance, so it enters ``j``'s list at
    ``k = 1 + #{r : sq_sorted[j, r] <= sq_new[m, j]}``; the entry is ``K + 1`` when that exceeds
    ``K``.
    """
    m, n = sq_new.shape
    out = np.empty((m, n), dtype=np.int64)
    for a in range(m):
        for j in range(n):
            out[a, j] = np.searchsorted(sq_sorted[j], sq_new[a, j], side="right") + 1
    return out


@njit(cache=True)
def sorted_rows(sq):
    """Each point's others by increasing distance: ``order[i, r]`` (int32) and ``sorted_sq[i, r]``.

    Ties go to the lower index (a stable sort), as everywhere in the package.
    """
    n = sq.shape[0]
    order = np.empty((n, n - 1), dtype=np.int32)
    sorted_sq = np.empty((n, n - 1))
    for i in range(n):
        row = sq[i].copy()
        row[i] = np.inf
        idx = np.argsort(row, kind="mergesort")[: n - 1]
        for r in range(n - 1):
            order[i, r] = idx[r]
            sorted_sq[i, r] = row[idx[r]]
    return order, sorted_sq


@njit(cache=True)
def dnn_row_cumulative(sorted_sq, order, sigma, kernel, epsilon, C, ends, y, class_weights):
    """Running sums of the row-normalised d-nn weights, in each row's distance order, into ``C``.

    ``C[i, r] = W_{i, order[i, 0]} + ... + W_{i, order[i, r]}`` for ``r < ends[i]`` (1 at
    ``ends[i] - 1``; the weights beyond are below float64's resolution of the sums, or zero);
    the weights are its differences, non-increasing along a row since the kernels decrease with
    distance. One row at a time (the row's weights stay in cache), which also gives ``E(y)``,
    returned. Keeping only the running sums halves the memory the kernel streams through.
    Every row holds all ``n - 1`` others: :func:`dnn_table_cumulative` for a kept table.
    """
    n, L = sorted_sq.shape
    return dnn_table_cumulative(
        sorted_sq,
        order,
        sigma,
        kernel,
        epsilon,
        C,
        y,
        class_weights,
        L,
        np.zeros(n),
        np.zeros(1),
        NO_SHELLS,
        0.0,
        0.0,
        ends,
        False,
        False,
        NO_DISTANCE_TABLE,
    )


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_EXPONENT_BITS = 4503599627370496.0 + 1023.0  # 2^52 + the exponent bias


@njit(cache=True, fastmath={"contract"})
def exp_negligible_into(w, end):
    """``w[:end] = exp(w[:end])`` for arguments in ``[LOG_NEGLIGIBLE, 0]`` (a row's log weights
    relative to its nearest), within 1 ulp of libm's and about three times as fast: libm's
    ``exp`` does not vectorise, and the exponentials are four fifths of a d-nn coupling.

    ``x = k log 2 + r`` (``|r| <= log(2) / 2``, ``log 2`` in two parts so that ``r`` is exact),
    ``exp(r)`` by its Taylor polynomial of degree 13 (remainder under ``1e-17``), times ``2^k``
    built from its exponent bits: ``k + 2^52 + 1023`` holds ``k + 1023`` in its low bits, which
    a shift by 52 makes the exponent of ``2^k`` (AVX2 has no vector conversion of a float to an
    int64, so ``int64(k)`` would be converted one lane at a time: 3.1-3.2 ns an entry against
    2.8 so). No loop branches, so all three vectorise; the multiply-adds (the range
    reduction's and the polynomial's) fuse where the CPU has FMA (``fastmath`` ``contract``
    only, no reassociation: 1.5 -> 1.1 ns an entry, still within 1 ulp).
    """
    scale = np.empty(end)
    for i in range(end):
        x = w[i]
        k = np.floor(x * _INV_LN2 + 0.5)
        r = (x - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        w[i] = p * r + 1.0
        scale[i] = k + _EXPONENT_BITS
    bits = scale.view(np.int64)
    for i in range(end):
        bits[i] = bits[i] << 52
    for i in range(end):
        w[i] *= scale[i]


@njit(cache=True)
def _row_weights(sq, sigma, kernel, epsilon, w, floor_mode, d):
    """Row weights relative to the nearest, into ``w``: ``(end, phi, tail)``.

    ``end``: the weights from there on are negligible (:data:`LOG_NEGLIGIBLE`), or zero (the
    ball's excess over its floor); ``phi``: the
    ball kernel's relative floor weight when ``floor_mode`` (``w`` then holds the excess over
    it), else 0; ``tail``: an upper bound on the relative weight of any point beyond the row.
    ``d``: the row's distances (``sqrt(sq)``) for the exponential kernel, or empty
    (:data:`NO_DISTANCES`: their square roots are taken here, to the same bits).
    """
    L = sq.size
    phi = 0.0
    if kernel == BALL:  # 1 inside the ball and epsilon outside, relative to the nearest
        end = L
        radius2 = ball_radius2(sigma)
        inside = radius2 if sq[0] < radius2 else np.inf
        if floor_mode:  # the excess over the floor: 0 outside the ball
            phi = epsilon if sq[0] < radius2 else 1.0
            end = np.searchsorted(sq, radius2) if sq[0] < radius2 else 0
        for r in range(end):
            w[r] = (1.0 if sq[r] < inside else epsilon) - phi
        # a point beyond the row is outside the ball (so at the floor) unless the row ends inside
        tail = (1.0 - phi) if sq[L - 1] < inside else 0.0
    elif kernel == GAUSSIAN:  # relative to the nearest: never inf - inf (dnn_log_ratio)
        gaussian = gaussian_factor(sigma)
        end = np.searchsorted(sq, sq[0] + LOG_NEGLIGIBLE / gaussian, side="right")
        for r in range(end):
            w[r] = (sq[r] - sq[0]) * gaussian
        exp_negligible_into(w, end)
        tail = np.exp((sq[L - 1] - sq[0]) * gaussian)
    elif d.size:  # the row's distances, kept: the square roots are a fifth of a coupling
        top = d[0]
        reach = top - LOG_NEGLIGIBLE / sigma
        end = np.searchsorted(sq, reach * reach, side="right")
        for r in range(end):
            w[r] = (top - d[r]) * sigma
        exp_negligible_into(w, end)
        tail = np.exp((top - d[L - 1]) * sigma)
    else:
        top = np.sqrt(sq[0])
        reach = top - LOG_NEGLIGIBLE / sigma
        end = np.searchsorted(sq, reach * reach, side="right")
        for r in range(end):
            w[r] = (top - np.sqrt(sq[r])) * sigma
        exp_negligible_into(w, end)
        tail = np.exp((top - np.sqrt(sq[L - 1])) * sigma)
    return end, phi, tail


NO_DISTANCES = np.zeros(0)
"""A row without its distances kept (:func:`row_weights` takes its square roots)."""
NO_DISTANCE_TABLE = np.zeros((0, 0))
"""A table without its distances kept."""
NO_SHELLS = np.zeros((0, 0), dtype=np.int32)
"""Shells of a table that has none: every dropped point is counted at the last kept distance."""


@njit(cache=True)
def shell_ratio(shell_step, sigma, kernel):
    """The kernel's ratio between consecutive shells of width ``shell_step`` (in squared
    distance for the gaussian kernel, in distance for the exponential; 1 for the ball)."""
    if kernel == GAUSSIAN:
        return np.exp(shell_step * gaussian_factor(sigma))
    if kernel == EXPONENTIAL:
        return np.exp(-shell_step * sigma)
    return 1.0


@njit(cache=True)
def dropped_weight(shells, i, shell_step, sigma, kernel, tail, n_dropped):
    """A bound on the weight, relative to row ``i``'s nearest, of the ``n_dropped`` points
    beyond its kept table, ``tail`` being the relative weight at the last kept distance.

    Without shells (``shells.shape[1] == 0``) each dropped point counts at ``tail``. With them,
    ``shells[i, j]`` dropped points lie at least ``j shell_step`` beyond the last kept distance
    (in squared distance for the gaussian kernel, in distance for the exponential), so each
    counts at ``tail q^j``, ``q`` the kernel's ratio over one shell (:func:`shell_ratio`): the
    kernel decreases with distance, so the bound holds for any ``sigma``, and is tight within
    ``1 / q`` per point.
    """
    J = shells.shape[1]
    if J == 0 or tail == 0.0:
        return n_dropped * tail
    q = shell_ratio(shell_step, sigma, kernel)
    u = 0.0
    f = tail
    for j in range(J):
        u += shells[i, j] * f
        f *= q
    return u


@njit(cache=True)
def dnn_table_share_bound(sorted_sq, sigma, kernel, epsilon, n_others, shells, shell_step):
    """The largest, over rows, of a bound on the share of a row's weight a kept table leaves out
    at ``sigma``, in ``O(n (log L + J))``: :func:`dropped_weight` over a lower bound of the kept
    weight (the row cut at positions 1, 2, 4, ..., each block counted at its farthest point)."""
    n, L = sorted_sq.shape
    if L == n_others:
        return 0.0
    worst = 0.0
    for i in range(n):
        total, tail = _kept_lower(sorted_sq[i], sigma, kernel, epsilon)
        u = dropped_weight(shells, i, shell_step, sigma, kernel, tail, n_others - L)
        if u > 0.0:
            worst = max(worst, u / (total + u))
    return worst


@njit(cache=True)
def _kept_lower(row, sigma, kernel, epsilon):
    """``(lower bound of the kept weight, weight at the last kept distance)`` of a row, relative
    to its nearest: the row cut at positions 1, 2, 4, ..., each block at its farthest point."""
    L = row.size
    total = 0.0
    lo = 0
    hi = 1
    while lo < L:
        total += (hi - lo) * np.exp(dnn_log_ratio(row[hi - 1], row[0], sigma, kernel, epsilon))
        lo = hi
        hi = min(L, 2 * hi)
    tail = np.exp(dnn_log_ratio(row[L - 1], row[0], sigma, kernel, epsilon))
    if kernel == BALL:  # the floor is carried exactly: only points inside the ball count
        tail = 1.0 if row[L - 1] < ball_radius2(sigma) else 0.0
    return total, tail


@njit(cache=True)
def dnn_table_width_needed(sorted_sq, sigma, kernel, epsilon, drop_tol, shells, shell_step):
    """The width of a table whose rows would each leave out at most ``drop_tol`` of their weight
    at ``sigma``, by the bound of :func:`dnn_table_share_bound`: each row keeps the shells of
    ``shells`` until the bound on the rest is within ``drop_tol`` of its (current) kept weight."""
    n, L = sorted_sq.shape
    J = shells.shape[1]
    q = shell_ratio(shell_step, sigma, kernel)
    width = L
    allowed = drop_tol / (1.0 - drop_tol)
    rest = np.empty(J + 1)
    for i in range(n):
        total, tail = _kept_lower(sorted_sq[i], sigma, kernel, epsilon)
        f = tail
        for j in range(J):
            rest[j] = shells[i, j] * f
            f *= q
        rest[J] = 0.0
        for j in range(J - 1, -1, -1):  # rest[j]: the bound on shells j, j + 1, ...
            rest[j] += rest[j + 1]
        keep = L
        for j in range(J):
            if rest[j] <= allowed * total:
                break
            keep += shells[i, j]
        width = max(width, keep)
    return width


PARALLEL_PAIRS = 1_000_000
"""Table entries (rows times width) from which a d-nn coupling or energy runs its rows on
numba's thread pool when allowed to (``parallel``): below, waking the threads costs more than
it saves."""
ROW_BLOCKS = 64
"""Blocks of rows the thread pool shares out (each allocates its own weight buffer)."""


@njit(cache=True)
def dnn_table_cumulative(
    sorted_sq,
    order,
    sigma,
    kernel,
    epsilon,
    C,
    y,
    class_weights,
    n_others,
    floor,
    bound,
    shells,
    shell_step,
    drop_tol,
    ends,
    parallel,
    carry_floor,
    dist,
):
    """:func:`dnn_row_cumulative` on a kept table: each row's ``L`` nearest of ``n_others``.

    Each row keeps the points of :func:`row_weights` at ``sigma`` (``ends[i]`` of its nearest:
    with ``drop_tol > 0``, gaussian and exponential kernels, the fewest whose rest is within
    ``drop_tol`` of the row's weight), normalised over them (the model of the table);
    ``bound[0]`` is raised to the largest, over rows, of the bound on the share left out: at most
    ``drop_tol`` wherever the table is wide enough, 0 when ``L == n_others`` and nothing is cut.
    The ball kernel's floor is exact instead: with a kept table its rows are normalised over all
    ``n_others``, ``floor[i]`` receives the floor weight ``W_ij`` of every other ``j``, and
    ``C`` the running sums of the excess over it; the floor's share of ``E(y)``,
    ``floor[i] (N_{y_i} - 1) a_{y_i}``, comes from the class counts ``N``. With ``carry_floor``
    the floor is carried so on a full table too (``L == n_others``): a row then ends at its
    ball's edge instead of running through every other point at the floor, which Swendsen-Wang
    and the energies carry through class totals (the edge list and CSR do not). ``C[i, r]`` is
    written for ``r < ends[i]`` only. With ``parallel`` (never in a process forked from one
    whose thread pool ran: :mod:`pymc_knn._forksafe`) a table of at least ``PARALLEL_PAIRS``
    entries is filled on numba's thread pool, with the same result to the bit (rows are
    independent and ``E(y)`` is summed in row order either way). ``dist``: the table's
    distances (``sqrt(sorted_sq)``, an exponential kernel's full table) or
    :data:`NO_DISTANCE_TABLE`; the same couplings either way, to the bit.
    """
    n, L = sorted_sq.shape
    floor_mode = kernel == BALL and (L < n_others or carry_floor)
    members, starts = class_members(y[:n], class_weights.size)
    counts = np.bincount(y, minlength=class_weights.size)
    h = np.empty(y.size)
    rows = (sorted_sq, order, sigma, kernel, epsilon, C, h, n_others, floor, dist)
    cut = (shells, shell_step, drop_tol, ends, floor_mode)
    energies, bounds = np.empty(n), np.zeros(n)
    for g in range(class_weights.size):  # a class at a time, as the energies (_rows_energies)
        rows_g = members[starts[g] : starts[g + 1]]
        if rows_g.size == 0:
            continue
        class_indicator_into(y, g, h)
        out = (rows_g, counts[g] - 1, energies, bounds)
        if parallel and n * L >= PARALLEL_PAIRS:
            _cumulative_blocks(rows, cut, out)
        else:
            _cumulative_rows(0, rows_g.size, rows, cut, out)
        for i in rows_g:
            energies[i] *= class_weights[g]
    energy = 0.0
    for i in range(n):  # in row order, whether the rows ran on the thread pool or not
        bound[0] = max(bound[0], bounds[i])
        energy += energies[i]
    return energy


@njit(cache=True, parallel=True)
def _cumulative_blocks(rows, cut, out):
    """:func:`_cumulative_row` of one class's rows on the thread pool, in ``ROW_BLOCKS``
    blocks."""
    n = out[0].size
    blocks = min(n, ROW_BLOCKS)
    for b in prange(blocks):
        _cumulative_rows(b * n // blocks, (b + 1) * n // blocks, rows, cut, out)


@njit(cache=True)
def _cumulative_rows(start, stop, rows, cut, out):
    """:func:`_cumulative_row` of one class's rows ``members[start:stop]`` into
    ``energies[i], bounds[i]`` (``out = (members, count, energies, bounds)``, ``count`` the
    class's other points)."""
    members, count, energies, bounds = out
    w = np.empty(rows[0].shape[1])
    for i in members[start:stop]:
        energies[i], bounds[i] = _cumulative_row(i, w, count, rows, cut)


@njit(cache=True, inline="always")
def _cumulative_row(i, w, count, rows, cut):
    """Row ``i`` of :func:`dnn_table_cumulative` (``w``: a buffer of the table's width;
    ``count``: the other points of its class; ``rows`` holds ``h``, the class's indicator, as
    in :func:`_rows_energies`): ``(its share of E(y) before the class weight, its bound on the
    weight share left out)``."""
    sorted_sq, order, sigma, kernel, epsilon, C, h, n_others, floor, dist = rows
    shells, shell_step, drop_tol, ends, floor_mode = cut
    L = sorted_sq.shape[1]
    d = dist[i] if dist.shape[0] else NO_DISTANCES
    end, total, dropped, phi = row_weights(
        sorted_sq[i],
        sigma,
        kernel,
        epsilon,
        w,
        floor_mode,
        drop_tol,
        shells,
        i,
        shell_step,
        n_others - L,
        d,
    )
    total += n_others * phi
    share = dropped / (total + dropped) if dropped > 0.0 else 0.0
    inv = 1.0 / total
    c_row = C[i]
    o_row = order[i]
    acc = 0.0
    e = 0.0
    for r in range(end):
        wr = w[r] * inv
        acc += wr
        c_row[r] = acc
        e += wr * h[np.uint64(o_row[r])]
    ends[i] = end
    floor[i] = phi * inv
    if floor_mode:
        e += floor[i] * count
    return e, share


CUT_SLACK = 1e-3
"""Share of ``drop_tol`` within which a cut row's weights beyond the ones computed may be
bounded rather than summed (:func:`row_weights`): a cut is then at most one point farther than
the fewest whenever the exact rest is within this share of the bound, and far fewer weights are
computed (on 10^4 2-d points, about two thirds of those out to :data:`LOG_NEGLIGIBLE`)."""


CUT_BLOCK = 64
"""Weights :func:`_cut_weights` computes at a time before it looks for its cut among them."""


@njit(cache=True)
def row_weights(
    sq, sigma, kernel, epsilon, w, floor_mode, drop_tol, shells, i, shell_step, n_dropped, d
):
    """The weights a row keeps at ``sigma``, relative to its nearest, into ``w``:
    ``(end, kept, left_out, phi)``.

    ``sq``: the row's squared distances to the ``L`` others of its table, sorted; ``n_dropped``
    more lie beyond it, bounded by :func:`dropped_weight` (``shells`` row ``i``). ``end``: the
    points kept, the row's first; ``kept``: their weight; ``left_out``: a bound on the weight of
    the others; ``phi``: the ball kernel's floor weight when ``floor_mode``
    (:func:`_row_weights`). Without ``drop_tol`` (or for the ball kernel) a row keeps its whole
    table, ``end`` marking where the weights become negligible or zero. With it (gaussian and
    exponential kernels) a row keeps the fewest of its nearest whose rest is within
    ``drop_tol`` of its weight: the weights are computed outward until every one left bounds
    the rest within ``CUT_SLACK`` of the allowance (each is at most the last computed), then the
    cut moves in while the rest stays within it. ``d``: the row's distances or
    :data:`NO_DISTANCES` (:func:`_row_weights`; a cut row takes its square roots).
    """
    L = sq.size
    if drop_tol > 0.0 and kernel != BALL:
        tail = np.exp(dnn_log_ratio(sq[L - 1], sq[0], sigma, kernel, epsilon))
        dropped = dropped_weight(shells, i, shell_step, sigma, kernel, tail, n_dropped)
        end, kept, rest = _cut_weights(sq, sigma, kernel, w, dropped, drop_tol)
        return end, kept, rest, 0.0
    end, phi, tail = _row_weights(sq, sigma, kernel, epsilon, w, floor_mode, d)
    kept = _sum4(w, end)
    dropped = 0.0
    if n_dropped > 0:
        dropped = dropped_weight(shells, i, shell_step, sigma, kernel, tail, n_dropped)
    return end, kept, dropped, phi


@njit(cache=True, inline="always")
def _sum4(w, end):
    """``w[0] + ... + w[end - 1]``, in four running sums (by ``r % 4``) whose additions
    overlap: one running sum waits on each addition (on a 1,000-point d-nn coupling 0.55 ns an
    entry less)."""
    s0 = s1 = s2 = s3 = 0.0
    r = 0
    while r + 4 <= end:
        s0 += w[r]
        s1 += w[r + 1]
        s2 += w[r + 2]
        s3 += w[r + 3]
        r += 4
    while r < end:
        s0 += w[r]
        r += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def _cut_weights(sq, sigma, kernel, w, dropped, drop_tol):
    """``(cut, kept, left_out)`` of :func:`row_weights` with ``drop_tol`` (gaussian or
    exponential kernel), ``dropped`` bounding the weight beyond the table."""
    L = sq.size
    allowed = drop_tol / (1.0 - drop_tol)
    if kernel == GAUSSIAN:
        factor = gaussian_factor(sigma)
        end = np.searchsorted(sq, sq[0] + LOG_NEGLIGIBLE / factor, side="right")
    else:
        top = np.sqrt(sq[0])
        reach = top - LOG_NEGLIGIBLE / sigma
        end = np.searchsorted(sq, reach * reach, side="right")
    kept = 0.0
    p = end
    for start in range(0, end, CUT_BLOCK):  # the exponentials a block at a time (they vectorise)
        stop = min(end, start + CUT_BLOCK)
        # slices indexed from 0: numba's wraparound of an index from `start` made LLVM gather
        block, sq_block = w[start:stop], sq[start:stop]
        if kernel == GAUSSIAN:
            for r in range(stop - start):
                block[r] = (sq_block[r] - sq[0]) * factor
        else:
            for r in range(stop - start):
                block[r] = (top - np.sqrt(sq_block[r])) * sigma
        exp_negligible_into(block, stop - start)
        for r in range(start, stop):
            kept += w[r]
            if (L - 1 - r) * w[r] + dropped <= CUT_SLACK * allowed * kept:
                p = r + 1
                break
        if p < end:
            break
    if p < end:  # each point past p weighs at most w[p - 1]
        rest = dropped + (L - p) * w[p - 1]
    else:  # each past end under exp(LOG_NEGLIGIBLE) of the nearest
        rest = dropped + (L - end) * np.exp(LOG_NEGLIGIBLE)
    m = p
    while m > 1 and rest + w[m - 1] <= allowed * (kept - w[m - 1]):
        rest += w[m - 1]
        kept -= w[m - 1]
        m -= 1
    return m, kept, rest


@njit(cache=True)
def rows_energy(order, C, ends, z, class_weights, floor, parallel):
    """``E(z) = sum_i sum_r W_{i, order[i, r]} a_{z_i} [z_i == z_{order[i, r]}]`` from the
    running sums ``C`` of :func:`dnn_table_cumulative` (row ``i`` up to ``ends[i]``), plus each
    row's floor weight ``floor[i]`` (to every other point) times the class counts; on the
    thread pool as :func:`dnn_table_cumulative` (``parallel``), with the same result."""
    table = (C, ends, floor)
    return _tables_energies(order, table, table, 1, z, class_weights, parallel)[0]


@njit(cache=True)
def rows_energies(order, C0, ends0, floor0, C1, ends1, floor1, z, class_weights, parallel):
    """``(E0(z), E1(z))``: :func:`rows_energy` of two tables over the same ``order`` (a d-nn
    field at two ``sigma``) in one pass, each to the bit as alone."""
    tables = (C0, ends0, floor0), (C1, ends1, floor1)
    e = _tables_energies(order, *tables, 2, z, class_weights, parallel)
    return e[0], e[1]


@njit(cache=True)
def rows_energy_columns(order, C, ends, floor, Z, m, class_weights):
    """:func:`rows_energy` of each of the first ``m`` columns of ``Z`` (points x columns, a
    small integer type), each to the bit as alone, in one pass over the table.

    A pass reads each entry's weight and point once for all the columns, where one energy a
    pass reads them for each: on 1,000 points of 20 covariates (10^6 entries) 64 columns cost
    about a quarter of 64 passes, 256 columns about a fifth (benchmarks/README.md, "The
    relaxation checks' energies in one pass"). Each column's sums run as
    :func:`_rows_energies`' (four parts, the floor first, the class weight after, rows in
    order), and a weight times an indicator 1 or 0 is exact, so the sums are the same."""
    n = order.shape[0]
    counts = np.zeros((class_weights.size, m))
    for j in range(Z.shape[0]):
        for t in range(m):
            counts[Z[j, t], t] += 1.0
    total = np.zeros(m)
    s = np.empty((4, m))
    for i in range(n):
        zi, c, o = Z[i, :m], C[i], order[i]
        for t in range(m):
            s[0, t] = floor[i] * (counts[zi[t], t] - 1.0)
            s[1, t] = s[2, t] = s[3, t] = 0.0
        prev, r, end = 0.0, 0, ends[i]
        while r + 4 <= end:
            for j in range(4):
                w = c[r + j] - prev
                prev = c[r + j]
                zo = Z[np.uint64(o[r + j])]
                for t in range(m):
                    s[j, t] += w * (1.0 if zo[t] == zi[t] else 0.0)
            r += 4
        while r < end:
            w = c[r] - prev
            prev = c[r]
            zo = Z[np.uint64(o[r])]
            for t in range(m):
                s[0, t] += w * (1.0 if zo[t] == zi[t] else 0.0)
            r += 1
        for t in range(m):
            total[t] += ((s[0, t] + s[1, t]) + (s[2, t] + s[3, t])) * class_weights[zi[t]]
    return total


@njit(cache=True)
def _tables_energies(order, table0, table1, m, z, class_weights, parallel):
    """The energies of the first ``m`` (1 or 2) of two tables ``(C, ends, floor)``: the rows a
    class at a time (:func:`class_members`), each through the indicator of its class."""
    n = order.shape[0]
    members, starts = class_members(z[:n], class_weights.size)
    counts = np.bincount(z, minlength=class_weights.size)
    h = np.empty(z.size)
    energies = np.empty((n, m))
    for g in range(class_weights.size):
        rows_g = members[starts[g] : starts[g + 1]]
        if rows_g.size == 0:
            continue
        class_indicator_into(z, g, h)
        rows = (order, *table0, *table1, h, rows_g, counts[g] - 1)  # flat: parfors take no nesting
        if parallel and table0[0].size >= PARALLEL_PAIRS:
            _energy_blocks(rows, rows_g.size, energies)
        else:
            _rows_energies(rows, 0, rows_g.size, energies)
        for i in rows_g:
            for t in range(m):
                energies[i, t] *= class_weights[g]
    total = np.zeros(m)
    for i in range(n):  # in row order, whether the rows ran on the thread pool or not
        for t in range(m):
            total[t] += energies[i, t]
    return total


@njit(cache=True)
def class_members(z, n_classes):
    """The points by class: ``(members, starts)``, class ``g``'s in increasing order in
    ``members[starts[g]:starts[g + 1]]``."""
    starts = np.zeros(n_classes + 1, dtype=np.int64)
    for i in range(z.size):
        starts[z[i] + 1] += 1
    for g in range(n_classes):
        starts[g + 1] += starts[g]
    fill = starts[:-1].copy()
    members = np.empty(z.size, dtype=np.int64)
    for i in range(z.size):
        members[fill[z[i]]] = i
        fill[z[i]] += 1
    return members, starts


@njit(cache=True)
def class_indicator_into(z, g, h):
    """``h[j] = 1.0`` where ``z[j] == g``, else 0."""
    for j in range(z.size):
        h[j] = 1.0 if z[j] == g else 0.0


@njit(cache=True, parallel=True)
def _energy_blocks(rows, n, energies):
    """:func:`_rows_energies` of one class's ``n`` rows on the thread pool, in ``ROW_BLOCKS``
    blocks."""
    blocks = min(n, ROW_BLOCKS)
    for b in prange(blocks):
        _rows_energies(rows, b * n // blocks, (b + 1) * n // blocks, energies)


@njit(cache=True)
def _rows_energies(rows, start, stop, out):
    """The shares of one class's rows ``members[start:stop]`` in :func:`_tables_energies`
    into ``out[i]`` (its ``m`` columns), before the class's weight (``count``: the class's
    other points, whose floor weight a row carries).

    Each weight is multiplied by the class indicator ``h`` of its point, 1 or 0, not added
    under a branch (whether a neighbour shares the class is unpredictable: mispredictions cost
    3-6 times the pass), and a row's sum runs in four parts (:func:`_weights_where`). Through
    the indicator, not through ``same[z[j]]``, and in four parts, the pass costs half
    (benchmarks/README.md, "d-nn passes a class at a time")."""
    order, C0, ends0, floor0, C1, ends1, floor1, h, members, count = rows
    for i in members[start:stop]:
        o_row, c0, c1 = order[i], C0[i], C1[i]
        if out.shape[1] == 1:
            s = (floor0[i] * count, 0.0, 0.0, 0.0, 0.0)
            out[i, 0] = _weights_where(c0, o_row, h, 0, ends0[i], s)
            continue
        # both tables in one pass up to where the shorter row ends (one read of the row's
        # order and indicators), in the same four parts as alone: each sum to the bit as alone
        both = min(ends0[i], ends1[i]) // 4 * 4
        a = (floor0[i] * count, 0.0, 0.0, 0.0, 0.0)
        b = (floor1[i] * count, 0.0, 0.0, 0.0, 0.0)
        for r in range(0, both, 4):
            a = _block_where(c0, o_row, h, r, a)
            b = _block_where(c1, o_row, h, r, b)
        out[i, 0] = _weights_where(c0, o_row, h, both, ends0[i], a)
        out[i, 1] = _weights_where(c1, o_row, h, both, ends1[i], b)


@njit(cache=True, inline="always")
def _block_where(c, o, h, r, s):
    """The four sums ``s[:4]`` plus the weights ``c[r + j] - c[r + j - 1]`` of the points
    ``o[r + j]`` whose indicator ``h`` is 1, ``j = 0..3`` one into each; ``s[4]`` is
    ``c[r - 1]`` (0 at ``r = 0``) and becomes ``c[r + 3]``."""
    return (
        s[0] + (c[r] - s[4]) * h[np.uint64(o[r])],
        s[1] + (c[r + 1] - c[r]) * h[np.uint64(o[r + 1])],
        s[2] + (c[r + 2] - c[r + 1]) * h[np.uint64(o[r + 2])],
        s[3] + (c[r + 3] - c[r + 2]) * h[np.uint64(o[r + 3])],
        c[r + 3],
    )


@njit(cache=True, inline="always")
def _weights_where(c, o, h, start, stop, s):
    """The sum of the four sums ``s[:4]`` and of the weights ``c[r] - c[r - 1]`` of
    ``start <= r < stop`` (``start`` a multiple of 4, ``s[4] = c[start - 1]``, 0 at 0) whose
    point ``o[r]`` has indicator ``h`` 1: four at a time, one into each sum (their additions
    overlap where one running sum waits on each), the rest into the first. (Unsigned indices:
    no wraparound check.)"""
    r = start
    while r + 4 <= stop:
        s = _block_where(c, o, h, r, s)
        r += 4
    first, p = s[0], s[4]
    while r < stop:
        first += (c[r] - p) * h[np.uint64(o[r])]
        p = c[r]
        r += 1
    return (first + s[1]) + (s[2] + s[3])


@njit(cache=True)
def add_floor_fields(h, z, floor, class_weights):
    """Add the floor couplings ``floor[i] + floor[j]`` of every pair to local fields ``h``
    (:func:`~pymc_knn.kernels.energy.local_fields`), through per-class totals of counts and
    floors."""
    n, G = h.shape
    counts = np.zeros(G)
    totals = np.zeros(G)
    for j in range(n):
        counts[z[j]] += 1.0
        totals[z[j]] += floor[j]
    for i in range(n):
        for g in range(G):
            same = 1.0 if z[i] == g else 0.0
            h[i, g] += class_weights[g] * (
                floor[i] * (counts[g] - same) + totals[g] - same * floor[i]
            )
    return h


@njit(cache=True)
def rows_to_edges(order, C, ends):
    """Edge list of row-sorted directed weights (row ``i``'s running sums ``C[i, :ends[i]]``): one
    entry ``i -> order[i, r]`` per positive weight (a pair appears once from each side, and
    their weights add up to ``A_ij``)."""
    n = C.shape[0]
    count = 0
    for i in range(n):
        for r in range(ends[i]):
            if C[i, r] > (C[i, r - 1] if r else 0.0):
                count += 1
    src = np.empty(count, dtype=np.int32)
    dst = np.empty(count, dtype=np.int32)
    weight = np.empty(count)
    e = 0
    for i in range(n):
        prev = 0.0
        for r in range(ends[i]):
            if C[i, r] > prev:
                src[e] = i
                dst[e] = order[i, r]
                weight[e] = C[i, r] - prev
                e += 1
            prev = C[i, r]
    return src, dst, weight
