"""Gibbs, Swendsen-Wang and CFTP draws against the exact probabilities of the oracle.

Each check draws N independent labelings and applies a chi-square goodness-of-fit test over all
labelings (states with expected count < 5 pooled) against the oracle's exact probabilities;
it fails when the p-value is below ALPHA. Seeds are fixed, so the outcome is deterministic. A
negative control shows that the same test rejects draws compared with a slightly wrong beta.

Gibbs and Swendsen-Wang are checked twice. Invariance: each chain starts from an exact draw of
the oracle and runs SWEEPS sweeps, so its end point must still follow the exact law whatever the
mixing time. Convergence: chains start from all-zero labels and run long enough to forget it
(Gibbs mixes slowly between the two near-ordered modes: 25 sweeps are not enough at beta = 1.5
on 8 points, 200 are); a sampler that left its input unchanged would fail this one.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import pymc_knn as pk
from pymc_knn.samplers import cftp, gibbs, swendsen_wang
from pymc_knn.testing import all_labelings, label_probabilities, labeling_index

from conftest import small_problem

ALPHA = 1e-3
N_DRAWS = 12_000
SWEEPS = 3
CONVERGENCE_SWEEPS = 200

# (graph kind, option, G, parameter k or sigma, beta, class weights)
CASES = [
    ("knn", "symmetrised", 2, 3, 1.5, None),
    ("knn", "equal", 2, 2, 1.8, None),
    ("knn", "symmetrised", 3, 2, 1.2, None),
    ("knn", "symmetrised", 2, 2, 1.2, [1.0, 1.7]),
    ("dnn", "gaussian", 2, 0.8, 2.0, None),
    ("dnn", "exponential", 3, 1.0, 2.0, [0.7, 1.0, 1.5]),
]
IDS = [f"{c[0]}-{c[1]}-G{c[2]}{'-weighted' if c[5] else ''}" for c in CASES]


def make_coupling(kind, option, G, param, seed=3):
    X, _ = small_problem(seed, n=8 if G == 2 else 6, G=G)
    graph = (
        pk.KNNGraph(X, neighbours=option) if kind == "knn" else pk.DistanceGraph(X, kernel=option)
    )
    return graph.coupling(param)


def chi2_pvalue(draws, probs, G):
    counts = np.bincount(labeling_index(draws, G), minlength=probs.size)
    expected = len(draws) * probs
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


def chain_draws(sampler, coupling, beta, G, a, n_draws, seed, exact_start=True):
    """End points of independent chains, started at exact draws or at all-zero labels."""
    rng = np.random.default_rng(seed)
    if exact_start:
        states = all_labelings(coupling.n, G)
        probs = label_probabilities(coupling, beta, G, class_weights=a)
        starts = states[rng.choice(probs.size, size=n_draws, p=probs)]
        sweeps = SWEEPS
    else:
        starts = np.zeros((n_draws, coupling.n), dtype=np.int64)
        sweeps = CONVERGENCE_SWEEPS
    return np.array(
        [sampler(coupling, beta, z, G, rng, sweeps=sweeps, class_weights=a) for z in starts]
    )


@pytest.mark.parametrize("sampler", [gibbs, swendsen_wang], ids=["gibbs", "swendsen_wang"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_mcmc_samplers_match_exact_probabilities(sampler, case):
    kind, option, G, param, beta, a = case
    c = make_coupling(kind, option, G, param)
    draws = chain_draws(sampler, c, beta, G, a, N_DRAWS, seed=11)
    p = chi2_pvalue(draws, label_probabilities(c, beta, G, class_weights=a), G)
    assert p > ALPHA, f"p-value {p:.2e}"


@pytest.mark.parametrize("sampler", [gibbs, swendsen_wang], ids=["gibbs", "swendsen_wang"])
@pytest.mark.parametrize("case", [CASES[0], CASES[5]], ids=[IDS[0], IDS[5]])
def test_mcmc_samplers_converge_from_a_fixed_start(sampler, case):
    kind, option, G, param, beta, a = case
    c = make_coupling(kind, option, G, param)
    draws = chain_draws(sampler, c, beta, G, a, 4000, seed=12, exact_start=False)
    p = chi2_pvalue(draws, label_probabilities(c, beta, G, class_weights=a), G)
    assert p > ALPHA, f"p-value {p:.2e}"


@pytest.mark.parametrize(
    "case", [c for c in CASES if c[2] == 2], ids=[i for c, i in zip(CASES, IDS) if c[2] == 2]
)
def test_cftp_draws_are_exact(case):
    kind, option, G, param, beta, a = case
    c = make_coupling(kind, option, G, param)
    rng = np.random.default_rng(5)
    start = np.zeros(c.n, dtype=np.int64)
    results = [cftp(c, beta, start, rng, class_weights=a) for _ in range(N_DRAWS)]
    assert all(r.exact for r in results)
    draws = np.array([r.labels for r in results])
    p = chi2_pvalue(draws, label_probabilities(c, beta, G, class_weights=a), G)
    assert p > ALPHA, f"p-value {p:.2e}"


ROW_CASES = [
    ("gaussian", 2, 0.8, 2.0, None),
    ("exponential", 3, 1.0, 2.0, [0.7, 1.0, 1.5]),
    ("ball", 2, 1.0, 1.5, [1.0, 1.6]),
]


@pytest.mark.parametrize("exact_start", [True, False], ids=["invariance", "convergence"])
@pytest.mark.parametrize("case", ROW_CASES, ids=[c[0] for c in ROW_CASES])
def test_row_swendsen_wang_of_dnn_fields(case, exact_start):
    """The d-nn sweep of the step methods' kernel (directed bonds found by exponential jumps in
    each row's running weight sums) against the exact law, as for the other samplers."""
    from pymc_knn.kernels.structure import dnn_row_cumulative
    from pymc_knn.kernels.swendsen_wang import swendsen_wang_rows

    kernel, G, sigma, beta, a = case
    X, _ = small_problem(3, n=8 if G == 2 else 6, G=G)
    graph = pk.DistanceGraph(X, kernel=kernel)
    order, sorted_sq = graph.sorted_rows()
    aw = np.ones(G) if a is None else np.asarray(a, float)
    C, ends = np.empty(sorted_sq.shape), np.empty(len(X), dtype=np.int64)
    dnn_row_cumulative(
        sorted_sq,
        order,
        sigma,
        pk.graphs.DNN_KERNELS[kernel],
        graph.epsilon,
        C,
        ends,
        np.zeros(len(X), dtype=np.int64),
        aw,
    )
    c = graph.coupling(sigma)
    probs = label_probabilities(c, beta, G, class_weights=a)
    rng = np.random.default_rng(13)
    n = N_DRAWS if exact_start else 4000
    if exact_start:
        starts = all_labelings(c.n, G)[rng.choice(probs.size, size=n, p=probs)]
    else:
        starts = np.zeros((n, c.n), dtype=np.int64)
    sweeps = SWEEPS if exact_start else 50
    for z in starts:
        swendsen_wang_rows(order, C, ends, z, beta, aw, sweeps, rng)
    p = chi2_pvalue(starts, probs, G)
    assert p > ALPHA, f"p-value {p:.2e}"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
    st.integers(0, 45),
    st.floats(0.0, 1.2),
)
def test_the_row_search_finds_what_a_binary_search_does(weights, start, share):
    """The galloping search of the d-nn sweep (from the bound a row's first weight gives) returns
    the first ``t >= start`` with ``C[t] >= target``, as ``searchsorted`` does, on running sums
    of non-increasing weights: equal ones (the ball), ties, zeros, targets past the end."""
    from pymc_knn.kernels.swendsen_wang import _first_at_least

    w = np.sort(np.asarray(weights))[::-1]
    C = np.cumsum(w)
    target = share * C[-1]
    want = C.size if start >= C.size else start + int(np.searchsorted(C[start:], target))
    assert _first_at_least(C[None], 0, C.size, start, target) == want
    for t in (C[min(start, C.size - 1)], C[-1]):  # targets equal to a running sum
        want = C.size if start >= C.size else start + int(np.searchsorted(C[start:], t))
        assert _first_at_least(C[None], 0, C.size, start, t) == want


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
    st.lists(st.floats(0.0, 1.0), min_size=0, max_size=40),
    st.integers(0, 45),
    st.floats(0.0, 1.2),
    st.floats(0.0, 3.0),
)
def test_the_row_search_of_a_bridging_field(weights, weights1, start, share, a0):
    """Through a bridging field (two rows' running sums mixed as they are read, each carried past
    its end) the search returns what it does on the field written out, as the bridge did before
    it read the sums in place: rows of other lengths, an empty one, a coefficient 0."""
    from pymc_knn.kernels.swendsen_wang import _first_at_least

    w0 = np.sort(np.asarray(weights))[::-1]
    w1 = np.sort(np.asarray(weights1))[::-1]
    n = max(w0.size, w1.size)
    C0, C1 = np.zeros((1, n)), np.zeros((1, n))
    C0[0, : w0.size], C1[0, : w1.size] = np.cumsum(w0), np.cumsum(w1)
    e0, e1 = np.array([w0.size]), np.array([w1.size])
    a1 = 3.0 - a0
    carried = [
        C[0, np.minimum(np.arange(n), e[0] - 1)] if e[0] else np.zeros(n)
        for C, e in ((C0, e0), (C1, e1))
    ]
    mixed = a0 * carried[0] + a1 * carried[1]
    for target in (share * mixed[-1], mixed[min(start, n - 1)]):
        want = n if start >= n else start + int(np.searchsorted(mixed[start:], target))
        got = _first_at_least(C0, 0, n, start, target, (e0, C1, e1, a0, a1))
        assert got == want


