r"""Junction trees on arrays and the Christmas-tree kernel (numba, bit masks).

A junction tree of a decomposable graph on at most 64 nodes is held in three values: ``cliques``
(``uint64`` node masks, the maximal cliques, entries ``0..k-1`` in use), ``nbrs`` (``uint64``
masks over clique *indices*: ``nbrs[i]`` bit ``j`` is the tree edge ``i - j``) and ``k``. Edges
may have empty separators (they join the connected components of the graph), as in Thomas and
Green (2009).

**Christmas-tree expansion** (Rios, Olsson and Pavlenko 2016; the authors' ``trilearn``,
``junction_tree_expander``), adding node ``v`` to the tree ``T``:

1. *Subtree*: with probability ``1 - beta`` the subtree is empty; otherwise a clique is drawn
   uniformly and grown breadth first, each tree neighbour joining with probability ``alpha``:
   ``beta |t| alpha^(|t|-1) (1 - alpha)^w / k`` for a subtree ``t`` with ``w`` boundary edges.
2. *Empty subtree*: ``{v}`` becomes a clique and the edges with empty separators are redrawn
   uniformly among the ``nu(empty)`` ways of joining the components: probability
   ``(1 - beta) / nu_{T'}(empty)``.
3. Otherwise, for each clique ``c`` of ``t``: ``S_c`` is the union of its separators with its
   subtree neighbours and ``R_c = c - S_c``. If ``S_c`` equals one of those separators (or ``t``
   is one clique), ``M_c`` is a non-empty subset of ``R_c`` (one node drawn uniformly, each other
   with probability 1/2: probability ``|M_c| / |R_c| 2^-(|R_c| - 1)``; 1 when ``|R_c| <= 1``);
   otherwise any subset (``2^-|R_c|``). The new clique is ``C_c = S_c + M_c + v``; it replaces
   ``c`` when ``C_c - v = c`` (``c`` is swallowed), otherwise it hangs off ``c`` and each
   non-subtree neighbour ``x`` of ``c`` with ``x & c`` inside ``C_c`` moves to ``C_c`` with
   probability 1/2 (``2^-|eligible|``). The new cliques replicate the subtree's edges.

The kernel probability ``K(T, T')`` sums these path probabilities over the subtrees that give
``T'``: there is one, except when ``t`` is one clique ``o``, ``C_o`` is not a swallow and exactly
one neighbour ``x`` of ``o`` with ``x & o = C_o - v`` moved: then ``C_o`` sits between ``o``
and ``x`` in ``T'`` and the subtree ``{x}`` gives the same tree.

**Backward kernel** (Pavlenko and Rios 2017, section 4): uniform over the support of
``K(., T')``, the pairs ``(u, T)`` with ``T'`` reachable from ``T`` by adding ``u``. For ``u`` in
a clique ``{u}`` (isolated) those ``T`` are the ``nu_{G-u}(empty)`` ways of joining the
components of ``G - u``; otherwise each clique ``C'`` holding ``u`` came from one of its
neighbours ``x`` with ``C' & x = C' - u`` (``C'`` hung off ``x``), or from ``C' - u`` itself
when there is none (a swallow), and every combination of these origins is a distinct ``T``,
except that the two origins of a lone clique with exactly these two neighbours give one tree.
Removing ``u`` contracts each ``C'`` into its origin.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._bits import ONE, ZERO, bit, lowest, nth_member, popcount
from .decomposable import junction_tree, maximal_cliques, simplicial_mask
from .evidence import log_h_cached

LOG2 = math.log(2.0)


# --- junction trees on arrays ---------------------------------------------------------------


@njit(cache=True)
def tree_from_graph(adj):
    """A junction tree of the decomposable graph ``adj``: ``(cliques, nbrs, k)``, arrays of ``p``."""
    p = adj.size
    found = maximal_cliques(adj)
    parent = junction_tree(found)
    cliques = np.zeros(p, np.uint64)
    nbrs = np.zeros(p, np.uint64)
    k = found.size
    cliques[:k] = found
    for j in range(k):
        if parent[j] >= 0:
            nbrs[j] |= bit(parent[j])
            nbrs[parent[j]] |= bit(j)
    return cliques, nbrs, k


@njit(cache=True)
def adjacency_of(cliques, k, p):
    """The adjacency masks (p,) of the graph whose maximal cliques are ``cliques[:k]``."""
    adj = np.zeros(p, np.uint64)
    for i in range(k):
        rest = cliques[i]
        while rest != ZERO:
            u = lowest(rest)
            adj[u] |= cliques[i] & ~bit(u)
            rest &= rest - ONE
    return adj


@njit(cache=True)
def _link(nbrs, i, j):
    nbrs[i] |= bit(j)
    nbrs[j] |= bit(i)


@njit(cache=True)
def _unlink(nbrs, i, j):
    nbrs[i] &= ~bit(j)
    nbrs[j] &= ~bit(i)


@njit(cache=True)
def _all_holders(cliques, k, sep):
    out = ZERO
    for i in range(k):
        if cliques[i] & sep == sep:
            out |= bit(i)
    return out


@njit(cache=True)
def log_nu(cliques, nbrs, k, sep):
    """``log nu(S)``: the number of ways of joining the pieces of ``S`` (``M^(t-2) prod m_i``)."""
    return _log_nu_within(cliques, nbrs, _all_holders(cliques, k, sep), sep)


@njit(cache=True)
def _above(i):
    """The mask of the indices above ``i``."""
    return ~((bit(i) << ONE) - ONE)


@njit(cache=True)
def _holders_from(cliques, nbrs, i, sep):
    """The cliques holding ``sep``, found from clique ``i`` (they form a subtree)."""
    found = bit(i)
    front = found
    while front != ZERO:
        a = lowest(front)
        front &= front - ONE
        rest = nbrs[a] & ~found
        while rest != ZERO:
            b = lowest(rest)
            rest &= rest - ONE
            if cliques[b] & sep == sep:
                found |= bit(b)
                front |= bit(b)
    return found


@njit(cache=True)
def _first_with(cliques, nbrs, holders, i, j, sep):
    """Whether ``i - j`` (``i < j``) is the first edge with separator ``sep`` in index order."""
    rest = holders
    while rest != ZERO:
        a = lowest(rest)
        rest &= rest - ONE
        if a > i:
            return True
        later = nbrs[a] & holders & _above(a)
        while later != ZERO:
            b = lowest(later)
            later &= later - ONE
            if a == i and b >= j:
                return True
            if cliques[a] & cliques[b] == sep:
                return False
    return True


@njit(cache=True)
def _pieces_summary(cliques, nbrs, holders, sep):
    """The pieces of ``sep`` among the cliques ``holders`` that hold it: their number and the
    sum of the logs of their sizes."""
    count = 0
    log_sizes = 0.0
    rest = holders
    while rest != ZERO:
        front = bit(lowest(rest))
        seen = front
        while front != ZERO:
            a = lowest(front)
            front &= front - ONE
            nb = nbrs[a] & holders & ~seen
            while nb != ZERO:
                b = lowest(nb)
                nb &= nb - ONE
                if cliques[a] & cliques[b] != sep:
                    seen |= bit(b)
                    front |= bit(b)
        rest &= ~seen
        count += 1
        log_sizes += math.log(popcount(seen))
    return count, log_sizes


@njit(cache=True)
def _log_nu_within(cliques, nbrs, holders, sep):
    """``log nu(sep)`` from the cliques ``holders`` that hold it."""
    count, log_sizes = _pieces_summary(cliques, nbrs, holders, sep)
    if count < 2:
        return 0.0
    return (count - 2) * math.log(popcount(holders)) + log_sizes


@njit(cache=True)
def distinct_separators(cliques, nbrs, k):
    """The distinct separators of the tree's edges (empty one included), as an array."""
    out = np.empty(max(k - 1, 0), np.uint64)
    n = 0
    for i in range(k):
        rest = nbrs[i] & _above(i)
        while rest != ZERO:
            j = lowest(rest)
            rest &= rest - ONE
            s = cliques[i] & cliques[j]
            if _first_with(cliques, nbrs, _holders_from(cliques, nbrs, i, s), i, j, s):
                out[n] = s
                n += 1
    return out[:n]


