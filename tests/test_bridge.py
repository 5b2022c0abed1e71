"""The bridged exchange ratio (Murray et al. 2006, section 5) against enumeration, for kNN and
d-nn terms.

With ``z_0`` an exact draw from ``f(. | theta1)`` and each bridging sweep leaving its field
invariant, ``exp`` of the bridged term is an unbiased estimate of ``Z(theta0) / Z(theta1)``
(annealed importance sampling): that is what makes the exchange algorithm with bridging exact.
On 8 points every ``Z`` is a finite sum.
"""

import numpy as np
import pymc as pm
import pytest
from scipy.special import logsumexp

import pymc_knn as pk
from pymc_knn.kernels.energy import (
    energy,
    equal_pairs,
    equal_pairs_columns,
    nested_equal_pairs,
    nested_equal_pairs_columns,
)
from pymc_knn.kernels.enumeration import decode_labelling, state_energies
from pymc_knn.kernels import mcmc
from pymc_knn.kernels.mcmc import (
    FIELD_ROW_SWEEP,
    GRAPH_MOVE,
    MAX_FIELD_SWEEPS,
    READING_BYTES,
    WRITTEN_ROW,
    bridged_log_ratio,
    bridged_log_ratio_rows,
    field_sweeps,
)
from pymc_knn.kernels.swendsen_wang import swendsen_wang_rows, swendsen_wang_sweeps
from pymc_knn.step_methods._adaptation import Adaptation

from conftest import poison_past_ends, small_problem

DRAWS = 20000
CASES = {  # (neighbours, class weights, (beta0, k0), (beta1, k1))
    "symmetrised": ("symmetrised", [1.0, 1.0], (0.9, 2), (1.3, 4)),
    "equal, 3 classes": ("equal", [1.0, 1.0, 1.0], (1.6, 3), (1.1, 1)),
    "equal, 3 weighted classes": ("equal", [1.0, 0.6, 1.4], (1.6, 3), (1.1, 1)),
}


def _problem(case):
    neighbours, a, theta0, theta1 = CASES[case]
    a = np.asarray(a)
    X, _ = small_problem(3, n=8, G=a.size)
    g = pk.KNNGraph(X, k_max=5, neighbours=neighbours)

    def edges(k):
        c = g.coupling(k)
        return c.src, c.dst, c.weight, c.uniform_weight

    c0, c1 = edges(theta0[1]), edges(theta1[1])
    log_q0, log_q1 = (
        b * state_energies(*c[:3], a, 8, a.size) for b, c in ((theta0[0], c0), (theta1[0], c1))
    )
    exact = np.exp(logsumexp(log_q0) - logsumexp(log_q1))
    return a, c0, c1, theta0[0], theta1[0], exact, np.exp(log_q1 - logsumexp(log_q1))


def _on_exact_draws(p1, n_classes, term, seed):
    """``term(z, rng)`` for ``DRAWS`` exact draws ``z`` from the law ``p1`` of ``f(. | theta1)``."""
    rng = np.random.default_rng(seed)
    states = rng.choice(p1.size, size=DRAWS, p=p1)
    out = np.empty(DRAWS)
    z = np.empty(8, dtype=np.int64)
    for i, s in enumerate(states):
        decode_labelling(s, n_classes, z)
        out[i] = term(z, rng)
    return out


def _estimates(ratio, case, n_bridge, seed=1):
    a, c0, c1, b0, b1, exact, p1 = _problem(case)
    terms = _on_exact_draws(
        p1, a.size, lambda z, rng: ratio(c0, c1, b0, b1, z, n_bridge, a, rng), seed
    )
    return terms, exact


def _z_score(log_terms, exact):
    w = np.exp(log_terms)
    return (w.mean() - exact) / (w.std() / np.sqrt(w.size))


def shifted_schedule(c0, c1, beta0, beta1, z, n_bridge, a, rng):
    """A broken bridge: each sweep runs in the field before its own (``t_{s-1}``), so the
    draws lag one field behind the weights taken on them."""
    src, dst = np.concatenate([c0[0], c1[0]]), np.concatenate([c0[1], c1[1]])
    total = 0.0
    for s in range(n_bridge + 1):
        total += beta0 * energy(*c0[:3], z, a) - beta1 * energy(*c1[:3], z, a)
        if s == n_bridge:
            break
        t = s / (n_bridge + 1)
        w = np.concatenate([t * beta0 * c0[2], (1 - t) * beta1 * c1[2]])
        swendsen_wang_sweeps(src, dst, w, 0.0, z, 1.0, a, 1, rng)
    return total / (n_bridge + 1)


