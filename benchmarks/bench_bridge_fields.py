"""Cost of one bridging field of a ``sigma`` or ``k`` move (issue 12).

A bridged ``sigma`` move carries its auxiliary draw through fields whose running sums mix the
couplings at both ``sigma`` (:func:`pymc_knn.kernels.mcmc.bridged_log_ratio_rows`). Each field
costs the energies of both couplings and its Swendsen-Wang sweeps through the mix, whose sums are
either written out first or read where the sweep's events fall (``written_row`` entries a row
on average decide; the draws are the same either way). The fields' energies are computed in one
pass for all of them (``held``, the default) or a pass a field (``alone``, ``hold_bytes=0``), the
same energies either way. For each ``data:kernel:sigma0:sigma1:beta`` this prints the rows'
entries and the time of a field each way (best of 7 runs of 60 fields, less the run with none),
with the couplings, one energy and one auxiliary sweep beside them; for ``data:symmetrised:k0:k1:
beta`` (or ``equal``) the time of a kNN field (:func:`pymc_knn.kernels.mcmc.bridged_log_ratio`:
one sweep of the union of both graphs and the equal pairs of each) held and alone::

    PYTHONPATH=.:benchmarks python benchmarks/bench_bridge_fields.py \\
        glass:ball:1.3:1.5:1.5 ripley:gaussian:0.2:0.22:1.5 class20:gaussian:0.9:0.95:1.4 \\
        ripley:symmetrised:17:22:1.47 blobs4:equal:7:8:3.27
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


def per_field(run):
    """The time of one field of ``run(fields)``: best of ``REPEAT`` runs of ``FIELDS``, less the
    best of runs of none."""
    run(2)
    return (best(lambda: run(FIELDS), REPEAT) - best(lambda: run(0), REPEAT)) / FIELDS


def measure_knn(data, neighbours, k0, k1, beta):
    X, y = load(data)
    g = pk.KNNGraph(X, k_max=max(k0, k1), neighbours=neighbours)
    c0, c1 = ((c.src, c.dst, c.weight, c.uniform_weight) for c in map(g.coupling, (k0, k1)))
    a = np.ones(int(y.max()) + 1)
    z = y.astype(np.int64).copy()
    rng = np.random.default_rng(0)
    nested = neighbours == "symmetrised"
    times = {}
    for name, hold in (("held", mcmc.READING_BYTES), ("alone", 0)):

        def run(fields, hold=hold):
            mcmc.bridged_log_ratio(
                c0, c1, beta, beta, z, fields, a, rng, np.nan, np.nan, nested, hold
            )

        times[name] = per_field(run)
    print(
        f"{data:8s} {neighbours:11s} k {k0} -> {k1} | field held {times['held'] * 1e6:6.1f} us, "
        f"alone {times['alone'] * 1e6:6.1f} us ({times['held'] / times['alone']:.2f})"
    )


def measure(spec):
    data, kernel, s0, s1, beta = spec.split(":")
    if kernel in ("symmetrised", "equal"):
        return measure_knn(data, kernel, int(s0), int(s1), float(beta))
    s0, s1, beta = float(s0), float(s1), float(beta)
    X, y = load(data)
    with build(X, y, kernel):
        step = pk.Exchange()
    f = step.field
    c0, c1 = mcmc.coupling(f, s0, False), mcmc.coupling(f, s1, False)
    z = y.astype(np.int64).copy()
    rng = np.random.default_rng(0)
    entries = int(np.maximum(c0[10], c1[10]).sum())
    times = {}
    for name, written_row in (("written", 1 << 40), ("in place", 0)):
        for held, hold in (("held", mcmc.READING_BYTES), ("alone", 0)):

            def run(fields, written_row=written_row, hold=hold):
                mcmc.bridged_log_ratio_rows(
                    f,
                    c0,
                    c1,
                    beta,
                    beta,
                    z,
                    fields,
                    rng,
                    np.nan,
                    np.nan,
                    written_row,
                    mcmc.FIELD_ROW_SWEEP,
                    hold,
                )

            times[name, held] = per_field(run)
    t_coupling = best(lambda: mcmc.coupling(f, s1, False), REPEAT)
    t_energy = best(lambda: mcmc._energy(f, c0, z), REPEAT)
    t_sweep = best(lambda: mcmc._sweeps(f, step.aux, c1, beta, z, 10, rng), REPEAT) / 10
    chosen = "in place" if entries > mcmc.WRITTEN_ROW * y.size else "written"
    fields = ", ".join(f"{name} {held} {t * 1e3:.4f}" for (name, held), t in times.items())
    print(
        f"{data:8s} {kernel:11s} {entries / y.size:6.1f} entries a row, "
        f"{mcmc.field_sweeps(c0[10], c1[10])} sweeps a field | field (ms): {fields} "
        f"(default: {chosen}, held) | coupling {t_coupling * 1e3:.3f} ms, energy "
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
