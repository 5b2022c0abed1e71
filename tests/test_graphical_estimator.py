"""GraphicalPredictiveClassifier: scikit-learn API, exactness against enumeration, bad input."""

import numpy as np
import pytest
from scipy import stats
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import pymc_knn as pk
from pymc_knn.graphical import (
    GraphicalPredictiveClassifier,
    bma_log_predictive,
    class_hyper,
    exact_graph_posterior,
    graph_log_predictive,
)
from pymc_knn.graphical.decomposable import adjacency_from_matrix

FAST = {"n_particles": 5, "n_sweeps": 20, "random_seed": 0}


@parametrize_with_checks(
    [
        GraphicalPredictiveClassifier(**FAST),
        GraphicalPredictiveClassifier(kernel="simplicial", **FAST),
        GraphicalPredictiveClassifier("complete"),
    ]
)
def test_sklearn_api(estimator, check):
    """scikit-learn's estimator checks, with the graph sampled and with the complete graph."""
    check(estimator)


def _two_class_data(p, n, seed):
    r = np.random.default_rng(seed)
    A = np.eye(p) + np.diag(np.full(p - 1, 0.9), 1)
    B = np.eye(p) + np.diag(np.full(p - 2, -0.7), 2)
    X = np.vstack([r.normal(size=(n, p)) @ A, r.normal(size=(n, p)) @ B + 1.0])
    y = np.repeat(["first", "second"], n)
    return X, y


def _exact_proba(X, y, X_new, classes):
    """Class probabilities from the exact (enumerated) graph posterior of every class."""
    scores = []
    for c in classes:
        hyper = class_hyper(X[y == c])
        graphs, probs = exact_graph_posterior(hyper)
        prior = np.log(((y == c).sum() + 1) / (y.size + classes.size))
        scores.append(bma_log_predictive(hyper, graphs, probs, X_new) + prior)
    scores = np.array(scores).T
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


KERNELS = pytest.mark.parametrize("kernel", ["simplicial", "christmas_tree"])


@KERNELS
def test_bma_predictive_p4_synthetic(kernel):
    """p = 4: the sampled BMA class probabilities are within 0.01 of the enumerated ones."""
    X, y = _two_class_data(4, 25, 1)
    X_new = _two_class_data(4, 20, 2)[0]
    clf = GraphicalPredictiveClassifier(
        n_particles=10, n_sweeps=20_000, burn_in=200, kernel=kernel, random_seed=3
    ).fit(X, y)
    exact = _exact_proba(X, y, X_new, clf.classes_)
    assert np.abs(clf.predict_proba(X_new) - exact).max() <= 0.01
    assert 0.02 < np.abs(exact - exact.round()).max()  # not all probabilities are 0 or 1


@pytest.mark.slow
@KERNELS
def test_bma_predictive_p5_synthetic(kernel):
    """p = 5 (822 graphs per class): sampled BMA class probabilities within 0.01 of exact."""
    X, y = _two_class_data(5, 30, 4)
    X_new = _two_class_data(5, 20, 5)[0]
    clf = GraphicalPredictiveClassifier(
        n_particles=20, n_sweeps=60_000, burn_in=500, kernel=kernel, random_seed=6
    ).fit(X, y)
    exact = _exact_proba(X, y, X_new, clf.classes_)
    assert np.abs(clf.predict_proba(X_new) - exact).max() <= 0.01


@pytest.mark.slow
@KERNELS
def test_bma_predictive_iris(kernel):
    """Iris (p = 4, three species): sampled BMA class probabilities within 0.01 of exact."""
    data = pk.datasets.load_iris()
    X, y = data.X, np.asarray(data.class_names)[data.y]
    clf = GraphicalPredictiveClassifier(
        n_particles=20, n_sweeps=30_000, burn_in=500, kernel=kernel, random_seed=7
    ).fit(X, y)
    exact = _exact_proba(X, y, X, clf.classes_)
    assert np.abs(clf.predict_proba(X) - exact).max() <= 0.01
    assert (clf.predict(X) == y).mean() > 0.95


def test_complete_graph_is_the_normal_inverse_wishart_predictive():
    """graph="complete": each class's predictive is one multivariate t (Bernardo and Smith)."""
    X, y = _two_class_data(3, 15, 8)
    X_new = _two_class_data(3, 5, 9)[0]
    clf = GraphicalPredictiveClassifier("complete", nu=2.0, delta=3.0).fit(X, y)
    scores = []
    for c in clf.classes_:
        Xc = X[y == c]
        n, p = Xc.shape
        xbar = Xc.mean(axis=0)
        phi_post = np.eye(p) + (Xc - xbar).T @ (Xc - xbar)
        df = 3.0 + p - 1 + n - p + 1  # Wishart df (delta + p - 1 + n) minus p - 1
        shape = phi_post * (2.0 + n + 1) / ((2.0 + n) * df)
        prior = np.log((n + 1) / (y.size + 2))
        scores.append(stats.multivariate_t(loc=xbar, shape=shape, df=df).logpdf(X_new) + prior)
    scores = np.array(scores).T
    expected = np.exp(scores - np.logaddexp.reduce(scores, axis=1, keepdims=True))
    assert np.allclose(clf.predict_proba(X_new), expected, atol=1e-10)


