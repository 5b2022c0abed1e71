"""The scalable neighbour search gives the dense construction's graph and queries, bit for bit.

The reference is the construction ``KNNGraph`` used before the search (an ``n x n`` matrix of
squared distances, each row sorted stably), kept here for small ``n``.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pymc_knn as pk
from pymc_knn import datasets
from pymc_knn.graphs import DEFAULT_K_MAX_CAP, UNCAPPED_N, default_k_max, knn_graph_bytes
from pymc_knn.kernels import predictive as _pred
from pymc_knn.kernels import structure as _s
from pymc_knn.kernels.search import reverse_ranks_sorted
from pymc_knn.terms import COUPLING_CACHE_BYTES, PottsTerm

ENGINES = ("brute", "kd_tree", "exact")


def dense_graph(Z, K):
    """The former ``KNNGraph.__init__``: ``(neighbours, sq_distances, reverse_rank)``."""
    sq = _s.squared_distances(Z, Z)
    np.fill_diagonal(sq, np.inf)
    order = np.argsort(sq, axis=1, kind="stable")[:, :K]
    return order, np.take_along_axis(sq, order, axis=1), _s.reverse_ranks(order)


def dense_query(graph, X_new):
    """The former ``KNNGraph.query``: ``(neighbours (m, K), enter_k (m, n))``."""
    sq = graph.squared_distances_to(X_new)
    order = np.argsort(sq, axis=1, kind="stable")[:, : graph.k_max]
    return order, _s.knn_enter_ranks(sq, graph.sq_distances)


def dense_strengths(order, enter, y, ks, a, equal):
    """The former ``knn_strengths`` on a dense ``enter_k``, in numpy."""
    m, K = order.shape
    n = y.size
    out = np.empty((m, ks.size, a.size))
    for i in range(m):
        rank = np.full(n, K + 1)
        rank[order[i]] = np.arange(1, K + 1)
        for t, k in enumerate(ks):
            member = np.minimum(rank, enter[i]) <= k if equal else None
            for g in range(a.size):
                cls = y == g
                count = (
                    (member & cls).sum()
                    if equal
                    else ((rank <= k) & cls).sum() + ((enter[i] <= k) & cls).sum()
                )
                out[i, t, g] = a[g] * float(count) / k
    return out


def assert_same_graph(graph, Z, K):
    nb, sq, rev = dense_graph(Z, K)
    np.testing.assert_array_equal(graph.neighbours, nb)
    np.testing.assert_array_equal(graph.sq_distances, sq)  # the same numbers, not close ones
    np.testing.assert_array_equal(graph.reverse_rank, rev)


def assert_same_query(graph, X_new):
    q = graph.query(X_new)
    order, enter = dense_query(graph, X_new)
    np.testing.assert_array_equal(q.neighbours, order)
    np.testing.assert_array_equal(q.enter_k_dense(graph.n_points), enter)
    for a in range(min(3, len(X_new))):
        for k in (1, graph.k_max):
            np.testing.assert_array_equal(q.reverse_neighbours(a, k), np.flatnonzero(enter[a] <= k))
    return q, order, enter


SHIPPED = [
    ("ripley", "train"),
    ("ripley", "test"),
    ("pima", "train"),
    ("pima", "test"),
    ("crabs", None),
    ("glass", None),
    ("iris", None),
    ("wine", None),
]


def load(name, split):
    loader = getattr(datasets, f"load_{name}")
    return loader(split) if split else loader()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, split", SHIPPED)
def test_graph_and_query_equal_the_dense_ones_on_shipped_data(name, split, engine):
    X, y, *_ = load(name, split)
    K = default_k_max(len(y), pk.max_k(y))
    g = pk.KNNGraph(X, k_max=K, algorithm=engine)
    assert_same_graph(g, g.X, K)
    rng = np.random.default_rng(0)
    X_new = np.vstack([X[:25], X[:25] + rng.normal(scale=0.3, size=(25, X.shape[1])) * X.std(0)])
    assert_same_query(g, X_new)


# integer grids and duplicated points: many tied distances
grid = arrays(
    np.float64,
    st.tuples(st.integers(3, 40), st.integers(1, 4)),
    elements=st.integers(-2, 2).map(float),
)


@settings(max_examples=60, deadline=None)
@given(X=grid, data=st.data())
def test_search_equals_dense_construction_with_ties(X, data):
    n = X.shape[0]
    K = data.draw(st.integers(1, n - 1), label="k_max")
    engine = data.draw(st.sampled_from(ENGINES), label="engine")
    X_new = data.draw(
        arrays(
            np.float64,
            st.tuples(st.integers(1, 8), st.just(X.shape[1])),
            elements=st.integers(-3, 3).map(float),
        ),
        label="X_new",
    )
    g = pk.KNNGraph(X, k_max=K, algorithm=engine, standardize=False)
    assert_same_graph(g, g.X, K)
    assert_same_query(g, X_new)


@pytest.mark.parametrize("engine", ["brute", "kd_tree"])
def test_duplicated_points_beyond_the_candidates(engine):
    """More copies of a point than candidates of the tree: the completion finds them all."""
    rng = np.random.default_rng(3)
    X = np.repeat(rng.normal(size=(40, 2)), 30, axis=0)[rng.permutation(1200)]
    for K in (1, 7, 45):
        g = pk.KNNGraph(X, k_max=K, algorithm=engine, standardize=False)
        assert_same_graph(g, g.X, K)
        assert_same_query(g, X[:50])


@pytest.mark.parametrize("equal", [False, True])
def test_strengths_from_the_sparse_query_equal_the_dense_ones(equal):
    X, y, *_ = datasets.load_ripley("train")
    g = pk.KNNGraph(X, k_max=40)
    X_new, _, *_ = datasets.load_ripley("test")
    q, order, enter = assert_same_query(g, X_new[:200])
    ks = np.array([1, 2, 7, 16, 40], dtype=np.int64)
    a = np.array([1.0, 0.8])
    h = _pred.knn_strengths(q.neighbours, q.enter_indptr, q.enter_index, q.enter_k, y, ks, a, equal)
    np.testing.assert_array_equal(h, dense_strengths(order, enter, y, ks, a, equal))


@pytest.mark.parametrize("engine", ["brute", "kd_tree"])
def test_query_up_to_a_smaller_k_is_a_prefix_in_any_chunks(engine, monkeypatch):
    import pymc_knn._search as search

    monkeypatch.setattr(search, "CHUNK_ENTRIES", 1000)  # many chunks of new points
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, size=(700, 2)).astype(float)
    g = pk.KNNGraph(X, k_max=30, algorithm=engine, standardize=False)
    X_new = rng.integers(-1, 7, size=(300, 2)).astype(float)
    order, enter = dense_query(g, X_new)
    for k in (1, 7, 30):
        q = g.query(X_new, k)
        np.testing.assert_array_equal(q.neighbours, order[:, :k])
        np.testing.assert_array_equal(q.enter_k_dense(700), np.where(enter <= k, enter, k + 1))
    with pytest.raises(ValueError, match="k must be an integer in 1..30"):
        g.query(X_new, 31)


def test_query_holds_no_dense_row():
    X = np.random.default_rng(1).normal(size=(3000, 2))
    q = pk.KNNGraph(X, k_max=10, algorithm="kd_tree").query(X[:5] + 0.01)
    assert q.enter_k.shape == q.enter_index.shape and q.enter_k.size < 5 * 3000
    assert q.enter_indptr.shape == (6,) and np.all(q.enter_k <= 10)


def test_reverse_ranks_by_binary_search_equal_the_counting_sort():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 5, size=(300, 2)).astype(float)
    nb, sq, rev = dense_graph(X, 30)
    nb, sq = np.ascontiguousarray(nb), np.ascontiguousarray(sq)  # as KNNGraph passes them
    np.testing.assert_array_equal(reverse_ranks_sorted(nb, sq), rev)


def test_graph_memory_is_refused_before_allocating():
    X = np.random.default_rng(0).normal(size=(2000, 2))
    need = knn_graph_bytes(2000, 1500)
    assert need == 24 * 2000 * 1500
    with pytest.raises(
        ValueError,
        match=r"n = 2000 points with k_max = 1500 needs "
        r"72,000,000 bytes .*working_memory budget of 10 MiB",
    ):
        pk.KNNGraph(X, k_max=1500, working_memory=10)
    import sklearn

    with sklearn.config_context(working_memory=10):
        with pytest.raises(ValueError, match="Lower k_max"):
            pk.KNNGraph(X, k_max=1500)
    with pytest.raises(ValueError, match="working_memory must be a positive number"):
        pk.KNNGraph(X, k_max=5, working_memory=-1)
    assert pk.KNNGraph(X, k_max=100, working_memory=10).k_max == 100  # 4.8 MB fit


def test_models_refuse_a_graph_beyond_the_budget():
    import pymc as pm
    import sklearn

    X, y, *_ = datasets.load_ripley("train")
    with sklearn.config_context(working_memory=0.1), pm.Model():
        with pytest.raises(ValueError, match="n = 250 points with k_max = 125"):
            pk.PottsKNN("y", X=X, beta=1.0, k=3, observed=y)
    with sklearn.config_context(working_memory=0.1):
        with pytest.raises(ValueError, match="n = 250 points with k_max = 125"):
            pk.korea(X, y)


def test_default_k_max_is_capped_only_beyond_uncapped_n():
    for name, split in SHIPPED:  # the shipped data sets keep their default
        X, y, *_ = load(name, split)
        assert default_k_max(len(y), pk.max_k(y)) == min(pk.max_k(y), len(y) - 1)
    assert default_k_max(UNCAPPED_N, 1000) == 1000
    assert default_k_max(UNCAPPED_N + 1, 1000) == DEFAULT_K_MAX_CAP
    assert default_k_max(UNCAPPED_N + 1, 40) == 40
    assert default_k_max(10**6) == DEFAULT_K_MAX_CAP
    assert default_k_max(50) == 49


def test_models_use_the_capped_default():
    import pymc as pm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2400, 2))
    y = (X[:, 0] > 0).astype(np.int64)
    with pm.Model():
        v = pk.PottsKNN("y", X=X, beta=1.0, k=3, observed=y)
    assert v.owner.op.term.graph.k_max == DEFAULT_K_MAX_CAP
    assert pk.KNNGraph(X).k_max == DEFAULT_K_MAX_CAP
    clf = pk.BayesianKNNClassifier()
    assert clf._prior_upper(X, y) == DEFAULT_K_MAX_CAP


def test_coupling_cache_is_bounded(monkeypatch):
    import pymc_knn.terms as terms

    X = np.random.default_rng(0).normal(size=(400, 2))
    term = PottsTerm(pk.KNNGraph(X, k_max=60), 2)
    one = sum(a.nbytes for a in term.coupling(60) if isinstance(a, np.ndarray))
    monkeypatch.setattr(terms, "COUPLING_CACHE_BYTES", 3 * one)
    for k in range(1, 61):
        term.coupling(k)
    held = sum(a.nbytes for c in term._cache.values() for a in c if isinstance(a, np.ndarray))
    assert held <= 3 * one and list(term._cache)[-1] == 60
    assert term.coupling(60) is term.coupling(60)  # the last one is kept
    assert COUPLING_CACHE_BYTES == 256 * 2**20


def test_approximate_needs_pynndescent(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynndescent", None)
    with pytest.raises(ImportError, match=r"pymc-knn\[approximate\]"):
        pk.KNNGraph(np.random.default_rng(0).normal(size=(30, 2)), k_max=3, algorithm="approximate")
    with pytest.raises(ValueError, match="algorithm must be one of"):
        pk.KNNGraph(np.zeros((5, 2)), algorithm="ball_tree")


@pytest.mark.slow
def test_approximate_graph_is_sorted_exactly_and_recalls_the_neighbours():
    pytest.importorskip("pynndescent")
    X = np.random.default_rng(0).normal(size=(3000, 12))
    approx = pk.KNNGraph(X, k_max=20, algorithm="approximate")
    exact = pk.KNNGraph(X, k_max=20)
    recall = (
        np.mean([np.intersect1d(a, b).size for a, b in zip(approx.neighbours, exact.neighbours)])
        / 20
    )
    assert recall > 0.95
    assert np.all(np.diff(approx.sq_distances, axis=1) >= 0)
    assert np.all(approx.sq_distances >= exact.sq_distances)


def test_build_memory_stays_linear_in_n():
    """40,000 points: a dense construction would need 12.8 GB; the search stays within 200 MB
    of the interpreter's own (peak resident memory, in a fresh process)."""
    code = textwrap.dedent("""
        import resource, numpy as np, pymc_knn as pk
        X = np.random.default_rng(0).normal(size=(40000, 2))
        pk.KNNGraph(X[:2000], k_max=20)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        g = pk.KNNGraph(X, k_max=20)
        g.query(X[:5000] + 0.01)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
    """)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(pk.__file__).parents[1]),
    )
    assert int(out.stdout.split()[-1]) < 200 * 1024  # KiB


