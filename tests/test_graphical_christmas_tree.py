"""The Christmas-tree kernel over junction trees against exhaustive enumeration of its draws.

``ct_brute`` enumerates every random choice of the kernel (subtree, new cliques, moved
neighbours, empty-separator joins) with exact fractions, on every junction tree on every subset
of 4 and 5 nodes; the numba kernel's forward probabilities ``K(T, T')`` and backward
supports are compared with it, tree by tree. The graph-posterior tests of both kernels are in
``test_graphical_sampler.py``.
"""

import functools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from ct_brute import (
    all_junction_trees,
    expansion_path,
    from_arrays,
    is_junction_tree,
    predecessors,
    to_arrays,
    trees_on_subsets,
)
from numba import njit
from scipy import stats

from pymc_knn.graphical import christmas_tree as ct
from pymc_knn.graphical._bits import mask_of
from pymc_knn.graphical.decomposable import enumerate_decomposable, n_junction_trees
from pymc_knn.graphical.evidence import class_hyper, graph_log_evidence, new_cache
from pymc_knn.graphical.particle_gibbs import CHRISTMAS_TREE, particle_gibbs

ALPHA, BETA = Fraction(3, 10), Fraction(3, 5)
"""Unequal parameters, so that a swapped alpha and beta, or 1/2 hard-coded, would show."""
EMPTY = np.uint64(0)


@functools.lru_cache(maxsize=2)
def enumerated(p):
    """Every junction tree on subsets of p nodes, their expansions and predecessors."""
    trees = trees_on_subsets(list(range(p)))
    preds, laws = predecessors(trees, range(p), ALPHA, BETA)
    return trees, preds, laws


def numba_log_k(tree, new, v, p, path_only=False):
    """``log K(tree, new)`` from the numba kernel, on the path found by ``expansion_path``."""
    sub, grown, moved = expansion_path(tree, new, v, p)
    if sub == 0:
        cliques, nbrs, k, _ = to_arrays(new, p)
        return math.log(1 - float(BETA)) - ct.log_nu(cliques, nbrs, k, EMPTY)
    cliques, nbrs, k, _ = to_arrays(tree, p)
    args = (cliques, nbrs, k, np.uint64(sub), v, grown)
    if path_only:
        return ct.log_path_prob(*args, float(ALPHA), float(BETA))
    return ct.log_kernel(*args, moved, float(ALPHA), float(BETA))


def check_forward(p):
    """Largest |K - enumerated| and |sum K - 1| over every transition on p nodes."""
    _, _, laws = enumerated(p)
    worst, worst_sum = 0.0, 0.0
    for (tree, v), law in laws.items():
        assert sum(law.values()) == 1
        total = 0.0
        for new, prob in law.items():
            assert is_junction_tree(new)
            k_new = math.exp(numba_log_k(tree, new, v, p))
            worst = max(worst, abs(k_new - float(prob)))
            total += k_new
        worst_sum = max(worst_sum, abs(total - 1.0))
    return worst, worst_sum, sum(len(law) for law in laws.values())


def check_backward(p):
    """Number of trees whose numba backward support (per node, and in all) differs from the
    enumerated predecessors."""
    _, preds, _ = enumerated(p)
    wrong = 0
    for new, before in preds.items():
        cliques, nbrs, k, _ = to_arrays(new, p)
        z = mask_of(set().union(*new[0]))
        counts = np.zeros(p)
        log_total = ct.log_origin_counts(cliques, nbrs, k, z, counts)
        per_node = Counter(v for v, _ in before)
        nodes = sorted(set().union(*new[0]))
        wrong += any(round(math.exp(counts[u])) != per_node[u] for u in nodes)
        wrong += round(math.exp(log_total)) != len(before)
    return wrong, len(preds)


def test_forward_probabilities_match_enumeration_p4():
    """Every expansion of every junction tree on up to 3 of 4 nodes by a 4th: the enumerated law
    sums to 1, reaches only junction trees, and equals the numba K(T, T') (704 transitions)."""
    worst, worst_sum, n = check_forward(4)
    assert n == 704
    assert worst < 1e-12 and worst_sum < 1e-12


