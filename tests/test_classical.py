"""The classical kNN baseline against brute force and Cucala et al. (2009), Tables 1-2."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pymc_knn as pk
from pymc_knn.classical import (
    knn_error_rates,
    knn_predict,
    knn_vote,
    loo_choose_k,
    loo_error_curve,
)

import brute
from conftest import small_problem


def vote_by_definition(labels, k, G):
    """Majority of the first k labels; on a tie, decrease k until there is none (000, 1.2)."""
    counts = np.bincount(labels[:k], minlength=G)
    winners = np.flatnonzero(counts == counts.max())
    return int(winners[0]) if winners.size == 1 else vote_by_definition(labels, k - 1, G)


def predict_by_definition(X_train, y_train, X_new, k):
    """Each new point's k nearest training points, ties in distance to the lower index."""
    out = []
    for x in X_new:
        d = np.sqrt(((X_train - x) ** 2).sum(axis=1))
        order = sorted(range(len(X_train)), key=lambda j: (d[j], j))
        out.append(vote_by_definition(y_train[order], k, int(y_train.max()) + 1))
    return np.array(out)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 4).flatmap(
        lambda G: st.tuples(
            st.just(G),
            arrays(
                np.int64,
                st.tuples(st.integers(1, 6), st.integers(1, 12)),
                elements=st.integers(0, G - 1),
            ),
        )
    )
)
def test_vote_matches_definition_for_every_k(case):
    G, labels = case
    got = knn_vote(labels, G)
    assert got.shape == labels.shape
    for a in range(labels.shape[0]):
        for k in range(1, labels.shape[1] + 1):
            assert got[a, k - 1] == vote_by_definition(labels[a], k, G)


@pytest.mark.parametrize(
    "labels, G, expected",
    [
        ([1, 0], 2, [1, 1]),  # k = 2 tied: back to k = 1, not the lower class
        ([0, 1, 1, 0], 2, [0, 0, 1, 1]),  # k = 4 tied: k = 3 says 1
        ([0, 1, 1, 0, 0, 1], 2, [0, 0, 1, 1, 0, 0]),
        ([2, 2, 0, 0, 1, 1], 3, [2, 2, 2, 2, 2, 2]),  # ties at 4, 5, 6: back to k = 3
        ([1, 2, 0, 0], 3, [1, 1, 1, 0]),  # k = 2, 3 tied: back to k = 1
        ([0, 1, 2, 2, 1], 3, [0, 0, 0, 2, 2]),  # k = 5: 1 and 2 tied, k = 4 says 2
    ],
)
def test_vote_ties_resolved_by_decreasing_k(labels, G, expected):
    np.testing.assert_array_equal(knn_vote([labels], G)[0], expected)


def test_predict_tie_on_a_line():
    """x = 0 has neighbours 1 (at 1), 0 (at 2), 0 (at 3), 1 (at 4): k = 4 is tied, k = 3 says 0."""
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([1, 0, 0, 1])
    got = [knn_predict(X, y, [[0.0]], k, standardize=False)[0] for k in (1, 2, 3, 4)]
    assert got == [1, 1, 0, 0]


