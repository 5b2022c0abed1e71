"""numba kernel: the mean energy along a beta grid, for path sampling.

One Swendsen-Wang chain climbs the grid: at each ``beta`` it runs ``burn`` sweeps from the state
the previous ``beta`` left (a warm start: near the ordering transition a chain from random labels
needs tens of sweeps to relax), then records ``E(z)`` after each of ``sweeps`` sweeps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .energy import energy
from .swendsen_wang import sweeps_checked


@njit(cache=True)
def _batch_means_se(trace, n_batches):
    """Monte Carlo standard error of the mean of a correlated trace, by batch means."""
    size = trace.size // n_batches
    means = np.empty(n_batches)
    for b in range(n_batches):
        means[b] = trace[b * size : (b + 1) * size].mean()
    return np.sqrt(means.var() * n_batches / (n_batches - 1) / n_batches)


@njit(cache=True)
def energy_path(
    src, dst, weight, uniform_weight, z, betas, class_weights, burn, sweeps, n_batches, rng
):
    """``E_beta[E(z)]`` and ``Var_beta[E(z)]`` at each ``beta`` of an increasing grid.

    ``z`` is the chain's state, updated in place (the start at ``betas[0]``; the state at the
    end). Returns ``(mean, mean_se, var, var_se)``: averages over ``sweeps`` sweeps after
    ``burn`` at each beta, and their batch-means standard errors over ``n_batches`` batches
    (the variance's from the trace of ``(E - mean)^2``). Ctrl-C is checked every sweep.
    """
    stop = np.zeros(1, dtype=np.bool_)
    return _path(
        src,
        dst,
        weight,
        uniform_weight,
        z,
        betas,
        class_weights,
        burn,
        sweeps,
        n_batches,
        rng,
        stop,
        True,
    )


@njit(cache=True, nogil=True)
def energy_path_nogil(
    src, dst, weight, uniform_weight, z, betas, class_weights, burn, sweeps, n_batches, rng, stop
):
    """:func:`energy_path` without the GIL, for chains run in threads: no Ctrl-C check (a
    thread cannot run Python's signal handlers); it returns early, leaving the rest of its
    output undefined, once another thread sets ``stop[0]``."""
    return _path(
        src,
        dst,
        weight,
        uniform_weight,
        z,
        betas,
        class_weights,
        burn,
        sweeps,
        n_batches,
        rng,
        stop,
        False,
    )


@njit(cache=True)
def _path(
    src,
    dst,
    weight,
    uniform_weight,
    z,
    betas,
    class_weights,
    burn,
    sweeps,
    n_batches,
    rng,
    stop,
    check,
):
    B = betas.size
    mean = np.empty(B)
    mean_se = np.empty(B)
    var = np.empty(B)
    var_se = np.empty(B)
    trace = np.empty(sweeps)
    for b in range(B):
        if stop[0]:
            break
        beta = betas[b]
        sweeps_checked(src, dst, weight, uniform_weight, z, beta, class_weights, burn, rng, check)
        for s in range(sweeps):
            sweeps_checked(src, dst, weight, uniform_weight, z, beta, class_weights, 1, rng, check)
            trace[s] = energy(src, dst, weight, z, class_weights)
        m = trace.mean()
        mean[b] = m
        mean_se[b] = _batch_means_se(trace, n_batches)
        sq = (trace - m) ** 2
        var[b] = sq.sum() / (sweeps - 1)
        var_se[b] = _batch_means_se(sq, n_batches)
    return mean, mean_se, var, var_se
