"""Exact-posterior steps on Ripley's training set, as the issue asks for them.

beta ~ Uniform(0, 4), k ~ DiscreteUniform(1, 125),
``pm.sample(draws=50_000, tune=5_000, chains=1, cores=1)`` with Exchange (default) or Moller.
Prints the wall time of ``pm.sample`` after a warm-up compile, the posterior, ESS and ESS/s.
Covariates are raw by default, as in Cucala et al. (their pseudo-likelihood maximum, k = 53 and
beta = 2.28, is reproduced on raw covariates only); ``--standardize`` uses the package default.

Run::

    python benchmarks/bench_exchange.py                          # Exchange, SW 10 sweeps from y
    python benchmarks/bench_exchange.py --sampler cftp --max-sweeps 16384 --draws 2000 --tune 500
    python benchmarks/bench_exchange.py --method moller --sampler gibbs --sweeps 500
    python benchmarks/bench_exchange.py --sweeps 100 --start random --draws 20000
    python benchmarks/bench_exchange.py --k-radius 3                # the paper's r = 3
"""

import argparse
import time

import arviz as az
import numpy as np
import pymc as pm

import pymc_knn as pk


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--method", choices=["exchange", "moller"], default="exchange")
    p.add_argument("--sampler", default="swendsen_wang")
    p.add_argument("--sweeps", type=int, default=10)
    p.add_argument("--start", choices=["observed", "random"], default="observed")
    p.add_argument("--max-sweeps", type=int, default=4096, help="CFTP's look-back bound")
    p.add_argument("--draws", type=int, default=50_000)
    p.add_argument("--tune", type=int, default=5_000)
    p.add_argument("--standardize", action="store_true")
    p.add_argument(
        "--k-radius",
        type=int,
        default=None,
        help="the k proposal's initial radius (default: the step's, max(1, round(k_max / 20)))",
    )
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    X, y, *_ = pk.datasets.load_ripley("train")
    cls = pk.Exchange if args.method == "exchange" else pk.Moller
    opts = {
        "sampler": args.sampler,
        "sweeps": args.sweeps,
        "start": args.start,
        "max_sweeps": args.max_sweeps,
        "k_radius": args.k_radius,
    }
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 125)
        pk.PottsKNN("y", X=X, beta=beta, k=k, standardize=args.standardize, observed=y)
        pm.sample(
            draws=100,
            tune=100,
            chains=1,
            cores=1,
            progressbar=False,
            step=cls(**opts),
            compute_convergence_checks=False,
        )  # compile and jit once
        t0 = time.perf_counter()
        idata = pm.sample(
            draws=args.draws,
            tune=args.tune,
            chains=1,
            cores=1,
            random_seed=args.seed,
            step=cls(**opts),
            progressbar=False,
            compute_convergence_checks=False,
        )
        wall = time.perf_counter() - t0
    print(az.summary(idata, var_names=["beta", "k"]))
    post, stats = idata.posterior, idata.sample_stats
    ess = float(az.ess(idata, var_names=["beta"])["beta"])
    ks = post["k"].values.ravel()
    top = np.bincount(ks).argsort()[::-1][:3]
    print(
        f"{args.method}, {args.sampler} ({args.sweeps} sweeps from {args.start}): "
        f"wall {wall:.1f} s, beta {float(post['beta'].mean()):.3f} "
        f"(sd {float(post['beta'].std()):.3f}), k mean {ks.mean():.1f} median "
        f"{np.median(ks):.0f} modes {top.tolist()}, ESS(beta) {ess:.0f}, ESS/s {ess / wall:.1f}, "
        f"acceptance {float(stats['accepted'].mean()):.2f}, "
        f"inexact aux draws {int((~stats['aux_exact']).sum()) if args.sampler == 'cftp' else '-'}, "
        f"mean aux sweeps {float(stats['aux_sweeps'].mean()):.0f}"
    )
    if args.method == "moller":
        print(
            f"plug-in after tuning: beta {float(stats['plug_in_beta'][0, 0]):.3f}, "
            f"k {float(stats['plug_in_theta'][0, 0]):.0f}"
        )


if __name__ == "__main__":
    main()
