"""pm.Data for the covariates and the labels: PyMC's own data idiom."""

import numpy as np
import pymc as pm
import pytest

import pymc_knn as pk

from conftest import VM_MODE, small_problem


def model_of(X, y, data=False):
    with pm.Model() as model:
        if data:
            X = pm.Data("X", X)
            y = pm.Data("labels", y)
        beta = pm.Uniform("beta", 0, 3)
        k = pm.DiscreteUniform("k", 1, 3)
        pk.PottsKNN("y", X, beta, k, observed=y)
    return model


def sample(model):
    with model:
        return pm.sample(
            draws=30,
            tune=30,
            chains=1,
            cores=1,
            random_seed=5,
            progressbar=False,
            compute_convergence_checks=False,
        )


@pytest.fixture(scope="module")
def problem():
    return small_problem(4, n=12, G=2)


def test_a_fit_on_pm_data_is_the_fit_on_arrays(problem):
    X, y = problem
    plain_model, data_model = model_of(X, y), model_of(X, y, data=True)
    plain, data = sample(plain_model), sample(data_model)
    for name in ("beta", "k"):
        np.testing.assert_array_equal(plain.posterior[name], data.posterior[name])
    np.testing.assert_allclose(
        pk.predict_proba(data, X[:4], model=data_model).values,
        pk.predict_proba(plain, X[:4], model=plain_model).values,
    )


def test_data_changed_after_the_model_was_built_is_refused(problem):
    X, y = problem
    model = model_of(X, y, data=True)
    with model:
        pm.set_data({"X": X[:10], "labels": y[:10]})
        with pytest.raises(ValueError, match=r"pm.set_data.*build a new model"):
            pm.sample(draws=5, tune=5, chains=1, progressbar=False)
        with pytest.raises(ValueError, match=r"pm.set_data"):
            model.compile_logp()(model.initial_point())


def test_covariates_that_are_random_variables_are_refused(problem):
    X, y = problem
    with pm.Model(), pytest.raises(ValueError, match="X must be data"):
        noise = pm.Normal("noise", size=X.shape)
        pk.PottsKNN("y", X + noise, 1.0, 2, observed=y)


def hand_posterior(beta, k):
    import arviz as az

    return az.from_dict(posterior={"beta": np.asarray(beta, float)[None], "k": np.asarray(k)[None]})


def test_set_data_and_posterior_predictive_predict_new_points(problem):
    """PyMC's idiom: the label draws of new points follow their predictive given the training
    labels, draw by draw, so their frequencies estimate pk.predict_proba's mean."""
    X, y = problem
    X_new = np.random.default_rng(1).normal(size=(5, 2))
    draws = 1500
    rng = np.random.default_rng(2)
    post = hand_posterior(rng.uniform(0, 3, draws), rng.integers(1, 4, draws))
    model = model_of(X, y, data=True)
    with model:
        exact = pk.predict_proba(post, X_new).mean(("chain", "draw")).values[:, 1]
        pm.set_data({"X": X_new, "labels": np.zeros(5, dtype=int)})
        pp = pm.sample_posterior_predictive(
            post, predictions=True, random_seed=3, progressbar=False
        )
    labels = pp.predictions["y"].values
    assert labels.shape == (1, draws, 5)
    se = np.sqrt(exact * (1 - exact) / draws)
    np.testing.assert_array_less(np.abs(labels.mean(axis=(0, 1)) - exact), 4 * se + 1e-3)


def test_new_points_draw_the_same_under_the_numba_backend(problem):
    """pm.set_data's predictive draws (a third input, new points) are the C backend's, seed
    for seed, under PyTensor's numba backend."""
    X, y = problem
    X_new = np.random.default_rng(1).normal(size=(5, 2))
    rng = np.random.default_rng(2)
    post = hand_posterior(rng.uniform(0, 3, 40), rng.integers(1, 4, 40))
    model = model_of(X, y, data=True)
    with model:
        pm.set_data({"X": X_new, "labels": np.zeros(5, dtype=int)})
        labels = [
            pm.sample_posterior_predictive(
                post,
                predictions=True,
                random_seed=3,
                progressbar=False,
                compile_kwargs={"mode": mode},
            )
            .predictions["y"]
            .values
            for mode in (VM_MODE, "NUMBA")
        ]
    assert labels[0].shape == (1, 40, 5) and 0 < labels[0].mean() < 1
    np.testing.assert_array_equal(labels[0], labels[1])


def test_set_data_back_to_the_training_points_draws_fresh_fields(problem):
    X, y = problem
    model = model_of(X, y, data=True)
    post = hand_posterior([0.5, 1.0], [2, 3])
    with model:
        pm.set_data({"X": X[:4], "labels": y[:4]})
        pm.set_data({"X": X, "labels": y})
        pp = pm.sample_posterior_predictive(post, random_seed=1, progressbar=False)
    assert pp.posterior_predictive["y"].shape == (1, 2, X.shape[0])


def test_new_covariates_of_the_training_shape_are_refused_by_the_logp(problem):
    X, y = problem
    model = model_of(X, y, data=True)
    with model:
        pm.set_data({"X": X + 1.0})
        with pytest.raises(ValueError, match="covariates differ"):
            model.compile_logp()(model.initial_point())
        with pytest.raises(ValueError, match="covariates differ"):
            pk.Exchange()
