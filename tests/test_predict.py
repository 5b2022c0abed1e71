"""Posterior predictive of new points: eq. 5 of Cucala et al. against a direct computation, the
summaries against numpy's quantiles, the uncertainty zones, joint prediction, the predictions
group, and bad input.

The direct computation appends the new point to the standardised training points as point n + 1
and takes its full conditional in the joint model of the n + 1 points, with the brute-force
weights of ``brute.py`` (no shared code): ``P(y_new = g) ∝ exp(beta a_g sum_j A_nj [y_j == g])``
with ``A = W + W^T``. The reverse neighbours (training points that would count the new point
among their k nearest) enter through ``W^T``: every case below checks that some do.
"""

import itertools

import arviz as az
import dask
import numpy as np
import pymc as pm
import pytest
import xarray as xr
from scipy.special import softmax

import brute
import pymc_knn as pk
from conftest import small_problem


def knn_model(X, y, K, neighbours="symmetrised", class_weights=None, G=None):
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 3)
        k = pm.DiscreteUniform("k", 1, K)
        pk.PottsKNN(
            "y",
            X=X,
            beta=beta,
            k=k,
            neighbours=neighbours,
            n_classes=G,
            class_weights=class_weights,
            observed=y,
        )
    return model


def dnn_model(X, y, kernel):
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 3)
        sigma = pm.Uniform("sigma", 0.05, 3)
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel=kernel, observed=y)
    return model


def fake_posterior(rng, chains=2, draws=30, K=None, y=None, **extra):
    """An InferenceData with chosen draws: beta uniform on (0.2, 2.5), k or sigma spread."""
    post = {"beta": rng.uniform(0.2, 2.5, (chains, draws))}
    if K is not None:
        post["k"] = rng.integers(1, K + 1, (chains, draws))
    else:
        post["sigma"] = rng.uniform(0.1, 2.0, (chains, draws))
    post.update(extra)
    return az.from_dict(posterior=post, observed_data=None if y is None else {"y": y})


def direct_proba(model, X, y, X_new, beta, theta, kind, G, a=None):
    """The full conditional of each new point in the (n+1)-point model, by brute force."""
    graph = model["y"].owner.op.term.graph
    a = np.ones(G) if a is None else np.asarray(a)
    out = np.empty((len(X_new), G))
    for i, x in enumerate(graph.transform(X_new)):
        Z = np.vstack([graph.X, x])
        if kind in ("symmetrised", "equal"):
            W = brute.knn_W(Z, int(theta), kind)
        else:
            W = brute.dnn_W(Z, theta, kind)
        A = W + W.T
        h = np.array([a[g] * A[-1, :-1][y == g].sum() for g in range(G)])
        out[i] = softmax(beta * h)
    return out


def reverse_entries(model, X_new, k):
    return int((model["y"].owner.op.term.graph.query(X_new).enter_k <= k).sum())


@pytest.mark.parametrize(
    "kind, G, weights",
    [
        ("symmetrised", 2, None),
        ("equal", 2, None),
        ("symmetrised", 3, [1.0, 0.7, 1.6]),
        ("equal", 3, None),
    ],
)
def test_knn_probabilities_match_eq5(kind, G, weights, rng):
    X, y = small_problem(3, n=12, G=G)
    X_new = rng.normal(size=(6, 2)) * 0.8
    K = int(np.bincount(y).min())
    model = knn_model(X, y, K, kind, weights)
    idata = fake_posterior(rng, K=K)
    proba = pk.predict_proba(idata, X_new, model=model)
    assert proba.dims == ("chain", "draw", "point", "class")
    assert proba.shape == (2, 30, 6, G)
    post = idata.posterior
    reverse = 0
    for c, d in [(0, 0), (0, 7), (1, 3), (1, 29)]:
        beta, k = float(post.beta[c, d]), int(post.k[c, d])
        expected = direct_proba(model, X, y, X_new, beta, k, kind, G, weights)
        np.testing.assert_allclose(proba.values[c, d], expected, atol=1e-12)
        reverse += reverse_entries(model, X_new, k)
    assert reverse > 0, "no reverse neighbour in the case: the test would not check them"


