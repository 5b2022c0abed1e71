"""pm.sample() with PyMC's defaults on data the package does not ship: scikit-learn's moons (issue 12).

``make_moons(600, noise=0.3, random_state=3)``, standardised; kNN (``beta ~ U(0, 4)``,
``k ~ U{1..100}``) or d-nn (``beta ~ HalfNormal(5)``, ``sigma ~ U(0, 100)``), the default step,
``pm.sample(chains=4, cores=2, random_seed=7)``, PyMC's default draws and tune. The wall excludes
compilation (a two-draw fit runs first), as issue 12's bar asks. Prints one JSON line: wall,
iterations per draw and sweeps of each chain, ESS, R-hat and the posterior's quantiles.

    python benchmarks/bench_moons.py symmetrised
    python benchmarks/bench_moons.py gaussian            # every pair (drop_tol = 0 below 2,000)
    python benchmarks/bench_moons.py gaussian --drop-tol 1e-6
"""

from __future__ import annotations

import argparse
import json
import time


def build(X, y, model, drop_tol):
    import pymc as pm

    import pymc_knn as pk

    with pm.Model() as m:
        if model in ("symmetrised", "equal"):
            beta = pm.Uniform("beta", 0, 4)
            k = pm.DiscreteUniform("k", 1, 100)
            pk.PottsKNN("y", X=X, beta=beta, k=k, neighbours=model, observed=y)
        else:
            beta = pm.HalfNormal("beta", 5)
            sigma = pm.Uniform("sigma", 0, 100)
            kw = {} if drop_tol is None else {"drop_tol": drop_tol}
            pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel=model, observed=y, **kw)
    return m


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "model", choices=["symmetrised", "equal", "gaussian", "exponential", "ball"]
    )
    parser.add_argument("--drop-tol", type=float, default=None)
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--chains", type=int, default=4)
    args = parser.parse_args()

    import arviz as az
    import pymc as pm
    from sklearn.datasets import make_moons

    X, y = make_moons(args.n, noise=0.3, random_state=3)
    X = (X - X.mean(0)) / X.std(0)
    common = {"progressbar": False, "compute_convergence_checks": False}
    with build(X, y, args.model, args.drop_tol):
        pm.sample(draws=2, tune=2, chains=1, random_seed=0, **common)
    with build(X, y, args.model, args.drop_tol):
        t = time.perf_counter()
        idata = pm.sample(chains=args.chains, cores=min(args.chains, 2), random_seed=7, **common)
        wall = time.perf_counter() - t
    stats = idata.sample_stats
    summary = az.summary(idata, kind="diagnostics")
    quantiles = idata.posterior.quantile([0.05, 0.5, 0.95]).to_dataframe().round(4)
    print(
        json.dumps(
            {
                "model": args.model,
                "drop_tol": args.drop_tol,
                "n": args.n,
                "chains": args.chains,
                "wall": round(wall, 1),
                "iterations": stats.iterations.values[:, -1].tolist(),
                "sweeps": stats.aux_sweeps.values[:, -1].tolist(),
                "ess_bulk": summary.ess_bulk.round().to_dict(),
                "ess_tail": summary.ess_tail.round().to_dict(),
                "r_hat": summary.r_hat.to_dict(),
                "quantiles": quantiles.to_dict(),
            }
        )
    )


if __name__ == "__main__":
    main()