def test_the_test_rejects_a_wrong_distribution():
    """Negative control: draws at beta judged against the exact law at 1.25 beta must fail."""
    kind, option, G, param, beta, a = CASES[0]
    c = make_coupling(kind, option, G, param)
    draws = chain_draws(swendsen_wang, c, beta, G, a, N_DRAWS, seed=11)
    assert chi2_pvalue(draws, label_probabilities(c, 1.25 * beta, G), G) < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gibbs", "swendsen_wang", "cftp"])
def test_total_variation_with_many_draws(name):
    """200,000 draws: total variation to the exact law below 0.02 (the Monte Carlo floor is ~0.01)."""
    kind, option, G, param, beta, a = CASES[0]
    c = make_coupling(kind, option, G, param)
    n = 200_000
    if name == "cftp":
        rng = np.random.default_rng(8)
        draws = np.array([cftp(c, beta, np.zeros(c.n, int), rng).labels for _ in range(n)])
    else:
        sampler = gibbs if name == "gibbs" else swendsen_wang
        draws = chain_draws(sampler, c, beta, G, a, n, seed=8, exact_start=False)
    probs = label_probabilities(c, beta, G)
    freq = np.bincount(labeling_index(draws, G), minlength=probs.size) / n
    assert 0.5 * np.abs(freq - probs).sum() < 0.02
    assert chi2_pvalue(draws, probs, G) > ALPHA


