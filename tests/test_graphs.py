"""Neighbour graphs and energies against brute force from the papers' definitions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pymc_knn as pk
from pymc_knn.kernels import local_fields, log_pseudo_likelihood

import brute
from conftest import small_problem


@pytest.mark.parametrize("kind", ["symmetrised", "equal"])
@pytest.mark.parametrize("seed", range(4))
def test_knn_energy_matches_brute_force(kind, seed):
    X, y = small_problem(seed, n=11, p=3, G=3)
    a = np.random.default_rng(seed).uniform(0.5, 2.0, size=3)
    g = pk.KNNGraph(X, neighbours=kind)
    Xs = brute.standardise(X)
    all_k = g.energy_all_k(y, class_weights=a)
    for k in range(1, 11):
        expected = brute.energy(brute.knn_W(Xs, k, kind), y, a)
        assert g.energy(y, k, class_weights=a) == pytest.approx(expected, rel=1e-12)
        assert all_k[k - 1] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("kind", ["symmetrised", "equal"])
@pytest.mark.parametrize("equal_weights", [True, False])
def test_the_samplers_knn_energy_matches_brute_force(kind, equal_weights):
    """The step kernel's energy of a kNN coupling (equal pairs counted when the class weights
    are equal, the weights summed otherwise) is the papers' energy."""
    import pymc as pm

    from pymc_knn.kernels import mcmc

    X, y = small_problem(3, n=11, p=3, G=3)
    a = np.ones(3) if equal_weights else np.array([0.5, 1.0, 2.0])
    with pm.Model():
        pk.PottsKNN(
            "y",
            X=X,
            beta=1.0,
            k=pm.DiscreteUniform("k", 1, 3),
            neighbours=kind,
            class_weights=a,
            observed=y,
        )
        f = pk.Exchange().field
    Xs = brute.standardise(X)
    z = np.random.default_rng(0).integers(0, 3, size=(5, y.size))
    for k in (1, 2, 3):
        c = mcmc.coupling(f, float(k), False)
        for labels in z:
            expected = brute.energy(brute.knn_W(Xs, k, kind), labels, a)
            assert mcmc._energy(f, c, labels) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "ball", "exponential"])