@njit(cache=True)
def log_mu(cliques, nbrs, k):
    """``log mu(G)``, the number of junction trees of the tree's graph (Thomas and Green 2009):
    the sum of ``log nu(S)`` over the distinct separators, each counted at its first edge."""
    out = 0.0
    for i in range(k):
        rest = nbrs[i] & _above(i)
        while rest != ZERO:
            j = lowest(rest)
            rest &= rest - ONE
            s = cliques[i] & cliques[j]
            holders = _holders_from(cliques, nbrs, i, s)
            if popcount(holders) > 2 and _first_with(cliques, nbrs, holders, i, j, s):
                out += _log_nu_within(cliques, nbrs, holders, s)  # 1 with two holders
    return out


@njit(cache=True)
def _draw_by_size(parts, skip, total):
    """A piece other than ``skip``, drawn with probability proportional to its size."""
    r = np.random.random() * (total - popcount(parts[skip]))
    for b in range(parts.size):
        if b != skip:
            r -= popcount(parts[b])
            if r < 0.0:
                return b
    return parts.size - 1 if skip != parts.size - 1 else parts.size - 2


@njit(cache=True)
def _piece_masks(cliques, nbrs, k, sep):
    """The pieces of ``sep`` as masks of clique indices, after cutting the edges equal to it."""
    holders = _all_holders(cliques, k, sep)
    parts = np.empty(popcount(holders), np.uint64)
    count = 0
    rest = holders
    while rest != ZERO:
        front = bit(lowest(rest))
        seen = front
        while front != ZERO:
            a = lowest(front)
            front &= front - ONE
            nb = nbrs[a] & holders
            while nb != ZERO:
                b = lowest(nb)
                nb &= nb - ONE
                if cliques[a] & cliques[b] == sep:
                    _unlink(nbrs, a, b)
                elif seen & bit(b) == ZERO:
                    seen |= bit(b)
                    front |= bit(b)
        rest &= ~seen
        parts[count] = seen
        count += 1
    return parts[:count], popcount(holders)


