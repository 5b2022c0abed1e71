"""Cost of the Ctrl-C check in the numba loops, against the sweeps it is made in.

``check_signals`` (``PyErr_CheckSignals``) is called once per sweep of Gibbs, Swendsen-Wang and
CFTP and once per Metropolis-Hastings iteration. This times one call (best of 5 loops of 10^8
calls, loop included) and the sweeps of each sampler on Ripley's training set (k = 13, best of 7):
2,000 Gibbs or Swendsen-Wang sweeps at beta = 1.45; a CFTP draw at beta = 3 that never coalesces,
its look-back doubling to 1,024 (2,047 sweeps of the two bounding chains, then 1,024 of the chain
from the start labels: 3,071 checks). It prints the time between two checks and the check's share.

Run: ``python benchmarks/bench_interrupt.py``
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

import pymc_knn as pk
from pymc_knn.kernels import cftp_potts2, gibbs_sweeps, swendsen_wang_sweeps
from pymc_knn.kernels.signals import check_signals

CALLS = 10**8


@njit
def _checks(n):
    for _ in range(n):
        check_signals()


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    per_call = best(lambda: _checks(CALLS), 5) / CALLS
    X, y, *_ = pk.datasets.load_ripley("train")
    c = pk.KNNGraph(X, k_max=13).coupling(13)
    a = np.ones(2)
    rng = np.random.default_rng(0)
    z = y.astype(np.int64)
    runs = {  # name: (call, checks it makes)
        "Gibbs": (lambda: gibbs_sweeps(c.indptr, c.indices, c.data, z, 1.45, a, 2000, rng), 2000),
        "Swendsen-Wang": (
            lambda: swendsen_wang_sweeps(
                c.src, c.dst, c.weight, c.uniform_weight, z, 1.45, a, 2000, rng
            ),
            2000,
        ),
        "CFTP": (lambda: cftp_potts2(c.indptr, c.indices, c.data, z, 3.0, a, 1024, 1), 3071),
    }
    print(f"check_signals: {per_call * 1e9:.2f} ns per call")
    for name, (fn, n) in runs.items():
        t = best(fn, 7) / n
        print(f"{name:14s} {t * 1e6:6.2f} us between checks: the check is {per_call / t:.3%}")


if __name__ == "__main__":
    main()