DNN_CASES = {  # (kernel, drop_tol, class weights, (beta0, sigma0), (beta1, sigma1))
    "ball": ("ball", None, [1.0, 1.0], (1.4, 0.6), (1.8, 1.5)),
    "ball, a noisy move": ("ball", None, [1.0, 1.0], (2.5, 0.4), (1.0, 2.5)),
    "gaussian, rows cut": ("gaussian", 0.3, [1.0, 1.0], (1.2, 0.4), (1.9, 1.2)),
    "ball, floor, 3 weighted classes": ("ball", 0.3, [1.0, 0.6, 1.4], (1.9, 0.5), (1.3, 1.4)),
}


def _dnn_problem(case):
    """The field (as the steps hold it) and its couplings at both points, and what enumeration
    gives: ``Z(theta0) / Z(theta1)`` and the law of ``f(. | theta1)``."""
    kernel, drop_tol, a, theta0, theta1 = DNN_CASES[case]
    a = np.asarray(a)
    X, y = small_problem(3, n=8, G=a.size)
    with pm.Model():
        beta, sigma = pm.Uniform("beta", 0, 3), pm.Uniform("sigma", 0.2, 3)
        pk.DistanceNN(
            "y", X=X, beta=beta, sigma=sigma, kernel=kernel, drop_tol=drop_tol,
            class_weights=a if a.min() < a.max() else None, observed=y,
        )  # fmt: skip
        step = pk.Exchange(sampler="swendsen_wang", sweeps=1)
    f, graph = step.field, step.term.graph
    log_q = []
    couplings = []
    for beta, sigma in (theta0, theta1):
        c = mcmc.coupling(f, sigma, False)
        full = graph.coupling(sigma)
        energies = state_energies(full.src, full.dst, full.weight, a, 8, a.size)
        assert np.isclose(c[8], energy(full.src, full.dst, full.weight, y, a))  # one model
        couplings.append(c)
        log_q.append(beta * energies)
    exact = np.exp(logsumexp(log_q[0]) - logsumexp(log_q[1]))
    return f, couplings, theta0[0], theta1[0], exact, np.exp(log_q[1] - logsumexp(log_q[1]))


def _dnn_estimates(ratio, case, n_bridge, seed=1):
    f, (c0, c1), b0, b1, exact, p1 = _dnn_problem(case)
    terms = _on_exact_draws(
        p1, f.class_weights.size, lambda z, rng: ratio(f, c0, c1, b0, b1, z, n_bridge, rng), seed
    )
    return terms, exact


def read_in_place(f, c0, c1, beta0, beta1, z, n_bridge, rng):
    """The d-nn bridge with its fields' running sums read where the events fall (on 8 points
    the rows are short and :data:`~pymc_knn.kernels.mcmc.WRITTEN_ROW` writes them out)."""
    return bridged_log_ratio_rows(
        f, c0, c1, beta0, beta1, z, n_bridge, rng, np.nan, np.nan, 0, FIELD_ROW_SWEEP, READING_BYTES
    )


def several_sweeps(f, c0, c1, beta0, beta1, z, n_bridge, rng):
    """The d-nn bridge with as many sweeps a field as its mean row has entries (up to
    :data:`~pymc_knn.kernels.mcmc.MAX_FIELD_SWEEPS`), read in place: on 8 points a field has one
    sweep by default (:data:`~pymc_knn.kernels.mcmc.FIELD_ROW_SWEEP`)."""
    assert field_sweeps(c0[10], c1[10], 1) > 1
    return bridged_log_ratio_rows(
        f, c0, c1, beta0, beta1, z, n_bridge, rng, np.nan, np.nan, 0, 1, READING_BYTES
    )