@njit(cache=True)
def randomize_at(cliques, nbrs, k, sep):
    """Redraw the edges with separator ``sep`` uniformly among the ``nu(sep)`` ways.

    The pieces are joined by a uniform spanning tree of the complete graph on the pieces with
    edge weights ``m_a m_b`` (Wilson's algorithm), each edge's ends drawn uniformly in its two
    pieces: every tree joining the pieces has probability ``1 / nu(sep)``. Returns the number
    of pieces and the sum of the logs of their sizes.
    """
    parts, total = _piece_masks(cliques, nbrs, k, sep)
    count = parts.size
    log_sizes = 0.0
    for part in parts:
        log_sizes += math.log(popcount(part))
    in_tree = np.zeros(count, np.bool_)
    nxt = np.full(count, -1, np.int64)
    in_tree[0] = True
    for a in range(1, count):
        u = a
        while not in_tree[u]:
            nxt[u] = _draw_by_size(parts, u, total)
            u = nxt[u]
        u = a
        while not in_tree[u]:
            in_tree[u] = True
            u = nxt[u]
    for a in range(1, count):
        _link(nbrs, _uniform_member(parts[a]), _uniform_member(parts[nxt[a]]))
    return count, log_sizes


@njit(cache=True)
def _uniform_member(mask):
    return nth_member(mask, np.random.randint(popcount(mask)))