@pytest.mark.parametrize("sigma", [0.3, 1.0, 4.0])
def test_dnn_weights_and_energy_match_brute_force(kernel, sigma):
    X, y = small_problem(7, n=10, p=2, G=3)
    g = pk.DistanceGraph(X, kernel=kernel)
    W = brute.dnn_W(brute.standardise(X), sigma, kernel)
    np.testing.assert_allclose(g.weights(sigma), W, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(g.weights(sigma).sum(axis=1), 1.0)
    assert g.energy(y, sigma) == pytest.approx(brute.energy(W, y), rel=1e-12)


def test_dnn_weights_stay_finite_for_extreme_sigma():
    X, _ = small_problem(3, n=10)
    for kernel, sigma in [("gaussian", 1e-3), ("exponential", 1e4), ("ball", 1e-6)]:
        W = pk.DistanceGraph(X, kernel=kernel).weights(sigma)
        assert np.all(np.isfinite(W))
        np.testing.assert_allclose(W.sum(axis=1), 1.0)


@pytest.mark.parametrize("kind", ["symmetrised", "equal", "asymmetric"])
def test_pseudo_likelihood_matches_brute_force(kind):
    X, y = small_problem(11, n=10, p=2, G=3)
    a = np.array([1.0, 0.7, 1.6])
    g = pk.KNNGraph(X, neighbours=kind)
    Xs = brute.standardise(X)
    for k in (1, 3, 6):
        W = brute.knn_W(Xs, k, "symmetrised" if kind == "asymmetric" else kind)
        C = W if kind == "asymmetric" else W + W.T  # conditionals: eq. 1 (directed) or eq. 4
        for beta in (0.0, 0.8, 2.5):
            got = log_pseudo_likelihood(*g.conditional_weights(k), y, beta, a)
            assert got == pytest.approx(brute.log_pl(C, y, beta, 3, a), rel=1e-10, abs=1e-12)


def test_dnn_pseudo_likelihood_and_fields_match_brute_force():
    X, y = small_problem(5, n=9, p=2, G=2)
    g = pk.DistanceGraph(X, kernel="gaussian")
    W = brute.dnn_W(brute.standardise(X), 0.8, "gaussian")
    indptr, indices, data = g.conditional_weights(0.8)
    assert log_pseudo_likelihood(indptr, indices, data, y, 1.7, np.ones(2)) == pytest.approx(
        brute.log_pl(W + W.T, y, 1.7, 2), rel=1e-10
    )
    h = local_fields(indptr, indices, data, y, np.ones(2))
    A = W + W.T
    np.testing.assert_allclose(h[:, 1], A @ (y == 1))
    np.testing.assert_allclose(h[:, 0], A @ (y == 0))


@pytest.mark.parametrize("kind", ["symmetrised", "equal"])
def test_a_renumbered_knn_graph_is_the_same_graph(kind):
    """The edge list and CSR of a field whose points are numbered breadth first (large data)
    are the data's, relabelled: the same weighted pairs, the same energy of relabelled labels.
    Two far clusters: the order covers every component."""
    from pymc_knn.kernels.energy import energy
    from pymc_knn.kernels.structure import NO_ORDER, breadth_first_order, knn_csr, knn_edges

    X, y = small_problem(9, n=40, G=3)
    X = np.vstack([X, X[:12] + 100.0])
    y = np.concatenate([y, y[:12]])
    g = pk.KNNGraph(X, k_max=6, neighbours=kind)
    perm = breadth_first_order(g.neighbours, 3)
    assert sorted(perm) == list(range(len(X))) and not np.array_equal(perm, np.arange(len(X)))
    rank = np.empty_like(perm)
    rank[perm] = np.arange(perm.size)
    a = np.array([1.0, 0.7, 1.3])
    for k in (1, 4, 6):
        equal = kind == "equal"
        src, dst, w = knn_edges(g.neighbours, g.reverse_rank, k, equal, NO_ORDER, NO_ORDER)
        src2, dst2, w2 = knn_edges(g.neighbours, g.reverse_rank, k, equal, perm, rank)
        assert np.all(np.diff(src2) >= 0)  # rows in the new order
        pairs = sorted(zip(np.minimum(src, dst), np.maximum(src, dst), w))
        back = sorted(
            zip(np.minimum(perm[src2], perm[dst2]), np.maximum(perm[src2], perm[dst2]), w2)
        )
        assert pairs == back
        assert np.isclose(energy(src2, dst2, w2, y[perm], a), energy(src, dst, w, y, a))
        ptr, ind, dat = knn_csr(g.neighbours, g.reverse_rank, k, equal, NO_ORDER, NO_ORDER)
        ptr2, ind2, dat2 = knn_csr(g.neighbours, g.reverse_rank, k, equal, perm, rank)
        for i in range(len(X)):
            row = sorted(zip(ind[ptr[i] : ptr[i + 1]], dat[ptr[i] : ptr[i + 1]]))
            r = rank[i]
            row2 = sorted(zip(perm[ind2[ptr2[r] : ptr2[r + 1]]], dat2[ptr2[r] : ptr2[r + 1]]))
            assert row == row2


@pytest.mark.parametrize("renumbered", [False, True])
def test_nested_equal_pairs_count_both_graphs(renumbered):
    """One pass over the symmetrised graph at the larger ``k`` counts the equal pairs of both
    graphs of a bridged ``k`` move, as two passes do (in the points' order and breadth first),
    for every pair of ``k`` and labels that are not a partition's best."""
    from pymc_knn.kernels.energy import equal_pairs, nested_equal_pairs
    from pymc_knn.kernels.structure import NO_ORDER, breadth_first_order, knn_edges

    X, y = small_problem(4, n=60, G=3)
    g = pk.KNNGraph(X, k_max=9)
    perm = breadth_first_order(g.neighbours, 3) if renumbered else NO_ORDER
    rank = np.empty_like(perm)
    rank[perm] = np.arange(perm.size)
    z = np.random.default_rng(2).integers(0, 3, size=len(X))
    edges = {k: knn_edges(g.neighbours, g.reverse_rank, k, False, perm, rank) for k in range(1, 10)}
    for big in range(1, 10):
        for small in range(1, big + 1):
            want = (equal_pairs(*edges[big][:2], z), equal_pairs(*edges[small][:2], z))
            assert nested_equal_pairs(*edges[big][:2], z, big, small) == want


@pytest.mark.parametrize("size", [0, 1, 7, 8, 2001])
def test_equal_pairs_is_the_count_of_equal_labelled_edges(size):
    """The count against numpy's, for edge lists of even and odd length (the loop's two halves
    and its last edge), and an integer as the count is."""
    from pymc_knn.kernels.energy import equal_pairs

    rng = np.random.default_rng(size)
    src = rng.integers(0, 50, size).astype(np.int32)
    dst = rng.integers(0, 50, size).astype(np.int32)
    z = rng.integers(0, 3, 50)
    count = equal_pairs(src, dst, z)
    assert isinstance(count, (int, np.integer))
    assert count == int((z[src] == z[dst]).sum())


def test_two_point_normalising_constant_from_the_paper():
    """000 section 2.1: for n = 2, k = 1 the energy is 2 [y1 == y2], so Z = 2 e^{2 beta} + 2."""
    g = pk.KNNGraph(np.array([[0.0], [1.0]]), standardize=False)
    for beta in (0.0, 0.5, 3.0):
        assert np.exp(pk.testing.log_normaliser(g.coupling(1), beta, 2)) == pytest.approx(
            2 * np.exp(2 * beta) + 2
        )


def test_mutual_neighbours_count_twice_in_symmetrised_model():
    X = np.array([[0.0], [1.0], [3.0]])  # 0<->1 mutual; 2's nearest is 1
    A = pk.KNNGraph(X, standardize=False).coupling(1).to_dense()
    np.testing.assert_allclose(A, [[0, 2, 0], [2, 0, 1], [0, 1, 0]])
    A_eq = pk.KNNGraph(X, standardize=False, neighbours="equal").coupling(1).to_dense()
    np.testing.assert_allclose(A_eq, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])


