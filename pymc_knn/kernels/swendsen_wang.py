"""numba kernel: Swendsen-Wang cluster updates for the Potts field with non-negative couplings."""

from __future__ import annotations

import numpy as np
from numba import njit

from .gibbs import draw_from_logits
from .signals import check_signals


@njit(cache=True)
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True)
def _union(parent, size, i, j):
    ri = _find(parent, i)
    rj = _find(parent, j)
    if ri == rj:
        return
    if size[ri] < size[rj]:
        ri, rj = rj, ri
    parent[rj] = ri
    size[ri] += size[rj]


@njit(cache=True)
def _log_expm1(x):
    if x > 1.0:
        return x + np.log1p(-np.exp(-x))
    return np.log(np.expm1(x))


PENDING = 512
"""Bonds gathered before their unions. Drawing the candidates and joining their clusters in one
loop keeps the processor from overlapping the two (each find waits on the last union): gathered
first, a Swendsen-Wang sweep of a kNN graph costs about a third less (class20, digits:
benchmarks/README.md, "Bonds gathered before their unions"). The unions run in the same order,
so the draws are the same to the bit."""


@njit(cache=True)
def _join(parent, size, pending, m):
    """Join the clusters of the ``m`` pending bonds (rows ``(i, j)`` of ``pending``)."""
    for q in range(m):
        _union(parent, size, pending[q, 0], pending[q, 1])


@njit(cache=True)
def _bond_uniform(
    src, dst, beta, weight, z, class_weights, equal_classes, parent, size, bonds, rng
):
    """Bond phase on edges of one common weight: edge ``e`` joining labels ``g`` is bonded with
    probability ``1 - exp(-beta a_g weight)``. The gaps between candidates (bonded at the largest
    class weight) are geometric, so only the candidates are visited; with unequal class weights
    each candidate is thinned and recorded in ``bonds``. Returns the number recorded."""
    E = src.size
    pmax = -np.expm1(-beta * class_weights.max() * weight)
    if not pmax > 0.0:
        return 0
    rate = -np.log1p(-pmax) if pmax < 1.0 else np.inf  # of the gaps' exponential law
    pending = np.empty((PENDING, 2), dtype=np.int64)
    n_bonds = 0
    e = -1
    done = False
    while not done:
        m = 0
        while m < PENDING:
            gap = rng.standard_exponential() / rate
            if gap >= E:
                done = True
                break
            e += 1 + int(gap)
            if e >= E:
                done = True
                break
            i = src[e]
            j = dst[e]
            g = z[i]
            if equal_classes:
                pending[m, 0] = i
                pending[m, 1] = j
                m += g == z[j]  # no branch: it would be mispredicted half the time
            elif g == z[j]:
                if rng.random() * pmax < -np.expm1(-beta * class_weights[g] * weight):
                    pending[m, 0] = i
                    pending[m, 1] = j
                    m += 1
                    bonds[n_bonds] = e
                    n_bonds += 1
        _join(parent, size, pending, m)
    return n_bonds