@njit(cache=True)
def randomize_tree(cliques, nbrs, k):
    """Replace the tree by a uniform junction tree of the same graph (every separator redrawn)."""
    for s in distinct_separators(cliques, nbrs, k):
        randomize_at(cliques, nbrs, k, s)


@njit(cache=True)
def tree_log_evidence(cliques, nbrs, k, cache, phi, phi_post, consts):
    """``log f(x | G)``: cliques' ``log h`` minus the tree edges' separators' ``log h``."""
    out = 0.0
    for i in range(k):
        out += log_h_cached(cliques[i], cache, phi, phi_post, consts)
        rest = nbrs[i] & _above(i)
        while rest != ZERO:
            j = lowest(rest)
            rest &= rest - ONE
            out -= log_h_cached(cliques[i] & cliques[j], cache, phi, phi_post, consts)
    return out


# --- the forward (expansion) kernel -----------------------------------------------------------


@njit(cache=True)
def _random_subset(mask):
    """Each node of ``mask`` kept with probability 1/2."""
    out = ZERO
    rest = mask
    while rest != ZERO:
        low = rest & (~rest + ONE)
        if np.random.random() < 0.5:
            out |= low
        rest &= rest - ONE
    return out


@njit(cache=True)
def draw_subtree(nbrs, k, alpha, beta):
    """The subtree kernel: a mask of clique indices, empty with probability ``1 - beta``."""
    if np.random.random() >= beta:
        return ZERO
    sub = bit(np.random.randint(k))
    front = sub
    while front != ZERO:
        i = lowest(front)
        front &= front - ONE
        rest = nbrs[i] & ~sub
        while rest != ZERO:
            j = lowest(rest)
            rest &= rest - ONE
            if np.random.random() < alpha:
                sub |= bit(j)
                front |= bit(j)
    return sub


@njit(cache=True)
def log_subtree_prob(nbrs, k, sub, alpha, beta):
    """Log probability that :func:`draw_subtree` draws ``sub``."""
    if sub == ZERO:
        return math.log(1.0 - beta)
    size = popcount(sub)
    boundary = 0
    rest = sub
    while rest != ZERO:
        i = lowest(rest)
        rest &= rest - ONE
        boundary += popcount(nbrs[i] & ~sub)
    return (
        math.log(beta)
        + math.log(size / k)
        + (size - 1) * math.log(alpha)
        + boundary * math.log(1.0 - alpha)
    )


@njit(cache=True)
def _shared(cliques, nbrs, sub, i):
    """``S_c`` of clique ``i`` in the subtree ``sub``, and whether it equals one separator."""
    s = ZERO
    inside = nbrs[i] & sub
    rest = inside
    while rest != ZERO:
        s |= cliques[i] & cliques[lowest(rest)]
        rest &= rest - ONE
    one_sep = inside == ZERO
    rest = inside
    while rest != ZERO:
        if cliques[i] & cliques[lowest(rest)] == s:
            one_sep = True
        rest &= rest - ONE
    return s, one_sep


@njit(cache=True)
def _eligible(cliques, nbrs, sub, i, grown):
    """Non-subtree neighbours of clique ``i`` whose separator with it lies in ``grown``."""
    out = ZERO
    rest = nbrs[i] & ~sub
    while rest != ZERO:
        j = lowest(rest)
        rest &= rest - ONE
        if cliques[i] & cliques[j] & ~grown == ZERO:
            out |= bit(j)
    return out


@njit(cache=True)
def draw_growth(cliques, nbrs, sub, v, grown, moved):
    """Draw the new cliques ``grown[i]`` and the moved neighbours ``moved[i]`` of ``i`` in ``sub``."""
    rest = sub
    while rest != ZERO:
        i = lowest(rest)
        rest &= rest - ONE
        s, one_sep = _shared(cliques, nbrs, sub, i)
        free = cliques[i] & ~s
        if one_sep and free != ZERO:
            first = bit(nth_member(free, np.random.randint(popcount(free))))
            m = first | _random_subset(free & ~first)
        elif one_sep:
            m = ZERO
        else:
            m = _random_subset(free)
        grown[i] = s | m | bit(v)
        moved[i] = ZERO
        if m != free:  # not swallowed
            moved[i] = _random_subset(_eligible(cliques, nbrs, sub, i, grown[i]))