@pytest.mark.parametrize("kernel", ["gaussian", "ball", "exponential"])
def test_dnn_probabilities_match_the_joint_model(kernel, rng):
    X, y = small_problem(5, n=10, G=2)
    X_new = rng.normal(size=(5, 2))
    model = dnn_model(X, y, kernel)
    idata = fake_posterior(rng, draws=8)
    proba = pk.predict_proba(idata, X_new, model=model)
    post = idata.posterior
    for c, d in [(0, 0), (1, 5)]:
        beta, sigma = float(post.beta[c, d]), float(post.sigma[c, d])
        expected = direct_proba(model, X, y, X_new, beta, sigma, kernel, 2)
        np.testing.assert_allclose(proba.values[c, d], expected, atol=1e-10)


def test_a_new_point_on_a_training_point_ranks_after_it(rng):
    """Ties: the new point at a training point's place counts after it (graphs.py convention)."""
    X, y = small_problem(8, n=10)
    model = knn_model(X, y, 3)
    idata = fake_posterior(rng, K=3)
    X_new = X[:3].copy()
    proba = pk.predict_proba(idata, X_new, model=model)
    beta, k = float(idata.posterior.beta[0, 0]), int(idata.posterior.k[0, 0])
    expected = direct_proba(model, X, y, X_new, beta, k, "symmetrised", 2)
    np.testing.assert_allclose(proba.values[0, 0], expected, atol=1e-12)


def test_parameters_given_as_expressions(rng):
    X, y = small_problem(2, n=10)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1)
        j = pm.DiscreteUniform("j", 0, 3)
        pk.PottsKNN("y", X=X, beta=3 * pm.math.sigmoid(b), k=j + 1, observed=y)
    b = rng.normal(size=(1, 5))
    j = rng.integers(0, 4, (1, 5))
    idata = az.from_dict(posterior={"b": b, "j": j})
    proba = pk.predict_proba(idata, X[:2] + 0.1, model=model)
    beta = 3 / (1 + np.exp(-b[0, 4]))
    expected = direct_proba(model, X, y, X[:2] + 0.1, beta, j[0, 4] + 1, "symmetrised", 2)
    np.testing.assert_allclose(proba.values[0, 4], expected, atol=1e-12)


def reference_summary(proba, ci_prob=0.95):
    p = proba.values.reshape(-1, *proba.shape[2:])
    q = np.quantile(p, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0, method="inverted_cdf")
    return p.mean(axis=0), q[0], q[1]


@pytest.mark.parametrize("case", ["knn2", "knn3", "dnn2"])
def test_streamed_summary_matches_numpy(case, rng):
    if case == "dnn2":
        X, y = small_problem(4, n=12)
        model, idata = dnn_model(X, y, "gaussian"), fake_posterior(rng, draws=40)
    else:
        G = 2 if case == "knn2" else 3
        X, y = small_problem(4, n=12, G=G)
        K = int(np.bincount(y).min())
        model = knn_model(X, y, K)
        # repeated draws, as MCMC makes them: the summary works on distinct (beta, k)
        idata = fake_posterior(rng, draws=200, K=K)
        idata.posterior["beta"][:, 1::2] = idata.posterior["beta"][:, ::2].values
        idata.posterior["k"][:, 1::2] = idata.posterior["k"][:, ::2].values
    X_new = rng.normal(size=(25, 2))
    summary = pk.predictive_summary(idata, X_new, model=model, ci_prob=0.9)
    mean, lo, hi = reference_summary(pk.predict_proba(idata, X_new, model=model), 0.9)
    np.testing.assert_allclose(summary["proba"].values, mean, atol=1e-12)
    np.testing.assert_allclose(summary["lower"].values, lo, atol=1e-10)
    np.testing.assert_allclose(summary["upper"].values, hi, atol=1e-10)
    np.testing.assert_array_equal(summary["bayes_class"].values, mean.argmax(axis=1))
    np.testing.assert_array_equal(summary["uncertain"].values, pk.uncertainty_zones(lo, hi, mean))


