"""Pure-Python reference of the Christmas-tree kernel, by exhaustive enumeration of its draws.

A junction tree is ``(cliques, edges)``: a frozenset of frozensets of nodes and a frozenset of
frozenset pairs of cliques. Every random choice of the kernel (Rios, Olsson and Pavlenko 2016,
as in trilearn's ``junction_tree_expander.sample``) is enumerated with its probability and the
resulting trees are built with sets, independently of the numba code.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction

import numpy as np

from pymc_knn.graphical._bits import nodes_of
from pymc_knn.graphical.decomposable import enumerate_decomposable, maximal_cliques


def _adjacent(tree, c):
    return [d for e in tree[1] if c in e for d in e if d != c]


def is_junction_tree(tree) -> bool:
    """A spanning tree of the cliques with the running-intersection property."""
    cliques, edges = tree
    k = len(cliques)
    if len(edges) != k - 1:
        return False
    nodes = set().union(*cliques) if cliques else set()
    for u in nodes:  # the cliques holding u must be connected through cliques holding u
        holders = {c for c in cliques if u in c}
        start = next(iter(holders))
        seen, front = {start}, [start]
        while front:
            c = front.pop()
            for d in _adjacent(tree, c):
                if d in holders and d not in seen:
                    seen.add(d)
                    front.append(d)
        if seen != holders:
            return False
    seen, front = {next(iter(cliques))}, [next(iter(cliques))]
    while front:
        c = front.pop()
        for d in _adjacent(tree, c):
            if d not in seen:
                seen.add(d)
                front.append(d)
    return len(seen) == k


def graph_cliques(nodes, adj_masks):
    """The maximal cliques (frozensets of labels ``nodes``) of a graph on ``len(nodes)`` nodes."""
    return frozenset(
        frozenset(nodes[j] for j in nodes_of(c)) for c in maximal_cliques(np.asarray(adj_masks))
    )


def all_junction_trees(nodes):
    """Every junction tree of every decomposable graph on the node labels ``nodes``."""
    out = []
    for adj in enumerate_decomposable(len(nodes)):
        cliques = sorted(graph_cliques(nodes, adj), key=sorted)
        pairs = [frozenset(e) for e in itertools.combinations(cliques, 2)]
        for edges in itertools.combinations(pairs, len(cliques) - 1):
            tree = (frozenset(cliques), frozenset(edges))
            if is_junction_tree(tree):
                out.append(tree)
    return out


def graph_edges(tree):
    """The edges of the tree's graph, as frozenset pairs of nodes."""
    return frozenset(frozenset(e) for c in tree[0] for e in itertools.combinations(sorted(c), 2))


def _connected_subsets(tree):
    cliques = sorted(tree[0], key=sorted)
    for r in range(1, len(cliques) + 1):
        for sub in itertools.combinations(cliques, r):
            sub = frozenset(sub)
            start = next(iter(sub))
            seen, front = {start}, [start]
            while front:
                c = front.pop()
                for d in _adjacent(tree, c):
                    if d in sub and d not in seen:
                        seen.add(d)
                        front.append(d)
            if seen == sub:
                yield sub


def _subsets(s):
    s = sorted(s)
    for r in range(len(s) + 1):
        for c in itertools.combinations(s, r):
            yield frozenset(c)


def _growth_choices(tree, sub, c):
    """The laws of ``M_c``: (M, probability) pairs, by enumerating the draw itself."""
    inside = [d for d in _adjacent(tree, c) if d in sub]
    shared = frozenset().union(*[c & d for d in inside]) if inside else frozenset()
    one_sep = len(sub) == 1 or any(c & d == shared for d in inside)
    free = c - shared
    law = defaultdict(Fraction)
    if one_sep and free:
        for first in free:
            for rest in _subsets(free - {first}):
                law[rest | {first}] += Fraction(1, len(free)) * Fraction(1, 2 ** (len(free) - 1))
    else:
        for m in _subsets(free):
            law[m] += Fraction(1, 2 ** len(free))
    return shared, law


def _build(tree, sub, v, grown, moved):
    cliques, edges = set(tree[0]), set(tree[1])
    sub_edges = [e for e in tree[1] if e <= sub]
    edges -= set(sub_edges)
    for e in sub_edges:
        a, b = tuple(e)
        edges.add(frozenset((grown[a], grown[b])))
    for c in sub:
        if grown[c] - {v} == c:  # swallowed: the new clique takes c's place
            cliques.discard(c)
            for e in list(edges):
                if c in e:
                    edges.discard(e)
                    (d,) = e - {c}
                    edges.add(frozenset((grown[c], d)))
        else:
            edges.add(frozenset((grown[c], c)))
            for x in moved[c]:
                edges.discard(frozenset((c, x)))
                edges.add(frozenset((grown[c], x)))
        cliques.add(grown[c])
    return frozenset(cliques), frozenset(edges)


