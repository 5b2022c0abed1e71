"""Checks of a fit: pk.check_convergence (R-hat and ESS against PyMC's thresholds) and the
prior bounds the steps find the posterior pressing against (pk.check_prior_bounds)."""

import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytest
from sklearn.exceptions import ConvergenceWarning

import pymc_knn as pk


def idata(**posterior):
    return az.from_dict(posterior=posterior)


def test_well_mixed_chains_pass_quietly(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.ConvergenceWarning)
        table = pk.check_convergence(idata(beta=rng.normal(size=(4, 1000))))
    assert table.loc["beta", "r_hat"] < 1.01 and table.loc["beta", "ess_bulk"] > 2000


def test_chains_that_disagree_are_named(rng):
    stuck = rng.normal(size=(4, 1000)) + np.array([[0.0], [0.0], [0.0], [3.0]])
    with pytest.warns(pk.ConvergenceWarning, match=r"k: r_hat .* > 1.01"):
        pk.check_convergence(idata(beta=rng.normal(size=(4, 1000)), k=stuck))


def test_a_slowly_mixing_chain_is_flagged_by_its_ess(rng):
    walk = np.cumsum(rng.normal(size=(4, 1000)), axis=1) * 0.01
    with pytest.warns(pk.ConvergenceWarning, match="ess_bulk"):
        pk.check_convergence(idata(beta=walk))


