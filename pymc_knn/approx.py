"""KOREA: the functional approximation of Yoon and Friel (2015) to the pkNN posterior.

For each ``k = 1..k_max`` the pseudo-posterior of ``beta`` given ``k``,
``PL(y | beta, k) p(beta)``, is replaced by a Gaussian ``p_G(beta | y, k)`` at its mode
``beta*(k)`` with the curvature there (a Laplace approximation, as in INLA). The same Gaussian
gives the approximate posterior of ``k`` (003 eq. 14, Algorithm 1 step 6)::

    p~(k | y)  ∝  p(k) p(beta*) PL(y | beta*, k) / p_G(beta* | y, k)
               =  p(k) p(beta*) PL(y | beta*, k) sqrt(2 pi) sd(k)

(times the Gaussian's mass in ``(0, beta_upper]``; when the pseudo-posterior still rises at
``beta_upper`` the expansion is made there and the Gaussian, centred beyond, is truncated), and
the posterior predictive of a new point is the mixture (003 eqs. 11-12)
``sum_k sum_m lambda_km P(y_new | beta_km, k, y)`` over nodes ``beta_km`` of each Gaussian.

Two choices differ from Algorithm 1 of the paper, both stated where they matter:

* The approximation is built once from the training labels, not once per test point with the
  test label summed out (Algorithm 1, step 2). One test point changes one term among ``n + 1`` in
  the pseudo-likelihood; building once makes the cost independent of the number of test points.
* The ``beta`` nodes of each ``k`` are quadrature nodes of its own Gaussian, not a grid
  ``mu +/- i sigma`` of the marginal of ``beta`` shared by every ``k`` (step 10): a narrow
  ``p_G(beta | y, k)`` is then integrated as accurately as a wide one, and the weights of each
  ``k`` sum to ``p~(k | y)`` exactly.

The class probabilities at ``(beta, k)`` are the new point's full conditional (Cucala et al. 2009,
eq. 5) for the symmetrised and equal-weight models, and its Holmes-Adams conditional (its own
``k`` nearest only, 003 eq. 1) for the asymmetric one.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import xarray as xr
from numba import njit
from scipy.special import log_ndtr
from scipy.stats import truncnorm

from ._validation import (
    check_covariates,
    check_labels_and_weights,
    check_positive,
    kernel_array,
    working_memory_bytes,
)
from .graphs import KNN_KINDS, KNNGraph, default_k_max, max_k, warn_if_capped
from .kernels.energy import log_pl_derivatives
from .kernels.structure import knn_counts_next
from ._forksafe import ForkSafe
from .kernels import predictive

_k = ForkSafe(predictive)

__all__ = ["Korea", "korea"]

ESTIMATES = ("average", "optimal")
BETA_GRID = 256
"""Points of the coarse search for each mode of ``beta`` before the Newton refinement."""


@njit(cache=True)
def log_pl_grid(h, y, weights, betas):
    """``log PL`` at each of ``betas`` (rows counted ``weights`` times)."""
    out = np.empty(betas.size)
    for b in range(betas.size):
        out[b] = log_pl_derivatives(h, y, betas[b], weights)[0]
    return out


class _Fields:
    """The local fields of every ``k`` in turn, with the rows of equal counts and label merged:
    ``(h, y, weights)``, a few thousand distinct rows where the data have ``10^5``."""

    def __init__(self, graph: KNNGraph, y, class_weights):
        self.graph, self.y, self.a = graph, y, class_weights
        self.counts = np.zeros((y.size, class_weights.size), dtype=np.int64)
        self.kind = KNN_KINDS.index(graph.kind)
        self.k = 0

    def next(self):
        self.k += 1
        g = self.graph
        knn_counts_next(self.counts, g.neighbours, g.reverse_rank, self.y, self.k, self.kind)
        G, base = self.a.size, int(self.counts.max()) + 1  # reverse neighbours: counts > k
        if G * math.log2(base) + math.log2(G) < 62:  # one int64 key a row: a fast unique
            key = self.y.copy()
            for c in range(G):
                key += self.counts[:, c] * (G * base**c)
            _, first, weights = np.unique(key, return_index=True, return_counts=True)
            counts, labels = self.counts[first], self.y[first]
        else:
            rows, weights = np.unique(
                np.column_stack([self.counts, self.y]), axis=0, return_counts=True
            )
            counts, labels = rows[:, :-1], np.ascontiguousarray(rows[:, -1])
        return counts * (self.a / self.k), labels, weights.astype(np.float64)


class _BetaPrior:
    """A PyMC distribution's log density of beta, vectorised, and its derivatives."""

    def __init__(self, dist):
        import pymc as pm
        import pytensor
        import pytensor.tensor as pt
        from pytensor.tensor.random.op import RandomVariable

        if dist is None:
            dist = pm.Gamma.dist(alpha=2.0, beta=0.1)
        owner = getattr(dist, "owner", None)
        if owner is None or not isinstance(owner.op, RandomVariable) or dist.ndim != 0:
            raise ValueError(
                "beta_prior must be a scalar PyMC distribution made with .dist(), e.g. "
                f"pm.Gamma.dist(alpha=2, beta=0.1); got {dist!r}"
            )
        if dist.dtype.startswith("int"):
            raise ValueError(f"beta_prior must be continuous, got the discrete {owner.op.name}")
        b = pt.dvector("beta")
        self._fn = pytensor.function([b], pm.logp(dist, b))
        self.name = owner.op.name

    def __call__(self, betas) -> np.ndarray:
        return np.asarray(self._fn(np.atleast_1d(np.asarray(betas, dtype=np.float64))))

    def derivatives(self, beta: float) -> tuple[float, float]:
        """Slope and curvature of the log density at ``beta``, by finite differences that stay
        where the density is positive (central, else one-sided; zero for a flat density)."""
        e = 1e-5 * max(1.0, beta)
        f = self(beta + e * np.arange(-2, 3))
        if np.isfinite(f[1]) and np.isfinite(f[3]):
            return (f[3] - f[1]) / (2 * e), (f[3] - 2 * f[2] + f[1]) / e**2
        if np.isfinite(f[0]) and np.isfinite(f[1]):
            return (f[2] - f[1]) / e, (f[2] - 2 * f[1] + f[0]) / e**2
        if np.isfinite(f[3]) and np.isfinite(f[4]):
            return (f[3] - f[2]) / e, (f[4] - 2 * f[3] + f[2]) / e**2
        return 0.0, 0.0