def written_rows(f, c0, c1, beta0, beta1, z, n_bridge, rng, lag=0, sweeps=1):
    """The d-nn bridge with each field's running sums written out by numpy (``sweeps`` a
    field); with ``lag = 1`` a broken one, each sweep run in the field before its own
    (``t_{s-1}``)."""
    total = 0.0
    ends = np.maximum(c0[10], c1[10])
    rows = np.arange(c0[7].shape[1])
    carried = [  # C[i, r] is written for r < ends[i] only: an empty row's sums are 0
        np.where(
            c[10][:, None] > 0,
            np.take_along_axis(c[7], np.clip(rows[None, :], 0, c[10][:, None] - 1), axis=1),
            0.0,
        )
        for c in (c0, c1)
    ]
    for s in range(n_bridge + 1):
        total += beta0 * mcmc._energy(f, c0, z) - beta1 * mcmc._energy(f, c1, z)
        if s == n_bridge:
            break
        t = (s + 1 - lag) / (n_bridge + 1)
        mixed = t * beta0 * carried[0] + (1 - t) * beta1 * carried[1]
        floor = t * beta0 * c0[9] + (1 - t) * beta1 * c1[9]
        swendsen_wang_rows(f.order, mixed, ends, z, 1.0, f.class_weights, sweeps, rng, floor, None)
    return total / (n_bridge + 1)


def lagging_rows(f, c0, c1, beta0, beta1, z, n_bridge, rng):
    """A broken d-nn bridge: each sweep runs in the field before its own (``t_{s-1}``)."""
    return written_rows(f, c0, c1, beta0, beta1, z, n_bridge, rng, lag=1)


def nested_counts(c0, c1, beta0, beta1, z, n_bridge, a, rng):
    """The kNN bridge counting both graphs' equal pairs in one pass (symmetrised graphs)."""
    return bridged_log_ratio(
        c0, c1, beta0, beta1, z, n_bridge, a, rng, np.nan, np.nan, True, READING_BYTES
    )


# The kernels are called with every argument given: numba's dispatcher types the arguments of a
# call that leaves a default out in Python (about 0.6 ms a call here, 20,000 calls a test).


def two_counts(c0, c1, beta0, beta1, z, n_bridge, a, rng):
    """The kNN bridge as the step's kernel runs it, each graph's equal pairs counted apart."""
    return bridged_log_ratio(
        c0, c1, beta0, beta1, z, n_bridge, a, rng, np.nan, np.nan, False, READING_BYTES
    )


def rows(f, c0, c1, beta0, beta1, z, n_bridge, rng):
    """The d-nn bridge as the step's kernel runs it."""
    return bridged_log_ratio_rows(
        f,
        c0,
        c1,
        beta0,
        beta1,
        z,
        n_bridge,
        rng,
        np.nan,
        np.nan,
        WRITTEN_ROW,
        FIELD_ROW_SWEEP,
        READING_BYTES,
    )


ESTIMATES = {
    "knn": (_estimates, two_counts),
    "knn, one pass": (_estimates, nested_counts),
    "dnn": (_dnn_estimates, rows),
    "dnn, read in place": (_dnn_estimates, read_in_place),
    "dnn, several sweeps a field": (_dnn_estimates, several_sweeps),
}


@pytest.mark.parametrize(
    "kind, case",
    [("knn", c) for c in CASES]
    + [("knn, one pass", "symmetrised")]
    + [
        (kind, c)
        for kind in ("dnn", "dnn, read in place", "dnn, several sweeps a field")
        for c in DNN_CASES
    ],
)
@pytest.mark.parametrize("n_bridge", [0, 3])
def test_the_bridged_ratio_is_unbiased(kind, case, n_bridge):
    """kNN graphs, and d-nn fields whose running sums mix the two tables: rows of one length,
    rows cut at different lengths (drop_tol) and the ball kernel's floor."""
    estimates, ratio = ESTIMATES[kind]
    terms, exact = estimates(ratio, case, n_bridge)
    assert abs(_z_score(terms, exact)) < 4


@pytest.mark.parametrize("kind, case", [("knn", "symmetrised"), ("dnn", "ball, a noisy move")])
def test_bridging_divides_the_noise(kind, case):
    """Measured on the d-nn move: a variance of 11.8 nats^2 plain, 1.6 through 8 fields."""
    estimates, ratio = ESTIMATES[kind]
    plain, _ = estimates(ratio, case, 0)
    bridged, _ = estimates(ratio, case, 8)
    assert bridged.var() < 0.5 * plain.var()


