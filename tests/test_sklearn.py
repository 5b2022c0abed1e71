"""The scikit-learn estimator: the API checks, pipelines, labels, accuracy and bad input."""

import multiprocessing
import pickle
import warnings

import cloudpickle
import numpy as np
import pytest
from joblib import parallel_config
from scipy.spatial.distance import pdist, squareform
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

import pymc_knn as pk
from pymc_knn.sklearn import BayesianKNNClassifier

FAST = dict(method="pseudo", draws=50, tune=50, chains=1, random_seed=0)
"""Settings of the check_estimator runs: a few seconds for the whole suite."""


@pytest.fixture(scope="module")
def ripley():
    return pk.datasets.load_ripley("train")


@parametrize_with_checks([BayesianKNNClassifier(**FAST), BayesianKNNClassifier(method="korea")])
def test_sklearn_api(estimator, check):
    """scikit-learn's full estimator check suite (about 10 s with the pseudo-likelihood)."""
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(
    [
        BayesianKNNClassifier(**{**FAST, "model": "equal", "method": "moller"}),
        BayesianKNNClassifier(**{**FAST, "method": "exchange"}),
        BayesianKNNClassifier(**{**FAST, "model": "dnn-gaussian"}),
        BayesianKNNClassifier(**{**FAST, "model": "dnn-ball", "method": "exchange"}),
        BayesianKNNClassifier(**{**FAST, "model": "dnn-exponential"}),
    ]
)
def test_sklearn_api_other_models(estimator, check):
    """The same suite for the other models and step methods."""
    check(estimator)


def test_non_deterministic_tag_follows_random_seed():
    assert get_tags(BayesianKNNClassifier()).non_deterministic
    assert not get_tags(BayesianKNNClassifier(random_seed=1)).non_deterministic


def test_cross_val_score(ripley):
    clf = BayesianKNNClassifier(method="pseudo", draws=200, tune=200, chains=1, random_seed=0)
    scores = cross_val_score(clf, ripley.X, ripley.y, cv=3)
    assert scores.shape == (3,)
    assert np.all(scores > 0.8)


def test_pipeline_with_scaler_equals_own_standardisation(ripley):
    """StandardScaler + standardize=False builds the same graph as standardize=True."""
    kw = dict(method="exchange", draws=100, tune=100, chains=1, random_seed=2)
    X_new = pk.datasets.load_ripley("test").X[:200]
    pipe = make_pipeline(StandardScaler(), BayesianKNNClassifier(standardize=False, **kw))
    own = BayesianKNNClassifier(standardize=True, **kw)
    pipe.fit(ripley.X, ripley.y)
    own.fit(ripley.X, ripley.y)
    np.testing.assert_allclose(pipe.predict_proba(X_new), own.predict_proba(X_new), atol=1e-12)
    assert cross_val_score(pipe, ripley.X, ripley.y, cv=2).min() > 0.8


def test_string_labels_round_trip(ripley):
    """Labels of any type: classes_ sorted, predictions in the original labels, and the
    columns of predict_proba in the order of classes_."""
    X, y = ripley.X, ripley.y
    kw = dict(method="pseudo", draws=100, tune=100, chains=1, random_seed=4)
    ints = BayesianKNNClassifier(**kw).fit(X, y)
    # "yes" for class 0: classes_ = ["no", "yes"] puts class 1 first. The pseudo-likelihood is
    # invariant under relabelling, so the chain is the same and the columns swap exactly.
    words = BayesianKNNClassifier(**kw).fit(X, np.array(["yes", "no"])[y])
    assert words.classes_.tolist() == ["no", "yes"]
    np.testing.assert_allclose(words.predict_proba(X), ints.predict_proba(X)[:, ::-1], atol=1e-12)
    pred = words.predict(X)
    assert set(pred) <= {"no", "yes"}
    # a tie goes to the first of classes_, as in scikit-learn, which the relabelling swaps
    proba, int_pred = words.predict_proba(X), ints.predict(X)
    tied = proba[:, 0] == proba[:, 1]
    np.testing.assert_array_equal(pred[~tied], np.array(["yes", "no"])[int_pred][~tied])
    assert (pred[tied] == "no").all() and (int_pred[tied] == 0).all()
    summary = words.predict_summary(X[:5])
    assert summary["class"].values.tolist() == ["no", "yes"]
    assert set(summary["bayes_class"].values) <= {"no", "yes"}


def test_predict_summary(ripley):
    clf = BayesianKNNClassifier(
        method="pseudo", draws=100, tune=100, chains=1, random_seed=0, ci_prob=0.9
    ).fit(ripley.X, ripley.y)
    s = clf.predict_summary(ripley.X[:50])
    np.testing.assert_array_equal(s["proba"].values, clf.predict_proba(ripley.X[:50]))
    assert s.attrs["ci_prob"] == 0.9
    assert np.all(s["lower"] <= s["proba"] + 1e-12) and np.all(s["proba"] <= s["upper"] + 1e-12)
    np.testing.assert_array_equal(s["bayes_class"].values, clf.predict(ripley.X[:50]))


