"""The conventions PyMC users expect, one test each: the table of docs/conventions.md.

Small problems and short chains: these check that the conventions hold, not the statistics.
Conventions already covered elsewhere are named in the table (tests/test_pymc.py,
tests/test_plots.py, tests/test_sklearn.py).
"""

import importlib.util
import warnings

import arviz as az
import matplotlib
import numpy as np
import pymc as pm
import pytest

import pymc_knn as pk

matplotlib.use("Agg")
import matplotlib.pyplot as plt

QUIET = {"progressbar": False, "compute_convergence_checks": False}
CLASSES = ["no", "yes"]


@pytest.fixture(scope="module")
def data():
    X, y, *_ = pk.datasets.load_ripley("train")
    idx = np.random.default_rng(0).choice(len(y), 40, replace=False)
    return X[idx], y[idx]


def model_of(X, y, **term_kwargs):
    with pm.Model(coords={"point": [f"p{i}" for i in range(len(y))]}) as model:
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 10)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y, **term_kwargs)
    return model


@pytest.fixture(scope="module")
def fitted(data):
    """A fit with every group PyMC and the package return, with named dims."""
    X, y = data
    model = model_of(X, y, dims="point")
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # approximate predictive label draws
        idata = pm.sample(draws=40, tune=40, chains=2, cores=1, random_seed=1, **QUIET)
        idata.extend(pm.sample_prior_predictive(40, random_seed=2))
        pm.sample_posterior_predictive(
            idata, extend_inferencedata=True, random_seed=3, progressbar=False
        )
    pk.add_predictions(idata, X[:4], model=model, classes=CLASSES, random_seed=4)
    return model, idata


# --- named dims and coords -----------------------------------------------------------------------


def test_named_dims_and_class_coords(data, fitted):
    X, y = data
    model, idata = fitted
    assert idata.posterior["beta"].dims == ("chain", "draw")
    assert idata.observed_data["y"].dims == ("point",)
    # the training covariates follow the labels' dim and its coords
    assert idata.constant_data["y_X"].dims == ("point", "y_feature")
    assert list(idata.constant_data["point"].values) == [f"p{i}" for i in range(len(y))]
    assert idata.posterior_predictive["y"].dims == ("chain", "draw", "point")
    assert idata.predictions["y_proba"].dims == ("chain", "draw", "point", "class")
    assert list(idata.predictions["class"].values) == CLASSES
    summary = pk.predictive_summary(idata, X[:4], model=model, classes=CLASSES)
    assert summary["proba"].dims == ("point", "class")
    assert list(summary["class"].values) == CLASSES


def test_estimator_summary_has_its_classes_as_coords(data):
    X, y = data
    labels = np.array(CLASSES)[y]
    clf = pk.BayesianKNNClassifier(draws=30, tune=30, chains=1, random_seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.ConvergenceWarning)  # 30 draws
        clf.fit(X, labels)
    assert list(clf.predict_summary(X[:3])["class"].values) == CLASSES


# --- pm.sample's keyword arguments and idata_kwargs ---------------------------------------------


def test_sample_kwargs_pass_through(data):
    X, y = data
    with model_of(X, y):
        idata = pm.sample(
            draws=25,
            tune=15,
            chains=3,
            cores=1,
            random_seed=5,
            discard_tuned_samples=False,
            initvals={"beta": 1.0, "k": 3},
            exchange={"sweeps": 3},
            **QUIET,
        )
        again = pm.sample(
            draws=25,
            tune=15,
            chains=3,
            cores=1,
            random_seed=5,
            discard_tuned_samples=False,
            initvals={"beta": 1.0, "k": 3},
            exchange={"sweeps": 3},
            **QUIET,
        )
        trace = pm.sample(
            draws=10, tune=10, chains=1, random_seed=1, return_inferencedata=False, **QUIET
        )
        only_k = pm.sample(draws=10, tune=10, chains=1, random_seed=1, var_names=["k"], **QUIET)
    assert idata.posterior.sizes["chain"] == 3 and idata.posterior.sizes["draw"] == 25
    assert idata.warmup_posterior.sizes["draw"] == 15
    np.testing.assert_array_equal(idata.posterior["k"], again.posterior["k"])  # random_seed
    assert (idata.sample_stats["aux_sweeps"] == 3).all()  # exchange={...}: the step's options
    assert isinstance(trace, pm.backends.base.MultiTrace)
    assert list(only_k.posterior.data_vars) == ["k"]


