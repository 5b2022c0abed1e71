"""A reference posterior of beta given ``k`` for a kNN row of ``bench_defaults.py``: ``k`` fixed,
beta ~ U(0, 4), the exchange step with many fixed sweeps from the observed labels (no tuning of
them), 2 chains. The default fits' beta given ``k`` (``chains_by_k.py``) are judged against it.

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/fixed_k_reference.py classes8 equal 6
"""

from __future__ import annotations

import argparse

import arviz as az
import pymc as pm

import pymc_knn as pk
from bench_defaults import KNN, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model", choices=KNN)
    parser.add_argument("k", type=int)
    parser.add_argument("--sweeps", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    X, y = load(args.data)
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        pk.PottsKNN("y", X=X, beta=beta, k=args.k, neighbours=args.model, observed=y)
        idata = pm.sample(
            tune=500,
            chains=2,
            cores=2,
            random_seed=args.seed,
            step=pk.Exchange(sweeps=args.sweeps),
            progressbar=False,
        )
    b = idata.posterior["beta"]
    print(
        f"beta | k = {args.k}: {float(b.mean()):.4f} +- {float(b.std()):.4f} (chains "
        f"{', '.join(f'{m:.4f}' for m in b.mean('draw').values)}; ESS "
        f"{float(az.ess(idata)['beta']):.0f}, R-hat {float(az.rhat(idata)['beta']):.3f})"
    )


if __name__ == "__main__":
    main()
