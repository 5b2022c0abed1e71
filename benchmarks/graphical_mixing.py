"""Mixing of the particle Gibbs sampler at p = 50 on Table 1's data (issue 15), both kernels.

Scenario A of ``pavlenko2017.py`` (true graphs by the Christmas-tree algorithm), replicate 0,
class 0, n = 300 and n = 51: particle Gibbs with 50 particles for ``--sweeps`` sweeps, with the
node-by-node (``simplicial``) and the paper's ``christmas_tree`` expansion kernel; prints the
log-likelihood ``log f(X | G)`` of the draws (mean of the last quarter, and the largest), of the
true graph and of the complete graph, the mean graph size against the true graph's, and the
effective sample size of the graph size over the last three quarters (ArviZ), with the seconds
taken (so that ESS per second can be compared as well as ESS per sweep).

With ``--wine``: instead, each cultivar of the wine data (p = 13, standardised), 4,000 sweeps
(1,000 burnt) per kernel: CPU seconds, log-likelihood, graph size and the ESS of the graph size
and of the log-likelihood, per sweep and per CPU second.

Run::

    PYTHONPATH=. python benchmarks/graphical_mixing.py [--sweeps 3000] [--kernel both] [--n 300 51]
    PYTHONPATH=. python benchmarks/graphical_mixing.py --wine
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def run(hyper, graph, n: int, kernel: str, sweeps: int, seed: int) -> None:
    """One chain of ``sweeps`` sweeps; print its summary line."""
    import arviz as az

    import pavlenko2017 as pv
    from pymc_knn.graphical import graph_log_evidence
    from pymc_knn.graphical.decomposable import adjacency_from_matrix
    from pymc_knn.graphical.posterior import graph_sizes, sample_graphs

    t0 = time.perf_counter()
    draws = sample_graphs(hyper, n_particles=50, n_sweeps=sweeps, seed=seed, kernel=kernel)
    secs = time.perf_counter() - t0
    keep = slice(sweeps // 4, None)
    sizes = graph_sizes(draws.graphs[keep]).astype(float)
    ess = float(az.ess(sizes[None, :]))
    true_ll = graph_log_evidence(hyper, adjacency_from_matrix(graph))
    full_ll = graph_log_evidence(hyper, adjacency_from_matrix(~np.eye(pv.P, dtype=bool)))
    print(
        f"A, n = {n}, {kernel}: {sweeps} sweeps in {secs:.0f} s; log-lik of the draws "
        f"{draws.log_likelihood[-sweeps // 4 :].mean():.0f} (max {draws.log_likelihood.max():.0f}), "
        f"true graph {true_ll:.0f}, complete graph {full_ll:.0f}; graph size "
        f"{sizes.mean():.1f} (true {int(graph.sum() // 2)}), ESS of the size "
        f"{ess:.0f} of {sizes.size} ({ess / secs:.2f} per second)",
        flush=True,
    )


def wine(kernels) -> None:
    """ESS of the graph size per CPU second on each wine cultivar, for each kernel."""
    import arviz as az
    from sklearn.preprocessing import StandardScaler

    import pymc_knn as pk
    from pymc_knn.graphical import class_hyper
    from pymc_knn.graphical.posterior import graph_sizes, sample_graphs

    X, y, *_ = pk.datasets.load_wine()
    X = StandardScaler().fit_transform(X)
    for c in range(3):
        hyper = class_hyper(X[y == c])
        for kernel in kernels:
            sample_graphs(hyper, n_particles=50, n_sweeps=5, kernel=kernel)  # compile
            c0 = time.process_time()
            draws = sample_graphs(hyper, n_particles=50, n_sweeps=4000, seed=1, kernel=kernel)
            secs = time.process_time() - c0
            sizes = graph_sizes(draws.graphs[1000:]).astype(float)
            loglik = draws.log_likelihood[1000:]
            ess = float(az.ess(sizes[None]))
            print(
                f"wine cultivar {c} (n = {(y == c).sum()}, p = {X.shape[1]}), {kernel}: "
                f"{secs:.1f} s CPU; log-lik {loglik.mean():.1f} (max "
                f"{draws.log_likelihood.max():.1f}); graph size {sizes.mean():.1f}; ESS of the "
                f"size {ess:.0f} of 3000 ({ess / secs:.0f} per CPU second), of the log-lik "
                f"{float(az.ess(loglik[None])):.0f}",
                flush=True,
            )


def main() -> None:
    import pavlenko2017 as pv
    from pymc_knn.graphical import class_hyper
    from pymc_knn.graphical.particle_gibbs import KERNELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=3000)
    parser.add_argument("--kernel", choices=[*KERNELS, "both"], default="both")
    parser.add_argument("--n", type=int, nargs="+", default=[300, 51], choices=[300, 51])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--wine", action="store_true", help="the wine cultivars instead")
    a = parser.parse_args()
    kernels = list(KERNELS) if a.kernel == "both" else [a.kernel]
    if a.wine:
        wine(kernels)
        return
    for n in a.n:
        rng = np.random.default_rng(0 if n == 300 else 1000)  # Table 1's replicate 0
        (X, y), _, graphs = pv.scenario_data("A", 2, n, rng)
        hyper = class_hyper(X[y == 0])
        for kernel in kernels:
            run(hyper, graphs[0], n, kernel, a.sweeps, a.seed)


if __name__ == "__main__":
    main()