def test_idata_kwargs_dims_and_coords(data):
    X, y = data
    with model_of(X, y):
        idata = pm.sample(
            draws=10,
            tune=10,
            chains=1,
            random_seed=1,
            **QUIET,
            idata_kwargs={"dims": {"y": ["obs"]}, "coords": {"obs": np.arange(40)}},
        )
    assert idata.observed_data["y"].dims == ("obs",)
    assert idata.constant_data["y_X"].dims == ("obs", "y_feature")


# --- ArviZ on every returned group ---------------------------------------------------------------

SAMPLED_GROUPS = [
    "posterior",
    "sample_stats",
    "prior",
    "prior_predictive",
    "posterior_predictive",
    "predictions",
]


@pytest.mark.parametrize("group", SAMPLED_GROUPS)
def test_arviz_works_on_every_sampled_group(fitted, group):
    _, idata = fitted
    data = idata[group]
    # sample_stats: the numeric statistics. aux_sampler, aux_start and prior_bound are strings
    # (the auxiliary sampler's name, where its chains start, the prior bounds the posterior
    # presses against) and aux_exact (tune too, where kept) are flags, to count rather than
    # summarise (like NUTS's `diverging`)
    names = None
    if group == "sample_stats":
        names = [v for v in data.data_vars if data[v].dtype.kind in "fiu"]
        strings = {"aux_sampler", "aux_start", "prior_bound", "tune", "aux_exact"}
        assert set(data.data_vars) - set(names) <= strings
    few = {"point": data["point"].values[:2]} if "point" in data.dims else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ArviZ's own (matplotlib deprecations, short chains)
        summary = az.summary(data, var_names=names, coords=few)
        assert len(summary) >= 1
        for plot in (az.plot_trace, az.plot_forest, az.plot_posterior):
            assert np.asarray(plot(data, var_names=names, coords=few)).size >= 1
            plt.close("all")


def test_observed_and_constant_data_are_plain_datasets(fitted):
    """The data groups have no (chain, draw): ArviZ's sample functions do not apply to them (as
    for any PyMC model), but they are named xarray data."""
    _, idata = fitted
    for group in ("observed_data", "constant_data", "predictions_constant_data"):
        assert "chain" not in idata[group].dims and all(idata[group].dims)


# --- model_to_graphviz ---------------------------------------------------------------------------


def test_model_to_graphviz_renders_the_term(data):
    pytest.importorskip("graphviz")
    X, y = data
    model = model_of(X, y, dims="point")
    graph = pm.model_to_graphviz(model)
    assert "PottsKNN" in graph.source and "beta" in graph.source and "point (40)" in graph.source


# --- external NUTS samplers ----------------------------------------------------------------------


@pytest.mark.parametrize("sampler", ["nutpie", "numpyro", "blackjax"])
def test_external_nuts_sampler_is_refused_clearly(data, sampler):
    X, y = data
    with model_of(X, y), pytest.raises(ValueError, match=rf"nuts_sampler='{sampler}'.*pk.Exchange"):
        pm.sample(nuts_sampler=sampler, **QUIET)


def test_external_nuts_sampler_still_works_without_a_term():
    """The check leaves models without a Potts term alone: PyMC's own route (here its error
    that nutpie is not installed)."""
    if importlib.util.find_spec("nutpie") is not None:
        pytest.skip("nutpie is installed")
    with pm.Model():
        pm.Normal("x")
        with pytest.raises(ImportError, match="nutpie"):
            pm.sample(nuts_sampler="nutpie", draws=5, tune=5, chains=1, **QUIET)


# --- progress bars -------------------------------------------------------------------------------


def test_beta_max_has_a_progress_bar(monkeypatch):
    """beta_max and mean_energy_curve draw a rich progress bar over the beta grid (in a terminal
    or notebook only), as pm.sample does; progressbar=False turns it off."""
    from pymc_knn import _progress

    shown = []

    def recording(items, total, description, enabled=True):
        shown.append((description, total, enabled))
        yield from items

    monkeypatch.setattr(_progress, "progress", recording)
    monkeypatch.setattr("pymc_knn.phase.progress", recording)
    X, y, *_ = pk.datasets.load_ripley("train")
    graph = pk.KNNGraph(X, k_max=20)
    pk.beta_max(graph, [5, 13], random_seed=1, sweeps=40, burn=10)
    pk.mean_energy_curve(graph, 5, [0.5, 1.0], sweeps=40, burn=10, progressbar=False)
    assert [d for d, _, on in shown if on] == ["beta_max, k = 5", "beta_max, k = 13"]
    assert shown[-1] == ("mean energy", 2, False)