def _check_k_prior(k_prior, k_max: int) -> np.ndarray:
    """Log prior weights of ``k = 1..k_max`` (uniform by default)."""
    if k_prior is None:
        return np.full(k_max, -np.log(k_max))
    p = np.asarray(k_prior, dtype=np.float64)
    if p.shape != (k_max,) or not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValueError(
            f"k_prior must hold k_max = {k_max} non-negative weights (of k = 1..{k_max}) with a "
            f"positive sum, got shape {p.shape}"
        )
    with np.errstate(divide="ignore"):
        return np.log(p / p.sum())


def _laplace(h, y, weights, prior: _BetaPrior, beta_upper: float):
    """The Gaussian ``p_G(beta | y, k)`` of ``PL(y | beta) p(beta)`` on ``(0, beta_upper]``.

    The mode is the best of a grid, refined by safeguarded Newton steps (the log
    pseudo-likelihood is concave). The log posterior is expanded to second order there:
    ``N(mu, sd)`` with ``mu`` the mode, or beyond an end of the range when the log posterior
    still slopes at that end (then the Gaussian is truncated there, and so is the evidence).
    Returns ``(mode, mu, sd, log_evidence, at_bound)``.
    """
    grid = np.linspace(beta_upper / BETA_GRID, beta_upper, BETA_GRID)
    logpost = log_pl_grid(h, y, weights, grid) + prior(grid)
    best = int(np.argmax(logpost))
    if not np.isfinite(logpost[best]):
        raise ValueError("the prior of beta has no mass on (0, beta_upper]: widen beta_upper")
    lo = grid[best - 1] if best > 0 else 0.0
    hi = grid[min(best + 1, BETA_GRID - 1)]
    beta = grid[best]
    for _ in range(60):
        _, d1, d2 = log_pl_derivatives(h, y, beta, weights)
        p1, p2 = prior.derivatives(beta)
        slope, curv = d1 + p1, d2 + p2
        if slope > 0:
            lo = beta
        else:
            hi = beta
        new = beta - slope / curv if curv < 0 else 0.5 * (lo + hi)
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        done = abs(new - beta) < 1e-12 * max(1.0, beta)
        beta = new
        if done:
            break
    value, d1, d2 = log_pl_derivatives(h, y, beta, weights)
    p1, p2 = prior.derivatives(beta)
    slope, curv = d1 + p1, d2 + p2
    if not curv < 0:
        raise ValueError(
            f"the log pseudo-posterior of beta is not concave at its mode {beta:.4g}: KOREA's "
            "Gaussian approximation does not apply (check the prior of beta)"
        )
    sd = 1.0 / np.sqrt(-curv)
    mu = beta - slope / curv
    log_ev = (
        value
        + float(prior(beta)[0])
        + 0.5 * slope**2 / -curv
        + 0.5 * np.log(2 * np.pi)
        + np.log(sd)
        + _log_mass(mu, sd, beta_upper)
    )
    at_bound = beta >= beta_upper * (1 - 1e-9) or beta <= beta_upper * 1e-9
    return beta, mu, sd, log_ev, at_bound


