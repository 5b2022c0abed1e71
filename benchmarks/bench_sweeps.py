"""What one auxiliary sweep and one energy cost, through the step methods' own kernel path.

``dnn``: a Swendsen-Wang sweep of the d-nn field of the shipped data's ball and gaussian
kernels, at their posterior's ``(beta, sigma)``, as ``pm.sample`` runs it (``mcmc._sweeps`` on
the field of a ``pk.Exchange`` step), an energy, and a coupling at a sigma 1% away.
``locality``: on the ``k = 50`` graph of ``n`` 2-d (or 10-d) Gaussian points
(``bench_scale.data``), a sweep and an energy of the step's field, in the data's order and as
the step numbers it (breadth first from ``LOCALITY_POINTS`` points on), and an exchange
iteration of the step's kernel with 28 sweeps an auxiliary draw (what the relaxation check
chose at 10^5 points), averaged over 10 iterations of one call at beta 1.34, ``k = 50``.
``table``: the d-nn gaussian field of 10^4 2-d points (``bench_scale.data``, ``drop_tol = 1e-6``,
the kept table widened to cover sigma 0.285, as the 10^4 row of ``bench_scale.py`` widens it):
a coupling at sigma, an energy and a sweep at beta 1.4, at sigma 0.12 (the posterior's) and 0.17,
and what an exchange iteration of 14 sweeps costs from them when half the moves are sigma's
(14 sweeps, 1.5 energies and half a coupling); on one thread and, where the field has the
``parallel`` flag, on numba's thread pool.

The script runs on older commits too (where the field has no renumbering), so a change is
measured by running it on both, one after the other, on a quiet machine::

    PYTHONPATH=. python benchmarks/bench_sweeps.py dnn locality table
    git worktree add /tmp/before <commit>; PYTHONPATH=/tmp/before python benchmarks/bench_sweeps.py dnn

Clear numba's cache first (``make clean-numba``): it does not notice a changed kernel inside a
cached caller.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numba
import numpy as np
import pymc as pm

import pymc_knn as pk
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods import _steps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import build, load
from bench_scale import data, dnn_likelihood

DNN_CASES = [  # data, kernel, beta, sigma: near each posterior's mean (pm.sample, seed 2)
    ("glass", "ball", 1.64, 1.27),
    ("crabs", "ball", 2.42, 0.31),
    ("glass", "gaussian", 1.75, 0.39),
    ("ripley", "gaussian", 1.5, 0.22),
]
LOCALITY_CASES = [(2 * 10**4, 2), (5 * 10**4, 2), (10**5, 2), (10**5, 10), (10**6, 2)]
K, BETA = 50, 1.34


def per_call(fn, seconds=2.0):
    """Seconds per call of ``fn``: the best of three batches of about ``seconds`` each."""
    fn()
    t0 = time.perf_counter()
    fn()
    reps = max(1, int(seconds / max(time.perf_counter() - t0, 1e-9)))
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def sweep_and_energy(step, theta, beta, sweeps):
    f = step.field
    aux = mcmc.Auxiliary(
        mcmc.EXCHANGE,
        mcmc.SWENDSEN_WANG,
        sweeps,
        mcmc.START_OBSERVED,
        1024,
        mcmc.no_start_labels(f.class_weights.size),
        mcmc.NO_BETAS,
        mcmc.NO_THETAS,
    )
    c = mcmc.coupling(f, theta, False)
    z = f.y.copy()
    rng = np.random.default_rng(0)
    mcmc._sweeps(f, aux, c, beta, z, 20, rng)  # toward the field's law at beta
    sweep = per_call(lambda: mcmc._sweeps(f, aux, c, beta, z, sweeps, rng)) / sweeps
    energy = per_call(lambda: mcmc._energy(f, c, z))
    return sweep, energy


def dnn():
    print("| data | kernel | beta, sigma | sweep (us) | energy (us) | coupling (us) |")
    print("|---|---|---|---|---|---|")
    for name, kernel, beta, sigma in DNN_CASES:
        X, y = load(name)
        with build(X, y, kernel):
            step = pk.Exchange()
        sweep, energy = sweep_and_energy(step, sigma, beta, 200)
        c = mcmc.coupling(step.field, sigma, False)
        new = per_call(
            lambda: mcmc.coupling_into(step.field, 1.01 * sigma, False, c[7], c[9], c[10])
        )
        print(
            f"| {name} | {kernel} | {beta}, {sigma} | {sweep * 1e6:.1f} | {energy * 1e6:.1f} "
            f"| {new * 1e6:.1f} |"
        )


def knn_step(n, p):
    from sklearn import config_context

    X, y = data(n, p)
    with config_context(working_memory=4096), pm.Model():  # 10^6 points: 1.2 GB of tables
        pk.PottsKNN(
            "y", X=X, beta=pm.Uniform("beta", 0, 4), k=pm.DiscreteUniform("k", 1, K), observed=y
        )
        return pk.Exchange()


def iteration(step, sweeps=28, iterations=10):
    """Seconds per exchange iteration of the step's kernel (one call, ``iterations`` of them)."""
    x = step.layout.to_x({"beta_interval__": np.log(BETA / (4 - BETA)), "k": np.array(K)})
    p = step.chain.adaptation.proposal(step._free, step._graph, step._lower, step._upper)
    state = np.array(step.tractable.evaluate(x))
    aux = step.chain.aux._replace(sweeps=sweeps)
    none, rng = np.empty(0), np.random.default_rng(1)
    # the chain's couplings kept between calls (since 2026-11-26): a call builds its own
    cache = (mcmc.new_couplings(step.field),) if hasattr(mcmc, "new_couplings") else ()

    def run():
        mcmc.run_iterations(
            step.tractable.kernel_fn,
            x.copy(),
            state.copy(),
            step.field,
            aux,
            p,
            step.chain.z,
            step.chain.plug_in,
            iterations,
            np.empty((0, 4)),
            none,
            none,
            np.empty(0, dtype=np.int64),
            np.empty((0, 3)),
            rng,
            *cache,
        )

    return per_call(run, 1.0) / iterations


