"""Auxiliary draws from a ladder of starts against the stationary law, at points of beta about
``BETA`` (``k`` or ``sigma`` fixed at ``THETA``) of a ``bench_defaults.py`` row.

The ladder's rungs lie ``--spacing`` apart over ``BETA +- --half``, each ``--pool`` draws after
``--build`` sweeps from the observed labels; a draw at beta' starts from a draw of one of the
two rungs about beta', the upper with probability ``(beta' - below) / (above - below)``
(``--nearest``: the nearer rung alone), and runs ``s`` sweeps (``--sweeps``), as the package's
ladder of tuned starts does (``mcmc.ladder_row``; benchmarks/README.md, "A ladder of tuned
starts"), here in Python. For each beta' (``BETA`` plus each
of ``--at``) the mean energy of ``--draws`` draws in stationary sds from the stationary mean
(``--stationary`` sweeps of one chain), and their variance over the stationary one.

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/ladder_start.py blobs4 equal 3.12 9
"""

from __future__ import annotations

import time

import numpy as np

from bench_defaults import point_field, point_parser, stationary_energies
from pymc_knn.kernels import mcmc


def ladder_row(rungs, per_rung, beta, rng):
    """A row to start a draw at ``beta`` from: of the two rungs about it, the upper with
    probability ``(beta - below) / (above - below)`` (past the end rungs, the end one)."""
    j = int(np.clip(np.searchsorted(rungs, beta, side="right") - 1, 0, rungs.size - 1))
    if j < rungs.size - 1 and beta > rungs[0]:
        j += rng.random() * (rungs[j + 1] - rungs[j]) < beta - rungs[j]
    return j * per_rung + rng.integers(per_rung)


def main():
    parser = point_parser(__doc__)
    parser.add_argument("--half", type=float, default=0.2)
    parser.add_argument("--spacing", type=float, default=0.04)
    parser.add_argument("--at", type=float, nargs="+", default=[-0.15, -0.1, -0.02, 0, 0.02, 0.1])
    parser.add_argument("--sweeps", type=int, nargs="+", default=[0, 2, 4, 10])
    parser.add_argument("--pool", type=int, default=64)
    parser.add_argument("--build", type=int, default=300)
    parser.add_argument("--nearest", action="store_true")
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--stationary", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    f, labels, c, rng = point_field(args.data, args.model, args.theta, args.seed)
    theta = args.theta
    z = np.empty(f.y.size, dtype=np.int64)
    rungs = args.beta + np.arange(-args.half, args.half + 1e-9, args.spacing)
    t0 = time.perf_counter()
    rows = np.empty((rungs.size * args.pool, f.y.size), dtype=np.int64)
    for r in range(rows.shape[0]):
        mcmc.auxiliary_draw(
            f, labels._replace(sweeps=args.build), c, rungs[r // args.pool], theta, z, rng
        )
        rows[r] = z
    print(
        f"{args.data} {args.model}, theta {theta:g}: {rungs.size} rungs {rungs[0]:.4f}-"
        f"{rungs[-1]:.4f} of {args.pool} draws, built in {time.perf_counter() - t0:.2f} s"
    )
    print(
        "| beta' | stationary mean (sd) | " + " | ".join(f"{s} sweeps" for s in args.sweeps) + " |"
    )
    print("|---" * (2 + len(args.sweeps)) + "|")
    for shift in args.at:
        b = args.beta + shift
        e = stationary_energies(f, labels, c, b, theta, args.stationary, rng)
        m, v = e.mean(), e.var()
        cells = []
        for s in args.sweeps:
            d = np.empty(args.draws)
            for i in range(args.draws):
                if args.nearest:
                    j = int(np.clip(np.round((b - rungs[0]) / args.spacing), 0, rungs.size - 1))
                    r = j * args.pool + rng.integers(args.pool)
                else:
                    r = ladder_row(rungs, args.pool, b, rng)
                z[:] = rows[r]
                if s:
                    mcmc._sweeps(f, labels, c, b, z, s, rng)
                d[i] = mcmc._energy(f, c, z)
            cells.append(f"{(d.mean() - m) / np.sqrt(v):+.2f}, {d.var() / v:.2f}")
        print(f"| {b:.4f} | {m:.1f} ({np.sqrt(v):.1f}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
