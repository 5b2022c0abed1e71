"""How often each part of a tuned ladder's relaxation check fails, at fixed sweeps, at one point
of a ``bench_defaults.py`` row (``k`` or ``sigma`` fixed at ``THETA``).

A ladder of tuned starts is drawn as the step draws one for a window whose beta spans ``[LOW,
BETA]`` (``PottsStep._ladder``, ``_draw_start``, with the labels' sweeps ``--labels``); then, at
``BETA`` and at ``LOW``, ``--reps`` times: a fresh reference (``RELAX_CHAINS`` chains from the
observed labels, ``--labels`` sweeps) and, for each of ``--sweeps``, ``--chains`` chains from the
ladder, judged as ``PottsStep._check`` judges them. Per sweeps, the share of checks that fail
(``any``) and of each part: the windows' drift (``relaxed``), the agreement with the labels'
chains (``agrees``), the draws' variance under ``1 - SPREAD_TOL`` or over ``1 / (1 -
SPREAD_TOL)`` of the stationary one (``spread_low``, ``spread_high``) and the start's memory
over ``START_MEMORY``; the share that fail when a miss of the spread alone is judged again on
the variance pooled with that of ``--chains`` fresh chains (``pooled``: a rule tried and not
kept, benchmarks/README.md); and the variance ratio's mean.

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/check_rates.py blobs4 equal 3.28 9 3.0
"""

from __future__ import annotations

import collections

import numpy as np

from bench_defaults import build, load, point_parser
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import (
    RELAX_CHAINS,
    SPREAD_TOL,
    START_MEMORY,
    agrees,
    relaxed,
)


def main():
    import pymc_knn as pk

    parser = point_parser(__doc__)
    parser.add_argument("low", type=float)
    parser.add_argument("--labels", type=int, default=57)
    parser.add_argument("--sweeps", type=int, nargs="+", default=[10, 14, 20, 28, 40])
    parser.add_argument("--chains", type=int, default=RELAX_CHAINS)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange(rng=3)
    chain, f, theta = step.chain, step.field, args.theta
    chain.adaptation.window_length = 10**7
    chain.adaptation.window_values = np.array([[theta, args.beta]])
    observed = step._observed(chain.aux)
    ladder = step._ladder(chain, args.beta, args.low, theta, args.labels)
    mean = (args.beta + args.low) / 2
    rows, rungs, thetas = step._draw_start(chain, mean, theta, args.labels, False, ladder)
    tuned = observed._replace(
        start=mcmc.START_LABELS, start_labels=rows, start_betas=rungs, start_thetas=thetas
    )
    rng = np.random.default_rng(args.seed)

    def spreads_within(ratio):
        return 1 - SPREAD_TOL <= ratio <= 1 / (1 - SPREAD_TOL)

    def run(aux, chains, beta, s):
        labels, energies = mcmc.relaxation_state(f, chains, 4 * s)
        mcmc.relaxation_sweeps(f, aux, beta, theta, labels, energies, 0, 2 * s, s // 2, rng)
        return energies

    parts = ("any", "relaxed", "agrees", "spread_low", "spread_high", "memory", "pooled")
    print(f"{args.data} {args.model}, theta {theta:g}, {args.chains} chains, {args.reps} reps")
    print("| beta | sweeps | " + " | ".join(parts) + " | variance ratio |")
    print("|---" * (len(parts) + 3) + "|")
    for beta in (args.beta, args.low):
        counts = {s: collections.Counter() for s in args.sweeps}
        for _ in range(args.reps):
            _, ref, ref_sq = mcmc.relaxation_windows(
                run(observed, RELAX_CHAINS, beta, args.labels), args.labels
            )
            stationary = float(ref_sq.mean() - ref.mean() ** 2)
            for s in args.sweeps:
                energies = run(tuned, args.chains, beta, s)
                early, late, late_sq = mcmc.relaxation_windows(energies, s)
                ratio = mcmc.spread_at(energies, s) / stationary
                fails = {
                    "relaxed": not relaxed(early, late, late_sq),
                    "agrees": not agrees(late, ref, ref_sq),
                    "spread_low": ratio < 1 - SPREAD_TOL,
                    "spread_high": ratio > 1 / (1 - SPREAD_TOL),
                    "memory": mcmc.start_memory(energies, s) > START_MEMORY,
                }
                fails["any"] = any(fails.values())
                fails["pooled"] = fails["any"]
                if fails["spread_low"] or fails["spread_high"]:
                    others = ("relaxed", "agrees", "memory")
                    if not any(fails[part] for part in others):
                        again = mcmc.spread_at(run(tuned, args.chains, beta, s), s) / stationary
                        fails["pooled"] = not spreads_within((ratio + again) / 2)
                counts[s].update(part for part, failed in fails.items() if failed)
                counts[s]["ratio"] += ratio
        for s in args.sweeps:
            c = counts[s]
            cells = " | ".join(f"{c[part] / args.reps:.2f}" for part in parts)
            print(f"| {beta:.4f} | {s} | {cells} | {c['ratio'] / args.reps:.2f} |")


if __name__ == "__main__":
    main()