# ----------------------------------------------------------------------------- invariants

coords = arrays(
    np.float64,
    st.tuples(st.integers(3, 14), st.integers(1, 3)),
    elements=st.integers(-3, 3).map(float),
)  # a small integer grid: many ties


@settings(max_examples=60, deadline=None)
@given(X=coords, kind=st.sampled_from(["symmetrised", "equal"]))
def test_graph_invariants(X, kind):
    g = pk.KNNGraph(X, neighbours=kind, standardize=False)
    n = g.n_points
    D = brute.distances(X)
    for i in range(n):
        order = sorted((j for j in range(n) if j != i), key=lambda j: (D[i, j], j))
        assert g.neighbours[i].tolist() == order  # (distance, index) order: ties to lower index
    previous = None
    for k in range(1, g.k_max + 1):
        c = g.coupling(k)
        A = c.to_dense()
        np.testing.assert_array_equal(A, A.T)  # W + W^T is symmetric
        assert np.all(np.diag(A) == 0)
        # the CSR holds the same couplings as the edge list
        A_csr = np.zeros_like(A)
        for i in range(n):
            np.add.at(
                A_csr[i],
                c.indices[c.indptr[i] : c.indptr[i + 1]],
                c.data[c.indptr[i] : c.indptr[i + 1]],
            )
        np.testing.assert_allclose(A_csr, A, atol=1e-15)
        support = A > 0
        if previous is not None:
            assert np.all(support[previous])  # the graph at k contains the graph at k - 1
        previous = support
        # out-degree is exactly k: every k is a prefix of the sorted lists
        W = brute.knn_W(X, k, kind)
        np.testing.assert_allclose(A, W + W.T, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(X=coords, data=st.data())
def test_query_matches_insertion_of_the_new_point(X, data):
    """A new point's neighbours and reverse neighbours are those it would have as point n."""
    g = pk.KNNGraph(X, standardize=False)
    n = g.n_points
    x_new = np.array(
        data.draw(st.lists(st.integers(-3, 3).map(float), min_size=X.shape[1], max_size=X.shape[1]))
    )
    q = g.query(x_new[None, :])
    full = np.vstack([X, x_new])
    D = brute.distances(full)
    order = sorted(range(n), key=lambda j: (D[n, j], j))
    assert q.neighbours[0].tolist() == order[: g.k_max]
    for k in range(1, g.k_max + 1):
        expected = [
            j
            for j in range(n)
            if n in sorted((m for m in range(n + 1) if m != j), key=lambda m: (D[j, m], m))[:k]
        ]
        assert q.reverse_neighbours(0, k).tolist() == expected


def test_standardisation_uses_training_statistics():
    X, _ = small_problem(1, n=20, p=3)
    X[:, 2] = 5.0  # constant column: left unscaled, no division by zero
    g = pk.KNNGraph(X)
    np.testing.assert_allclose(g.X[:, :2].mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(g.X[:, :2].std(axis=0), 1)
    assert np.all(g.X[:, 2] == 0)
    np.testing.assert_allclose(g.transform(X[:3]), g.X[:3])


def test_max_k_is_smallest_class():
    assert pk.max_k(np.array([0, 0, 1, 1, 1, 2, 2])) == 2
    X, y, *_ = pk.datasets.load_pima("train")
    assert pk.max_k(y) == 68  # 000 section 4: K = 68 on Pima


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0], [3.0, 1.0]]), "NaN"),
        (np.array([[0.0, np.inf], [1.0, 2.0], [3.0, 1.0]]), "inf"),
        (np.array([0.0, 1.0, 2.0]), "2-D"),
        (np.zeros((3, 2, 2)), "2-D"),
        (np.array([[1.0, 2.0]]), "at least 2 points"),
        (np.array([["a", "b"], ["c", "d"]]), "numbers"),
        (np.zeros((4, 0)), "no columns"),
    ],
)
@pytest.mark.parametrize("cls", [pk.KNNGraph, pk.DistanceGraph])
def test_bad_covariates(cls, bad, match):
    with pytest.raises(ValueError, match=match):
        cls(bad)