def expansions(tree, v, alpha, beta, trees_by_graph):
    """The law of the tree after adding ``v``: {tree: probability} (exact fractions)."""
    law = defaultdict(Fraction)
    k = len(tree[0])
    # empty subtree: {v} isolated, the empty-separator edges uniform over the valid ways
    kept = frozenset(e for e in tree[1] if frozenset.intersection(*e))
    new_graph = graph_edges(tree)
    targets = [
        t
        for t in trees_by_graph[(frozenset(tree[0]) | {frozenset([v])}, new_graph)]
        if frozenset(e for e in t[1] if frozenset.intersection(*e)) == kept
    ]
    for t in targets:
        law[t] += (1 - beta) / len(targets)
    for sub in _connected_subsets(tree):
        w = sum(1 for c in sub for d in _adjacent(tree, c) if d not in sub)
        p_sub = beta * len(sub) / k * alpha ** (len(sub) - 1) * (1 - alpha) ** w
        per_clique = []
        for c in sorted(sub, key=sorted):
            shared, m_law = _growth_choices(tree, sub, c)
            options = []
            for m, pm in m_law.items():
                new = shared | m | {v}
                if new - {v} == c:
                    options.append((c, new, frozenset(), pm))
                    continue
                eligible = [x for x in _adjacent(tree, c) if x not in sub and x & c <= new]
                for mv in _subsets(eligible):
                    options.append((c, new, mv, pm / 2 ** len(eligible)))
            per_clique.append(options)
        for combo in itertools.product(*per_clique):
            grown = {c: new for c, new, _, _ in combo}
            moved = {c: mv for c, _, mv, _ in combo}
            prob = p_sub
            for *_, pc in combo:
                prob *= pc
            law[_build(tree, sub, v, grown, moved)] += prob
    return dict(law)


def index_trees(trees):
    """{(cliques, graph edges): [trees]} of a list of junction trees."""
    out = defaultdict(list)
    for t in trees:
        out[(t[0], graph_edges(t))].append(t)
    return out


# --- conversions to and from the numba arrays, and the path between two trees -----------------


def to_arrays(tree, p):
    """``(cliques, nbrs, k, order)``: the numba arrays of a tree, its cliques in sorted order."""
    from pymc_knn.graphical._bits import mask_of

    order = sorted(tree[0], key=sorted)
    cliques = np.zeros(p, np.uint64)
    nbrs = np.zeros(p, np.uint64)
    for i, c in enumerate(order):
        cliques[i] = mask_of(c)
    for e in tree[1]:
        a, b = tuple(e)
        i, j = order.index(a), order.index(b)
        nbrs[i] |= np.uint64(1 << j)
        nbrs[j] |= np.uint64(1 << i)
    return cliques, nbrs, len(order), order


def from_arrays(cliques, nbrs, k):
    """The tree of numba arrays, as ``(cliques, edges)``."""
    order = [frozenset(nodes_of(cliques[i])) for i in range(k)]
    edges = frozenset(
        frozenset((order[i], order[j])) for i in range(k) for j in nodes_of(nbrs[i]) if j > i
    )
    return frozenset(order), edges


def expansion_path(tree, new, v, p):
    """The expansion that turns ``tree`` into ``new`` by adding ``v``, in ``tree``'s indices:
    ``(sub, grown, moved)`` as the numba kernel takes them (``sub = 0``: ``v`` isolated).

    Found from the two trees alone: each new clique came from ``C - v`` (swallowed) or from a
    neighbour with separator ``C - v`` that was a neighbour, in ``tree``, of all the other old
    neighbours of ``C`` and of the origins of the adjacent new cliques.
    """
    from pymc_knn.graphical._bits import mask_of

    order = sorted(tree[0], key=sorted)
    grown = np.zeros(p, np.uint64)
    moved = np.zeros(p, np.uint64)
    holders = [c for c in new[0] if v in c]
    if holders == [frozenset([v])]:
        return 0, grown, moved

    def around(c):
        return [d for d in _adjacent(new, c) if v not in d]

    choices = []
    for c in holders:
        body = c - {v}
        choices.append([body] if body in tree[0] else [d for d in around(c) if d & c == body])
    for combo in itertools.product(*choices):
        origin = dict(zip(holders, combo))
        new_edges = [tuple(e) for e in new[1] if all(v in c for c in e)]
        if not all(frozenset((origin[a], origin[b])) in tree[1] for a, b in new_edges):
            continue
        if not all(
            origin[c] == c - {v}
            or all(frozenset((origin[c], d)) in tree[1] for d in around(c) if d != origin[c])
            for c in holders
        ):
            continue
        sub = 0
        for c in holders:
            i = order.index(origin[c])
            sub |= 1 << i
            grown[i] = mask_of(c)
            if origin[c] != c - {v}:
                moved[i] = mask_of(order.index(d) for d in around(c) if d != origin[c])
        return sub, grown, moved
    raise AssertionError("the second tree is not an expansion of the first")


def predecessors(trees, nodes, alpha, beta):
    """{tree T': {(v, T): K(T, T')}} over every expansion of every tree of ``trees`` by a node of
    ``nodes`` it lacks, with the enumerated laws {T: {v: law}}."""
    by_graph = index_trees(trees)
    out = defaultdict(dict)
    laws = {}
    for tree in trees:
        present = set().union(*tree[0])
        for v in sorted(set(nodes) - present):
            law = expansions(tree, v, alpha, beta, by_graph)
            laws[(tree, v)] = law
            for new, prob in law.items():
                out[new][(v, tree)] = prob
    return out, laws


def trees_on_subsets(nodes):
    """Every junction tree on every non-empty subset of ``nodes``."""
    out = []
    for r in range(1, len(nodes) + 1):
        for subset in itertools.combinations(nodes, r):
            out += all_junction_trees(list(subset))
    return out
