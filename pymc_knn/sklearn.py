"""A scikit-learn classifier around the package's PyMC models.

:class:`BayesianKNNClassifier` fits the probabilistic kNN of Cucala et al. (2009) or a
distance-nearest-neighbour model of Friel and Pettitt (2011) by MCMC (``pm.sample`` with one of
the package's step methods), or by KOREA (:func:`pymc_knn.korea`, no MCMC), and predicts with
the posterior predictive class probabilities (:func:`pymc_knn.predict.predictive_summary`). It
follows the scikit-learn estimator API, so it works with ``cross_val_score``, ``GridSearchCV``
and ``Pipeline``.
"""

from __future__ import annotations

import multiprocessing
import warnings

import numpy as np
import pymc as pm
from scipy.spatial.distance import pdist, squareform
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import check_count, check_flag, check_positive
from .approx import korea
from .diagnostics import PriorBoundWarning, check_convergence, check_prior_bounds
from .distributions import DistanceNN, PottsKNN
from .graphs import UNCAPPED_N, NeighbourGraph, default_k_max, max_k, warn_if_capped
from .predict import _check_ci, predictive_summary
from .step_methods import Exchange, Moller, PseudoLikelihoodMetropolis

__all__ = ["BayesianKNNClassifier", "MODELS", "METHODS"]

MODELS = ("symmetrised", "equal", "dnn-gaussian", "dnn-ball", "dnn-exponential")
"""Allowed values of ``model``: the two kNN neighbourhoods and the three d-nn kernels."""
METHODS = ("exchange", "moller", "pseudo", "korea")
"""Allowed values of ``method``: the step method that samples ``(beta, k)`` or ``(beta, sigma)``,
or KOREA (kNN models only)."""
EXPONENTIAL_RATE_FACTOR = 10.0
"""Default ``sigma_upper`` of the exponential kernel: this over the median nearest-neighbour
distance."""


