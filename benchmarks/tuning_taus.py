"""Which series sets each chain's iterations per draw at the end of tuning, for one
``bench_defaults.py`` row and seed.

``pm.sample`` runs the row's tuning (PyMC's 1000 tuning draws, 4 chains with ``cores=1``, the
same draws as with ``cores=2``) and one draw; at each chain's end of tuning this prints the
integrated time of every coordinate of the final tuning rows and of the indicators of its 5% and
95% tails (``Adaptation.series_taus``: the largest sets the iterations), and for a discrete graph
coordinate the rows at each value. A chain that chose many more iterations than the others shows
which series, and whether it is a stay at a value the other chains barely visited
(benchmarks/README.md, "Slow chains").

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/tuning_taus.py pima equal 1
"""

from __future__ import annotations

import numpy as np
import pymc as pm

from bench_defaults import build, load, row_arguments
from pymc_knn.step_methods._adaptation import Adaptation


def report(adaptation):
    rows, _ = adaptation.final_block()
    if rows is None:
        return "no tuning rows"
    block = rows[:, 2:]
    names = [f"beta{j}" for j in range(adaptation.n_free)]
    names += [f"graph{j}" for j in range(block.shape[1] - adaptation.n_free)]
    taus = Adaptation.series_taus(block)
    lines = [f"{len(rows)} rows"]
    for name, (bulk, low, high) in zip(names, taus):
        lines.append(f"  {name}: tau {bulk:.1f}, 5% tail {low:.1f}, 95% tail {high:.1f}")
    if adaptation.graph_discrete.size == 1 and adaptation.graph_discrete[0]:
        values, counts = np.unique(rows[:, 1], return_counts=True)
        lines.append(
            "  rows at each value: " + ", ".join(f"{v:g}: {c}" for v, c in zip(values, counts))
        )
    return "\n".join(lines)


def main():
    args = row_arguments(__doc__)
    finish = Adaptation.finish
    chains = iter(range(4))  # cores=1 tunes the chains in their order

    def reporting_finish(self):
        text = report(self)
        finish(self)
        print(f"chain {next(chains)}: {text}")
        print(f"  -> tau {self.tau:.1f}, {self.iterations:.2f} iterations a draw")

    Adaptation.finish = reporting_finish
    X, y = load(args.data)
    with build(X, y, args.model):
        pm.sample(
            draws=1,
            random_seed=args.seed,
            chains=4,
            cores=1,
            progressbar=False,
            compute_convergence_checks=False,
        )


if __name__ == "__main__":
    main()
