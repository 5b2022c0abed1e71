"""d-nn models on kept neighbour tables (``drop_tol > 0``) against the dense reference.

A table that keeps every pair gives the dense model's numbers (to rounding); a narrower one
changes each row by at most twice its reported bound, which stays within ``drop_tol`` over the
sigma it covers and exceeds it beyond (the negative control). The ball kernel's floor is carried
exactly on any table that covers the ball.
"""

import numpy as np
import pymc as pm
import pytest

import pymc_knn as pk
from pymc_knn import graphs
from pymc_knn.kernels.structure import NO_SHELLS, dnn_table_cumulative
from pymc_knn.kernels.swendsen_wang import swendsen_wang_rows
from pymc_knn.testing import all_labelings, label_probabilities

from conftest import small_problem
from test_samplers import ALPHA, SWEEPS, chi2_pvalue

KERNEL_SIGMAS = [("gaussian", [0.3, 1.0]), ("exponential", [2.0, 8.0]), ("ball", [0.5, 1.2])]


@pytest.fixture
def ripley():
    d = pk.datasets.load_ripley("train")
    return np.asarray(d.X), np.asarray(d.y)


def narrow(monkeypatch, width):
    monkeypatch.setattr(graphs, "DNN_START_WIDTH", width)


def test_default_drop_tol_keeps_every_pair_on_small_data(ripley):
    X, _ = ripley
    g = pk.DistanceGraph(X)
    assert g.drop_tol == 0.0 and not g.sparse and g.width == len(X) - 1
    assert graphs.default_drop_tol(2001) == graphs.DEFAULT_DROP_TOL


