"""How far auxiliary chains from the observed labels are from their stationary mean energy,
sweep by sweep, at one point ``(beta, theta)`` of a ``bench_defaults.py`` row's model.

``--chains`` chains (the default step's sampler and start) run ``2 * --sweeps`` sweeps; the
stationary mean and sd are those of the readings in ``[sweeps, 2 sweeps)``, and each line gives
the chains' mean energy after ``t`` sweeps in stationary sds from it, with its standard error.
Where these curves differ across beta, the sweeps a draw needs differ too: the relaxation check
looks at both ends of a window's beta (docs/inference.md, "Both ends of beta").

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/relaxation_curve.py classes8 equal 6 3.38
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import pymc_knn as pk
from bench_defaults import build, load
from pymc_knn.kernels import mcmc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("theta", type=float, help="k, or sigma on its natural scale")
    parser.add_argument("beta", type=float)
    parser.add_argument("--chains", type=int, default=128)
    parser.add_argument("--sweeps", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange()
    labels, energies = mcmc.relaxation_state(step.field, args.chains, args.sweeps)
    t0 = time.perf_counter()
    mcmc.relaxation_sweeps(
        step.field,
        step.chain.aux,
        args.beta,
        args.theta,
        labels,
        energies,
        0,
        2 * args.sweeps,
        1,
        np.random.default_rng(args.seed),
    )
    read = np.isfinite(energies[0])
    t, e = np.flatnonzero(read), energies[:, read]
    late = e[:, t >= args.sweeps]
    mean, sd = late.mean(), late.std()
    print(
        f"{args.data} {args.model} at beta {args.beta}, theta {args.theta}: {args.chains} chains, "
        f"{time.perf_counter() - t0:.0f} s; stationary mean {mean:.2f}, sd {sd:.2f}"
    )
    print("| sweeps | mean - stationary, sds | se |")
    print("|---|---|---|")
    for s in (1, 4, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768):
        if s < args.sweeps:
            at = np.argmin(abs(t - s))
            print(
                f"| {t[at]} | {(e[:, at].mean() - mean) / sd:+.3f} | "
                f"{e[:, at].std() / np.sqrt(args.chains) / sd:.3f} |"
            )


if __name__ == "__main__":
    main()