@pytest.mark.parametrize("engine", ["brute", "kd_tree"])
def test_serial_kernels_equal_the_parallel_ones(engine, monkeypatch):
    """In a process forked from one whose numba OpenMP pool ran (a PyMC chain widening a kept
    d-nn table) the search runs serial twins of its kernels: the same answers."""
    from pymc_knn import _forksafe, _search

    X = np.random.default_rng(4).normal(size=(600, 3)).round(1)  # ties
    Q = np.random.default_rng(5).normal(size=(50, 3)).round(1)
    search = _search.NeighbourSearch(X, engine)
    answers = []
    for serial in (False, True):
        monkeypatch.setattr(_forksafe, "_forked_from_pool", serial)
        nb, sq = search.graph(20)
        answers.append(
            (nb, sq, *search.nearest(Q, 20), search.shells(sq[:, -1], 0.05, 6, False))
            + search.reverse(Q, sq)
        )
        parallel = _search._k.brute_knn.targetoptions.get("parallel", False)
        assert parallel is not serial
    for a, b in zip(*answers):
        np.testing.assert_array_equal(a, b)


def test_a_process_forked_after_a_parallel_kernel_runs_them_too():
    """A fork (PyMC's chain processes, a multiprocessing pool on Linux) of a session where the
    neighbour search ran widens a kept d-nn table and predicts: numba's GNU OpenMP layer would
    end it ("Terminating: fork() called from a process already using GNU OpenMP") but for the
    serial twins, which give the parent's answers."""
    code = textwrap.dedent(
        """
        import multiprocessing
        import numpy as np
        import pymc_knn as pk

        X, y, *_ = pk.datasets.load_ripley("train")
        Z = np.random.default_rng(0).normal(size=(30, 2))
        sigmas, weights = np.array([0.1, 0.3]), np.ones(2)

        def work(graph):
            graph.cover(0.3)  # the search again
            return graph.width, graph.strengths(Z, y, sigmas, weights)

        here = work(pk.DistanceGraph(X, drop_tol=1e-6))
        fresh = pk.DistanceGraph(X, drop_tol=1e-6)
        with multiprocessing.get_context("fork").Pool(1) as pool:
            there = pool.apply(work, (fresh,))
        assert here[0] == there[0] and np.array_equal(here[1], there[1]), (here, there)
        print("same")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "same" in out.stdout, out.stderr[-2000:]


def test_the_fork_safe_kernels_survive_pickling():
    """dask (cloudpickle) may send a function that refers to them by value."""
    import pickle

    import cloudpickle

    from pymc_knn import _forksafe, predict

    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        back = loads(dumps(predict._k))
        assert isinstance(back, _forksafe.ForkSafe)
        assert back.knn_strengths is predict._k.knn_strengths


def _odd_array_types(dispatcher):
    """The read-only or non-contiguous array types among a kernel's compiled signatures."""
    from numba.core import types

    return [
        t
        for sig in dispatcher.signatures
        for t in sig
        if isinstance(t, types.Array) and (not t.mutable or t.layout != "C")
    ]


@pytest.mark.parametrize("engine", ["brute", "kd_tree"])
def test_read_only_or_strided_inputs_compile_no_second_kernel(engine, tmp_path):
    """A read-only array (a graph loaded from a memory map by joblib) or a column slice (the
    reverse query at a ``k`` below ``k_max``) is a numba type of its own: passed to the kernels
    as they came, they compiled each kernel a second time (2-9 s on a cold cache). The search
    takes writeable contiguous arrays and gives the same graph and queries."""
    import joblib

    from pymc_knn.kernels import search as _search_k

    X = np.random.default_rng(3).normal(size=(400, 3))
    X_new = X[:50] + 0.01
    graph = pk.KNNGraph(X, k_max=12, algorithm=engine)
    q = graph.query(X_new, 5)
    joblib.dump(graph, tmp_path / "graph.joblib")
    loaded = joblib.load(tmp_path / "graph.joblib", mmap_mode="r")
    q_loaded = loaded.query(X_new, 5)
    for kernel in (_search_k.brute_knn, _search_k.brute_reverse, _search_k.tree_reverse):
        assert _odd_array_types(kernel) == []
    np.testing.assert_array_equal(q_loaded.neighbours, q.neighbours)
    np.testing.assert_array_equal(q_loaded.enter_index, q.enter_index)
    np.testing.assert_array_equal(q_loaded.enter_k, q.enter_k)


def test_a_fit_loaded_from_a_memory_map_predicts_with_the_same_kernels(tmp_path):
    """joblib's ``mmap_mode`` loads a fit's arrays read-only, a numba type of their own: the
    predictive kernels were compiled a second time for them. The loaded fit takes writeable
    copies and predicts what the original does."""
    import joblib

    from pymc_knn.kernels import predictive as _pred
    from pymc_knn.kernels import search as _search_k

    X, y, *_ = pk.datasets.load_ripley("train")
    fit = pk.korea(X, y, k_max=40)
    X_new = X[:60] + 0.01
    proba = fit.predict_proba(X_new)
    joblib.dump(fit, tmp_path / "fit.joblib")
    loaded = joblib.load(tmp_path / "fit.joblib", mmap_mode="r")
    np.testing.assert_array_equal(loaded.predict_proba(X_new), proba)
    for kernel in (_pred.knn_strengths, _pred.summaries_two_classes, _search_k.tree_reverse):
        assert _odd_array_types(kernel) == []


def test_kernel_array_copies_only_what_a_kernel_cannot_take():
    from pymc_knn._validation import kernel_array

    a = np.arange(12.0).reshape(3, 4)
    assert kernel_array(a) is a
    locked = a.copy()
    locked.setflags(write=False)
    for b in (locked, a[:, :2], np.broadcast_to(a[0], (3, 4)), a.astype(np.float32)):
        c = kernel_array(b)
        assert c.flags.writeable and c.flags.c_contiguous and c.dtype == np.float64
        np.testing.assert_array_equal(c, b)
