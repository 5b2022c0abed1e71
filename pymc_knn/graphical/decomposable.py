"""Decomposable (chordal) graphs on bit masks: chordality, cliques, junction trees, enumeration.

A graph on ``p <= 64`` nodes is an array ``adj`` of ``p`` ``uint64`` masks, ``adj[i]`` holding
the neighbours of ``i``. Chordality is tested by maximum cardinality search (Tarjan and
Yannakakis 1984): the graph is chordal if and only if, in the search order, the already visited
neighbours of every node form a complete set. A junction tree is a maximum-weight spanning tree
of the clique graph weighted by ``|C_i & C_j|`` (Jensen and Jensen 1994), with empty separators
joining the components of a disconnected graph, as in Thomas and Green (2009).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import ONE, ZERO, bit, popcount


@njit(cache=True)
def mcs_order(adj):
    """Maximum cardinality search: the visit order and each node's earlier visited neighbours."""
    p = adj.size
    order = np.empty(p, np.int64)
    earlier = np.zeros(p, np.uint64)
    visited = ZERO
    for step in range(p):
        best, best_count = -1, -1
        for v in range(p):
            if visited & bit(v) == ZERO:
                count = popcount(adj[v] & visited)
                if count > best_count:
                    best, best_count = v, count
        order[step] = best
        earlier[best] = adj[best] & visited
        visited |= bit(best)
    return order, earlier


@njit(cache=True)
def is_complete(adj, mask):
    """Whether the node set ``mask`` is complete (pairwise adjacent) in ``adj``."""
    rest = mask
    while rest != ZERO:
        low = rest & (~rest + ONE)
        w = popcount(low - ONE)
        if (mask & ~low) & ~adj[w] != ZERO:
            return False
        rest &= rest - ONE
    return True


@njit(cache=True)
def is_chordal(adj):
    """Whether the graph ``adj`` is chordal (decomposable)."""
    _, earlier = mcs_order(adj)
    for v in range(adj.size):
        if not is_complete(adj, earlier[v]):
            return False
    return True


@njit(cache=True)
def maximal_cliques(adj):
    """The maximal cliques of a chordal graph, as masks in maximum-cardinality-search order."""
    order, earlier = mcs_order(adj)
    p = adj.size
    cand = np.empty(p, np.uint64)
    for i in range(p):
        v = order[i]
        cand[i] = earlier[v] | bit(v)
    keep = np.ones(p, np.bool_)
    for i in range(p):
        for j in range(p):
            if (
                i != j
                and keep[j]
                and cand[i] & cand[j] == cand[i]
                and (cand[i] != cand[j] or j < i)
            ):
                keep[i] = False
                break
    return cand[keep]


@njit(cache=True)
def simplicial_mask(cliques, k):
    """The nodes lying in exactly one of the maximal cliques ``cliques[:k]``: the simplicial nodes."""
    once, twice = ZERO, ZERO
    for i in range(k):
        twice |= once & cliques[i]
        once |= cliques[i]
    return once & ~twice


@njit(cache=True)
def junction_tree(cliques):
    """Parent of each clique in a junction tree (maximum-weight spanning tree by Prim); root -1."""
    k = cliques.size
    parent = np.full(k, -1, np.int64)
    in_tree = np.zeros(k, np.bool_)
    best = np.full(k, -1, np.int64)
    best_from = np.full(k, -1, np.int64)
    in_tree[0] = True
    for j in range(1, k):
        best[j] = popcount(cliques[0] & cliques[j])
        best_from[j] = 0
    for _ in range(k - 1):
        nxt, w = -1, -1
        for j in range(k):
            if not in_tree[j] and best[j] > w:
                nxt, w = j, best[j]
        in_tree[nxt] = True
        parent[nxt] = best_from[nxt]
        for j in range(k):
            if not in_tree[j]:
                c = popcount(cliques[nxt] & cliques[j])
                if c > best[j]:
                    best[j], best_from[j] = c, nxt
    return parent


