"""How much the energy of auxiliary draws from one fixed start varies, against the stationary
law's, at one point ``(beta, theta)`` of a ``bench_defaults.py`` row.

A draw from a fixed start after ``s`` sweeps keeps the start's slow components until ``s``
outlasts their time: its mean energy can be right (a start of typical energy) while its variance
is short, and an exchange ratio whose auxiliary energy varies too little narrows the posterior
(``spread_model.py``). For each of ``--starts`` starts (each a draw after 500 sweeps from the
observed labels), the mean and sd of ``--draws`` draws' energies after each of ``--sweeps``
sweeps and the ratio of their variance to the stationary one (``--stationary`` sweeps of one
chain: 20,000 hold about 330 effective draws where the energy's time is 60 sweeps, so the
stationary variance is known within about 8%, each cell's within 10%).

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/start_spread.py digits equal 3.9957 4
"""

from __future__ import annotations


import numpy as np

from bench_defaults import point_field, point_parser, stationary_energies
from pymc_knn.kernels import mcmc


def main():
    parser = point_parser(__doc__)
    parser.add_argument("--sweeps", type=int, nargs="+", default=[10, 20, 40, 81])
    parser.add_argument("--starts", type=int, default=4)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--stationary", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    f, labels, c, rng = point_field(args.data, args.model, args.theta, args.seed)
    beta = args.beta
    z = np.empty(f.y.size, dtype=np.int64)
    energy = stationary_energies(f, labels, c, beta, args.theta, args.stationary, rng)
    print(
        f"{args.data} {args.model} at beta {beta:g}, theta {args.theta:g}: stationary energy "
        f"{energy.mean():.1f}, sd {energy.std():.1f}"
    )
    for _ in range(args.starts):
        mcmc.auxiliary_draw(f, labels._replace(sweeps=500), c, beta, args.theta, z, rng)
        start = labels._replace(
            start=mcmc.START_LABELS,
            start_labels=z[None].astype(labels.start_labels.dtype),
            start_betas=np.array([[beta]]),
            start_thetas=np.array([args.theta]),
        )
        cells = []
        for s in args.sweeps:
            e = np.empty(args.draws)
            for d in range(args.draws):
                mcmc.auxiliary_draw(f, start._replace(sweeps=s), c, beta, args.theta, z, rng)
                e[d] = mcmc._energy(f, c, z)
            cells.append(f"{s}: {e.mean():.1f} sd {e.std():.1f} ({e.var() / energy.var():.2f})")
        print(
            f"  start {mcmc._energy(f, c, start.start_labels[0].astype(np.int64)):.1f}; "
            + ", ".join(cells)
        )


if __name__ == "__main__":
    main()