@njit(cache=True)
def log_path_prob(cliques, nbrs, k, sub, v, grown, alpha, beta):
    """Log probability of the subtree ``sub`` and of the new cliques ``grown`` on it (the moves
    included: their probability depends only on the number of eligible neighbours)."""
    out = log_subtree_prob(nbrs, k, sub, alpha, beta)
    rest = sub
    while rest != ZERO:
        i = lowest(rest)
        rest &= rest - ONE
        s, one_sep = _shared(cliques, nbrs, sub, i)
        free = cliques[i] & ~s
        r = popcount(free)
        m = grown[i] & ~bit(v) & ~s
        if one_sep and r > 1:
            if m == ZERO:
                return -np.inf
            out += math.log(popcount(m) / r) - (r - 1) * LOG2
        elif not one_sep:
            out -= r * LOG2
        if m != free:
            out -= popcount(_eligible(cliques, nbrs, sub, i, grown[i])) * LOG2
    return out


@njit(cache=True)
def log_kernel(cliques, nbrs, k, sub, v, grown, moved, alpha, beta):
    """``log K(T, T')`` for a non-empty subtree: the path's probability plus, when a lone new
    clique sits between its origin and one moved neighbour with the same separator, the
    probability of the path from that neighbour (the module docstring)."""
    out = log_path_prob(cliques, nbrs, k, sub, v, grown, alpha, beta)
    if popcount(sub) != 1:
        return out
    o = lowest(sub)
    body = grown[o] & ~bit(v)
    if body == cliques[o] or popcount(moved[o]) != 1:
        return out
    x = lowest(moved[o])
    if cliques[x] & cliques[o] != body:
        return out
    saved = grown[x]
    grown[x] = grown[o]
    alt = log_path_prob(cliques, nbrs, k, bit(x), v, grown, alpha, beta)
    grown[x] = saved
    top = max(out, alt)
    return top + math.log(math.exp(out - top) + math.exp(alt - top))


@njit(cache=True)
def log_evidence_gain(cliques, nbrs, sub, v, grown, cache, phi, phi_post, consts):
    """``log f(G') - log f(G)`` of the expansion (``sub`` empty: ``v`` isolated)."""
    if sub == ZERO:
        return log_h_cached(bit(v), cache, phi, phi_post, consts)
    out = 0.0
    rest = sub
    while rest != ZERO:
        i = lowest(rest)
        rest &= rest - ONE
        out += log_h_cached(grown[i], cache, phi, phi_post, consts)
        body = grown[i] & ~bit(v)
        out -= log_h_cached(
            cliques[i] if body == cliques[i] else body, cache, phi, phi_post, consts
        )
        later = nbrs[i] & sub & _above(i)
        while later != ZERO:
            j = lowest(later)
            later &= later - ONE
            out -= log_h_cached(grown[i] & grown[j], cache, phi, phi_post, consts)
            out += log_h_cached(cliques[i] & cliques[j], cache, phi, phi_post, consts)
    return out


@njit(cache=True)
def apply_growth(cliques, nbrs, k, sub, v, grown, moved):
    """Turn the tree into the expanded one (non-empty ``sub``); return the new ``k``."""
    index = np.empty(cliques.size, np.int64)
    kk = k
    rest = sub
    while rest != ZERO:
        i = lowest(rest)
        rest &= rest - ONE
        if grown[i] & ~bit(v) == cliques[i]:
            index[i] = i
        else:
            index[i] = kk
            nbrs[kk] = ZERO
            kk += 1
    rest = sub
    while rest != ZERO:  # the old subtree's edges go, the new cliques' replicate them
        i = lowest(rest)
        rest &= rest - ONE
        later = nbrs[i] & sub & _above(i)
        while later != ZERO:
            j = lowest(later)
            later &= later - ONE
            _unlink(nbrs, i, j)
            _link(nbrs, index[i], index[j])
    rest = sub
    while rest != ZERO:
        i = lowest(rest)
        rest &= rest - ONE
        if index[i] != i:
            _link(nbrs, i, index[i])
            go = moved[i]
            while go != ZERO:
                x = lowest(go)
                go &= go - ONE
                _unlink(nbrs, i, x)
                _link(nbrs, index[i], x)
        cliques[index[i]] = grown[i]
    return kk


