"""Swendsen-Wang alone against Swendsen-Wang with a Gibbs sweep after each of its sweeps, at one
point ``(beta, k)`` of a kNN row of ``bench_defaults.py``: what a step costs, how fast the
energy decorrelates at equilibrium, and how fast chains from the observed labels relax.

An ordered field of weakly joined clusters (blobs4, eight classes, digits with equal neighbours)
leaves Swendsen-Wang with a long energy time (14-87 sweeps), and single-site moves change the
minority points inside an ordered cluster that its clusters carry whole. The Gibbs sweep here
is the fastest heat-bath sweep found for a kNN coupling (every weight a multiple of ``1/k``, so
a site's conditional is read from a table of ``exp(beta a_g m / k)``, no exponential at a site;
its neighbours' weights gathered per site, as a Swendsen-Wang sweep leaves no counts to update).
Printed per sampler: microseconds a step, the energy's integrated time in steps (ArviZ's ESS over
``--steps`` steps from the labels, the first tenth dropped) and in microseconds, and the mean
energy of ``--chains`` chains from the observed labels after ``t`` steps, in stationary sds
(benchmarks/README.md, "A second tuned start, and the spread of its draws; a Gibbs sweep between
Swendsen-Wang sweeps, tried and not kept").

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/gibbs_between_sweeps.py blobs4 equal 3.12 9
"""

from __future__ import annotations

import argparse
import time

import arviz as az
import numpy as np
from numba import njit

import pymc_knn as pk
from bench_defaults import build, load
from pymc_knn.kernels import mcmc
from pymc_knn.kernels.swendsen_wang import sweeps_checked


@njit(cache=True)
def _unit_table(indptr, data, unit, beta, a):
    """``exp(beta a_g m unit - shift)`` for every class ``g`` and every count ``m`` of units a
    site's weights can reach."""
    top = 0.0
    for i in range(indptr.size - 1):
        top = max(top, data[indptr[i] : indptr[i + 1]].sum())
    M = int(top / unit + 0.5)
    shift = beta * a.max() * M * unit
    table = np.empty((a.size, M + 1))
    for g in range(a.size):
        for m in range(M + 1):
            table[g, m] = np.exp(beta * a[g] * m * unit - shift)
    return table


@njit(cache=True)
def _gibbs_sweep(indptr, indices, data, inv_unit, table, base, z, u, weights, present):
    """One systematic heat-bath sweep: each site's neighbour weights by class, gathered at the
    site (only the classes present are touched), its new label by the inverse cdf of ``u``."""
    G = table.shape[0]
    for i in range(z.size):
        m = 0
        for p in range(indptr[i], indptr[i + 1]):
            g = z[indices[p]]
            if weights[g] == 0.0:
                present[m] = g
                m += 1
            weights[g] += data[p]
        total = base
        for q in range(m):
            g = present[q]
            weights[g] = table[g, int(weights[g] * inv_unit + 0.5)]
            total += weights[g] - table[g, 0]
        target = u[i] * total
        acc = 0.0
        new = G - 1
        for g in range(G - 1):
            acc += weights[g] if weights[g] != 0.0 else table[g, 0]
            if target < acc:
                new = g
                break
        z[i] = new
        for q in range(m):
            weights[present[q]] = 0.0


@njit(cache=True)
def steps(c, z, beta, a, n_steps, gibbs, rng):
    """``n_steps`` Swendsen-Wang sweeps of the kNN coupling ``c``, each followed by a Gibbs sweep
    when ``gibbs``."""
    src, dst, w, unit, indptr, indices, data = c[0], c[1], c[2], c[3], c[4], c[5], c[6]
    table = _unit_table(indptr, data, unit, beta, a)
    base = table[:, 0].sum()
    weights, present = np.zeros(a.size), np.empty(a.size, dtype=np.int64)
    for _ in range(n_steps):
        sweeps_checked(src, dst, w, unit, z, beta, a, 1, rng, True)
        if gibbs:
            u = rng.random(z.size)
            _gibbs_sweep(indptr, indices, data, 1.0 / unit, table, base, z, u, weights, present)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model", choices=["symmetrised", "equal"])
    parser.add_argument("beta", type=float)
    parser.add_argument("k", type=int)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--chains", type=int, default=96)
    parser.add_argument("--horizon", type=int, default=240)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        f = pk.Exchange().field
    a, beta = f.class_weights, args.beta
    c = mcmc.coupling(f, float(args.k), True)
    rng = np.random.default_rng(args.seed)
    labels = f.y.astype(np.int64)
    results = {}
    for gibbs in (False, True):
        z = labels.copy()
        steps(c, z, beta, a, 2, gibbs, rng)
        t0 = time.perf_counter()
        steps(c, z, beta, a, 1000, gibbs, rng)
        per = (time.perf_counter() - t0) / 1000
        z, energy = labels.copy(), np.empty(args.steps)
        for t in range(args.steps):
            steps(c, z, beta, a, 1, gibbs, rng)
            energy[t] = mcmc._energy(f, c, z)
        x = energy[args.steps // 10 :]
        tau = x.size / float(az.ess(x[None, :]))
        relax = np.empty((args.chains, args.horizon + 1))
        for r in range(args.chains):
            z = labels.copy()
            for t in range(1, args.horizon + 1):
                steps(c, z, beta, a, 1, gibbs, rng)
                relax[r, t] = mcmc._energy(f, c, z)
        results[gibbs] = per, tau, x, relax
    x = np.concatenate([results[g][2] for g in results])
    mean, sd = x.mean(), x.std()
    print(
        f"{args.data} {args.model} at beta {beta:g}, k {args.k} ({f.y.size} points, {a.size} "
        f"classes): energy {mean:.1f}, sd {sd:.1f}; relaxation's se {1 / args.chains**0.5:.2f} sd"
    )
    marks = [t for t in (2, 5, 10, 14, 20, 28, 40, 57, 81, 115, 163, 231) if t <= args.horizon]
    for gibbs, (per, tau, _, relax) in results.items():
        name = "SW + Gibbs" if gibbs else "SW"
        drift = (relax.mean(axis=0) - mean) / sd
        print(
            f"{name:<10} {per * 1e6:6.1f} us a step, energy's time {tau:5.1f} steps = "
            f"{tau * per * 1e6:6.0f} us; from the labels: "
            + " ".join(f"{t}:{drift[t]:+.2f}" for t in marks)
        )


if __name__ == "__main__":
    main()