def test_uncertainty_zone_rules():
    # two classes: the interval of P(class 1) contains 0.5 (ends included)
    lower = np.array([[0.3, 0.4], [0.55, 0.05], [0.1, 0.5], [0.45, 0.51]])
    upper = np.array([[0.6, 0.7], [0.95, 0.45], [0.5, 0.9], [0.49, 0.55]])
    mean = (lower + upper) / 2
    np.testing.assert_array_equal(
        pk.uncertainty_zones(lower, upper, mean), [True, False, True, False]
    )
    # three classes: the two most probable classes' intervals overlap
    mean = np.array([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2], [0.1, 0.2, 0.7]])
    lower = np.array([[0.40, 0.20, 0.1], [0.45, 0.20, 0.0], [0.0, 0.1, 0.6]])
    upper = np.array([[0.60, 0.40, 0.3], [0.55, 0.44, 0.9], [0.2, 0.6, 0.8]])
    np.testing.assert_array_equal(pk.uncertainty_zones(lower, upper, mean), [True, False, True])


@pytest.mark.parametrize("kind", ["knn", "dnn"])
def test_joint_prediction_of_one_point_is_eq5(kind, rng):
    """With a single new point, its Gibbs full conditional is eq. 5 exactly."""
    X, y = small_problem(6, n=10)
    if kind == "knn":
        model, idata = knn_model(X, y, 5), fake_posterior(rng, draws=10, K=5)
    else:  # repeated sigmas, as MCMC makes them: the coupling is reused
        model, idata = dnn_model(X, y, "gaussian"), fake_posterior(rng, draws=10)
        idata.posterior["sigma"][:, 1::2] = idata.posterior["sigma"][:, ::2].values
    x = rng.normal(size=(1, 2))
    joint = pk.predict_proba(idata, x, model=model, joint=True, sweeps=2, random_seed=1)
    independent = pk.predict_proba(idata, x, model=model)
    np.testing.assert_allclose(joint.values, independent.values, atol=1e-12)


def joint_marginals(model, X_new, beta, k, G=2):
    """Exact marginals of the new labels given the training labels, by enumeration."""
    term = model["y"].owner.op.term
    y = np.asarray(model.rvs_to_values[model["y"]].data)
    Z = np.vstack([term.graph.X, term.graph.transform(X_new)])
    W = brute.knn_W(Z, k, "symmetrised")
    m = len(X_new)
    states = np.array(list(itertools.product(range(G), repeat=m)))
    logq = np.array([beta * brute.energy(W, np.concatenate([y, s])) for s in states])
    p = softmax(logq)
    return np.array([[p[states[:, a] == g].sum() for g in range(G)] for a in range(m)])


def test_joint_prediction_matches_enumeration(rng):
    """Gibbs over three new points (training labels fixed) against the exact joint marginals."""
    X, y = small_problem(9, n=10)
    X_new = np.array([[0.0, 0.1], [0.1, 0.0], [-0.1, 0.05]]) + X[0]
    model = knn_model(X, y, 5)
    draws = 4000
    idata = az.from_dict(posterior={"beta": np.full((1, draws), 2.0), "k": np.full((1, draws), 3)})
    joint = pk.predict_proba(idata, X_new, model=model, joint=True, sweeps=1, random_seed=3)
    exact = joint_marginals(model, X_new, 2.0, 3)
    labels = joint.attrs["labels"][0]
    freq = np.stack([(labels == g).mean(axis=0) for g in range(2)], axis=1)
    np.testing.assert_allclose(freq, exact, atol=0.04)
    np.testing.assert_allclose(joint.values[0].mean(axis=0), exact, atol=0.03)
    independent = pk.predict_proba(idata, X_new, model=model).values[0, 0]
    assert np.abs(independent - exact).max() > 0.05, "the case does not tell joint from independent"


