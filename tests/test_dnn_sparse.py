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
from pymc_knn.kernels import mcmc
from pymc_knn.kernels.energy import energy
from pymc_knn.kernels.structure import (
    CUT_SLACK,
    LOG_NEGLIGIBLE,
    NO_DISTANCE_TABLE,
    NO_SHELLS,
    class_members,
    dnn_table_cumulative,
    exp_negligible_into,
    rows_energies,
    rows_energy,
    rows_energy_columns,
)
from pymc_knn.kernels.swendsen_wang import swendsen_wang_rows
from pymc_knn.testing import all_labelings, label_probabilities

from conftest import poison_past_ends, small_problem
from test_samplers import ALPHA, SWEEPS, chi2_pvalue

KERNEL_SIGMAS = [("gaussian", [0.3, 1.0]), ("exponential", [2.0, 8.0]), ("ball", [0.5, 1.2])]


@pytest.fixture
def ripley():
    d = pk.datasets.load_ripley("train")
    return np.asarray(d.X), np.asarray(d.y)


def narrow(monkeypatch, width):
    monkeypatch.setattr(graphs, "DNN_START_WIDTH", width)


def test_row_weights_exponential_within_an_ulp_of_libm():
    """The rows' own exponential (vectorised) against numpy's over the arguments a row's
    weights take, with the reduction's edges; exact at 0 (the nearest point's weight)."""
    half = np.log(2.0) / 2
    edges = [0.0, -0.0, -1e-300, -1e-17, LOG_NEGLIGIBLE, -half, np.nextafter(-half, 0), -1.5 * half]
    x = np.concatenate([edges, np.random.default_rng(0).uniform(LOG_NEGLIGIBLE, 0, 100_000)])
    w = x.copy()
    exp_negligible_into(w, w.size - 3)  # only the first end entries
    ref = np.exp(x)
    assert np.all(np.abs(w[:-3] - ref[:-3]) <= np.spacing(ref[:-3]))
    assert np.array_equal(w[-3:], x[-3:]) and w[0] == 1.0 and w[1] == 1.0


def test_class_members_group_the_points_by_class_in_order():
    members, starts = class_members(np.array([2, 0, 2, 2, 0, 3]), 4)
    assert starts.tolist() == [0, 2, 2, 5, 6]  # class 1 has none
    assert members.tolist() == [1, 4, 0, 2, 3, 5]


def test_rows_energies_add_each_rows_weights_within_its_class():
    """The energies a class at a time, four running sums a row, against a plain loop: rows of
    0 to 11 entries (every length mod 4), three classes of which the labels take two, class
    weights, a floor; the two tables' pass gives each table's energy alone, to the bit."""
    r = np.random.default_rng(5)
    n, width = 40, 11
    order = np.array([r.permutation(np.delete(np.arange(n), i))[:width] for i in range(n)])
    order = order.astype(np.int32)
    z = r.choice([0, 2], n)
    a = np.array([1.0, 1.3, 0.7])
    tables = []
    for _ in range(2):
        w = np.sort(r.random((n, width)), axis=1)[:, ::-1]
        C = np.cumsum(w, axis=1) / w.sum(axis=1, keepdims=True)
        ends, floor = r.integers(0, width + 1, n), 0.01 * r.random(n)
        expected = 0.0
        for i in range(n):
            row = floor[i] * (np.sum(z == z[i]) - 1)
            prev = 0.0
            for q in range(ends[i]):
                row += (C[i, q] - prev) * (z[order[i, q]] == z[i])
                prev = C[i, q]
            expected += a[z[i]] * row
        e = rows_energy(order, C, ends, z, a, floor, False)
        assert e == pytest.approx(expected, rel=1e-13)
        tables.append(((C, ends, floor), e))
    ((C0, e0, f0), alone0), ((C1, e1, f1), alone1) = tables
    assert (e0 < e1).any() and (e1 < e0).any()
    assert rows_energies(order, C0, e0, f0, C1, e1, f1, z, a, False) == (alone0, alone1)


