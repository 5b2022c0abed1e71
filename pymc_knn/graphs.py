"""Neighbour graphs: from covariates to the pairwise couplings of a Potts-type model.

Every model of the package is a Potts field ``log q(y) = beta * E(y)`` with
``E(y) = sum_i sum_{j != i} W_ij a_{y_i} [y_i == y_j]``, where the non-negative weights ``W``
come from the covariates and one parameter: ``k`` for the nearest-neighbour models, ``sigma`` for
the distance-nearest-neighbour models. A graph is built once from the training covariates;
``graph.coupling(k)`` or ``graph.coupling(sigma)`` then gives the :class:`Coupling` that every
kernel and sampler works on.

Conventions
-----------
* Covariates are standardised by default (zero mean, unit variance with ``ddof=0``, statistics of
  the training set); a constant column is left unscaled. New points are standardised with the
  training statistics.
* Distances are Euclidean.
* Tied distances: among training points, the one with the lower index is the nearer; a new point
  ranks after every training point at the same distance (so it enters training point ``j``'s
  ``k``-neighbourhood only if it is strictly nearer than ``j``'s ``k``-th neighbour).
* Squared distances are sums over coordinates, in order, of squared differences
  (:func:`~pymc_knn.kernels.structure.squared_distances`): equal distances are equal numbers,
  whichever way they are computed.

Scale
-----
A :class:`KNNGraph` never forms an ``n x n`` array: its neighbour lists come from an exact search
(a k-d tree of scikit-learn, or numba streaming over the points; :mod:`pymc_knn._search`) whose
candidates are re-sorted with the formula above, so the graph is the one a dense sort would give.
Its tables take ``24 n k_max`` bytes (:func:`knn_graph_bytes`), refused beyond the working-memory
budget; without an explicit ``k_max`` the models cap it (:func:`default_k_max`).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from ._search import ALGORITHMS, REVERSE_CAP, NeighbourSearch
from ._validation import (
    check_covariates,
    check_flag,
    check_labels,
    check_labels_and_weights,
    check_positive,
    working_memory_bytes,
)
from .kernels import energy as _energy
from .kernels import knn_energy_all_k
from .kernels import structure as _s
from ._forksafe import ForkSafe
from .kernels import predictive, search

_search_k = ForkSafe(search)
_p = ForkSafe(predictive)

__all__ = [
    "Coupling",
    "DistanceGraph",
    "KNNGraph",
    "NeighbourGraph",
    "KNNQuery",
    "DEFAULT_K_MAX_CAP",
    "UNCAPPED_N",
    "default_k_max",
    "knn_graph_bytes",
    "DEFAULT_DROP_TOL",
    "default_drop_tol",
    "dnn_table_bytes",
]

DEFAULT_K_MAX_CAP = 100
"""Largest default ``k_max`` for more than :data:`UNCAPPED_N` points.

