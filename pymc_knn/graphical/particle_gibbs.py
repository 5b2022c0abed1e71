r"""Particle Gibbs over decomposable graphs built node by node (numba, on bit masks).

Two expansion kernels (``kernel``: :data:`CHRISTMAS_TREE`, :data:`SIMPLICIAL`) share the
conditional SMC's structure, its resampling and the drivers at the end of this module.

**The Christmas-tree kernel** (the paper's; :func:`csmc_ct`, :func:`ct_reference`): the state
after step ``m`` is a node set ``z_m`` and a junction tree ``T_m`` on it, the intermediate
targets ``gamma_m = C(p, m)^-1 f(x_{z_m} | g(T_m)) / mu(g(T_m))``, the expansion and backward
kernels those of :mod:`pymc_knn.graphical.christmas_tree`, and the incremental weight

.. math::

    \frac{\gamma_{m+1} R_m}{\gamma_m K_m}
    = (m + 1) \, \frac{f(G_{m+1})}{f(G_m)} \, \frac{\mu(G_m)}{\mu(G_{m+1})}
      \, \frac{1}{|S_m(T_{m+1})| \, K(T_m, T_{m+1})},

``|S_m|`` the size of the backward kernel's support (it is uniform on it).

**The node-by-node (simplicial) kernel** (this package's; :func:`csmc`): the temporalisation of
Olsson et al. 2016 as used by Pavlenko and Rios (2017, section 4) on graphs: the state after
step ``m`` is a decomposable graph ``G_m`` on a set ``z_m`` of ``m`` of the ``p`` nodes, with
the intermediate targets

.. math::

    \gamma_m(z_m, G_m) = \binom{p}{m}^{-1} f(x_{z_m} \mid G_m),

so that ``gamma_p`` is the graph posterior under the uniform prior, up to its normaliser
``Z_p = sum_G f(x | G)`` (the number of decomposable graphs when there are no data).

**Expansion kernel**: a node ``v`` not
in ``z_m`` is drawn uniformly, then its neighbour set ``N`` is a complete set of ``G_m``: empty
with probability ``1 - beta``; otherwise a maximal clique ``C`` of ``G_m`` is drawn uniformly
and ``N`` is a non-empty subset of ``C`` keeping each node with probability ``alpha``. Adding
``v`` as a simplicial node keeps the graph decomposable, and every decomposable graph is reached
(by its perfect elimination orderings). The kernel's probability of the transition is exact:

.. math::

    q(N \mid G_m) = \frac{\beta}{k} \sum_{C \supseteq N}
        \frac{\alpha^{|N|} (1-\alpha)^{|C|-|N|}}{1 - (1-\alpha)^{|C|}}

for ``N`` non-empty (``k`` maximal cliques) and ``1 - beta`` for ``N`` empty.
**Backward kernel**: remove one of the ``s(G_{m+1})`` simplicial nodes of ``G_{m+1}`` uniformly;
its support is exactly the set of states the expansion reaches ``G_{m+1}`` from. The incremental
weight is therefore

.. math::

    \frac{\gamma_{m+1} R_m}{\gamma_m K_m}
    = \frac{h(N \cup \{v\})}{h(N)} \, \frac{m + 1}{s(G_{m+1})\, q(N \mid G_m)},

as ``f`` changes by one clique ``N + v`` and one separator ``N`` (whether ``N`` was a maximal
clique, which ``N + v`` replaces, or not, when ``N + v`` hangs off a clique holding ``N``).

One particle Gibbs transition (Pavlenko and Rios 2017, Algorithm 2) runs conditional SMC with
conditional systematic resampling (Chopin and Singh 2015; see ``_resample``) around the
reference trajectory, draws one final particle by its weight
and refreshes its whole history by the backward kernel (a new insertion order drawn node by
node, and with the Christmas-tree kernel new intermediate trees), which is the next reference.
The node-by-node kernel targets graphs rather than junction trees, so it needs no ``1 / mu(G)``
factor: the graph marginal is the same.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._bits import ONE, ZERO, bit, lowest, nth_member, popcount
from .christmas_tree import (
    draw_node,
    add_isolated,
    adjacency_of,
    apply_growth,
    collapse,
    draw_growth,
    draw_subtree,
    log_evidence_gain,
    log_kernel,
    log_mu,
    log_nu,
    log_origin_counts,
    randomize_tree,
    tree_from_graph,
    tree_log_evidence,
)
from .decomposable import maximal_cliques, simplicial_mask
from .evidence import log_h_cached


@njit(cache=True)
def log_q_neighbours(cliques, k, nb, alpha, beta):
    """Log probability that the expansion kernel draws the neighbour set ``nb``."""
    if nb == ZERO:
        return math.log(1.0 - beta)
    size = popcount(nb)
    total = 0.0
    for i in range(k):
        if cliques[i] & nb == nb:
            c = popcount(cliques[i])
            total += alpha**size * (1.0 - alpha) ** (c - size) / (1.0 - (1.0 - alpha) ** c)
    return math.log(beta) - math.log(k) + math.log(total)


@njit(cache=True)
def draw_neighbours(cliques, k, alpha, beta):
    """Draw a neighbour set from the expansion kernel (module docstring)."""
    if np.random.random() < 1.0 - beta:
        return ZERO
    c = cliques[np.random.randint(k)]
    while True:
        nb = ZERO
        rest = c
        while rest != ZERO:
            low = rest & (~rest + ONE)
            if np.random.random() < alpha:
                nb |= low
            rest &= rest - ONE
        if nb != ZERO:
            return nb


@njit(cache=True)
def add_node(adj, cliques, k, v, nb):
    """Add ``v`` with the complete neighbour set ``nb``; return the new number of cliques."""
    adj[v] = nb
    rest = nb
    while rest != ZERO:
        adj[lowest(rest)] |= bit(v)
        rest &= rest - ONE
    for i in range(k):
        if cliques[i] == nb:
            cliques[i] = nb | bit(v)
            return k
    cliques[k] = nb | bit(v)
    return k + 1


@njit(cache=True)
def remove_simplicial(cliques, k, s):
    """Remove the simplicial node ``s``; return the new number of cliques."""
    for i in range(k):
        if cliques[i] & bit(s) != ZERO:
            rest = cliques[i] & ~bit(s)
            absorbed = rest == ZERO
            for j in range(k):
                if j != i and cliques[j] & rest == rest:
                    absorbed = True
            if absorbed:
                cliques[i] = cliques[k - 1]
                return k - 1
            cliques[i] = rest
            return k
    return k


@njit(cache=True)
def draw_elimination_order(adj, cliques, k):
    """Backward kernel to the end: an insertion order whose every step removes a uniform
    simplicial node (``cliques``, ``k``: the graph's maximal cliques; both are left intact)."""
    p = adj.size
    work = cliques.copy()
    order = np.empty(p, np.int64)
    for step in range(p - 1, -1, -1):
        simp = simplicial_mask(work, k)
        s = nth_member(simp, np.random.randint(popcount(simp)))
        order[step] = s
        k = remove_simplicial(work, k, s)
    return order


@njit(cache=True)
def _resample(logw, conditional, out):
    """Systematic resampling of all ``n`` ancestors by ``exp(logw)`` into ``out``.

    Unconditional: ``U ~ Uniform(0, 1)`` and slot ``i`` takes the particle whose cumulative
    weight interval holds ``(U + i) / n``. Conditional (the reference particle is the last one
    and must keep the last particle as its ancestor; Chopin and Singh 2015, section on
    conditional resampling schemes): systematic resampling followed by a uniform permutation of
    the slots, conditioned on the last slot drawing the last particle. Given ``U`` that event has
    probability ``O(U) / n``, with ``O(U)`` the last particle's number of offspring, so ``U`` is
    drawn with density proportional to ``O(U)``: ``x`` uniform on the last particle's interval
    ``(n C_{n-1}, n]`` and ``U = x - floor(x)`` (each ``U`` is reached once per offspring). The
    last slot takes one of the last particle's copies; the other ``n - 1`` ancestors fill the
    free slots (their order is immaterial: the free particles move independently).
    """
    n = logw.size
    w = np.exp(logw - logw.max())
    cum = np.cumsum(w)
    total = cum[-1]
    if conditional:
        lo = n * cum[n - 2] / total if n > 1 else 0.0
        x = lo + (n - lo) * np.random.random()
        u = x - math.floor(x)
    else:
        u = np.random.random()
    j = 0
    filled = 0
    skipped = not conditional
    for i in range(n):
        point = (u + i) / n * total
        while j < n - 1 and cum[j] < point:
            j += 1
        if not skipped and j == n - 1:
            skipped = True  # this copy of the reference's ancestor is the reference's own
            continue
        if conditional and filled == n - 1:
            break  # rounding put no point in the reference's interval: drop the last point
        out[filled] = j
        filled += 1
    if conditional:
        out[n - 1] = n - 1


@njit(cache=True)
def _logmeanexp(logw):
    top = logw.max()
    return top + math.log(np.mean(np.exp(logw - top)))


@njit(cache=True)
def csmc(
    p,
    n_particles,
    conditional,
    ref_order,
    ref_adj,
    alpha,
    beta,
    log_q_offset,
    edge_logw,
    cache,
    phi,
    phi_post,
    consts,
    adj,
    cliques,
    ncl,
    loglik,
    logw,
):
    """One (conditional) SMC pass over the ``p`` insertion steps.

    The state arrays ``adj``, ``cliques`` (n_particles, p), ``ncl``, ``loglik`` and ``logw``
    (n_particles,) are overwritten with the final particles. When ``conditional``, the last
    particle follows the reference insertion order ``ref_order`` on the graph ``ref_adj``.
    ``log_q_offset`` is added to the log kernel probability of non-empty neighbour sets: zero,
    except in the negative control of the tests. ``edge_logw``, when not empty, is a log prior
    weight per number of edges (length ``p (p - 1) / 2 + 1``), applied at the last step (the
    final target becomes ``f(x | G) exp(edge_logw[|E|])``; the others need no prior).
    Returns the log normaliser estimate.
    """
    full = ~ZERO if p == 64 else (ONE << np.uint64(p)) - ONE
    z = np.zeros(n_particles, np.uint64)
    n_edges = np.zeros(n_particles, np.int64)
    anc = np.empty(n_particles, np.int64)
    adj[:, :] = ZERO
    for i in range(n_particles):
        v = ref_order[0] if conditional and i == n_particles - 1 else np.random.randint(p)
        z[i] = bit(v)
        cliques[i, 0] = bit(v)
        ncl[i] = 1
        loglik[i] = log_h_cached(bit(v), cache, phi, phi_post, consts)
        logw[i] = loglik[i]
    log_z = _logmeanexp(logw)
    for m in range(1, p):
        _resample(logw, conditional, anc)
        adj[:, :] = adj[anc]
        cliques[:, :] = cliques[anc]
        ncl[:] = ncl[anc]
        loglik[:] = loglik[anc]
        z[:] = z[anc]
        n_edges[:] = n_edges[anc]
        for i in range(n_particles):
            k = ncl[i]
            if conditional and i == n_particles - 1:
                v = ref_order[m]
                nb = ref_adj[v] & z[i]
            else:
                v = nth_member(full & ~z[i], np.random.randint(p - m))
                nb = draw_neighbours(cliques[i], k, alpha, beta)
            lq = log_q_neighbours(cliques[i], k, nb, alpha, beta)
            if nb != ZERO:
                lq += log_q_offset
            gain = log_h_cached(nb | bit(v), cache, phi, phi_post, consts) - log_h_cached(
                nb, cache, phi, phi_post, consts
            )
            ncl[i] = add_node(adj[i], cliques[i], k, v, nb)
            z[i] |= bit(v)
            s = popcount(simplicial_mask(cliques[i], ncl[i]))
            loglik[i] += gain
            n_edges[i] += popcount(nb)
            logw[i] = gain + math.log(m + 1.0) - math.log(s) - lq
            if m == p - 1 and edge_logw.size > 0:
                logw[i] += edge_logw[n_edges[i]]
        log_z += _logmeanexp(logw)
    return log_z


@njit(cache=True)
def _draw_index(logw):
    w = np.exp(logw - logw.max())
    u = np.random.random() * w.sum()
    acc = 0.0
    for i in range(w.size):
        acc += w[i]
        if u < acc:
            return i
    return w.size - 1


# --- the Christmas-tree kernel over junction trees (Pavlenko and Rios 2017, section 4) ---------


@njit(cache=True)
def ct_state(n_particles, p):
    """Particle arrays of the junction-tree SMC: cliques, tree neighbours (n_particles, p),
    number of cliques, node set, ``log f``, ``log mu``, number of edges, log weight."""
    return (
        np.zeros((n_particles, p), np.uint64),
        np.zeros((n_particles, p), np.uint64),
        np.zeros(n_particles, np.int64),
        np.zeros(n_particles, np.uint64),
        np.zeros(n_particles),
        np.zeros(n_particles),
        np.zeros(n_particles, np.int64),
        np.zeros(n_particles),
    )


@njit(cache=True)
def ct_reference_arrays(p):
    """A reference trajectory ``w_1..w_p`` (index ``m``): the particle arrays of
    :func:`ct_state` with one row per step, the log weight being that of step ``m - 1 -> m``."""
    return ct_state(p + 1, p)


@njit(cache=True)
def _store(state, i, ref, m):
    """Copy row ``m`` of the reference into particle ``i``."""
    state[0][i] = ref[0][m]
    state[1][i] = ref[1][m]
    state[2][i] = ref[2][m]
    state[3][i] = ref[3][m]
    state[4][i] = ref[4][m]
    state[5][i] = ref[5][m]
    state[6][i] = ref[6][m]
    state[7][i] = ref[7][m]


@njit(cache=True)
def _take(state, anc):
    """Particles ``anc`` of ``state`` in place of all particles (resampling)."""
    for a in (state[0], state[1]):
        a[:, :] = a[anc]
    for b in (state[2], state[6]):
        b[:] = b[anc]
    state[3][:] = state[3][anc]
    for c in (state[4], state[5], state[7]):
        c[:] = c[anc]


@njit(cache=True)
def _ct_weight(m, gain, log_mu_before, log_mu_after, log_support, log_k):
    """``gamma_{m+1} R_m / (gamma_m K_m)`` with ``psi_m`` uniform over node sets of size ``m``:
    ``(m + 1) f'/f mu/mu' / (|S(T')| K(T, T'))``."""
    return math.log(m + 1.0) + gain + log_mu_before - log_mu_after - log_support - log_k


@njit(cache=True)
def _ct_grow(cl, nb, k, z, p, m, alpha, beta, log_q_offset, cache, phi, phi_post, consts, work):
    """Expand one free particle by a uniform new node and the Christmas-tree kernel (in place).

    Returns the new number of cliques, the node, ``log K``, the evidence gain, its degree and
    the change of ``log mu`` when it is known without counting (an isolated node; else NaN).
    """
    grown, moved = work[0], work[1]
    full = ~ZERO if p == 64 else (ONE << np.uint64(p)) - ONE
    v = nth_member(full & ~z, np.random.randint(p - m))
    sub = draw_subtree(nb, k, alpha, beta)
    if sub == ZERO:
        k, log_nu_empty, log_mu_change = add_isolated(cl, nb, k, v)
        gain = log_h_cached(bit(v), cache, phi, phi_post, consts)
        return k, v, math.log(1.0 - beta) - log_nu_empty, gain, 0, log_mu_change
    draw_growth(cl, nb, sub, v, grown, moved)
    log_k = log_kernel(cl, nb, k, sub, v, grown, moved, alpha, beta) + log_q_offset
    gain = log_evidence_gain(cl, nb, sub, v, grown, cache, phi, phi_post, consts)
    degree = _degree(sub, v, grown)
    k = apply_growth(cl, nb, k, sub, v, grown, moved)
    return k, v, log_k, gain, degree, np.nan


@njit(cache=True)
def _degree(sub, v, grown):
    """The new node's number of neighbours: the union of its new cliques, less itself."""
    nb = ZERO
    rest = sub
    while rest != ZERO:
        nb |= grown[lowest(rest)]
        rest &= rest - ONE
    return popcount(nb) - 1


@njit(cache=True)
def _ct_step(state, i, p, m, alpha, beta, log_q_offset, cache, phi, phi_post, consts, work):
    """Step ``m -> m + 1`` of free particle ``i``: expansion, then its incremental weight."""
    cl, nb, ncl, z, loglik, logmu, n_edges, logw = state
    k, v, log_k, gain, degree, log_mu_change = _ct_grow(
        cl[i],
        nb[i],
        ncl[i],
        z[i],
        p,
        m,
        alpha,
        beta,
        log_q_offset,
        cache,
        phi,
        phi_post,
        consts,
        work,
    )
    ncl[i] = k
    z[i] |= bit(v)
    loglik[i] += gain
    n_edges[i] += degree
    after = log_mu(cl[i], nb[i], k) if np.isnan(log_mu_change) else logmu[i] + log_mu_change
    log_support = log_origin_counts(cl[i], nb[i], k, z[i], work[2])
    logw[i] = _ct_weight(m, gain, logmu[i], after, log_support, log_k)
    logmu[i] = after


@njit(cache=True)
def _ct_start(state, i, p, cache, phi, phi_post, consts):
    """A free particle's first tree: one uniform node, weight ``h({v})``."""
    cl, nb, ncl, z, loglik, logmu, n_edges, logw = state
    v = np.random.randint(p)
    cl[i, 0] = bit(v)
    ncl[i] = 1
    z[i] = bit(v)
    loglik[i] = log_h_cached(bit(v), cache, phi, phi_post, consts)
    logmu[i] = 0.0
    n_edges[i] = 0
    logw[i] = loglik[i]


@njit(cache=True)
def csmc_ct(
    p,
    n_particles,
    conditional,
    ref,
    alpha,
    beta,
    log_q_offset,
    edge_logw,
    cache,
    phi,
    phi_post,
    consts,
    state,
):
    """One (conditional) SMC pass over junction trees, nodes added in random order.

    ``state`` (:func:`ct_state`) is overwritten with the final particles. When ``conditional``
    the last particle is the reference trajectory ``ref`` (:func:`ct_reference`), whose weights
    it carries. ``log_q_offset`` is added to ``log K`` of every non-empty subtree (zero, except
    in the tests' negative control); ``edge_logw`` as in :func:`csmc`. Returns the log
    normaliser estimate.
    """
    work = (np.zeros(p, np.uint64), np.zeros(p, np.uint64), np.zeros(p))
    anc = np.empty(n_particles, np.int64)
    last = n_particles - 1
    state[0][:, :] = ZERO
    state[1][:, :] = ZERO
    for i in range(n_particles):
        if conditional and i == last:
            _store(state, i, ref, 1)
        else:
            _ct_start(state, i, p, cache, phi, phi_post, consts)
    logw = state[7]
    log_z = _logmeanexp(logw)
    for m in range(1, p):
        _resample(logw, conditional, anc)
        _take(state, anc)
        for i in range(n_particles):
            if conditional and i == last:
                _store(state, i, ref, m + 1)
                continue
            _ct_step(state, i, p, m, alpha, beta, log_q_offset, cache, phi, phi_post, consts, work)
            if m == p - 1 and edge_logw.size > 0:
                logw[i] += edge_logw[state[6][i]]
        log_z += _logmeanexp(logw)
    return log_z


@njit(cache=True)
def ct_reference(
    cliques, nbrs, k, alpha, beta, log_q_offset, edge_logw, cache, phi, phi_post, consts, ref
):
    """Draw the history of the junction tree ``(cliques, nbrs, k)`` on all ``p`` nodes by the
    backward kernel (node ``u`` and tree uniform over the support of ``K(., T)``, one node at a
    time) into ``ref`` (:func:`ct_reference_arrays`), with each step's weight."""
    p = cliques.size
    cl, nb = cliques.copy(), nbrs.copy()
    grown, moved, counts = np.zeros(p, np.uint64), np.zeros(p, np.uint64), np.zeros(p)
    z = ~ZERO if p == 64 else (ONE << np.uint64(p)) - ONE
    loglik = tree_log_evidence(cl, nb, k, cache, phi, phi_post, consts)
    logmu = log_mu(cl, nb, k)
    n_edges = popcount_sum(adjacency_of(cl, k, p)) // 2
    for m in range(p, 1, -1):
        _record(ref, m, cl, nb, k, z, loglik, logmu, n_edges)
        log_support = log_origin_counts(cl, nb, k, z, counts)
        u = draw_node(counts, z, log_support)
        log_nu_empty = log_nu(cl, nb, k, ZERO)
        k, sub = collapse(cl, nb, k, u, grown, moved)
        if sub == ZERO:
            log_k = math.log(1.0 - beta) - log_nu_empty
        else:
            log_k = log_kernel(cl, nb, k, sub, u, grown, moved, alpha, beta) + log_q_offset
            n_edges -= _degree(sub, u, grown)
        before = tree_log_evidence(cl, nb, k, cache, phi, phi_post, consts)
        logmu_before = log_mu(cl, nb, k)
        ref[7][m] = _ct_weight(m - 1, loglik - before, logmu_before, logmu, log_support, log_k)
        if m == p and edge_logw.size > 0:
            ref[7][m] += edge_logw[ref[6][m]]
        z &= ~bit(u)
        loglik, logmu = before, logmu_before
    _record(ref, 1, cl, nb, k, z, loglik, logmu, n_edges)
    ref[7][1] = loglik


@njit(cache=True)
def _record(ref, m, cl, nb, k, z, loglik, logmu, n_edges):
    ref[0][m] = cl
    ref[1][m] = nb
    ref[2][m] = k
    ref[3][m] = z
    ref[4][m] = loglik
    ref[5][m] = logmu
    ref[6][m] = n_edges


@njit(cache=True)
def popcount_sum(masks):
    """Total number of set bits of an array of masks."""
    out = 0
    for x in masks:
        out += popcount(x)
    return out


# --- drivers: both kernels ---------------------------------------------------------------------

SIMPLICIAL = 0
"""Kernel code of the node-by-node expansion kernel (a new simplicial node, this package's)."""
CHRISTMAS_TREE = 1
"""Kernel code of the Christmas-tree kernel over junction trees (the paper's)."""
KERNELS = {"simplicial": SIMPLICIAL, "christmas_tree": CHRISTMAS_TREE}
"""The kernels by name, as the estimator and the PyMC step take them."""


@njit(cache=True)
def _pg_christmas_tree(
    p, n_particles, n_sweeps, alpha, beta, log_q_offset, cache, phi, phi_post, consts
):
    state = ct_state(n_particles, p)
    ref = ct_reference_arrays(p)
    graphs = np.zeros((n_sweeps, p), np.uint64)
    logliks = np.zeros(n_sweeps)
    no_prior = np.zeros(0)
    for t in range(n_sweeps):
        csmc_ct(
            p,
            n_particles,
            t > 0,
            ref,
            alpha,
            beta,
            log_q_offset,
            no_prior,
            cache,
            phi,
            phi_post,
            consts,
            state,
        )
        j = _draw_index(state[7])
        graphs[t] = adjacency_of(state[0][j], state[2][j], p)
        logliks[t] = state[4][j]
        ct_reference(
            state[0][j],
            state[1][j],
            state[2][j],
            alpha,
            beta,
            log_q_offset,
            no_prior,
            cache,
            phi,
            phi_post,
            consts,
            ref,
        )
    return graphs, logliks


@njit(cache=True)
def _pg_simplicial(
    p, n_particles, n_sweeps, alpha, beta, log_q_offset, cache, phi, phi_post, consts
):
    adj = np.zeros((n_particles, p), np.uint64)
    cliques = np.zeros((n_particles, p), np.uint64)
    ncl = np.zeros(n_particles, np.int64)
    loglik = np.zeros(n_particles)
    logw = np.zeros(n_particles)
    graphs = np.zeros((n_sweeps, p), np.uint64)
    logliks = np.zeros(n_sweeps)
    ref_order = np.arange(p)
    ref_adj = np.zeros(p, np.uint64)
    for t in range(n_sweeps):
        csmc(
            p,
            n_particles,
            t > 0,
            ref_order,
            ref_adj,
            alpha,
            beta,
            log_q_offset,
            np.zeros(0),
            cache,
            phi,
            phi_post,
            consts,
            adj,
            cliques,
            ncl,
            loglik,
            logw,
        )
        j = _draw_index(logw)
        ref_adj = adj[j].copy()
        graphs[t] = ref_adj
        logliks[t] = loglik[j]
        ref_order = draw_elimination_order(ref_adj, cliques[j], ncl[j])
    return graphs, logliks


@njit(cache=True)
def particle_gibbs(
    p, n_particles, n_sweeps, alpha, beta, log_q_offset, seed, cache, phi, phi_post, consts, kernel
):
    """Run ``n_sweeps`` particle Gibbs transitions from an unconditional SMC start.

    ``kernel`` is :data:`SIMPLICIAL` or :data:`CHRISTMAS_TREE`. Returns the final graph of each
    sweep (n_sweeps, p) as adjacency masks and its ``log f(x | G)`` (n_sweeps,).
    """
    np.random.seed(seed)
    if kernel == CHRISTMAS_TREE:
        return _pg_christmas_tree(
            p, n_particles, n_sweeps, alpha, beta, log_q_offset, cache, phi, phi_post, consts
        )
    return _pg_simplicial(
        p, n_particles, n_sweeps, alpha, beta, log_q_offset, cache, phi, phi_post, consts
    )


@njit(cache=True)
def smc_log_normaliser(p, n_particles, alpha, beta, seed, cache, phi, phi_post, consts, kernel):
    """The unconditional SMC estimate of ``log Z_p = log sum_G f(x | G)`` (one pass)."""
    np.random.seed(seed)
    if kernel == CHRISTMAS_TREE:
        return csmc_ct(
            p,
            n_particles,
            False,
            ct_reference_arrays(p),
            alpha,
            beta,
            0.0,
            np.zeros(0),
            cache,
            phi,
            phi_post,
            consts,
            ct_state(n_particles, p),
        )
    adj = np.zeros((n_particles, p), np.uint64)
    cliques = np.zeros((n_particles, p), np.uint64)
    ncl = np.zeros(n_particles, np.int64)
    loglik = np.zeros(n_particles)
    logw = np.zeros(n_particles)
    return csmc(
        p,
        n_particles,
        False,
        np.arange(p),
        np.zeros(p, np.uint64),
        alpha,
        beta,
        0.0,
        np.zeros(0),
        cache,
        phi,
        phi_post,
        consts,
        adj,
        cliques,
        ncl,
        loglik,
        logw,
    )


@njit(cache=True)
def _transition_christmas_tree(
    graph, n_particles, alpha, beta, edge_logw, cache, phi, phi_post, consts
):
    p = graph.size
    cl, nb, k = tree_from_graph(graph)
    randomize_tree(cl, nb, k)  # T given G is uniform over the mu(G) junction trees
    ref = ct_reference_arrays(p)
    ct_reference(cl, nb, k, alpha, beta, 0.0, edge_logw, cache, phi, phi_post, consts, ref)
    state = ct_state(n_particles, p)
    csmc_ct(
        p, n_particles, True, ref, alpha, beta, 0.0, edge_logw, cache, phi, phi_post, consts, state
    )
    j = _draw_index(state[7])
    return adjacency_of(state[0][j], state[2][j], p), state[4][j]


@njit(cache=True)
def _transition_simplicial(
    graph, n_particles, alpha, beta, edge_logw, cache, phi, phi_post, consts
):
    p = graph.size
    adj = np.zeros((n_particles, p), np.uint64)
    cliques = np.zeros((n_particles, p), np.uint64)
    ncl = np.zeros(n_particles, np.int64)
    loglik = np.zeros(n_particles)
    logw = np.zeros(n_particles)
    current = maximal_cliques(graph)
    work = np.zeros(p, np.uint64)
    work[: current.size] = current
    ref_order = draw_elimination_order(graph, work, current.size)
    csmc(
        p,
        n_particles,
        True,
        ref_order,
        graph,
        alpha,
        beta,
        0.0,
        edge_logw,
        cache,
        phi,
        phi_post,
        consts,
        adj,
        cliques,
        ncl,
        loglik,
        logw,
    )
    j = _draw_index(logw)
    return adj[j].copy(), loglik[j]


@njit(cache=True)
def pg_transition(
    graph, n_particles, alpha, beta, edge_logw, seed, cache, phi, phi_post, consts, kernel
):
    """One particle Gibbs transition from the graph ``graph`` (adjacency masks).

    The reference trajectory is redrawn from ``graph`` by the backward kernel (the exact
    conditional of the history given the graph; with the Christmas-tree kernel, after a uniform
    junction tree of the graph), then conditional SMC runs around it and one final particle is
    drawn by its weight. Returns its graph and ``log f(x | G)``.
    """
    np.random.seed(seed)
    if kernel == CHRISTMAS_TREE:
        return _transition_christmas_tree(
            graph, n_particles, alpha, beta, edge_logw, cache, phi, phi_post, consts
        )
    return _transition_simplicial(
        graph, n_particles, alpha, beta, edge_logw, cache, phi, phi_post, consts
    )
