"""What each part of the Potts steps' tuning buys (issue 12; docs/inference.md, "Proposals").

For each data set (kNN, symmetrised, the docs' priors ``beta ~ U(0, 4)``,
``k ~ U{1..smallest class}``) and seed, ``pm.sample(random_seed=seed, chains=4, cores=2)`` with
PyMC's default draws and tune and ``pk.Exchange`` in a variant:

* ``default``: as pm.sample assigns it;
* ``target=0.2`` / ``target=0.44``: another acceptance target for each move type;
* ``no-ridge``: beta does not follow the posterior's ridge when k moves (the learned slope is
  kept at 0, by patching the adaptation: not a user option);
* ``one-iteration``: one iteration per stored draw (``iterations_per_draw=1``), the state
  before issue 12 but for the per-move tuning.

Prints, per fit, the wall time of ``pm.sample`` (kernels compiled beforehand), the smallest
ess_bulk over beta and k, ESS per second, the largest r_hat and the iterations per draw the
chains chose. Results are appended as JSON lines to ``--out``.

    python benchmarks/bench_tuning.py --data wine pima ripley --seeds 1 2
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bench_defaults import build, load

VARIANTS = ("default", "target=0.2", "target=0.44", "no-ridge", "one-iteration")


def fit(data, variant, seed):
    import arviz as az
    import pymc as pm

    import pymc_knn as pk
    from pymc_knn.step_methods import _adaptation

    X, y = load(data)
    m = build(X, y, "symmetrised")
    kwargs = {}
    if variant.startswith("target="):
        kwargs["target_accept"] = float(variant.split("=")[1])
    if variant == "one-iteration":
        kwargs["iterations_per_draw"] = 1
    learn = _adaptation.Adaptation._learn_covariance
    if variant == "no-ridge":

        def learn_without_ridge(self, block, accepted):
            learn(self, block, accepted)
            self.slope[:] = 0.0

        _adaptation.Adaptation._learn_covariance = learn_without_ridge
    try:
        with m:
            pm.sample(
                draws=2,
                tune=2,
                chains=1,
                cores=1,
                step=pk.Exchange(),
                progressbar=False,
                compute_convergence_checks=False,
            )
            t0 = time.perf_counter()
            idata = pm.sample(
                random_seed=seed,
                chains=4,
                cores=2,
                step=pk.Exchange(**kwargs),
                progressbar=False,
                compute_convergence_checks=False,
            )
            wall = time.perf_counter() - t0
    finally:
        _adaptation.Adaptation._learn_covariance = learn
    summ = az.summary(idata, var_names=["beta", "k"], kind="diagnostics", round_to="none")
    ess = float(summ["ess_bulk"].min())
    return {
        "data": data,
        "variant": variant,
        "seed": seed,
        "wall": round(wall, 2),
        "ess_beta": float(summ.loc["beta", "ess_bulk"]),
        "ess_k": float(summ.loc["k", "ess_bulk"]),
        "ess_per_s": round(ess / wall, 1),
        "r_hat": float(summ["r_hat"].max()),
        "accept": round(float(idata.sample_stats["accept"].mean()), 3),
        "iterations": [int(v) for v in idata.sample_stats["iterations"].isel(draw=0).values],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["wine", "pima", "ripley"])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--out", default="benchmarks/results/tuning.jsonl")
    args = parser.parse_args()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for data in args.data:
        for variant in args.variants:
            for seed in args.seeds:
                row = fit(data, variant, seed)
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(
                    f"{data:>7} {variant:>13} seed {seed}: {row['wall']:6.1f} s  ESS beta "
                    f"{row['ess_beta']:5.0f} k {row['ess_k']:5.0f}  ESS/s {row['ess_per_s']:6.1f}"
                    f"  r_hat {row['r_hat']:.3f}  acc {row['accept']:.2f}  its "
                    f"{row['iterations']}",
                    flush=True,
                )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