def test_a_long_cftp_draw_has_a_progress_bar(monkeypatch):
    """pk.samplers.cftp shows a bar over its look-backs from CFTP_PROGRESS_SWEEPS on; the draw is
    the numba kernel's, bar or not, met or not."""
    from pymc_knn import samplers
    from pymc_knn.kernels import cftp_potts2

    shown = []

    def recording(items, total, description, enabled=True):
        shown.append((description, total, enabled))
        yield from items

    monkeypatch.setattr(samplers, "progress", recording)
    monkeypatch.setattr(samplers, "CFTP_PROGRESS_SWEEPS", 4)
    X, *_ = pk.datasets.load_ripley("train")
    c = pk.KNNGraph(X[:60], k_max=10).coupling(10)
    start = np.zeros(c.n, dtype=np.int64)
    for beta, max_sweeps in ((2.5, 256), (6.0, 16)):  # meets after some doublings / does not
        draw = samplers.cftp(c, beta, start, np.random.default_rng(3), max_sweeps=max_sweeps)
        quiet = samplers.cftp(
            c, beta, start, np.random.default_rng(3), max_sweeps=max_sweeps, progressbar=False
        )
        seed = int(np.random.default_rng(3).integers(0, 2**63))
        z = start.copy()
        exact, sweeps = cftp_potts2(
            c.indptr, c.indices, c.data, z, beta, np.ones(2), max_sweeps, seed
        )
        for d in (draw, quiet):
            np.testing.assert_array_equal(d.labels, z)
            assert (d.sweeps, d.exact) == (sweeps, exact)
        assert shown[-1][0] == "CFTP look-back" and shown[-1][2] is False
        assert shown[-2] == ("CFTP look-back", len(samplers.cftp_look_backs(max_sweeps)) - 2, True)
    assert draw.exact is False and quiet.sweeps == 16


def test_progress_bar_draws_in_a_terminal_only(capsys):
    from pymc_knn._progress import progress

    assert list(progress(range(5), 5, "test")) == list(range(5))
    assert capsys.readouterr().out == ""  # a captured stream is not a terminal


def test_prediction_over_many_points_has_a_progress_bar(data, fitted, monkeypatch):
    """predictive_summary and predict_proba show a bar over the points from PROGRESS_POINTS new
    points on, in at least PROGRESS_STEPS chunks; the results do not depend on it."""
    from pymc_knn import predict

    X, _ = data
    model, idata = fitted
    shown = []

    def recording(items, total, description, enabled=True):
        shown.append((description, total))
        yield from items

    monkeypatch.setattr(predict, "progress", recording)
    rng = np.random.default_rng(0)
    X_new = rng.uniform(X.min(0), X.max(0), size=(predict.PROGRESS_POINTS, 2))
    with_bar = pk.predictive_summary(idata, X_new, model=model)
    without = pk.predictive_summary(idata, X_new, model=model, progressbar=False)
    proba = pk.predict_proba(idata, X_new[:4000], model=model)  # below the threshold: no bar
    assert shown == [("predictive summary", predict.PROGRESS_STEPS)]
    for name in ("proba", "lower", "upper"):
        np.testing.assert_array_equal(with_bar[name], without[name])
    np.testing.assert_allclose(proba.mean(("chain", "draw")), with_bar["proba"][:4000])
    pk.predict_proba(idata, X_new, model=model, lazy=False)
    assert shown[-1] == ("predict_proba", predict.PROGRESS_STEPS)
    thin = idata.sel(draw=slice(0, 5))
    joint = pk.predict_proba(thin, X_new[:20], model=model, joint=True, random_seed=3)
    sizes = thin.posterior.sizes
    assert shown[-1] == ("joint prediction", sizes["chain"] * sizes["draw"])
    again = pk.predict_proba(
        thin, X_new[:20], model=model, joint=True, random_seed=3, progressbar=False
    )
    np.testing.assert_array_equal(joint.attrs["labels"], again.attrs["labels"])
