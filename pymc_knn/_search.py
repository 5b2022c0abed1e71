"""Exact nearest-neighbour search for :class:`pymc_knn.KNNGraph`, in ``O(n k_max)`` memory.

A :class:`NeighbourSearch` over the (standardised) training points answers the two questions the
kNN models ask, with the package's tie rule (among training points at an equal squared distance
the lower index is the nearer; a new point ranks after them) and its squared distances bit for
bit (:mod:`pymc_knn.kernels.search`):

* :meth:`NeighbourSearch.graph`: each training point's ``K`` nearest others and their squared
  distances, sorted;
* :meth:`NeighbourSearch.nearest`: each new point's ``K`` nearest training points;
* :meth:`NeighbourSearch.reverse`: the training points that would count each new point among
  their ``k`` nearest for some ``k <= K``, with the smallest such ``k`` (a CSR).

Engines: ``"kd_tree"`` takes candidates from scikit-learn's :class:`~sklearn.neighbors.KDTree`
(queried in threads) and re-sorts them exactly; ``"brute"`` streams each query over all training
points in numba. Both are exact and agree; ``"exact"`` picks one (:func:`choose_engine`).
``"approximate"`` takes the training graph from pynndescent (optional dependency).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ._forksafe import ForkSafe, forked_from_pool
from ._validation import kernel_array
from .kernels import search

_k = ForkSafe(search)

ALGORITHMS = ("exact", "kd_tree", "brute", "approximate")
BRUTE_MAX_N = 1024
"""``"exact"`` streams over all training points (brute) up to this many of them, ..."""
BRUTE_MIN_FEATURES = 8
BRUTE_MAX_PAIRS_N = 150_000
"""... and up to ``BRUTE_MAX_PAIRS_N`` points with at least ``BRUTE_MIN_FEATURES`` covariates,
where a k-d tree prunes little (10 standard normal covariates, 10^5 points, k = 50: 57 s against
109 s for scikit-learn's tree query), or when ``k_max`` is over a quarter of ``n``."""
WORK_PAIRS = 1 << 24
"""Distances a brute call computes at most (0.05-0.3 s): numba's parallel loops cannot check for
Ctrl-C, so calls stay short and Python checks between them."""
CHUNK_ENTRIES = 1 << 21
"""Candidate entries (index and distance) a tree call holds at most (32 MiB)."""
REVERSE_CAP = 4
"""A new point's reverse neighbours are held in rows of ``REVERSE_CAP * K`` entries; the rare
points with more (hubs) are redone with exact room."""


def choose_engine(n: int, p: int, K: int) -> str:
    """The exact engine ``"exact"`` uses for ``n`` points with ``p`` covariates and ``K``
    neighbours (measured on 2 cores: ``benchmarks/bench_scale.py``)."""
    if n <= BRUTE_MAX_N or 4 * K > n or (p >= BRUTE_MIN_FEATURES and n <= BRUTE_MAX_PAIRS_N):
        return "brute"
    return "kd_tree"


def _threads() -> int:
    return 1 if forked_from_pool() else max(1, numba.get_num_threads())


def _slices(m: int, size: int):
    return [slice(s, min(m, s + size)) for s in range(0, m, max(1, size))]


class _Tree:
    """A k-d tree of the training points and the node arrays the numba traversals read."""

    def __init__(self, X):
        from sklearn.neighbors import KDTree

        self.tree = KDTree(X, leaf_size=40)
        _, index, nodes, bounds = self.tree.get_arrays()
        self.index = np.ascontiguousarray(index, dtype=np.int64)
        self.start = np.ascontiguousarray(nodes["idx_start"], dtype=np.int64)
        self.end = np.ascontiguousarray(nodes["idx_end"], dtype=np.int64)
        self.leaf = np.ascontiguousarray(nodes["is_leaf"], dtype=np.bool_)
        self.lower = np.ascontiguousarray(bounds[0])
        self.upper = np.ascontiguousarray(bounds[1])
        self.points = np.ascontiguousarray(X[self.index])  # leaves read in order

    @property
    def arrays(self):
        return self.index, self.start, self.end, self.leaf, self.lower, self.upper

    def candidates(self, Q, c):
        """The tree's ``c`` nearest of each query: ``(index (m, c), squared distance of the
        farthest (m,))``, queried in threads."""
        m = Q.shape[0]
        index = np.empty((m, c), dtype=np.int64)
        last = np.empty(m)

        def run(s):
            d, i = self.tree.query(Q[s], k=c)
            index[s] = i
            last[s] = d[:, -1] ** 2

        parts = _slices(m, -(-m // _threads()))
        with ThreadPoolExecutor(len(parts)) as pool:
            list(pool.map(run, parts))
        return index, last


class NeighbourSearch:
    """Exact neighbour search over training points ``X`` (a C-contiguous float array).

    Parameters
    ----------
    X : ndarray, shape (n, p)
    algorithm : {"exact", "kd_tree", "brute", "approximate"}
    K : int
        The number of neighbours the searches will mostly ask for (the engine's choice).
    """

    def __init__(self, X, algorithm: str = "exact", K: int = 1):
        self.X = kernel_array(X)
        n, p = self.X.shape
        self.algorithm = algorithm
        self.engine = choose_engine(n, p, K) if algorithm in ("exact", "approximate") else algorithm
        self._tree: _Tree | None = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_tree"] = None  # rebuilt on demand
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.X = kernel_array(self.X)  # read-only when loaded from a memory map (joblib)

    @property
    def tree(self) -> _Tree:
        if self._tree is None:
            self._tree = _Tree(self.X)
        return self._tree

    def graph(self, K: int):
        """``(neighbours, sq_distances)``, ``(n, K)``: each training point's ``K`` nearest others."""
        if self.algorithm == "approximate":
            from ._approximate import approximate_graph

            return approximate_graph(self, K)
        return self.nearest(self.X, K, np.arange(self.X.shape[0], dtype=np.int64))

    def nearest(self, Q, K: int, self_index=None):
        """The ``K`` nearest training points of queries ``Q`` and their squared distances;
        ``self_index[a]``: the training index query ``a`` is (left out), or -1."""
        Q = kernel_array(Q)
        m = Q.shape[0]
        if self_index is None:
            self_index = np.full(m, -1, dtype=np.int64)
        nb = np.empty((m, K), dtype=np.int64)
        sq = np.empty((m, K))
        if self.engine == "brute":
            for s in _slices(m, WORK_PAIRS // self.X.shape[0]):
                blocks = min(_threads() * 4, s.stop - s.start)
                _k.brute_knn(Q[s], self.X, self_index[s], K, blocks, nb[s], sq[s])
        else:
            c = min(self.X.shape[0], K + 2)
            for s in _slices(m, CHUNK_ENTRIES // c):
                self._tree_nearest(Q[s], K, c, self_index[s], nb[s], sq[s])
        return nb, sq

    def _tree_nearest(self, Q, K, c, self_index, nb, sq):
        """Tree candidates re-sorted exactly; queries whose candidates might miss a point tied
        with the ``K``-th nearest completed by a traversal within that distance."""
        tree = self.tree
        cand, last = tree.candidates(Q, c)
        complete = np.empty(Q.shape[0], dtype=np.bool_)
        tol = 1e-9 + 8 * Q.shape[1] * np.finfo(float).eps
        _k.exact_candidates(Q, self.X, self_index, cand, last, tol, K, nb, sq, complete)
        redo = np.flatnonzero(~complete)
        if redo.size:
            limit = np.where(np.isfinite(sq[redo, K - 1]), sq[redo, K - 1], np.inf)
            nb2 = np.empty((redo.size, K), dtype=np.int64)
            sq2 = np.empty((redo.size, K))
            _k.tree_knn_within(
                np.ascontiguousarray(Q[redo]),
                tree.points,
                self_index[redo],
                limit,
                K,
                *tree.arrays,
                nb2,
                sq2,
            )
            nb[redo], sq[redo] = nb2, sq2

    def shells(self, start_sq, step: float, J: int, in_distance: bool) -> np.ndarray:
        """``(n, J)`` int32: for each training point, the others at least ``start_sq`` away
        (squared), counted by shell of width ``step`` in squared distance, or in distance when
        ``in_distance`` (the last shell unbounded; :func:`~pymc_knn.kernels.search.brute_shells`)."""
        n = self.X.shape[0]
        start_sq = np.ascontiguousarray(start_sq, dtype=np.float64)
        self_index = np.arange(n, dtype=np.int64)
        counts = np.empty((n, J), dtype=np.int32)
        for s in _slices(n, WORK_PAIRS // n):  # short calls: Ctrl-C is checked between them
            if self.engine == "brute":
                blocks = min(_threads() * 4, s.stop - s.start)
                _k.brute_shells(
                    self.X[s],
                    self.X,
                    self_index[s],
                    start_sq[s],
                    step,
                    in_distance,
                    blocks,
                    counts[s],
                )
            else:
                _k.tree_shells(
                    self.X[s],
                    self.tree.points,
                    self_index[s],
                    start_sq[s],
                    step,
                    in_distance,
                    *self.tree.arrays,
                    counts[s],
                )
        return counts

    def reverse(self, Q, sq_sorted):
        """CSR ``(indptr, index, enter_k)`` of the training points that would count each new
        point among their ``K`` nearest (``sq_sorted``: the training lists' squared distances,
        ``(n, K)``), with the smallest ``k`` at which each does; in chunks of new points."""
        Q = kernel_array(Q)
        sq_sorted = kernel_array(sq_sorted)  # the first K columns of a wider table: a copy
        m, K = Q.shape[0], sq_sorted.shape[1]
        reach = np.ascontiguousarray(sq_sorted[:, -1])
        parts = [
            self._reverse_chunk(Q[s], sq_sorted, reach)
            for s in _slices(m, CHUNK_ENTRIES // (REVERSE_CAP * K))
        ]
        if len(parts) == 1:
            return parts[0]
        sizes = np.array([p[1].size for p in parts])
        indptr = np.concatenate(
            [[0]] + [p[0][1:] + offset for p, offset in zip(parts, np.cumsum(sizes) - sizes)]
        )
        return (
            indptr,
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
        )

    def _reverse_chunk(self, Q, sq_sorted, reach):
        m = Q.shape[0]
        cap = REVERSE_CAP * sq_sorted.shape[1]
        counts = np.empty(m, dtype=np.int64)
        index = np.empty((m, cap), dtype=np.int64)
        enter = np.empty((m, cap), dtype=np.int64)
        self._reverse(Q, sq_sorted, reach, cap, counts, index, enter)
        wide = np.flatnonzero(counts > cap)
        room = int(counts[wide].max()) if wide.size else 0
        c2 = np.empty(wide.size, dtype=np.int64)
        i2 = np.empty((wide.size, room), dtype=np.int64)
        e2 = np.empty((wide.size, room), dtype=np.int64)
        if wide.size:  # hubs: again with room for all their entries
            self._reverse(np.ascontiguousarray(Q[wide]), sq_sorted, reach, room, c2, i2, e2)
        return _k.pack_rows(counts, index, enter, wide, i2, e2)

    def _reverse(self, Q, sq_sorted, reach, cap, counts, index, enter):
        m = Q.shape[0]
        if self.engine == "brute":
            for s in _slices(m, WORK_PAIRS // self.X.shape[0]):
                blocks = min(_threads() * 4, s.stop - s.start)
                _k.brute_reverse(
                    Q[s], self.X, sq_sorted, reach, blocks, cap, counts[s], index[s], enter[s]
                )
            return
        t = self.tree
        point_reach = np.ascontiguousarray(reach[t.index])
        node_reach = _k.node_max(point_reach, t.start, t.end, t.leaf)
        _k.tree_reverse(
            Q, t.points, sq_sorted, point_reach, node_reach, *t.arrays, cap, counts, index, enter
        )
