"""The noise of a graph move's exchange ratio, unbridged, from one graph parameter to others.

One chain of ``pm.sample`` tunes ``pk.Exchange`` on a ``bench_defaults.py`` row (PyMC's 1000
tuning draws, seed 1) for its auxiliary sampler; then, at a fixed beta, for each target value
``theta1`` the auxiliary term of the exchange ratio of a move ``theta0 -> theta1`` (an auxiliary
draw at ``theta1`` from the observed labels, its energies under both graphs) is drawn
``--replicates`` times. Printed: its mean and variance, and the variance per unit of the move's
size as the bridging measures it (the log-odds of ``sigma / 100`` for the docs' ``U(0, 100)``;
``1 / k`` for kNN terms, whose weights are ``1 / k``), the quantity the tuned bridging takes as a constant (``bridge_unit`` times
``TARGET_NOISE``).

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/move_noise.py apart gaussian 6 0.3 \
        0.1 0.09 0.08 0.07 0.06 0.05 0.8 1.3
"""

from __future__ import annotations

import argparse

import numpy as np

from bench_defaults import KNN, load
from bench_moves import tuned_step
from pymc_knn.kernels import mcmc


def scale(model, theta):
    """A graph parameter where a move's size is a difference: ``1 / k``, or ``sigma``'s log-odds
    on (0, 100)."""
    return 1.0 / theta if model in KNN else np.log(theta / (100.0 - theta))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("beta", type=float)
    parser.add_argument("theta0", type=float)
    parser.add_argument("theta1", type=float, nargs="+")
    parser.add_argument("--replicates", type=int, default=200)
    args = parser.parse_args()
    _, y = load(args.data)
    step, _ = tuned_step(args.data, args.model, 1)
    f, aux, b = step.field, step.chain.aux, args.beta
    rng = np.random.default_rng(0)
    c0 = mcmc.coupling(f, args.theta0, False)
    print(f"{args.data} {args.model}, beta {args.beta}, from {args.theta0}, {aux.sweeps} sweeps")
    for theta1 in args.theta1:
        c1 = mcmc.coupling(f, theta1, False)
        terms = np.empty(args.replicates)
        for r in range(args.replicates):
            z = y.astype(np.int64).copy()
            terms[r] = mcmc._exchange_term(f, aux, c0, c1, b, b, theta1, False, 0, z, rng)[0]
        size = abs(scale(args.model, theta1) - scale(args.model, args.theta0))
        print(
            f"  to {theta1:g} (size {size:.2f}): mean {terms.mean():.2f}, variance "
            f"{terms.var():.2f}, per unit of size {terms.var() / size:.1f}"
        )


if __name__ == "__main__":
    main()