@njit(cache=True)
def swendsen_wang_pair(src0, dst0, rate0, src1, dst1, rate1, z, class_weights, rng):
    """One Swendsen-Wang update of the field with couplings ``rate0`` on every edge of a first
    list and ``rate1`` on every edge of a second, equal class weights (the union of two kNN
    graphs: the bridging fields of :func:`pymc_knn.kernels.mcmc.bridged_log_ratio`). Each list
    is bonded with geometric gaps, so the update costs what a sweep of each graph alone does."""
    n = z.size
    G = class_weights.size
    parent = np.arange(n)
    size = np.ones(n, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    _bond_uniform(src0, dst0, 1.0, rate0, z, class_weights, True, parent, size, none, rng)
    _bond_uniform(src1, dst1, 1.0, rate1, z, class_weights, True, parent, size, none, rng)
    label = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        r = _find(parent, i)
        if label[r] < 0:
            label[r] = min(int(rng.random() * G), G - 1)
        z[i] = label[r]


@njit(cache=True)
def swendsen_wang_sweeps(src, dst, weight, uniform_weight, z, beta, class_weights, n_sweeps, rng):
    """Run ``n_sweeps`` Swendsen-Wang updates on ``z`` in place.

    Each edge ``e`` joining equal labels ``g`` is bonded with probability
    ``1 - exp(-beta a_g weight_e)``; each cluster then takes a new label, uniformly when the class
    weights are equal and otherwise with probability ``∝ prod_bonds (exp(beta a_g weight_e) - 1)``
    (the Fortuin-Kasteleyn split of ``exp(beta a_g w [same])``). Valid because every weight is
    non-negative. When every edge has the same weight (``uniform_weight > 0``: the kNN models),
    the gaps between candidate bonds are geometric and a sweep visits only the candidates.
    """
    sweeps_checked(src, dst, weight, uniform_weight, z, beta, class_weights, n_sweeps, rng, True)


@njit(cache=True)
def sweeps_checked(src, dst, weight, uniform_weight, z, beta, class_weights, n_sweeps, rng, check):
    """:func:`swendsen_wang_sweeps`, checking for Ctrl-C before each sweep only when ``check``
    (False in ``nogil`` callers, whose threads cannot run Python's signal handlers)."""
    n = z.size
    G = class_weights.size
    E = src.size
    amax = class_weights.max()
    equal_classes = class_weights.min() == amax
    parent = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    label = np.empty(n, dtype=np.int64)
    bonds = np.empty(0 if equal_classes else E, dtype=np.int64)
    logw = np.zeros((0 if equal_classes else n, G))
    for _ in range(n_sweeps):
        if check:
            check_signals()
        for i in range(n):
            parent[i] = i
            size[i] = 1
        n_bonds = 0
        if uniform_weight > 0.0:
            n_bonds = _bond_uniform(
                src,
                dst,
                beta,
                uniform_weight,
                z,
                class_weights,
                equal_classes,
                parent,
                size,
                bonds,
                rng,
            )
        else:
            for e in range(E):
                i = src[e]
                j = dst[e]
                g = z[i]
                if g != z[j]:
                    continue
                if rng.random() < -np.expm1(-beta * class_weights[g] * weight[e]):
                    _union(parent, size, i, j)
                    if not equal_classes:
                        bonds[n_bonds] = e
                        n_bonds += 1
        _relabel(
            parent,
            label,
            z,
            bonds,
            n_bonds,
            src,
            weight,
            logw,
            beta,
            class_weights,
            equal_classes,
            rng,
        )


@njit(cache=True)
def _relabel(
    parent, label, z, bonds, n_bonds, src, weight, logw, beta, class_weights, equal_classes, rng
):
    """Give each cluster a new label: uniform with equal class weights, else with probability
    ``∝ prod_bonds (exp(beta a_g w_b) - 1)`` (``bonds`` index ``src`` and ``weight``)."""
    n = z.size
    G = class_weights.size
    if not equal_classes:
        logw[:, :] = 0.0
        for b in range(n_bonds):
            e = bonds[b]
            r = _find(parent, src[e])
            for g in range(G):
                logw[r, g] += _log_expm1(beta * class_weights[g] * weight[e])
    for i in range(n):
        label[i] = -1
    for i in range(n):
        r = _find(parent, i)
        if label[r] < 0:
            if equal_classes:
                label[r] = min(int(rng.random() * G), G - 1)
            else:
                label[r] = draw_from_logits(logw[r], rng.random())
        z[i] = label[r]


@njit(cache=True)
def _row_at(C, i, r, pair):
    """Row ``i``'s running sum at ``r``: ``C[i, r]``, or with ``pair = (ends0, C1, ends1, a0,
    a1)`` that of the field ``a0 C + a1 C1``, each table's sum carried past its row's end
    (:func:`pymc_knn.kernels.mcmc.bridged_log_ratio_rows`), computed where it is read."""
    if pair is None:
        return C[i, r]
    e0, C1, e1, a0, a1 = pair
    v0 = C[i, min(r, e0[i] - 1)] if e0[i] > 0 else 0.0
    v1 = C1[i, min(r, e1[i] - 1)] if e1[i] > 0 else 0.0
    return a0 * v0 + a1 * v1


@njit(cache=True)
def _first_at_least(C, i, n, start, target, pair=None):
    """The first index ``t >= start`` with ``c[t] >= target`` in a row ``c`` of ``n`` running
    sums of non-increasing weights (a kernel's, nearest first: row ``i`` of ``C``, or of the
    pair's field, :func:`_row_at`), or ``n``.

    ``(t + 1) c[0] >= c[t]``, so ``t >= target / c[0] - 1``: the search gallops from there. On a
    ball kernel's row (equal weights in the ball) that is the answer or next to it; an event
    beyond the row's end is found by one comparison.
    """
    if start >= n or _row_at(C, i, n - 1, pair) < target:
        return n
    lo = start
    first = _row_at(C, i, 0, pair)
    if first > 0.0:
        guess = int(target / first) - 1  # one below the bound: room for the sums' rounding
        if guess > lo and _row_at(C, i, guess - 1, pair) < target:
            lo = guess
    hi = lo
    step = 1
    while _row_at(C, i, hi, pair) < target:  # ends: c[n - 1] >= target
        lo = hi + 1
        hi = min(hi + step, n - 1)
        step *= 2
    while lo < hi:  # c[lo - 1] < target <= c[hi]
        mid = (lo + hi) >> 1
        if _row_at(C, i, mid, pair) < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _grown(bond_src, bond_w):
    """The bond arrays with twice the room (and at least one more)."""
    m = bond_src.size + 1
    return (
        np.concatenate((bond_src, np.empty(m, np.int64))),
        np.concatenate((bond_w, np.empty(m))),
    )


@njit(cache=True)
def _floor_events(rate_of, floor, z, parent, size, equal_classes, n_bonds, bond_src, bond_w, rng):
    """The floor's bond events (see :func:`swendsen_wang_rows`): one unit-rate Poisson process
    along the rows' spans ``rate_of[i] floor[i] (n - 1)`` end to end, each event at a uniform
    other point. A pair bonds once however many events it gets; the bonds are recorded (grown as
    needed) for unequal class weights. Returns ``(n_bonds, bond_src, bond_w)``."""
    n = z.size
    left = rng.standard_exponential()
    for i in range(n):
        span = rate_of[i] * floor[i] * (n - 1)
        if not span > 0.0:
            continue
        if left >= span:
            left -= span
            continue
        g = z[i]
        first = n_bonds
        while left < span:
            j = min(int(rng.random() * (n - 1)), n - 2)
            j += 1 if j >= i else 0
            if z[j] == g:
                _union(parent, size, i, j)
                if not equal_classes:
                    seen = False  # the same pair twice: one bond
                    for b in range(first, n_bonds):
                        seen = seen or bond_w[b] == -1.0 - j
                    if not seen:
                        if n_bonds == bond_src.size:
                            bond_src, bond_w = _grown(bond_src, bond_w)
                        bond_src[n_bonds] = i
                        bond_w[n_bonds] = -1.0 - j  # marks the pair until the row is done
                        n_bonds += 1
            left += rng.standard_exponential()
        left -= span
        for b in range(first, n_bonds):
            bond_w[b] = floor[i]
    return n_bonds, bond_src, bond_w


@njit(cache=True)
def swendsen_wang_rows(
    order, C, ends, z, beta, class_weights, n_sweeps, rng, floor=None, pair=None
):
    """Swendsen-Wang updates on ``z`` in place, from directed weights sorted along each row.

    ``C[i, r]`` (``r < ends[i]``) is the running sum along row ``i`` of the weights of ``i``'s
    neighbours ``order[i, 0..r]``, nearest first
    (:func:`pymc_knn.kernels.structure.dnn_row_cumulative`).
    ``exp(beta a_g (W_ij + W_ji) [same])`` is the product of one factor per direction, so each
    directed entry is a bond candidate of its own, bonded with probability
    ``1 - exp(-beta a_g W_ij)`` between equal labels ``g``: these are the events of a Poisson
    process of rate ``beta a_g`` on the row's cumulative weight. The rows' processes are drawn
    as one unit-rate process along their spans ``beta a_{z_i} C[i, ends[i] - 1]`` end to end (an
    exponential's overshoot past a row's end is again exponential, so a row costs no draw of its
    own); each event is found by an exponential jump and a search in ``C``
    (:func:`_first_at_least`). Rows of a normalised kernel hold about ``beta a_g`` events, so a
    sweep costs ``O(n beta log n)`` instead of ``O(n^2)``.

    ``floor[i]`` (optional): a weight ``W_ij`` row ``i`` gives every other point besides ``C``
    (the ball kernel's floor on a kept table,
    :func:`~pymc_knn.kernels.structure.dnn_table_cumulative`): its events,
    ``beta a_g floor[i] (n - 1)`` expected, go to uniformly drawn others, after every row's.

    ``pair`` (optional): ``(ends0, C1, ends1, a0, a1)``, the sweep is through the field of
    running sums ``a0 C + a1 C1`` (rows of ``ends``, the longer of ``ends0`` and ``ends1``),
    read where the events fall (:func:`_row_at`) rather than written out: a bridging field of
    two d-nn couplings costs a sweep, not a pass over both tables.
    """
    n = C.shape[0]
    if floor is None:
        floor = np.zeros(n)
    amax = class_weights.max()
    equal_classes = class_weights.min() == amax
    parent = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    label = np.empty(n, dtype=np.int64)
    rate_of = np.empty(n)
    cap = 0 if equal_classes else int(ends.sum())
    bond_src = np.empty(cap, dtype=np.int64)
    bond_w = np.empty(cap)
    bonds = np.arange(cap)
    logw = np.zeros((0 if equal_classes else n, class_weights.size))
    pending = np.empty((PENDING, 2), dtype=np.int64)
    for _ in range(n_sweeps):
        check_signals()
        for i in range(n):
            parent[i] = i
            size[i] = 1
        n_bonds = 0
        m = 0
        left = rng.standard_exponential()  # of the unit-rate process, to its next event
        for i in range(n):
            g = z[i]
            rate = beta * class_weights[g]
            rate_of[i] = rate
            end = ends[i]
            if not rate > 0.0 or end == 0:
                continue
            last = _row_at(C, i, end - 1, pair)
            span = rate * last
            if left >= span:
                left -= span
                continue
            target = left / rate
            t = 0
            while True:
                t = _first_at_least(C, i, end, t, target, pair)
                if t >= end:
                    break
                j = order[i, t]
                pending[m, 0] = i
                pending[m, 1] = j
                at = _row_at(C, i, t, pair)
                if equal_classes:
                    m += z[j] == g
                elif z[j] == g:  # room for every row's bonds: the floor's come after
                    m += 1
                    bond_src[n_bonds] = i
                    bond_w[n_bonds] = at - (_row_at(C, i, t - 1, pair) if t else 0.0)
                    n_bonds += 1
                if m == PENDING:
                    _join(parent, size, pending, m)
                    m = 0
                target = at + rng.standard_exponential() / rate
                t += 1
            left = (target - last) * rate
        _join(parent, size, pending, m)
        # the floor's events after every row's: growing the bond arrays in the loop above
        # would slow it by a third even where it never happens
        n_bonds, bond_src, bond_w = _floor_events(
            rate_of, floor, z, parent, size, equal_classes, n_bonds, bond_src, bond_w, rng
        )
        if bonds.size < bond_src.size:
            bonds = np.arange(bond_src.size)
        _relabel(
            parent,
            label,
            z,
            bonds,
            n_bonds,
            bond_src,
            bond_w,
            logw,
            beta,
            class_weights,
            equal_classes,
            rng,
        )