@njit(cache=True)
def separators(cliques, parent):
    """The separators (with multiplicity, possibly empty) of a junction tree."""
    out = np.empty(max(cliques.size - 1, 0), np.uint64)
    i = 0
    for j in range(cliques.size):
        if parent[j] >= 0:
            out[i] = cliques[j] & cliques[parent[j]]
            i += 1
    return out


@njit(cache=True)
def adjacency_from_code(code, p):
    """The graph whose edges ``(i < j)``, in lexicographic order, are the set bits of ``code``."""
    adj = np.zeros(p, np.uint64)
    e = 0
    for i in range(p):
        for j in range(i + 1, p):
            if (code >> np.uint64(e)) & ONE != ZERO:
                adj[i] |= bit(j)
                adj[j] |= bit(i)
            e += 1
    return adj


@njit(cache=True)
def _chordal_codes(p):
    n_edges = p * (p - 1) // 2
    out = np.empty(2**n_edges, np.uint64)
    k = 0
    for code in range(2**n_edges):
        if is_chordal(adjacency_from_code(np.uint64(code), p)):
            out[k] = code
            k += 1
    return out[:k]


MAX_ENUMERATION_NODES = 6
"""Largest ``p`` :func:`enumerate_decomposable` accepts (18,154 graphs among 32,768)."""


def enumerate_decomposable(p: int) -> np.ndarray:
    """All decomposable graphs on ``p <= 6`` nodes, as an array (count, p) of adjacency masks.

    The counts are 1, 2, 8, 61, 822, 18154 for p = 1..6 (Wormald 1985).
    """
    if not 1 <= p <= MAX_ENUMERATION_NODES:
        raise ValueError(f"enumeration is for 1 <= p <= {MAX_ENUMERATION_NODES}, got p={p}")
    codes = _chordal_codes(p)
    return (
        np.stack([adjacency_from_code(c, p) for c in codes])
        if codes.size
        else np.zeros((0, p), np.uint64)
    )


def adjacency_from_matrix(A) -> np.ndarray:
    """Adjacency masks from a symmetric 0/1 (or boolean) matrix; the diagonal is ignored."""
    A = np.asarray(A).astype(bool)
    p = A.shape[0]
    adj = np.zeros(p, np.uint64)
    for i in range(p):
        m = 0
        for j in np.flatnonzero(A[i]):
            if j != i:
                m |= 1 << int(j)
        adj[i] = np.uint64(m)
    return adj


def matrix_from_adjacency(adj) -> np.ndarray:
    """The symmetric boolean matrix (p, p) of adjacency masks."""
    p = len(adj)
    bits = np.array([[int(adj[i]) >> j & 1 for j in range(p)] for i in range(p)], dtype=bool)
    return bits.reshape(p, p)


def n_junction_trees(adj) -> int:
    """``mu(G)``, the number of junction trees of a decomposable graph (Thomas and Green 2009).

    For each distinct separator ``S`` (the empty set included when the graph is disconnected),
    the cliques containing ``S`` form a subtree; cutting its edges whose separator is exactly
    ``S`` leaves ``t`` pieces of sizes ``m_1..m_t`` out of ``M`` cliques, which can be joined
    again in ``M^(t-2) prod m_i`` ways (the forest version of Cayley's formula); ``mu(G)`` is
    the product over the distinct separators.
    """
    adj = np.asarray(adj, dtype=np.uint64)
    cliques = maximal_cliques(adj)
    parent = junction_tree(cliques)
    k = cliques.size
    seps = {int(cliques[j] & cliques[parent[j]]) for j in range(k) if parent[j] >= 0}
    total = 1
    for s in seps:
        holders = [j for j in range(k) if int(cliques[j]) & s == s]
        root = {j: j for j in holders}

        def find(j, root=root):
            while root[j] != j:
                j = root[j]
            return j

        for j in holders:
            q = int(parent[j])
            if q in root and int(cliques[j] & cliques[q]) != s:
                root[find(j)] = find(q)
        sizes: dict[int, int] = {}
        for j in holders:
            sizes[find(j)] = sizes.get(find(j), 0) + 1
        t, M = len(sizes), len(holders)
        count = 1
        for m in sizes.values():
            count *= m
        total *= count * M ** (t - 2) if t >= 2 else count
    return total
