"""Posterior predictive summaries on a 200 x 200 grid from 10,000 posterior draws (Ripley).

Fits Ripley's training set (raw covariates, as Cucala et al.) with the exchange step, 4 chains of
2,500 draws after 1,000 tuning draws, then times:

* ``pk.predictive_summary`` on the 200 x 200 grid spanning the training covariates (posterior
  mean, 95% interval, Bayes class and uncertainty zone of 40,000 points from 10,000 draws),
  with the peak resident memory it adds;
* ``pk.predict_proba`` of the grid (lazy: a dask array; only its creation is timed) and of the
  1,000 test points (materialised);
* the test error of the Bayes classes, next to the paper's 0.084-0.087.

Run::

    python benchmarks/bench_predict.py
"""

import resource
import time

import numpy as np
import pymc as pm

import pymc_knn as pk


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    X, y, *_ = pk.datasets.load_ripley("train")
    X_test, y_test, *_ = pk.datasets.load_ripley("test")
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 125)
        pk.PottsKNN("y", X=X, beta=beta, k=k, standardize=False, observed=y)
        idata = pm.sample(
            draws=2500,
            tune=1000,
            chains=4,
            cores=2,
            random_seed=1,
            progressbar=False,
            compute_convergence_checks=False,
        )
    n_draws = idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"]
    distinct = np.unique(
        np.column_stack(
            [idata.posterior["k"].values.ravel(), idata.posterior["beta"].values.ravel()]
        ),
        axis=0,
    )
    print(
        f"{n_draws} draws, {len(distinct)} distinct (beta, k), "
        f"{np.unique(idata.posterior['k']).size} distinct k"
    )

    g = np.linspace(X.min(0) - 0.05, X.max(0) + 0.05, 200)
    grid = np.column_stack([a.ravel() for a in np.meshgrid(g[:, 0], g[:, 1])])
    pk.predictive_summary(idata, grid[:10], model=model)  # jit warm-up
    before = peak_mb()
    t0 = time.perf_counter()
    summary = pk.predictive_summary(idata, grid, model=model)
    t_summary = time.perf_counter() - t0
    print(
        f"predictive_summary, 200 x 200 grid, {n_draws} draws: {t_summary:.2f} s, "
        f"peak RSS +{peak_mb() - before:.0f} MB; {int(summary['uncertain'].sum())} uncertain "
        f"points"
    )

    t0 = time.perf_counter()
    lazy = pk.predict_proba(idata, grid, model=model)
    print(
        f"predict_proba, grid: {type(lazy.data).__name__} of {lazy.nbytes / 2**30:.1f} GiB "
        f"in {lazy.data.numblocks[2]} chunks, built in {time.perf_counter() - t0:.2f} s"
    )
    t0 = time.perf_counter()
    proba = pk.predict_proba(idata, X_test, model=model)
    print(
        f"predict_proba, 1000 test points: {time.perf_counter() - t0:.2f} s "
        f"({proba.nbytes / 2**20:.0f} MiB)"
    )

    t0 = time.perf_counter()
    test = pk.predictive_summary(idata, X_test, model=model)
    error = float(np.mean(test["bayes_class"].values != y_test))
    print(
        f"predictive_summary, 1000 test points: {time.perf_counter() - t0:.2f} s; "
        f"test error {error:.3f} (Cucala et al. 2009: 0.084-0.087); "
        f"{int(test['uncertain'].sum())} test points uncertain"
    )


if __name__ == "__main__":
    main()