@pytest.mark.parametrize("kernel,sigmas", KERNEL_SIGMAS)
def test_full_table_equals_dense_on_ripley(kernel, sigmas, ripley):
    """A kept table that holds every pair: couplings, energies, pseudo-likelihoods and the
    predictive strengths of new points as the dense model's."""
    X, y = ripley
    dense = pk.DistanceGraph(X, kernel=kernel)
    kept = pk.DistanceGraph(
        X, kernel=kernel, drop_tol=1e-9, sigma_max=1e-3 if kernel == "exponential" else 1e3
    )
    assert kept.width == len(X) - 1
    X_new = pk.datasets.load_ripley("test").X[:40]
    for s in sigmas:
        np.testing.assert_allclose(
            kept.coupling(s).to_dense(), dense.coupling(s).to_dense(), rtol=0, atol=1e-12
        )
        assert kept.coupling(s).energy(y) == pytest.approx(dense.coupling(s).energy(y), abs=1e-9)
    h_kept = kept.strengths(X_new, y, np.array(sigmas), np.ones(2))
    h_dense = dense.strengths(X_new, y, np.array(sigmas), np.ones(2))
    np.testing.assert_allclose(h_kept, h_dense, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kernel,sigmas", KERNEL_SIGMAS[:2])
def test_narrow_table_within_its_bound(kernel, sigmas, ripley, monkeypatch):
    """Each kept row differs from the dense row by at most twice the reported bound, which is
    within drop_tol inside the cover and above it outside (negative control)."""
    X, _ = ripley
    narrow(monkeypatch, 16)
    tol = 1e-4
    dense = pk.DistanceGraph(X, kernel=kernel)
    kept = pk.DistanceGraph(X, kernel=kernel, drop_tol=tol)
    inside = kept.sigma_cover() * (2.0 if kernel == "exponential" else 0.5)
    outside = kept.sigma_cover() / 10 if kernel == "exponential" else kept.sigma_cover() * 10
    for s, ok in [(inside, True), (outside, False)]:
        W_kept, W = kept.weights(s), dense.weights(s)
        bound = kept.coupling_bound(s)[2]
        assert np.abs(W_kept - W).sum(axis=1).max() <= 2 * bound + 1e-12
        assert (bound <= tol) == ok
        assert kept.covers(s) == ok


def test_ball_floor_is_exact_on_a_narrow_table(ripley, monkeypatch):
    X, y = ripley
    narrow(monkeypatch, 8)
    kept = pk.DistanceGraph(X, kernel="ball", drop_tol=1e-6)
    dense = pk.DistanceGraph(X, kernel="ball")
    s = 0.9 * kept.sigma_cover()
    assert kept.width == 8 and kept.coupling_bound(s)[2] == 0.0
    c, cd = kept.coupling(s), dense.coupling(s)
    assert c.floor is not None
    np.testing.assert_allclose(c.to_dense(), cd.to_dense(), rtol=0, atol=1e-14)
    assert c.energy(y) == pytest.approx(cd.energy(y), rel=1e-12)
    term, term_d = pk.terms.PottsTerm(kept, 2), pk.terms.PottsTerm(dense, 2)
    assert term.log_pseudo_likelihood(y, 1.3, s) == pytest.approx(
        term_d.log_pseudo_likelihood(y, 1.3, s), rel=1e-12
    )
    X_new = pk.datasets.load_ripley("test").X[:30]
    np.testing.assert_allclose(
        kept.strengths(X_new, y, np.array([s]), np.ones(2)),
        dense.strengths(X_new, y, np.array([s]), np.ones(2)),
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("a", [None, [1.0, 1.6]], ids=["equal", "weighted"])
def test_swendsen_wang_with_the_floor_matches_enumeration(a, monkeypatch):
    """The floor's bond events (a large epsilon, so that they happen) keep the exact law."""
    narrow(monkeypatch, 3)
    X, _ = small_problem(3, n=8)
    kept = pk.DistanceGraph(X, kernel="ball", epsilon=0.2, drop_tol=0.5)
    sigma = 0.9 * kept.sigma_cover()
    assert kept.width == 3
    dense = pk.DistanceGraph(X, kernel="ball", epsilon=0.2).coupling(sigma)
    aw = np.ones(2) if a is None else np.asarray(a)
    order, sq = kept.sorted_rows()
    C, floor, bound = np.empty(sq.shape), np.empty(8), np.zeros(1)
    dnn_table_cumulative(
        sq,
        order,
        sigma,
        graphs.DNN_KERNELS["ball"],
        0.2,
        C,
        np.zeros(8, dtype=np.int64),
        aw,
        7,
        floor,
        bound,
        NO_SHELLS,
        0.0,
    )
    assert bound[0] == 0.0 and floor.min() > 0
    probs = label_probabilities(dense, 1.5, 2, class_weights=a)
    rng = np.random.default_rng(5)
    starts = all_labelings(8, 2)[rng.choice(probs.size, size=12_000, p=probs)]
    for z in starts:
        swendsen_wang_rows(order, C, z, 1.5, aw, SWEEPS, rng, floor)
    assert chi2_pvalue(starts, probs, 2) > ALPHA
    # negative control: without the floor the same sweeps leave the law
    starts = all_labelings(8, 2)[rng.choice(probs.size, size=12_000, p=probs)]
    for z in starts:
        swendsen_wang_rows(order, C, z, 1.5, aw, SWEEPS, rng)
    assert chi2_pvalue(starts, probs, 2) < 1e-6


def test_sampling_widens_the_table_during_tuning(monkeypatch):
    narrow(monkeypatch, 4)
    X, y = small_problem(1, n=120)
    y = (X[:, 0] > 0).astype(int)
    with pm.Model():
        beta = pm.Uniform("beta", 0, 3)
        sigma = pm.Uniform("sigma", 0, 3)
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, observed=y, drop_tol=1e-6)
        idata = pm.sample(
            draws=40,
            tune=60,
            chains=1,
            random_seed=2,
            progressbar=False,
            compute_convergence_checks=False,
        )
    dropped = idata.sample_stats["dnn_dropped"].values
    assert dropped.max() <= 1e-6


def test_a_kept_table_in_pm_sample_warns_when_out_of_its_cover(monkeypatch):
    """Negative control: no tuning to widen the table and a sigma far beyond its cover."""
    narrow(monkeypatch, 4)
    X, y = small_problem(1, n=120)
    y = (X[:, 0] > 0).astype(int)
    with pm.Model():
        beta = pm.Uniform("beta", 0, 3)
        sigma = pm.Uniform("sigma", 1.0, 3)
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, observed=y, drop_tol=1e-6)
        with pytest.warns(UserWarning, match="dnn_dropped"):
            idata = pm.sample(
                draws=5,
                tune=0,
                chains=1,
                random_seed=2,
                progressbar=False,
                compute_convergence_checks=False,
            )
    assert idata.sample_stats["dnn_dropped"].values.min() > 1e-6


def true_dropped_share(dense, kept, sigma):
    """Each row's share of the dense weight that the kept table leaves out."""
    W = dense.weights(sigma)
    keep = np.zeros(W.shape, dtype=bool)
    keep[np.arange(W.shape[0])[:, None], kept.sorted_rows()[0]] = True
    return (W * ~keep).sum(axis=1)


