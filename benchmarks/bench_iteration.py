"""Cost of one exchange iteration against one auxiliary draw, measured in the same run (issue 12).

Ripley's training set (250 points, standardised), ``beta ~ U(0, 4)``, ``k ~ U{1..125}`` (or
``--model gaussian|exponential|ball``: ``sigma ~ U(0, 100)``), the default step (``pk.Exchange``:
Swendsen-Wang from the observed labels, its sweeps tuned). The chain is
first run to the posterior (one ``pm.sample`` tuning); then, best of ``--repeat``:

* ``iteration``: ``run_iterations`` for ``--iterations`` iterations (proposal, couplings at a
  proposed k, the auxiliary draw, energies, the ratio and the accept), per iteration;
* ``per sweep``: the iteration's time over the sweeps it does (its auxiliary draw's and those
  through bridging fields), against a sweep of the auxiliary draw: what the iteration costs
  beyond its sampling;
* ``aux draw``: the auxiliary draw alone (``auxiliary_draw`` in a numba loop at the chain's
  ``(beta, k)``), per draw;
* the iteration again with beta moves only, graph moves only (bridged as tuned, and not), and
  the default mix without bridging: what each kind of move costs beyond its auxiliary draw;
* ``pm.sample``: PyMC's sampling time of a whole run (1000 tuning draws and 1000 draws, one
  chain) over the iterations it ran: PyMC's per-draw machinery and the tuning included.

    python benchmarks/bench_iteration.py
    python benchmarks/bench_iteration.py --method moller
    python benchmarks/bench_iteration.py --model gaussian --iterations 1000
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import pymc as pm
from numba import njit

import pymc_knn as pk
from pymc_knn.kernels import mcmc

import bench_defaults


@njit(cache=True)
def _aux_loop(f, aux, c, beta, theta, z, n, rng):
    total = 0.0
    for _ in range(n):
        mcmc.auxiliary_draw(f, aux, c, beta, theta, z, rng)
        total += z[0]
    return total


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="exchange", choices=["exchange", "moller", "pseudo"])
    parser.add_argument(
        "--model",
        default="symmetrised",
        choices=["symmetrised", "equal", "gaussian", "exponential", "ball"],
    )
    parser.add_argument(
        "--data", default="ripley", help="a data set of bench_defaults.py (its priors)"
    )
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    knn = args.model in ("symmetrised", "equal")
    if args.data == "ripley":  # the issue's own priors
        X, y, *_ = pk.datasets.load_ripley("train")
        with pm.Model() as model:
            beta = pm.Uniform("beta", 0, 4)
            if knn:
                k = pm.DiscreteUniform("k", 1, 125)
                pk.PottsKNN("y", X=X, beta=beta, k=k, neighbours=args.model, observed=y)
            else:
                sigma = pm.Uniform("sigma", 0, 100)
                pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel=args.model, observed=y)
    else:
        X, y = bench_defaults.load(args.data)
        model = bench_defaults.build(X, y, args.model)
    with model:
        cls = {
            "exchange": pk.Exchange,
            "moller": pk.Moller,
            "pseudo": pk.PseudoLikelihoodMetropolis,
        }[args.method]
        step = cls()
        idata = pm.sample(
            draws=200,
            tune=1000,
            chains=1,
            cores=1,
            step=step,
            random_seed=1,
            progressbar=False,
            compute_convergence_checks=False,
        )
    its = int(idata.sample_stats["iterations"].values[0, 0])
    point = {}  # the last draw, on the value variables' (transformed) scale
    for rv in model.free_RVs:
        value = np.asarray(idata.posterior[rv.name].values[0, -1])
        transform = model.rvs_to_transforms[rv]
        if transform is not None:
            value = np.asarray(transform.forward(value, *rv.owner.inputs).eval())
        point[model.rvs_to_values[rv].name] = value
    x = step.layout.to_x(point)
    lp, b, theta = step.tractable.evaluate(x)
    chain = step.chain
    proposal = chain.adaptation.proposal(step._free, step._graph, step._lower, step._upper)
    rng = np.random.default_rng(0)
    empty = np.empty((0, 4)), np.empty(0), np.empty(0), np.empty(0, np.int64), np.empty((0, 3))

    def iterate(p=proposal):
        return mcmc.run_iterations(
            step.tractable.kernel_fn,
            x.copy(),
            np.array([lp, b, theta]),
            step.field,
            step.aux,
            p,
            chain.z,
            chain.plug_in,
            args.iterations,
            *empty,
            rng,
            mcmc.new_couplings(step.field),
        )

    c = mcmc.coupling(step.field, theta, False)
    z = y.astype(np.int64).copy()

    def aux_draws():
        _aux_loop(step.field, step.aux, c, b, theta, z, args.iterations, rng)

    out = iterate()
    aux_draws()
    # sweeps an iteration does: its auxiliary draw's and those through bridging fields
    sweeps = (out[3] + out[7]) / args.iterations
    t_it = best(iterate, args.repeat) / args.iterations
    t_aux = best(aux_draws, args.repeat) / args.iterations
    # the same iterations with one kind of move, and with the graph moves' bridging off
    unbridged = {"bridge": 0, "bridge_unit": 0.0}
    kinds = {
        "beta moves only": proposal._replace(p_graph=0.0),
        "graph moves only": proposal._replace(p_graph=1.0),
        "graph moves only, unbridged": proposal._replace(p_graph=1.0, **unbridged),
        "the default mix, unbridged": proposal._replace(**unbridged),
    }
    t_kinds = {
        name: best(lambda p=p: iterate(p), args.repeat) / args.iterations
        for name, p in kinds.items()
    }
    with model:
        run = pm.sample(
            draws=1000,
            tune=1000,
            chains=1,
            cores=1,
            step=step,
            random_seed=2,
            progressbar=False,
            compute_convergence_checks=False,
            discard_tuned_samples=False,
        )
    total = int(run.sample_stats["iterations"].sum() + run.warmup_sample_stats["iterations"].sum())
    t_per_iteration = run.sample_stats.attrs["sampling_time"] / total
    print(
        f"{platform.machine()}, {platform.python_version()}; {args.data}, {args.model}, "
        f"{args.method}, beta = {b:.3f}, theta = {theta:.4g}, {its} iterations per draw, scaling "
        f"{chain.adaptation.scale:.3f}, graph step {chain.adaptation.steps}"
    )
    print(f"auxiliary draw ({step.aux.sweeps} SW sweeps): {t_aux * 1e6:7.1f} us")
    print(f"iteration:                     {t_it * 1e6:7.1f} us   ratio {t_it / t_aux:.2f}")
    per_sweep = t_it / sweeps / (t_aux / step.aux.sweeps)
    print(
        f"  per sweep it does ({sweeps:.1f}, bridging's included): ratio {per_sweep:.2f} "
        "to a sweep of the auxiliary draw"
    )
    for name, t in t_kinds.items():
        print(f"  {name + ':':28s} {t * 1e6:7.1f} us   ratio {t / t_aux:.2f}")
    print(
        f"pm.sample, per iteration:      {t_per_iteration * 1e6:7.1f} us   ratio "
        f"{t_per_iteration / t_aux:.2f} (tuning and draws, {total} iterations)"
    )


if __name__ == "__main__":
    main()
