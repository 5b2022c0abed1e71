"""How many Swendsen-Wang sweeps should a d-nn bridging field make? (issue 12)

A bridged ``sigma`` move's exchange term averages ``beta0 E0(z) - beta1 E1(z)`` over ``m + 1``
stages, ``z`` moved between them by sweeps through the intermediate fields (each leaves its
field invariant, so any number of sweeps keeps the estimate unbiased). A field costs its two
energies, which read every entry of the rows, and its sweeps, which probe a few: on long rows one
more sweep is cheap. If ``z`` relaxes slowly (an auxiliary draw on make_classification's 1,000
points takes 40 sweeps), one sweep a field barely moves it and the noise falls more slowly than
``1 / (m + 1)``.

For a move ``(beta, sigma) -> (beta, sigma e^d)`` this script draws the auxiliary variable as
the step does (``--sweeps`` sweeps of Swendsen-Wang from the observed labels at the proposal),
runs the package's bridge (:func:`pymc_knn.kernels.mcmc.bridged_log_ratio_rows`) with ``m``
fields of ``s`` sweeps each, and prints the term's mean, its variance, the variance times
``m + 1`` (constant when each field relaxes ``z``), and the time per term::

    PYTHONPATH=.:benchmarks python benchmarks/bench_field_sweeps.py class20 gaussian \\
        --sigma 0.917 --beta 1.4 --sweeps 40 --moves 0.1 0.2
    PYTHONPATH=.:benchmarks python benchmarks/bench_field_sweeps.py ripley gaussian \\
        --sigma 0.223 --beta 1.3 --sweeps 14 --moves 0.3 --reps 100
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import pymc_knn as pk
from pymc_knn.kernels import mcmc

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import build, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("--sigma", type=float, required=True)
    parser.add_argument("--beta", type=float, required=True)
    parser.add_argument("--sweeps", type=int, default=10, help="of the auxiliary draw")
    parser.add_argument("--moves", nargs="+", type=float, default=[0.1, 0.2], help="d")
    parser.add_argument("--fields", nargs="+", type=int, default=[0, 2, 4, 8, 16])
    parser.add_argument("--field-sweeps", nargs="+", type=int, default=[1, 2, 4, 8])
    parser.add_argument("--reps", type=int, default=40)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange(sweeps=args.sweeps)
    f, aux, beta = step.field, step.aux, args.beta
    rng = np.random.default_rng(0)
    c0 = mcmc.coupling(f, args.sigma, False)
    c0 = tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in c0)
    z = f.y.astype(np.int64).copy()  # compile before timing
    mcmc.bridged_log_ratio_rows(
        f, c0, c0, beta, beta, z, 1, rng, np.nan, np.nan, mcmc.WRITTEN_ROW, 1e9
    )
    print(f"{args.data} {args.model}: sigma {args.sigma}, beta {beta}, {args.sweeps} sweeps a draw")
    print("| d | fields m | sweeps a field s | mean | variance | variance (m + 1) | ms a term |")
    print("|---|---|---|---|---|---|---|")
    for d in args.moves:
        c1 = mcmc.coupling(f, args.sigma * np.exp(d), False)
        mean_row = np.maximum(c0[10], c1[10]).mean()
        for m in args.fields:
            for s in args.field_sweeps if m else [1]:
                terms, spent = np.empty(args.reps), 0.0
                for r in range(args.reps):
                    z = f.y.astype(np.int64).copy()
                    mcmc.auxiliary_draw(f, aux, c1, beta, args.sigma * np.exp(d), z, rng)
                    t0 = time.perf_counter()
                    terms[r] = mcmc.bridged_log_ratio_rows(
                        f,
                        c0,
                        c1,
                        beta,
                        beta,
                        z,
                        m,
                        rng,
                        np.nan,
                        np.nan,
                        mcmc.WRITTEN_ROW,
                        mean_row / s,
                        mcmc.READING_BYTES,
                    )
                    spent += time.perf_counter() - t0
                v = terms.var()
                print(
                    f"| {d} | {m} | {s} | {terms.mean():.2f} | {v:.3f} | {v * (m + 1):.2f} "
                    f"| {1e3 * spent / args.reps:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