def _log_mass(mu, sd, upper):
    """``log P(0 < N(mu, sd) <= upper)``, stable in the tails."""
    a, b = -mu / sd, (upper - mu) / sd
    if a > 0:  # both ends in the upper tail: mirror them
        a, b = -b, -a
    la, lb = log_ndtr(a), log_ndtr(b)
    return lb + np.log1p(-np.exp(la - lb))


def _warn_truncated(mode, flagged, prior: _BetaPrior, beta_upper: float) -> None:
    """Warn when the pseudo-posterior is cut at beta_upper while the prior goes on."""
    at_top = flagged & (mode > beta_upper / 2)
    beyond = prior(np.array([beta_upper * (1 + 1e-6)]))[0]
    if at_top.any() and np.isfinite(beyond):
        warnings.warn(
            f"KOREA: the pseudo-posterior of beta still rises at beta_upper = {beta_upper:g} "
            f"for k = {(np.flatnonzero(at_top) + 1).tolist()}, where the prior goes on; the "
            "approximation truncates it there: raise beta_upper",
            UserWarning,
            stacklevel=3,
        )


class Korea:
    """The KOREA approximation of ``p(beta, k | y)`` for a pkNN model; made by :func:`korea`.

    Attributes
    ----------
    posterior : xarray.Dataset
        Over ``k = 1..k_max``: ``p_k`` (the approximate posterior of ``k``, 003 eq. 14);
        ``beta_mode``, the mode of the pseudo-posterior of ``beta`` given ``k`` on ``(0,
        beta_upper]``; ``beta_mu`` and ``beta_sd``, its Gaussian ``p_G(beta | y, k)``, truncated
        to ``(0, beta_upper]`` (``beta_mu`` is the mode, unless the pseudo-posterior still
        rises or falls at an end of the range: then it lies beyond that end, and ``at_bound``
        is set); ``beta_mean``, the mean of the truncated Gaussian; ``log_evidence``, the
        unnormalised ``log p~(k | y)``. Attributes: the marginal ``beta_mean`` and
        ``beta_sd`` of beta (003 eq. 15) and ``k_map``.
    graph : KNNGraph
    y : ndarray

    See Also
    --------
    korea : which makes it.

    References
    ----------
    .. [1] Yoon, J. W. and Friel, N. (2015). Efficient model selection for probabilistic K nearest
       neighbour classification. *Neurocomputing* 149, 1098-1108.
       Section 4.1, eq. 8 (``k_map``) and section 4.2.1, eqs. 11-15 (the approximate
       posterior of ``k``, the Gaussian of ``beta`` given ``k`` and the predictive mixture).
    .. [2] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3.2, eq. 8 (the pseudo-likelihood it is built on) and section 3.5 (its bias).

    Examples
    --------
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X_test, y_test, *_ = pk.datasets.load_ripley("test")
    >>> approx = pk.korea(X, y, standardize=False)
    >>> approx.posterior["p_k"].dims
    ('k',)
    >>> round(float(approx.posterior["p_k"].sum()), 6)
    1.0
    >>> approx.k_map
    62
    >>> approx.predict(X_test[:5])
    array([0, 0, 0, 0, 0])
    >>> approx.predict_proba(X_test[:3]).shape
    (3, 2)
    """

    def __init__(self, graph: KNNGraph, y, class_weights, posterior: xr.Dataset, n_nodes: int):
        self.graph = graph
        self.y = y
        self.class_weights = class_weights
        self.posterior = posterior
        self.n_classes = class_weights.size
        self._nodes = self._quadrature(n_nodes)

    def __setstate__(self, state):
        # loaded from a memory map (joblib), the arrays are read-only: the kernels would be
        # compiled again for them
        self.__dict__.update(state)
        self.y, self.class_weights = (
            kernel_array(self.y, np.int64),
            kernel_array(self.class_weights),
        )
        self._nodes = tuple(kernel_array(a, a.dtype) for a in self._nodes)

    @property
    def k_map(self) -> int:
        """``K* = argmax_k p~(k | y)`` (003 eq. 8)."""
        return int(self.posterior.attrs["k_map"])

    def _quadrature(self, n_nodes: int):
        """``(k index, beta, weight)`` of every node, the weights of ``k`` summing to ``p_k``.

        Gauss-Hermite nodes of ``N(mu, sd)`` when it lies inside ``(0, beta_upper]`` (all but
        1e-6 of its mass); Gauss-Legendre nodes on its truncation, weighted by its density,
        otherwise.
        """
        x_h, w_h = np.polynomial.hermite_e.hermegauss(n_nodes)
        x_l, w_l = np.polynomial.legendre.leggauss(n_nodes)
        post = self.posterior
        upper = post.attrs["beta_upper"]
        t_index, betas, weights = [], [], []
        for t, (p, mu, sd) in enumerate(
            zip(post.p_k.values, post.beta_mu.values, post.beta_sd.values)
        ):
            if p < 1e-12 * post.p_k.values.max():
                continue
            if _log_mass(mu, sd, upper) > np.log1p(-1e-6):
                b, w = mu + sd * x_h, w_h
            else:
                lo, hi = max(0.0, mu - 6 * sd), min(upper, mu + 6 * sd)
                if not lo < hi:  # all the mass sits at one end
                    lo, hi = (upper - 1e-6 * upper, upper) if mu > upper else (0.0, 1e-6 * upper)
                b = lo + (hi - lo) * (x_l + 1) / 2
                w = w_l * np.exp(-0.5 * ((b - mu) / sd) ** 2)
            t_index.append(np.full(b.size, t))
            betas.append(b)
            weights.append(p * w / w.sum())
        return (
            np.concatenate(t_index).astype(np.int64),
            np.concatenate(betas),
            np.concatenate(weights),
        )

    def _checked_new(self, X_new) -> np.ndarray:
        X_new = check_covariates(X_new, "X_new", min_rows=1)
        if X_new.shape[1] != self.graph.n_features:
            raise ValueError(
                f"X_new has {X_new.shape[1]} columns but the approximation was "
                f"built on {self.graph.n_features} features"
            )
        return X_new

    def _strengths(self, X_new) -> np.ndarray:
        """Strengths ``h[a, t, g]`` of new points at ``k = t + 1`` (see the module docstring)."""
        q = self.graph.query(X_new)
        if self.graph.kind == "asymmetric":  # no training point counts the new one
            q = q.without_reverse()
        ks = np.arange(1, self.graph.k_max + 1, dtype=np.int64)
        return _k.knn_strengths(
            q.neighbours,
            q.enter_indptr,
            q.enter_index,
            q.enter_k,
            self.y,
            ks,
            self.class_weights,
            self.graph.kind == "equal",
        )

    def _nodes_for(self, estimate: str):
        if estimate not in ESTIMATES:
            raise ValueError(f"estimate must be one of {ESTIMATES}, got {estimate!r}")
        if estimate == "average":
            return self._nodes
        t = self.k_map - 1
        return (np.array([t], dtype=np.int64), self.posterior.beta_mode.values[[t]], np.ones(1))

    def predictive_summary(
        self, X_new, *, estimate="average", ci_prob=0.95, classes=None, working_memory=None
    ) -> xr.Dataset:
        """Posterior predictive of new points, as :func:`pymc_knn.predictive_summary`.

        Parameters
        ----------
        X_new : array_like, shape (m, p)
        estimate : {"average", "optimal"}
            ``"average"``: the mixture over ``k`` and ``beta`` (003's "KOREA (average)", eq.
            11); ``"optimal"``: the plug-in at ``K*`` and its mode of beta ("KOREA (optimal)").
        ci_prob : float
            Probability of the equal-tailed interval of the class probabilities over the
            mixture's nodes.
        classes : array_like, optional
            Labels of the ``class`` coordinate (default ``0..G-1``).
        working_memory : float, optional
            MiB a chunk of points may take, as for :func:`pymc_knn.predictive_summary`.

        Returns
        -------
        xarray.Dataset
            ``proba``, ``lower``, ``upper`` (point, class), ``bayes_class`` and ``uncertain``
            (point).
        """
        from .predict import _check_ci, _summary_dataset, summarize_mixture

        ci_prob = _check_ci(ci_prob)
        budget = working_memory_bytes(working_memory)
        t_index, betas, weights = self._nodes_for(estimate)
        X_new = self._checked_new(X_new)
        g = self.graph
        mean, lower, upper = summarize_mixture(
            self._strengths,
            X_new,
            g.k_max,
            t_index,
            betas,
            weights,
            self.n_classes,
            True,
            g.query_bytes(),
            ci_prob,
            budget,
        )
        if classes is None:
            classes = np.arange(self.n_classes)
        classes = np.asarray(classes)
        if classes.shape != (self.n_classes,):
            raise ValueError(
                f"classes must hold {self.n_classes} labels, got shape {classes.shape}"
            )
        out = _summary_dataset(mean, lower, upper, classes, ci_prob)
        out.attrs["method"] = f"KOREA ({estimate}), Yoon and Friel (2015)"
        return out

    def predict_proba(self, X_new, *, estimate="average") -> np.ndarray:
        """Class probabilities ``(m, G)`` of new points (see :meth:`predictive_summary`)."""
        return self.predictive_summary(X_new, estimate=estimate)["proba"].values

    def predict(self, X_new, *, estimate="average") -> np.ndarray:
        """The most probable class of each new point."""
        return np.argmax(self.predict_proba(X_new, estimate=estimate), axis=1)


