"""Each chain's iterations a draw beside the integrated time its draws then showed.

``pm.sample(random_seed=seed, chains=4, cores=2)`` with PyMC's defaults on a
``bench_defaults.py`` row; per chain and parameter: the bulk and tail ESS of that chain's 1000
draws alone and the integrated time per iteration they imply (iterations a draw x draws / the
smaller ESS). A chain that chose many more iterations than the others (a straggler) and shows the
same time per iteration as they do measured its time by chance at the end of tuning; one that
shows a longer time has a slower kernel or met a rare mode, and needed them
(benchmarks/README.md, "Three levers on the iterations a draw").

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/chain_taus.py class20 symmetrised 1
"""

from __future__ import annotations

import warnings

import arviz as az
import pymc as pm

from bench_defaults import build, load, row_arguments


def main():
    args = row_arguments(__doc__)
    X, y = load(args.data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with build(X, y, args.model):
            idata = pm.sample(
                random_seed=args.seed, chains=4, cores=2, compute_convergence_checks=False
            )
    iterations = idata.sample_stats["iterations"].mean("draw").values
    draws = idata.posterior.sizes["draw"]
    print(f"{args.data} {args.model} seed {args.seed}")
    print("| chain | iterations a draw | " + " | ".join(idata.posterior.data_vars) + " |")
    print("|---" * (2 + len(idata.posterior.data_vars)) + "|")
    for c, m in enumerate(iterations):
        cells = []
        for name in idata.posterior.data_vars:
            one = idata.posterior[name].isel(chain=[c])
            bulk = float(az.ess(one, method="bulk")[name])
            tail = float(az.ess(one, method="tail")[name])
            cells.append(f"ESS {bulk:.0f} / {tail:.0f}, time {m * draws / min(bulk, tail):.1f}")
        print(f"| {c} | {m:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