def test_cftp_reports_failure_to_coalesce():
    c = make_coupling("knn", "symmetrised", 2, 3)
    start = np.array([0, 1] * 4)
    d = cftp(c, 25.0, start, np.random.default_rng(0), max_sweeps=2)
    assert not d.exact and d.sweeps == 2
    assert set(np.unique(d.labels)) <= {0, 1}
    d = cftp(c, 0.5, start, np.random.default_rng(0), max_sweeps=4096)
    assert d.exact and 1 <= d.sweeps <= 4096


@pytest.mark.parametrize("sampler", [gibbs, swendsen_wang])
def test_same_generator_seed_same_draws(sampler):
    c = make_coupling("knn", "symmetrised", 3, 2)
    start = np.zeros(c.n, dtype=np.int64)
    a = sampler(c, 1.0, start, 3, np.random.default_rng(42), sweeps=5)
    b = sampler(c, 1.0, start, 3, np.random.default_rng(42), sweeps=5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(start, 0)  # the start is not modified
    np.testing.assert_array_equal(
        sampler(c, 1.0, start, 3, np.random.default_rng(1), sweeps=0), start
    )


def test_cftp_reproducible():
    c = make_coupling("knn", "symmetrised", 2, 3)
    draws = [cftp(c, 1.0, np.zeros(c.n, int), np.random.default_rng(9)) for _ in range(2)]
    np.testing.assert_array_equal(draws[0].labels, draws[1].labels)


def test_sampler_bad_input():
    c = make_coupling("knn", "symmetrised", 3, 2)
    start = np.zeros(c.n, dtype=np.int64)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="beta must be finite and >= 0"):
        gibbs(c, -1.0, start, 3, rng)
    with pytest.raises(ValueError, match="n_classes must be an integer >= 2"):
        gibbs(c, 1.0, start, 1, rng)
    with pytest.raises(ValueError, match=r"labels must be in 0..1"):
        cftp(c, 1.0, np.full(c.n, 2), rng)
    with pytest.raises(ValueError, match="got 3 labels"):
        swendsen_wang(c, 1.0, [0, 1, 0], 3, rng)
    with pytest.raises(ValueError, match="sweeps must be a non-negative integer"):
        gibbs(c, 1.0, start, 3, rng, sweeps=-1)
    with pytest.raises(TypeError, match="Generator"):
        gibbs(c, 1.0, start, 3, 42)
    with pytest.raises(TypeError, match="Coupling"):
        gibbs(np.eye(3), 1.0, start, 3, rng)


