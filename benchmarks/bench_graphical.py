"""Seconds per particle Gibbs sweep over decomposable graphs (issue 15), 50 particles.

For p = 10, 20, 50: n = 51 points from a Gaussian whose precision is a chain with a few extra
chords (a decomposable graph), the prior of Pavlenko and Rios (2017, section 5: nu = 1, Phi = I,
delta = 1, class mean). After one compiling call, times ``warm`` sweeps from an empty local
evidence cache (which fills as new node sets appear) and then ``steady`` further sweeps on the
filled cache; prints milliseconds per sweep (wall clock, and the process's CPU time, which a
shared machine inflates less), the cache size and the mean graph size, for each
expansion kernel (``--kernel``: the node-by-node ``simplicial`` one, the paper's
``christmas_tree`` one, or both).

Run::

    PYTHONPATH=. python benchmarks/bench_graphical.py [--kernel both]
"""

import argparse
import time

import numpy as np

from pymc_knn.graphical.evidence import class_hyper, new_cache
from pymc_knn.graphical.particle_gibbs import KERNELS, particle_gibbs
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


def run(p: int, n_particles: int, warm: int, steady: int, seed: int, kernel: str) -> None:
    h = class_hyper(data(p, 51, seed))
    args = (0.5, 0.5, 0.0)
    code = KERNELS[kernel]
    particle_gibbs(p, n_particles, 2, *args, seed, new_cache(), h.phi, h.phi_post, h.consts, code)
    cache = new_cache()
    t0, c0 = time.perf_counter(), time.process_time()
    particle_gibbs(p, n_particles, warm, *args, seed, cache, h.phi, h.phi_post, h.consts, code)
    t_warm, c_warm = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    graphs, _ = particle_gibbs(
        p, n_particles, steady, *args, seed + 1, cache, h.phi, h.phi_post, h.consts, code
    )
    t_steady, c_steady = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"{kernel:>14}, p = {p:2d}, {n_particles} particles: first {warm} sweeps "
        f"{1e3 * t_warm / warm:6.2f} ms/sweep (CPU {1e3 * c_warm / warm:.2f}); next {steady} "
        f"sweeps {1e3 * t_steady / steady:6.2f} ms/sweep (CPU {1e3 * c_steady / steady:.2f}); "
        f"cache {len(cache)} sets; mean graph size {graph_sizes(graphs).mean():.1f} edges"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=int, default=50)
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--steady", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kernel", choices=[*KERNELS, "both"], default="both")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50])
    a = parser.parse_args()
    kernels = list(KERNELS) if a.kernel == "both" else [a.kernel]
    for kernel in kernels:
        for p in a.sizes:
            run(p, a.particles, a.warm, a.steady, a.seed, kernel)


if __name__ == "__main__":
    main()
