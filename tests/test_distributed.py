"""Prediction beyond one machine: the lazy predictive's graph holds the fitted state once, a
dask.distributed LocalCluster computes what the threaded scheduler does, and cross-validation
runs through joblib's dask backend (docs/scaling.md, "Beyond one machine")."""

import cloudpickle
import threading
import time

import numpy as np
import pytest
import xarray as xr

import pymc_knn as pk
from test_predict import fake_posterior, knn_model

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def problem():
    X, y, *_ = pk.datasets.load_ripley("train")
    X_new, *_ = pk.datasets.load_ripley("test")
    X, y = X[::5], y[::5]
    model = knn_model(X, y, 8)
    idata = fake_posterior(np.random.default_rng(3), draws=50, K=8)
    return model, idata, np.tile(X_new, (3, 1))  # 3000 new points


def _state_keys(graph, state_type):
    return [k for k, v in dict(graph).items() if _holds(v, state_type)]


def _holds(value, state_type):
    if isinstance(value, state_type):
        return True
    value = getattr(value, "value", value)  # a DataNode of the task spec
    if isinstance(value, tuple):
        return any(isinstance(v, state_type) for v in value)
    return False


def test_the_fitted_state_is_one_key_of_the_lazy_graph(problem):
    model, idata, X_new = problem
    eager = pk.predict_proba(idata, X_new, model=model, lazy=False)
    lazy = pk.predict_proba(idata, X_new, model=model, lazy=True, working_memory=1)
    assert lazy.data.numblocks[2] >= 4
    keys = _state_keys(lazy.data.__dask_graph__(), pk.predict.Posterior)
    assert len(keys) == 1, keys
    # the chunks' tasks refer to it by key: each pickles to much less than the state
    graph = dict(lazy.data.__dask_graph__())
    state = len(cloudpickle.dumps(graph[keys[0]]))
    tasks = [len(cloudpickle.dumps(v)) for k, v in graph.items() if k != keys[0]]
    assert max(tasks) < state / 2, (max(tasks), state)
    np.testing.assert_array_equal(lazy.values, eager.values)


def test_lazy_summary_equals_eager(problem):
    model, idata, X_new = problem
    eager = pk.predictive_summary(idata, X_new, model=model, progressbar=False)
    lazy = pk.predictive_summary(idata, X_new, model=model, lazy=True, working_memory=0.2)
    assert lazy["proba"].data.numblocks[0] >= 2
    keys = _state_keys(lazy["proba"].data.__dask_graph__(), pk.predict.Posterior)
    assert len(keys) == 1, keys
    xr.testing.assert_identical(lazy.compute(), eager)


@pytest.fixture(scope="module")
def client():
    # in-process workers: quick to start; the graph still goes through the scheduler
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_a_local_cluster_computes_what_threads_do(problem, client):
    model, idata, X_new = problem
    eager = pk.predict_proba(idata, X_new, model=model, lazy=False)
    lazy = pk.predict_proba(idata, X_new, model=model, lazy=True, working_memory=1)
    np.testing.assert_array_equal(client.compute(lazy.data).result(), eager.values)
    mean = lazy.mean(("chain", "draw")).compute()  # the default scheduler is now the Client
    np.testing.assert_allclose(mean.values, eager.mean(("chain", "draw")).values)
    summary = pk.predictive_summary(idata, X_new, model=model, lazy=True, working_memory=0.2)
    expected = pk.predictive_summary(idata, X_new, model=model, progressbar=False)
    xr.testing.assert_identical(summary.compute(), expected)
    assert client.run(lambda: True)  # both workers alive


@pytest.mark.filterwarnings("ignore::pymc_knn.ConvergenceWarning")
def test_cross_validation_through_joblibs_dask_backend(client):
    from joblib import parallel_config
    from sklearn.model_selection import cross_val_score

    X, y, *_ = pk.datasets.load_ripley("train")
    clf = pk.BayesianKNNClassifier(method="pseudo", draws=50, tune=50, chains=1, random_seed=0)
    with parallel_config(backend="dask"):
        scores = cross_val_score(clf, X[::2], y[::2], cv=3, n_jobs=-1)
    assert scores.shape == (3,) and np.all(scores > 0.7)
    # the fits ran as tasks of the cluster
    assert any(
        "fit_and_score" in str(k) or "batch_of" in str(k)
        for k in client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    )


def test_losing_the_client_mid_computation_is_a_clear_error(problem, tmp_path, monkeypatch):
    model, idata, X_new = problem
    original = pk.predict._proba_block

    def slow(state, X):
        time.sleep(0.1)
        return original(state, X)

    monkeypatch.setattr(pk.predict, "_proba_block", slow)
    lazy = pk.predict_proba(idata, X_new, model=model, lazy=True, working_memory=0.1)
    assert lazy.data.numblocks[2] >= 30  # about 3 s of work on two workers
    target = tmp_path / "proba.nc"
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
    ):
        threading.Timer(0.5, cluster.close).start()
        with pytest.raises(RuntimeError, match="dask Client was lost mid-computation") as info:
            pk.compute_predictions(lazy.mean(("chain", "draw")), path=target)
    assert "nothing was written" in str(info.value) and "Reconnect" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # no result, no partial file


class _Fails:
    """Fails as told once computed, having first stopped ``client`` if given."""

    def __init__(self, error, client=None):
        self.error, self.client = error, client

    def compute(self):
        if self.client is not None:
            self.client.close()
        raise self.error


# what the CI once saw, alone, from a Client lost during a netCDF write
LOCK_ERROR = "<class 'distributed.lock.Lock'> object not properly initialized. This can happen"


@pytest.mark.parametrize(
    "message, stop, lost",
    [
        ("anything", True, True),  # the Client stopped: whatever the error
        (LOCK_ERROR, False, True),  # a task's lock lost its Worker, the Client not yet told
        ("anything", False, False),  # the computation's own error, passed on unchanged
    ],
)
def test_an_error_from_a_lost_client_is_the_clear_one(message, stop, lost):
    error = RuntimeError(message)
    with distributed.Client(processes=False, n_workers=1, dashboard_address=":0") as client:
        with pytest.raises(RuntimeError) as info:
            pk.compute_predictions(_Fails(error, client if stop else None))
    if lost:
        assert "dask Client was lost mid-computation" in str(info.value)
        assert info.value.__cause__ is error
    else:
        assert info.value is error


def test_compute_predictions_writes_the_whole_file(problem, tmp_path):
    model, idata, X_new = problem
    summary = pk.predictive_summary(idata, X_new, model=model, lazy=True, working_memory=0.2)
    path = pk.compute_predictions(summary, path=tmp_path / "summary.nc")
    assert [p.name for p in tmp_path.iterdir()] == ["summary.nc"]
    xr.testing.assert_allclose(xr.load_dataset(path), summary.compute())
