"""How often each part of a tuned ladder's relaxation check fails, at fixed sweeps, at one point
of a ``bench_defaults.py`` row (``k`` or ``sigma`` fixed at ``THETA``).

A ladder of tuned starts is drawn as the step draws one for a window whose beta spans ``[LOW,
BETA]`` (``PottsStep._ladder``, ``_draw_start``, with the labels' sweeps ``--labels``; its rungs
evenly spaced in beta, or with ``--energy`` by the energy's sds at both ends: a rule tried and
not kept, :func:`energy_steps`); then, at
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
import math

import numpy as np

from bench_defaults import build, load, point_parser
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import (
    RELAX_CHAINS,
    SPREAD_TOL,
    START_MEMORY,
    agrees,
    relaxed,
    spreads,
)


def energy_steps(top, low, sd_top, sd_low, largest_gap=1.25, fewest=5):
    """A ladder's rungs as steps from ``top``, evenly spaced in ``integral sd(E) d beta`` (the
    energy's sd linear between ``low`` and ``top``, constant beyond), ``low`` and ``top`` midway
    between two in that length, as many as keep each gap within ``largest_gap`` sds (at least
    ``fewest`` rungs): the rule tried on 2026-12-06 (benchmarks/README.md, "Rungs spaced by the
    energy's sds, tried")."""
    span = top - low
    length = (sd_low + sd_top) / 2.0 * span
    gaps = max(fewest - 2, math.ceil(length / largest_gap))
    u = (np.arange(gaps + 2) - 0.5) * (length / gaps)
    slope = (sd_top - sd_low) / span
    inside = np.clip(u, 0.0, length)
    if abs(slope) * span > 1e-9 * sd_low:
        x = (np.sqrt(sd_low**2 + 2.0 * slope * inside) - sd_low) / slope
    else:
        x = inside / sd_low
    x += np.minimum(u, 0.0) / sd_low + np.maximum(u - length, 0.0) / sd_top
    return low + x - top


def window_step(args):
    """The default step of ``args``' row (``data``, ``model``) as a window at ``(beta, theta)``
    leaves it, one long enough to repay a ladder: ``(step, observed)``, ``observed`` its
    auxiliary settings started at the observed labels."""
    import pymc_knn as pk

    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange(rng=3)
    step.chain.adaptation.window_length = 10**7
    step.chain.adaptation.window_values = np.array([[args.theta, args.beta]])
    return step, step._observed(step.chain.aux)


def main():
    parser = point_parser(__doc__)
    parser.add_argument("low", type=float)
    parser.add_argument("--labels", type=int, default=57)
    parser.add_argument("--sweeps", type=int, nargs="+", default=[10, 14, 20, 28, 40])
    parser.add_argument("--chains", type=int, default=RELAX_CHAINS)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--energy", action="store_true", help="rungs spaced by the energy's sds (tried, not kept)"
    )
    args = parser.parse_args()
    step, observed = window_step(args)
    chain, f, theta = step.chain, step.field, args.theta
    rng = np.random.default_rng(args.seed)

    def run(aux, chains, beta, s):
        labels, energies = mcmc.relaxation_state(f, chains, 4 * s)
        mcmc.relaxation_sweeps(f, aux, beta, theta, labels, energies, 0, 2 * s, s // 2, rng)
        return energies

    ladder = step._ladder(chain, args.beta, args.low, theta, args.labels)
    if args.energy:  # the energy's sd at both ends, from chains from the labels
        ends = (args.beta, args.low)
        windows = [
            mcmc.relaxation_windows(run(observed, RELAX_CHAINS, b, args.labels), args.labels)
            for b in ends
        ]
        sds = [float(np.sqrt(sq.mean() - late.mean() ** 2)) for _, late, sq in windows]
        ladder = [(theta, args.beta + energy_steps(args.beta, args.low, *sds))]
    print("rungs:", np.round(ladder[0][1], 4))
    mean = (args.beta + args.low) / 2
    rows, rungs, thetas = step._draw_start(chain, mean, theta, args.labels, False, ladder)
    tuned = observed._replace(
        start=mcmc.START_LABELS, start_labels=rows, start_betas=rungs, start_thetas=thetas
    )

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
                        pooled = (ratio + again) / 2 * stationary
                        fails["pooled"] = not spreads(pooled, ref, ref_sq)
                counts[s].update(part for part, failed in fails.items() if failed)
                counts[s]["ratio"] += ratio
        for s in args.sweeps:
            c = counts[s]
            cells = " | ".join(f"{c[part] / args.reps:.2f}" for part in parts)
            print(f"| {beta:.4f} | {s} | {cells} | {c['ratio'] / args.reps:.2f} |")


if __name__ == "__main__":
    main()
