"""numba kernels of the exact neighbour search: no ``n x n`` array anywhere.

Every squared distance is computed as in :func:`~pymc_knn.kernels.structure.squared_distances`
(the sum over coordinates, in order, of the squared difference ``query - training``), so equal
distances are equal in floating point and the results are those of the dense computation bit for
bit. Orders are by ``(squared distance, index)``: among training points at an equal distance the
lower index is the nearer.

Two engines give the same results:

* *brute*: each query streams over all training points (``O(n p)`` per query, ``O(n)``
  temporaries per thread);
* *tree*: candidates from a k-d tree (scikit-learn's :class:`~sklearn.neighbors.KDTree`, whose
  node arrays the traversals here read), re-sorted exactly; a query whose candidates might miss a
  point tied with its ``k``-th nearest is completed by a traversal (:func:`tree_knn_within`).

Reverse neighbourhoods of new points (the training points ``j`` that would count new point ``a``
among their ``k`` nearest, for some ``k <= K``) are those with ``d(a, j)^2 < rho_j^2``, ``rho_j``
being ``j``'s ``K``-th neighbour distance (a new point ranks after every training point at an
equal distance); the tree traversal prunes a node when its bounding box lies at or beyond the
largest ``rho_j^2`` inside it.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

STACK = 128
"""Depth of a traversal's stack: scikit-learn's trees are balanced, of depth ``log2(n)``."""


@njit(cache=True, inline="always")
def sq_distance(Q, a, X, j):
    """``|Q[a] - X[j]|^2``, summed over coordinates in order (as ``squared_distances``)."""
    s = 0.0
    for c in range(Q.shape[1]):
        diff = Q[a, c] - X[j, c]
        s += diff * diff
    return s


@njit(cache=True)
def sort_by_distance(idx, sq):
    """Order of ``(sq, idx)`` pairs, ascending: by distance, ties to the lower index."""
    by_index = np.argsort(idx, kind="mergesort")
    by_sq = np.argsort(sq[by_index], kind="mergesort")
    return by_index[by_sq]


INSERTION = 64
"""Lists up to this long are sorted in place by insertion (tree candidates come nearly sorted)."""


@njit(cache=True)
def _keep_nearest(idx, sq, count, K, out_nb, out_sq, a):
    """Write the ``K`` nearest of the ``count`` first ``(idx, sq)`` into row ``a`` (reorders
    ``idx`` and ``sq``)."""
    if count > INSERTION:
        order = sort_by_distance(idx[:count], sq[:count])
        for r in range(K):
            out_nb[a, r] = idx[order[r]]
            out_sq[a, r] = sq[order[r]]
        return
    for r in range(1, count):
        j, s = idx[r], sq[r]
        q = r
        while q > 0 and (sq[q - 1] > s or (sq[q - 1] == s and idx[q - 1] > j)):
            idx[q] = idx[q - 1]
            sq[q] = sq[q - 1]
            q -= 1
        idx[q] = j
        sq[q] = s
    for r in range(K):
        out_nb[a, r] = idx[r]
        out_sq[a, r] = sq[r]


@njit(cache=True)
def _blocks(m, n_blocks):
    """Bounds of ``n_blocks`` nearly equal blocks of ``0..m``."""
    return np.linspace(0, m, n_blocks + 1).astype(np.int64)


# ---------------------------------------------------------------- brute engine


@njit(cache=True)
def _sift_down(heap, K):
    """Restore the max-heap ``heap[:K]`` after its top was replaced."""
    q = 0
    while True:
        child = 2 * q + 1
        if child >= K:
            return
        if child + 1 < K and heap[child + 1] > heap[child]:
            child += 1
        if heap[child] <= heap[q]:
            return
        heap[q], heap[child] = heap[child], heap[q]
        q = child


@njit(cache=True)
def _kth_smallest(row, K, heap):
    """The ``K``-th smallest of ``row``, by a bounded max-heap (one pass, no copy)."""
    for r in range(K):
        heap[r] = np.inf
    for j in range(row.size):
        if row[j] < heap[0]:
            heap[0] = row[j]
            _sift_down(heap, K)
    return heap[0]


@njit(cache=True, parallel=True)
def brute_knn(Q, X, self_index, K, n_blocks, out_nb, out_sq):
    """The ``K`` nearest training points of each query, by streaming over all of them.

    ``self_index[a]`` is the training index of query ``a`` (left out of its own list), or -1 for
    a new point. The ``K``-th smallest distance is found first; every point at most that far
    (ties included) is then sorted, so ties go to the lower index. When ``K`` is a large share
    of ``n`` the row is sorted whole (stably, in index order) instead.
    """
    m = Q.shape[0]
    n = X.shape[0]
    bounds = _blocks(m, n_blocks)
    for b in prange(n_blocks):
        row = np.empty(n)
        heap = np.empty(K)
        idx = np.empty(n, dtype=np.int64)
        sq = np.empty(n)
        for a in range(bounds[b], bounds[b + 1]):
            for j in range(n):
                row[j] = sq_distance(Q, a, X, j)
            if self_index[a] >= 0:
                row[self_index[a]] = np.inf
            if 4 * K > n:  # a large share of the row: a stable sort is cheaper than the heap
                order = np.argsort(row, kind="mergesort")
                for r in range(K):
                    out_nb[a, r] = order[r]
                    out_sq[a, r] = row[order[r]]
                continue
            kth = _kth_smallest(row, K, heap)
            count = 0
            for j in range(n):
                if row[j] <= kth:
                    idx[count] = j
                    sq[count] = row[j]
                    count += 1
            _keep_nearest(idx, sq, count, K, out_nb, out_sq, a)


@njit(cache=True, parallel=True)
def brute_reverse(Q, X, sq_sorted, reach, n_blocks, cap, counts, rev_index, rev_k):
    """Reverse neighbourhoods of new points, by streaming over all training points.

    ``reach[j]`` is ``sq_sorted[j, K-1]`` (contiguous). ``counts[a]`` gets the number of
    training points ``j`` with ``d(a, j)^2 < reach[j]``;
    the first ``cap`` of them (by index) go to ``rev_index[a]``, with the ``k`` at which each
    enters ``j``'s list, ``1 + #{r : sq_sorted[j, r] <= d(a, j)^2}``, in ``rev_k[a]``.
    """
    m = Q.shape[0]
    n = sq_sorted.shape[0]
    bounds = _blocks(m, n_blocks)
    for b in prange(n_blocks):
        for a in range(bounds[b], bounds[b + 1]):
            count = 0
            for j in range(n):
                s = sq_distance(Q, a, X, j)
                if s < reach[j]:
                    if count < cap:
                        rev_index[a, count] = j
                        rev_k[a, count] = enter_rank(sq_sorted, j, s)
                    count += 1
            counts[a] = count


@njit(cache=True, inline="always")
def shell_index(s, x0, step, J, in_distance):
    """The shell of a point at squared distance ``s`` beyond a row's start ``x0``: shells are
    ``[x0 + j step, x0 + (j + 1) step)`` of ``x = s`` (or of ``x = sqrt(s)`` when
    ``in_distance``), the last one unbounded."""
    x = np.sqrt(s) if in_distance else s
    j = (x - x0) / step
    return J - 1 if j >= J - 1 else max(0, int(j))


@njit(cache=True, parallel=True)
def brute_shells(Q, X, self_index, start_sq, step, in_distance, n_blocks, counts):
    """Counts of the training points beyond each query's start, by shell
    (:func:`shell_index`), streaming over all of them: ``counts[a, j]`` gets the points
    ``j != self_index[a]`` with ``d(a, j)^2 >= start_sq[a]`` in shell ``j``."""
    m, J = counts.shape
    n = X.shape[0]
    bounds = _blocks(m, n_blocks)
    for b in prange(n_blocks):
        for a in range(bounds[b], bounds[b + 1]):
            counts[a] = 0
            x0 = np.sqrt(start_sq[a]) if in_distance else start_sq[a]
            for j in range(n):
                s = sq_distance(Q, a, X, j)
                if j != self_index[a] and s >= start_sq[a]:
                    counts[a, shell_index(s, x0, step, J, in_distance)] += 1


# ----------------------------------------------------------------- tree engine


@njit(cache=True, inline="always")
def _box_sq(Q, a, lower, upper, node):
    """Squared distance from ``Q[a]`` to a node's bounding box, summed in coordinate order.

    Never above the computed squared distance to a point in the box: each term is the square of
    a difference no larger than the point's, and rounding is monotone.
    """
    s = 0.0
    for c in range(Q.shape[1]):
        x = Q[a, c]
        if x < lower[node, c]:
            diff = x - lower[node, c]
        elif x > upper[node, c]:
            diff = x - upper[node, c]
        else:
            diff = 0.0
        s += diff * diff
    return s


@njit(cache=True, parallel=True)
def exact_candidates(Q, X, self_index, cand, cand_last_sq, tol, K, out_nb, out_sq, complete):
    """Exact order of each query's candidate neighbours from a tree query.

    ``cand[a]`` holds the candidates (the ``c`` nearest by the tree's own distances, possibly
    with the query itself when it is a training point) and ``cand_last_sq[a]`` the tree's squared
    distance to the farthest of them. The candidates' distances are recomputed exactly and the
    ``K`` nearest (self left out) written to row ``a``. ``complete[a]`` says whether no other
    point can be as near as the ``K``-th: every candidate set is complete when it holds all
    ``n`` points, and otherwise when the ``K``-th distance lies below the farthest candidate's
    by more than the relative rounding ``tol`` of the tree's distances.
    """
    m, c = cand.shape
    n = X.shape[0]
    for a in prange(m):
        idx = np.empty(c, dtype=np.int64)
        sq = np.empty(c)
        count = 0
        for r in range(c):
            j = cand[a, r]
            if j != self_index[a]:
                idx[count] = j
                sq[count] = sq_distance(Q, a, X, j)
                count += 1
        if count < K:  # the query itself among too few candidates: cannot happen for c > K
            complete[a] = False
            continue
        _keep_nearest(idx, sq, count, K, out_nb, out_sq, a)
        complete[a] = c == n or out_sq[a, K - 1] < cand_last_sq[a] * (1.0 - tol)


@njit(cache=True)
def _grown(values, count):
    """``values`` with twice the room, its first ``count`` entries kept."""
    out = np.empty(2 * values.size, dtype=values.dtype)
    out[:count] = values[:count]
    return out


@njit(cache=True)
def _within(Q, a, points, skip, limit, tree_index, start, end, leaf, lower, upper, size):
    """Training points ``j != skip`` with ``d(Q[a], X[j])^2 <= limit`` and their squared
    distances, by a traversal of the tree (arrays of :func:`tree_knn_within`)."""
    idx = np.empty(size, dtype=np.int64)
    sq = np.empty(size)
    count = 0
    stack = np.empty(STACK, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if _box_sq(Q, a, lower, upper, node) > limit:
            continue
        if not leaf[node]:
            stack[top] = 2 * node + 1
            stack[top + 1] = 2 * node + 2
            top += 2
            continue
        for p in range(start[node], end[node]):
            j = tree_index[p]
            if j == skip:
                continue
            s = sq_distance(Q, a, points, p)
            if s <= limit:
                if count == idx.size:
                    idx = _grown(idx, count)
                    sq = _grown(sq, count)
                idx[count] = j
                sq[count] = s
                count += 1
    return idx[:count], sq[:count]


@njit(cache=True, parallel=True)
def tree_knn_within(
    Q, points, self_index, limit, K, tree_index, start, end, leaf, lower, upper, out_nb, out_sq
):
    """The ``K`` nearest of each query among the training points within ``limit[a]`` of it.

    ``limit[a]`` is a squared distance at least the query's ``K``-th smallest: every point at
    most that far is collected (all the points tied with the ``K``-th among them) by a traversal
    of the tree (scikit-learn's ``KDTree.get_arrays``: the points' order ``tree_index``, each
    node's range ``start:end`` of it, whether it is a leaf, its bounding box ``lower, upper``;
    the children of node ``i`` are ``2i + 1`` and ``2i + 2``), then sorted exactly. ``points``
    holds the training points in the tree's order, ``X[tree_index]``, so leaves are read in order.
    """
    for a in prange(Q.shape[0]):
        idx, sq = _within(
            Q,
            a,
            points,
            self_index[a],
            limit[a],
            tree_index,
            start,
            end,
            leaf,
            lower,
            upper,
            2 * K + 16,
        )
        _keep_nearest(idx, sq, idx.size, K, out_nb, out_sq, a)


@njit(cache=True, inline="always")
def _box_far_sq(Q, a, lower, upper, node):
    """Squared distance from ``Q[a]`` to the farthest corner of a node's bounding box: never
    below the computed squared distance to a point in the box (see :func:`_box_sq`)."""
    s = 0.0
    for c in range(Q.shape[1]):
        diff = max(abs(Q[a, c] - lower[node, c]), abs(Q[a, c] - upper[node, c]))
        s += diff * diff
    return s


@njit(cache=True, parallel=True)
def tree_shells(
    Q,
    points,
    self_index,
    start_sq,
    step,
    in_distance,
    tree_index,
    start,
    end,
    leaf,
    lower,
    upper,
    counts,
):
    """:func:`brute_shells` by a traversal of the tree (arrays of :func:`tree_knn_within`): a
    node wholly inside the start is skipped and one wholly inside one shell counted at once."""
    m, J = counts.shape
    for a in prange(m):
        counts[a] = 0
        x0 = np.sqrt(start_sq[a]) if in_distance else start_sq[a]
        stack = np.empty(STACK, dtype=np.int64)
        stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            far = _box_far_sq(Q, a, lower, upper, node)
            if far < start_sq[a]:
                continue
            near = _box_sq(Q, a, lower, upper, node)
            if near >= start_sq[a] and near > 0.0:  # beyond the start, and not the query itself
                j = shell_index(near, x0, step, J, in_distance)
                if j == J - 1 or j == shell_index(far, x0, step, J, in_distance):
                    counts[a, j] += end[node] - start[node]
                    continue
            if not leaf[node]:
                stack[top] = 2 * node + 1
                stack[top + 1] = 2 * node + 2
                top += 2
                continue
            for p in range(start[node], end[node]):
                s = sq_distance(Q, a, points, p)
                if tree_index[p] != self_index[a] and s >= start_sq[a]:
                    counts[a, shell_index(s, x0, step, J, in_distance)] += 1


@njit(cache=True)
def node_max(values, start, end, leaf):
    """The largest of ``values`` (in the tree's order) over each node's points."""
    n_nodes = start.size
    out = np.full(n_nodes, -np.inf)
    for node in range(n_nodes - 1, -1, -1):  # children before parents
        if leaf[node]:
            for p in range(start[node], end[node]):
                out[node] = max(out[node], values[p])
        else:
            out[node] = max(out[2 * node + 1], out[2 * node + 2])
    return out


@njit(cache=True, inline="always")
def enter_rank(sq_sorted, j, s):
    """``1 + #{r : sq_sorted[j, r] <= s}``: the ``k`` at which a new point at squared distance
    ``s`` enters ``j``'s list (after the training points at that distance); a binary search."""
    lo = 0
    hi = sq_sorted.shape[1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sq_sorted[j, mid] <= s:
            lo = mid + 1
        else:
            hi = mid
    return lo + 1


@njit(cache=True)
def _reverse_one(
    Q, a, points, sq_sorted, point_reach, reach, tree_index, start, end, leaf, lower, upper, size
):
    """New point ``a``'s reverse neighbours, as keys ``j * (K + 2) + k`` sorted (so by ``j``)."""
    K = sq_sorted.shape[1]
    keys = np.empty(size, dtype=np.int64)
    count = 0
    stack = np.empty(STACK, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if _box_sq(Q, a, lower, upper, node) >= reach[node]:
            continue
        if not leaf[node]:
            stack[top] = 2 * node + 1
            stack[top + 1] = 2 * node + 2
            top += 2
            continue
        for p in range(start[node], end[node]):
            s = sq_distance(Q, a, points, p)
            if s < point_reach[p]:
                j = tree_index[p]
                if count == keys.size:
                    keys = _grown(keys, count)
                keys[count] = j * (K + 2) + enter_rank(sq_sorted, j, s)
                count += 1
    keys = keys[:count]
    keys.sort()
    return keys


@njit(cache=True, parallel=True)
def tree_reverse(
    Q,
    points,
    sq_sorted,
    point_reach,
    reach,
    tree_index,
    start,
    end,
    leaf,
    lower,
    upper,
    cap,
    counts,
    rev_index,
    rev_k,
):
    """Reverse neighbourhoods of new points (as :func:`brute_reverse`) by a tree traversal.

    ``points`` and ``point_reach`` are the training points and their ``sq_sorted[j, K-1]`` in
    the tree's order; ``reach[node]``, the largest of the latter over the node's points
    (:func:`node_max`): a node whose box lies at least that far from the query holds no point
    that would count it.
    """
    width = sq_sorted.shape[1] + 2
    for a in prange(Q.shape[0]):
        keys = _reverse_one(
            Q,
            a,
            points,
            sq_sorted,
            point_reach,
            reach,
            tree_index,
            start,
            end,
            leaf,
            lower,
            upper,
            max(cap, 1),
        )
        counts[a] = keys.size
        for r in range(min(keys.size, cap)):
            rev_index[a, r] = keys[r] // width
            rev_k[a, r] = keys[r] % width


# ------------------------------------------------------------- shared results


@njit(cache=True)
def pack_rows(counts, rev_index, rev_k, wide_rows, wide_index, wide_k):
    """CSR ``(indptr, index, k)`` of per-row entries held in ``(m, cap)`` buffers, except rows
    ``wide_rows``, whose entries are in the wider buffers ``wide_index, wide_k``."""
    m = counts.size
    indptr = np.zeros(m + 1, dtype=np.int64)
    for a in range(m):
        indptr[a + 1] = indptr[a] + counts[a]
    index = np.empty(indptr[m], dtype=np.int64)
    k = np.empty(indptr[m], dtype=np.int64)
    wide = np.full(m, -1, dtype=np.int64)
    for t in range(wide_rows.size):
        wide[wide_rows[t]] = t
    for a in range(m):
        t = wide[a]
        for r in range(counts[a]):
            index[indptr[a] + r] = rev_index[a, r] if t < 0 else wide_index[t, r]
            k[indptr[a] + r] = rev_k[a, r] if t < 0 else wide_k[t, r]
    return indptr, index, k


@njit(cache=True, inline="always")
def _first_not_below(sq_sorted, nb, j, s, i):
    """Position in row ``j`` of the first ``(sq, index) >= (s, i)`` (a binary search)."""
    lo = 0
    hi = sq_sorted.shape[1]
    while lo < hi:
        mid = (lo + hi) >> 1
        v = sq_sorted[j, mid]
        if v < s or (v == s and nb[j, mid] < i):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, parallel=True)
def reverse_ranks_sorted(neighbours, sq_sorted):
    """``rev[i, r]``: the rank of ``i`` in the list of ``j = neighbours[i, r]``, or ``K`` if absent.

    As :func:`~pymc_knn.kernels.structure.reverse_ranks`, without its ``2 n K`` temporaries: the
    lists are sorted by ``(squared distance, index)`` and ``d(i, j)^2`` is the same number in
    both lists, so ``i`` is found by a binary search on that pair in ``j``'s row.
    """
    n, K = neighbours.shape
    rev = np.empty((n, K), dtype=np.int64)
    for i in prange(n):
        for r in range(K):
            j = neighbours[i, r]
            s = sq_sorted[i, r]
            rank = K
            if s <= sq_sorted[j, K - 1]:
                p = _first_not_below(sq_sorted, neighbours, j, s, i)
                if p < K and neighbours[j, p] == i:
                    rank = p
            rev[i, r] = rank
    return rev
