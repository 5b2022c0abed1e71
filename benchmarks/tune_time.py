"""One chain a row and seed: the wall of PyMC's 1000 tuning draws and of the 1000 draws after.

``pm.sample(tune=1000, draws=1000, chains=1, cores=1)`` on ``bench_defaults.py`` rows (after a
short run that compiles the kernels), with the step PyMC assigns or, given ``--exchange`` (JSON),
``pk.Exchange(**kwargs)``; one JSON line a fit: the tuning's and the draws' seconds (split at the
first draw after tuning, by PyMC's callback), the iterations a draw and the final sweeps.

    PYTHONPATH=.:benchmarks python benchmarks/tune_time.py ripley:symmetrised ripley:gaussian \
        --seeds 1 2 3 --exchange '{"bridge": 4}'
"""

from __future__ import annotations

import argparse
import json
import time

import pymc as pm

import pymc_knn as pk
from bench_defaults import build, load


def timed(seed, kwargs) -> dict:
    """One chain's tuning and draws, in seconds."""
    marks = {}

    def first_draw(trace, draw):
        if not draw.tuning and "tuned" not in marks:
            marks["tuned"] = time.perf_counter()

    step = {} if kwargs is None else {"step": pk.Exchange(**kwargs)}
    start = time.perf_counter()
    idata = pm.sample(
        tune=1000,
        draws=1000,
        chains=1,
        cores=1,
        random_seed=seed,
        progressbar=False,
        compute_convergence_checks=False,
        callback=first_draw,
        **step,
    )
    end = time.perf_counter()
    stats = idata.sample_stats
    return {
        "tune_s": round(marks["tuned"] - start, 2),
        "draws_s": round(end - marks["tuned"], 2),
        "iterations": float(stats.iterations.mean()),
        "sweeps": float(stats.aux_sweeps.values[0, -1]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+", metavar="DATA:MODEL")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--exchange", type=json.loads, default=None, metavar="JSON")
    args = parser.parse_args()
    for row in args.rows:
        data, model = row.split(":")
        X, y = load(data)
        with build(X, y, model):
            pm.sample(tune=3, draws=2, chains=1, progressbar=False, random_seed=0)
            for seed in args.seeds:
                fit = {"data": data, "model": model, "seed": seed, **timed(seed, args.exchange)}
                print(json.dumps(fit), flush=True)


if __name__ == "__main__":
    main()
