"""The approximate training graph of ``KNNGraph(..., algorithm="approximate")``: pynndescent.

NN-descent (Dong et al. 2011, as implemented by pynndescent) finds most of each point's ``K``
nearest in high dimension far faster than an exact search. Its candidates are re-sorted here with
the package's squared distances and tie rule, so the lists are sorted as the exact ones are and
differ from them only where a true neighbour was missed (``benchmarks/bench_scale.py`` measures
the recall). Rows NN-descent leaves short are completed by the exact search.
"""

from __future__ import annotations

import numpy as np

from ._forksafe import ForkSafe
from .kernels import search

_k = ForkSafe(search)

INSTALL = "pip install 'pymc-knn[approximate]' (or pip install pynndescent)"
EXTRA_CANDIDATES = 8
"""Neighbours asked of NN-descent beyond ``K + 1`` (itself): the margin improves the recall."""


def _nndescent():
    try:
        from pynndescent import NNDescent
    except ImportError:
        raise ImportError(
            f"algorithm='approximate' needs the optional package pynndescent: {INSTALL}; or use "
            "the exact search, algorithm='exact'"
        ) from None
    return NNDescent


def approximate_graph(search, K: int, random_state: int = 0):
    """``(neighbours, sq_distances)`` of the training points of ``search`` (a
    :class:`~pymc_knn._search.NeighbourSearch`) from NN-descent, sorted exactly."""
    X = search.X
    n = X.shape[0]
    c = min(n, K + 1 + EXTRA_CANDIDATES)
    index = _nndescent()(
        X, n_neighbors=c, metric="euclidean", random_state=random_state, compressed=True
    )
    cand = np.ascontiguousarray(index.neighbor_graph[0], dtype=np.int64)
    rows = np.arange(n, dtype=np.int64)
    cand = np.where(cand < 0, rows[:, None], cand)  # missing entries: dropped like the point itself
    nb = np.empty((n, K), dtype=np.int64)
    sq = np.empty((n, K))
    complete = np.empty(n, dtype=np.bool_)
    _k.exact_candidates(X, X, rows, cand, np.full(n, np.inf), 0.0, K, nb, sq, complete)
    short = np.flatnonzero(_short_rows(cand, rows, K))
    if short.size:
        nb[short], sq[short] = search.nearest(X[short], K, short)
    return nb, sq


def _short_rows(cand, rows, K):
    """Rows with fewer than ``K`` distinct candidates besides the point itself."""
    valid = cand != rows[:, None]
    return valid.sum(axis=1) < K