def test_add_predictions_groups(rng):
    X, y = small_problem(1, n=12)
    model = knn_model(X, y, 6)
    idata = fake_posterior(rng, draws=500, K=6, y=y)
    X_new = rng.normal(size=(4, 2))
    out = pk.add_predictions(idata, X_new, model=model, random_seed=5)
    assert out is idata
    assert {"predictions", "predictions_constant_data"} <= set(idata.groups())
    pred = idata.predictions
    assert pred["y"].dims == ("chain", "draw", "point")
    assert pred["y_proba"].dims == ("chain", "draw", "point", "class")
    np.testing.assert_array_equal(idata.predictions_constant_data["y_X"].values, X_new)
    # label draws follow the per-draw probabilities
    freq = (pred["y"].values == 1).mean(axis=(0, 1))
    np.testing.assert_allclose(freq, pred["y_proba"].values[..., 1].mean(axis=(0, 1)), atol=0.06)
    again = pk.add_predictions(idata, X_new[:2], model=model, random_seed=5)
    assert again.predictions.sizes["point"] == 2  # replaced, not stacked


def test_lazy_probabilities_equal_eager(rng):
    X, y = small_problem(1, n=12)
    model = knn_model(X, y, 6)
    idata = fake_posterior(rng, draws=50, K=6)
    X_new = rng.normal(size=(30, 2))
    eager = pk.predict_proba(idata, X_new, model=model, lazy=False)
    # 10 kB: the 48 kB array is lazy by default, in chunks of about 5 points
    lazy = pk.predict_proba(idata, X_new, model=model, working_memory=0.01)
    assert hasattr(lazy.data, "dask") and lazy.data.numblocks[2] > 1
    np.testing.assert_allclose(lazy.values, eager.values)
    with dask.config.set({"array.chunk-size": "10kB"}):  # lazy chunks within dask's size too
        small = pk.predict_proba(idata, X_new, model=model, lazy=True)
    assert small.data.numblocks[2] > 1
    np.testing.assert_array_equal(small.values, eager.values)
    summary = pk.summarize_proba(lazy)
    np.testing.assert_allclose(summary["proba"].values, eager.mean(("chain", "draw")).values)
    pk.add_predictions(idata, X_new, model=model, random_seed=1, working_memory=0.01)
    assert hasattr(idata.predictions["y"].data, "dask")
    assert set(np.unique(idata.predictions["y"].values)) <= {0, 1}


def test_dnn_kernel_calls_split_by_work_give_the_same_values(rng, monkeypatch):
    """The d-nn kernels run in short calls (so Ctrl-C is seen between them): same numbers."""
    X, y = small_problem(3, n=12)
    model = dnn_model(X, y, "gaussian")
    idata = fake_posterior(rng, draws=20)
    X_new = rng.normal(size=(9, 2))
    whole = pk.predict_proba(idata, X_new, model=model)
    calls = {}

    def count_calls(name, arg):
        kernel = getattr(pk.predict._k, name)

        def counted(*args):
            calls.setdefault(name, []).append(len(args[arg]))
            return kernel(*args)

        monkeypatch.setattr(pk.predict._k, name, counted)

    count_calls("dnn_row_sums", 1)  # sigmas per call
    count_calls("dnn_strengths", 0)  # new points per call
    # 12 training points, 40 distinct sigmas: 7 sigmas per row-sum call, 2 new points per call
    monkeypatch.setattr(pk.predict, "WORK_ELEMENTS", 12 * 12 * 7)
    split = pk.predict_proba(idata, X_new, model=model)
    assert calls == {"dnn_row_sums": [7] * 5 + [5], "dnn_strengths": [2] * 4 + [1]}
    np.testing.assert_array_equal(split.values, whole.values)


@pytest.fixture
def chunk_counts(monkeypatch):
    """The number of chunks of every ``_chunks`` call, in order."""
    counts = []
    original = pk.predict._chunks

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        counts.append(len(out))
        return out

    monkeypatch.setattr(pk.predict, "_chunks", spy)
    return counts


