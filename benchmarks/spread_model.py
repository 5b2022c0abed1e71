"""A Gaussian model of beta's exchange moves: what auxiliary draws whose energy varies less than
the stationary law's do to the posterior.

The energy of a draw at beta is ``N(V beta, v)`` (stationary: ``v = V``, the slope of its mean),
the observed labels' energy 0, so beta's posterior is ``N(0, 1 / V)``. The exchange ratio of a
random-walk move ``beta -> beta'`` (sd ``--scale`` posterior sds) is ``exp((beta' - beta) (0 -
E'))`` with ``E'`` drawn at ``beta'``. Printed per variance ratio ``v / V``: the sampled sd over
the posterior's, and the acceptance. With ``v = V`` the exchange is exact; with less, the
log-ratio lacks the noise that makes it so, and the sampled posterior is too narrow.

    python benchmarks/spread_model.py
"""

from __future__ import annotations

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratios", type=float, nargs="+", default=[1.0, 0.8, 0.76, 0.59, 0.5, 0.3])
    parser.add_argument("--scales", type=float, nargs="+", default=[1.0, 2.4])
    parser.add_argument("--iterations", type=int, default=400_000)
    args = parser.parse_args()
    V = 100.0
    sd = 1.0 / np.sqrt(V)
    rng = np.random.default_rng(0)
    for ratio in args.ratios:
        for scale in args.scales:
            n = args.iterations
            steps = rng.normal(0.0, scale * sd, n)
            log_u = np.log(rng.random(n))
            noise = rng.normal(0.0, np.sqrt(ratio * V), n)
            beta, accepted, out = 0.0, 0, np.empty(n)
            for t in range(n):
                proposal = beta + steps[t]
                if log_u[t] < (proposal - beta) * -(V * proposal + noise[t]):
                    beta, accepted = proposal, accepted + 1
                out[t] = beta
            print(
                f"v / V {ratio:4.2f}, steps of {scale} sds: sampled sd {out.std() / sd:.3f} of "
                f"the posterior's, acceptance {accepted / n:.2f}"
            )


if __name__ == "__main__":
    main()
