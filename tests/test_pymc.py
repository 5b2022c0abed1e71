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

from conftest import small_problem

BETA_MAX = 3.0


def knn_model(X, y, K=4):
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, BETA_MAX)
        k = pm.DiscreteUniform("k", 1, K)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    return model


def test_exchange_is_assigned_by_default_and_runs():
    X, y, *_ = pk.datasets.load_ripley("train")
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 125)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        idata = pm.sample(draws=300, tune=300, chains=1, cores=1, random_seed=1,
                          progressbar=False, compute_convergence_checks=False)
    assert {"accept", "accepted", "aux_sampler", "aux_sweeps", "aux_exact",
            "aux_energy"} <= set(idata.sample_stats)
    assert (idata.sample_stats["aux_sampler"] == "swendsen_wang").all()
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


def sample(model, step=None, **kwargs):
    kwargs = {"draws": 50, "tune": 50, "chains": 2, "cores": 1, "random_seed": 11,
              "progressbar": False, "compute_convergence_checks": False, **kwargs}
    with model:
        return pm.sample(step=step() if step else None, **kwargs)


@pytest.mark.parametrize("step", [pk.Exchange, pk.Moller, pk.PseudoLikelihoodMetropolis])
def test_same_seed_same_draws_with_one_or_two_cores(step):
    X, y = small_problem(3, n=8)
    model = knn_model(X, y)
    one = sample(model, step, cores=1)
    two = sample(model, step, cores=2)
    for name in ("beta", "k"):
        np.testing.assert_array_equal(one.posterior[name], two.posterior[name])


@pytest.mark.parametrize("step", [pk.Exchange, pk.Moller])
def test_every_chain_is_tuned_with_one_core(step):
    X, y = small_problem(3, n=8)
    idata = sample(knn_model(X, y), step, tune=300, draws=20, discard_tuned_samples=False)
    warm = idata.warmup_sample_stats
    np.testing.assert_array_equal(warm["scaling"][:, 0], 1.0)  # each chain starts afresh
    assert (warm["scaling"][:, -1] != 1.0).all()  # and is tuned
    post = idata.sample_stats
    assert (post["scaling"] == post["scaling"][:, :1]).all()  # fixed after tuning
    if step is pk.Moller:
        np.testing.assert_array_equal(warm["plug_in_beta"][0, 0], warm["plug_in_beta"][1, 0])
        assert (warm["plug_in_beta"][:, -1] != warm["plug_in_beta"][:, 0]).all()
        assert (post["plug_in_beta"] == post["plug_in_beta"][:, :1]).all()
        assert (post["plug_in_theta"] == post["plug_in_theta"][:, :1]).all()


def test_tune_false_keeps_the_scaling_fixed():
    """pm.sample sets ``step.tune`` itself; the step's own ``tune=False`` must still hold."""
    X, y = small_problem(3, n=8)
    idata = sample(knn_model(X, y), lambda: pk.Exchange(tune=False, scaling=0.7), tune=300,
                   draws=20, discard_tuned_samples=False)
    assert (idata.warmup_sample_stats["scaling"] == 0.7).all()


def test_scaling_stops_at_its_floor_with_a_warning():
    """A step whose acceptance never rises (every proposal rejected) must not tune its scaling
    to zero, which would freeze k (Møller on Ripley did); it stops at the floor and says so."""
    from pymc_knn.step_methods import SCALING_FLOOR

    X, y = small_problem(3, n=8)
    model = knn_model(X, y)
    with model:
        step = pk.Exchange()
    step._log_ratio = lambda *args: (-np.inf, step._no_aux_stats())
    with pytest.warns(UserWarning, match="smallest proposal scaling"):
        idata = sample(model, lambda: step, tune=1000, draws=20, chains=1,
                       discard_tuned_samples=False)
    scaling = idata.warmup_sample_stats["scaling"].values
    assert scaling.min() == pytest.approx(SCALING_FLOOR)
    assert scaling[0, -1] == pytest.approx(SCALING_FLOOR)