def test_a_point_mass_is_not_a_failure(rng):
    """glass's equal model: k = 3 in every draw of every chain; R-hat and ESS are NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.ConvergenceWarning)
        table = pk.check_convergence(
            idata(beta=rng.normal(size=(4, 1000)), k=np.full((4, 1000), 3))
        )
    assert np.isnan(table.loc["k", "r_hat"])


def test_warn_false_returns_the_table_silently(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.ConvergenceWarning)
        table = pk.check_convergence(
            idata(beta=np.cumsum(rng.normal(size=(2, 200)), axis=1)), warn=False
        )
    assert set(table.columns) >= {"r_hat", "ess_bulk", "ess_tail"}
    assert issubclass(pk.ConvergenceWarning, ConvergenceWarning)  # scikit-learn's filters apply


RIPLEY = pk.datasets.load_ripley("train")[:2]  # beta about 1.44 (sd 0.1), k about 13-17


def _fit(beta_prior, k_prior=None, sigma_prior=None, y=None, cores=1, chains=1):
    X, y0 = RIPLEY
    with pm.Model(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pk.PriorBoundWarning)
        beta = beta_prior("beta")
        if sigma_prior is None:
            k = k_prior("k")
            pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y0 if y is None else y)
        else:
            sigma = sigma_prior("sigma")
            pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, observed=y0)
        idata = pm.sample(
            draws=50,
            tune=300,
            chains=chains,
            cores=cores,
            random_seed=3,
            progressbar=False,
            compute_convergence_checks=False,
        )
    messages = [str(w.message) for w in caught if w.category is pk.PriorBoundWarning]
    return idata, messages


def wide_beta(name):
    return pm.Uniform(name, 0, 4)


def wide_k(name):
    return pm.DiscreteUniform(name, 1, 125)


@pytest.mark.parametrize(
    "beta_prior, k_prior, found",
    [
        (wide_beta, wide_k, ""),
        (lambda n: pm.Uniform(n, 0, 1.2), wide_k, "beta upper"),
        (lambda n: pm.Uniform(n, 1.6, 4), wide_k, "beta lower"),
        (wide_beta, lambda n: pm.DiscreteUniform(n, 1, 5), "k upper"),
        (wide_beta, lambda n: pm.DiscreteUniform(n, 30, 125), "k lower"),
        (lambda n: pm.TruncatedNormal(n, 1, 1, lower=0, upper=1.3), wide_k, "beta upper"),
    ],
)
def test_a_prior_bound_that_cuts_the_posterior_is_warned_about(beta_prior, k_prior, found):
    """A prior narrower than the posterior (Ripley: beta about 1.44 with sd 0.1, k 13-17) is
    named, per chain, in a PriorBoundWarning and in sample_stats; a wide one is not."""
    idata, messages = _fit(beta_prior, k_prior)
    assert set(idata.sample_stats["prior_bound"].values.ravel()) == {found}
    assert len(messages) == (1 if found else 0)
    if found:
        name, side = found.split()
        assert f"posterior of {name} presses against the {side} bound" in messages[0]
        assert pk.check_prior_bounds(idata, warn=False) == {found: [0]}


def test_a_bound_of_the_model_is_not_a_prior_bound():
    """Labels unrelated to the covariates put beta's posterior against 0, where the model (beta
    >= 0), not the prior, ends it: nothing to warn about. (Its mean is 0.28 from 2 x 1000 draws,
    sd 0.22, against 1.44 with Ripley's own labels; these 50 draws have an ESS of about 4.)"""
    y = np.random.default_rng(0).permutation(RIPLEY[1])
    idata, messages = _fit(wide_beta, wide_k, y=y)
    assert float(idata.posterior["beta"].mean()) < 0.6
    assert not messages and set(idata.sample_stats["prior_bound"].values.ravel()) == {""}


def test_sigma_against_its_prior_bound_is_warned_about():
    """Ripley's gaussian d-nn sigma is about 0.22: a prior that ends at 0.15 cuts it."""
    idata, messages = _fit(
        lambda n: pm.HalfNormal(n, 5), sigma_prior=lambda n: pm.Uniform(n, 0, 0.15)
    )
    assert len(messages) == 1 and "posterior of sigma presses against the upper" in messages[0]
    assert pk.check_prior_bounds(idata, warn=False) == {"sigma upper": [0]}


def test_bounds_of_two_parameters_are_recorded_together():
    """Both beta's prior (ends at 1.2, beta about 1.44) and k's (ends at 5, k about 13-17) cut:
    two warnings, and the stat holds both bounds."""
    idata, messages = _fit(lambda n: pm.Uniform(n, 0, 1.2), lambda n: pm.DiscreteUniform(n, 1, 5))
    assert len(messages) == 2
    assert set(idata.sample_stats["prior_bound"].values.ravel()) == {"beta upper, k upper"}
    assert pk.check_prior_bounds(idata, warn=False) == {"beta upper": [0], "k upper": [0]}


def test_a_prior_narrower_than_the_posterior_on_both_sides_is_warned_about():
    """Ripley's gaussian d-nn: beta about 1.5 (sd 0.1), sigma about 0.22 (sd 0.02). Priors far
    narrower fill evenly (a uniform's bounds lie 1.73 sds from its mean, past BOUND_SDS): the
    draws reaching both ends say so. Four warnings, and the stat holds all four bounds (48
    characters, none truncated)."""
    idata, messages = _fit(
        lambda n: pm.Uniform(n, 1.45, 1.55), sigma_prior=lambda n: pm.Uniform(n, 0.215, 0.23)
    )
    bounds = ["beta lower", "beta upper", "sigma lower", "sigma upper"]
    assert len(messages) == 4
    assert sum("they fill the prior's range" in m for m in messages) >= 2
    assert set(idata.sample_stats["prior_bound"].values.ravel()) == {", ".join(bounds)}
    assert pk.check_prior_bounds(idata, warn=False) == {b: [0] for b in bounds}


def test_the_parent_process_hears_of_the_bound_through_sample_stats():
    """With cores=2 the steps run in worker processes, whose warnings do not reach a notebook:
    check_prior_bounds raises the warning again from sample_stats, naming the chains."""
    idata, _ = _fit(lambda n: pm.Uniform(n, 0, 1.2), wide_k, cores=2, chains=2)
    with pytest.warns(pk.PriorBoundWarning, match=r"beta upper bound in chain\(s\) \[0, 1\]"):
        assert pk.check_prior_bounds(idata) == {"beta upper": [0, 1]}


def test_no_prior_bound_stat_means_nothing_found(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.PriorBoundWarning)
        assert pk.check_prior_bounds(idata(beta=rng.normal(size=(2, 10)))) == {}


def _step_with_draws(k_prior, beta_draws, k_draws, y=None):
    """An Exchange step on Ripley whose final tuning draws are given (no sampling)."""
    X, y0 = RIPLEY
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        pk.PottsKNN("y", X=X, beta=beta, k=k_prior("k"), observed=y0 if y is None else y)
        step = pk.Exchange(rng=0)
    chain = step.chain
    chain.adaptation.final_rows = np.column_stack([beta_draws, k_draws]).astype(float)
    chain.x = step.layout.to_x(model.initial_point())
    return step, chain


@pytest.mark.parametrize(
    "k_draws, found",
    [
        (np.repeat([4, 5], [95, 5]), ""),  # mean 4.05: the next value up is 5, in the prior
        (np.repeat([4, 5], [50, 50]), "k upper"),  # half the draws at the prior's top
        (np.full(100, 5), "k upper"),  # all of them
    ],
)
def test_k_is_probed_at_the_value_next_to_its_draws(k_draws, found):
    """``k ~ U{1..5}``: the probe is the value past the draws' bulk, not two values past."""
    beta = np.linspace(1.3, 1.6, k_draws.size)
    step, chain = _step_with_draws(lambda n: pm.DiscreteUniform(n, 1, 5), beta, k_draws)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        step._check_prior_bounds(chain)
    assert chain.prior_bound == found


def test_with_missing_labels_k_is_bounded_by_the_smallest_observed_class():
    """The model's bound on k is the smallest class among the observed labels (the imputed
    ones do not count): a prior up to it is not warned about when k sits at its top."""
    X, y = RIPLEY
    missing = np.flatnonzero(y == 0)[:25]
    y_masked = np.ma.masked_array(y, mask=np.isin(np.arange(y.size), missing))
    top = pk.max_k(y[~y_masked.mask])
    step, chain = _step_with_draws(
        lambda n: pm.DiscreteUniform(n, 1, top),
        np.linspace(1.3, 1.6, 50),
        np.full(50, top),
        y_masked,
    )
    assert step._model_range(1) == (1.0, float(top))
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.PriorBoundWarning)
        step._check_prior_bounds(chain)
    assert chain.prior_bound == ""


