"""The tuned bridging's noise per region of the graph parameter, after PyMC's default tuning.

One chain of ``pm.sample`` tunes ``pk.Exchange`` on a ``bench_defaults.py`` row (PyMC's 1000
tuning draws; ``bench_moves.tuned_step``). Printed: the pooled noise variance per unit of a
move's size (what one noise for all would bridge by) and the tuning's running mean of bridging
fields a graph move, then for each region the tuning saw
(``pymc_knn.kernels.mcmc.BRIDGE_REGION``: a tenth of ``log k`` or ``log sigma``) the value of
``k`` or ``sigma`` where it starts, the mean of its own pairs of estimates, their weight, and
the estimate that sets its moves' fields (its pairs with its neighbours' and the pooled noise).

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/bridge_regions.py apart gaussian 1
"""

from __future__ import annotations

import argparse
import math

from bench_moves import tuned_step
from pymc_knn.kernels import mcmc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("seed", type=int)
    args = parser.parse_args()
    step, _ = tuned_step(args.data, args.model, args.seed)
    a = step.chain.adaptation
    print(
        f"{args.data} {args.model} seed {args.seed}: pooled noise {a._noise_scale:.2f} a unit, "
        f"{a.fields_per_move:.1f} bridging fields a graph move"
    )
    regions = sorted(a._regions)
    for region, estimate in zip(regions, a._region_noise(regions)):
        total, weight = a._regions[region]
        start = math.exp(region * mcmc.BRIDGE_REGION)
        print(
            f"  from {start:9.4g}: own {total / weight:9.2f} (weight {weight:5.1f}), "
            f"estimate {estimate:9.2f}"
        )


if __name__ == "__main__":
    main()
