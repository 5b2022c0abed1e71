"""The graphical model's numba core against closed forms, quadrature and brute force."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from pymc_knn.graphical._bits import mask_of
from pymc_knn.graphical.decomposable import (
    adjacency_from_matrix,
    enumerate_decomposable,
    is_chordal,
    junction_tree,
    matrix_from_adjacency,
    maximal_cliques,
    n_junction_trees,
)
from pymc_knn.graphical.evidence import class_hyper, graph_log_evidence, graph_log_predictive, log_h


def _data(seed, n=7, p=4):
    r = np.random.default_rng(seed)
    A = r.normal(size=(p, p))
    return r.normal(size=(n, p)) @ A + r.normal(size=p)


@pytest.mark.parametrize("p,count", [(1, 1), (2, 2), (3, 8), (4, 61), (5, 822), (6, 18154)])
def test_decomposable_counts(p, count):
    """Wormald's counts of labelled decomposable graphs."""
    assert len(enumerate_decomposable(p)) == count


def test_chordality_small_cases():
    """The 4-cycle is not chordal, the 4-cycle with a chord is, and so is any forest."""
    cycle = np.zeros((4, 4), bool)
    for i in range(4):
        cycle[i, (i + 1) % 4] = cycle[(i + 1) % 4, i] = True
    assert not is_chordal(adjacency_from_matrix(cycle))
    cycle[0, 2] = cycle[2, 0] = True
    assert is_chordal(adjacency_from_matrix(cycle))
    star = np.zeros((5, 5), bool)
    star[0, 1:] = star[1:, 0] = True
    assert is_chordal(adjacency_from_matrix(star))
    assert np.array_equal(matrix_from_adjacency(adjacency_from_matrix(star)), star)


def _brute_force_junction_trees(cliques):
    """Trees on the cliques (all Pruefer sequences) with the running-intersection property."""
    k = len(cliques)
    if k == 1:
        return 1
    count = 0
    for seq in itertools.product(range(k), repeat=k - 2):
        edges = _pruefer_edges(list(seq), k)
        nbrs = {i: set() for i in range(k)}
        for a, b in edges:
            nbrs[a].add(b)
            nbrs[b].add(a)
        ok = True
        for v in range(64):
            holders = {i for i in range(k) if int(cliques[i]) >> v & 1}
            if holders and not _connected(holders, nbrs):
                ok = False
                break
        count += ok
    return count


def _pruefer_edges(seq, k):
    degree = [1] * k
    for s in seq:
        degree[s] += 1
    edges = []
    for s in seq:
        leaf = min(i for i in range(k) if degree[i] == 1)
        edges.append((leaf, s))
        degree[leaf] -= 1
        degree[s] -= 1
    u, w = [i for i in range(k) if degree[i] == 1]
    return edges + [(u, w)]


def _connected(nodes, nbrs):
    start = next(iter(nodes))
    seen, stack = {start}, [start]
    while stack:
        for b in nbrs[stack.pop()] & nodes:
            if b not in seen:
                seen.add(b)
                stack.append(b)
    return seen == nodes


