"""What one relaxation check resolves at a point of a posterior, and which sweeps it chooses.

At ``(beta, theta)`` of a ``bench_defaults.py`` row's model (the default step, auxiliary chains
from the observed labels), for each of ``--sweeps``: ``--checks`` independent checks of
``RELAX_CHAINS`` chains (:func:`pymc_knn.kernels.mcmc.relaxation`), and per ``s``

* the check's tolerance: two standard errors of the gap between the windows ``[s/2, s)`` and
  ``[s, 2s)`` over ``RELAX_TOL`` stationary sds (above 1: the tolerance is the standard errors,
  the check cannot resolve the 0.1 sd it aims at);
* the gap itself in stationary sds (mean over the checks: the bias the draws keep after ``s / 2``
  sweeps, which the check asks to be within the tolerance), and the share of checks that fail.

Then ``--repeat`` calls of the step's own check (``PottsStep._check``) from ``--start`` sweeps: the
sweeps it chooses, as one adaptation window would.

    PYTHONPATH=benchmarks:. .venv/bin/python benchmarks/bench_checks.py glass ball 1.765 1.25 \
        --sweeps 40 57 81 --start 57
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

import pymc_knn as pk
from bench_defaults import build, load
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import RELAX_CHAINS, RELAX_TOL


def resolution(step, aux, beta, theta, s, checks):
    """``(tolerance ratio, gap in sds, failed)`` of ``checks`` checks at ``s`` sweeps."""
    rows = []
    for _ in range(checks):
        early, late, late_sq = mcmc.relaxation(
            step.field, aux, beta, theta, s, RELAX_CHAINS, step.rng
        )
        d = early - late
        sd = math.sqrt(max(float(late_sq.mean() - late.mean() ** 2), 0.0))
        se = float(d.std(ddof=1)) / math.sqrt(d.size)
        gap = float(d.mean())
        rows.append((2 * se / (RELAX_TOL * sd), gap / sd, abs(gap) > max(RELAX_TOL * sd, 2 * se)))
    return np.array(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("beta", type=float)
    parser.add_argument("theta", type=float, help="k, or sigma on its natural scale")
    parser.add_argument("--sweeps", type=int, nargs="+", default=[10, 14, 20, 28])
    parser.add_argument("--checks", type=int, default=20)
    parser.add_argument("--start", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange(rng=args.seed)
    aux = step.chain.aux._replace(start=step._start_code)
    print(f"{platform.machine()}; {args.data} {args.model} at beta {args.beta}, theta {args.theta}")
    print("sweeps | 2 se / (0.1 sd), median | gap, mean sds | checks failed")
    for s in args.sweeps:
        r = resolution(step, aux, args.beta, args.theta, s, args.checks)
        print(f"{s} | {np.median(r[:, 0]):.2f} | {r[:, 1].mean():+.3f} | {r[:, 2].mean():.2f}")
    t = time.perf_counter()
    chosen = [step._check(aux, args.beta, args.theta, args.start)[0] for _ in range(args.repeat)]
    values, counts = np.unique(chosen, return_counts=True)
    print(
        f"{args.repeat} checks from {args.start} sweeps chose (sweeps: times) "
        f"{dict(zip(values.tolist(), counts.tolist()))}, mean {np.mean(chosen):.1f} "
        f"({time.perf_counter() - t:.0f} s)"
    )


if __name__ == "__main__":
    main()