def table(n=10**4, cover=0.285, beta=1.4):
    X, y = data(n, 2)
    with pm.Model() as model:
        dnn_likelihood(X, y, 1e-6)
        model["y"].owner.op.term.graph.cover(cover)
        step = pk.Exchange()
    f = step.field
    aux = mcmc.Auxiliary(
        mcmc.EXCHANGE,
        mcmc.SWENDSEN_WANG,
        14,
        mcmc.START_OBSERVED,
        1024,
        mcmc.no_start_labels(f.class_weights.size),
        mcmc.NO_BETAS,
        mcmc.NO_THETAS,
    )
    print(
        f"width {f.sorted_sq.shape[1]}\n| sigma | threads | coupling (ms) | energy (ms) |"
        " sweep (ms) | iteration (ms) |\n|---|---|---|---|---|---|"
    )
    # where the field has the flag, its couplings and energies on one thread and on the pool
    variants = [(1, f)]
    if "parallel" in f._fields:
        variants = [
            (1, f._replace(parallel=False)),
            (numba.get_num_threads(), f._replace(parallel=True)),
        ]
    for sigma in (0.12, 0.17):
        for threads, g in variants:
            coupling = per_call(lambda g=g: mcmc.coupling(g, sigma, False))
            c = mcmc.coupling(g, sigma, False)
            z, rng = g.y.copy(), np.random.default_rng(0)
            mcmc._sweeps(g, aux, c, beta, z, 20, rng)
            sweep = (
                per_call(lambda g=g, c=c, z=z, rng=rng: mcmc._sweeps(g, aux, c, beta, z, 14, rng))
                / 14
            )
            energy = per_call(lambda g=g, c=c, z=z: mcmc._energy(g, c, z))
            it = 14 * sweep + 1.5 * energy + 0.5 * coupling
            print(
                f"| {sigma} | {threads} | {coupling * 1e3:.0f} | {energy * 1e3:.1f} |"
                f" {sweep * 1e3:.2f} | {it * 1e3:.0f} |"
            )


def locality():
    renumbers = hasattr(_steps, "LOCALITY_POINTS")
    print(
        "| points | p | sweep, data's order (ms) | sweep, the step's (ms) | energy, data's order"
        " (ms) | energy, the step's (ms) | iteration, data's order (ms) | iteration, the step's"
        " (ms) |\n|---|---|---|---|---|---|---|---|"
    )
    for n, p in LOCALITY_CASES:
        cells = []
        for own in (True, False):
            if renumbers:
                _steps.LOCALITY_POINTS = 10**12 if own else 5 * 10**4
            step = knn_step(n, p)
            cells.append((*sweep_and_energy(step, K, BETA, 5), iteration(step)))
        (s0, e0, i0), (s1, e1, i1) = cells
        print(
            f"| {n:.0e} | {p} | {s0 * 1e3:.2f} | {s1 * 1e3:.2f} | {e0 * 1e3:.2f} | {e1 * 1e3:.2f}"
            f" | {i0 * 1e3:.0f} | {i1 * 1e3:.0f} |"
        )


if __name__ == "__main__":
    for part in sys.argv[1:] or ("dnn", "locality"):
        {"dnn": dnn, "locality": locality, "table": table}[part]()
