"""What a d-nn relaxation check's energy readings cost (issue 12).

A relaxation check runs 64 auxiliary chains for ``2 s`` sweeps and reads each chain's energy
about 8 times per doubling of the sweeps (:func:`pymc_knn.kernels.mcmc.is_checkpoint`). On a
d-nn table an energy reads every entry, where a Swendsen-Wang sweep probes a few a row. This
script prints, on a data set of ``bench_defaults.py`` at ``(beta, sigma)``:

* an energy alone (:func:`pymc_knn.kernels.structure.rows_energy`) and per column of one pass
  over 64 and 256 labellings (:func:`~pymc_knn.kernels.structure.rows_energy_columns`), as
  sweeps of the auxiliary draw;
* a check's chains (64 chains, ``2 s`` sweeps, read from ``s // 2`` as the step reads them)
  with their readings and without (the sweeps alone), for ``s`` in ``--sweeps``.

Best of ``--repeat``; one thread (``NUMBA_NUM_THREADS=1``: the fits' chains run one a core)::

    NUMBA_NUM_THREADS=1 PYTHONPATH=.:benchmarks python benchmarks/bench_readings.py class20 \\
        exponential --beta 1.44 --sigma 5.37
"""

from __future__ import annotations

import argparse
import platform

import numpy as np

import pymc_knn as pk
from pymc_knn.kernels import mcmc
from pymc_knn.kernels.structure import rows_energy_columns

from bench_defaults import build, load
from bench_iteration import best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model", choices=("gaussian", "exponential", "ball"))
    parser.add_argument("--beta", type=float, required=True)
    parser.add_argument("--sigma", type=float, required=True)
    parser.add_argument("--sweeps", nargs="+", type=int, default=[10, 20, 40])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange()
    f, aux, beta, sigma = step.field, step.aux, args.beta, args.sigma
    c = mcmc.coupling(f, sigma, False)
    rng = np.random.default_rng(0)
    z = f.y.astype(np.int64).copy()
    mcmc.auxiliary_draw(f, aux._replace(sweeps=1), c, beta, sigma, z, rng)  # compile
    mcmc._energy(f, c, z)
    mcmc.relaxation_sweeps(f, aux, beta, sigma, *mcmc.relaxation_state(f, 1, 1), 0, 2, 0, rng)
    sweep = (
        best(
            lambda: mcmc.auxiliary_draw(f, aux._replace(sweeps=100), c, beta, sigma, z, rng),
            args.repeat,
        )
        / 100
    )
    alone = best(lambda: mcmc._energy(f, c, z), args.repeat)
    print(
        f"{platform.machine()}, {args.data} {args.model}, beta {beta}, sigma {sigma}: "
        f"{f.order.size:,} entries, rows ending at {c[10].mean():.0f} on average"
    )
    print(
        f"a sweep {sweep * 1e6:.0f} us; an energy alone {alone * 1e6:.0f} us ({alone / sweep:.1f} sweeps)"
    )
    for m in (64, 256):
        Z = rng.integers(0, f.class_weights.size, (f.y.size, m)).astype(np.int8)
        args_m = (f.order, c[7], c[10], c[9], Z, m, f.class_weights)
        rows_energy_columns(*args_m)
        t = best(lambda: rows_energy_columns(*args_m), args.repeat)
        print(f"  {m} in one pass: {t / m * 1e6:.0f} us each ({alone / (t / m):.1f} times faster)")
    print("| sweeps s | check with readings | sweeps alone | readings' share |")
    print("|---|---|---|---|")
    for s in args.sweeps:

        def check(first):
            labels, energies = mcmc.relaxation_state(f, 64, s)
            mcmc.relaxation_sweeps(f, aux, beta, sigma, labels, energies, 0, 2 * s, first, rng)

        read = best(lambda: check(s // 2), args.repeat)
        unread = best(lambda: check(2 * s + 1), args.repeat)
        print(f"| {s} | {read * 1e3:.0f} ms | {unread * 1e3:.0f} ms | {1 - unread / read:.2f} |")


if __name__ == "__main__":
    main()