def test_a_pass_over_many_labellings_gives_each_energy_as_alone():
    """:func:`rows_energy_columns` (a relaxation check's readings in one pass) gives each
    column's energy to the bit as :func:`rows_energy` alone: rows of 0 to 11 entries, a floor,
    class weights, labels over more points than the table has rows, the columns past ``m``
    ignored."""
    r = np.random.default_rng(8)
    n, width, points = 30, 11, 34
    order = np.array([r.permutation(np.delete(np.arange(points), i))[:width] for i in range(n)])
    order = order.astype(np.int32)
    w = np.sort(r.random((n, width)), axis=1)[:, ::-1]
    C = np.cumsum(w, axis=1) / w.sum(axis=1, keepdims=True)
    ends, floor = r.integers(0, width + 1, n), 0.01 * r.random(n)
    a = np.array([1.0, 1.3, 0.7])
    Z = r.integers(0, 3, (points, 7)).astype(np.int8)
    Z[:, 6] = -1  # past m: never read (an index of -1 would count in class 2's totals)
    got = rows_energy_columns(order, C, ends, floor, Z, 6, a)
    alone = [
        rows_energy(order, C, ends, Z[:, t].astype(np.int64), a, floor, False) for t in range(6)
    ]
    assert got.tolist() == alone
    assert len(set(alone)) == 6


@pytest.mark.parametrize("table", ["kept", "full"])
def test_the_couplings_energy_of_the_labels_by_class_with_the_floor(table, monkeypatch):
    """The coupling's ``E(y)``, its rows a class at a time with the ball's floor carried
    (a kept table, and a full one ending at the balls' edges), is the labels' energy under the
    dense coupling: three classes of unequal sizes, unequal class weights."""
    narrow(monkeypatch, 3)
    X, _ = small_problem(4, n=9)
    graph = pk.DistanceGraph(X, kernel="ball", epsilon=0.2, drop_tol=0.5 if table == "kept" else 0)
    sigma = 0.9 * pk.DistanceGraph(X, kernel="ball", epsilon=0.2, drop_tol=0.5).sigma_cover()
    dense = pk.DistanceGraph(X, kernel="ball", epsilon=0.2).coupling(sigma)
    y = np.array([2, 0, 0, 1, 2, 0, 0, 2, 0])
    a = np.array([1.0, 1.6, 0.7])
    order, sq = graph.sorted_rows()
    C, floor, bound = np.empty(sq.shape), np.empty(9), np.zeros(1)
    ends = np.empty(9, dtype=np.int64)
    kernel = graphs.DNN_KERNELS["ball"]
    args = (NO_SHELLS, 0.0, 0.0, ends, False, table == "full", NO_DISTANCE_TABLE)
    ey = dnn_table_cumulative(sq, order, sigma, kernel, 0.2, C, y, a, 8, floor, bound, *args)
    assert floor.min() > 0 and ends.max() < 8  # the floor is carried, not written out
    assert ey == pytest.approx(energy(*dense[1:4], y, a), rel=1e-12)
    assert ey == pytest.approx(rows_energy(order, C, ends, y, a, floor, False), rel=1e-14)


def test_default_drop_tol_keeps_every_pair_on_small_data(ripley):
    X, _ = ripley
    g = pk.DistanceGraph(X)
    assert g.drop_tol == 0.0 and not g.sparse and g.width == len(X) - 1
    assert graphs.default_drop_tol(2001) == graphs.DEFAULT_DROP_TOL