@pytest.mark.parametrize("kernel,sigma", [("gaussian", 0.15), ("exponential", 12.0)])
def test_shells_count_the_dropped_points_and_bound_their_weight(kernel, sigma, monkeypatch):
    """Shell counts equal a count from the dense distances (tree and brute engines, with tied
    points); the bound they give holds at every sigma and is tight within e^(1/2) at theirs."""
    narrow(monkeypatch, 24)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((600, 2))
    X[10:14] = X[9]  # ties at the table's edge for some rows
    dense = pk.DistanceGraph(X, kernel=kernel, drop_tol=0)
    counts = []
    for algorithm in ("kd_tree", "brute"):
        kept = pk.DistanceGraph(X, kernel=kernel, drop_tol=1e-6, algorithm=algorithm)
        kept._count_shells(sigma)
        counts.append(kept.shells[0])
    np.testing.assert_array_equal(counts[0], counts[1])
    shells, step = kept.shells
    D = dense.sq_distances.copy()
    np.fill_diagonal(D, np.inf)
    order, sq = kept.sorted_rows()
    x, x0 = (np.sqrt(D), np.sqrt(sq[:, -1:])) if kernel == "exponential" else (D, sq[:, -1:])
    shell = np.clip(np.floor((x - x0) / step), 0, shells.shape[1] - 1).astype(int)
    dropped = np.isfinite(D)
    dropped[np.arange(600)[:, None], order] = False
    for i in range(600):
        np.testing.assert_array_equal(
            np.bincount(shell[i, dropped[i]], minlength=shells.shape[1]), shells[i]
        )
    for s in sigma * np.array([0.25, 0.5, 1.0, 2.0, 4.0]):
        true = true_dropped_share(dense, kept, s).max()
        assert true <= kept.dropped_share(s) * (1 + 1e-9)
        assert true <= kept.coupling_bound(s)[2] * (1 + 1e-9)
    true = true_dropped_share(dense, kept, sigma).max()
    assert kept.coupling_bound(sigma)[2] <= np.exp(0.5) * true


def test_cover_widens_to_what_the_rows_need(monkeypatch):
    """The width cover() picks is at least the fewest neighbours that keep every row within
    drop_tol (from the dense weights) and at most 1.25 times it; the old bound, every dropped
    point at the last kept distance, asked for all pairs here (negative control)."""
    narrow(monkeypatch, 32)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((2500, 2))
    sigma, tol = 0.2, 1e-6
    kept = pk.DistanceGraph(X, drop_tol=tol)
    kept.cover(sigma)
    dense = pk.DistanceGraph(X, drop_tol=0)
    W = np.sort(dense.weights(sigma), axis=1)[:, ::-1]
    rest = W.sum(axis=1, keepdims=True) - np.cumsum(W, axis=1)
    fewest = int(((rest > tol).sum(axis=1) + 1).max())
    assert fewest <= kept.width <= 1.25 * fewest
    assert true_dropped_share(dense, kept, sigma).max() <= tol
    loose = pk.DistanceGraph(X, drop_tol=tol)
    loose._build(kept.width)  # no shells: every dropped point counted at the last kept
    assert not loose.covers(sigma)


@pytest.mark.filterwarnings("ignore:.*leaves out up to:UserWarning")
def test_cover_within_the_budget_and_a_warning_at_the_end_of_tuning(monkeypatch):
    narrow(monkeypatch, 8)
    X, _ = small_problem(1, n=400)
    y = (X[:, 0] > 0).astype(int)
    budget = graphs.dnn_table_bytes(400, 20) / 2**20
    kept = pk.DistanceGraph(X, drop_tol=1e-6, working_memory=budget)
    with pytest.raises(ValueError, match="working_memory"):
        kept.cover(5.0)
    assert kept.cover(5.0, strict=False) and kept.width == 20 and not kept.covers(5.0)
    with pm.Model():
        pk.DistanceNN(
            "y",
            X=X,
            beta=pm.Uniform("beta", 0, 3),
            sigma=pm.Uniform("sigma", 2.0, 3.0),
            observed=y,
            drop_tol=1e-6,
            working_memory=budget,
        )
        with pytest.warns(UserWarning, match="as many as working_memory allows"):
            pm.sample(
                draws=5,
                tune=30,
                chains=1,
                random_seed=2,
                progressbar=False,
                compute_convergence_checks=False,
            )