def test_moller_starts_at_the_maximum_pseudo_likelihood_plug_in():
    X, y = small_problem(3, n=8)
    with knn_model(X, y) as model:
        step = pk.Moller()
        term = model["y"].owner.op.term
    beta_hat, k_hat = step.plug_in
    best = term.log_pseudo_likelihood(y, beta_hat, k_hat)
    for k in range(1, 5):
        for b in np.linspace(0, 4, 81):
            assert term.log_pseudo_likelihood(y, b, k) <= best + 1e-6
    with model:
        assert pk.Moller(plug_in=(1.0, 2)).plug_in == (1.0, 2)
        with pytest.raises(ValueError, match="pair"):
            pk.Moller(plug_in=1.0)
        with pytest.raises(ValueError, match="k must be"):
            pk.Moller(plug_in=(1.0, 9))


def test_an_extra_parameter_is_sampled_by_nuts():
    """A Normal mean next to the Potts term: NUTS for it, Exchange for (beta, k); its conjugate
    posterior N(sum(x) / (m + 1), 1 / (m + 1)) is recovered."""
    X, y = small_problem(3, n=8)
    x = np.random.default_rng(0).normal(1.0, 1.0, size=20)
    with knn_model(X, y) as model:
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("x", mu, 1, observed=x)
    idata = sample(model, draws=1000, tune=500)
    mean, sd = x.sum() / (x.size + 1), 1 / np.sqrt(x.size + 1)
    se = float(az.mcse(idata.posterior["mu"]).to_array().item())
    assert abs(float(idata.posterior["mu"].mean()) - mean) < 4 * se
    assert abs(float(idata.posterior["mu"].std()) - sd) < 0.1 * sd
    assert "diverging" in idata.sample_stats and "aux_exact" in idata.sample_stats


def test_step_arguments_are_checked():
    X, y = small_problem(3, n=8)
    with knn_model(X, y):
        with pytest.raises(TypeError, match="sweep"):
            pk.Exchange(sweep=10)
        with pytest.raises(ValueError, match="sweeps"):
            pk.Exchange(sweeps=0)
        with pytest.raises(ValueError, match="sampler must be"):
            pk.Exchange(sampler="metropolis")
        with pytest.raises(ValueError, match="proposal_sd"):
            pk.Moller(proposal_sd=-1)
        with pytest.raises(ValueError, match="start"):
            pk.Exchange(start="zeros")


def test_a_beta_prior_past_beta_max_is_refused():
    X, y = small_problem(3, n=8)
    for prior in (lambda: pm.Uniform("beta", 0, 3), lambda: pm.HalfNormal("beta", 1)):
        with pm.Model():
            beta = prior()
            k = pm.DiscreteUniform("k", 1, 4)
            pk.PottsKNN("y", X=X, beta=beta, k=k, beta_max=2.0, observed=y)
            with pytest.raises(ValueError, match="reaches past beta_max = 2"):
                pk.Exchange()
    with pm.Model():  # inside beta_max: fine
        beta = pm.Uniform("beta", 0, 2)
        k = pm.DiscreteUniform("k", 1, 4)
        pk.PottsKNN("y", X=X, beta=beta, k=k, beta_max=2.0, observed=y)
        pk.Exchange()
    with pm.Model():  # an expression: caught at the first proposal past it
        b = pm.Normal("b", 1, 0.3)
        k = pm.DiscreteUniform("k", 1, 4)
        pk.PottsKNN("y", X=X, beta=pm.math.exp(b), k=k, beta_max=2.0, observed=y)
        with pytest.raises(ValueError, match="reaches past beta_max"):
            pm.sample(draws=200, tune=0, chains=1, progressbar=False, random_seed=1,
                      compute_convergence_checks=False)


def test_k_max_one_leaves_k_fixed():
    """A class of one point bounds k by 1: the step must not try to move k."""
    X, _ = small_problem(2, n=8)
    y = np.array([0, 0, 0, 1, 0, 0, 0, 0])
    with pm.Model():
        beta = pm.Uniform("beta", 0, BETA_MAX)
        k = pm.DiscreteUniform("k", 1, 1)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        idata = pm.sample(draws=200, tune=100, chains=1, cores=1, random_seed=1,
                          progressbar=False, compute_convergence_checks=False)
    assert np.all(idata.posterior["k"].values == 1)
    assert idata.posterior["beta"].std() > 0