@njit(cache=True)
def add_isolated(cliques, nbrs, k, v):
    """Add ``{v}`` as a clique joined by empty separators (uniformly redrawn).

    Returns ``k + 1``, ``log nu(empty)`` of the new tree and the change of ``log mu``: only
    ``nu(empty)`` changes, from ``k^(t-2) prod s_i`` to ``(k+1)^(t-1) prod s_i`` for ``t``
    components of sizes ``s_i`` before.
    """
    cliques[k] = bit(v)
    nbrs[k] = ZERO
    _link(nbrs, 0, k)
    count, log_sizes = randomize_at(cliques, nbrs, k + 1, ZERO)
    log_nu_after = (count - 2) * math.log(k + 1) + log_sizes
    log_nu_before = (count - 3) * math.log(k) + log_sizes
    return k + 1, log_nu_after, log_nu_after - log_nu_before


# --- the backward kernel ----------------------------------------------------------------------


@njit(cache=True)
def log_origin_counts(cliques, nbrs, k, z, out):
    """``out[u]``: log of the number of trees the expansion by ``u`` reaches this tree from, for
    every node ``u`` of ``z`` (module docstring); returns the log of their sum, ``log |S|``."""
    rest = z
    while rest != ZERO:
        out[lowest(rest)] = 0.0
        rest &= rest - ONE
    simplicial = simplicial_mask(cliques, k)
    for i in range(k):
        if popcount(cliques[i]) == 1:
            continue
        done = ZERO
        rest = nbrs[i]
        while rest != ZERO:
            d = cliques[i] & ~cliques[lowest(rest)]
            rest &= rest - ONE
            if popcount(d) != 1 or d & done != ZERO:
                continue
            done |= d
            count = 0
            other = nbrs[i]
            while other != ZERO:
                if cliques[i] & ~cliques[lowest(other)] == d:
                    count += 1
                other &= other - ONE
            lone_between_two = count == 2 and popcount(nbrs[i]) == 2 and d & simplicial != ZERO
            if not lone_between_two:
                out[lowest(d)] += math.log(count)
    for i in range(k):
        if popcount(cliques[i]) == 1:
            _isolated_counts(cliques, nbrs, k, out)
            break
    top = -np.inf
    rest = z
    while rest != ZERO:
        top = max(top, out[lowest(rest)])
        rest &= rest - ONE
    total = 0.0
    rest = z
    while rest != ZERO:
        total += math.exp(out[lowest(rest)] - top)
        rest &= rest - ONE
    return top + math.log(total)


@njit(cache=True)
def _isolated_counts(cliques, nbrs, k, out):
    """``out[u] = log nu_{G-u}(empty)`` for every isolated node ``u`` (a clique ``{u}``)."""
    count, log_sizes = _pieces_summary(cliques, nbrs, _all_holders(cliques, k, ZERO), ZERO)
    for i in range(k):
        if popcount(cliques[i]) == 1:  # G - u: count - 1 components on k - 1 cliques
            out[lowest(cliques[i])] = (
                (count - 3) * math.log(k - 1) + log_sizes if count > 2 else 0.0
            )


@njit(cache=True)
def draw_node(log_counts, z, log_total):
    """A node ``u`` of ``z`` drawn with probability ``exp(log_counts[u] - log_total)``."""
    r = np.random.random()
    rest = z
    u = -1
    while rest != ZERO:
        u = lowest(rest)
        rest &= rest - ONE
        r -= math.exp(log_counts[u] - log_total)
        if r < 0.0:
            return u
    return u