def _components(pairs, n):
    """Each of ``n`` points' root in a union-find of ``pairs``: equal roots, one connected
    component (the roots' identity is arbitrary)."""
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        parent[find(i)] = find(j)
    return np.array([find(i) for i in range(n)])


def _relabelled(roots, G, rng):
    """Uniform new labels per component, drawn in the order of each component's first point,
    as the sweeps' relabelling draws them."""
    label, z = {}, np.empty(roots.size, dtype=np.int64)
    for i, r in enumerate(roots):
        if r not in label:
            label[r] = min(int(rng.random() * G), G - 1)
        z[i] = label[r]
    return z


# Swendsen-Wang joins its bonds in batches of PENDING after drawing them (a third faster): on
# graphs with several batches of bonds a sweep must give what the textbook loop (draw a
# candidate, join it) gives on the same random numbers.
G_MANY, BETA_MANY = 3, 4.0


@pytest.fixture(scope="module")
def many_bonds():
    """1,500 2-d points whose labels neighbours share (bands of the first covariate)."""
    X = np.random.default_rng(0).normal(size=(1500, 2))
    return X, np.digitize(X[:, 0], [-0.4, 0.4])


def _knn_candidates(c, rng):
    """The candidate edges of a kNN sweep: geometric gaps at the bond probability."""
    rate = -np.log1p(np.expm1(-BETA_MANY * c.uniform_weight))
    e = -1
    while True:
        gap = rng.standard_exponential() / rate
        e += 1 + int(gap) if gap < c.src.size else c.src.size
        if e >= c.src.size:
            return
        yield e