@pytest.mark.parametrize(
    "kind, case, lagging",
    [("knn", "symmetrised", shifted_schedule), ("dnn", "ball", lagging_rows)],
    ids=["knn", "dnn"],
)
def test_the_check_rejects_a_lagging_bridge(kind, case, lagging):
    """Negative control: a bridge whose sweeps lag one field behind is biased (measured on the
    kNN case: z = -25 at 3 fields)."""
    terms, exact = ESTIMATES[kind][0](lagging, case, 3)
    assert abs(_z_score(terms, exact)) > 4


def assert_same_draws(out, y):
    """Each ``(term, labels)`` of ``out`` is the first's, to the bit, and the labels moved
    from ``y``."""
    assert not np.array_equal(out[0][1], y)
    for term, z in out[1:]:
        assert term == out[0][0]
        np.testing.assert_array_equal(z, out[0][1])


def dnn_couplings(kernel, sigmas):
    """A d-nn field of 120 points in 3 classes and its couplings at two ``sigmas``:
    ``(f, y, c0, c1)``."""
    X, y = small_problem(5, n=120, G=3)
    with pm.Model():
        beta, sigma = pm.Uniform("beta", 0, 3), pm.Uniform("sigma", 0.1, 5)
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel=kernel, observed=y)
        step = pk.Exchange(sampler="swendsen_wang", sweeps=1)
    f = step.field
    return (f, y, *(mcmc.coupling(f, s, False) for s in sigmas))


@pytest.mark.parametrize("row_sweep", [FIELD_ROW_SWEEP, 20], ids=["one sweep", "several"])
@pytest.mark.parametrize(
    "kernel, sigmas", [("gaussian", (0.5, 0.6)), ("exponential", (2.0, 2.6)), ("ball", (0.8, 1.1))]
)
def test_a_field_read_in_place_draws_as_one_written_out(kernel, sigmas, row_sweep):
    """A bridging field's running sums read where the events fall give the term and the labels
    of the field written out (the bridge's own way for short rows, and numpy's), to the bit:
    gaussian and exponential rows of 110-119 entries, the ball's of 0-64 ending apart; with one
    sweep a field (the default on such rows) and with several (one per 20 entries)."""
    f, y, c0, c1 = dnn_couplings(kernel, sigmas)
    for c in (c0, c1):
        poison_past_ends(c)
    assert not np.array_equal(c0[10], c1[10]) or kernel == "exponential"  # rows end apart
    sweeps = field_sweeps(c0[10], c1[10], row_sweep)
    assert sweeps == 1 if row_sweep == FIELD_ROW_SWEEP else 1 < sweeps < MAX_FIELD_SWEEPS
    for pair in ((c0, c1), (c1, c0)):  # the shorter rows' sums carried in either table
        out = []
        for written_row in (None, 0, 1 << 30):
            z = y.astype(np.int64).copy()
            rng = np.random.default_rng(3)
            args = f, *pair, 1.2, 1.6, z, 6, rng
            if written_row is None:
                term = written_rows(*args, sweeps=sweeps)
            else:
                term = bridged_log_ratio_rows(*args, np.nan, np.nan, written_row, row_sweep)
            out.append((term, z))
        assert_same_draws(out, y)


def test_field_sweeps_follow_the_mean_row():
    """One sweep per FIELD_ROW_SWEEP entries of the mean row (the longer table's), between 1 and
    MAX_FIELD_SWEEPS."""
    short, long = np.array([7, 9, 0]), np.array([3, 12, 9])
    assert field_sweeps(short, long, 3) == 3  # rows of 7, 12, 9: 28 / 3 / 3 = 3.1
    assert field_sweeps(short, long) == 1
    assert field_sweeps(np.full(5, 3 * FIELD_ROW_SWEEP), np.zeros(5, np.int64)) == 3
    assert field_sweeps(np.full(5, 10**6), np.zeros(5, np.int64)) == MAX_FIELD_SWEEPS


@pytest.mark.parametrize("k0, k1", [(3, 7), (7, 3), (5, 5)])
def test_one_pass_counts_draw_as_two(k0, k1):
    """A kNN bridge counting the equal pairs of both symmetrised graphs in one pass gives the
    term and labels of two passes, to the bit, on 60 points, the larger graph either side."""
    X, y = small_problem(6, n=60, G=2)
    g = pk.KNNGraph(X, k_max=8)
    a = np.ones(2)
    c0, c1 = ((c.src, c.dst, c.weight, c.uniform_weight) for c in map(g.coupling, (k0, k1)))
    out = []
    for nested in (False, True):
        z = y.astype(np.int64).copy()
        rng = np.random.default_rng(8)
        term = bridged_log_ratio(c0, c1, 1.1, 1.4, z, 5, a, rng, np.nan, np.nan, nested)
        out.append((term, z))
    assert_same_draws(out, y)


