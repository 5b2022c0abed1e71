"""PyMC integration: distributions, step methods, their safety, and exactness against enumeration.

Exactness: on small problems the posterior from ``pm.sample`` is compared with the enumeration
oracle's. Draws are autocorrelated, so each posterior quantity (the mean of beta, P(k = j),
P(beta in a bin)) must lie within 4 Monte Carlo standard errors (ArviZ's ``mcse``) of its exact
value, plus 0.01 for the beta grid's quadrature.
"""

import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytest

import pymc_knn as pk
from pymc_knn.testing import exact_posterior

from conftest import small_problem

BETA_MAX = 3.0
BETAS = np.linspace(0.0, BETA_MAX, 601)


def knn_model(X, y, K=4):
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, BETA_MAX)
        k = pm.DiscreteUniform("k", 1, K)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    return model


def check_against_oracle(idata, post, param="k"):
    draws = idata.posterior
    exact_beta = float((post["mass"].sum(param) * post["beta"]).sum())
    se = float(az.mcse(draws["beta"]).to_array().item())
    assert abs(float(draws["beta"].mean()) - exact_beta) < 4 * se + 0.01, (float(draws["beta"].mean()), exact_beta, se)
    if param == "k":
        for j, p in zip(post["k"].values, post["mass"].sum("beta").values):
            ind = (draws["k"] == j).astype(float)
            se = float(az.mcse(ind).to_array().item()) if 0 < float(ind.mean()) < 1 else 0.0
            assert abs(float(ind.mean()) - p) < 4 * se + 0.01, (j, float(ind.mean()), p, se)
    cdf = post["mass"].sum(param).cumsum("beta").values
    for q in (1.0, 1.5, 2.0):
        exact = cdf[np.searchsorted(BETAS, q)]
        ind = (draws["beta"] <= q).astype(float)
        se = float(az.mcse(ind).to_array().item())
        assert abs(float(ind.mean()) - exact) < 4 * se + 0.01, (q, float(ind.mean()), exact, se)


@pytest.mark.slow
@pytest.mark.parametrize("G, seed", [(2, 3), (3, 4)])
def test_exchange_matches_exact_posterior_knn(G, seed):
    X, y = small_problem(seed, n=8 if G == 2 else 7, G=G)
    model = knn_model(X, y, K=2 if G == 3 else 4)
    sampler = "enumerate"  # exact at any beta; CFTP stalls near beta = 3 on these tiny graphs
    with model:
        idata = pm.sample(draws=4000, tune=1000, chains=2, cores=1, random_seed=7,
                          step=pk.Exchange(sampler=sampler), progressbar=False,
                          compute_convergence_checks=False)
    assert bool(idata.sample_stats["aux_exact"].all())
    post = exact_posterior(model["y"].owner.op.term.graph, y, BETAS,
                           np.arange(1, (2 if G == 3 else 4) + 1))
    check_against_oracle(idata, post)


@pytest.mark.slow
def test_pseudo_likelihood_metropolis_matches_pseudo_posterior():
    X, y = small_problem(5, n=9, G=2)
    model = knn_model(X, y)
    with model:
        idata = pm.sample(draws=5000, tune=1000, chains=2, cores=1, random_seed=3,
                          step=pk.PseudoLikelihoodMetropolis(), progressbar=False,
                          compute_convergence_checks=False)
    post = exact_posterior(model["y"].owner.op.term.graph, y, BETAS, np.arange(1, 5), pseudo=True)
    check_against_oracle(idata, post)


def test_exchange_is_assigned_by_default_and_runs():
    X, y, *_ = pk.datasets.load_ripley("train")
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 125)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        idata = pm.sample(draws=300, tune=300, chains=1, cores=1, random_seed=1,
                          progressbar=False, compute_convergence_checks=False)
    assert {"accept", "accepted", "aux_sweeps", "aux_exact", "aux_energy"} <= set(idata.sample_stats)
    assert 0.5 < float(idata.posterior["beta"].mean()) < 3.0


def test_same_seed_same_draws():
    X, y = small_problem(3, n=8)
    runs = []
    for _ in range(2):
        with knn_model(X, y):
            runs.append(pm.sample(draws=50, tune=50, chains=2, cores=1, random_seed=11,
                                  progressbar=False, compute_convergence_checks=False))
    np.testing.assert_array_equal(runs[0].posterior["beta"], runs[1].posterior["beta"])
    np.testing.assert_array_equal(runs[0].posterior["k"], runs[1].posterior["k"])


@pytest.mark.parametrize("step", [pm.NUTS, pm.Metropolis, pm.Slice])
def test_pymc_steps_are_refused_for_potts_parameters(step):
    X, y = small_problem(3, n=8)
    with knn_model(X, y) as model:
        with pytest.raises(ValueError, match="intractable.*pk.Exchange"):
            pm.sample(draws=10, tune=10, chains=1, step=step([model["beta"]]), progressbar=False)


def test_log_likelihood_leaves_the_potts_term_out():
    X, y = small_problem(3, n=8)
    with knn_model(X, y):
        with pytest.warns(UserWarning, match="left out"):
            idata = pm.sample(draws=20, tune=20, chains=1, random_seed=1, progressbar=False,
                              compute_convergence_checks=False,
                              idata_kwargs={"log_likelihood": True})
    assert "log_likelihood" not in idata.groups() or "y" not in idata.log_likelihood


def test_prior_and_posterior_predictive_give_label_vectors():
    X, y = small_problem(3, n=8)
    with knn_model(X, y):
        prior = pm.sample_prior_predictive(draws=20, random_seed=2)
    labels = prior.prior_predictive["y"].values
    assert labels.shape == (1, 20, 8) and set(np.unique(labels)) <= {0, 1}


def test_bad_model_input():
    X, y = small_problem(3, n=8)
    with pm.Model():
        with pytest.raises(ValueError, match="exceeds the smallest observed class size"):
            pk.PottsKNN("y", X=X, beta=1.0, k=2, k_max=7, observed=y)
        with pytest.raises(ValueError, match="single class"):
            pk.PottsKNN("z", X=X, beta=1.0, k=2, observed=np.zeros(8, int))
        with pytest.raises(ValueError, match="strings"):
            pk.PottsKNN("w", X=X, beta=1.0, k=2, observed=np.array(list("abababab")))
    with pm.Model():
        beta = pm.Uniform("beta", 0, 3)
        k = pm.DiscreteUniform("k", 1, 7)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        with pytest.raises(ValueError, match="allows k = 5 > k_max = 4"):
            pk.Exchange()
