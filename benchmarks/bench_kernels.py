"""Timing of the auxiliary samplers on Ripley's training set (n = 250, G = 2).

Run: ``python benchmarks/bench_kernels.py`` (figures recorded in benchmarks/README.md).
Times are per sweep (Gibbs, Swendsen-Wang) or per draw (CFTP, median), after compilation,
calling the numba kernels directly as the step methods do.
"""

from __future__ import annotations

import time

import numpy as np

import pymc_knn as pk
from pymc_knn.kernels import cftp_potts2, gibbs_sweeps, swendsen_wang_sweeps


def per_sweep(fn, sweeps: int, repeats: int = 7) -> float:
    """Best-of-``repeats`` time per sweep in microseconds of ``fn(sweeps)``."""
    fn(1)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(sweeps)
        best = min(best, (time.perf_counter() - t0) / sweeps)
    return best * 1e6


def main() -> None:
    X, y, *_ = pk.datasets.load_ripley("train")
    graph = pk.KNNGraph(X, k_max=125)
    a = np.ones(2)
    rng = np.random.default_rng(2026)
    print(f"Ripley training set: n = {graph.n_points}, G = 2")
    print("\nGibbs sweep (systematic scan), start at the observed labels")
    for k in (13, 53, 125):
        c = graph.coupling(k)
        for beta in (1.0, 1.45, 2.0):
            z = y.copy()
            t = per_sweep(
                lambda s: gibbs_sweeps(c.indptr, c.indices, c.data, z, beta, a, s, rng), 2000
            )
            print(f"  k = {k:3d}  beta = {beta:4.2f}: {t:6.2f} us / sweep")
    print("\nSwendsen-Wang sweep, start at the observed labels")
    for k in (13, 53, 125):
        c = graph.coupling(k)
        for beta in (1.0, 1.45, 2.0):
            z = y.copy()
            t = per_sweep(
                lambda s: swendsen_wang_sweeps(
                    c.src, c.dst, c.weight, c.uniform_weight, z, beta, a, s, rng
                ),
                2000,
            )
            print(f"  k = {k:3d}  beta = {beta:4.2f}: {t:6.2f} us / sweep")
    print("\nCFTP draw (median over 200 draws)")
    for k, beta in ((13, 1.0), (13, 1.25), (13, 1.45)):
        c = graph.coupling(k)
        z = y.copy()
        times, looks = [], []
        for _ in range(200):
            seed = int(rng.integers(0, 2**63))
            t0 = time.perf_counter()
            ok, T = cftp_potts2(c.indptr, c.indices, c.data, z, beta, a, 1 << 16, seed)
            times.append(time.perf_counter() - t0)
            looks.append(T)
        print(
            f"  k = {k:3d}  beta = {beta:4.2f}: median {np.median(times) * 1e3:6.3f} ms, "
            f"median look-back {int(np.median(looks))} sweeps, max {max(looks)}"
        )


if __name__ == "__main__":
    main()