def korea(
    X,
    y,
    *,
    neighbours="symmetrised",
    k_max=None,
    beta_prior=None,
    k_prior=None,
    beta_upper=20.0,
    class_weights=None,
    standardize=True,
    n_nodes=9,
) -> Korea:
    """Approximate the pkNN posterior ``p(beta, k | y)`` by KOREA (Yoon and Friel 2015).

    Fast (no MCMC), deterministic, and built on the pseudo-likelihood: it approximates the
    pseudo-posterior, whose bias Cucala et al. (2009, section 3.5) document (larger ``beta`` and
    ``k`` than the exact posterior on Ripley). Compare it with the exact samplers
    (:class:`pymc_knn.Exchange`) before trusting it.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Training covariates.
    y : array_like of int, shape (n,)
        Labels in ``0..G-1``, at least two classes.
    neighbours : {"symmetrised", "equal", "asymmetric"}
        The neighbour rule (003 Table 2's "Symmetric Boltzman", "Boltzman(2)" and "Asymmetric
        model").
    k_max : int, optional
        Largest ``k``; upper limit the smallest class size (Cucala et al. 2009, section 3).
        Default that size, at most :data:`~pymc_knn.graphs.DEFAULT_K_MAX_CAP` (100) beyond
        :data:`~pymc_knn.graphs.UNCAPPED_N` (2000) points (:func:`pymc_knn.default_k_max`).
    beta_prior : PyMC distribution, optional
        A scalar ``.dist()``; default ``pm.Gamma.dist(alpha=2, beta=0.1)`` (003 section 4.2,
        shape 2 and scale 10, "almost flat"). It is truncated to ``(0, beta_upper]``.
    k_prior : array_like, optional
        Weights of ``k = 1..k_max``; default uniform.
    beta_upper : float
        The paper's ``beta_max``: the approximation lives on ``(0, beta_upper]``. Where the
        pseudo-posterior of beta still rises at ``beta_upper`` its Gaussian is truncated there
        (``posterior.at_bound``), with a warning if the prior extends beyond it.
    class_weights : array_like, optional
        Unbalanced-sampling weights ``a_g`` (Cucala et al. 2009, section 2.2).
    standardize : bool
        Standardise the covariates (default).
    n_nodes : int
        Gauss-Hermite nodes per ``k`` for the predictive mixture.

    Returns
    -------
    Korea
        ``.posterior`` (an xarray Dataset over ``k``), ``.predictive_summary``,
        ``.predict_proba`` and ``.predict``.

    References
    ----------
    .. [1] Yoon, J. W. and Friel, N. (2015). Efficient model selection for probabilistic K nearest
       neighbour classification. *Neurocomputing* 149, 1098-1108.

    Examples
    --------
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> approx = pk.korea(X, y, standardize=False)
    >>> approx.posterior.sizes["k"] >= 1
    True
    """
    if neighbours not in KNN_KINDS:
        raise ValueError(f"neighbours must be one of {KNN_KINDS}, got {neighbours!r}")
    X = check_covariates(X)
    y, a = check_labels_and_weights(y, X.shape[0], class_weights)
    K = min(max_k(y), X.shape[0] - 1)
    if k_max is None:
        k_max = default_k_max(X.shape[0], K)
    if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or not 1 <= k_max <= K:
        raise ValueError(
            f"k_max must be an integer in 1..{K} (the smallest class size), got {k_max!r}"
        )
    beta_upper = check_positive(beta_upper, "beta_upper")
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, (int, np.integer)) or n_nodes < 1:
        raise ValueError(f"n_nodes must be a positive integer, got {n_nodes!r}")
    log_pk = _check_k_prior(k_prior, int(k_max))
    prior = _BetaPrior(beta_prior)
    graph = KNNGraph(X, k_max=int(k_max), neighbours=neighbours, standardize=standardize)
    rows = []
    fields = _Fields(graph, y, a)
    for k in range(1, graph.k_max + 1):
        h, y_rows, weights = fields.next()
        rows.append(
            _laplace(h, y_rows, weights, prior, beta_upper)
            if np.isfinite(log_pk[k - 1])
            else (np.nan, np.nan, np.nan, -np.inf, False)
        )
    mode, mu, sd, log_ev, at_bound = (np.array(c) for c in zip(*rows))
    log_ev = log_ev + log_pk
    p_k = np.exp(log_ev - log_ev.max())
    p_k /= p_k.sum()
    _warn_truncated(mode, at_bound & (p_k > 1e-3), prior, beta_upper)
    warn_if_capped(float(p_k[-1]), graph.k_max, K, "korea")
    ok = np.isfinite(mu)
    mean_k, var_k = np.full(mu.shape, np.nan), np.full(mu.shape, np.nan)
    mean_k[ok], var_k[ok] = truncnorm.stats(
        -mu[ok] / sd[ok], (beta_upper - mu[ok]) / sd[ok], loc=mu[ok], scale=sd[ok]
    )
    mean = float(np.sum(p_k[ok] * mean_k[ok]))
    var = float(np.sum(p_k[ok] * (var_k[ok] + (mean_k[ok] - mean) ** 2)))
    ks = np.arange(1, graph.k_max + 1)
    posterior = xr.Dataset(
        {
            "p_k": ("k", p_k),
            "beta_mode": ("k", mode),
            "beta_mu": ("k", mu),
            "beta_sd": ("k", sd),
            "beta_mean": ("k", mean_k),
            "log_evidence": ("k", log_ev),
            "at_bound": ("k", at_bound),
        },
        coords={"k": ks},
        attrs={
            "method": "KOREA (Yoon and Friel 2015), Laplace on the pseudo-likelihood",
            "neighbours": neighbours,
            "beta_prior": prior.name,
            "beta_upper": beta_upper,
            "beta_mean": mean,
            "beta_sd": float(np.sqrt(var)),
            "k_map": int(ks[np.argmax(p_k)]),
        },
    )
    return Korea(graph, y, a, posterior, int(n_nodes))
