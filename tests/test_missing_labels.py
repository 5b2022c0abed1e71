"""Observed labels with missing values: imputed by PottsGibbs, never left to NUTS.

Exactness against the enumeration oracle is in test_exactness.py (slow); here, the routes.
"""

import numpy as np
import pymc as pm
import pytest

import pymc_knn as pk
from pymc_knn.distributions import potts_terms, term_name

from conftest import small_problem

pytestmark = pytest.mark.filterwarnings("ignore::pymc.ImputationWarning")


def masked(y, sites):
    return np.ma.masked_array(y, mask=np.isin(np.arange(y.size), sites))


def knn_model(X, observed, K=3):
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 3)
        k = pm.DiscreteUniform("k", 1, K)
        pk.PottsKNN("y", X, beta, k, observed=observed)
    return model


def sample(model, **kwargs):
    kwargs = {
        "draws": 30,
        "tune": 30,
        "chains": 1,
        "cores": 1,
        "random_seed": 3,
        "progressbar": False,
        "compute_convergence_checks": False,
        **kwargs,
    }
    with model:
        return pm.sample(**kwargs)


@pytest.fixture(scope="module")
def problem():
    X, y = small_problem(2, n=12, G=2)
    return X, y, [int(np.flatnonzero(y == 0)[0]), int(np.flatnonzero(y == 1)[0])]


@pytest.mark.parametrize("how", ["masked", "nan"])
def test_missing_labels_get_potts_gibbs_and_the_parameters_exchange(problem, how):
    X, y, sites = problem
    if how == "masked":
        observed = masked(y, sites)
    else:
        observed = y.astype(float)
        observed[sites] = np.nan
    model = knn_model(X, observed)
    [term] = potts_terms(model)
    assert term_name(term) == "y"
    with model:
        _, selected = pm.sampling.mcmc.assign_step_methods(model)
    kinds = {cls.__name__: [v.name for v in vars] for cls, vars in selected.items()}
    assert kinds == {"Exchange": ["beta_interval__", "k"], "PottsGibbs": ["y_unobserved"]}


def test_imputed_labels_are_valid_and_reproducible(problem):
    X, y, sites = problem
    model = knn_model(X, masked(y, sites))
    a = sample(model)
    b = sample(model)
    draws = a.posterior["y_unobserved"].values
    assert draws.shape == (1, 30, 2)
    assert set(np.unique(draws)) <= {0, 1}
    np.testing.assert_array_equal(draws, b.posterior["y_unobserved"].values)
    np.testing.assert_array_equal(a.posterior["beta"].values, b.posterior["beta"].values)
    assert "label_changes" in a.sample_stats


def test_imputed_proba_from_the_draws_and_prediction_refused(problem, tmp_path):
    X, y, sites = problem
    model = knn_model(X, masked(y, sites))
    idata = sample(model)
    proba = pk.imputed_proba(idata, classes=["a", "b"])
    assert proba.dims == ("point", "class")
    np.testing.assert_array_equal(proba["point"], sites)
    np.testing.assert_allclose(proba.sum("class"), 1.0)
    draws = idata.posterior["y_unobserved"].values.reshape(-1, 2)
    np.testing.assert_allclose(proba.sel({"class": "b"}), (draws == 1).mean(axis=0))
    with model, pytest.raises(ValueError, match="2 missing training labels.*imputed_proba"):
        pk.predict_proba(idata, X[:3])
    path = tmp_path / "fit.nc"
    idata.to_netcdf(path)
    import arviz as az

    reloaded = az.from_netcdf(path)
    np.testing.assert_allclose(pk.imputed_proba(reloaded), proba)
    with pytest.raises(ValueError, match="missing training labels"):
        pk.predict_proba(reloaded, X[:3])


def test_imputed_proba_of_a_fit_without_missing_labels(problem):
    X, y, _ = problem
    idata = sample(knn_model(X, y))
    with pytest.raises(ValueError, match="no missing labels"):
        pk.imputed_proba(idata)


@pytest.mark.parametrize(
    "observed, match",
    [
        (lambda y: np.ma.masked_array(y, mask=np.ones(y.size, bool)), "every observed label"),
        (lambda y: masked(y, np.flatnonzero(y == 1)), "single class"),
    ],
)
def test_bad_missing_labels(problem, observed, match):
    X, y, _ = problem
    with pytest.raises(ValueError, match=match):
        knn_model(X, observed(y))


def test_k_max_counts_the_observed_labels_only(problem):
    X, y, sites = problem
    smallest = int(np.bincount(np.delete(y, sites)).min())
    with pytest.raises(ValueError, match=f"smallest observed class size \\({smallest}\\)"):
        with pm.Model():
            pk.PottsKNN("y", X, 1.0, 1, k_max=smallest + 1, observed=masked(y, sites))


def test_potts_gibbs_refuses_other_variables(problem):
    X, y, _ = problem
    with knn_model(X, y) as model, pytest.raises(ValueError, match="missing labels of one"):
        pk.PottsGibbs([model["beta"]])