def test_backward_support_matches_enumeration_p4():
    """The backward kernel's support: for every junction tree T' on 2-4 of 4 nodes and every
    node u, the number of trees T with K(T, T') > 0 by adding u equals the enumerated count."""
    wrong, n = check_backward(4)
    assert n == 160 and wrong == 0


def test_kernel_matches_enumeration_p5():
    """The same on 5 nodes: 24,570 transitions, 2,751 backward supports (about 7 s)."""
    worst, worst_sum, n = check_forward(5)
    assert n == 24_570
    assert worst < 1e-12 and worst_sum < 1e-12
    wrong, n = check_backward(5)
    assert n == 2751 and wrong == 0


def test_the_kernel_needs_both_subtrees_and_distinct_origins():
    """Negative controls of the two subtle counts. Without the second subtree (a lone new
    clique between its origin and a moved neighbour with the same separator) some K(T, T')
    disagree with the enumeration; counting both origins of such a clique as two trees, as
    trilearn's ``junction_tree_collapser.log_count_origins`` does, overstates the support."""
    _, preds, laws = enumerated(4)
    off = 0
    for (tree, v), law in laws.items():
        for new, prob in law.items():
            if expansion_path(tree, new, v, 4)[0] != 0:
                path_only = math.exp(numba_log_k(tree, new, v, 4, path_only=True))
                off += abs(path_only - float(prob)) > 1e-9
    assert off > 0
    overstated = 0
    for new, before in preds.items():
        for u in set().union(*new[0]):
            if frozenset([u]) in new[0]:
                continue
            product = 1
            for c in new[0]:
                if u in c:
                    near = [d for e in new[1] if c in e for d in e if d != c]
                    product *= max(1, sum(1 for d in near if d & c == c - {u}))
            overstated += product > sum(1 for w, _ in before if w == u)
    assert overstated > 0


def fits(draws, law, n):
    """Chi-square test of the draws' counts against the law: p-value above 1e-4."""
    support = list(law)
    if len(support) == 1:
        return draws[support[0]] == n
    expected = np.array([float(law[t]) * n for t in support])
    observed = np.array([draws[t] for t in support])
    return stats.chisquare(observed, expected).pvalue > 1e-4


@njit
def _seed(seed):
    np.random.seed(seed)


@njit
def _grow(cliques, nbrs, k, v, alpha, beta):
    cl, nb = cliques.copy(), nbrs.copy()
    grown, moved = np.zeros(cl.size, np.uint64), np.zeros(cl.size, np.uint64)
    sub = ct.draw_subtree(nb, k, alpha, beta)
    if sub == 0:
        k, _, _ = ct.add_isolated(cl, nb, k, v)
    else:
        ct.draw_growth(cl, nb, sub, v, grown, moved)
        k = ct.apply_growth(cl, nb, k, sub, v, grown, moved)
    return cl, nb, k


@njit
def _collapse(cliques, nbrs, k, u):
    cl, nb = cliques.copy(), nbrs.copy()
    grown, moved = np.zeros(cl.size, np.uint64), np.zeros(cl.size, np.uint64)
    k, _ = ct.collapse(cl, nb, k, u, grown, moved)
    return cl, nb, k


def test_forward_draws_follow_the_kernel():
    """The numba expansion's draws, from trees on 3 of 4 nodes, reach only the enumerated trees
    and follow their probabilities (chi-square, 10,000 draws from each of 10 trees)."""
    _, _, laws = enumerated(4)
    _seed(0)
    rng = np.random.default_rng(0)
    starts = [key for key in laws if len(set().union(*key[0][0])) == 3]
    for idx in rng.choice(len(starts), 10, replace=False):
        tree, v = starts[idx]
        law = laws[(tree, v)]
        cliques, nbrs, k, _ = to_arrays(tree, 4)
        draws = Counter(
            from_arrays(*_grow(cliques, nbrs, k, v, float(ALPHA), float(BETA)))
            for _ in range(10_000)
        )
        assert set(draws) <= set(law)
        assert fits(draws, law, 10_000)


