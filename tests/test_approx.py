"""KOREA (Yoon and Friel 2015) against quadrature of the pseudo-posterior it approximates.

The references are written from the paper's definitions with ``brute.py``'s dense weights (no
package code): for each ``k`` the pseudo-posterior ``PL(y | beta, k) p(beta)`` on a fine grid of
``beta`` gives the exact marginal of ``k``, the mode and the curvature that the Laplace
approximation must reproduce; the predictive is the mixture of the new point's conditionals.
"""

import brute
import numpy as np
import pymc as pm
import pytest
from scipy import stats
from scipy.special import logsumexp, softmax

import pymc_knn as pk
from pymc_knn.kernels.energy import log_pl_derivatives

GRID = np.linspace(1e-4, 20.0, 8001)
KINDS = ["symmetrised", "equal", "asymmetric"]


def two_clouds(seed, n=40, shift=1.2):
    r = np.random.default_rng(seed)
    X = np.vstack([r.normal(0, 1, (n // 2, 2)), r.normal(shift, 1, (n // 2, 2))])
    return X, np.repeat([0, 1], n // 2)


def conditional_matrix(Z, k, kind):
    """Weights of the full conditionals: W + W^T (symmetric models) or W (Holmes-Adams)."""
    W = brute.knn_W(Z, k, "symmetrised" if kind == "asymmetric" else kind)
    return W if kind == "asymmetric" else W + W.T


def pseudo_posterior(X, y, k, kind, logprior):
    """log PL(y | beta, k) + log p(beta) on GRID, from dense matrices."""
    C = conditional_matrix(brute.standardise(X), k, kind)
    G = y.max() + 1
    H = np.stack([C[:, y == g].sum(1) for g in range(G)], 1)
    lp = GRID[:, None, None] * H[None]
    return (lp[:, np.arange(len(y)), y] - logsumexp(lp, axis=2)).sum(1) + logprior(GRID)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.filterwarnings("ignore:korea. the posterior of k:UserWarning")
def test_laplace_matches_quadrature_of_the_pseudo_posterior(kind):
    X, y = two_clouds(1)
    approx = pk.korea(X, y, neighbours=kind, k_max=12)
    post = approx.posterior
    logprior = stats.gamma(2, scale=10).logpdf  # the default prior: shape 2, scale 10
    log_marginal, modes, curv_sd = [], [], []
    d = GRID[1] - GRID[0]
    for k in post.k.values:
        lp = pseudo_posterior(X, y, k, kind, logprior)
        log_marginal.append(logsumexp(lp) + np.log(d))
        b = np.argmax(lp)
        modes.append(GRID[b])
        curv_sd.append(np.sqrt(-(d**2) / (lp[b + 1] - 2 * lp[b] + lp[b - 1])))
    exact = np.exp(np.array(log_marginal) - max(log_marginal))
    exact /= exact.sum()
    np.testing.assert_allclose(post.beta_mode, modes, atol=2 * d)
    np.testing.assert_allclose(post.beta_sd, curv_sd, rtol=0.01)
    # The Laplace marginal of k is within 0.005 in total variation of the quadrature one
    # (measured: below 0.001 for all three rules; 0.026 without the sd factor of eq. 14).
    assert 0.5 * np.abs(post.p_k.values - exact).sum() < 0.005
    assert approx.k_map == post.k.values[np.argmax(exact)]
    assert post.p_k.sum() == pytest.approx(1.0)
    assert not post.at_bound.any()
    np.testing.assert_allclose(post.beta_mu, post.beta_mode, rtol=1e-8)
    np.testing.assert_allclose(post.beta_mean, post.beta_mode, rtol=5e-3)  # barely truncated at 0
    mean = float((post.p_k * post.beta_mode).sum())
    assert post.attrs["beta_mean"] == pytest.approx(mean, rel=5e-3)
    var = float((post.p_k * (post.beta_sd**2 + (post.beta_mode - mean) ** 2)).sum())
    assert post.attrs["beta_sd"] == pytest.approx(np.sqrt(var), rel=5e-3)  # eq. 15


@pytest.mark.parametrize("kind, upper", [("symmetrised", 1.5), ("asymmetric", 3.0)])
def test_a_pseudo_posterior_cut_by_the_prior_is_a_truncated_gaussian(kind, upper):
    """A Uniform(0, upper) prior: for larger k the pseudo-posterior still rises at upper, its
    Gaussian is centred beyond it and truncated, and the marginal of k stays close to
    quadrature on (0, upper] (a Gaussian at the cut would halve those k's mass)."""
    import warnings

    X, y = two_clouds(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the prior ends at beta_upper: nothing to warn about
        warnings.filterwarnings("ignore", "korea: the posterior of k")  # k_max = 12 cuts it
        approx = pk.korea(
            X, y, neighbours=kind, k_max=12, beta_prior=pm.Uniform.dist(0, upper), beta_upper=upper
        )
    post = approx.posterior
    assert post.at_bound.any() and not post.at_bound.all()
    assert (post.beta_mu.values[post.at_bound.values] > upper).all()
    cut = GRID[GRID <= upper]
    d = cut[1] - cut[0]
    logm = [
        logsumexp(pseudo_posterior(X, y, k, kind, lambda b: np.zeros_like(b))[GRID <= upper])
        + np.log(d)
        for k in post.k.values
    ]
    exact = np.exp(np.array(logm) - max(logm))
    exact /= exact.sum()
    # measured 0.011 (symmetrised), 0.17 when the truncation of the Gaussian is left out
    assert 0.5 * np.abs(post.p_k.values - exact).sum() < 0.02
    t_index, _, weights = approx._nodes
    for t in range(12):
        assert weights[t_index == t].sum() == pytest.approx(post.p_k.values[t])
    assert (post.beta_mean <= upper).all()


def test_log_pseudo_likelihood_and_its_derivatives(rng):
    X, y = two_clouds(2, n=20)
    graph = pk.KNNGraph(X, k_max=5)
    C = conditional_matrix(brute.standardise(X), 4, "symmetrised")
    h = np.stack([C[:, y == g].sum(1) for g in range(2)], 1)
    for beta in (0.3, 1.7, 6.0):
        value, d1, d2 = log_pl_derivatives(h, y, beta)
        assert value == pytest.approx(brute.log_pl(C, y, beta, 2))
        assert value == pytest.approx(
            pk.kernels.log_pseudo_likelihood(*graph.conditional_weights(4), y, beta, np.ones(2))
        )
        e = 1e-3
        up, down = (log_pl_derivatives(h, y, beta + s)[0] for s in (e, -e))
        assert d1 == pytest.approx((up - down) / (2 * e), rel=1e-5)
        assert d2 == pytest.approx((up - 2 * value + down) / e**2, rel=1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_predictive_is_the_mixture_of_the_new_points_conditionals(kind, rng):
    X, y = two_clouds(3, n=12)
    y[[0, 7]] = 2  # three classes, smallest of size 2
    X_new = rng.normal(0.6, 1.0, (4, 2))
    approx = pk.korea(X, y, neighbours=kind, n_nodes=5)
    t_index, betas, weights = approx._nodes
    post = approx.posterior
    for t in range(post.sizes["k"]):  # the nodes of each k carry p~(k | y)
        assert weights[t_index == t].sum() == pytest.approx(post.p_k.values[t])
    Z = brute.standardise(X)
    mu, sd = X.mean(0), X.std(0)
    expected = np.zeros((len(X_new), 3))
    optimal = np.zeros((len(X_new), 3))
    for a, x in enumerate((X_new - mu) / sd):
        for k in post.k.values:
            C = conditional_matrix(np.vstack([Z, x]), k, kind)
            h = np.array([C[-1, :-1][y == g].sum() for g in range(3)])
            on = t_index == k - 1
            for b, w in zip(betas[on], weights[on]):
                expected[a] += w * softmax(b * h)
            if k == approx.k_map:
                optimal[a] = softmax(post.beta_mode.sel(k=k).item() * h)
    summary = approx.predictive_summary(X_new, classes=["a", "b", "c"])
    np.testing.assert_allclose(summary.proba, expected, rtol=1e-10)
    np.testing.assert_allclose(approx.predict_proba(X_new, estimate="optimal"), optimal, rtol=1e-10)
    assert (summary.lower <= summary.proba).all() and (summary.proba <= summary.upper).all()
    assert list(summary.bayes_class.values) == list(np.array(["a", "b", "c"])[expected.argmax(1)])
    np.testing.assert_array_equal(approx.predict(X_new), expected.argmax(1))


def test_the_priors_are_used(rng):
    X, y = two_clouds(4)
    tight = pk.korea(X, y, beta_prior=pm.TruncatedNormal.dist(1.0, 0.01, lower=0.0))
    np.testing.assert_allclose(tight.posterior.beta_mode, 1.0, atol=0.01)
    weights = np.zeros(20)
    weights[[4, 9]] = 1.0
    only = pk.korea(X, y, k_prior=weights)
    assert set(only.posterior.k.values[only.posterior.p_k.values > 0]) == {5, 10}
    default = pk.korea(X, y)
    ratio = default.posterior.p_k.sel(k=10) / default.posterior.p_k.sel(k=5)
    assert only.posterior.p_k.sel(k=10) / only.posterior.p_k.sel(k=5) == pytest.approx(ratio)


def test_a_mode_at_beta_upper_is_flagged():
    X, y = two_clouds(5, shift=4.0)  # separated classes: the pseudo-likelihood wants large beta
    with pytest.warns(UserWarning, match="beta_upper"):
        approx = pk.korea(X, y, beta_upper=0.5)
    assert approx.posterior.at_bound.any()


def test_ripley_pseudo_posterior_agrees_with_pseudo_likelihood_metropolis():
    """000 section 3.5: the pseudo-posterior on Ripley sits near beta 2.4, k 55 (PLM run of
    docs/reproductions.md: beta 2.44 (0.44), k mean 54.9); test error 0.085-0.087."""
    X, y, *_ = pk.datasets.load_ripley("train")
    Xt, yt, *_ = pk.datasets.load_ripley("test")
    approx = pk.korea(X, y, standardize=False, beta_prior=pm.Uniform.dist(0, 4), beta_upper=4.0)
    post = approx.posterior
    assert post.attrs["beta_mean"] == pytest.approx(2.44, abs=0.15)
    assert float((post.k * post.p_k).sum()) == pytest.approx(55, abs=5)
    assert np.mean(approx.predict(Xt) != yt) == pytest.approx(0.086, abs=0.01)


def test_bad_input(rng):
    X, y = two_clouds(6, n=12)
    with pytest.raises(ValueError, match="neighbours"):
        pk.korea(X, y, neighbours="mutual")
    with pytest.raises(ValueError, match="NaN"):
        pk.korea(np.where(np.eye(12, 2) > 0, np.nan, X), y)
    with pytest.raises(ValueError, match="single class"):
        pk.korea(X, np.zeros(12, int))
    with pytest.raises(ValueError, match="labels"):
        pk.korea(X, y[:-1])
    with pytest.raises(ValueError, match="k_max"):
        pk.korea(X, y, k_max=7)
    with pytest.raises(ValueError, match="beta_prior"):
        pk.korea(X, y, beta_prior=stats.gamma(2))
    with pytest.raises(ValueError, match="continuous"):
        pk.korea(X, y, beta_prior=pm.Poisson.dist(2))
    with pytest.raises(ValueError, match="k_prior"):
        pk.korea(X, y, k_prior=[1, 2])
    with pytest.raises(ValueError, match="beta_upper"):
        pk.korea(X, y, beta_upper=-1)
    with pytest.raises(ValueError, match="no mass"):
        pk.korea(X, y, beta_prior=pm.Uniform.dist(30, 40))
    approx = pk.korea(X, y)
    with pytest.raises(ValueError, match="columns"):
        approx.predict(rng.normal(size=(3, 3)))
    with pytest.raises(ValueError, match="estimate"):
        approx.predict(X, estimate="median")
    with pytest.raises(ValueError, match="ci_prob"):
        approx.predictive_summary(X, ci_prob=1.5)


@pytest.mark.parametrize("kind", ["symmetrised", "equal", "asymmetric"])
def test_merged_fields_of_every_k_are_the_graphs(kind, rng):
    """The fields KOREA builds k by k from class counts, rows merged, are the graph's local
    fields at each k (ties in the data: duplicated points), and the merged log pseudo-likelihood
    and its derivatives are the full ones."""
    from pymc_knn.approx import _Fields

    X = np.round(rng.standard_normal((90, 2)), 1)
    y = rng.integers(0, 3, size=90)
    a = np.array([1.0, 0.7, 1.3])
    g = pk.KNNGraph(X, k_max=12, neighbours=kind)
    fields = _Fields(g, y, a)
    for k in range(1, 13):
        h_rows, y_rows, w = fields.next()
        h = pk.kernels.local_fields(*g.conditional_weights(k), y, a)
        key = np.column_stack([h, y])
        assert w.sum() == 90 and len(w) == len(np.unique(np.round(key, 9), axis=0))
        for row, label, count in zip(h_rows, y_rows, w):
            match = np.all(np.isclose(h, row, rtol=0, atol=1e-12), axis=1) & (y == label)
            assert match.sum() == count
        for beta in (0.3, 1.7):
            full = log_pl_derivatives(h, y, beta)
            merged = log_pl_derivatives(h_rows, y_rows, beta, w)
            np.testing.assert_allclose(merged, full, rtol=1e-12)


def test_a_posterior_of_k_cut_by_k_max_is_warned_about():
    """Ripley's KOREA posterior of k sits near 55: a cap at 20 cuts it (warned), the smallest
    class size (125) does not."""
    X, y, *_ = pk.datasets.load_ripley("train")
    with pytest.warns(UserWarning, match="cap cuts the posterior"):
        capped = pk.korea(X, y, k_max=20)
    assert float(capped.posterior.p_k[-1]) > 0.05
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        pk.korea(X, y, k_max=125)
        assert not pk.graphs.warn_if_capped(0.9, 125, 125, "x")
        assert not pk.graphs.warn_if_capped(0.01, 20, 125, "x")
