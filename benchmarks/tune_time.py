"""One chain a row and seed: where PyMC's 1000 tuning draws and the 1000 draws after spend time.

``pm.sample(tune=1000, draws=1000, chains=1, cores=1)`` on ``bench_defaults.py`` rows, with the
step PyMC assigns or, given ``--exchange`` (JSON), ``pk.Exchange(**kwargs)``, after a run of a
first adaptation window that compiles the kernels (the relaxation checks' too). One JSON line a
fit: the tuning's and the draws' seconds (``tune_s``, ``draws_s``: split at the last tuning draw
by PyMC's callback), the iterations a draw, the final sweeps and, per phase (``tuning``,
``draws``), the wall split into

* ``kernel``: inside :func:`pymc_knn.kernels.mcmc.run_iterations` (the iterations), with the
  iterations it ran and the milliseconds each;
* ``checks``: inside :func:`~pymc_knn.kernels.mcmc.relaxation_sweeps` (the auxiliary sweeps'
  relaxation checks) and the tuned start's draws (:func:`~pymc_knn.kernels.mcmc.auxiliary_draw`
  called from Python);
* ``setup``: ``pm.sample`` before the first draw (the model's functions compiled, the step
  built), counted in the tuning's wall;
* ``rest``: PyMC's per-draw machinery and the adaptation in Python;

and ``noise_pairs`` (graph moves that drew a second auxiliary term to measure the exchange
ratio's noise, which the bridging is tuned from) and the bridging fields an iteration.

    PYTHONPATH=.:benchmarks python benchmarks/tune_time.py shells3:exponential --seeds 1
    PYTHONPATH=.:benchmarks python benchmarks/tune_time.py ripley:symmetrised ripley:gaussian \
        --seeds 1 2 3 --exchange '{"bridge": 4}'
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pymc as pm

import pymc_knn as pk
from bench_defaults import build, load
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import FIRST_WINDOW

PHASES = ("tuning", "draws")
TIMED = (
    ("run_iterations", "kernel"),
    ("relaxation_sweeps", "checks"),
    ("auxiliary_draw", "checks"),
)


class Clock:
    """Seconds inside the kernels the step calls from Python, by phase (patched into
    :mod:`pymc_knn.kernels.mcmc` while a fit runs)."""

    def __init__(self):
        self.phase = "tuning"
        self.seconds = {(p, w): 0.0 for p in PHASES for w in ("kernel", "checks")}
        self.iterations = dict.fromkeys(PHASES, 0)
        self.noise_pairs = dict.fromkeys(PHASES, 0)
        self.stamps = []
        self.first_draw = 0.0  # the kernels' seconds in the first draw

    def timed(self, name, what):
        inner = getattr(mcmc, name)

        def call(*args):
            t0 = time.perf_counter()
            out = inner(*args)
            self.seconds[self.phase, what] += time.perf_counter() - t0
            if name == "run_iterations":
                self.iterations[self.phase] += args[8]
                self.noise_pairs[self.phase] += int(np.isfinite(args[13][:, 0]).sum())
            return out

        return call

    def callback(self, trace, draw):
        self.stamps.append(time.perf_counter())
        if len(self.stamps) == 1:
            self.first_draw = self.seconds["tuning", "kernel"] + self.seconds["tuning", "checks"]
        if not draw.tuning or len(self.stamps) == 1000:
            self.phase = "draws"


def timed(seed, kwargs) -> dict:
    """One chain's tuning and draws, in seconds, and where they went."""
    clock = Clock()
    kept = {name: getattr(mcmc, name) for name, _ in TIMED}
    step = {} if kwargs is None else {"step": pk.Exchange(**kwargs)}
    try:
        for name, what in TIMED:
            setattr(mcmc, name, clock.timed(name, what))
        start = time.perf_counter()
        idata = pm.sample(
            tune=1000,
            draws=1000,
            chains=1,
            cores=1,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
            discard_tuned_samples=False,
            callback=clock.callback,
            **step,
        )
    finally:
        for name, inner in kept.items():
            setattr(mcmc, name, inner)
    stamps = clock.stamps
    walls = {"tuning": stamps[999] - start, "draws": stamps[-1] - stamps[999]}
    setup = {"tuning": stamps[0] - start - clock.first_draw, "draws": 0.0}
    fit = {
        "tune_s": round(walls["tuning"], 2),
        "draws_s": round(walls["draws"], 2),
        "iterations": float(idata.sample_stats.iterations.mean()),
        "sweeps": float(idata.sample_stats.aux_sweeps.values[0, -1]),
    }
    for phase, stats in zip(PHASES, (idata.warmup_sample_stats, idata.sample_stats)):
        kernel = clock.seconds[phase, "kernel"]
        checks = clock.seconds[phase, "checks"]
        iterations = clock.iterations[phase]
        fit[phase] = {
            "kernel": round(kernel, 2),
            "checks": round(checks, 2),
            "setup": round(setup[phase], 2),
            "rest": round(walls[phase] - kernel - checks - setup[phase], 2),
            "iterations": iterations,
            "ms_per_iteration": round(1e3 * kernel / iterations, 3),
            "noise_pairs": clock.noise_pairs[phase],
            "bridging_fields_per_iteration": round(
                float(stats.bridge_sweeps.values.sum()) / iterations, 2
            ),
            "sweeps": float(stats.aux_sweeps.values.mean()),
        }
    return fit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+", metavar="DATA:MODEL")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--exchange", type=json.loads, default=None, metavar="JSON")
    args = parser.parse_args()
    for row in args.rows:
        data, model = row.split(":")
        X, y = load(data)
        with build(X, y, model):
            # a first window closes: its relaxation check compiles here, not in the fits
            pm.sample(tune=FIRST_WINDOW + 10, draws=2, chains=1, progressbar=False, random_seed=0)
            for seed in args.seeds:
                fit = {"data": data, "model": model, "seed": seed, **timed(seed, args.exchange)}
                print(json.dumps(fit), flush=True)


if __name__ == "__main__":
    main()
