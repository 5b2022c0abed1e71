"""What a pass over a d-nn table costs per entry, and where the table lives in the caches.

At ``(data, kernel, sigma)`` of a ``bench_defaults.py`` row (the default step's field, every pair
kept on the made and shipped sets), best of three, per entry of the rows as they end at ``sigma``:

* ``coupling``: :func:`pymc_knn.kernels.mcmc.coupling_into` (the row weights, their running
  sums written into the table, and ``E(y)``), as every ``sigma`` move builds one;
* ``weights``: the row weights alone (:func:`~pymc_knn.kernels.structure._row_weights`, the
  exponentials; from the distances an exponential kernel's full table keeps), no table written;
* ``energy``: :func:`~pymc_knn.kernels.structure.rows_energy` of the observed labels (what each
  auxiliary draw's ``E(z)`` costs, once or twice an iteration), on the first ``rows`` rows of the
  table: from a table that fits a core's L2 cache to the whole one;
* ``two energies``: :func:`~pymc_knn.kernels.structure.rows_energies` of the labels under the
  table at ``sigma`` and at ``1.05 sigma`` in one pass (a ``sigma`` move's, per entry of the
  first table).

    PYTHONPATH=benchmarks:. .venv/bin/python benchmarks/bench_dnn_passes.py breast_cancer gaussian 0.738
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from numba import njit

import pymc_knn as pk
from bench_defaults import build, load
from bench_iteration import best
from pymc_knn.kernels import mcmc
from pymc_knn.kernels import structure as S


@njit(cache=True)
def _weights(sorted_sq, dist, sigma, kernel, epsilon, reps):
    w = np.empty(sorted_sq.shape[1])
    total = 0.0
    for _ in range(reps):
        for i in range(sorted_sq.shape[0]):
            d = dist[i] if dist.shape[0] else S.NO_DISTANCES
            end, _, _ = S._row_weights(sorted_sq[i], sigma, kernel, epsilon, w, False, d)
            total += w[end - 1]
    return total


@njit(cache=True)
def _energies(order, C, ends, z, class_weights, floor, reps):
    total = 0.0
    for _ in range(reps):
        total += S.rows_energy(order, C, ends, z, class_weights, floor, False)
    return total


@njit(cache=True)
def _pair_energies(order, tables, z, class_weights, reps):
    total = 0.0
    for _ in range(reps):
        e0, e1 = S.rows_energies(order, *tables, z, class_weights, False)
        total += e0 + e1
    return total


def warm_best(fn, repeat=3):
    """Best of ``repeat`` timings of ``fn`` after one call (compilation, caches)."""
    fn()
    return best(fn, repeat)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("kernel", choices=["gaussian", "exponential"])
    parser.add_argument("sigma", type=float)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.kernel):
        f = pk.Exchange().field
    n = f.y.size
    C, floor, ends = np.empty(f.sorted_sq.shape), np.empty(n), np.empty(n, dtype=np.int64)
    mcmc.coupling_into(f, args.sigma, False, C, floor, ends)
    entries = int(ends.sum())
    print(
        f"{platform.machine()}, {platform.processor() or '?'}; {args.data} {args.kernel} at sigma "
        f"{args.sigma:g}: {n} rows, {entries / n:.0f} of {f.sorted_sq.shape[1]} entries a row kept"
    )
    R = args.reps

    def coupling():
        for _ in range(R):
            mcmc.coupling_into(f, args.sigma, False, C, floor, ends)

    kernel = S.GAUSSIAN if args.kernel == "gaussian" else S.EXPONENTIAL
    for name, fn in (
        ("coupling", coupling),
        ("weights", lambda: _weights(f.sorted_sq, f.sorted_d, args.sigma, kernel, f.epsilon, R)),
    ):
        t = warm_best(fn) / R
        print(f"{name:<10} {t * 1e6:8.1f} us  {t * 1e9 / entries:5.2f} ns an entry")
    z = f.y.astype(np.int64)
    for rows in sorted({min(r, n) for r in (50, 100, 200, n)}):
        order, Cr = np.ascontiguousarray(f.order[:rows]), np.ascontiguousarray(C[:rows])
        e = ends[:rows]
        reps = max(1, R * n // rows)
        t = (
            warm_best(lambda: _energies(order, Cr, e, z, f.class_weights, floor[:rows], reps))
            / reps
        )
        megabytes = int(e.sum()) * (Cr.itemsize + order.itemsize) / 1e6
        print(
            f"energy, {rows:>5} rows ({megabytes:5.2f} MB of the table read): "
            f"{t * 1e6:8.1f} us  {t * 1e9 / e.sum():5.2f} ns an entry"
        )
    C1, floor1, ends1 = np.empty_like(C), np.empty_like(floor), np.empty_like(ends)
    mcmc.coupling_into(f, 1.05 * args.sigma, False, C1, floor1, ends1)
    tables = (C, ends, floor, C1, ends1, floor1)
    t = warm_best(lambda: _pair_energies(f.order, tables, z, f.class_weights, R)) / R
    print(f"two energies {t * 1e6:6.1f} us  {t * 1e9 / entries:5.2f} ns an entry")


if __name__ == "__main__":
    main()
