"""One chain of ``pm.sample`` on the scale benchmark's kNN data, every draw printed as it comes.

Where a large fit spends its time and how it mixes: ``n`` two-class points in 2-d (the data of
``bench_scale.py``), ``beta ~ U(0, 4)``, ``k ~ U{1..50}``, the default step, one chain on one
core. Each draw prints the seconds since the start, tuning (T) or not (D), the iterations per
draw, the auxiliary sweeps and where they start (``aux_start``), the bridging sweeps, the mean
acceptance, the beta move's step, ``k`` and beta on its value scale (log-odds of ``beta / 4``);
at the end ArviZ's summary.

    PYTHONPATH=. .venv/bin/python benchmarks/trace_chain.py 1e5 --tune 500 --draws 100

``--working-memory 2048`` lets the graph of 10^6 points (1.2 GB) past the default budget.
``--exchange`` gives the step's keyword arguments as JSON (``'{"delayed_acceptance": false}'``;
the defaults are "auto": from ``LARGE_POINTS`` points on, the tuned start and screening).
"""

from __future__ import annotations

import argparse
import json
import time

import arviz as az
import pymc as pm
import sklearn

import pymc_knn as pk
from bench_scale import K, data


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=lambda s: int(float(s)))
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--exchange", type=json.loads, default={}, metavar="JSON")
    parser.add_argument(
        "--working-memory", type=float, default=None, help="MiB for the graph (10^6 points: 2048)"
    )
    args = parser.parse_args()
    X, y = data(args.n, 2)

    def show(trace, draw):
        s = draw.stats[0]
        print(
            f"{time.perf_counter() - start:7.1f} {draw.draw_idx:4d} {'T' if draw.tuning else 'D'}"
            f" it {s['iterations']:3d} sw {s['aux_sweeps']:5.1f} {s['aux_start'][:3]}"
            f" br {s['bridge_sweeps']:5d}"
            f" acc {s['accept']:.2f} scr {s['screened']:3d} sc {s['scaling']:.4f} k {draw.point['k']}"
            f" b {float(draw.point['beta_interval__']):.4f}",
            flush=True,
        )

    with pm.Model(), sklearn.config_context(working_memory=args.working_memory):
        pk.PottsKNN(
            "y", X=X, beta=pm.Uniform("beta", 0, 4), k=pm.DiscreteUniform("k", 1, K), observed=y
        )
        start = time.perf_counter()
        idata = pm.sample(
            draws=args.draws,
            tune=args.tune,
            chains=1,
            cores=1,
            random_seed=args.seed,
            progressbar=False,
            compute_convergence_checks=False,
            callback=show,
            step=pk.Exchange(**args.exchange),
        )
    print(f"total {time.perf_counter() - start:.1f} s")
    print(az.summary(idata, var_names=["beta", "k"]))


if __name__ == "__main__":
    main()
