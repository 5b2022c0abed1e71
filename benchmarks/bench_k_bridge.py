"""The posterior odds of k = 4 against k = 3 on blobs10, without crossing the ordering transition.

On blobs10 (bench_defaults.py: 2,000 points, 10 covariates, 6 classes; symmetrised kNN,
standardised) ``pm.sample`` puts about 7% of the draws at ``k = 4`` and most of the rest at
``k = 3``, while path sampling from ``beta = 0`` put 42-82% there depending on the seed: its
chains cross an abrupt ordering transition on the way to the posterior's beta, 2.44, and lag
behind it (docs/evidence.md). This script takes another path, which stays in the ordered phase:

1. at a fixed ``beta0`` near the posterior, ``log Z(beta0, 4) - log Z(beta0, 3)`` by
   thermodynamic integration from the field of ``k = 3`` to that of ``k = 4``: the field
   ``exp(beta0 [(1 - t) E_3(z) + t E_4(z)])`` (Swendsen-Wang on the union of both graphs) has
   ``d log Z_t / dt = beta0 E_t[E_4(z) - E_3(z)]``, integrated over 41 values of ``t`` by the
   trapezoid rule, one chain climbing ``t`` and one descending (their gap shows any lag);
2. ``log Z(beta, k) - log Z(beta0, k)`` for ``k = 3, 4`` and beta in [2.0, 3.2] by path sampling
   from ``beta0`` (warm-started chains from the observed labels, each direction separately);
3. ``log p(y | beta, k)`` on that beta grid for both ``k`` and the odds under a uniform prior
   on beta, with the modes of beta given each ``k`` (the ridge the exchange chain must follow).

Run::

    PYTHONPATH=. python benchmarks/bench_k_bridge.py [seed ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

import pymc_knn as pk
from pymc_knn.kernels.energy import energy
from pymc_knn.kernels.path import energy_path
from pymc_knn.kernels.swendsen_wang import swendsen_wang_sweeps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import load

BETA0 = 2.44  # the posterior mean of beta at k = 3 (pm.sample, docs/inference.md)
TS = np.linspace(0.0, 1.0, 41)
BURN, SWEEPS, BATCHES = 100, 300, 20
STEP = 0.02
BETAS = np.round(np.arange(2.0, 3.2 + STEP / 2, STEP), 10)


def _energy(c, z, a):
    return energy(c.src, c.dst, c.weight, z, a)


def delta_log_z(c0, c1, beta, z, a, order, rng):
    """``log Z(beta, k1) - log Z(beta, k0)`` along ``t`` in ``order``, and its batch-means se."""
    src, dst = np.concatenate([c0.src, c1.src]), np.concatenate([c0.dst, c1.dst])
    w, e0 = np.empty(src.size), c0.src.size
    mean, se = np.empty(TS.size), np.empty(TS.size)
    for i in order:
        w[:e0] = (1 - TS[i]) * beta * c0.weight
        w[e0:] = TS[i] * beta * c1.weight
        swendsen_wang_sweeps(src, dst, w, 0.0, z, 1.0, a, BURN, rng)
        d = np.empty(SWEEPS)
        for s in range(SWEEPS):
            swendsen_wang_sweeps(src, dst, w, 0.0, z, 1.0, a, 1, rng)
            d[s] = _energy(c1, z, a) - _energy(c0, z, a)
        mean[i] = d.mean()
        se[i] = d.reshape(BATCHES, -1).mean(axis=1).std(ddof=1) / np.sqrt(BATCHES)
    h = np.diff(TS)
    trap = np.full(TS.size, h[0])
    trap[0] = trap[-1] = h[0] / 2
    return beta * float(trap @ mean), beta * float(np.sqrt(((trap * se) ** 2).sum()))


def mean_energy(c, y, a, rng):
    """``E_beta[E(z)]`` on ``BETAS``, chains from ``y`` at ``BETA0`` going up and going down."""
    i0 = int(np.argmin(np.abs(BETAS - BETA0)))
    out = np.empty(BETAS.size)
    for part in (np.arange(i0, BETAS.size), np.arange(i0, -1, -1)):
        z = y.copy()
        for j, i in enumerate(part):
            m, _, _, _ = energy_path(
                c.src,
                c.dst,
                c.weight,
                c.uniform_weight,
                z,
                BETAS[i : i + 1],
                a,
                BURN if j == 0 else BURN // 2,
                SWEEPS,
                rng,
            )
            out[i] = m[0]
    return out, i0


def main(seeds=(0, 1)):
    X, y = load("blobs10")
    a = np.ones(int(y.max()) + 1)
    graph = pk.KNNGraph(X, k_max=6)
    c3, c4 = graph.coupling(3), graph.coupling(4)
    e3, e4 = _energy(c3, y, a), _energy(c4, y, a)
    print(f"blobs10: E_3(y) = {e3:.1f}, E_4(y) = {e4:.1f}; beta0 = {BETA0}", flush=True)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        up = delta_log_z(c3, c4, BETA0, y.copy(), a, range(TS.size), rng)
        down = delta_log_z(c3, c4, BETA0, y.copy(), a, range(TS.size - 1, -1, -1), rng)
        d0 = (up[0] + down[0]) / 2
        curves = {}
        for k, c in ((3, c3), (4, c4)):
            m, i0 = mean_energy(c, y, a, rng)
            h = np.diff(BETAS)
            cum = np.concatenate([[0.0], np.cumsum((m[1:] + m[:-1]) / 2 * h)])
            curves[k] = cum - cum[i0]  # log Z(beta, k) - log Z(beta0, k)
        log_lik3 = (BETAS - BETA0) * e3 - curves[3]
        log_lik4 = BETA0 * (e4 - e3) - d0 + (BETAS - BETA0) * e4 - curves[4]
        odds = float(logsumexp(log_lik4) - logsumexp(log_lik3))
        # the climbing and descending chains' log Z bound the lag's effect on the odds
        spread = sorted(1 / (1 + np.exp(-(odds + d0 - d))) for d in (up[0], down[0]))
        print(
            f"seed {seed}: log Z(b0, 4) - log Z(b0, 3) = {up[0]:.2f} climbing t, {down[0]:.2f} "
            f"descending (se {up[1]:.2f}, {down[1]:.2f}); at b0 log p(y | 4) - log p(y | 3) = "
            f"{BETA0 * (e4 - e3) - d0:.2f}; modes of beta: k = 3 {BETAS[np.argmax(log_lik3)]:.2f},"
            f" k = 4 {BETAS[np.argmax(log_lik4)]:.2f}; log odds 4 : 3 under U(beta) {odds:.2f}, "
            f"P(k = 4 | k in {{3, 4}}) = {1 / (1 + np.exp(-odds)):.3f} "
            f"({spread[0]:.3f}-{spread[1]:.3f} with either chain's log Z); "
            f"{time.perf_counter() - t0:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or (0, 1))