@pytest.mark.parametrize("kernel,sigmas", KERNEL_SIGMAS)
def test_full_table_equals_dense_on_ripley(kernel, sigmas, ripley):
    """A kept table that holds every pair, with a drop_tol below float64's resolution of a
    row: couplings, energies, pseudo-likelihoods and the predictive strengths of new points as
    the dense model's."""
    X, y = ripley
    dense = pk.DistanceGraph(X, kernel=kernel)
    kept = pk.DistanceGraph(
        X, kernel=kernel, drop_tol=1e-16, sigma_max=1e-3 if kernel == "exponential" else 1e3
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


@pytest.mark.parametrize("table", ["kept", "full"])
@pytest.mark.parametrize("a", [None, [1.0, 1.6]], ids=["equal", "weighted"])
def test_swendsen_wang_with_the_floor_matches_enumeration(a, table, monkeypatch):
    """The floor's bond events (a large epsilon, so that they happen) keep the exact law, on a
    kept table and on a full one whose rows end at the balls' edges (``carry_floor``)."""
    narrow(monkeypatch, 3)
    X, _ = small_problem(3, n=8)
    kept = pk.DistanceGraph(X, kernel="ball", epsilon=0.2, drop_tol=0.5)
    sigma = 0.9 * kept.sigma_cover()
    assert kept.width == 3
    full = pk.DistanceGraph(X, kernel="ball", epsilon=0.2)
    dense = full.coupling(sigma)
    aw = np.ones(2) if a is None else np.asarray(a)
    order, sq = (kept if table == "kept" else full).sorted_rows()
    C, floor, bound = np.empty(sq.shape), np.empty(8), np.zeros(1)
    ends = np.empty(8, dtype=np.int64)
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
        0.0,
        ends,
        False,
        table == "full",
        NO_DISTANCE_TABLE,
    )
    assert bound[0] == 0.0 and floor.min() > 0 and ends.max() < 7
    y = np.arange(8) % 2
    assert np.isclose(rows_energy(order, C, ends, y, aw, floor, False), energy(*dense[1:4], y, aw))
    probs = label_probabilities(dense, 1.5, 2, class_weights=a)
    rng = np.random.default_rng(5)
    starts = all_labelings(8, 2)[rng.choice(probs.size, size=12_000, p=probs)]
    for z in starts:
        swendsen_wang_rows(order, C, ends, z, 1.5, aw, SWEEPS, rng, floor)
    assert chi2_pvalue(starts, probs, 2) > ALPHA
    # negative control: without the floor the same sweeps leave the law
    starts = all_labelings(8, 2)[rng.choice(probs.size, size=12_000, p=probs)]
    for z in starts:
        swendsen_wang_rows(order, C, ends, z, 1.5, aw, SWEEPS, rng)
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


def cut_rows(graph, sigma):
    """Each row's kept points at ``sigma`` (a boolean ``n x n`` mask) and its ends."""
    ends = graph.coupling_bound(sigma)[3]
    order = graph.sorted_rows()[0]
    keep = np.zeros((graph.n_points, graph.n_points), dtype=bool)
    for i, e in enumerate(ends):
        keep[i, order[i, :e]] = True
    return keep, ends