@pytest.mark.parametrize("standardize", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_predict_and_error_rates_match_definition(seed, standardize):
    X, y = small_problem(seed, n=12, p=2, G=3)
    X_new = np.random.default_rng(seed + 100).normal(size=(7, 2))
    y_new = np.random.default_rng(seed + 200).integers(0, 3, size=7)
    if standardize:
        m, s = X.mean(axis=0), X.std(axis=0)
        Xb, Xb_new = (X - m) / s, (X_new - m) / s
    else:
        Xb, Xb_new = X, X_new
    ks = [1, 2, 5, 12]
    rates = knn_error_rates(X, y, X_new, y_new, ks, standardize=standardize)
    for k in ks:
        expected = predict_by_definition(Xb, y, Xb_new, k)
        np.testing.assert_array_equal(
            knn_predict(X, y, X_new, k, standardize=standardize), expected
        )
        assert rates.sel(k=k).item() == pytest.approx(np.mean(expected != y_new))
        assert rates.n_errors.sel(k=k).item() == np.sum(expected != y_new)


def test_distance_ties_go_to_the_lower_index():
    X = np.array([[-1.0], [1.0], [5.0]])
    assert knn_predict(X, [1, 0, 0], [[0.0]], 1, standardize=False)[0] == 1
    assert knn_predict(X, [0, 1, 0], [[0.0]], 1, standardize=False)[0] == 0


@pytest.mark.parametrize("seed", range(3))
def test_loo_equals_refitting_without_the_point(seed):
    X, y = small_problem(seed, n=11, p=2, G=3)
    curve = loo_error_curve(X, y, standardize=False)
    assert curve.k.values.tolist() == list(range(1, 11))
    for k in range(1, 11):
        refit = [
            knn_predict(np.delete(X, i, 0), np.delete(y, i), X[i : i + 1], k, standardize=False)[0]
            for i in range(11)
        ]
        assert curve.n_errors.sel(k=k).item() == np.sum(np.array(refit) != y)


def test_loo_standardised_uses_the_full_training_scaling():
    X, y = small_problem(4, n=10, p=3, G=2)
    Xs = brute.standardise(X)
    curve = loo_error_curve(X, y, k_max=6)
    for k in range(1, 7):
        lists = brute.knn_lists(Xs, 9)
        wrong = sum(vote_by_definition(y[lists[i]], k, 2) != y[i] for i in range(10))
        assert curve.n_errors.sel(k=k).item() == wrong
        assert curve.sel(k=k).item() == pytest.approx(wrong / 10)


def test_loo_choose_k_takes_the_smallest_minimiser():
    X, y = small_problem(2, n=12, p=2, G=2)
    curve = loo_error_curve(X, y)
    best = np.flatnonzero(curve.n_errors.values == curve.n_errors.values.min()) + 1
    assert loo_choose_k(X, y) == best[0]


# Cucala et al. (2009): the numbers reproduce exactly on raw covariates, so the tolerance is the
# rounding of the paper's three decimals (a single error is 0.001 on Ripley, 0.003 on Pima).
RIPLEY_TABLE_1 = {1: 0.150, 3: 0.134, 15: 0.095, 17: 0.087, 31: 0.084, 54: 0.081}
PIMA_TABLE_2 = {1: 0.316, 3: 0.229, 15: 0.226, 31: 0.211, 57: 0.205, 66: 0.208}


@pytest.mark.parametrize(
    "load, table",
    [(pk.datasets.load_ripley, RIPLEY_TABLE_1), (pk.datasets.load_pima, PIMA_TABLE_2)],
)
def test_test_error_rates_reproduce_the_paper_on_raw_covariates(load, table):
    (X, y, *_), (X_te, y_te, *_) = load("train"), load("test")
    rates = knn_error_rates(X, y, X_te, y_te, list(table), standardize=False)
    np.testing.assert_allclose(rates.values, list(table.values()), atol=0.0005)


def test_loo_minimisers_reproduce_the_paper():
    """000 section 1.2 (Ripley) and 4 (Pima, with k up to the smallest class size, 68)."""
    X, y, *_ = pk.datasets.load_ripley("train")
    curve = loo_error_curve(X, y, standardize=False)
    best = curve.k[curve.n_errors == curve.n_errors.min()].values.tolist()
    assert best == [17, 18, 35, 36, 45, 46, 51, 52, 53, 54]
    assert loo_choose_k(X, y, standardize=False) == 17
    X, y, *_ = pk.datasets.load_pima("train")
    curve = loo_error_curve(X, y, k_max=pk.max_k(y), standardize=False)
    best = curve.k[curve.n_errors == curve.n_errors.min()].values.tolist()
    assert best == list(range(57, 67))


def test_standardised_by_default():
    (X, y, *_), (X_te, y_te, *_) = pk.datasets.load_ripley("train"), pk.datasets.load_ripley("test")
    default = knn_error_rates(X, y, X_te, y_te, 54)
    assert default.attrs["standardize"] == 1
    assert default.item() == knn_error_rates(X, y, X_te, y_te, 54, standardize=True).item()
    assert default.item() != pytest.approx(RIPLEY_TABLE_1[54])


X3, Y3 = small_problem(0, n=6, p=2, G=2)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: knn_predict(X3, Y3[:5], X3, 1), "5 labels for 6 points"),
        (lambda: knn_predict(np.where(np.eye(6, 2), np.nan, X3), Y3, X3, 1), "NaN"),
        (lambda: knn_predict(X3, Y3, X3[:, :1], 1), "1 columns"),
        (lambda: knn_predict(X3, Y3, X3, 0), r"k must be an integer in 1\.\.6"),
        (lambda: knn_predict(X3, Y3, X3, 7), r"k must be an integer in 1\.\.6"),
        (lambda: knn_predict(X3, Y3, X3, 2.5), "k must be an integer"),
        (lambda: knn_predict(X3, Y3, X3, True), "k must be an integer"),
        (lambda: knn_predict(X3, Y3 + 0.5, X3, 1), "whole numbers"),
        (lambda: knn_predict(X3, Y3 - 1, X3, 1), "0..G-1"),
        (lambda: knn_predict(X3, np.array(list("abcabc")), X3, 1), "encode them first"),
        (lambda: knn_error_rates(X3, Y3, X3, Y3[:4], [1]), "4 labels for 6 points"),
        (lambda: knn_error_rates(X3, Y3, X3, Y3, [1, 3, 1]), "distinct"),
        (lambda: knn_error_rates(X3, Y3, X3, Y3, []), "non-empty"),
        (lambda: knn_error_rates(X3, Y3, X3, Y3, [1, 9]), r"every k in ks must be .* 1\.\.6"),
        (lambda: loo_error_curve(X3, Y3, k_max=6), r"k_max must be an integer in 1\.\.n-1"),
        (lambda: loo_choose_k(X3[:, 0], Y3), "must be 2-D"),
        (lambda: knn_vote([0, 1, 1], 2), "must be 2-D"),
        (lambda: knn_vote([[0, 2]], 2), r"0\.\.1 for 2 classes"),
        (lambda: knn_vote([[0, 1]], 1), "n_classes must be an integer >= 2"),
    ],
)
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