def test_backward_draws_are_uniform_on_the_support():
    """Removing node u by the numba backward kernel gives each enumerated predecessor of the
    tree equally often (chi-square, 2,000 draws), and nothing else."""
    _, preds, _ = enumerated(4)
    _seed(1)
    full = [new for new in preds if len(set().union(*new[0])) == 4]
    for new in full[::6]:
        cliques, nbrs, k, _ = to_arrays(new, 4)
        for u in range(4):
            support = {tree for (v, tree) in preds[new] if v == u}
            draws = Counter(from_arrays(*_collapse(cliques, nbrs, k, u)) for _ in range(2000))
            assert set(draws) <= support
            assert fits(draws, dict.fromkeys(support, 1 / len(support)), 2000)


@pytest.mark.parametrize("p", [4, 5])
def test_log_mu_is_the_number_of_junction_trees(p):
    """log mu(G) on arrays equals Thomas and Green's count (``n_junction_trees``), every graph."""
    for adj in enumerate_decomposable(p):
        cliques, nbrs, k = ct.tree_from_graph(adj)
        assert ct.log_mu(cliques, nbrs, k) == pytest.approx(math.log(n_junction_trees(adj)))


@njit
def _uniform_trees(cliques, nbrs, k, n, seed):
    np.random.seed(seed)
    out = np.empty((n, 2, cliques.size), np.uint64)
    for r in range(n):
        cl, nb = cliques.copy(), nbrs.copy()
        ct.randomize_tree(cl, nb, k)
        out[r, 0], out[r, 1] = cl, nb
    return out


@pytest.mark.parametrize("edges", [[], [(0, 1), (0, 2), (0, 3), (0, 4)], [(0, 1), (1, 2), (3, 4)]])
def test_uniform_junction_tree(edges):
    """``randomize_tree`` draws every junction tree of the graph equally often (chi-square,
    8,000 draws; 125 trees for the empty graph, 16 for the star, 6 for the two paths)."""
    M = np.zeros((5, 5), bool)
    for i, j in edges:
        M[i, j] = M[j, i] = True
    from pymc_knn.graphical.decomposable import adjacency_from_matrix

    adj = adjacency_from_matrix(M)
    cliques, nbrs, k = ct.tree_from_graph(adj)
    mine = from_arrays(cliques, nbrs, k)[0]
    support = [t for t in all_junction_trees(list(range(5))) if t[0] == mine]
    assert len(support) == n_junction_trees(adj) > 1
    draws = Counter(from_arrays(c, b, k) for c, b in _uniform_trees(cliques, nbrs, k, 8000, 2))
    assert set(draws) <= set(support)
    assert fits(draws, dict.fromkeys(support, 1 / len(support)), 8000)


@njit
def _isolated_update(cliques, nbrs, k, v):
    cl, nb = cliques.copy(), nbrs.copy()
    before = ct.log_mu(cl, nb, k)
    k, log_nu_empty, change = ct.add_isolated(cl, nb, k, v)
    return (
        ct.log_mu(cl, nb, k) - before - change,
        ct.log_nu(cl, nb, k, np.uint64(0)) - log_nu_empty,
    )


def test_isolated_node_updates_mu():
    """Adding an isolated node changes log mu by the closed form of ``add_isolated`` (only
    nu(empty) changes) and reports the new tree's log nu(empty)."""
    trees, _, _ = enumerated(4)
    for tree in trees:
        present = set().union(*tree[0])
        cliques, nbrs, k, _ = to_arrays(tree, 4)
        for v in set(range(4)) - present:
            assert np.allclose(_isolated_update(cliques, nbrs, k, v), 0.0, atol=1e-12)


def test_log_likelihood_follows_the_graph():
    """The evidence carried along the junction-tree SMC is ``log f(x | G)`` of the graph drawn."""
    rng = np.random.default_rng(5)
    hyper = class_hyper(rng.normal(size=(20, 6)) @ np.triu(np.ones((6, 6))))
    cache = new_cache()
    args = (0.5, 0.5, 0.0, 3, cache, hyper.phi, hyper.phi_post, hyper.consts, CHRISTMAS_TREE)
    graphs, loglik = particle_gibbs(6, 8, 200, *args)
    for g, ll in zip(graphs[::10], loglik[::10]):
        assert graph_log_evidence(hyper, g, cache) == pytest.approx(ll, abs=1e-9)