@pytest.mark.parametrize("kernel,sigmas", [("gaussian", (0.15, 0.3)), ("exponential", (24, 12))])
def test_rows_keep_their_nearest_until_the_rest_is_within_drop_tol(kernel, sigmas):
    """At each sigma a row of a kept table keeps the fewest of its nearest others whose rest is
    within drop_tol of its dense weight, normalised over them; within 2 drop_tol of the dense
    row in total variation, and the reported bound is at least the true share left out."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((400, 2))
    dense = pk.DistanceGraph(X, kernel=kernel)
    for tol in (1e-6, 1e-3):
        kept = pk.DistanceGraph(
            X, kernel=kernel, drop_tol=tol, sigma_max=1e-3 if kernel == "exponential" else 1e3
        )
        assert kept.width == 399  # the table holds every pair: only the cuts leave any out
        for s in sigmas:
            W = dense.weights(s)
            keep, ends = cut_rows(kept, s)
            left_out = (W * ~keep).sum(axis=1)
            assert left_out.max() <= tol * (1 + 1e-9)
            assert left_out.max() <= kept.coupling_bound(s)[2] * (1 + 1e-9)
            # the fewest: one point fewer would leave out more than drop_tol (within the share
            # CUT_SLACK of it where the weights far out are bounded, not summed)
            order = kept.sorted_rows()[0]
            one_more = left_out + W[np.arange(400), order[np.arange(400), ends - 1]]
            assert (one_more[ends > 1] > tol * (1 - 2 * CUT_SLACK)).all()
            np.testing.assert_allclose(kept.weights(s), W * keep / (W * keep).sum(1)[:, None])
            assert np.abs(kept.weights(s) - W).sum(axis=1).max() <= 2 * tol * (1 + 1e-9)
            assert ends.mean() < 0.5 * kept.width  # what the cut saves


@pytest.mark.parametrize("kernel,sigma", [("gaussian", 1.0), ("exponential", 1.5)])
def test_swendsen_wang_on_cut_rows_matches_enumeration(kernel, sigma):
    """The step methods' sweep on rows cut at drop_tol (a large one, so that the cut model is
    far from the dense one) keeps the cut model's exact law; sweeping the dense rows does not
    (negative control)."""
    X, _ = small_problem(3, n=8)
    kept = pk.DistanceGraph(X, kernel=kernel, drop_tol=0.3)
    dense = pk.DistanceGraph(X, kernel=kernel)
    aw = np.ones(2)
    C, _, _, ends = kept.coupling_bound(sigma)
    assert ends.max() < 7
    order = kept.sorted_rows()[0]
    probs = label_probabilities(kept.coupling(sigma), 1.5, 2)
    rng = np.random.default_rng(5)
    starts = all_labelings(8, 2)[rng.choice(probs.size, size=12_000, p=probs)]
    for z in starts:
        swendsen_wang_rows(order, C, ends, z, 1.5, aw, SWEEPS, rng)
    assert chi2_pvalue(starts, probs, 2) > ALPHA
    C, _, _, ends = dense_cumulative(dense, sigma)
    starts = all_labelings(8, 2)[rng.choice(probs.size, size=12_000, p=probs)]
    for z in starts:
        swendsen_wang_rows(order, C, ends, z, 1.5, aw, SWEEPS, rng)
    assert chi2_pvalue(starts, probs, 2) < 1e-6


def dense_cumulative(graph, sigma):
    from pymc_knn.kernels.structure import dnn_row_cumulative

    order, sq = graph.sorted_rows()
    C, ends = np.empty(sq.shape), np.empty(graph.n_points, dtype=np.int64)
    dnn_row_cumulative(
        sq,
        order,
        sigma,
        graphs.DNN_KERNELS[graph.kernel],
        graph.epsilon,
        C,
        ends,
        np.zeros(graph.n_points, dtype=np.int64),
        np.ones(1),
    )
    return C, None, None, ends


@pytest.mark.parametrize("width", [None, 60])
def test_predictive_strengths_of_cut_rows(width, monkeypatch):
    """The strengths of new points on a table with cut rows against the joint model written
    out in numpy: each training row keeps its points at sigma and gains a new point nearer than
    the last of them (renormalised), and the new point's own row is cut by the same rule (the
    points beyond its table counted at its last kept distance)."""
    if width is not None:
        narrow(monkeypatch, width)
    rng = np.random.default_rng(9)
    X, X_new = rng.standard_normal((300, 2)), rng.standard_normal((25, 2))
    y = (X[:, 0] > 0).astype(int)
    tol, sigmas = 1e-3, np.array([0.15, 0.3])
    reach = {"sigma_max": 1e3} if width is None else {}
    kept = pk.DistanceGraph(X, drop_tol=tol, standardize=False, **reach)
    n, L = 300, kept.width
    assert (L == n - 1) == (width is None)
    h = kept.strengths(X_new, y, sigmas, np.ones(2))
    order, sq = kept.sorted_rows()
    D = ((X_new[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    for t, s in enumerate(sigmas):
        keep, ends = cut_rows(kept, s)
        K = lambda d2: np.exp(-d2 / (2 * s * s))  # noqa: E731
        Wt = K(np.where(keep, ((X[:, None] - X[None]) ** 2).sum(-1), np.inf))
        S = Wt.sum(axis=1)
        last = sq[np.arange(n), ends - 1]
        for a in range(25):
            own = np.argsort(D[a], kind="stable")[: n if width is None else L]
            w = K(D[a, own])
            m = reference_cut(w / w[0], (n - own.size) * w[-1] / w[0], tol)
            expect = np.bincount(y[own[:m]], weights=w[:m] / w[:m].sum(), minlength=2)
            enters = D[a] < last if width is None else (D[a] < last) & (D[a] < sq[:, -1])
            back = K(D[a]) / (S + K(D[a]))
            expect += np.bincount(y[enters], weights=back[enters], minlength=2)
            np.testing.assert_allclose(h[a, t], expect, rtol=1e-9, atol=1e-12)


def reference_cut(w, dropped, tol):
    """The points a row keeps (relative weights ``w``, nearest first, and a bound ``dropped``
    on the points beyond), as docs/scaling.md states the rule: weights summed outward until
    each one left, at most the last summed, bounds the rest within ``CUT_SLACK`` of the
    allowance; then the fewest whose rest stays within it."""
    allowed = tol / (1 - tol)
    L, kept, p = w.size, np.cumsum(w), w.size
    for r in range(L):
        if (L - 1 - r) * w[r] + dropped <= CUT_SLACK * allowed * kept[r]:
            p = r + 1
            break
    rest = dropped + (L - p) * w[p - 1] if p < L else dropped
    m = p
    while m > 1 and rest + w[m - 1] <= allowed * (kept[p - 1] - w[m - 1 : p].sum()):
        rest += w[m - 1]
        m -= 1
    return m


@pytest.mark.parametrize("kernel", ["gaussian", "exponential", "ball"])
def test_pseudo_likelihood_grid_of_a_table_that_holds_every_pair(kernel):
    """A table that covers every sigma (the exponential kernel's cover is then the rate 0): the
    search grid spans the pairwise distances' range, as the dense model's does (it raised
    ZeroDivisionError for the exponential kernel)."""
    X, _ = small_problem(3, n=20)
    kept = pk.terms.PottsTerm(pk.DistanceGraph(X, kernel=kernel, drop_tol=1e-3), 2)
    dense = pk.terms.PottsTerm(pk.DistanceGraph(X, kernel=kernel), 2)
    assert kept.graph.width == 19
    grid, reference = kept.pseudo_likelihood_grid(), dense.pseudo_likelihood_grid()
    assert grid.size == 25 and np.all(np.isfinite(grid)) and np.all(np.diff(grid) > 0)
    # the same smallest distance; the largest from an O(n) bound on the diameter, above it
    inner = (grid[-1], reference[-1]) if kernel == "exponential" else (grid[0], reference[0])
    assert inner[0] == pytest.approx(inner[1])
    assert grid[-1] <= reference[-1] if kernel == "exponential" else grid[-1] >= reference[-1]


def _dnn_step(X, y, kernel, **graph_kwargs):
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        sigma = pm.Uniform("sigma", 0, 2)
        pk.DistanceNN("y", beta=beta, sigma=sigma, X=X, kernel=kernel, observed=y, **graph_kwargs)
        return pk.Exchange(rng=0)


@pytest.mark.parametrize("kernel", ["gaussian", "exponential", "ball"])
@pytest.mark.parametrize("drop_tol", [0.0, 1e-6], ids=["dense", "kept"])
def test_couplings_on_the_thread_pool_equal_the_serial_ones(kernel, drop_tol):
    """A table of at least PARALLEL_PAIRS entries: its couplings and energies on the thread
    pool are the serial ones to the bit (and are so on a narrow table with the ball's floor);
    two tables' energies in one pass are each table's alone, serial or threaded."""
    from pymc_knn.kernels import mcmc
    from pymc_knn.kernels.structure import PARALLEL_PAIRS

    r = np.random.default_rng(3)
    n = 2000 if drop_tol else 1100
    X = r.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * r.normal(size=n) > 0).astype(int)
    # exponential: sigma is a rate, and the table covers the rates above sigma_max
    cover, sigmas = {
        "gaussian": (0.2, (0.15, 0.6)),
        "exponential": (20.0, (30.0, 8.0)),
        "ball": (1.0, (0.5, 1.5)),
    }[kernel]
    kwargs = {"drop_tol": drop_tol, "sigma_max": cover} if drop_tol else {}
    f = _dnn_step(X, y, kernel, **kwargs).field
    assert f.sorted_sq.size >= PARALLEL_PAIRS
    assert (f.sorted_sq.shape[1] < n - 1) == bool(drop_tol)
    z = r.integers(0, 2, size=n)
    pairs = []
    for sigma in sigmas:
        f.dropped[:] = (0.0, 0.0, np.inf)
        serial = mcmc.coupling(f._replace(parallel=False), sigma, False)
        bound = f.dropped[0]
        f.dropped[0] = 0.0
        threaded = mcmc.coupling(f._replace(parallel=True), sigma, False)
        assert f.dropped[0] == bound
        np.testing.assert_array_equal(threaded[10], serial[10])  # row ends
        np.testing.assert_array_equal(threaded[9], serial[9])  # floors
        for i in range(0, n, 97):
            np.testing.assert_array_equal(
                threaded[7][i, : serial[10][i]], serial[7][i, : serial[10][i]]
            )
        assert threaded[8] == serial[8]  # E(y)
        e_serial = mcmc._energy(f._replace(parallel=False), serial, z)
        assert mcmc._energy(f._replace(parallel=True), threaded, z) == e_serial
        assert mcmc._energy(f, serial, f.y) == pytest.approx(serial[8], rel=1e-12)
        pairs.append((serial, threaded, e_serial))
    # both tables' energies in one pass (a sigma move's), each row ending first in one of them
    (s0, t0, e0), (s1, t1, e1) = pairs
    assert (s0[10] < s1[10]).any() or (s1[10] < s0[10]).any()
    for parallel, c0, c1 in ((False, s0, s1), (True, t0, t1)):
        g = f._replace(parallel=parallel)
        assert mcmc._energies(g, c0, c1, z) == (e0, e1)
        assert mcmc._energies(g, c1, c0, z) == (e1, e0)


@pytest.mark.parametrize("kernel", ["gaussian", "exponential", "ball"])
@pytest.mark.parametrize("drop_tol", [0.0, 1e-6], ids=["dense", "kept"])
def test_an_exponential_full_table_keeps_its_distances_and_couples_to_the_bit(kernel, drop_tol):
    """An exponential kernel's full table keeps its distances (no square root a coupling); its
    couplings, row ends and E(y) are those of the square roots to the bit, at rates whose rows
    end inside the table and at one whose every row runs through it. Other kernels and kept
    tables keep none."""
    r = np.random.default_rng(4)
    n = 300 if not drop_tol else 2100
    X = r.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * r.normal(size=n) > 0).astype(int)
    kwargs = {"drop_tol": drop_tol, "sigma_max": 20.0} if drop_tol else {}
    f = _dnn_step(X, y, kernel, **kwargs).field
    keeps = kernel == "exponential" and not drop_tol
    assert f.sorted_d.shape == (f.sorted_sq.shape if keeps else (0, 0))
    if not keeps:
        return
    np.testing.assert_array_equal(f.sorted_d, np.sqrt(f.sorted_sq))
    roots = f._replace(sorted_d=NO_DISTANCE_TABLE)
    ends = []
    for sigma in (60.0, 8.0, 0.05):
        kept, rooted = mcmc.coupling(f, sigma, False), mcmc.coupling(roots, sigma, False)
        np.testing.assert_array_equal(kept[10], rooted[10])  # row ends
        for i in range(n):
            np.testing.assert_array_equal(kept[7][i, : kept[10][i]], rooted[7][i, : kept[10][i]])
        assert kept[8] == rooted[8]  # E(y)
        ends.append(kept[10].mean())
    assert ends[0] < ends[1] < ends[2] == n - 1


def test_the_thread_pool_is_for_a_chain_alone_in_the_main_process():
    """The main process may use the thread pool (when numba has several threads); a
    multiprocessing child, as PyMC's chain processes are, may not."""
    import multiprocessing

    import numba

    from pymc_knn._forksafe import may_thread

    assert may_thread() == (numba.get_num_threads() > 1)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(may_thread) is False
    X, y = small_problem(1, n=12)
    step = _dnn_step(X, y, "gaussian")
    assert step.field.parallel == may_thread()


def test_pm_sample_draws_the_same_with_and_without_the_thread_pool():
    """A d-nn chain alone in the main process (``cores=1``) on a table past PARALLEL_PAIRS: the
    same draws on numba's threads as on one."""
    import numba

    if numba.get_num_threads() < 2:
        pytest.skip("numba has one thread here")
    r = np.random.default_rng(5)
    X = r.normal(size=(1100, 2))
    y = (X[:, 0] + 0.5 * r.normal(size=1100) > 0).astype(int)
    draws = []
    for threads in (numba.get_num_threads(), 1):
        numba.set_num_threads(threads)
        try:
            with pm.Model():
                beta = pm.Uniform("beta", 0, 4)
                sigma = pm.Uniform("sigma", 0, 2)
                pk.DistanceNN("y", beta=beta, sigma=sigma, X=X, observed=y)
                idata = pm.sample(
                    draws=10,
                    tune=5,
                    chains=1,
                    cores=1,
                    random_seed=2,
                    step=pk.Exchange(iterations_per_draw=4),
                    progressbar=False,
                    compute_convergence_checks=False,
                )
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        draws.append(idata.posterior)
    assert np.unique(draws[0]["sigma"].values).size > 1  # sigma moves: tables on the pool
    for name in ("beta", "sigma"):
        np.testing.assert_array_equal(draws[0][name].values, draws[1][name].values)


@pytest.mark.parametrize("kernel, sigmas", [("gaussian", (0.5, 0.6)), ("ball", (0.8, 1.1))])
def test_a_table_is_never_read_past_a_rows_end(kernel, sigmas):
    """A coupling's running sums are written for ``r < ends[i]`` only (the rest is whatever the
    memory held): the energy, the auxiliary draws and the bridge give the same numbers, to the
    bit, when every entry past a row's end is NaN (a test helper that read an empty row's
    garbage times 0 failed on CI with NaN). Rows end early where the gaussian's weights become
    negligible and at the ball's edge (its floor carried through class totals)."""
    X, y = small_problem(5, n=120, G=3)
    with pm.Model():
        beta, sigma = pm.Uniform("beta", 0, 3), pm.Uniform("sigma", 0.1, 5)
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel=kernel, observed=y)
        step = pk.Exchange(sampler="swendsen_wang", sweeps=3)
    f, aux = step.field, step.chain.aux
    clean = [mcmc.coupling(f, s, False) for s in sigmas]
    poisoned = [c[:7] + (c[7].copy(),) + c[8:] for c in clean]
    assert all(poison_past_ends(c) > 0 for c in poisoned)

    def numbers(c0, c1):
        z = y.astype(np.int64).copy()
        rng = np.random.default_rng(5)
        out = [mcmc._energy(f, c0, z), mcmc.auxiliary_draw(f, aux, c1, 1.3, sigmas[1], z, rng)]
        out.append(mcmc.bridged_log_ratio_rows(f, c0, c1, 1.2, 1.4, z, 4, rng))
        return out, z

    (a, za), (b, zb) = numbers(*clean), numbers(*poisoned)
    assert a == b
    np.testing.assert_array_equal(za, zb)
