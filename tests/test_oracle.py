"""The enumeration oracle against itertools brute force."""

import numpy as np
import pytest
from scipy.special import logsumexp

import pymc_knn as pk
from pymc_knn.testing import (
    all_labelings,
    exact_posterior,
    label_probabilities,
    labeling_index,
    log_normaliser,
)

import brute
from conftest import small_problem


def test_labelings_and_index_agree():
    states = all_labelings(4, 3)
    assert states.shape == (81, 4)
    np.testing.assert_array_equal(labeling_index(states, 3), np.arange(81))


@pytest.mark.parametrize("G, a", [(2, None), (3, None), (3, [1.0, 0.6, 1.8])])
def test_probabilities_match_brute_force(G, a):
    X, _ = small_problem(2, n=7 if G == 2 else 6, G=G)
    for graph, param, W in [
        (pk.KNNGraph(X), 2, brute.knn_W(brute.standardise(X), 2, "symmetrised")),
        (pk.KNNGraph(X, neighbours="equal"), 3, brute.knn_W(brute.standardise(X), 3, "equal")),
        (
            pk.DistanceGraph(X, kernel="exponential"),
            1.3,
            brute.dnn_W(brute.standardise(X), 1.3, "exponential"),
        ),
    ]:
        c = graph.coupling(param)
        states, expected = brute.exact_probs(W, 1.4, G, a)
        got = label_probabilities(c, 1.4, G, class_weights=a)
        np.testing.assert_allclose(got, expected, rtol=1e-9)
        assert got.sum() == pytest.approx(1.0)
        e = np.array([brute.energy(W, s, a) for s in states])
        assert log_normaliser(c, 1.4, G, class_weights=a) == pytest.approx(logsumexp(1.4 * e))


def test_log_normaliser_at_zero_is_n_log_G():
    X, _ = small_problem(4, n=6)
    c = pk.KNNGraph(X).coupling(3)
    assert log_normaliser(c, 0.0, 3) == pytest.approx(6 * np.log(3))
    np.testing.assert_allclose(log_normaliser(c, np.array([0.0, 0.0]), 2), 6 * np.log(2))


@pytest.mark.parametrize("pseudo", [False, True])
def test_exact_posterior_matches_direct_computation(pseudo):
    X, y = small_problem(6, n=7, G=2)
    g = pk.KNNGraph(X, k_max=4)
    betas = np.linspace(0.0, 3.0, 31)
    ks = np.arange(1, 5)
    log_prior = lambda b, k: -0.5 * b - 0.1 * k  # noqa: E731
    post = exact_posterior(g, y, betas, ks, log_prior=log_prior, pseudo=pseudo)
    assert post["mass"].sum() == pytest.approx(1.0)
    assert post["mass"].dims == ("beta", "k")
    Xs = brute.standardise(X)
    direct = np.empty((betas.size, ks.size))
    for c, k in enumerate(ks):
        W = brute.knn_W(Xs, k, "symmetrised")
        for b, beta in enumerate(betas):
            if pseudo:
                ll = brute.log_pl(W + W.T, y, beta, 2)
            else:
                _, p = brute.exact_probs(W, beta, 2)
                ll = np.log(p[labeling_index(y, 2)[0]])
            direct[b, c] = ll + log_prior(beta, k)
    diff = post["log_density"].values - direct
    np.testing.assert_allclose(diff, diff.flat[0], atol=1e-9)  # equal up to the normalisation


def test_exact_posterior_over_sigma_integrates_to_one():
    X, y = small_problem(8, n=6, G=3)
    post = exact_posterior(pk.DistanceGraph(X), y, np.linspace(0, 4, 21), np.linspace(0.2, 3, 15))
    assert post["mass"].dims == ("beta", "sigma")
    assert float(post["mass"].sum()) == pytest.approx(1.0)
    assert np.all(np.isfinite(post["log_density"]))


def test_too_many_states_is_refused():
    X, _ = small_problem(0, n=23)
    with pytest.raises(ValueError, match="too many to enumerate"):
        label_probabilities(pk.KNNGraph(X).coupling(2), 1.0, 2)