@pytest.mark.parametrize("case", ["knn3", "dnn2"])
def test_working_memory_chunks_give_the_same_results(case, rng, chunk_counts):
    """A budget of a few points a chunk: several chunks, results equal to one chunk's."""
    if case == "knn3":
        X, y = small_problem(4, n=12, G=3)
        model, idata = knn_model(X, y, 4), fake_posterior(rng, draws=40, K=4, y=y)
    else:
        X, y = small_problem(4, n=12)
        model, idata = dnn_model(X, y, "gaussian"), fake_posterior(rng, draws=40, y=y)
    X_new = rng.normal(size=(40, 2))
    tiny, ample = 0.02, 1024  # MiB: 20 kB, a few points a chunk
    runs = {}
    for wm in (tiny, ample):
        chunk_counts.clear()
        proba = pk.predict_proba(idata, X_new, model=model, lazy=False, working_memory=wm)
        summary = pk.predictive_summary(idata, X_new, model=model, working_memory=wm)
        pk.add_predictions(idata, X_new, model=model, random_seed=2, lazy=False, working_memory=wm)
        runs[wm] = proba.values, summary, idata.predictions["y"].values, list(chunk_counts)
    assert min(runs[tiny][3]) > 1 and runs[ample][3] == [1, 1, 1, 1]
    np.testing.assert_array_equal(runs[tiny][0], runs[ample][0])
    xr.testing.assert_identical(runs[tiny][1], runs[ample][1])
    np.testing.assert_array_equal(runs[tiny][2], runs[ample][2])


def test_working_memory_defaults_to_scikit_learns_setting(rng, chunk_counts):
    import sklearn

    X, y = small_problem(4, n=12)
    model, idata = knn_model(X, y, 6), fake_posterior(rng, draws=40, K=6)
    X_new = rng.normal(size=(40, 2))
    with sklearn.config_context(working_memory=0.005):  # 5 kB: about 10 points
        pk.predictive_summary(idata, X_new, model=model)
    pk.predictive_summary(idata, X_new, model=model)
    assert chunk_counts[0] > 3 and chunk_counts[1] == 1


def test_chunks_respect_the_budget():
    chunks = pk.predict._chunks(100, per_point=800, budget=9000, fixed=1000)
    assert [s.stop - s.start for s in chunks] == [10] * 10
    # less than a point fits: one point at a time, never none
    assert len(pk.predict._chunks(7, per_point=800, budget=500)) == 7
    with dask.config.set({"array.chunk-size": "4000B"}):  # and no chunk beyond dask's size
        assert len(pk.predict._chunks(100, per_point=800, budget=2**30)) == 20


@pytest.mark.parametrize("kind", ["knn", "dnn"])
def test_joint_prediction_beyond_working_memory_is_refused(kind, rng):
    X, y = small_problem(1, n=12)
    model = knn_model(X, y, 6) if kind == "knn" else dnn_model(X, y, "gaussian")
    idata = fake_posterior(rng, draws=5, K=6 if kind == "knn" else None)
    X_new = rng.normal(size=(30, 2))
    post = pk.predict.Posterior(idata, model)
    need = pk.predict._joint_bytes(post, 30)
    # d-nn: at least two dense (n + m)**2 arrays; kNN: the graph's (n + m) x k_max tables
    assert need >= (pk.graphs.knn_graph_bytes(42, 6) if kind == "knn" else 16 * 42**2)
    with pytest.raises(ValueError, match=rf"12 \+ 30 .* about {need / 1e9:.3g} GB .*joint=False"):
        pk.predict_proba(idata, X_new, model=model, joint=True, working_memory=need / 2**21)
    out = pk.predict_proba(idata, X_new, model=model, joint=True, working_memory=need / 2**20)
    assert out.shape == (2, 5, 30, 2)


def test_model_from_context_and_class_names(rng):
    X, y = small_problem(1, n=12)
    model = knn_model(X, y, 6)
    idata = fake_posterior(rng, K=6)
    with model:
        summary = pk.predictive_summary(idata, X[:3], classes=["no", "yes"])
    assert list(summary["class"].values) == ["no", "yes"]
    assert set(summary["bayes_class"].values) <= {"no", "yes"}