class BayesianKNNClassifier(ClassifierMixin, BaseEstimator):
    """Bayesian nearest-neighbour classifier: a Potts field on the labels over a neighbour graph.

    The training labels follow a Potts (Boltzmann) random field over a k-nearest-neighbour graph
    (Cucala et al. 2009) or a distance-weighted graph (Friel and Pettitt 2011) of the covariates.
    ``fit`` samples the posterior of the interaction ``beta`` and of ``k`` (or ``sigma``) with
    ``pm.sample``; ``predict_proba`` averages each new point's class probabilities over the
    posterior draws (Cucala et al. 2009, eq. 5-7).

    Parameters
    ----------
    model : {"symmetrised", "equal", "dnn-gaussian", "dnn-ball", "dnn-exponential"}
        ``"symmetrised"``: :class:`pymc_knn.PottsKNN` with eq. 3 of Cucala et al. (mutual
        neighbours count twice); ``"equal"``: the Boltzmann(2) graph of Yoon and Friel (2015).
        ``"dnn-*"``: :class:`pymc_knn.DistanceNN` with the d-nn1 (gaussian), d-nn2 (ball) or
        d-nn3 (exponential) kernel of Friel and Pettitt (2011).
    method : {"exchange", "moller", "pseudo", "korea"}
        Step method: :class:`pymc_knn.Exchange`, :class:`pymc_knn.Moller` (both exact up to the
        auxiliary sampler) or :class:`pymc_knn.PseudoLikelihoodMetropolis` (fast, biased); or
        ``"korea"``, the Laplace approximation of the pseudo-posterior by :func:`pymc_knn.korea`
        (kNN models only; no MCMC, so ``draws`` to ``sampler`` are unused).
    draws, tune, chains, cores, random_seed, progressbar
        Passed to ``pm.sample`` (its convergence checks on). The same ``random_seed`` gives the
        same fit and predictions.
    mp_ctx : str or multiprocessing context, optional
        How ``pm.sample`` starts its chain processes when ``cores > 1`` (``"fork"``, ``"spawn"``,
        ``"forkserver"``). Default: PyMC's choice, except inside a worker of joblib's loky
        backend (scikit-learn's ``n_jobs``), whose default context cannot send PyMC's shared
        arrays: there the platform's standard method (:func:`multiprocessing.get_all_start_methods`,
        first entry; ``"fork"`` on Linux before Python 3.14).
    beta_upper : float
        Prior ``beta ~ Uniform(0, beta_upper)``; Cucala et al. use 4.
    k_max : int, optional
        kNN models: prior ``k ~ DiscreteUniform(1, k_max)``. At most the smallest class size
        (:func:`pymc_knn.max_k`) and ``n - 1``; a larger value raises ``ValueError``. Default
        that largest value, and beyond 2000 training points at most 100
        (:func:`pymc_knn.default_k_max`). When it is 1, ``k`` is fixed at 1.
    sigma_upper : float, optional
        d-nn models: prior ``sigma ~ Uniform(0, sigma_upper)``. Default, on the distances the
        model uses (standardised covariates when ``standardize``): for ``"dnn-gaussian"`` and
        ``"dnn-ball"`` (sigma is a length) the largest pairwise distance, where the weights are
        nearly (gaussian) or exactly (ball) uniform; for ``"dnn-exponential"`` (sigma is a rate,
        weights ``exp(-d sigma)``) ten over the median nearest-neighbour distance, where the
        weights of a typical point concentrate on its nearest neighbour. Fall-backs when all
        points coincide: 1 and 10. Beyond 2000 points no pairwise distances are formed: twice
        the largest distance from the mean stands for the largest pairwise distance (an upper
        bound), and the nearest-neighbour distances come from a neighbour search.
    standardize : bool
        Standardise the covariates with the training statistics (set False inside a
        ``Pipeline`` that scales already, or for raw distances as in the papers).
    sampler : {"swendsen_wang", "gibbs", "cftp", "enumerate"}
        Auxiliary sampler of ``"exchange"`` and ``"moller"`` (ignored by ``"pseudo"``).
    sweeps : int, optional
        Sweeps of an approximate auxiliary draw; by default tuned (see
        :class:`~pymc_knn.Exchange`).
    ci_prob : float
        Probability of the credible intervals of :meth:`predict_summary`.

    Attributes
    ----------
    classes_ : ndarray, shape (n_classes,)
        The class labels, sorted; column ``g`` of :meth:`predict_proba` is ``classes_[g]``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` had string column names (a pandas DataFrame).
    model_ : pymc.Model
        The fitted model: free ``beta`` and ``k`` (or ``sigma``), observed ``y`` (the labels
        encoded as ``0..n_classes-1``). Not with ``method="korea"``.
    idata_ : arviz.InferenceData
        The posterior draws returned by ``pm.sample``. Not with ``method="korea"``.
    convergence_ : pandas.DataFrame
        R-hat, bulk and tail ESS and Monte Carlo standard errors of ``beta`` and ``k`` (or
        ``sigma``), from :func:`pymc_knn.check_convergence`; ``fit`` emits a
        :class:`pymc_knn.ConvergenceWarning` (a scikit-learn ``ConvergenceWarning``) when R-hat
        exceeds 1.01 or an ESS falls below 100 per chain. Not with ``method="korea"``.
    prior_bounds_ : dict
        Where the posterior presses against a bound of its prior (``"beta upper"`` or
        ``"sigma upper"`` to the chains that found it; empty when nowhere), from
        :func:`pymc_knn.check_prior_bounds`; ``fit`` emits a :class:`pymc_knn.PriorBoundWarning`
        naming ``beta_upper`` or ``sigma_upper``. Not with ``method="korea"``.
    korea_ : pymc_knn.Korea
        With ``method="korea"`` only: the approximation (its ``posterior`` over ``k``).
    prior_upper_ : int or float
        The upper bound of the prior on ``k`` (kNN) or ``sigma`` (d-nn).

    See Also
    --------
    PottsKNN, DistanceNN : the models, for use in your own PyMC model.
    knn_predict : the classical k-nearest-neighbour rule.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 2.2, eq. 3 (``"symmetrised"``), section 2.3 and section 3.1, eqs. 5-7
       (``predict_proba``), section 3.4 (``method="moller"``) and section 3.2 (``"pseudo"``).
    .. [2] Friel, N. and Pettitt, A. N. (2011). Classification using distance nearest neighbours.
       *Statistics and Computing* 21, 431-437.
       Sections 3 and 4.2 (the ``"dnn-*"`` models and ``method="exchange"``).
    .. [3] Yoon, J. W. and Friel, N. (2015). Efficient model selection for probabilistic K nearest
       neighbour classification. *Neurocomputing* 149, 1098-1108.
       Section 4.2.1 (``method="korea"``) and section 4.3.1 (``"equal"``).
    .. [4] Murray, I., Ghahramani, Z. and MacKay, D. J. C. (2006). MCMC for doubly-intractable
       distributions. *Proceedings of the 22nd Conference on Uncertainty in Artificial
       Intelligence*, 359-366.

    Examples
    --------
    >>> import pymc_knn as pk
    >>> from pymc_knn.sklearn import BayesianKNNClassifier
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> clf = BayesianKNNClassifier(draws=500, tune=500, random_seed=1).fit(X, y)
    >>> clf.predict(X[:3])
    array([0, 0, 0])
    >>> clf.predict_proba(X[:3]).round(2)
    array([[0.88, 0.12],
           [0.96, 0.04],
           [0.96, 0.04]])
    """

    def __init__(
        self,
        model="symmetrised",
        method="exchange",
        draws=1000,
        tune=1000,
        chains=2,
        cores=1,
        random_seed=None,
        beta_upper=4.0,
        k_max=None,
        sigma_upper=None,
        standardize=True,
        sampler="swendsen_wang",
        sweeps=None,
        ci_prob=0.95,
        progressbar=False,
        mp_ctx=None,
    ):
        self.model = model
        self.method = method
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.beta_upper = beta_upper
        self.k_max = k_max
        self.sigma_upper = sigma_upper
        self.standardize = standardize
        self.sampler = sampler
        self.sweeps = sweeps
        self.ci_prob = ci_prob
        self.progressbar = progressbar
        self.mp_ctx = mp_ctx

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_seed is None and self.method != "korea"
        return tags

    def fit(self, X, y):
        """Sample the posterior of the model's parameters given training data.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
        y : array_like, shape (n_samples,)
            Class labels of any type (numbers, strings); at least two classes.

        Returns
        -------
        self
        """
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes, y_encoded = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes in y, got {classes.size} class "
                f"({classes[0]!r})"
            )
        # a copy, owned and writable (joblib may pass a read-only memory map); the model is
        # rebuilt from it when the estimator is unpickled
        X = np.array(X)
        upper = self._prior_upper(X, y_encoded)
        stale_attributes = ("korea_", "model_", "idata_", "convergence_", "prior_bounds_")
        for stale in (*stale_attributes, "_fit_X", "_fit_y"):
            self.__dict__.pop(stale, None)
        if self.method == "korea":
            self.korea_ = korea(
                X,
                y_encoded,
                neighbours=self.model,
                k_max=upper,
                beta_prior=pm.Uniform.dist(0, self.beta_upper),
                beta_upper=self.beta_upper,
                standardize=self.standardize,
            )
        else:
            model = self._build_model(X, y_encoded, upper, classes.size)
            with model:
                idata = pm.sample(
                    self.draws,
                    tune=self.tune,
                    chains=self.chains,
                    cores=self.cores,
                    random_seed=self.random_seed,
                    step=self._step(),
                    progressbar=self.progressbar,
                    mp_ctx=self._mp_ctx(),
                )
            self.model_, self.idata_ = model, idata
            self.convergence_ = check_convergence(idata, var_names=list(idata.posterior))
            self.prior_bounds_ = check_prior_bounds(idata, warn=False)
            self._warn_prior_bounds(upper)
            if self.model in ("symmetrised", "equal") and upper > 1:
                top = float((idata.posterior["k"] == upper).mean())
                warn_if_capped(top, upper, max_k(y_encoded), type(self).__name__)
            self._fit_X, self._fit_y = X, y_encoded
        self.classes_, self.prior_upper_ = classes, upper
        return self

    def predict_summary(self, X):
        """Posterior predictive summary of new points, classes labelled by ``classes_``.

        Returns
        -------
        xarray.Dataset
            ``proba``, ``lower``, ``upper`` (point, class), ``bayes_class`` and ``uncertain``
            (point), as :func:`pymc_knn.predict.predictive_summary`, at ``ci_prob``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if hasattr(self, "korea_"):  # fitted by KOREA, whatever method says now
            return self.korea_.predictive_summary(X, ci_prob=self.ci_prob, classes=self.classes_)
        return predictive_summary(
            self.idata_, X, model=self.model_, ci_prob=self.ci_prob, classes=self.classes_
        )

    def predict_proba(self, X):
        """Posterior predictive class probabilities, shape (n_samples, n_classes)."""
        return self.predict_summary(X)["proba"].values

    def predict(self, X):
        """The class of highest posterior predictive probability."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def _check_params(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.method == "korea" and self.model not in ("symmetrised", "equal"):
            raise ValueError(
                f"method='korea' approximates the kNN models ('symmetrised', "
                f"'equal'), not {self.model!r}"
            )
        check_positive(self.beta_upper, "beta_upper")
        if self.sigma_upper is not None:
            check_positive(self.sigma_upper, "sigma_upper")
        for name, minimum in (("draws", 1), ("tune", 0), ("chains", 1), ("cores", 1)):
            check_count(getattr(self, name), name, minimum)
        if self.sweeps is not None:
            check_count(self.sweeps, "sweeps", 1)
        if self.k_max is not None:
            check_count(self.k_max, "k_max")
        check_flag(self.standardize, "standardize")
        _check_ci(self.ci_prob)

    def _prior_upper(self, X, y):
        """The upper bound of the prior on k (kNN) or sigma (d-nn)."""
        if self.model in ("symmetrised", "equal"):
            if self.k_max is not None:
                return self.k_max
            return default_k_max(X.shape[0], max_k(y))
        if self.sigma_upper is not None:
            return float(self.sigma_upper)
        return _default_sigma_upper(X, self.model.removeprefix("dnn-"), self.standardize)

    def _warn_prior_bounds(self, upper) -> None:
        """One warning naming the parameter whose bound the posterior presses against."""
        settings = {
            "beta upper": ("beta_upper", self.beta_upper),
            "sigma upper": ("sigma_upper", upper),
        }
        found = [
            f"{settings[b][0]}={settings[b][1]:g} (chains {chains})"
            for b, chains in self.prior_bounds_.items()
            if b in settings
        ]
        freeze = " (past pk.beta_max, where the field nears freezing, auxiliary draws slow down)"
        freeze = freeze if "beta upper" in self.prior_bounds_ else ""
        if found:
            warnings.warn(
                f"{type(self).__name__}: the posterior presses against the upper bound of its "
                f"prior, set by {', '.join(found)}: the prior, not the data, ends it there. "
                f"Raise it{freeze}, or keep it if it is a belief",
                PriorBoundWarning,
                stacklevel=3,
            )

    def _build_model(self, X, y, upper, G):
        """The PyMC model of ``G`` classes, labels ``y`` encoded as ``0..G-1``."""
        with pm.Model() as model:
            beta = pm.Uniform("beta", 0, self.beta_upper)
            if self.model in ("symmetrised", "equal"):
                k = pm.DiscreteUniform("k", 1, upper) if upper != 1 else 1
                PottsKNN(
                    "y",
                    X=X,
                    beta=beta,
                    k=k,
                    neighbours=self.model,
                    k_max=upper,
                    n_classes=G,
                    standardize=self.standardize,
                    observed=y,
                )
            else:
                sigma = pm.Uniform("sigma", 0, upper)
                DistanceNN(
                    "y",
                    X=X,
                    beta=beta,
                    sigma=sigma,
                    kernel=self.model.removeprefix("dnn-"),
                    n_classes=G,
                    standardize=self.standardize,
                    observed=y,
                )
        return model

    def __getstate__(self):
        # a pymc.Model does not pickle: drop it and rebuild it from the training data on load
        state = dict(super().__getstate__())  # object.__getstate__ gives __dict__ itself
        state.pop("model_", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_fit_X" in state:
            self.model_ = self._build_model(
                self._fit_X, self._fit_y, self.prior_upper_, self.classes_.size
            )

    def _mp_ctx(self):
        """``mp_ctx`` for ``pm.sample``: a standard context inside a joblib (loky) worker."""
        if self.mp_ctx is not None or self.cores == 1 or self.chains == 1:
            return self.mp_ctx
        standard = multiprocessing.get_all_start_methods()
        if multiprocessing.get_start_method(allow_none=True) in (None, *standard):
            return None
        # loky's context pickles the processes' arguments with its own reducers, which cannot
        # send the shared-memory arrays (mmap-backed RawArrays) PyMC gives each chain process
        return standard[0]

    def _step(self):
        if self.method == "pseudo":
            step = PseudoLikelihoodMetropolis()
        else:
            cls = Exchange if self.method == "exchange" else Moller
            step = cls(sampler=self.sampler, sweeps=self.sweeps)
        step.warn_prior_bounds = False  # fit warns once, naming the parameter (also with cores > 1)
        return step


def _default_sigma_upper(X, kernel, standardize) -> float:
    """The default upper bound of the uniform prior on sigma (see the class docstring).

    Up to :data:`~pymc_knn.graphs.UNCAPPED_N` points from all pairwise distances; beyond, with
    no pairwise distances: twice the largest distance from the mean (at least the largest
    pairwise distance) and the nearest-neighbour distances from a neighbour search.
    """
    Z = NeighbourGraph(X, standardize).X
    if Z.shape[0] > UNCAPPED_N:
        return _default_sigma_upper_large(Z, kernel)
    D = squareform(pdist(Z))
    if kernel != "exponential":
        return float(D.max()) if D.max() > 0 else 1.0
    D[D == 0] = np.inf
    nearest = D.min(axis=1)
    nearest = nearest[np.isfinite(nearest)]
    return EXPONENTIAL_RATE_FACTOR / float(np.median(nearest)) if nearest.size else 10.0


def _default_sigma_upper_large(Z, kernel) -> float:
    """:func:`_default_sigma_upper` in ``O(n)`` memory, for many points."""
    if kernel != "exponential":
        top = 2 * float(np.sqrt(((Z - Z.mean(axis=0)) ** 2).sum(axis=1).max()))
        return top if top > 0 else 1.0
    from ._search import NeighbourSearch

    _, sq = NeighbourSearch(Z, "exact", 1).graph(1)
    nearest = np.sqrt(sq[:, 0])
    nearest = nearest[nearest > 0]
    return EXPONENTIAL_RATE_FACTOR / float(np.median(nearest)) if nearest.size else 10.0
