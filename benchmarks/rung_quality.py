"""Whether a ladder's rungs are draws at their betas: each rung's energy against a long reference,
for the ladder the step draws and for rungs drawn in turn from a neighbour (tried, not kept).

At one point of a ``bench_defaults.py`` kNN row (``k`` fixed at ``THETA``), the ladder a window
spanning ``[LOW, BETA]`` draws (``PottsStep._ladder``): ``RELAX_CHAINS`` draws a rung, each from
the observed labels with twice the labels' sweeps ``LABELS`` (``PottsStep._draw_start``). Beside
it, per ``--steps`` share ``a``: the rungs drawn in turn, the first (the middle one, or with
``--from-low`` the lowest) from the labels with ``2 LABELS`` sweeps and each other from its
neighbour toward the first with ``ceil(a LABELS)`` (``2 + 4 a`` of the ``10`` labels' sweeps a
rung). The reference: the ladder with ``8 LABELS`` sweeps a rung. Per rung, over ``--reps``
ladders: the mean energy's offset from the reference's in stationary sds, the variance's ratio to
the reference's, and the sd of a ladder's mean across the ladders (about ``1/8`` sd for 64
independent draws).

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/rung_quality.py blobs4 equal 3.28 9 3.0 57
    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/rung_quality.py classes8 equal 3.50 6 \
        3.378 327 --reps 3 --from-low
"""

from __future__ import annotations

import math

import numpy as np

from bench_defaults import point_parser
from check_rates import window_step
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import RELAX_CHAINS


def annealed(step, observed, rungs, theta, labels, share, first):
    """Rows of a ladder whose rungs are drawn in turn from rung ``first`` outward."""
    m = RELAX_CHAINS
    rows = np.empty((rungs.size * m, step.field.y.size), dtype=step._no_labels.dtype)
    energies = np.full((m, 1), np.nan)
    sweeps = max(1, math.ceil(share * labels))
    order = [first, *range(first - 1, -1, -1), *range(first + 1, rungs.size)]
    for j in order:
        block = rows[j * m : (j + 1) * m]
        if j == first:
            done, upto = 0, 2 * labels
        else:
            block[:] = rows[(j + 1 if j < first else j - 1) * m :][:m]
            done, upto = 1, 1 + sweeps
        mcmc.relaxation_sweeps(
            step.field, observed, rungs[j], theta, block, energies, done, upto, upto + 1, step.rng
        )
    return rows


def main():
    parser = point_parser(__doc__)
    parser.add_argument("low", type=float)
    parser.add_argument("labels", type=int, help="the observed labels' sweeps")
    parser.add_argument("--steps", type=float, nargs="+", default=[1.0, 0.5])
    parser.add_argument("--from-low", action="store_true", help="anneal up from the lowest rung")
    parser.add_argument("--reps", type=int, default=6)
    args = parser.parse_args()
    step, observed = window_step(args)
    chain, f, theta = step.chain, step.field, args.theta
    ladder = step._ladder(chain, args.beta, args.low, theta, args.labels)
    rungs = ladder[0][1]
    first = 0 if args.from_low else rungs.size // 2
    c = mcmc.coupling(f, theta, False)
    z = np.empty(f.y.size, dtype=np.int64)

    def rung_energies(rows):
        out = np.empty(rows.shape[0])
        for r, row in enumerate(rows):
            z[:] = row
            out[r] = mcmc._energy(f, c, z)
        return out.reshape(rungs.size, -1)

    def from_labels(sweeps):
        return lambda: step._draw_start(chain, 0, theta, sweeps, False, ladder)[0]

    draws = {"labels, 2 s a rung": from_labels(args.labels)}
    for a in args.steps:
        draws[f"in turn, {a:g} s a step"] = lambda a=a: annealed(
            step, observed, rungs, theta, args.labels, a, first
        )
    draws["reference, 8 s a rung"] = from_labels(4 * args.labels)
    stats = {}
    for name, draw in draws.items():
        e = np.array([rung_energies(draw()) for _ in range(args.reps)])  # reps x rungs x chains
        stats[name] = e.mean(axis=2), e.var(axis=2, ddof=1).mean(axis=0)
    ref_means, ref_var = stats["reference, 8 s a rung"]
    sd = np.sqrt(ref_var)
    print(
        f"{args.data} {args.model}, k {theta:g}, labels' sweeps {args.labels}, {args.reps} ladders"
    )
    print("rungs (beta):", " ".join(f"{b:.4f}" for b in rungs))
    print(
        "| rungs drawn | mean - reference (sds) | variance / reference | sd of a ladder's mean (sds) |"
    )
    print("|---|---|---|---|")
    for name, (means, var) in stats.items():
        offset = (means.mean(axis=0) - ref_means.mean(axis=0)) / sd
        spread = means.std(axis=0) / sd
        cells = [" ".join(f"{v:+.2f}" for v in offset), " ".join(f"{v:.2f}" for v in var / ref_var)]
        cells.append(" ".join(f"{v:.2f}" for v in spread))
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