def test_many_labellings_equal_pairs_in_one_pass_are_each_alone():
    """The equal pairs of each of a table's first ``m`` columns of labels, counted in one pass
    over a kNN edge list (the symmetrised graph at 5, and its first 2 a row nested in it), are
    the counts of each column alone; columns past ``m`` are not read."""
    X, _ = small_problem(6, n=60, G=3)
    g = pk.KNNGraph(X, k_max=8)
    c = g.coupling(5)
    Z = np.random.default_rng(4).integers(0, 3, size=(60, 7)).astype(np.int8)
    Z[:, 5:] = 99  # never read
    counts = equal_pairs_columns(c.src, c.dst, Z, 5)
    big, small = nested_equal_pairs_columns(c.src, c.dst, Z, 5, 5, 2)
    for t in range(5):
        z = Z[:, t].astype(np.int64)
        assert counts[t] == equal_pairs(c.src, c.dst, z)
        assert (big[t], small[t]) == nested_equal_pairs(c.src, c.dst, z, 5, 2)
    assert np.unique(counts).size > 1  # the columns differ: each was counted on its own labels
    assert counts.size == big.size == small.size == 5


@pytest.mark.parametrize(
    "neighbours, nested", [("symmetrised", True), ("symmetrised", False), ("equal", False)]
)
@pytest.mark.parametrize("k0, k1", [(3, 7), (7, 3)])
def test_knn_fields_counted_together_draw_as_each_alone(neighbours, nested, k0, k1):
    """A kNN bridge that holds its fields' labels and counts their equal pairs in one pass for
    all gives the term and the labels of one pass a field, to the bit: its 9 fields (the draw's
    own, no energies given, and 8 bridging ones) in one pass, and two at a time (five passes)."""
    X, y = small_problem(6, n=60, G=3)
    g = pk.KNNGraph(X, k_max=8, neighbours=neighbours)
    a = np.ones(3)
    c0, c1 = ((c.src, c.dst, c.weight, c.uniform_weight) for c in map(g.coupling, (k0, k1)))
    out = []
    for hold_bytes in (0, READING_BYTES, 2 * 60):
        z = y.astype(np.int64).copy()
        rng = np.random.default_rng(8)
        term = bridged_log_ratio(c0, c1, 1.1, 1.4, z, 8, a, rng, np.nan, np.nan, nested, hold_bytes)
        out.append((term, z))
    assert_same_draws(out, y)


@pytest.mark.parametrize(
    "kernel, sigmas", [("gaussian", (0.5, 0.6)), ("exponential", (2.0, 2.6)), ("ball", (0.8, 1.1))]
)
def test_dnn_fields_read_together_draw_as_each_alone(kernel, sigmas):
    """A d-nn bridge that holds its fields' labels and computes their energies under each table
    in one pass for all gives the term and the labels of both energies a field, to the bit: 7
    fields in one pass, and two at a time (four passes), rows written out and read in place."""
    f, y, c0, c1 = dnn_couplings(kernel, sigmas)
    for written_row in (0, 1 << 30):
        out = []
        for hold_bytes in (0, READING_BYTES, 2 * 120):
            z = y.astype(np.int64).copy()
            rng = np.random.default_rng(3)
            args = f, c0, c1, 1.2, 1.6, z, 6, rng, np.nan, np.nan, written_row, FIELD_ROW_SWEEP
            out.append((bridged_log_ratio_rows(*args, hold_bytes), z))
        assert_same_draws(out, y)


