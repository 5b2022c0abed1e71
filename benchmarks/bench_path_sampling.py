"""Path sampling on Ripley's data (issue 14): the log Z surface, the posterior and the evidence.

Times, after a warm-up call that compiles the numba kernel:

* ``pk.log_normaliser`` on Ripley's 250 training points (standardised covariates, symmetrised
  kNN), every k in 1..125 and beta on a 0.05 grid up to 4 (Cucala et al. 2009 used beta_max = 4),
  with its largest Monte Carlo standard error and quadrature bound;
* ``pk.path_sampling_posterior`` (uniform priors on the grid box) and its test error on the
  1,000 test points (Cucala et al. 2009 report 0.085 for path sampling), with the posterior of k;
* ``pk.log_evidence`` of the surface;
* the evidence of one d-nn model (gaussian kernel, standardised covariates, the estimator's
  priors ``beta ~ U(0, 4)``, ``sigma ~ U(0, sigma_upper)``) from nothing: a pilot surface on a
  geometric sigma grid, a refined grid where the pilot puts the posterior
  (``path_evidence.sigma_grid``), the surface on it and ``pk.log_evidence``.

Run::

    python benchmarks/bench_path_sampling.py [sweeps] [burn] [dnn_sweeps] [dnn_burn]

The defaults, 120 sweeps after 50 per beta, keep the largest ``mcse`` of ``log Z`` near 0.37,
so that the seed-to-seed spread (up to 1.3 times the ``mcse`` past the transition) stays under
the issue's 0.5; 75 sweeps give an ``mcse`` of 0.48.
"""

import sys
import time
from pathlib import Path

import numpy as np

import pymc_knn as pk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from path_evidence import sigma_grid


def main(sweeps=120, burn=50, dnn_sweeps=40, dnn_burn=20):
    X, y, _, _ = pk.datasets.load_ripley("train")
    X_test, y_test, _, _ = pk.datasets.load_ripley("test")
    graph = pk.KNNGraph(X, k_max=125)
    betas = np.round(np.arange(0, 81) * 0.05, 10)
    pk.log_normaliser(graph, betas, [1, 2], n_classes=2, sweeps=40, burn=0, progressbar=False)
    t0 = time.perf_counter()
    log_z = pk.log_normaliser(
        graph, betas, n_classes=2, sweeps=sweeps, burn=burn, random_seed=2009, progressbar=False
    )
    t_surface = time.perf_counter() - t0
    print(
        f"surface k 1..125 x beta 0..4 step 0.05 ({log_z.size} points), sweeps={sweeps}, "
        f"burn={burn}: {t_surface:.1f} s; max mcse {float(log_z.mcse.max()):.3f}, "
        f"max quad_error {float(log_z.quad_error.max()):.3f}",
        flush=True,
    )
    t0 = time.perf_counter()
    idata = pk.path_sampling_posterior(graph, y, log_z, draws=1000, chains=4, random_seed=1)
    t_post = time.perf_counter() - t0
    summary = pk.predictive_summary(idata, X_test)
    error = float(np.mean(summary.bayes_class.values != y_test))
    k = idata.posterior.k.values.ravel()
    beta = idata.posterior.beta.values.ravel()
    q = np.quantile(k, [0.025, 0.5, 0.975])
    print(
        f"posterior draws: {t_post:.2f} s; k mean {k.mean():.1f}, median {q[1]:.0f}, "
        f"95% [{q[0]:.0f}, {q[2]:.0f}]; beta mean {beta.mean():.3f} sd {beta.std():.3f}; "
        f"test error {error:.3f} (paper 0.085)",
        flush=True,
    )
    t0 = time.perf_counter()
    ev = pk.log_evidence(graph, y, log_z, random_seed=1)
    print(
        f"log evidence {ev.log_evidence:.2f} +- {ev.mcse:.2f} (quad bound "
        f"{ev.quad_error:.3f}): {time.perf_counter() - t0:.2f} s"
    )
    dnn_evidence(dnn_sweeps, dnn_burn)


def dnn_evidence(sweeps, burn, kernel="gaussian"):
    """The whole evidence of one d-nn model on Ripley, timed from the graph on."""
    from pymc_knn.sklearn import _default_sigma_upper

    X, y, _, _ = pk.datasets.load_ripley("train")
    small = pk.DistanceGraph(X[:20], kernel=kernel)  # compiles the kernels
    pk.log_normaliser(small, [0, 0.1], [1.0], n_classes=2, sweeps=40, burn=0, progressbar=False)
    t0 = time.perf_counter()
    graph = pk.DistanceGraph(X, kernel=kernel)
    upper = _default_sigma_upper(X, kernel, True)
    sigmas = sigma_grid(graph, y, 2, upper, seed=1)
    t_pilot = time.perf_counter() - t0
    betas = np.round(np.arange(0, 81) * 0.05, 10)
    log_z = pk.log_normaliser(
        graph,
        betas,
        sigmas,
        n_classes=2,
        sweeps=sweeps,
        burn=burn,
        random_seed=1,
        progressbar=False,
    )
    ev = pk.log_evidence(graph, y, log_z, random_seed=1)
    total = time.perf_counter() - t0
    print(
        f"d-nn {kernel} evidence: {ev.log_evidence:.2f} +- {ev.mcse:.2f} (quad bound "
        f"{ev.quad_error:.3f}); {sigmas.size} sigmas in [{sigmas[0]:.3g}, {sigmas[-1]:.3g}] "
        f"(upper {upper:.3g}); pilot {t_pilot:.1f} s, total {total:.1f} s; largest mcse of "
        f"log Z {float(log_z.mcse.max()):.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:5]))
