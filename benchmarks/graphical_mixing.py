"""Mixing of the particle Gibbs sampler at p = 50 on Table 1's data (issue 15).

Scenario A of ``pavlenko2017.py`` (true graphs by the Christmas-tree algorithm), replicate 0,
class 0, n = 300 and n = 51: particle Gibbs with 50 particles for ``--sweeps`` sweeps; prints the
log-likelihood ``log f(X | G)`` of the draws (mean of the last quarter), of the true graph and of
the complete graph, the mean graph size against the true graph's, and the effective sample
size of the graph size over the last three quarters (ArviZ).

Run::

    PYTHONPATH=. python benchmarks/graphical_mixing.py [--sweeps 3000]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    import arviz as az

    import pavlenko2017 as pv
    from pymc_knn.graphical import class_hyper, graph_log_evidence
    from pymc_knn.graphical.decomposable import adjacency_from_matrix
    from pymc_knn.graphical.posterior import graph_sizes, sample_graphs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=3000)
    a = parser.parse_args()
    for col, n in ((0, 300), (1, 51)):
        rng = np.random.default_rng(1000 * col)
        (X, y), _, graphs = pv.scenario_data("A", 2, n, rng)
        hyper = class_hyper(X[y == 0])
        t0 = time.perf_counter()
        draws = sample_graphs(hyper, n_particles=50, n_sweeps=a.sweeps, seed=1)
        secs = time.perf_counter() - t0
        keep = slice(a.sweeps // 4, None)
        sizes = graph_sizes(draws.graphs[keep]).astype(float)
        ess = float(az.ess(sizes[None, :]))
        true_ll = graph_log_evidence(hyper, adjacency_from_matrix(graphs[0]))
        full_ll = graph_log_evidence(hyper, adjacency_from_matrix(~np.eye(pv.P, dtype=bool)))
        print(
            f"A, n = {n}: {a.sweeps} sweeps in {secs:.0f} s; log-lik of the draws "
            f"{draws.log_likelihood[-a.sweeps // 4 :].mean():.0f} (max {draws.log_likelihood.max():.0f}), "
            f"true graph {true_ll:.0f}, complete graph {full_ll:.0f}; graph size "
            f"{sizes.mean():.1f} (true {int(graphs[0].sum() // 2)}), ESS of the size "
            f"{ess:.0f} of {sizes.size}"
        )


if __name__ == "__main__":
    main()