@pytest.mark.parametrize("neighbours", ["symmetrised", "equal"])
def test_a_knn_moves_two_energies_are_each_alone(neighbours):
    """A ``k`` move's energies of one labelling at both graphs (the symmetrised model's in one
    pass, the smaller graph nested in the larger) are each graph's energy alone, to the bit,
    whichever graph is the larger."""
    X, y = small_problem(6, n=60, G=3)
    with pm.Model():
        beta, k = pm.Uniform("beta", 0, 3), pm.DiscreteUniform("k", 1, 12)
        pk.PottsKNN("y", X=X, beta=beta, k=k, neighbours=neighbours, observed=y)
        step = pk.Exchange(sampler="swendsen_wang", sweeps=1)
    f = step.field
    z = np.random.default_rng(2).integers(0, 3, size=60)
    for k0, k1 in ((3, 7), (7, 3), (5, 6)):
        c0, c1 = mcmc.coupling(f, k0, False), mcmc.coupling(f, k1, False)
        both = mcmc._energies(f, c0, c1, z)
        assert both == (mcmc._energy(f, c0, z), mcmc._energy(f, c1, z))
        assert both[0] != both[1]


@pytest.mark.parametrize("bridge, measured", [(None, True), (2, False)])
def test_the_kernel_measures_the_noise_only_where_the_bridging_is_tuned(
    bridge, measured, monkeypatch
):
    """While tuning, every graph move measures its noise (a second exchange term, with the move's
    two values of k) where the bridging is tuned from it, and none where it is fixed (the second
    term was computed there too, as dear as the first, and thrown away)."""
    from pymc_knn.step_methods import _adaptation

    X, y, *_ = pk.datasets.load_ripley("train")
    recorded = []
    real = _adaptation.Adaptation.observe

    def recording(self, trace, accept, cap, move, noise, bridge_sweeps=0):
        recorded.append((move.copy(), noise.copy()))
        return real(self, trace, accept, cap, move, noise, bridge_sweeps)

    monkeypatch.setattr(_adaptation.Adaptation, "observe", recording)
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 30)
        pk.PottsKNN("y", X=X, beta=beta, k=k, k_max=30, observed=y)
        step = pk.Exchange(bridge=bridge, iterations_per_draw=20, rng=0)
        point = model.initial_point()
        for _ in range(5):
            point, _ = step.step(point)
    move = np.concatenate([m for m, _ in recorded])
    noise = np.concatenate([v for _, v in recorded])
    graph = move == GRAPH_MOVE
    assert graph.sum() >= 20 and not np.isfinite(noise[~graph, 0]).any()
    if not measured:
        assert not np.isfinite(noise[:, 0]).any()
        return
    finite = np.isfinite(noise[:, 0])
    assert finite[graph].mean() >= 0.9
    # each measured pair comes with its move's two values of k, which differ
    ends = noise[finite, 1:]
    assert np.all(np.isin(ends, np.arange(1, 31))) and np.all(ends[:, 0] != ends[:, 1])


def test_a_move_is_sized_by_what_its_noise_follows():
    """The bridging fields of a graph move follow its size: for ``k`` ``|1/k - 1/k'|`` (the
    kNN weights are ``1/k``; the noise's variance follows that size wherever the move starts:
    docs/inference.md, "Bridged k moves"), for ``sigma`` the change of its free coordinate;
    the same for a move and its reverse, as the bridge's exactness needs."""
    X, y = small_problem(3, n=8, G=2)
    with pm.Model():
        beta, k = pm.Uniform("beta", 0, 3), pm.DiscreteUniform("k", 1, 4)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        knn = pk.Exchange(sampler="swendsen_wang", sweeps=1).field
    with pm.Model():
        beta, sigma = pm.Uniform("beta", 0, 3), pm.Uniform("sigma", 0.2, 3)
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, observed=y)
        dnn = pk.Exchange(sampler="swendsen_wang", sweeps=1).field
    free, graph = np.array([0]), np.array([1])
    p = Adaptation(
        1, np.array([True]), proposal_sd=0.5, k_radius=2.0, max_radius=np.array([3])
    ).proposal(free, graph, np.array([1]), np.array([4]))
    x0, x1 = np.array([1.0, 1.0]), np.array([1.2, 4.0])
    for a, b in ((x0, x1), (x1, x0)):
        assert mcmc.move_size(knn, p, a, b, a[1], b[1]) == pytest.approx(0.75)
        assert mcmc.move_size(dnn, p, a, b, 0.5, 0.7) == 3.0
    # a step of one in k is larger from k = 2 than from k = 3
    assert mcmc.move_size(knn, p, x0, x1, 2.0, 3.0) > mcmc.move_size(knn, p, x0, x1, 3.0, 4.0)