def test_gathered_bonds_of_a_knn_sweep(many_bonds):
    from pymc_knn.kernels.swendsen_wang import PENDING, swendsen_wang_sweeps

    X, y = many_bonds
    c = pk.KNNGraph(X).coupling(10)
    z, rng = y.copy(), np.random.default_rng(1)
    a = np.ones(G_MANY)
    swendsen_wang_sweeps(c.src, c.dst, c.weight, c.uniform_weight, z, BETA_MANY, a, 1, rng)
    rng = np.random.default_rng(1)
    bonds = [(c.src[e], c.dst[e]) for e in _knn_candidates(c, rng) if y[c.src[e]] == y[c.dst[e]]]
    assert len(bonds) > 4 * PENDING
    np.testing.assert_array_equal(z, _relabelled(_components(bonds, len(y)), G_MANY, rng))


def test_gathered_bonds_of_unequal_class_weights(many_bonds):
    """Each candidate is thinned by its class's weight and recorded, in the loop's order."""
    from pymc_knn.kernels.swendsen_wang import PENDING, _bond_uniform, _find

    X, y = many_bonds
    c, n = pk.KNNGraph(X).coupling(10), len(y)
    w = c.uniform_weight
    a = np.array([1.0, 0.6, 0.3])
    parent, size = np.arange(n), np.ones(n, dtype=np.int64)
    recorded = np.empty(c.src.size, dtype=np.int64)
    rng = np.random.default_rng(2)
    n_bonds = _bond_uniform(c.src, c.dst, BETA_MANY, w, y, a, False, parent, size, recorded, rng)
    rng = np.random.default_rng(2)
    pmax = -np.expm1(-BETA_MANY * w)
    want = []
    for e in _knn_candidates(c, rng):
        g = y[c.src[e]]
        if g == y[c.dst[e]] and rng.random() * pmax < -np.expm1(-BETA_MANY * a[g] * w):
            want.append(e)
    assert n_bonds > 2 * PENDING
    np.testing.assert_array_equal(recorded[:n_bonds], want)
    roots = np.array([_find(parent, i) for i in range(n)])
    same = _components([(c.src[e], c.dst[e]) for e in want], n)
    assert np.array_equal(roots[:, None] == roots[None, :], same[:, None] == same[None, :])


def test_gathered_bonds_of_a_dnn_sweep(many_bonds):
    """The d-nn rows' bonds: events of each row's process found in its running sums."""
    from pymc_knn.kernels.structure import dnn_row_cumulative
    from pymc_knn.kernels.swendsen_wang import PENDING, swendsen_wang_rows

    X, y = many_bonds[0][:600], many_bonds[1][:600]
    graph = pk.DistanceGraph(X, kernel="gaussian")
    order, sorted_sq = graph.sorted_rows()
    n, beta = len(X), BETA_MANY
    C, ends = np.empty(sorted_sq.shape), np.empty(n, dtype=np.int64)
    kernel = pk.graphs.DNN_KERNELS["gaussian"]
    zeros, a = np.zeros(n, dtype=np.int64), np.ones(G_MANY)
    dnn_row_cumulative(sorted_sq, order, 0.3, kernel, graph.epsilon, C, ends, zeros, a)
    z, rng = y.copy(), np.random.default_rng(3)
    swendsen_wang_rows(order, C, ends, z, beta, a, 1, rng)
    rng, pairs = np.random.default_rng(3), []
    left = rng.standard_exponential()
    for i in range(n):
        row = C[i, : ends[i]]
        if left >= beta * row[-1]:
            left -= beta * row[-1]
            continue
        target, t = left / beta, 0
        while True:
            t += int(np.searchsorted(row[t:], target))
            if t >= row.size:
                break
            if y[order[i, t]] == y[i]:
                pairs.append((i, order[i, t]))
            target = row[t] + rng.standard_exponential() / beta
            t += 1
        left = (target - row[-1]) * beta
    assert len(pairs) > 2 * PENDING
    rng.standard_exponential()  # the floor's process (no floor here) starts with a draw
    np.testing.assert_array_equal(z, _relabelled(_components(pairs, n), G_MANY, rng))
