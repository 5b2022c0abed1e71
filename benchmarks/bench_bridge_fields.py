"""Cost of one bridging field of a d-nn ``sigma`` move, written out or read in place (issue 12).

A bridged ``sigma`` move carries its auxiliary draw through fields whose running sums mix the
couplings at both ``sigma`` (:func:`pymc_knn.kernels.mcmc.bridged_log_ratio_rows`). Each field
costs the energies of both couplings and one Swendsen-Wang sweep through the mix, whose sums are
either written out first or read where the sweep's events fall (``written_row`` entries a row
on average decide; the draws are the same either way). For each ``data:kernel:sigma0:sigma1:beta``
this prints the rows' entries and the time of a field both ways (best of 7 runs of 60 fields,
less the run with none), with the couplings, one energy and one auxiliary sweep beside them::

    PYTHONPATH=.:benchmarks python benchmarks/bench_bridge_fields.py \\
        glass:ball:1.3:1.5:1.5 ripley:gaussian:0.2:0.22:1.5 class20:gaussian:0.9:0.95:1.4
"""

from __future__ import annotations

import argparse
import platform

import numpy as np

import pymc_knn as pk
from pymc_knn.kernels import mcmc

from bench_defaults import build, load
from bench_iteration import best

FIELDS = 60
REPEAT = 7


def measure(spec):
    data, kernel, s0, s1, beta = spec.split(":")
    s0, s1, beta = float(s0), float(s1), float(beta)
    X, y = load(data)
    with build(X, y, kernel):
        step = pk.Exchange()
    f = step.field
    c0, c1 = mcmc.coupling(f, s0, False), mcmc.coupling(f, s1, False)
    z = y.astype(np.int64).copy()
    rng = np.random.default_rng(0)
    entries = int(np.maximum(c0[10], c1[10]).sum())
    per_field = {}
    for name, written_row in (("written", 1 << 40), ("in place", 0)):

        def run(fields, written_row=written_row):
            mcmc.bridged_log_ratio_rows(
                f, c0, c1, beta, beta, z, fields, rng, np.nan, np.nan, written_row
            )

        run(2)
        per_field[name] = (
            best(lambda: run(FIELDS), REPEAT) - best(lambda: run(0), REPEAT)
        ) / FIELDS
    t_coupling = best(lambda: mcmc.coupling(f, s1, False), REPEAT)
    t_energy = best(lambda: mcmc._energy(f, c0, z), REPEAT)
    t_sweep = best(lambda: mcmc._sweeps(f, step.aux, c1, beta, z, 10, rng), REPEAT) / 10
    chosen = "in place" if entries > mcmc.WRITTEN_ROW * y.size else "written"
    print(
        f"{data:8s} {kernel:11s} {entries / y.size:6.1f} entries a row | field written "
        f"{per_field['written'] * 1e3:7.4f} ms, in place {per_field['in place'] * 1e3:7.4f} ms "
        f"(default: {chosen}) | coupling {t_coupling * 1e3:.3f} ms, energy "
        f"{t_energy * 1e3:.3f} ms, sweep {t_sweep * 1e3:.3f} ms"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", help="data:kernel:sigma0:sigma1:beta")
    args = parser.parse_args()
    print(f"{platform.machine()}, {platform.python_version()}")
    for spec in args.specs:
        measure(spec)


if __name__ == "__main__":
    main()
