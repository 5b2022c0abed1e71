"""Each chain's beta given ``k``, beside the auxiliary sweeps it chose: a bias one chain's tuning
left (its sweeps checked at a ``k`` that relaxes faster than another it visits) shows as that
chain's beta sitting apart from the others' at the same ``k``.

``pm.sample(random_seed=seed, chains=4, cores=2)`` with PyMC's defaults on a kNN row of
``bench_defaults.py`` (its data and priors); per chain and per value of ``k`` it visits in at
least 5% of the draws: the share, beta's mean and sd, and the chain's sweeps an auxiliary draw.

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/chains_by_k.py classes8 symmetrised --seed 1
"""

from __future__ import annotations

import argparse

import numpy as np
import pymc as pm

from bench_defaults import KNN, build, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model", choices=KNN)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        idata = pm.sample(chains=4, cores=2, random_seed=args.seed, progressbar=False)
    beta = idata.posterior["beta"].values
    k = idata.posterior["k"].values
    sweeps = idata.sample_stats["aux_sweeps"].values[:, -1]
    print("| chain | sweeps | k | share | beta mean | beta sd |")
    print("|---|---|---|---|---|---|")
    for c in range(beta.shape[0]):
        for value in np.unique(k):
            at = k[c] == value
            if at.mean() >= 0.05:
                b = beta[c][at]
                print(
                    f"| {c} | {sweeps[c]:.0f} | {value} | {at.mean():.3f} | {b.mean():.4f} | "
                    f"{b.std():.4f} |"
                )


if __name__ == "__main__":
    main()