def test_a_prior_whose_bound_is_a_free_variable_is_not_probed():
    """``beta ~ U(0, b)`` with ``b`` free: where the prior ends moves with the chain, so no
    probe can say (a transform evaluated alone would draw ``b`` at random)."""
    X, y = RIPLEY
    with pm.Model(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pk.PriorBoundWarning)
        b = pm.Uniform("b", 1.2, 1.3)
        beta = pm.Uniform("beta", 0, b)
        pk.PottsKNN("y", X=X, beta=beta, k=pm.DiscreteUniform("k", 1, 125), observed=y)
        idata = pm.sample(
            draws=50,
            tune=300,
            chains=1,
            cores=1,
            random_seed=3,
            progressbar=False,
            compute_convergence_checks=False,
        )
    assert not [w for w in caught if w.category is pk.PriorBoundWarning]
    assert set(idata.sample_stats["prior_bound"].values.ravel()) == {""}


def test_a_value_is_mapped_by_its_transform_compiled_once():
    """The start, the relaxation and prior-bound checks map values of beta and sigma onto their
    transformed scale dozens of times a chain: the transform is compiled once per variable and
    shape (a graph's ``eval`` compiled anew each time, up to 250 ms), with ``eval``'s numbers."""
    from pymc_knn.step_methods._steps import _forward, _to_value

    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        sigma = pm.HalfNormal("sigma", 5)
    for rv, values in ((beta, (0.3, 1.7, 3.9)), (sigma, (0.01, 2.0, 40.0))):
        transform = model.rvs_to_transforms[rv]
        before = _forward.cache_info()
        for v in values:
            expected = transform.forward(np.asarray(v), *rv.owner.inputs).eval()
            assert _to_value(rv, transform, v) == pytest.approx(float(expected), rel=1e-12)
        after = _forward.cache_info()
        assert after.misses - before.misses == 1 and after.hits - before.hits == 2
    assert _to_value(beta, model.rvs_to_transforms[beta], 4.5) is None  # outside U(0, 4)
    assert _to_value(sigma, None, -1.0) == -1.0  # no transform: the value as it is
