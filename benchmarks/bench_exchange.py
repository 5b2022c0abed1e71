"""Exchange on Ripley's training set: pm.sample(draws=50_000, tune=5_000, chains=1, cores=1).

Run: ``python benchmarks/bench_exchange.py [sampler]`` (default swendsen_wang, 10 sweeps from the
observed labels). Prints wall time of pm.sample after a warm-up compile, the posterior, and ESS/s.
"""

import sys
import time

import arviz as az
import pymc as pm

import pymc_knn as pk


def main(sampler: str = "swendsen_wang") -> None:
    X, y, *_ = pk.datasets.load_ripley("train")
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 125)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        pm.sample(draws=100, tune=100, chains=1, cores=1, progressbar=False,
                  step=pk.Exchange(sampler=sampler), compute_convergence_checks=False)  # compile
        t0 = time.perf_counter()
        idata = pm.sample(draws=50_000, tune=5_000, chains=1, cores=1, random_seed=1,
                          step=pk.Exchange(sampler=sampler), progressbar=False,
                          compute_convergence_checks=False)
        wall = time.perf_counter() - t0
    summary = az.summary(idata, var_names=["beta", "k"])
    print(summary)
    ess = float(az.ess(idata, var_names=["beta"])["beta"])
    print(f"sampler={sampler}: wall {wall:.1f} s, ESS(beta) {ess:.0f}, ESS/s {ess / wall:.1f}, "
          f"acceptance {float(idata.sample_stats['accepted'].mean()):.2f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
