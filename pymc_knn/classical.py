"""The classical k-nearest-neighbour classifier: the baseline of Cucala et al. (2009), section 1.2.

A new point gets the most common class among its ``k`` nearest training points. Ties in the vote
are "resolved by decreasing the number k of neighbours until the problem disappears" (000,
section 1.2), and ``k`` is usually chosen by leave-one-out cross-validation on the training set.

Conventions (those of :mod:`pymc_knn.graphs`)
--------------------------------------------
* Covariates are standardised with the training statistics by default (``standardize=True``).
  Cucala et al. used raw Euclidean covariates: pass ``standardize=False`` to reproduce their
  Tables 1 and 2 (see ``docs/models.md``).
* Tied distances: the training point with the lower index is the nearer, so a neighbourhood has
  exactly ``k`` points. (The paper's ``N^k`` of section 1.2 would take in every point tied with
  the ``k``-th; on continuous covariates there are no such ties.)
* Vote ties: decreasing ``k``. At ``k = 1`` there is never a tie, so every prediction is defined.
  The winner is always one of the classes tied at ``k``: along a run of tied votes the top count
  does not grow, so the last class to have been alone on top stays among the leaders.

Everything is computed for every ``k`` at once from each point's neighbour list sorted once.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from numba import njit

from ._validation import check_covariates, check_labels, check_n_classes
from ._search import NeighbourSearch
from .graphs import KNNGraph, NeighbourGraph

__all__ = ["knn_error_rates", "knn_predict", "knn_vote", "loo_choose_k", "loo_error_curve"]

TIE_RULE = "decreasing k (Cucala et al. 2009, section 1.2)"


@njit(cache=True)
def _vote_all_k(neighbour_labels, n_classes):
    """Votes for every ``k``: the class that was last alone on top of the running counts.

    With ties resolved by decreasing ``k``, the prediction at ``k`` is the unique majority class of
    the largest ``k' <= k`` whose vote is not tied, which is exactly that class.
    """
    m, K = neighbour_labels.shape
    out = np.empty((m, K), dtype=np.int64)
    counts = np.zeros(n_classes, dtype=np.int64)
    for a in range(m):
        counts[:] = 0
        top = 0
        leader = -1
        for r in range(K):
            h = neighbour_labels[a, r]
            counts[h] += 1
            if counts[h] > top:  # h alone on top (it was among the leaders, or k = 1)
                top = counts[h]
                leader = h
            out[a, r] = leader
    return out


def knn_vote(neighbour_labels, n_classes: int) -> np.ndarray:
    """Majority votes for every ``k`` in ``1..K`` at once, ties resolved by decreasing ``k``.

    Parameters
    ----------
    neighbour_labels : array_like of int, shape (m, K)
        ``neighbour_labels[a, r]``: the class of the ``r``-th nearest neighbour of point ``a``,
        nearest first; the ``k`` nearest are the first ``k`` columns.
    n_classes : int
        ``G``; labels are in ``0..G-1``.

    Returns
    -------
    ndarray of int64, shape (m, K)
        Column ``k - 1`` holds the predictions with ``k`` neighbours. Column 0 is the nearest
        neighbour's class (a single vote is never tied); when the vote at ``k`` is tied, the
        prediction is that at ``k - 1`` (recursively), which is always one of the tied classes.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.2 (vote ties "resolved by decreasing the number k of neighbours").

    Examples
    --------
    The classes of two points' four nearest neighbours, nearest first:

    >>> import pymc_knn as pk
    >>> pk.knn_vote([[1, 0, 0, 1], [0, 1, 1, 0]], n_classes=2)
    array([[1, 1, 0, 0],
           [0, 0, 1, 1]])

    At ``k = 2`` and ``k = 4`` the votes are tied: each keeps the vote of ``k - 1``.
    """
    G = check_n_classes(n_classes)
    arr = np.asarray(neighbour_labels)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(
            f"neighbour_labels must be 2-D (n_points, K) with K >= 1, got shape {arr.shape}"
        )
    labels = check_labels(arr.ravel(), n_classes=G).reshape(arr.shape)
    return _vote_all_k(labels, G)


def knn_predict(X_train, y_train, X_new, k, *, standardize: bool = True) -> np.ndarray:
    """Classes of new points by the ``k``-nearest-neighbour majority vote.

    Parameters
    ----------
    X_train : array_like, shape (n, p)
    y_train : array_like of int, shape (n,)
        Labels in ``0..G-1``.
    X_new : array_like, shape (m, p)
    k : int
        Number of neighbours, in ``1..n``.
    standardize : bool
        Standardise the covariates with the training statistics (the package default). Cucala et
        al. (2009) used raw covariates (``False``).

    Returns
    -------
    ndarray of int64, shape (m,)
        Predicted labels; vote ties resolved by decreasing ``k`` (see :func:`knn_vote`).

    See Also
    --------
    BayesianKNNClassifier : the Bayesian version, averaging over ``k`` and ``beta``.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.2.

    Examples
    --------
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X_test, y_test, *_ = pk.datasets.load_ripley("test")
    >>> pk.knn_predict(X, y, X_test[:5], k=15, standardize=False)
    array([0, 0, 0, 0, 0])
    """
    X_train, y_train, G = _check_training(X_train, y_train)
    k = _check_k(k, X_train.shape[0])
    neighbour_labels = _new_neighbour_labels(X_train, y_train, X_new, k, standardize)
    return _vote_all_k(neighbour_labels, G)[:, k - 1]


def knn_error_rates(
    X_train, y_train, X_test, y_test, ks, *, standardize: bool = True
) -> xr.DataArray:
    """Test misclassification rates of the ``k``-nearest-neighbour rule for several ``k``.

    Parameters
    ----------
    X_train, y_train : array_like
        Training covariates ``(n, p)`` and labels in ``0..G-1``.
    X_test, y_test : array_like
        Test covariates ``(m, p)`` and labels (a test class absent from training counts as an
        error every time).
    ks : int or sequence of int
        Distinct numbers of neighbours, each in ``1..n``.
    standardize : bool
        As in :func:`knn_predict`.

    Returns
    -------
    xarray.DataArray
        ``error_rate`` over ``k``, with the number of errors as the coordinate ``n_errors``.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.2, Table 1 (Ripley's data) and section 4, Table 2 (Pima).

    Examples
    --------
    Table 1 of Cucala et al. (2009), on raw covariates:

    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X_test, y_test, *_ = pk.datasets.load_ripley("test")
    >>> rates = pk.knn_error_rates(X, y, X_test, y_test, ks=[1, 3, 15, 17, 31, 54],
    ...                            standardize=False)
    >>> rates.values
    array([0.15 , 0.134, 0.095, 0.087, 0.084, 0.081])
    >>> rates.n_errors.values
    array([150, 134,  95,  87,  84,  81])
    """
    X_train, y_train, G = _check_training(X_train, y_train)
    ks = _check_ks(ks, X_train.shape[0])
    neighbour_labels = _new_neighbour_labels(X_train, y_train, X_test, int(ks.max()), standardize)
    y_test = check_labels(y_test, neighbour_labels.shape[0])
    votes = _vote_all_k(neighbour_labels, G)[:, ks - 1]
    n_errors = (votes != y_test[:, None]).sum(axis=0)
    return _error_curve(ks, n_errors, y_test.size, "test", standardize)


def loo_error_curve(X, y, k_max: int | None = None, *, standardize: bool = True) -> xr.DataArray:
    """Leave-one-out misclassification rate of the training set for ``k = 1..k_max``.

    Each training point is classified by the vote of its ``k`` nearest among the other training
    points (a point is never its own neighbour in :class:`~pymc_knn.KNNGraph`).

    Parameters
    ----------
    X : array_like, shape (n, p)
    y : array_like of int, shape (n,)
        Labels in ``0..G-1``.
    k_max : int, optional
        Largest ``k``, in ``1..n-1``; default ``n - 1``, at most ``DEFAULT_K_MAX_CAP`` (100)
        beyond ``UNCAPPED_N`` (2000) points (:func:`pymc_knn.graphs.default_k_max`). Cucala et
        al. (2009) bound ``k`` by the smallest class size for their model:
        ``k_max=pk.max_k(y)``.
    standardize : bool
        As in :func:`knn_predict`.

    Returns
    -------
    xarray.DataArray
        ``error_rate`` over ``k = 1..k_max``, with the number of errors as ``n_errors``.

    Notes
    -----
    With ``standardize=True`` the covariates are standardised once, with the statistics of all
    ``n`` training points, as when one scales the data before cross-validating (R's
    ``knn.cv(scale(X), y)``). Refitting without point ``i`` would rescale with the other
    ``n - 1`` points: neighbours may then differ slightly. With ``standardize=False`` the curve is
    exactly that of refitting without each point in turn.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.2 and Fig. 2.

    Examples
    --------
    Fig. 2 of Cucala et al. (2009): ten values of ``k`` share the smallest error on Ripley's
    training set.

    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> curve = pk.loo_error_curve(X, y, k_max=pk.max_k(y), standardize=False)
    >>> curve.sizes["k"]
    125
    >>> curve.k[curve.n_errors == curve.n_errors.min()].values
    array([17, 18, 35, 36, 45, 46, 51, 52, 53, 54])
    """
    X, y, G = _check_training(X, y)
    graph = KNNGraph(X, k_max=k_max, standardize=standardize)
    votes = _vote_all_k(np.ascontiguousarray(y[graph.neighbours]), G)
    n_errors = (votes != y[:, None]).sum(axis=0)
    return _error_curve(
        np.arange(1, graph.k_max + 1), n_errors, y.size, "leave-one-out", standardize
    )


def loo_choose_k(X, y, k_max: int | None = None, *, standardize: bool = True) -> int:
    """The ``k`` minimising the leave-one-out error rate; the smallest such ``k`` on ties.

    Parameters are those of :func:`loo_error_curve`. Several ``k`` often share the minimum
    (ten on Ripley's data, 000 section 1.2); all of them are
    ``curve.k[curve.n_errors == curve.n_errors.min()]`` with ``curve = loo_error_curve(...)``.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.2 (the usual choice of ``k`` by cross-validation).

    Examples
    --------
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> pk.loo_choose_k(X, y, k_max=pk.max_k(y), standardize=False)
    17
    """
    curve = loo_error_curve(X, y, k_max, standardize=standardize)
    return int(curve.k[int(np.argmin(curve.n_errors.values))])


def _check_training(X, y):
    X = check_covariates(X, "X_train")
    y = check_labels(y, X.shape[0])
    return X, y, max(int(y.max()) + 1, 2)


def _check_k(k, n: int, name: str = "k") -> int:
    is_number = isinstance(k, (int, float, np.integer, np.floating)) and not isinstance(
        k, (bool, np.bool_)
    )
    if not (is_number and float(k).is_integer() and 1 <= k <= n):
        raise ValueError(
            f"{name} must be an integer in 1..{n} (the number of training points), got {k!r}"
        )
    return int(k)


def _check_ks(ks, n: int) -> np.ndarray:
    values = np.atleast_1d(np.asarray(ks, dtype=object))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"ks must be an integer or a non-empty 1-D sequence, got {ks!r}")
    out = np.array([_check_k(k, n, "every k in ks") for k in values], dtype=np.int64)
    if np.unique(out).size != out.size:
        raise ValueError(f"ks must be distinct, got {out.tolist()}")
    return out


def _new_neighbour_labels(X_train, y_train, X_new, k: int, standardize: bool) -> np.ndarray:
    """Labels ``(m, k)`` of each new point's ``k`` nearest training points, nearest first.

    Same scaling, distances, search and tie rule as ``KNNGraph.query`` (lower index first),
    without the training graph, which a new point does not need here, and with ``k`` up to ``n``.
    """
    graph = NeighbourGraph(X_train, standardize)
    order, _ = NeighbourSearch(graph.X, K=k).nearest(graph.transform(X_new), k)
    return np.ascontiguousarray(y_train[order])


def _error_curve(ks, n_errors, n_points, kind, standardize) -> xr.DataArray:
    return xr.DataArray(
        n_errors / n_points,
        dims="k",
        coords={"k": np.asarray(ks, dtype=np.int64), "n_errors": ("k", n_errors.astype(np.int64))},
        name="error_rate",
        attrs={
            "description": f"{kind} misclassification rate of the k-nearest-neighbour vote",
            "n_points": int(n_points),
            "standardize": int(bool(standardize)),
            "tie_rule": TIE_RULE,
        },
    )
