"""What each chain's tuning chose, and from what: the straggler chains of a bench_defaults row.

Runs PyMC's 1000 tuning draws of ``chains`` chains of a ``bench_defaults.py`` row in one process
(``cores=1``: the same draws as ``cores=2``) and, per chain, prints

* every relaxation check: the window's 95% quantile of beta and the ``k`` (the current one) or
  ``sigma`` (the window's at that beta) it ran at, the auxiliary sweeps before and after, the
  sweeps chains from the observed labels need, and the other frequent values of ``k`` also
  checked;
* at the end of tuning: the iterations per draw chosen, the rows they were chosen from, and the
  integrated time per iteration of each coordinate and of the indicators of its 5% and 95%
  tails (their largest sets the iterations: ``_adaptation.Adaptation.finish``), on the whole of
  those rows and on each half (a time that one half alone carries is an excursion's);
* the work the chain will do per draw, iterations x sweeps (the wall of 4 chains on 2 cores
  follows the two largest);
* with ``--excursion V``: the share of those rows whose graph coordinate (``k`` or ``sigma``,
  on PyMC's transformed scale) lies above ``V``, and the mean acceptance of each move type over
  all the tuning iterations that started above ``V`` and below it.

    PYTHONPATH=. .venv/bin/python benchmarks/trace_tuning.py glass ball --seed 1 --excursion -4.2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pymc as pm

from bench_defaults import build, load
from pymc_knn.kernels.mcmc import (
    BETA_JUMP,
    BETA_MOVE,
    GRAPH_MOVE,
    JUMP_MOVE,
    PLATEAU_MOVE,
    WIDE_MOVE,
)
from pymc_knn.step_methods import _adaptation, _steps

MOVES = {
    BETA_MOVE: "beta",
    BETA_JUMP: "beta jump",
    GRAPH_MOVE: "graph",
    WIDE_MOVE: "wide",
    JUMP_MOVE: "jump",
    PLATEAU_MOVE: "plateau",
}


class Recorder:
    """Wraps the step's hooks, keeping one record per chain (keyed by its adaptation, which the
    record holds, so that no later chain's can take its id)."""

    def __init__(self):
        self.chains = {}

    def chain(self, adaptation):
        return self.chains.setdefault(
            id(adaptation),
            {"adaptation": adaptation, "checks": [], "moves": [], "finish": None, "sweeps": None},
        )

    def install(self):
        observe, finish, relax = (
            _adaptation.Adaptation.observe,
            _adaptation.Adaptation.finish,
            _steps.PottsStep._relax,
        )
        rec = self

        def observe_(self, trace, accept, cap, move, noise, bridge_sweeps=0):
            rec.chain(self)["moves"].append((trace.copy(), accept.copy(), move.copy()))
            return observe(self, trace, accept, cap, move, noise, bridge_sweeps)

        def finish_(self):
            blocks = [b for b, _, _ in self._window]
            stale = self._last_rows is None or self._stale_last_window(blocks)
            rows = np.concatenate(blocks if stale else [self._last_rows, *blocks])
            finish(self)
            entry = rec.chain(self)
            entry["finish"] = (rows, self.iterations, self.tau)
            entry["sweeps"] = self.aux_sweeps

        def relax_(self, chain, beta, theta, *args):
            before = chain.aux.sweeps
            relax(self, chain, beta, theta, *args)
            a = chain.adaptation
            others = [v for v, _ in a.window_values if v != theta] if a.settled else []
            rec.chain(chain.adaptation)["checks"].append(
                (beta, theta, before, chain.aux.sweeps, chain.observed_sweeps, others)
            )

        _adaptation.Adaptation.observe = observe_
        _adaptation.Adaptation.finish = finish_
        _steps.PottsStep._relax = relax_


def taus(x):
    """Integrated times of a series and of its tail indicators (as ``Adaptation`` takes them)."""
    low, high = np.quantile(x, _adaptation.TAIL_PROBS)
    return [_adaptation.integrated_time(s) for s in (x, x <= low, x <= high)]


def report(i, entry, names, excursion):
    rows, iterations, tau = entry["finish"]
    print(f"chain {i}: {iterations:.2f} iterations a draw (tau {tau:.1f}, {len(rows)} rows)")
    for beta, theta, before, after, labels, others in entry["checks"]:
        also = f"; also at k {', '.join(f'{v:g}' for v in others)}" if others else ""
        print(
            f"  check at beta {beta:.3f}, theta {theta:.4g}: sweeps {before} -> {after}"
            f" (from the labels {labels}{also})"
        )
    print(f"  work per draw: {iterations * entry['sweeps']:.0f} sweeps")
    block = rows[:, 2:]
    half = len(block) // 2
    for name, x in zip(names, block.T):
        whole = np.round(taus(x), 1)
        halves = [np.round(taus(h), 1) for h in (x[:half], x[half:])]
        print(f"  {name}: bulk / 5% / 95% {whole}, halves {halves[0]} {halves[1]}")
    if excursion is None:
        return
    trace = np.concatenate([t for t, _, _ in entry["moves"]])
    accept = np.concatenate([a for _, a, _ in entry["moves"]])
    move = np.concatenate([m for _, _, m in entry["moves"]])
    graph = trace[:, -1]
    before = np.r_[graph[0], graph[:-1]] > excursion
    print(f"  above {excursion}: {np.mean(block[:, -1] > excursion):.1%} of the rows")
    for where, mask in (("above", before), ("below", ~before)):
        parts = [
            f"{MOVES[k]} {accept[mask & (move == k)].mean():.3f} ({np.sum(mask & (move == k))})"
            for k in MOVES
            if np.any(mask & (move == k))
        ]
        print(f"  acceptance from {where}: " + ", ".join(parts))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--excursion", type=float, default=None)
    args = parser.parse_args()
    X, y = load(args.data)
    model = build(X, y, args.model)
    rec = Recorder()
    rec.install()
    t0 = time.perf_counter()
    with model:
        pm.sample(
            draws=1,
            random_seed=args.seed,
            chains=args.chains,
            cores=1,
            progressbar=False,
            compute_convergence_checks=False,
        )
    print(f"{args.data} {args.model} seed {args.seed}: tuning {time.perf_counter() - t0:.0f} s")
    names = [v.name for v in model.free_RVs]
    names = ["beta"] + [n for n in names if n != "beta"]
    for i, entry in enumerate(rec.chains.values()):
        report(i, entry, names, args.excursion)


if __name__ == "__main__":
    main()
