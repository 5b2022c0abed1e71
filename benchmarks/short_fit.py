"""A short ``pm.sample`` on a ``bench_defaults.py`` row, for timing two trees of the code A/B.

``pm.sample(tune=500, draws=500, chains=2, cores=2)``, PyMC's step assignment, the row's priors:
two processes at once, as a default fit on two cores runs them (a d-nn table of 1,000 points
is then read by both from memory, not from one core's share of the cache). Prints PyMC's
sampling time, the iterations each chain ran and the bulk ESS: run each tree in turn, several
times, and compare the times of runs that drew the same iterations.

    PYTHONPATH=/tmp/wt_old:/tmp/wt_old/benchmarks .venv/bin/python benchmarks/short_fit.py \
        hastie gaussian --seed 1
    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/short_fit.py hastie gaussian --seed 1
"""

from __future__ import annotations

import argparse

import pymc as pm

import pymc_knn as pk
from bench_defaults import build, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        idata = pm.sample(
            draws=500,
            tune=500,
            chains=2,
            cores=2,
            random_seed=args.seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
    stats = idata.sample_stats
    ess = {v: round(float(pm.ess(idata, var_names=[v])[v])) for v in idata.posterior.data_vars}
    print(
        f"{pk.__file__}: sampling {stats.attrs['sampling_time']:.1f} s, iterations "
        f"{stats['iterations'].values.sum(axis=1).tolist()}, ESS {ess}"
    )


if __name__ == "__main__":
    main()