The posterior of ``k`` sits far below it wherever it has been measured: posterior means 3-28 on
the shipped and benchmark data sets (``benchmarks/results/defaults.jsonl``: 27.5 at most, Pima,
symmetrised; 16.6 on Ripley), and Cucala et al. (2009) report posteriors of ``k`` within about
40-60 on Ripley and Pima, where leave-one-out error is flat over ``k`` in 17-54. A prior
``k ~ U{1..100}`` thus keeps every ``k`` with posterior mass while the graph's tables stay
``2.4 kB`` a point. Give ``k_max`` (up to the smallest class size) to go further; a posterior of
``k`` piled up against ``k_max`` says to."""

UNCAPPED_N = 2000
"""Up to this many points the default ``k_max`` is not capped: the smallest class size (Cucala
et al. 2009, section 3) for the models, ``n - 1`` for a bare :class:`KNNGraph`. Every shipped and
benchmark data set (``n <= 2000``) keeps the default it always had; the tables then take at most
``48 MB``."""


CAPPED_MASS = 0.05
"""Posterior mass on ``k = k_max`` beyond which a ``k_max`` below the smallest class size is said
to cut the posterior of ``k`` (:func:`warn_if_capped`)."""


def warn_if_capped(p_top: float, k_max: int, largest: int, who: str) -> bool:
    """Warn, and say so, when the posterior of ``k`` puts more than :data:`CAPPED_MASS` on
    ``k_max`` while ``k_max`` is below ``largest``, the largest ``k`` the model allows: the cap
    (:func:`default_k_max`, or the user's) then cuts the posterior."""
    if k_max >= largest or not p_top > CAPPED_MASS:
        return False
    warnings.warn(
        f"{who}: the posterior of k puts {p_top:.2f} of its mass on k_max = {k_max}, below the "
        f"largest k allowed ({largest}, the smallest class size): the cap cuts the posterior. "
        f"Pass a larger k_max= (up to {largest}; the neighbour table takes 24 n k_max bytes)",
        UserWarning,
        stacklevel=3,
    )
    return True


def default_k_max(n: int, smallest_class: int | None = None) -> int:
    """The ``k_max`` used when none is given.

    ``min(smallest_class, n - 1)`` (``n - 1`` when ``smallest_class`` is None), and for more
    than :data:`UNCAPPED_N` points at most :data:`DEFAULT_K_MAX_CAP`.

    See Also
    --------
    max_k : the smallest class size.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3 (``k`` at most the smallest class size).

    Examples
    --------
    >>> import pymc_knn as pk
    >>> pk.default_k_max(250, smallest_class=125)
    125
    >>> pk.default_k_max(250)
    249
    >>> pk.default_k_max(5000, smallest_class=2500)
    100
    """
    K = n - 1 if smallest_class is None else min(int(smallest_class), n - 1)
    return K if n <= UNCAPPED_N else min(K, DEFAULT_K_MAX_CAP)


def knn_graph_bytes(n: int, k_max: int) -> int:
    """Bytes of a :class:`KNNGraph`'s tables: ``neighbours``, ``reverse_rank`` (int64) and
    ``sq_distances`` (float64), each ``n x k_max``."""
    return 24 * int(n) * int(k_max)


def check_graph_memory(n: int, k_max: int, working_memory=None) -> None:
    """Refuse, before anything is allocated, a kNN graph whose tables exceed the budget."""
    need, budget = knn_graph_bytes(n, k_max), working_memory_bytes(working_memory)
    if need > budget:
        raise ValueError(
            f"a kNN graph of n = {n} points with k_max = {k_max} needs {need:,} bytes "
            f"({need / 2**20:,.0f} MiB: neighbours, reverse ranks and squared distances, 24 bytes "
            f"per point and neighbour), over the working_memory budget of {budget / 2**20:g} MiB. "
            f"Lower k_max (posteriors of k rarely pass 60; default cap {DEFAULT_K_MAX_CAP}), or "
            "raise the budget: working_memory= (MiB), or "
            "sklearn.config_context(working_memory=...)"
        )


class Coupling(NamedTuple):
    """Pairwise couplings ``A = W + W^T`` of one model at fixed ``k`` or ``sigma``.

    Attributes
    ----------
    n : int
        Number of points.
    src, dst, weight : ndarray
        Edge list (``src``, ``dst`` int32: a Swendsen-Wang sweep reads them at random and half
        the bytes make it about 20% faster); the weights of the entries of one pair add up to
        ``A_ij``, so ``E(y) = sum_e weight_e a_{y_src} [y_src == y_dst]``.
    indptr, indices, data : ndarray
        Symmetric CSR of ``A`` (each edge in both rows): local fields and Gibbs updates.
    uniform_weight : float
        The common weight of every edge (``1/k`` for the kNN models), or 0.0 when weights differ.
    floor : ndarray or None
        A weight ``W_ij`` each row ``i`` gives every other point besides the edges (the ball
        kernel's floor on a kept d-nn table): ``A_ij`` has ``floor[i] + floor[j]`` more.

    See Also
    --------
    KNNGraph.coupling, DistanceGraph.coupling : where couplings come from.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 2.2, eq. 3 (the symmetrised kNN model: mutual neighbours count twice).
    .. [2] Friel, N. and Pettitt, A. N. (2011). Classification using distance nearest neighbours.
       *Statistics and Computing* 21, 431-437.
       Section 3, eq. 2 (the d-nn models).

    Examples
    --------
    Four points on a line, each the nearest neighbour of one other: at ``k = 1`` every pair
    of mutual neighbours has two entries of weight ``1/k``, so ``A_ij = 2``.

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]])
    >>> c = pk.KNNGraph(X, k_max=2, standardize=False).coupling(1)
    >>> c.src, c.dst, c.weight
    (array([0, 1, 2, 3], dtype=int32), array([1, 0, 3, 2], dtype=int32), array([1., 1., 1., 1.]))
    >>> c.to_dense()
    array([[0., 2., 0., 0.],
           [2., 0., 0., 0.],
           [0., 0., 0., 2.],
           [0., 0., 2., 0.]])
    >>> c.energy([0, 0, 1, 1]), c.energy([0, 1, 0, 1])
    (4.0, 0.0)
    """

    n: int
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    uniform_weight: float
    floor: np.ndarray | None = None

    @classmethod
    def from_edges(cls, n, src, dst, weight, uniform_weight=0.0) -> Coupling:
        indptr, indices, data = _s.csr_from_edges(n, src, dst, weight)
        return cls(n, src, dst, weight, indptr, indices, data, float(uniform_weight))

    def energy(self, y, class_weights=None) -> float:
        """``E(y)`` for integer labels ``y``."""
        y, a = check_labels_and_weights(y, self.n, class_weights)
        e = float(_energy(self.src, self.dst, self.weight, y, a))
        if self.floor is not None:
            counts = np.bincount(y, minlength=a.size)
            e += float((a[y] * self.floor * (counts[y] - 1)).sum())
        return e

    def to_dense(self) -> np.ndarray:
        """``A`` as a dense ``(n, n)`` array (for tests and small problems)."""
        A = np.zeros((self.n, self.n))
        np.add.at(A, (self.src, self.dst), self.weight)
        if self.floor is not None:
            A += self.floor[:, None] * (1 - np.eye(self.n))
        return A + A.T


SAFE_MAGNITUDE = 1e150
"""Largest (and, inverted, smallest) covariate magnitude whose squared distances float64 holds."""


def _check_magnitude(X):
    """Raw covariates whose squared distances would overflow to inf or underflow to 0."""
    top = np.abs(X).max()
    if top > SAFE_MAGNITUDE or 0 < top < 1 / SAFE_MAGNITUDE:
        raise ValueError(
            f"the covariates reach a magnitude of {top:.3g}: their squared distances would "
            f"{'overflow to inf' if top > 1 else 'underflow to 0'} in float64, and every "
            "distance would tie. Rescale them, or keep standardize=True"
        )


class NeighbourGraph:
    """Base class: standardised training covariates and the couplings they define."""

    parameter: str = ""

    def __init__(self, X, standardize: bool = True):
        X = check_covariates(X)
        self.X_input = np.array(X)  # as given: what a saved fit records (pk.predict_proba)
        self.standardize = check_flag(standardize, "standardize")
        if self.standardize:
            # by each column's largest magnitude first, so that 1e155 or 1e-300 neither
            # overflows nor underflows in the squares of the standard deviation
            top = np.abs(X).max(axis=0)
            top = np.where(top > 0, top, 1.0)
            self.mean_ = top * (X / top).mean(axis=0)
            scale = top * (X / top).std(axis=0)
            self.scale_ = np.where(scale > 0, scale, 1.0)
        else:
            self.mean_ = np.zeros(X.shape[1])
            self.scale_ = np.ones(X.shape[1])
            _check_magnitude(X)
        self.X = (X - self.mean_) / self.scale_
        self.n_points, self.n_features = X.shape

    def transform(self, X_new) -> np.ndarray:
        """Standardise new covariates with the training statistics."""
        X_new = check_covariates(X_new, "X_new", min_rows=1)
        if X_new.shape[1] != self.n_features:
            raise ValueError(
                f"X_new has {X_new.shape[1]} columns but the graph was built on "
                f"{self.n_features} features"
            )
        Z = (X_new - self.mean_) / self.scale_
        top = np.abs(Z).max()
        if top > SAFE_MAGNITUDE:
            raise ValueError(
                f"X_new lies {top:.3g} training scales from the training points: its squared "
                "distances to them would overflow to inf in float64, and every distance would tie"
            )
        return Z

    def is_training(self, X) -> bool:
        """Whether ``X`` is the training covariates as given (``X_input``)."""
        X = np.asarray(X)
        return X.shape == self.X_input.shape and np.array_equal(X, self.X_input)

    def squared_distances_to(self, X_new) -> np.ndarray:
        """Squared distances ``(m, n)`` from new points to the training points."""
        return _s.squared_distances(self.transform(X_new), self.X)

    def query_bytes(self) -> int:
        """Bytes a new point takes while its distances to the training points are computed:
        its standardised covariates (and a temporary) and a row of ``m x n`` distances."""
        return 8 * (self.n_points + 2 * self.n_features)

    def coupling(self, param) -> Coupling:  # pragma: no cover - documented in subclasses
        raise TypeError(f"{type(self).__name__} is abstract")

    def conditional_weights(self, param):
        """CSR ``(indptr, indices, data)`` of the weights in the full conditionals."""
        c = self.coupling(param)
        return c.indptr, c.indices, c.data

    def energy(self, y, param, class_weights=None) -> float:
        """``E(y)`` at ``k`` or ``sigma``."""
        return self.coupling(param).energy(y, class_weights)


class KNNQuery(NamedTuple):
    """Where new points sit in a kNN graph, for every ``k <= k_max`` at once.

    Attributes
    ----------
    neighbours : ndarray, shape (m, k_max)
        Training indices of each new point's neighbours, nearest first; its ``k`` nearest are the
        first ``k`` columns.
    enter_indptr, enter_index, enter_k : ndarray
        The reverse neighbourhoods, a CSR over new points: new point ``a``'s entries
        ``enter_indptr[a]:enter_indptr[a + 1]`` hold the training points ``j`` (``enter_index``,
        increasing) that count ``a`` among their ``k_max`` nearest, and ``enter_k``, the smallest
        ``k`` for which ``j`` does. Training points that never count ``a`` are absent (their
        ``k`` would be ``k_max + 1``).
    """

    neighbours: np.ndarray
    enter_indptr: np.ndarray
    enter_index: np.ndarray
    enter_k: np.ndarray

    def reverse_neighbours(self, a: int, k: int) -> np.ndarray:
        """Training points that would count new point ``a`` among their ``k`` nearest."""
        s = slice(self.enter_indptr[a], self.enter_indptr[a + 1])
        return self.enter_index[s][self.enter_k[s] <= k]

    def enter_k_dense(self, n: int) -> np.ndarray:
        """``(m, n)``: the smallest ``k`` at which training point ``j`` counts new point ``a``
        among its ``k`` nearest, ``k_max + 1`` when none does (for tests and small problems)."""
        m, K = self.neighbours.shape
        out = np.full((m, n), K + 1, dtype=np.int64)
        rows = np.repeat(np.arange(m), np.diff(self.enter_indptr))
        out[rows, self.enter_index] = self.enter_k
        return out

    def without_reverse(self) -> KNNQuery:
        """The same neighbours and no reverse neighbourhoods (the asymmetric neighbourhood)."""
        empty = np.zeros(0, dtype=np.int64)
        return self._replace(
            enter_indptr=np.zeros(self.neighbours.shape[0] + 1, dtype=np.int64),
            enter_index=empty,
            enter_k=empty,
        )


KNN_KINDS = ("symmetrised", "equal", "asymmetric")


class KNNGraph(NeighbourGraph):
    """The k-nearest-neighbour structure for every ``k`` in ``1..k_max`` at once.

    Each point's neighbours are sorted once (``neighbours[i, r]`` is the ``r``-th nearest of
    ``i``); the neighbourhood for ``k`` is the first ``k`` columns, so nothing is rebuilt when
    ``k`` changes.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Training covariates.
    k_max : int, optional
        Largest ``k`` to be used; at most ``n - 1``. Default ``n - 1``, at most
        :data:`DEFAULT_K_MAX_CAP` beyond :data:`UNCAPPED_N` points (:func:`default_k_max`).
        Cucala et al. (2009) bound ``k`` by the smallest class size: see :func:`max_k`.
    neighbours : {"symmetrised", "equal", "asymmetric"}
        ``"symmetrised"``: ``W_ij = 1/k`` for the ``k`` nearest ``j`` of ``i`` (Cucala et al.
        2009, eq. 3; mutual neighbours count twice). ``"equal"``: the undirected kNN graph with
        each edge once, weight ``1/k`` (Yoon and Friel 2015, Boltzmann(2)). ``"asymmetric"``: the
        Holmes-Adams neighbourhood, which has no joint model; only its pseudo-likelihood exists.
    standardize : bool
        Standardise the covariates (default).
    algorithm : {"exact", "kd_tree", "brute", "approximate"}
        The neighbour search (see ``docs/scaling.md``). ``"exact"`` (default) picks ``"brute"``
        (numba, streaming over the points: small ``n``, ``k_max > n / 4``, or up to 150,000
        points with 8 covariates or more) or ``"kd_tree"`` (candidates from scikit-learn's k-d
        tree, re-sorted exactly); both give the graph a dense sort would, ties included. ``"approximate"``: the training lists from
        pynndescent (the ``approximate`` extra: ``pip install 'pymc-knn[approximate]'``), for
        many points in high dimension; some true neighbours may be missed (recall measured in
        ``benchmarks/README.md``). Queries of new points are exact in every case.
    working_memory : float, optional
        MiB the graph's tables (:func:`knn_graph_bytes`, ``24 n k_max`` bytes) may take; a larger
        request is refused before anything is allocated. Default scikit-learn's
        ``working_memory`` setting (1024), as for prediction.

    Attributes
    ----------
    neighbours : ndarray of int64, shape (n, k_max)
        ``neighbours[i, r]``: the ``r``-th nearest other point of ``i`` (ties: lower index first).
    sq_distances : ndarray, shape (n, k_max)
        Their squared distances (standardised covariates).
    reverse_rank : ndarray of int64, shape (n, k_max)
        The rank of ``i`` in the list of ``neighbours[i, r]``, ``k_max`` if absent.

    See Also
    --------
    DistanceGraph : the distance-weighted graphs of Friel and Pettitt (2011).
    PottsKNN : the likelihood built on this graph.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 2.2, eq. 3 (``"symmetrised"``).
    .. [2] Yoon, J. W. and Friel, N. (2015). Efficient model selection for probabilistic K nearest
       neighbour classification. *Neurocomputing* 149, 1098-1108.
       Section 4.3.1, the Boltzmann modelling with equal weights (``"equal"``); section 3.1.1,
       the asymmetric pseudo-likelihood (``"asymmetric"``).

    Examples
    --------
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> graph = pk.KNNGraph(X, k_max=125)
    >>> graph.neighbours.shape
    (250, 125)
    >>> c = graph.coupling(13)     # the couplings at k = 13
    >>> c.uniform_weight == 1 / 13
    True
    >>> graph.energy_all_k(y).shape   # E_k(y) for every k at once
    (125,)
    """

    parameter = "k"

    def __init__(
        self,
        X,
        k_max: int | None = None,
        neighbours: str = "symmetrised",
        standardize: bool = True,
        algorithm: str = "exact",
        working_memory=None,
    ):
        super().__init__(X, standardize)
        if neighbours not in KNN_KINDS:
            raise ValueError(f"neighbours must be one of {KNN_KINDS}, got {neighbours!r}")
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        n = self.n_points
        if k_max is None:
            k_max = default_k_max(n)
        if (
            isinstance(k_max, bool)
            or not isinstance(k_max, (int, np.integer))
            or not 1 <= k_max <= n - 1
        ):
            raise ValueError(
                f"k_max must be an integer in 1..n-1 = 1..{n - 1} for {n} points, got {k_max!r}"
            )
        check_graph_memory(n, int(k_max), working_memory)
        self.kind = neighbours
        self.k_max = int(k_max)
        self.algorithm = algorithm
        self._search = NeighbourSearch(self.X, algorithm, self.k_max)
        self.neighbours, self.sq_distances = self._search.graph(self.k_max)
        self.reverse_rank = _search_k.reverse_ranks_sorted(self.neighbours, self.sq_distances)

    def check_k(self, k) -> int:
        """``k`` as an int in ``1..k_max`` or a ``ValueError``."""
        if isinstance(k, bool) or not float(k).is_integer() or not 1 <= k <= self.k_max:
            raise ValueError(f"k must be an integer in 1..{self.k_max} (k_max), got {k!r}")
        return int(k)

    def coupling(self, k) -> Coupling:
        """Couplings of the joint model at ``k``."""
        k = self.check_k(k)
        if self.kind == "asymmetric":
            raise ValueError(
                "the asymmetric (Holmes-Adams) neighbourhood defines no joint distribution; only "
                "its pseudo-likelihood exists (see conditional_weights); use "
                "neighbours='symmetrised' or 'equal' for a Potts model"
            )
        equal = self.kind == "equal"
        nb, rr, own = self.neighbours, self.reverse_rank, _s.NO_ORDER
        src, dst, weight = _s.knn_edges(nb, rr, k, equal, own, own)
        indptr, indices, data = _s.knn_csr(nb, rr, k, equal, own, own)
        return Coupling(self.n_points, src, dst, weight, indptr, indices, data, 1.0 / k)

    def conditional_weights(self, k):
        """CSR of the full conditionals; for ``"asymmetric"`` the directed rows of eq. 1 of 000."""
        if self.kind == "asymmetric":
            return _s.directed_knn_csr(self.neighbours, self.check_k(k))
        return super().conditional_weights(k)

    def energy_all_k(self, y, class_weights=None) -> np.ndarray:
        """``E_k(y)`` for ``k = 1..k_max`` in one pass (array of length ``k_max``)."""
        if self.kind == "asymmetric":
            raise ValueError("the asymmetric neighbourhood has no energy (no joint model)")
        y, a = check_labels_and_weights(y, self.n_points, class_weights)
        return knn_energy_all_k(self.neighbours, self.reverse_rank, y, a, self.kind == "equal")

    def query_bytes(self) -> int:
        """Bytes a new point takes in :meth:`query`: its tree candidates and their exact
        distances (``k_max + 1`` of each), its ``k_max`` neighbours, room for ``4 k_max`` reverse
        neighbours (index and ``k``; hubs with more take more) and its standardised covariates."""
        K = self.k_max
        return 8 * (4 * (K + 1) + K + 2 * REVERSE_CAP * K + 2 * self.n_features)

    def query(self, X_new, k_max: int | None = None) -> KNNQuery:
        """Neighbours of new points among the training points, and the reverse neighbourhoods.

        Exact (whatever the graph's ``algorithm``), with no ``(m, n)`` array: each new point
        takes about :meth:`query_bytes`, so callers go in chunks of new points.

        Parameters
        ----------
        X_new : array_like, shape (m, p)
        k_max : int, optional
            Answer for ``k <= k_max`` only (default the graph's ``k_max``): the neighbours'
            first ``k_max`` columns and the reverse neighbours entering by then, as a prefix of
            the full answer. Prediction asks for the largest ``k`` among the posterior draws.
        """
        K = self.k_max if k_max is None else self.check_k(k_max)
        Z = self.transform(X_new)
        order, _ = self._search.nearest(Z, K)
        indptr, index, enter = self._search.reverse(Z, self.sq_distances[:, :K])
        return KNNQuery(order, indptr, index, enter)


DNN_KERNELS = {"gaussian": _s.GAUSSIAN, "ball": _s.BALL, "exponential": _s.EXPONENTIAL}


DEFAULT_DROP_TOL = 1e-6
"""Default bound on the share of a row's weight a d-nn table leaves out, beyond
:data:`UNCAPPED_N` points (up to it every pair is kept: ``drop_tol = 0``)."""
DNN_START_WIDTH = 128
"""Neighbours per point a kept d-nn table starts with; it doubles while ``sigma`` needs more."""


def default_drop_tol(n: int) -> float:
    """The ``drop_tol`` used when none is given: 0 (all pairs, the reference model) up to
    :data:`UNCAPPED_N` points, :data:`DEFAULT_DROP_TOL` beyond."""
    return 0.0 if n <= UNCAPPED_N else DEFAULT_DROP_TOL


def dnn_table_bytes(n: int, width: int) -> int:
    """Bytes of a kept d-nn table of ``width`` neighbours per point and of what the samplers
    hold per coupling: ``order`` (int32), ``sorted_sq`` and three running sums (float64)."""
    return 36 * int(n) * int(width)


def _check_drop_tol(drop_tol, n) -> float:
    if drop_tol is None:
        return default_drop_tol(n)
    ok = (
        isinstance(drop_tol, (int, float, np.integer, np.floating))
        and not isinstance(drop_tol, bool)
        and 0.0 <= drop_tol < 1.0
    )
    if not ok:
        raise ValueError(
            f"drop_tol must be a number in [0, 1) (the largest share of a point's weight the "
            f"d-nn table may leave out; 0 keeps every pair), got {drop_tol!r}"
        )
    return float(drop_tol)


class DistanceGraph(NeighbourGraph):
    """Distance-nearest-neighbour weights of Friel and Pettitt (2011) for any ``sigma``.

    Every other training point is a neighbour, with a weight normalised per row ``i``:

    * ``"gaussian"`` (d-nn1): ``W_ij ∝ exp(-d_ij^2 / (2 sigma^2))``;
    * ``"ball"`` (d-nn2): ``W_ij ∝ epsilon + (1 - epsilon) [d_ij < sigma]``, ``epsilon = 1e-10``;
    * ``"exponential"`` (d-nn3): ``W_ij ∝ exp(-d_ij sigma)``.

    With ``drop_tol = 0`` every pair is kept (``n x n`` distances: the reference model). With
    ``drop_tol > 0`` each point keeps a table of its ``width`` nearest others only (an exact
    neighbour search, :mod:`pymc_knn._search`; ``36 n width`` bytes), enough that at every
    ``sigma`` of :attr:`sigma_cover` the weight the full row would put beyond them is at most
    ``drop_tol`` of the row's; at each ``sigma`` a row keeps the fewest of its nearest others
    whose rest (the table's exactly, beyond it a bound) is within ``drop_tol`` of its weight.
    The model is then these rows, each normalised over its points, and
    ``|log q_kept(y) - log q(y)| <= 2 beta max(a) n drop_tol`` (each row moves by at most
    ``2 drop_tol`` in total variation); couplings and energies cost the points kept at
    ``sigma``, not the table's width. The ball kernel drops nothing: its floor weight to
    every point outside the ball is carried exactly (per-class totals), so a table that covers
    the ball is exact. The bound counts each row's dropped points by distance shells counted
    for the ``sigma`` the table was widened to (:meth:`dropped_share`); :meth:`cover` widens the
    table to what the rows need for a larger ``sigma`` (the step methods do so during tuning);
    outside the cover the kept model is used as it is, and every coupling reports its bound
    (``dropped`` of :meth:`coupling_bound`).

    Parameters
    ----------
    X : array_like, shape (n, p)
    kernel : {"gaussian", "ball", "exponential"}, default="gaussian"
    standardize : bool, default=True
    epsilon : float, default=1e-10
        The floor weight of the ball kernel.
    drop_tol : float in [0, 1), optional
        Bound on the share of a row's weight left out. Default 0 (all pairs) up to
        :data:`UNCAPPED_N` points, :data:`DEFAULT_DROP_TOL` beyond (:func:`default_drop_tol`).
    sigma_max : float, optional
        ``sigma`` the kept table must cover from the start (for the exponential kernel, whose
        ``sigma`` is a rate, the smallest one); default: :data:`DNN_START_WIDTH` neighbours.
    algorithm : {"exact", "kd_tree", "brute"}, default="exact"
        The neighbour search of a kept table (see :class:`KNNGraph`).
    working_memory : float, optional
        MiB a kept table may take (:func:`dnn_table_bytes`); default scikit-learn's setting.

    See Also
    --------
    KNNGraph : the kNN graphs of Cucala et al. (2009).
    DistanceNN : the likelihood built on this graph.

    References
    ----------
    .. [1] Friel, N. and Pettitt, A. N. (2011). Classification using distance nearest neighbours.
       *Statistics and Computing* 21, 431-437.
       Section 3: the d-nn1, d-nn2 and d-nn3 weights and the joint model, eq. 2.

    Examples
    --------
    Each row of ``W`` sums to one:

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]])
    >>> graph = pk.DistanceGraph(X, kernel="gaussian", standardize=False)
    >>> W = graph.weights(1.0)
    >>> W.round(3)
    array([[0.   , 0.981, 0.018, 0.001],
           [0.806, 0.   , 0.18 , 0.015],
           [0.015, 0.18 , 0.   , 0.806],
           [0.001, 0.018, 0.981, 0.   ]])
    >>> W.sum(axis=1)
    array([1., 1., 1., 1.])
    >>> A = graph.coupling(1.0).to_dense()    # the couplings A = W + W^T
    >>> np.allclose(A, W + W.T)
    True
    """

    parameter = "sigma"

    def __init__(
        self,
        X,
        kernel: str = "gaussian",
        standardize: bool = True,
        epsilon: float = 1e-10,
        drop_tol=None,
        sigma_max=None,
        algorithm: str = "exact",
        working_memory=None,
    ):
        super().__init__(X, standardize)
        if kernel not in DNN_KERNELS:
            raise ValueError(f"kernel must be one of {tuple(DNN_KERNELS)}, got {kernel!r}")
        if not 0.0 < epsilon < 1.0:
            raise ValueError(f"epsilon must be in (0, 1), got {epsilon!r}")
        if algorithm not in ALGORITHMS[:3]:
            raise ValueError(f"algorithm must be one of {ALGORITHMS[:3]}, got {algorithm!r}")
        self.kernel = kernel
        self.epsilon = float(epsilon)
        self.drop_tol = _check_drop_tol(drop_tol, self.n_points)
        self.working_memory = working_memory
        working_memory_bytes(working_memory)  # a bad budget fails here
        self._rows: tuple[np.ndarray, np.ndarray] | None = None
        self._shells, self._shell_step, self._shell_sigma = _s.NO_SHELLS, 0.0, np.nan
        if not self.sparse:
            self.sq_distances = _s.squared_distances(self.X, self.X)
            return
        self._search = NeighbourSearch(self.X, algorithm, DNN_START_WIDTH)
        self._build(min(self.n_points - 1, DNN_START_WIDTH))
        if sigma_max is not None:
            self.cover(check_positive(sigma_max, "sigma_max"))
        self._built = (self._rows, self._shells, self._shell_step, self._shell_sigma)

    @property
    def sparse(self) -> bool:
        """Whether each point keeps a table of its nearest others (``drop_tol > 0``)."""
        return self.drop_tol > 0.0

    @property
    def width(self) -> int:
        """Others kept per point (``n - 1``: all)."""
        return self.sorted_rows()[0].shape[1] if self.sparse else self.n_points - 1

    def _build(self, width: int, sigma=None):
        need, budget = (
            dnn_table_bytes(self.n_points, width),
            working_memory_bytes(self.working_memory),
        )
        if need > budget:
            at = "" if sigma is None else f" to cover sigma = {sigma:.4g}"
            raise ValueError(
                f"a d-nn table of n = {self.n_points} points keeping the nearest {width} of each"
                f"{at} (weight left out per row at most drop_tol = {self.drop_tol:g}) needs "
                f"{need:,} bytes ({need / 2**20:,.0f} MiB), over the working_memory budget of "
                f"{budget / 2**20:g} MiB. Lower the prior's upper bound on sigma (for the "
                "exponential kernel raise its lower bound), raise drop_tol, or raise the budget: "
                "working_memory= (MiB)"
            )
        nb, sq = self._search.graph(width)
        self._rows = (nb.astype(np.int32), sq)
        self._shells, self._shell_step, self._shell_sigma = _s.NO_SHELLS, 0.0, np.nan
        if sigma is not None:
            self._count_shells(sigma)

    def _count_shells(self, sigma) -> None:
        """Count each row's dropped points by shell (:func:`~pymc_knn.kernels.structure.
        dropped_weight`), shells one half of the kernel's exponent wide at ``sigma`` and
        reaching where the rest is below ``drop_tol / 1000`` of the nearest's weight: the
        bound on the weight left out is then within a factor ``e^(1/2)`` of the truth near
        ``sigma`` (instead of every dropped point counted at the last kept distance)."""
        K = DNN_KERNELS[self.kernel]
        if K == _s.BALL or self.width == self.n_points - 1:
            return
        n_others = self.n_points - 1
        step = sigma * sigma if K == _s.GAUSSIAN else 0.5 / sigma
        J = 1 + int(np.ceil(2 * np.log(1e3 * n_others / self.drop_tol)))
        sq = self.sorted_rows()[1]
        shells = self._search.shells(sq[:, -1], step, J, K == _s.EXPONENTIAL)
        shells[:, 0] -= (sq == sq[:, -1:]).sum(axis=1).astype(np.int32)  # kept, at the start
        self._shells, self._shell_step, self._shell_sigma = shells, step, float(sigma)

    @property
    def shells(self) -> tuple[np.ndarray, float]:
        """``(counts, step)``: each row's dropped points by shell (empty: none counted)."""
        return self._shells, self._shell_step

    def dropped_share(self, sigma) -> float:
        """A bound on the largest share of a row's weight the table leaves out at ``sigma``
        (0 when every pair is kept; :func:`~pymc_knn.kernels.structure.dnn_table_share_bound`)."""
        if not self.sparse:
            return 0.0
        sq = self.sorted_rows()[1]
        return float(
            _s.dnn_table_share_bound(
                sq,
                float(sigma),
                DNN_KERNELS[self.kernel],
                self.epsilon,
                self.n_points - 1,
                *self.shells,
            )
        )

    def sigma_cover(self) -> float:
        """The ``sigma`` up to which (exponential kernel: from which) the table drops at most
        ``drop_tol`` of any row's weight (:meth:`dropped_share`): ``inf`` (``0``) when every
        pair is kept."""
        K = DNN_KERNELS[self.kernel]
        if self.width == self.n_points - 1:
            return 0.0 if K == _s.EXPONENTIAL else np.inf
        sq = self.sorted_rows()[1]
        if K == _s.BALL:
            return float(np.sqrt(sq[:, -1].min()))
        # the bound rises with the gaussian's sigma and falls with the exponential's rate:
        # bisect log sigma between lo (small: covered, or not for a rate) and hi
        gaussian = K == _s.GAUSSIAN
        small = lambda s: (self.dropped_share(s) <= self.drop_tol) == gaussian  # noqa: E731
        lo = hi = float(np.sqrt(max(np.median(sq[:, -1]), 1e-300)))
        for _ in range(300):  # out of range: no sigma covered (duplicates), or every one
            if small(lo):
                break
            lo /= 2
        else:
            return 0.0 if gaussian else np.inf
        for _ in range(300):
            if not small(hi):
                break
            hi *= 2
        else:
            return np.inf if gaussian else 0.0
        for _ in range(40):
            mid = np.sqrt(lo * hi)
            lo, hi = (mid, hi) if small(mid) else (lo, mid)
        return lo if gaussian else hi

    def covers(self, sigma) -> bool:
        """Whether the table keeps ``sigma``'s dropped weight within ``drop_tol``."""
        if self.kernel == "ball":
            return sigma <= self.sigma_cover()
        return self.dropped_share(sigma) <= self.drop_tol

    def cover(self, sigma, strict: bool = True) -> bool:
        """Widen the table until it covers ``sigma``; whether it grew. The new width is what
        the shells counted at ``sigma`` say each row needs (doubling for the ball kernel).
        Beyond the working-memory budget: a ``ValueError`` when ``strict``, else the widest
        table within the budget."""
        if not self.sparse:
            return False
        grew = False
        n_others = self.n_points - 1
        while not self.covers(sigma) and self.width < n_others:
            if self.kernel != "ball" and self._shell_sigma != sigma:
                self._count_shells(sigma)
                continue
            width = 2 * self.width
            if self.kernel != "ball":
                need = _s.dnn_table_width_needed(
                    self.sorted_rows()[1],
                    float(sigma),
                    DNN_KERNELS[self.kernel],
                    self.epsilon,
                    self.drop_tol,
                    *self.shells,
                )
                width = need if need > self.width else width
            width = min(n_others, width)
            if not strict:
                width = min(width, self.max_width())
                if width <= self.width:
                    break
            self._build(width, sigma)
            grew = True
        return grew

    def reset(self) -> bool:
        """Put back the table the graph was built with (before any :meth:`cover` since);
        whether it had been widened. A step's every chain starts from it, so its draws do not
        depend on the chains or the runs sampled before it in the same process (same seed, same
        draws with ``cores=1`` or more, and on a second ``pm.sample``)."""
        if not self.sparse or self._rows is self._built[0]:
            return False
        self._rows, self._shells, self._shell_step, self._shell_sigma = self._built
        return True

    def max_width(self) -> int:
        """The widest kept table the working-memory budget allows."""
        budget = working_memory_bytes(self.working_memory)
        return int(budget // max(1, dnn_table_bytes(self.n_points, 1)))

    def sorted_rows(self):
        """``(order, sorted_sq)``: each point's others by increasing distance (ties: lower index
        first), ``n x (n - 1)`` (or the kept table, ``n x width``); computed once. The step
        methods' kernel works on them."""
        if self._rows is None:
            self._rows = _s.sorted_rows(self.sq_distances)
        return self._rows

    def nearest_distances(self) -> np.ndarray:
        """Each point's distance to its nearest other."""
        return np.sqrt(self.sorted_rows()[1][:, 0])

    def diameter_bound(self) -> float:
        """An upper bound on the largest pairwise distance, ``O(n)``: twice the largest
        distance from the mean (the exact largest distance when every pair is kept)."""
        if not self.sparse:
            return float(np.sqrt(self.sq_distances.max()))
        centre = self.X.mean(axis=0)
        return float(2 * np.sqrt(((self.X - centre) ** 2).sum(axis=1).max()))

    def weights(self, sigma) -> np.ndarray:
        """The row-normalised weight matrix ``W`` at ``sigma`` (zero diagonal; dense)."""
        sigma = check_positive(sigma, "sigma")
        if not self.sparse:
            return _s.dnn_weights(self.sq_distances, sigma, DNN_KERNELS[self.kernel], self.epsilon)
        c = self.coupling(sigma)
        W = np.zeros((self.n_points, self.n_points))
        np.add.at(W, (c.src, c.dst), c.weight)
        if c.floor is not None:
            W += c.floor[:, None] * (1 - np.eye(self.n_points))
        return W

    def query_bytes(self) -> int:
        """Bytes a new point takes: a row of distances (all pairs), or its kept row and room
        for ``4 width`` reverse neighbours (kept table)."""
        if not self.sparse:
            return super().query_bytes()
        return 8 * (4 * (self.width + 1) + 3 * REVERSE_CAP * self.width + 2 * self.n_features)

    def strengths(self, X_new, y, sigmas, class_weights) -> np.ndarray:
        """Strengths ``h[a, t, g]`` of new points at each of ``sigmas`` (see
        :func:`pymc_knn.kernels.predictive.dnn_strengths`), with no ``(m, n)`` array on a kept
        table: each new point's kept row and the training rows it enters, from neighbour
        queries."""
        sigmas = np.asarray(sigmas, dtype=np.float64)
        K = DNN_KERNELS[self.kernel]
        if not self.sparse:
            R, S = _p.dnn_row_sums(self.sq_distances, sigmas, K, self.epsilon)
            return _p.dnn_strengths(
                self.squared_distances_to(X_new), y, sigmas, R, S, K, self.epsilon, class_weights
            )
        order, sq = self.sorted_rows()
        n_others = self.n_points - 1
        R, S, cuts = _p.dnn_table_row_sums(
            sq, sigmas, K, self.epsilon, n_others, *self.shells, self.drop_tol
        )
        Z = np.ascontiguousarray(self.transform(X_new))
        n, m = self.n_points, Z.shape[0]
        full = self.width == n - 1  # every pair kept: a new point is in every row, and all in its
        nb, sq_nb = self._search.nearest(Z, n if full else self.width)
        if full:
            indptr, index = np.arange(m + 1) * n, np.tile(np.arange(n), m)
        else:
            indptr, index, _ = self._search.reverse(Z, sq)
        rev_sq = _p.pair_sq(Z, self.X, indptr, index)
        floor_mode = K == _s.BALL and self.width < self.n_points - 1
        return _p.dnn_table_strengths(
            nb,
            sq_nb,
            indptr,
            index,
            rev_sq,
            y,
            sigmas,
            R,
            S,
            cuts,
            sq,
            K,
            self.epsilon,
            class_weights,
            floor_mode,
            self.drop_tol,
        )

    def coupling_bound(self, sigma):
        """``(running sums C, floor, dropped, ends)`` of the kept rows at ``sigma``
        (:func:`~pymc_knn.kernels.structure.dnn_table_cumulative`; row ``i`` keeps its
        ``ends[i]`` nearest); ``dropped`` bounds the share of any row's weight left out."""
        sigma = check_positive(sigma, "sigma")
        order, sq = self.sorted_rows()
        n = self.n_points
        C, floor, bound = np.empty(sq.shape), np.empty(n), np.zeros(1)
        ends = np.empty(n, dtype=np.int64)
        _s.dnn_table_cumulative(
            sq,
            order,
            sigma,
            DNN_KERNELS[self.kernel],
            self.epsilon,
            C,
            np.zeros(n, dtype=np.int64),
            np.ones(1),
            n - 1,
            floor,
            bound,
            *self.shells,
            self.drop_tol,
            ends,
            False,
            False,
            _s.NO_DISTANCE_TABLE,
        )
        return C, floor, float(bound[0]), ends

    def coupling(self, sigma) -> Coupling:
        """Couplings ``A = W + W^T`` at ``sigma`` (all pairs, or the kept rows')."""
        if not self.sparse:
            src, dst, weight = _s.dense_edges(self.weights(sigma))
            return Coupling.from_edges(self.n_points, src, dst, weight)
        C, floor, _, ends = self.coupling_bound(sigma)
        src, dst, weight = _s.rows_to_edges(self.sorted_rows()[0], C, ends)
        c = Coupling.from_edges(self.n_points, src, dst, weight)
        return c._replace(floor=floor) if floor.any() else c


def max_k(y) -> int:
    """The largest ``k`` Cucala et al. (2009, section 3) allow: the smallest class size.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3 ("K is at most equal to the minimal class size").

    Examples
    --------
    >>> import pymc_knn as pk
    >>> pk.max_k([0, 0, 1, 1, 1])
    2
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> pk.max_k(y)
    125
    """
    y = check_labels(y)
    counts = np.bincount(y)
    if np.count_nonzero(counts) < 2:
        raise ValueError("labels hold a single class: classification needs at least two")
    return int(counts[counts > 0].min())
