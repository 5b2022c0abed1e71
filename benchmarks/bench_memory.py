"""Peak memory of prediction on many new points (issue 13, item 12).

Fits Ripley's training set twice (symmetrised kNN, ``k ~ U{1..125}``; d-nn gaussian,
``sigma ~ U(0, 5)``; standardised covariates, exchange step, 4 chains x 1,000 draws after 1,000
tuning, seed 1), keeps the InferenceData in ``--cache`` (default a temporary folder), then runs each prediction in its own
process on ``m`` uniform random points over the training range, after a warm-up call on five
points, and prints the process's peak resident memory (``ru_maxrss``) before and after the call:

* ``pk.predictive_summary`` (kNN with all 4,000 draws; d-nn with every 100th draw, 40, since its
  cost grows with the distinct sigmas);
* ``pk.predict_proba`` eager (``lazy=False``) and lazy (the posterior mean over draws computed
  from the dask array), kNN with every 20th draw (200) and d-nn with every 100th (40);
* with ``--joint M``, instead: ``pk.predict_proba(joint=True, sweeps=1)`` of ``M`` points
  (every 100th draw), next to the size its refusal check estimates.

Run::

    python benchmarks/bench_memory.py                    # m = 1e5 and 1e6, all twelve runs
    python benchmarks/bench_memory.py --m 1e5 --only knn
    python benchmarks/bench_memory.py --joint 3000
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RUNS = [("summary", False), ("proba", False), ("proba", True)]
THIN = {("knn", "summary"): 1, ("knn", "proba"): 20, ("dnn", "summary"): 100, ("dnn", "proba"): 100}


def fit(kind: str, path: Path) -> None:
    import pymc as pm

    import pymc_knn as pk

    X, y, *_ = pk.datasets.load_ripley("train")
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        if kind == "knn":
            pk.PottsKNN("y", X=X, beta=beta, k=pm.DiscreteUniform("k", 1, 125), observed=y)
        else:
            pk.DistanceNN(
                "y", X=X, beta=beta, sigma=pm.Uniform("sigma", 0, 5), kernel="gaussian", observed=y
            )
        idata = pm.sample(1000, tune=1000, chains=4, cores=2, random_seed=1, progressbar=False)
    idata.to_netcdf(path)


def one(path: Path, kind: str, fn: str, m: int, lazy: bool, thin: int) -> None:
    """One prediction call in this process; prints its peak resident memory."""
    import arviz as az

    import pymc_knn as pk

    idata = az.from_netcdf(path).sel(draw=slice(None, None, thin))
    X, *_ = pk.datasets.load_ripley("train")
    X_new = np.random.default_rng(0).uniform(X.min(0), X.max(0), size=(m, 2))
    pk.predictive_summary(idata, X_new[:5])  # warm-up: numba caches
    pk.predict_proba(idata, X_new[:5], lazy=False)
    before = peak_gib()
    t0 = time.perf_counter()
    if fn == "summary":
        out = pk.predictive_summary(idata, X_new)
        what = f"Dataset of {out.nbytes / 2**30:.3f} GiB"
    elif fn == "joint":
        estimate = pk.predict._joint_bytes(pk.predict.Posterior(idata), m)
        out = pk.predict_proba(idata, X_new, joint=True, sweeps=1)
        what = f"{out.nbytes / 2**30:.4f} GiB, graph estimated {estimate / 2**30:.3f} GiB"
    else:
        out = pk.predict_proba(idata, X_new, lazy=lazy)
        what = f"{type(out.data).__name__} of {out.nbytes / 2**30:.3f} GiB"
        if lazy:
            out = out.mean(("chain", "draw")).compute()
            what += ", its draw mean computed"
    post = idata.posterior
    print(
        f"{kind} {fn} m={m:.0e} lazy={int(lazy)} draws={post.sizes['chain'] * post.sizes['draw']}"
        f": {what}; {time.perf_counter() - t0:.1f} s; peak RSS {peak_gib():.2f} GiB (before "
        f"the call {before:.2f} GiB)",
        flush=True,
    )


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=float, nargs="+", default=[1e5, 1e6])
    parser.add_argument("--only", choices=["knn", "dnn"])
    parser.add_argument("--joint", type=float, metavar="M")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "pymc_knn_bench_memory"
    )
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        kind, fn, m, lazy, thin = args.one
        one(args.cache / f"memory_{kind}.nc", kind, fn, int(float(m)), lazy == "1", int(thin))
        return
    kinds = [args.only] if args.only else ["knn", "dnn"]
    args.cache.mkdir(parents=True, exist_ok=True)
    for kind in kinds:
        path = args.cache / f"memory_{kind}.nc"
        if not path.exists():
            fit(kind, path)
    root = str(Path(__file__).resolve().parents[1])  # this checkout's pymc_knn in each run
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    runs = [
        (m, kind, fn, lazy, THIN[kind, fn]) for m in args.m for kind in kinds for fn, lazy in RUNS
    ]
    if args.joint:
        runs = [(args.joint, kind, "joint", False, 100) for kind in kinds]
    for m, kind, fn, lazy, thin in runs:
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--cache",
                str(args.cache),
                "--one",
                kind,
                fn,
                str(m),
                str(int(lazy)),
                str(thin),
            ],
            check=True,
            env=env,
        )


if __name__ == "__main__":
    main()
