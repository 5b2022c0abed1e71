"""The graphical posterior predictive classifier of Pavlenko and Rios (2017) as an estimator."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import as_float, check_count, check_positive
from ._bits import MAX_NODES
from .decomposable import adjacency_from_matrix, is_chordal
from .evidence import class_hyper
from .posterior import (
    bma_log_predictive,
    edge_inclusion,
    graph_frequencies,
    graph_sizes,
    kernel_code,
    sample_graphs,
)

__all__ = ["GraphicalPredictiveClassifier"]

GRAPHS = ("bma", "complete")
"""The named values of ``graph``; any other value is a fixed adjacency matrix."""


class GraphicalPredictiveClassifier(ClassifierMixin, BaseEstimator):
    """Bayesian predictive classifier averaging over decomposable Gaussian graphical models.

    Each class has its own decomposable graph ``G`` (uniform prior over decomposable graphs)
    and, given ``G``, a hyper normal-inverse-Wishart prior on its mean and covariance
    (Pavlenko and Rios 2017, with the corrections listed in :mod:`pymc_knn.graphical.evidence`).
    ``fit`` draws each class's graph posterior by particle Gibbs
    (:mod:`pymc_knn.graphical.particle_gibbs`); ``predict_proba`` weighs each class's
    model-averaged graph t predictive (eq. 15, 18) by the class's Dirichlet(1) predictive
    probability ``(n_c + 1) / (n + n_classes)``.

    Parameters
    ----------
    graph : {"bma", "complete"} or array_like of shape (n_features, n_features), default="bma"
        ``"bma"``: average over the sampled graph posterior; ``"complete"``: the ordinary
        Bayesian predictive classifier (one unrestricted normal-inverse-Wishart per class); a
        symmetric 0/1 matrix: that decomposable graph for every class.
    n_particles : int, default=50
        Particles of the conditional SMC (at least 2).
    n_sweeps : int, default=2000
        Particle Gibbs transitions per class.
    burn_in : int, default=None
        Sweeps dropped from the start; ``None`` means ``n_sweeps // 4``.
    kernel : {"christmas_tree", "simplicial"}, default="christmas_tree"
        Expansion kernel of the particle Gibbs sampler: ``"christmas_tree"`` is the paper's
        Christmas-tree kernel over junction trees (a new node may join several cliques at once);
        ``"simplicial"`` grows the graph node by node, each new node joined to part of one
        maximal clique (over graphs; 5-10 times cheaper per sweep, slower to mix). Both have the
        same graph posterior; docs/graphical.md compares their speed and mixing.
    alpha, beta : float, default=0.5
        Expansion kernel parameters, both in (0, 1). ``"christmas_tree"``: ``beta`` the
        probability of a non-empty subtree (a new node with neighbours), ``alpha`` the
        probability of growing it to each neighbouring clique. ``"simplicial"``: ``beta`` the
        probability that a new node gets neighbours, ``alpha`` the probability of each node of
        the chosen clique.
    nu : float, default=1.0
        Pseudo-count of the prior mean (``m | Sigma ~ N(mu, Sigma / nu)``); ``mu`` is the class
        mean, as in the paper's experiments.
    phi : array_like of shape (n_features, n_features), default=None
        Prior scale matrix (symmetric positive definite); ``None`` means the identity.
    delta : float, default=1.0
        Dawid-Lauritzen degrees of freedom: a set of ``a`` nodes has an inverse Wishart with
        ``delta + a - 1`` (the paper's ``theta = p`` is ``delta = 1``).
    random_seed : int, default=None
        Seed of the particle Gibbs runs; the same seed gives the same fit.

    Attributes
    ----------
    classes_ : ndarray, shape (n_classes,)
    n_features_in_ : int
    graphs_ : list of ndarray of uint64, shape (n_kept, n_features)
        Per class, the kept graph draws as adjacency bit masks (one fixed graph when ``graph``
        is not ``"bma"``).
    log_likelihood_ : list of ndarray, shape (n_kept,)
        Per class, ``log f(X_c | G)`` of each kept draw (empty when ``graph`` is fixed).
    edge_inclusion_ : ndarray, shape (n_classes, n_features, n_features)
        Posterior edge-inclusion probabilities per class.
    graph_size_ : list of ndarray, shape (n_kept,)
        Per class, the number of edges of each kept draw.
    class_log_prior_ : ndarray, shape (n_classes,)

    References
    ----------
    .. [1] Pavlenko, T. and Rios, F. L. (2017). Graphical posterior predictive classifier:
       Bayesian model averaging with particle Gibbs. Preprint.

    Examples
    --------
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_iris()
    >>> clf = pk.GraphicalPredictiveClassifier(n_sweeps=300, random_seed=1).fit(X, y)
    >>> clf.predict(X[[0, 60, 120]])
    array([0, 1, 2])
    """

    def __init__(
        self,
        graph="bma",
        *,
        n_particles=50,
        n_sweeps=2000,
        burn_in=None,
        kernel="christmas_tree",
        alpha=0.5,
        beta=0.5,
        nu=1.0,
        phi=None,
        delta=1.0,
        random_seed=None,
    ):
        self.graph = graph
        self.n_particles = n_particles
        self.n_sweeps = n_sweeps
        self.burn_in = burn_in
        self.kernel = kernel
        self.alpha = alpha
        self.beta = beta
        self.nu = nu
        self.phi = phi
        self.delta = delta
        self.random_seed = random_seed

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_seed is None and _is_named(self.graph, "bma")
        return tags

    def fit(self, X, y):
        """Draw (or fix) each class's graph and keep its hyperparameters.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            At most 64 features, finite values.
        y : array_like, shape (n_samples,)
            Class labels of any type; at least two classes of at least two points each.

        Returns
        -------
        self
        """
        settings = self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        p = X.shape[1]
        if p > MAX_NODES:
            raise ValueError(
                f"{type(self).__name__} handles at most {MAX_NODES} features "
                f"(graphs on bit masks), got {p}; select or project features first"
            )
        classes, y_enc, counts = np.unique(y, return_inverse=True, return_counts=True)
        if classes.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes in y, got "
                f"{classes.size} class ({classes[0]!r})"
            )
        if counts.min() < 2:
            small = classes[np.argmin(counts)]
            raise ValueError(
                f"every class needs at least 2 samples; class {small!r} has {counts.min()}"
            )
        phi = self._check_phi(p)
        fixed = self._check_graph(p)
        rs = check_random_state(self.random_seed)
        self.hypers_, self.graphs_, self.log_likelihood_ = [], [], []
        for c in range(classes.size):
            hyper = class_hyper(X[y_enc == c], nu=settings["nu"], phi=phi, delta=settings["delta"])
            self.hypers_.append(hyper)
            seed = int(rs.randint(2**31 - 1))
            if fixed is None:
                draws = sample_graphs(
                    hyper,
                    n_particles=settings["n_particles"],
                    n_sweeps=settings["n_sweeps"],
                    alpha=settings["alpha"],
                    beta=settings["beta"],
                    seed=seed,
                    kernel=self.kernel,
                )
                self.graphs_.append(draws.graphs[settings["burn_in"] :])
                self.log_likelihood_.append(draws.log_likelihood[settings["burn_in"] :])
            else:
                self.graphs_.append(fixed[None, :])
                self.log_likelihood_.append(np.zeros(0))
        self.edge_inclusion_ = np.stack([edge_inclusion(g) for g in self.graphs_])
        self.graph_size_ = [graph_sizes(g) for g in self.graphs_]
        self.class_log_prior_ = np.log((counts + 1.0) / (counts.sum() + classes.size))
        self.classes_ = classes
        return self

    def predict_log_proba(self, X):
        """Log posterior predictive class probabilities, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        scores = np.empty((X.shape[0], self.classes_.size))
        for c, (hyper, graphs) in enumerate(zip(self.hypers_, self.graphs_)):
            unique, freq = graph_frequencies(graphs)
            scores[:, c] = bma_log_predictive(hyper, unique, freq, X) + self.class_log_prior_[c]
        top = scores.max(axis=1, keepdims=True)
        return scores - top - np.log(np.exp(scores - top).sum(axis=1, keepdims=True))

    def predict_proba(self, X):
        """Posterior predictive class probabilities, shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of highest posterior predictive probability."""
        log_proba = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]

    def plot_edge_inclusion(self, axes=None):
        """Heat maps of :attr:`edge_inclusion_`, one per class (see
        :func:`pymc_knn.graphical.plots.plot_edge_inclusion`)."""
        from .plots import plot_edge_inclusion

        check_is_fitted(self)
        return plot_edge_inclusion(
            self.edge_inclusion_, titles=[str(c) for c in self.classes_], axes=axes
        )

    def _check_params(self) -> dict:
        n_sweeps = check_count(self.n_sweeps, "n_sweeps")
        burn_in = (
            n_sweeps // 4
            if self.burn_in is None
            else check_count(self.burn_in, "burn_in", minimum=0)
        )
        if burn_in >= n_sweeps:
            raise ValueError(f"burn_in must be < n_sweeps ({n_sweeps}), got {burn_in}")
        settings = {
            "n_particles": check_count(self.n_particles, "n_particles", minimum=2),
            "n_sweeps": n_sweeps,
            "burn_in": burn_in,
            "nu": check_positive(self.nu, "nu"),
            "delta": check_positive(self.delta, "delta"),
        }
        kernel_code(self.kernel)
        for name in ("alpha", "beta"):
            v = as_float(getattr(self, name), name, "in (0, 1)")
            if not 0.0 < v < 1.0:
                raise ValueError(f"{name} must be in (0, 1), got {getattr(self, name)!r}")
            settings[name] = v
        if isinstance(self.graph, str) and self.graph not in GRAPHS:
            raise ValueError(
                f"graph must be one of {GRAPHS} or an adjacency matrix, got {self.graph!r}"
            )
        return settings

    def _check_phi(self, p: int):
        if self.phi is None:
            return None
        phi = np.asarray(self.phi, dtype=np.float64)
        if phi.shape != (p, p):
            raise ValueError(f"phi must have shape ({p}, {p}) for {p} features, got {phi.shape}")
        if not np.all(np.isfinite(phi)) or not np.allclose(phi, phi.T):
            raise ValueError("phi must be a finite symmetric matrix")
        if np.linalg.eigvalsh(phi).min() <= 0:
            raise ValueError("phi must be positive definite (its smallest eigenvalue is <= 0)")
        return phi

    def _check_graph(self, p: int):
        if _is_named(self.graph, "bma"):
            return None
        if _is_named(self.graph, "complete"):
            return adjacency_from_matrix(np.ones((p, p), bool))
        A = np.asarray(self.graph)
        if A.shape != (p, p):
            raise ValueError(
                f"graph must be 'bma', 'complete' or a ({p}, {p}) adjacency "
                f"matrix, got shape {A.shape}"
            )
        if not np.isin(A, (0, 1)).all() or not np.array_equal(A, A.T):
            raise ValueError("graph must be a symmetric 0/1 adjacency matrix")
        adj = adjacency_from_matrix(A)
        if not is_chordal(adj):
            raise ValueError(
                "graph must be decomposable (chordal): it has a chordless cycle of "
                "length 4 or more; add chords or use graph='bma'"
            )
        return adj


def _is_named(graph, name: str) -> bool:
    return isinstance(graph, str) and graph == name