@pytest.mark.parametrize("p", [3, 4, 5])
def test_number_of_junction_trees_against_brute_force(p):
    """mu(G) by the separator formula equals the count of running-intersection clique trees."""
    graphs = enumerate_decomposable(p)
    for adj in graphs[:: max(1, len(graphs) // 150)]:
        cliques = maximal_cliques(adj)
        assert n_junction_trees(adj) == _brute_force_junction_trees(cliques)


def test_junction_tree_has_running_intersection():
    """The maximum-weight spanning tree of every p = 5 graph is a junction tree of its cliques."""
    for adj in enumerate_decomposable(5):
        cliques = maximal_cliques(adj)
        parent = junction_tree(cliques)
        nbrs = {i: set() for i in range(len(cliques))}
        for j, q in enumerate(parent):
            if q >= 0:
                nbrs[j].add(int(q))
                nbrs[int(q)].add(j)
        for v in range(5):
            holders = {i for i in range(len(cliques)) if int(cliques[i]) >> v & 1}
            assert _connected(holders, nbrs)
        covered = np.uint64(0)
        for c in cliques:
            covered |= c
        assert int(covered) == 31


def test_singleton_evidence_is_normal_inverse_gamma():
    """log h({j}) is the normal-inverse-gamma marginal likelihood (sigma^2 ~ IG(delta/2, phi/2))."""
    X = _data(1, n=9, p=3)
    mu = np.array([0.3, -1.0, 2.0])
    phi = np.diag([0.7, 1.3, 2.1])
    nu, delta = 1.7, 2.5
    hyper = class_hyper(X, mu=mu, nu=nu, phi=phi, delta=delta)
    for j in range(3):
        x = X[:, j]
        n, xbar = x.size, x.mean()
        a0, b0, k0 = delta / 2, phi[j, j] / 2, nu
        kn, an = k0 + n, a0 + n / 2
        bn = b0 + ((x - xbar) ** 2).sum() / 2 + k0 * n * (xbar - mu[j]) ** 2 / (2 * kn)
        expected = (
            special.gammaln(an)
            - special.gammaln(a0)
            + a0 * np.log(b0)
            - an * np.log(bn)
            + 0.5 * np.log(k0 / kn)
            - n / 2 * np.log(2 * np.pi)
        )
        got = log_h(mask_of([j]), hyper.phi, hyper.phi_post, hyper.consts)
        assert got == pytest.approx(expected, rel=1e-12)


def test_no_data_evidence_is_zero():
    """With n = 0 every graph has evidence 1 (the likelihood is flat)."""
    hyper = class_hyper(np.zeros((0, 4)), phi=np.eye(4) * 2)
    for adj in enumerate_decomposable(4):
        assert graph_log_evidence(hyper, adj) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("p", [3, 4])
def test_predictive_is_evidence_ratio(p):
    """log T_G(x) = log f(X and x | G) - log f(X | G) for every decomposable graph."""
    X = _data(2, n=6, p=p)
    x_new = _data(3, n=3, p=p)
    mu, phi = np.linspace(-1, 1, p), np.eye(p) + 0.3
    for adj in enumerate_decomposable(p):
        before = graph_log_evidence(class_hyper(X, mu=mu, nu=0.8, phi=phi, delta=1.5), adj)
        pred = graph_log_predictive(class_hyper(X, mu=mu, nu=0.8, phi=phi, delta=1.5), adj, x_new)
        for r in range(3):
            both = np.vstack([X, x_new[r : r + 1]])
            after = graph_log_evidence(class_hyper(both, mu=mu, nu=0.8, phi=phi, delta=1.5), adj)
            assert pred[r] == pytest.approx(after - before, abs=1e-9)


def test_predictive_integrates_to_one_p1():
    """The one-dimensional predictive t integrates to 1 by quadrature."""
    hyper = class_hyper(_data(4, n=5, p=1), delta=1.0)
    adj = np.zeros(1, np.uint64)

    def density(t):
        return math.exp(graph_log_predictive(hyper, adj, np.array([[t]]))[0])

    total, _ = integrate.quad(density, -np.inf, np.inf)
    assert total == pytest.approx(1.0, abs=1e-7)


@pytest.mark.parametrize("edge", [False, True])
def test_predictive_integrates_to_one_p2(edge):
    """Both graphs on two nodes give a predictive that integrates to 1 (2-D quadrature)."""
    X = _data(5, n=4, p=2)
    hyper = class_hyper(X, delta=1.0)
    adj = adjacency_from_matrix(np.array([[0, edge], [edge, 0]]))
    centre, spread = hyper.mu_post, np.sqrt(np.diag(hyper.phi_post))

    def density(b, a):
        u = np.array([[centre[0] + spread[0] * math.tan(a), centre[1] + spread[1] * math.tan(b)]])
        jac = spread[0] * spread[1] / (math.cos(a) ** 2 * math.cos(b) ** 2)
        return math.exp(graph_log_predictive(hyper, adj, u)[0]) * jac

    half = math.pi / 2
    total, _ = integrate.dblquad(density, -half, half, -half, half, epsabs=1e-8)
    assert total == pytest.approx(1.0, abs=1e-5)


def test_predictive_integrates_to_one_p3_importance_sampling():
    """A path graph on three nodes: the predictive's importance-sampling mass is 1 within 1%."""
    X = _data(6, n=6, p=3)
    hyper = class_hyper(X)
    adj = adjacency_from_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))
    proposal = stats.multivariate_t(
        loc=hyper.mu_post, shape=np.diag(np.diag(hyper.phi_post)), df=2.0, seed=7
    )
    draws = proposal.rvs(size=200_000)
    ratio = np.exp(graph_log_predictive(hyper, adj, draws) - proposal.logpdf(draws))
    assert ratio.mean() == pytest.approx(1.0, abs=3 * ratio.std() / np.sqrt(ratio.size) + 2e-3)


def test_christmas_tree_graphs_of_the_table1_benchmark():
    """benchmarks/pavlenko2017.py draws Table 1's true graphs by the Christmas-tree algorithm:
    decomposable, every graph on 4 nodes reachable, and far denser at p = 50 than the one-clique
    expansion kernel (the cause of the earlier scenario B gap, docs/graphical.md)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks" / "pavlenko2017.py"
    spec = importlib.util.spec_from_file_location("pavlenko2017", path)
    pv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pv)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(3000):
        A = pv.christmas_tree_graph(4, rng)
        assert is_chordal(adjacency_from_matrix(A))
        seen.add(A.tobytes())
    assert len(seen) == 61  # every decomposable graph on 4 nodes
    dense = [pv.christmas_tree_graph(50, rng).sum() // 2 for _ in range(10)]
    sparse = [pv.random_graph(50, rng).sum() // 2 for _ in range(10)]
    assert all(
        is_chordal(adjacency_from_matrix(pv.christmas_tree_graph(50, rng))) for _ in range(5)
    )
    assert np.mean(dense) > 2.5 * np.mean(sparse)