def test_fixed_graph_uses_that_graph():
    """A fixed chordal graph: the predictive is that graph's t, and no sampling happens."""
    X, y = _two_class_data(4, 15, 10)
    path = np.diag(np.ones(3), 1) + np.diag(np.ones(3), -1)
    clf = GraphicalPredictiveClassifier(path).fit(X, y)
    assert all(len(g) == 1 for g in clf.graphs_)
    assert np.array_equal(clf.edge_inclusion_[0], path)
    logs = np.array(
        [
            graph_log_predictive(class_hyper(X[y == c]), adjacency_from_matrix(path), X[:5])
            for c in clf.classes_
        ]
    ).T
    logs += np.log((np.array([15, 15]) + 1) / 32)
    expected = np.exp(logs - np.logaddexp.reduce(logs, axis=1, keepdims=True))
    assert np.allclose(clf.predict_proba(X[:5]), expected)


def test_string_labels_pipeline_and_attributes():
    """String labels, a Pipeline, the kept draws, edge inclusion and graph sizes."""
    X, y = _two_class_data(4, 20, 11)
    pipe = make_pipeline(
        StandardScaler(), GraphicalPredictiveClassifier(n_sweeps=200, burn_in=50, random_seed=1)
    )
    pipe.fit(X, y)
    clf = pipe[-1]
    assert set(pipe.predict(X)) <= {"first", "second"}
    assert (pipe.predict(X) == y).mean() > 0.7
    assert [g.shape for g in clf.graphs_] == [(150, 4), (150, 4)]
    inc = clf.edge_inclusion_
    assert inc.shape == (2, 4, 4) and np.allclose(inc, inc.transpose(0, 2, 1))
    assert ((inc >= 0) & (inc <= 1)).all()
    assert np.allclose(clf.graph_size_[0].mean(), inc[0].sum() / 2)
    again = GraphicalPredictiveClassifier(n_sweeps=200, burn_in=50, random_seed=1).fit(
        StandardScaler().fit_transform(X), y
    )
    assert all(np.array_equal(a, b) for a, b in zip(again.graphs_, clf.graphs_))


def test_plot_edge_inclusion():
    """The edge-inclusion plot draws one heat map per class."""
    import matplotlib

    matplotlib.use("Agg")
    X, y = _two_class_data(3, 10, 12)
    clf = GraphicalPredictiveClassifier(n_sweeps=50, random_seed=0).fit(X, y)
    axes = clf.plot_edge_inclusion()
    assert len(axes) == 2
    assert np.allclose(axes[1].images[0].get_array(), clf.edge_inclusion_[1])
    with pytest.raises(ValueError, match="need 2 axes"):
        pk.graphical.plot_edge_inclusion(clf.edge_inclusion_, axes=[axes[0]])


@pytest.mark.parametrize(
    "params,X_change,y_change,message",
    [
        ({}, "nan", None, "NaN"),
        ({}, "wide", None, "at most 64 features"),
        ({}, None, "single", "at least 2 samples"),
        ({}, None, "short", "inconsistent numbers of samples"),
        ({"nu": -1.0}, None, None, "nu must be finite and > 0"),
        ({"delta": 0.0}, None, None, "delta must be finite and > 0"),
        ({"alpha": 1.0}, None, None, r"alpha must be in \(0, 1\)"),
        ({"beta": 0.0}, None, None, r"beta must be in \(0, 1\)"),
        ({"kernel": "christmas"}, None, None, "kernel must be one of"),
        ({"n_particles": 1}, None, None, "n_particles must be an integer >= 2"),
        ({"burn_in": 30, "n_sweeps": 30}, None, None, "burn_in must be < n_sweeps"),
        ({"graph": "sparse"}, None, None, "graph must be one of"),
        ({"graph": np.ones((2, 2))}, None, None, r"\(3, 3\) adjacency matrix"),
        ({"graph": np.array([[0, 1, 0], [1, 0, 0], [1, 0, 0]])}, None, None, "symmetric 0/1"),
        ({"phi": -np.eye(3)}, None, None, "positive definite"),
        ({"phi": np.eye(2)}, None, None, r"phi must have shape \(3, 3\)"),
    ],
)
def test_bad_input(params, X_change, y_change, message):
    """Bad data or parameters raise a ValueError that says what is wrong."""
    X, y = _two_class_data(3, 6, 13)
    if X_change == "nan":
        X[2, 1] = np.nan
    if X_change == "wide":
        X = np.hstack([X] * 22)
    if y_change == "single":
        y = y.copy()
        y[0] = "lonely"
    if y_change == "short":
        y = y[:-1]
    with pytest.raises(ValueError, match=message):
        GraphicalPredictiveClassifier(**{"n_sweeps": 30, **params}).fit(X, y)


def test_non_chordal_graph_is_refused():
    """A 4-cycle is not decomposable: a clear error suggests the fix."""
    X, y = _two_class_data(4, 8, 14)
    cycle = np.roll(np.eye(4), 1, axis=1) + np.roll(np.eye(4), -1, axis=1)
    with pytest.raises(ValueError, match="decomposable"):
        GraphicalPredictiveClassifier(cycle).fit(X, y)