def test_bad_graph_parameters():
    X, y = small_problem(0, n=6)
    with pytest.raises(ValueError, match="k_max must be an integer in 1..n-1"):
        pk.KNNGraph(X, k_max=6)
    with pytest.raises(ValueError, match="k_max"):
        pk.KNNGraph(X, k_max=0)
    with pytest.raises(ValueError, match="neighbours must be one of"):
        pk.KNNGraph(X, neighbours="mutual")
    g = pk.KNNGraph(X, k_max=3)
    for k in (0, 4, 2.5):
        with pytest.raises(ValueError, match=r"k must be an integer in 1..3"):
            g.coupling(k)
    with pytest.raises(ValueError, match="no joint distribution"):
        pk.KNNGraph(X, neighbours="asymmetric").coupling(2)
    with pytest.raises(ValueError, match="kernel must be one of"):
        pk.DistanceGraph(X, kernel="cosine")
    for sigma in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="sigma must be finite and > 0"):
            pk.DistanceGraph(X).coupling(sigma)
    with pytest.raises(ValueError, match="X_new has 3 columns"):
        g.query(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        g.query(np.array([[np.nan, 0.0]]))


@pytest.mark.parametrize(
    "labels, match",
    [
        (np.array(["a", "b", "a", "b", "a", "b"]), "strings"),
        (np.array([0, 1, 2, 0, 1, -1]), "0..G-1"),
        (np.array([0, 1, 0.5, 0, 1, 1]), "whole numbers"),
        (np.array([0, 1, 0, 1]), "got 4 labels for 6 points"),
        (np.array([[0, 1, 0], [1, 0, 1]]), "1-D"),
        (np.array([True, False, True, False, True, False]), "integers"),
    ],
)
def test_bad_labels(labels, match):
    X, _ = small_problem(0, n=6)
    with pytest.raises(ValueError, match=match):
        pk.KNNGraph(X).energy(labels, 2)


def test_labels_beyond_class_weights_and_single_class():
    X, y = small_problem(0, n=6, G=3)
    with pytest.raises(ValueError, match="labels must be in 0..1 for 2 classes"):
        pk.KNNGraph(X).energy(y, 2, class_weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="labels must be in 0..1 for 2 classes"):
        pk.KNNGraph(X).energy_all_k(y, class_weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="positive"):
        pk.KNNGraph(X).energy(y, 2, class_weights=[1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="single class"):
        pk.max_k(np.zeros(5, dtype=int))


@pytest.mark.parametrize("factor", [1e155, 1e-300])
def test_extreme_magnitudes_standardise_to_the_same_graph(factor):
    X = np.random.default_rng(4).normal(size=(30, 3))
    plain = pk.KNNGraph(X, k_max=6)
    scaled = pk.KNNGraph(X * factor, k_max=6)
    np.testing.assert_array_equal(scaled.neighbours, plain.neighbours)
    np.testing.assert_allclose(scaled.X, plain.X, atol=1e-12)
    with pytest.raises(ValueError, match="squared distances would (overflow|underflow)"):
        pk.KNNGraph(X * factor, k_max=6, standardize=False)