def test_working_memory_must_be_a_positive_number_of_mib(rng):
    X, y = small_problem(1, n=12)
    model = knn_model(X, y, 6)
    idata = fake_posterior(rng, K=6, y=y)
    for wm in (0, -1.0, np.inf, "1GB", True):
        with pytest.raises(ValueError, match="working_memory must be a positive number of MiB"):
            pk.predictive_summary(idata, X[:2], model=model, working_memory=wm)


def test_bad_input_to_add_predictions_and_zones(rng):
    X, y = small_problem(1, n=12)
    model = knn_model(X, y, 6)
    idata = fake_posterior(rng, K=6, y=y)
    with pytest.raises(ValueError, match="inf"):
        pk.add_predictions(idata, np.array([[0.0, np.inf]]), model=model)
    assert "predictions" not in idata.groups()
    with pytest.raises(ValueError, match="one shape"):
        pk.uncertainty_zones(np.zeros((3, 2)), np.zeros((3, 3)), np.zeros((3, 2)))


@pytest.mark.parametrize("kind", ["knn", "dnn"])
def test_a_saved_fit_predicts_on_its_own(kind, tmp_path, rng):
    """pm.sample records the covariates and the term's options in constant_data: after a netCDF
    round trip pk.predict_proba needs no model, and gives the model's numbers."""
    X, y = small_problem(1, n=12)
    model = (
        knn_model(X, y, 5, class_weights=[1.0, 1.5])
        if kind == "knn"
        else dnn_model(X, y, "exponential")
    )
    with model:
        idata = pm.sample(
            draws=30,
            tune=10,
            chains=1,
            random_seed=1,
            progressbar=False,
            compute_convergence_checks=False,
        )
    path = tmp_path / "fit.nc"
    idata.to_netcdf(path)
    loaded = az.from_netcdf(path)
    X_new = rng.normal(size=(6, 2))
    expected = pk.predict_proba(idata, X_new, model=model).values
    np.testing.assert_allclose(pk.predict_proba(loaded, X_new).values, expected, atol=1e-12)
    other = pk.predict_proba(loaded, X_new * 2).values
    assert np.abs(other - expected).max() > 1e-9  # the new points matter
    with pytest.raises(ValueError, match="covariates of 'y' differ"):  # a wrong model: refused
        pk.predict_proba(loaded, X_new, model=knn_model(X + 1.0, y, 5))


@pytest.mark.parametrize("draws", [7, 300])
def test_two_class_intervals_by_sort_equal_the_bisection(draws, rng):
    """The two ways to the intervals of two classes (a bisection on the logit per quantile, or
    one sort of the point's logits) give the same draws' probabilities (to rounding), ties and
    repeats included; each path against numpy's inverted-cdf quantiles."""
    from pymc_knn.kernels.predictive import summaries_two_classes

    T, m = 4, 50
    t_index = np.sort(rng.integers(0, T, draws))
    beta = np.round(rng.uniform(0, 3, draws), 1)  # repeated values: ties in the logits
    order = np.lexsort((beta, t_index))
    t_index, beta = t_index[order], beta[order]
    weights = rng.integers(1, 4, draws).astype(float)
    bounds = np.searchsorted(t_index, np.arange(T + 1)).astype(np.int64)
    cumw = np.concatenate([[0.0], np.cumsum(weights)])
    h = rng.normal(size=(m, T, 2))
    h[:5] = 0.0  # every logit zero
    runs = [summaries_two_classes(h, beta, cumw, bounds, 0.05, 0.95, by) for by in (False, True)]
    for a, b in zip(*runs):  # the bisection's binary searches divide: within rounding
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)
    p1 = 1 / (1 + np.exp(-beta * (h[:, t_index, 1] - h[:, t_index, 0])))  # (m, draws)
    p = np.repeat(np.stack([1 - p1, p1], axis=-1), weights.astype(int), axis=1)
    q = np.quantile(p, [0.05, 0.95], axis=1, method="inverted_cdf")
    np.testing.assert_allclose(runs[1][1], q[0], atol=1e-12)
    np.testing.assert_allclose(runs[1][2], q[1], atol=1e-12)
