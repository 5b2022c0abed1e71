"""Plots: the predictive map draws the zones of a constructed case; the posterior of k."""

import arviz as az
import matplotlib
import numpy as np
import pymc as pm
import pytest

import pymc_knn as pk
from pymc_knn.plots import plot_k_posterior, plot_predictive_map, predictive_grid

matplotlib.use("Agg")


@pytest.fixture
def two_clusters():
    """Two clusters of training points; posterior draws of beta spread over (0.1, 3), k = 3."""
    r = np.random.default_rng(0)
    X = np.vstack([r.normal([-1, 0], 0.3, (8, 2)), r.normal([1, 0], 0.3, (8, 2))])
    y = np.repeat([0, 1], 8)
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 8)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    idata = az.from_dict(
        posterior={"beta": r.uniform(0.1, 3.0, (2, 100)), "k": np.full((2, 100), 3)}
    )
    return model, idata


def test_map_draws_the_zones_of_the_summary(two_clusters):
    model, idata = two_clusters
    axes = plot_predictive_map(idata, model=model, grid_size=30, feature_names=["a", "b"])
    mesh = axes[1].collections[0]
    drawn = np.asarray(mesh.get_array()).reshape(30, 30)
    grid = predictive_grid(idata, model=model, grid_size=30)
    points = np.column_stack(
        [
            grid["x0"].values[None, :].repeat(30, 0).ravel(),
            grid["x1"].values[:, None].repeat(30, 1).ravel(),
        ]
    )
    # independent path: per-draw probabilities, numpy quantiles, the 0.5 rule
    proba = pk.predict_proba(idata, points, model=model).values.reshape(-1, 900, 2)[..., 1]
    lo, hi = np.quantile(proba, [0.025, 0.975], axis=0, method="inverted_cdf")
    expected = np.where((lo <= 0.5) & (hi >= 0.5), 2, (proba.mean(0) > 0.5).astype(int))
    np.testing.assert_array_equal(drawn, expected.reshape(30, 30))
    assert set(np.unique(drawn)) == {0, 1, 2}, "the case must show all three zones"
    # the left of the plane is sure class 0, the right sure class 1
    assert drawn[15, 0] == 0 and drawn[15, -1] == 1
    assert [t.get_text() for t in axes[1].get_legend().get_texts()] == [
        "sure: 0",
        "sure: 1",
        "uncertain",
    ]
    assert axes[0].get_xlabel() == "a"


def test_map_of_a_constant_covariate_has_an_area():
    r = np.random.default_rng(2)
    X = np.column_stack([r.normal(size=12), np.full(12, 5.0)])
    y = np.arange(12) % 2
    with pm.Model() as model:
        pk.PottsKNN(
            "y", X=X, beta=pm.Uniform("beta", 0, 2), k=pm.DiscreteUniform("k", 1, 5), observed=y
        )
    idata = az.from_dict(posterior={"beta": np.ones((1, 3)), "k": np.full((1, 3), 2)})
    grid = predictive_grid(idata, model=model, grid_size=10)
    assert grid["x1"].values.min() < 5.0 < grid["x1"].values.max()
    plot_predictive_map(idata, model=model, grid_size=10)


def test_k_posterior_bars(two_clusters):
    _, idata = two_clusters
    idata.posterior["k"][0, :30] = 5
    ax = plot_k_posterior(idata)
    heights = {round(p.get_x() + p.get_width() / 2): p.get_height() for p in ax.patches}
    assert heights == pytest.approx({3: 170 / 200, 5: 30 / 200})
    with pytest.raises(ValueError, match="no posterior draws of 'sigma'"):
        plot_k_posterior(idata, "sigma")
    with pytest.raises(ValueError, match="integer parameter"):
        plot_k_posterior(idata, "beta")


def test_arviz_plots_work_on_sampled_idata():
    X, y, *_ = pk.datasets.load_ripley("train")
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 125)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        idata = pm.sample(
            200,
            tune=100,
            chains=2,
            cores=1,
            random_seed=3,
            progressbar=False,
            compute_convergence_checks=False,
        )
    for plot in (az.plot_trace, az.plot_forest, az.plot_rank):
        assert np.asarray(plot(idata, var_names=["beta", "k"])).size >= 1
    assert set(az.summary(idata).index) == {"beta", "k"}


def test_map_bad_arguments(two_clusters):
    model, idata = two_clusters
    with pytest.raises(ValueError, match="class_index must be in 0..1"):
        plot_predictive_map(idata, model=model, grid_size=5, class_index=2)
    with pytest.raises(ValueError, match="grid_size"):
        predictive_grid(idata, model=model, grid_size=1)
