"""How the auxiliary Swendsen-Wang chain behaves near a posterior: energy, its mixing, relaxation.

For a shipped data set, a model of ``bench_defaults.py`` and a fixed ``theta`` (``k`` or
``sigma``), at each given beta: the stationary mean and sd of the field's energy and its
integrated autocorrelation time per sweep (one chain of ``--sweeps`` sweeps from the labels, the
first 500 dropped), and how far 64 chains started at the labels are from the stationary mean
after 1, 2, 4, ... sweeps, in stationary sds (what the relaxation check of the step methods
looks at; docs/inference.md). A posterior on the field's ordering transition shows as a peak of
the energy's sd and integrated time::

    PYTHONPATH=. python benchmarks/bench_transition.py glass ball 1.27 --betas 1.5 1.64 1.8
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import pymc_knn as pk
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import integrated_time

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import build, load

CHAINS = 64
READ_AT = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("theta", type=float)
    parser.add_argument("--betas", nargs="+", type=float, required=True)
    parser.add_argument("--sweeps", type=int, default=20000)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        f = pk.Exchange().field
    aux = mcmc.Auxiliary(
        mcmc.EXCHANGE,
        mcmc.SWENDSEN_WANG,
        1,
        mcmc.START_OBSERVED,
        1024,
        mcmc.no_start_labels(f.class_weights.size),
        mcmc.NO_BETAS,
        mcmc.NO_THETAS,
    )
    c = mcmc.coupling(f, args.theta, False)
    rng = np.random.default_rng(0)
    print(f"{args.data} {args.model}, theta {args.theta}: E(y) = {c[8]:.2f}")
    print("| beta | mean | sd | integrated time (sweeps) | " + " | ".join(map(str, READ_AT)) + " |")
    for beta in args.betas:
        z = f.y.copy()
        e = np.empty(args.sweeps)
        for t in range(e.size):
            mcmc._sweeps(f, aux, c, beta, z, 1, rng)
            e[t] = mcmc._energy(f, c, z)
        e = e[500:]
        mean, sd = e.mean(), e.std()
        bias = np.zeros(len(READ_AT))
        for _ in range(CHAINS):
            z = f.y.copy()
            done = 0
            for i, t in enumerate(READ_AT):
                mcmc._sweeps(f, aux, c, beta, z, t - done, rng)
                done = t
                bias[i] += (mcmc._energy(f, c, z) - mean) / sd / CHAINS
        cells = " | ".join(f"{b:+.2f}" for b in bias)
        print(f"| {beta} | {mean:.1f} | {sd:.2f} | {integrated_time(e):.1f} | {cells} |")


if __name__ == "__main__":
    main()