def test_ripley_test_error_matches_the_paper(ripley):
    """Cucala et al. (2009) report 0.084-0.087 on Ripley's test set (raw covariates).

    Measured here (draws 1000 or 5000, seeds 1-3): 0.091-0.094, with k about 15 and beta about
    1.46; the same tolerance as tests/test_reproduce.py. About 2.5 s.
    """
    Xt, yt, *_ = pk.datasets.load_ripley("test")
    clf = BayesianKNNClassifier(
        method="exchange", standardize=False, draws=5000, tune=1000, random_seed=1
    ).fit(ripley.X, ripley.y)
    error = 1 - clf.score(Xt, yt)
    assert abs(error - 0.085) < 0.015
    assert 1.3 < float(clf.idata_.posterior["beta"].mean()) < 1.6


def test_same_seed_same_predictions(ripley):
    kw = dict(method="exchange", draws=100, tune=100, chains=2)
    X = ripley.X[::2]
    a = BayesianKNNClassifier(random_seed=5, **kw).fit(ripley.X, ripley.y).predict_proba(X)
    b = BayesianKNNClassifier(random_seed=5, **kw).fit(ripley.X, ripley.y).predict_proba(X)
    c = BayesianKNNClassifier(random_seed=6, **kw).fit(ripley.X, ripley.y).predict_proba(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("model", ["symmetrised", "dnn-gaussian"])
@pytest.mark.parametrize("pickler", [pickle, cloudpickle])  # cloudpickle: what loky sends
def test_pickle_rebuilds_the_model(ripley, model, pickler):
    clf = BayesianKNNClassifier(model=model, **FAST).fit(ripley.X, ripley.y)
    back = pickler.loads(pickler.dumps(clf))
    assert back.get_params() == clf.get_params()
    np.testing.assert_array_equal(back.predict_proba(ripley.X), clf.predict_proba(ripley.X))
    assert back.model_ is not clf.model_


def test_chain_processes_inside_joblib_workers(monkeypatch):
    """In a worker of joblib's loky backend (scikit-learn's n_jobs) the default
    multiprocessing context is loky's, which cannot send PyMC's shared arrays: pm.sample gets
    the platform's standard start method instead."""
    clf = BayesianKNNClassifier(cores=2, chains=2)
    assert clf._mp_ctx() is None  # a plain process: PyMC's own choice
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "loky")
    assert clf._mp_ctx() == multiprocessing.get_all_start_methods()[0]
    assert BayesianKNNClassifier(cores=2, chains=2, mp_ctx="spawn")._mp_ctx() == "spawn"
    assert BayesianKNNClassifier(cores=1, chains=2)._mp_ctx() is None  # no chain processes


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 50 draws
def test_cross_val_score_with_n_jobs_and_chain_processes():
    """cross_val_score(n_jobs=2) with cores=2: chain processes inside loky workers, every input
    a read-only memory map; the same scores as n_jobs=1. About 30-60 s (worker start-up)."""
    X, y, *_ = pk.datasets.load_iris()
    clf = BayesianKNNClassifier(
        method="pseudo", draws=50, tune=50, chains=2, cores=2, random_seed=0
    )
    with parallel_config(max_nbytes=1):
        parallel = cross_val_score(clf, X, y, cv=3, n_jobs=2)
    np.testing.assert_array_equal(parallel, cross_val_score(clf, X, y, cv=3, n_jobs=1))
    assert parallel.min() > 0.8


@pytest.mark.parametrize("kernel", ["gaussian", "ball", "exponential"])
@pytest.mark.parametrize("standardize", [True, False])
def test_default_sigma_upper(ripley, kernel, standardize):
    X = ripley.X
    clf = BayesianKNNClassifier(model=f"dnn-{kernel}", standardize=standardize, **FAST)
    clf.fit(X, ripley.y)
    Z = (X - X.mean(0)) / X.std(0) if standardize else X
    D = squareform(pdist(Z))
    if kernel == "exponential":
        np.fill_diagonal(D, np.inf)
        expected = 10 / np.median(D.min(axis=1))
    else:
        expected = D.max()
    assert clf.prior_upper_ == pytest.approx(expected)
    assert clf.model_["sigma"].owner.inputs[-1].eval() == pytest.approx(expected)


