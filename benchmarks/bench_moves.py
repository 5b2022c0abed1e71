"""Each move type's acceptance and the chain's integrated time per iteration, after tuning.

One chain of ``pm.sample`` tunes ``pk.Exchange`` (PyMC's 1000 tuning draws, the docs' priors of
``bench_defaults.py``); then, from the chain's last position and with its tuned proposal, the
iteration kernel runs ``--iterations`` iterations once for each variant of the long-range
graph move: ``wide`` (radius or sd four times the tuned one) or ``jump`` (drawn from the density
fitted to the tuning draws), each as the given share of graph moves, without beta jumps;
``beta``: graph jumps as tuned, and the given share of beta moves beta jumps; ``both``: the
given share of graph moves jumps and of beta moves beta jumps; ``graph``: the given share of
the iterations graph moves, the rest as tuned; ``time``: graph moves take the given share of
the time (by the tuning's estimate of their cost: ``Adaptation._graph_share``) where the
balanced share applies (everywhere, or at the chain's home), the rest as tuned; ``bridge``: the bridging's fields a unit of a
move's size everywhere (``bridge_unit``, the tuned regions' units dropped; 0 bridges
nothing), the rest as tuned; or ``tuned`` (its share ignored): all as tuned. Printed per
variant: the share and acceptance of each move type, the integrated autocorrelation time (Geyer) per iteration of beta,
of ``k`` or ``sigma`` and of their 5% and 95% tail indicators, the time per iteration and the
effective draws per second that the largest of those times leaves.

    python benchmarks/bench_moves.py wine ball --variants wide:0.25 jump:0.25 jump:0.5 jump:0.75
    python benchmarks/bench_moves.py pima symmetrised --variants jump:0.5 beta:0.5 beta:0.75
    python benchmarks/bench_moves.py glass gaussian --iterations 20000 --variants both:0.5 both:0.9
    python benchmarks/bench_moves.py apart gaussian --iterations 20000 --variants graph:0.15
    python benchmarks/bench_moves.py apart gaussian --iterations 20000 --variants tuned:0 bridge:0
    python benchmarks/bench_moves.py apart gaussian --iterations 20000 --variants tuned:0 graph:0.3 graph:0.5
    python benchmarks/bench_moves.py hastie ball --iterations 10000 --variants tuned:0 graph:0.2 graph:0.35
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pymc as pm

import pymc_knn as pk
from bench_defaults import KNN, build, load
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import integrated_time

MOVES = {
    mcmc.BETA_MOVE: "beta",
    mcmc.GRAPH_MOVE: "graph",
    mcmc.WIDE_MOVE: "wide",
    mcmc.JUMP_MOVE: "jump",
    mcmc.BETA_JUMP: "beta jump",
    mcmc.NULL_MOVE: "null",
    mcmc.PLATEAU_MOVE: "plateau",
}


def tuned_step(data, model, seed):
    """A model and its Exchange step after PyMC's default tuning, and the chain's last point."""
    X, y = load(data)
    m = build(X, y, model)
    with m:
        step = pk.Exchange()
        idata = pm.sample(
            draws=1,
            tune=1000,
            chains=1,
            cores=1,
            step=step,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
    last = {v: idata.posterior[v].values[0, -1] for v in idata.posterior.data_vars}
    b = float(last["beta"])
    if model in KNN:
        point = {"beta_interval__": np.log(b / (4 - b)), "k": last["k"]}
    else:
        s = float(last["sigma"])
        point = {"beta_log__": np.log(b), "sigma_interval__": np.log(s / (100 - s))}
    return step, step.layout.to_x({k: np.asarray(v) for k, v in point.items()})


def iterate(step, x, p, iterations, seed):
    """``iterations`` of the step's iteration kernel with proposal ``p`` from ``x``: the trace
    (beta, ``k`` or ``sigma``, the coordinates), each iteration's acceptance and move type."""
    return step._recorded(x, p, iterations, np.random.default_rng(seed))[:3]


def run(step, x, variant, share, iterations, seed):
    p = step.chain.adaptation.proposal(step._free, step._graph, step._lower, step._upper)
    if variant == "tuned":
        pass
    elif variant == "graph":  # the share of graph moves; the rest as tuned
        p = p._replace(p_graph=share, p_futile=share if p.p_futile == p.p_graph else p.p_futile)
    elif variant == "time":  # graph moves take the share of the time where the balanced applies
        a = step.chain.adaptation
        q = a._graph_share(share)
        if a.futile_at.size:  # futile where the chain sits: as tuned
            pass
        elif a.home_at.size:
            p = p._replace(p_futile=q)
        else:
            p = p._replace(p_graph=q, p_futile=q)
    elif variant == "bridge":  # the noise a unit of size that sets the fields (0: unbridged)
        p = p._replace(bridge_unit=share, bridge_units=np.zeros(0))
    elif variant == "beta":
        p = p._replace(p_beta_jump=share)
    elif variant == "both":
        p = p._replace(p_wide=share, p_beta_jump=share)
    else:
        p = p._replace(p_wide=share, p_beta_jump=0.0)
    if variant == "wide":
        p = p._replace(jump=np.zeros((p.jump.shape[0], 0, 3)))
    t0 = time.perf_counter()
    trace, accept, move = iterate(step, x, p, iterations, seed)
    wall = time.perf_counter() - t0
    moves = ", ".join(
        f"{name} {np.mean(move == kind):.2f} (acc {accept[move == kind].mean():.2f})"
        for kind, name in MOVES.items()
        if np.any(move == kind)
    )
    taus = []
    for v in trace[:, :2].T:
        low, high = np.quantile(v, [0.05, 0.95])
        taus.append([integrated_time(s) for s in (v, v <= low, v <= high)])
    print(
        f"{variant}:{share} | {moves} | "
        + " | ".join(
            f"{name} {t[0]:.1f} (tails {t[1]:.1f}, {t[2]:.1f})"
            for name, t in zip(("beta", "theta"), taus)
        )
        + f" | {wall / iterations * 1e6:.0f} us/iteration"
        + f" | {iterations / (np.nanmax(taus) * wall):.1f} effective draws/s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=40000)
    parser.add_argument("--variants", nargs="+", default=["wide:0.25", "jump:0.5"])
    args = parser.parse_args()
    step, x = tuned_step(args.data, args.model, args.seed)
    a = step.chain.adaptation
    print(
        f"{args.data} {args.model} seed {args.seed}: tuned iterations/draw {a.iterations}, "
        f"auxiliary sweeps {step.chain.aux.sweeps}, graph share {a.p_graph:.2f}, bridging's "
        f"fields + 1 per unit of size {a.bridge_unit:.1f} (regions {np.round(a.bridge_units, 1)}); "
        "integrated times per iteration below"
    )
    for variant in args.variants:
        name, share = variant.split(":")
        run(step, x, name, float(share), args.iterations, args.seed)


if __name__ == "__main__":
    main()
