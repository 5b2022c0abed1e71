"""numba kernels of the posterior predictive of new points (Cucala et al. 2009, eq. 5).

A new point ``a`` is added to the training points as point ``n + 1`` of the joint model; its
class given the training labels then has the full conditional
``P(y_a = g | y, beta, theta) ∝ exp(beta h_a(g))`` with the *strength*
``h_a(g) = a_g sum_j (W_aj + W_ja) [y_j == g]``: the training points among the new point's
neighbours and those that would count it among theirs. Kernels here compute strengths; the
probabilities and their summaries over posterior draws follow from ``beta * h``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .signals import check_signals
from .search import sq_distance
from .structure import (
    BALL,
    NO_DISTANCES,
    NO_SHELLS,
    ball_radius2,
    dnn_log_ratio,
    dnn_log_ratios,
    row_reference,
    row_weights,
    shifted_row,
)


@njit(cache=True, parallel=True)
def knn_strengths(order, enter_indptr, enter_index, enter_k, y, ks, class_weights, equal):
    """Strengths ``h[a, t, g]`` of new points in a kNN model, for each ``k = ks[t]``.

    Parameters
    ----------
    order : int64 array (m, K)
        Each new point's training neighbours, nearest first.
    enter_indptr, enter_index, enter_k : int64 arrays (m + 1,), (nnz,), (nnz,)
        CSR of the reverse neighbourhoods: for new point ``a``, the training points
        ``enter_index[enter_indptr[a]:enter_indptr[a + 1]]`` and the smallest ``k <= K`` at
        which each counts ``a`` among its ``k`` nearest (points that never do are absent).
    y : int64 array (n,)
    ks : int64 array (T,)
        Values of ``k`` in ``1..K``.
    class_weights : float64 array (G,)
    equal : bool
        Equal-weight neighbours (Yoon and Friel 2015): the union of both neighbourhoods, each
        point once; else symmetrised (Cucala et al. 2009): a mutual neighbour counts twice.
    """
    m, K = order.shape
    G = class_weights.size
    T = ks.size
    out = np.empty((m, T, G))
    for a in prange(m):
        # joins[kk, g]: class-g neighbour entries that appear when k reaches kk
        joins = np.zeros((K + 2, G))
        for r in range(K):
            joins[r + 1, y[order[a, r]]] += 1.0
        by_index = np.argsort(order[a])
        listed = order[a][by_index]
        for p in range(enter_indptr[a], enter_indptr[a + 1]):
            j = enter_index[p]
            e = enter_k[p]
            if equal:  # a point in both neighbourhoods enters once, at the smaller k
                s = np.searchsorted(listed, j)
                if s < K and listed[s] == j:
                    rank = by_index[s] + 1
                    if e < rank:
                        joins[rank, y[j]] -= 1.0
                        joins[e, y[j]] += 1.0
                    continue
            joins[e, y[j]] += 1.0
        for kk in range(2, K + 1):
            for g in range(G):
                joins[kk, g] += joins[kk - 1, g]
        for t in range(T):
            k = ks[t]
            for g in range(G):
                out[a, t, g] = class_weights[g] * joins[k, g] / k
    return out


@njit(cache=True, parallel=True)
def dnn_row_sums(sq_train, sigmas, kernel, epsilon):
    """Per ``sigma`` and training row ``j``: ``R[t, j]``, the squared distance of ``j``'s
    nearest training point, to which the row's log-weights are relative (its largest weight,
    :func:`~pymc_knn.kernels.structure.dnn_log_ratio`), and
    ``S[t, j] = sum_{l != j} K(d_jl) / K(d_ref)``."""
    n = sq_train.shape[0]
    T = sigmas.size
    R = np.empty((T, n))
    S = np.empty((T, n))
    for t in prange(T):
        for j in range(n):
            R[t, j] = row_reference(sq_train[j], j)
            logw = dnn_log_ratios(sq_train[j], R[t, j], sigmas[t], kernel, epsilon)
            _, S[t, j] = shifted_row(logw, j)  # the largest log-ratio is the reference's, 0
    return R, S


@njit(cache=True, parallel=True)
def dnn_strengths(sq_new, y, sigmas, R, S, kernel, epsilon, class_weights):
    """Strengths ``h[a, t, g]`` of new points in a d-nn model at each ``sigma = sigmas[t]``.

    The new point's own row ``W_a.`` is normalised over the training points; training row ``j``
    over its ``n - 1`` other training points and the new point, as in the joint model of the
    ``n + 1`` points. ``R, S`` come from :func:`dnn_row_sums`.
    """
    m, n = sq_new.shape
    G = class_weights.size
    T = sigmas.size
    out = np.zeros((m, T, G))
    for a in prange(m):
        ref = row_reference(sq_new[a], -1)
        for t in range(T):
            logw = dnn_log_ratios(sq_new[a], ref, sigmas[t], kernel, epsilon)
            mx, total = shifted_row(logw, -1)
            for j in range(n):
                own = np.exp(logw[j] - mx) / total
                # the new point's weight in row j, relative to j's nearest training point
                x = dnn_log_ratio(sq_new[a, j], R[t, j], sigmas[t], kernel, epsilon)
                if x > 0.0:  # the new point outweighs j's nearest training point
                    back = 1.0 / (S[t, j] * np.exp(-x) + 1.0)
                else:
                    e = np.exp(x)
                    back = e / (S[t, j] + e)
                out[a, t, y[j]] += own + back
            for g in range(G):
                out[a, t, g] *= class_weights[g]
    return out


@njit(cache=True)
def softmax_into(beta, h, out):
    """``out[g] = exp(beta h[g]) / sum_l exp(beta h[l])``."""
    G = h.size
    mx = -np.inf
    for g in range(G):
        if beta * h[g] > mx:
            mx = beta * h[g]
    total = 0.0
    for g in range(G):
        out[g] = np.exp(beta * h[g] - mx)
        total += out[g]
    for g in range(G):
        out[g] /= total


@njit(cache=True, parallel=True)
def draw_probabilities(h, beta, theta_index):
    """Per-draw class probabilities ``p[d, a, g]`` from strengths ``h[a, t, g]``.

    Draw ``d`` has ``beta[d]`` and uses the strengths of ``theta_index[d]``.
    """
    m, _, G = h.shape
    D = beta.size
    out = np.empty((D, m, G))
    for d in prange(D):
        t = theta_index[d]
        for a in range(m):
            softmax_into(beta[d], h[a, t], out[d, a])
    return out


@njit(cache=True)
def weighted_quantile_sorted(values, weights, q):
    """The ``q``-quantile (inverted cdf) of sorted ``values`` with ``weights``."""
    target = q * weights.sum()
    acc = 0.0
    for i in range(values.size):
        acc += weights[i]
        if acc >= target and weights[i] > 0.0:
            return values[i]
    return values[-1]


@njit(cache=True, parallel=True)
def summaries_general(h, beta, theta_index, weights, lo_q, hi_q):
    """Posterior mean and equal-tailed interval of each class probability, any ``G``.

    ``(beta, theta_index, weights)`` are the distinct draws and their multiplicities. Returns
    ``mean, lower, upper``, each ``(m, G)``.
    """
    m, _, G = h.shape
    U = beta.size
    wsum = weights.sum()
    mean = np.zeros((m, G))
    lower = np.empty((m, G))
    upper = np.empty((m, G))
    for a in prange(m):
        p = np.empty((U, G))
        for u in range(U):
            softmax_into(beta[u], h[a, theta_index[u]], p[u])
            for g in range(G):
                mean[a, g] += weights[u] * p[u, g]
        for g in range(G):
            mean[a, g] /= wsum
            order = np.argsort(p[:, g])
            vals = p[order, g]
            w = weights[order]
            lower[a, g] = weighted_quantile_sorted(vals, w, lo_q)
            upper[a, g] = weighted_quantile_sorted(vals, w, hi_q)
    return mean, lower, upper


@njit(cache=True)
def _weight_at_most(s, L, beta_sorted, cumw, start, stop):
    """Weight of the draws of one group (sorted betas) whose logit ``beta * s`` is ``<= L``."""
    if s > 0.0:
        i = np.searchsorted(beta_sorted[start:stop], L / s, side="right")
        return cumw[start + i] - cumw[start]
    if s < 0.0:
        i = np.searchsorted(beta_sorted[start:stop], L / s, side="left")
        return cumw[stop] - cumw[start + i]
    return cumw[stop] - cumw[start] if L >= 0.0 else 0.0


@njit(cache=True)
def _logit_quantile(s, beta_sorted, cumw, bounds, q, lo, hi):
    """The ``q``-quantile (inverted cdf) of the logits ``beta * s_t`` over all groups ``t``.

    Bisection on the logit: the weight below ``L`` is a sum of binary searches, one per group.
    """
    T = s.size
    target = q * cumw[-1]
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        w = 0.0
        for t in range(T):
            w += _weight_at_most(s[t], mid, beta_sorted, cumw, bounds[t], bounds[t + 1])
        if w >= target:
            hi = mid
        else:
            lo = mid
    return hi


@njit(cache=True)
def _sorted_logit_quantiles(s, beta_sorted, weights, bounds, lo_q, hi_q, lower, upper):
    """:func:`summaries_two_classes`' intervals of one point from its logits sorted: the
    ``lo_q``- and ``hi_q``-quantiles (inverted cdf) of ``beta * s_t`` (class 1) and of
    ``-beta * s_t`` (class 0, the same order reversed), as probabilities into ``lower[g]`` and
    ``upper[g]``."""
    U = beta_sorted.size
    x = np.empty(U)
    for t in range(s.size):
        for u in range(bounds[t], bounds[t + 1]):
            x[u] = beta_sorted[u] * s[t]
    order = np.argsort(x)
    wsum = weights.sum()
    qs = (lo_q, hi_q)
    for g in range(2):
        sign = 1.0 if g == 1 else -1.0
        for j in range(2):
            target = qs[j] * wsum
            acc = 0.0
            value = sign * x[order[U - 1 if g == 1 else 0]]
            for i in range(U):
                u = order[i] if g == 1 else order[U - 1 - i]
                acc += weights[u]
                if acc >= target and weights[u] > 0.0:
                    value = sign * x[u]
                    break
            p = 1.0 / (1.0 + np.exp(-value))
            if j == 0:
                lower[g] = p
            else:
                upper[g] = p


@njit(cache=True, parallel=True)
def summaries_two_classes(h, beta_sorted, cumw, bounds, lo_q, hi_q, by_sort):
    """Mean and interval of each class probability for two classes, streaming over draws.

    The draws are grouped by ``theta`` (group ``t`` is ``bounds[t]:bounds[t+1]``, betas sorted
    within it, ``cumw`` the running sum of their weights). The logit of ``P(class 1)`` is
    ``beta * s_t`` with ``s_t = h[., t, 1] - h[., t, 0]`` (and ``-beta * s_t`` for class 0),
    monotone in beta within a group, so a quantile needs binary searches per group, never the
    per-draw values; or, ``by_sort`` (cheaper for a few hundred draws), the point's logits are
    sorted once for all four quantiles. Both give the same draw's logit (the bisection to
    rounding: it compares ``L / s_t`` with beta). Returns ``mean, lower,
    upper``, each ``(m, 2)``.
    """
    m, T, _ = h.shape
    wsum = cumw[-1]
    mean = np.empty((m, 2))
    lower = np.empty((m, 2))
    upper = np.empty((m, 2))
    weights = np.diff(cumw)
    for a in prange(m):
        s = np.empty(T)
        lo = np.inf
        hi = -np.inf
        acc = 0.0
        for t in range(T):
            s[t] = h[a, t, 1] - h[a, t, 0]
            for u in range(bounds[t], bounds[t + 1]):
                x = beta_sorted[u] * s[t]
                lo = min(lo, x)
                hi = max(hi, x)
                acc += weights[u] / (1.0 + np.exp(-x))
        mean[a, 1] = acc / wsum
        mean[a, 0] = 1.0 - mean[a, 1]
        if by_sort:
            _sorted_logit_quantiles(s, beta_sorted, weights, bounds, lo_q, hi_q, lower[a], upper[a])
            continue
        for g in range(2):
            sign = 1.0 if g == 1 else -1.0
            sg = sign * s
            lo_g = min(sign * lo, sign * hi) - 1.0  # strictly below the smallest logit
            hi_g = max(sign * lo, sign * hi)
            x_lo = _logit_quantile(sg, beta_sorted, cumw, bounds, lo_q, lo_g, hi_g)
            x_hi = _logit_quantile(sg, beta_sorted, cumw, bounds, hi_q, lo_g, hi_g)
            lower[a, g] = 1.0 / (1.0 + np.exp(-x_lo))
            upper[a, g] = 1.0 / (1.0 + np.exp(-x_hi))
    return mean, lower, upper


@njit(cache=True)
def clamped_gibbs(indptr, indices, data, z, sites, beta, class_weights, n_sweeps, rng):
    """Gibbs sweeps over ``sites`` only (the other labels fixed); in place.

    Returns the full conditional probabilities ``(len(sites), G)`` of the sites at the last
    sweep, each computed just before the site's update (a Rao-Blackwellised estimate).
    """
    G = class_weights.size
    n = z.size
    c = np.zeros((n, G))
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            c[i, z[indices[p]]] += data[p]
    probs = np.empty((sites.size, G))
    h = np.empty(G)
    for sweep in range(n_sweeps):
        check_signals()
        u = rng.random(sites.size)
        for s in range(sites.size):
            i = sites[s]
            for g in range(G):
                h[g] = class_weights[g] * c[i, g]
            softmax_into(beta, h, probs[s])
            acc = 0.0
            new = G - 1
            for g in range(G - 1):
                acc += probs[s, g]
                if u[s] < acc:
                    new = g
                    break
            old = z[i]
            if new != old:
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    c[j, old] -= data[p]
                    c[j, new] += data[p]
                z[i] = new
    return probs


@njit(cache=True)
def _floor_level(sq_ref, sigma, kernel, epsilon, floor_mode):
    """The ball kernel's floor weight relative to a row's nearest point (0 without a floor)."""
    if not floor_mode:
        return 0.0
    return epsilon if sq_ref < ball_radius2(sigma) else 1.0


@njit(cache=True, parallel=True)
def dnn_table_row_sums(sorted_sq, sigmas, kernel, epsilon, n_others, shells, shell_step, drop_tol):
    """:func:`dnn_row_sums` of a kept table (each row's ``L`` nearest of ``n_others``): ``R[t, j]``
    the nearest's squared distance, ``S[t, j]`` the row's kept weight relative to it (with the
    ball kernel's floor to all ``n_others`` when ``L < n_others``) and ``cuts[t, j]`` the points
    it keeps: its nearest up to where the rest of its weight is within ``drop_tol`` (the rows of
    :func:`~pymc_knn.kernels.structure.dnn_table_cumulative`), else all ``L``."""
    n, L = sorted_sq.shape
    floor_mode = kernel == BALL and L < n_others
    cut = drop_tol > 0.0 and kernel != BALL
    T = sigmas.size
    R = np.empty((T, n))
    S = np.empty((T, n))
    cuts = np.empty((T, n), dtype=np.int32)
    for t in prange(T):
        w = np.empty(L)
        for j in range(n):
            end, kept, _, phi = row_weights(
                sorted_sq[j],
                sigmas[t],
                kernel,
                epsilon,
                w,
                floor_mode,
                drop_tol,
                shells,
                j,
                shell_step,
                n_others - L,
                NO_DISTANCES,
            )
            cuts[t, j] = end if cut else L
            R[t, j] = sorted_sq[j, 0]
            S[t, j] = kept + n_others * phi
    return R, S, cuts


@njit(cache=True)
def _back_weight(x, S):
    """A new point's weight in a training row whose others weigh ``S`` (relative to the row's
    nearest), the new point's relative log-weight being ``x``."""
    if x > 0.0:  # the new point outweighs the row's nearest training point
        return 1.0 / (S * np.exp(-x) + 1.0)
    e = np.exp(x)
    return e / (S + e)


@njit(cache=True, parallel=True)
def dnn_table_strengths(
    nb,
    sq_nb,
    rev_indptr,
    rev_index,
    rev_sq,
    y,
    sigmas,
    R,
    S,
    cuts,
    sorted_sq,
    kernel,
    epsilon,
    class_weights,
    floor_mode,
    drop_tol,
):
    """:func:`dnn_strengths` of a kept d-nn table, from neighbour queries.

    New point ``a``'s own row: its kept nearest training points ``nb[a]`` (squared distances
    ``sq_nb[a]``), cut where the rest of its weight is within ``drop_tol`` as the training
    rows are (the points beyond its row counted at its last kept distance) and normalised over
    them; training row ``j`` gains ``a`` when ``a`` is nearer than the last point it keeps at
    ``sigmas[t]``, ``sorted_sq[j, cuts[t, j] - 1]`` (:func:`dnn_table_row_sums`): the CSR
    ``rev_indptr, rev_index`` (squared distances ``rev_sq``) lists the ``j`` whose table ``a``
    enters. With the ball kernel's floor (``floor_mode``) every pair outside the rows carries
    the floor weight, through per-class totals.
    """
    m, L = nb.shape
    n = y.size
    G = class_weights.size
    T = sigmas.size
    out = np.zeros((m, T, G))
    counts = np.zeros(G)
    for j in range(n):
        counts[y[j]] += 1.0
    back_floor = np.zeros((T, G))  # sum over class g of j's floor weight to a new point
    if floor_mode:
        for t in range(T):
            for j in range(n):
                phi = _floor_level(R[t, j], sigmas[t], kernel, epsilon, True)
                back_floor[t, y[j]] += phi / (S[t, j] + phi)
    width = sorted_sq.shape[1]
    for a in prange(m):
        w = np.empty(L)
        for t in range(T):
            sigma = sigmas[t]
            end, total, _, phi = row_weights(
                sq_nb[a],
                sigma,
                kernel,
                epsilon,
                w,
                floor_mode,
                drop_tol,
                NO_SHELLS,
                0,
                0.0,
                n - L,
                NO_DISTANCES,
            )
            total += n * phi
            for r in range(end):
                out[a, t, y[nb[a, r]]] += w[r] / total
            for g in range(G):
                out[a, t, g] += phi / total * counts[g] + back_floor[t, g]
            for e in range(rev_indptr[a], rev_indptr[a + 1]):
                j = rev_index[e]
                c = cuts[t, j]
                if c < width and not rev_sq[e] < sorted_sq[j, c - 1]:
                    continue  # beyond the last point row j keeps at sigma
                x = dnn_log_ratio(rev_sq[e], R[t, j], sigma, kernel, epsilon)
                back = _back_weight(x, S[t, j])
                if floor_mode:
                    pj = _floor_level(R[t, j], sigma, kernel, epsilon, True)
                    back -= pj / (S[t, j] + pj)
                out[a, t, y[j]] += back
            for g in range(G):
                out[a, t, g] *= class_weights[g]
    return out


@njit(cache=True)
def pair_sq(Q, X, indptr, index):
    """Squared distances from query ``a`` to the training points ``index[indptr[a]:indptr[a+1]]``
    (the package's formula, :func:`~pymc_knn.kernels.search.sq_distance`)."""
    out = np.empty(index.size)
    for a in range(indptr.size - 1):
        for e in range(indptr[a], indptr[a + 1]):
            out[e] = sq_distance(Q, a, X, index[e])
    return out
