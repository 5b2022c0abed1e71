"""Seconds per particle Gibbs sweep over decomposable graphs (issue 15), 50 particles.

For p = 10, 20, 50: n = 51 points from a Gaussian whose precision is a chain with a few extra
chords (a decomposable graph), the prior of Pavlenko and Rios (2017, section 5: nu = 1, Phi = I,
delta = 1, class mean). After one compiling call, times ``warm`` sweeps from an empty local
evidence cache (which fills as new node sets appear) and then ``steady`` further sweeps on the
filled cache; prints milliseconds per sweep, the cache size and the mean graph size.

Run::

    PYTHONPATH=. python benchmarks/bench_graphical.py
"""

import argparse
import time

import numpy as np

from pymc_knn.graphical.evidence import class_hyper, new_cache
from pymc_knn.graphical.particle_gibbs import particle_gibbs
from pymc_knn.graphical.posterior import graph_sizes


def data(p: int, n: int, seed: int) -> np.ndarray:
    """Points whose precision has the edges i-(i+1) and i-(i+2) for even i (chordal)."""
    r = np.random.default_rng(seed)
    K = np.eye(p)
    for i in range(p - 1):
        K[i, i + 1] = K[i + 1, i] = 0.3
    for i in range(0, p - 2, 2):
        K[i, i + 2] = K[i + 2, i] = 0.2
    K += np.eye(p) * max(0.0, 0.1 - np.linalg.eigvalsh(K).min())
    return r.multivariate_normal(np.zeros(p), np.linalg.inv(K), size=n)


def run(p: int, n_particles: int, warm: int, steady: int, seed: int) -> None:
    h = class_hyper(data(p, 51, seed))
    args = (0.5, 0.5, 0.0)
    particle_gibbs(p, n_particles, 2, *args, seed, new_cache(), h.phi, h.phi_post, h.consts)
    cache = new_cache()
    t0 = time.perf_counter()
    particle_gibbs(p, n_particles, warm, *args, seed, cache, h.phi, h.phi_post, h.consts)
    t_warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    graphs, _ = particle_gibbs(
        p, n_particles, steady, *args, seed + 1, cache, h.phi, h.phi_post, h.consts
    )
    t_steady = time.perf_counter() - t0
    print(
        f"p = {p:2d}, {n_particles} particles: first {warm} sweeps "
        f"{1e3 * t_warm / warm:6.2f} ms/sweep; next {steady} sweeps "
        f"{1e3 * t_steady / steady:6.2f} ms/sweep; cache {len(cache)} sets; "
        f"mean graph size {graph_sizes(graphs).mean():.1f} edges"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=int, default=50)
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--steady", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    a = parser.parse_args()
    for p in (10, 20, 50):
        run(p, a.particles, a.warm, a.steady, a.seed)


if __name__ == "__main__":
    main()
