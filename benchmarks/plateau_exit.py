"""How long a chain takes to leave a region of ``sigma`` below an edge, with its tuned kernel.

``pm.sample(chains=4, cores=1, random_seed=seed)`` on a ``bench_defaults.py`` d-nn row (the same
draws as on two cores); the step then holds the last chain's tuned kernel. The share of each
chain's draws below ``--edge`` is printed; then, from the last chain's final beta and each of
``--starts`` (``sigma``), ``--repeats`` runs of the iteration kernel of ``--iterations``
iterations each, and the iterations until ``sigma`` first exceeds the edge (the run's length where
it never does); and one run of ``--long`` iterations from ``sigma`` at the chain's mean: the share
below the edge and the entries; each with the plateau move made in each of ``--shares`` of the
iterations from the plateau (0: without it; by default the kernel's and none). The edge is the
ball's plateau top unless ``--edge`` is given.

Written for the ball kernel on 400 points on 25 grid sites ("ties"), whose likelihood is flat in
``sigma`` below the sites' smallest distance (0.6853 standardised: only a site's own points are
neighbours there):

    PYTHONPATH=.:benchmarks python benchmarks/plateau_exit.py ties ball 2
"""

from __future__ import annotations

import argparse

import numpy as np
import pymc as pm

import pymc_knn as pk
from bench_defaults import build, load
from bench_moves import iterate
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import PLATEAU_MOVES


def run_chain(step, x, n, seed, share):
    """``n`` iterations of the step's tuned kernel from ``x``, its plateau move made with
    probability ``share`` from the plateau (0: none): the trace's ``sigma`` column."""
    p = step.chain.adaptation.proposal(step._free, step._graph, step._lower, step._upper)
    plateau = p.plateau.copy()
    if share and plateau.size:
        plateau[mcmc.PLATEAU_SHARE] = share
    p = p._replace(plateau=plateau if share else mcmc.NO_PLATEAU)
    return iterate(step, x, p, n, seed)[0][:, 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model", choices=["gaussian", "exponential", "ball"])
    parser.add_argument("seed", type=int)
    parser.add_argument("--edge", type=float, help="default: the ball's plateau top")
    parser.add_argument("--starts", nargs="+", type=float, default=[0.1, 0.3, 0.6])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=1500)
    parser.add_argument("--long", type=int, default=40000)
    parser.add_argument(
        "--shares",
        nargs="+",
        type=float,
        default=[PLATEAU_MOVES, 0.0],
        help="the plateau move's probabilities to run each start with (0: without the move)",
    )
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange()
        idata = pm.sample(
            chains=4,
            cores=1,
            random_seed=args.seed,
            step=step,
            progressbar=False,
            compute_convergence_checks=False,
        )
    sigma = idata.posterior["sigma"].values
    if args.edge is None:
        args.edge = float(step._plateau[1])
        print(f"the plateau's top: sigma {args.edge:.4f}")
    print("share of each chain's draws below the edge:", np.round((sigma < args.edge).mean(1), 3))
    a = step.chain.adaptation
    print(f"last chain: {a.iterations:.2f} iterations a draw, graph share {a.p_graph:.2f}")
    beta = float(idata.posterior["beta"].values[-1, -1])

    def point(s):
        values = {"beta_log__": np.log(beta), "sigma_interval__": np.log(s / (100 - s))}
        return step.layout.to_x({k: np.asarray(v) for k, v in values.items()})

    for share in args.shares:
        print(f"plateau moves {share:g} of the iterations on the plateau")
        for start in args.starts:
            exits = []
            for r in range(args.repeats):
                run = run_chain(step, point(start), args.iterations, 100 + r, share)
                above = np.flatnonzero(run > args.edge)
                exits.append(above[0] if above.size else args.iterations)
            print(
                f"  from sigma {start}: iterations to leave, median {np.median(exits):.0f}, "
                f"mean {np.mean(exits):.0f}, largest {max(exits)}"
            )
        below = run_chain(step, point(float(sigma[-1].mean())), args.long, 7, share) < args.edge
        print(
            f"  {args.long} iterations from the chain's mean: share below {below.mean():.4f}, "
            f"entries {int(np.sum(np.diff(below.astype(int)) == 1))}"
        )


if __name__ == "__main__":
    main()