def test_priors_follow_the_parameters(ripley):
    clf = BayesianKNNClassifier(k_max=40, beta_upper=3.0, **FAST).fit(ripley.X, ripley.y)
    assert clf.prior_upper_ == 40
    assert int(clf.idata_.posterior["k"].max()) <= 40
    assert float(clf.idata_.posterior["beta"].max()) < 3.0
    default = BayesianKNNClassifier(**FAST).fit(ripley.X, ripley.y)
    assert default.prior_upper_ == pk.max_k(ripley.y) == 125
    dnn = BayesianKNNClassifier(model="dnn-ball", sigma_upper=0.7, **FAST).fit(ripley.X, ripley.y)
    assert dnn.prior_upper_ == 0.7
    assert float(dnn.idata_.posterior["sigma"].max()) < 0.7


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 100 draws
@pytest.mark.parametrize("settings, found", [({"beta_upper": 1.2}, "beta_upper=1.2"), ({}, None)])
def test_a_prior_bound_that_cuts_the_posterior_names_its_parameter(ripley, settings, found):
    """Ripley's beta is about 1.44 (sd 0.1): beta_upper=1.2 cuts it. fit warns once, naming
    the estimator's parameter (the step's own warning, per chain, is not repeated)."""
    clf = BayesianKNNClassifier(draws=100, tune=300, chains=2, random_seed=0, **settings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(ripley.X, ripley.y)
    messages = [str(w.message) for w in caught if w.category is pk.PriorBoundWarning]
    if found is None:
        assert clf.prior_bounds_ == {} and not messages
    else:
        assert clf.prior_bounds_ == {"beta upper": [0, 1]}
        assert len(messages) == 1 and f"set by {found} (chains [0, 1])" in messages[0]


def test_smallest_class_of_one_fixes_k():
    """k_max = 1 leaves nothing to sample for k: it is fixed at 1."""
    X = np.array([[0.0, 0.0], [0.1, 0.0], [0.2, 0.1], [1.0, 1.0], [0.05, 0.1]])
    y = np.array([0, 0, 0, 1, 0])
    clf = BayesianKNNClassifier(method="exchange", draws=50, tune=50, chains=1, random_seed=0)
    clf.fit(X, y)
    assert clf.prior_upper_ == 1
    assert "k" not in clf.idata_.posterior
    np.testing.assert_array_equal(clf.predict([[0.0, 0.05], [1.0, 0.95]]), [0, 1])


def test_a_posterior_of_k_at_a_low_k_max_is_warned_about(ripley, monkeypatch):
    """The estimator warns when the posterior of k piles up at a k_max below the smallest class
    (pm.sample replaced by draws with k at 3 or spread below it: the wiring, not the sampler)."""
    import warnings

    import arviz as az
    import pymc as pm

    rng = np.random.default_rng(0)
    for k, warns in ((np.full((2, 50), 3), True), (rng.integers(1, 3, (2, 50)), False)):
        draws = {"beta": 1.4 + 0.1 * rng.standard_normal((2, 50)), "k": k}
        monkeypatch.setattr(pm, "sample", lambda *a, draws=draws, **kw: az.from_dict(draws))
        clf = BayesianKNNClassifier(method="exchange", k_max=3, random_seed=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.fit(ripley.X, ripley.y)
        assert any("cap cuts the posterior" in str(w.message) for w in caught) == warns


def test_fit_reports_r_hat_and_ess_and_warns_when_short(ripley, monkeypatch):
    """``convergence_`` holds R-hat and bulk and tail ESS of beta and k; fit warns when a chain
    disagrees (pm.sample replaced by draws: the wiring, not the sampler)."""
    import arviz as az
    import pymc as pm

    rng = np.random.default_rng(1)
    for shift, warns in ((0.0, False), (1.0, True)):
        beta = 1.4 + 0.1 * rng.standard_normal((4, 500))
        beta[3] += shift  # the fourth chain elsewhere
        draws = {"beta": beta, "k": rng.integers(3, 9, (4, 500))}
        monkeypatch.setattr(pm, "sample", lambda *a, draws=draws, **kw: az.from_dict(draws))
        clf = BayesianKNNClassifier(method="exchange", random_seed=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.fit(ripley.X, ripley.y)
        table = clf.convergence_
        assert list(table.index) == ["beta", "k"]
        assert {"r_hat", "ess_bulk", "ess_tail"} <= set(table.columns)
        rhat = float(az.rhat(clf.idata_)["beta"])
        assert table.loc["beta", "r_hat"] == pytest.approx(rhat)
        assert (rhat > 1.01) == warns
        messages = [str(w.message) for w in caught if w.category is pk.ConvergenceWarning]
        assert bool(messages) == warns
        assert not warns or "beta: r_hat" in messages[0]


def test_korea_method_is_pk_korea(ripley):
    """method="korea": pk.korea with the estimator's uniform prior on beta, labels of any type."""
    import pymc as pm

    labels = np.array(["no", "yes"])[ripley.y]
    clf = BayesianKNNClassifier(method="korea", model="equal", standardize=False).fit(
        ripley.X, labels
    )
    approx = pk.korea(
        ripley.X,
        ripley.y,
        neighbours="equal",
        standardize=False,
        beta_prior=pm.Uniform.dist(0, 4),
        beta_upper=4.0,
    )
    X_new = ripley.X[:20] + 0.01
    np.testing.assert_allclose(clf.predict_proba(X_new), approx.predict_proba(X_new))
    assert list(clf.predict_summary(X_new)["class"].values) == ["no", "yes"]
    assert clf.korea_.k_map == approx.k_map
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(clf)).predict_proba(X_new), clf.predict_proba(X_new)
    )
    with pytest.raises(ValueError, match="method='korea' approximates the kNN models"):
        BayesianKNNClassifier(method="korea", model="dnn-ball").fit(ripley.X, ripley.y)