@njit(cache=True)
def _relabel(mask, index):
    out = ZERO
    while mask != ZERO:
        i = lowest(mask)
        mask &= mask - ONE
        if index[i] >= 0:
            out |= bit(index[i])
    return out


@njit(cache=True)
def _compact(cliques, nbrs, k, gone, sub, grown, moved):
    """Drop the cliques in ``gone``; relabel the tree and the path (``sub``, ``grown``,
    ``moved``) to the remaining indices. Returns the new ``k`` and ``sub``."""
    index = np.full(k, -1, np.int64)
    kk = 0
    for i in range(k):
        if gone & bit(i) == ZERO:
            index[i] = kk
            kk += 1
    for i in range(k):
        if index[i] >= 0:
            cliques[index[i]] = cliques[i]
            nbrs[index[i]] = _relabel(nbrs[i], index)
            grown[index[i]] = grown[i]
            moved[index[i]] = _relabel(moved[i], index)
    for i in range(kk, k):
        cliques[i] = ZERO
        nbrs[i] = ZERO
    return kk, _relabel(sub, index)


@njit(cache=True)
def collapse(cliques, nbrs, k, u, grown, moved):
    """Remove node ``u`` by the backward kernel's uniform choice of origins (in place).

    Returns the new ``k`` and the expansion path that leads back: the subtree ``sub`` (empty
    when ``u`` was isolated), with ``grown`` and ``moved`` filled on its cliques.
    """
    gone = ZERO
    sub = ZERO
    holders = ZERO
    for i in range(k):
        if cliques[i] & bit(u) != ZERO:
            holders |= bit(i)
    if cliques[lowest(holders)] == bit(u):
        kk, _ = _compact(cliques, nbrs, k, holders, ZERO, grown, moved)
        if kk > 0:
            randomize_at(cliques, nbrs, kk, ZERO)
        return kk, ZERO
    origin = np.full(k, -1, np.int64)
    rest = holders
    while rest != ZERO:  # every origin is chosen on the tree as it is, then the merges are made
        i = lowest(rest)
        rest &= rest - ONE
        o = _draw_origin(cliques, nbrs, i, u)
        grown[o] = cliques[i]
        moved[o] = ZERO if o == i else nbrs[i] & ~holders & ~bit(o)
        sub |= bit(o)
        origin[i] = o
    rest = holders
    while rest != ZERO:
        i = lowest(rest)
        rest &= rest - ONE
        if origin[i] == i:  # swallowed: C' - u is the old clique
            cliques[i] &= ~bit(u)
        else:
            _contract(nbrs, i, origin[i])
            gone |= bit(i)
    return _compact(cliques, nbrs, k, gone, sub, grown, moved)


@njit(cache=True)
def _draw_origin(cliques, nbrs, i, u):
    """A uniform origin of the clique ``i`` holding ``u``: a neighbour ``j`` with
    ``C_i & C_j = C_i - u``, or ``i`` itself when there is none (``C_i - u`` was swallowed)."""
    body = cliques[i] & ~bit(u)
    origins = ZERO
    rest = nbrs[i]
    while rest != ZERO:
        j = lowest(rest)
        rest &= rest - ONE
        if cliques[i] & cliques[j] == body:
            origins |= bit(j)
    if origins == ZERO:
        return i
    return nth_member(origins, np.random.randint(popcount(origins)))


@njit(cache=True)
def _contract(nbrs, i, o):
    """Merge clique ``i`` into its neighbour ``o``: ``o`` takes over ``i``'s edges."""
    rest = nbrs[i] & ~bit(o)
    while rest != ZERO:
        y = lowest(rest)
        rest &= rest - ONE
        _unlink(nbrs, i, y)
        _link(nbrs, o, y)
    _unlink(nbrs, i, o)
