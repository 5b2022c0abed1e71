"""The demo: Ripley's training set, its kNN graph, and draws of the Potts field with each sampler.

Run ``python -m pymc_knn demo``. It prints, for the plug-in values of Cucala et al. (2009)
(``beta = 1.45, k = 13``), the energy and class balance of draws by Gibbs, Swendsen-Wang and
coupling from the past next to the observed labels, the mean energy ``E_beta[E(y)]`` over a beta
grid for k = 1, 13 and 125 (the curve of their Fig. 5, whose flattening at 1 shows where the
field freezes, i.e. ``beta_max``: see :mod:`pymc_knn.phase`), and writes ``ripley_potts.png``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from . import datasets
from .graphs import KNNGraph
from .phase import mean_energy_curve
from .samplers import cftp, gibbs, swendsen_wang


def run_demo(out: str = "demo-output", seed: int = 2009) -> None:
    rng = np.random.default_rng(seed)
    X, y, features, classes = datasets.load_ripley("train")
    t0 = time.perf_counter()
    graph = KNNGraph(X, k_max=125)
    print(f"Ripley training set: n = {graph.n_points} points, {graph.n_features} covariates, "
          f"classes {classes} with counts {np.bincount(y).tolist()}")
    print(f"kNN graph for k = 1..{graph.k_max} built in {time.perf_counter() - t0:.2f} s "
          "(standardised covariates, Euclidean distance, ties to the lower index)")

    beta, k = 1.45, 13
    c = graph.coupling(k)
    e_obs = c.energy(y)
    print(f"\nPotts field at beta = {beta}, k = {k} (the plug-in values of Cucala et al. 2009):")
    print(f"  observed labels: E(y) = {e_obs:7.2f}  (E/n = {e_obs / graph.n_points:.3f}; "
          f"the maximum, all labels equal, is {c.weight.sum():.0f})")
    draws = {
        "Gibbs, 500 sweeps from y": lambda: gibbs(c, beta, y, 2, rng, sweeps=500),
        "Swendsen-Wang, 100 sweeps from y": lambda: swendsen_wang(c, beta, y, 2, rng, sweeps=100),
    }
    for name, draw in draws.items():
        t0 = time.perf_counter()
        z = draw()
        dt = time.perf_counter() - t0
        print(f"  {name:34s}: E = {c.energy(z):7.2f}, class 1 share {z.mean():.2f}, "
              f"agrees with y on {np.mean(z == y):.0%}  ({dt * 1e3:.1f} ms)")
    t0 = time.perf_counter()
    d = cftp(c, beta, y, rng)
    dt = time.perf_counter() - t0
    status = f"exact, coalesced from {d.sweeps} sweeps back" if d.exact else "NOT coalesced: approximate"
    print(f"  {'coupling from the past':34s}: E = {c.energy(d.labels):7.2f}, class 1 share "
          f"{d.labels.mean():.2f}, agrees with y on {np.mean(d.labels == y):.0%}  ({dt * 1e3:.1f} ms, {status})")

    betas = np.linspace(0.0, 4.0, 17)
    curves = {kk: mean_energy_curve(graph, kk, betas, random_seed=rng).values
              for kk in (1, 13, 125)}
    print("\nMean energy per point E_beta[E(y)]/n by Swendsen-Wang (it rises to 1 as the field "
          "freezes;\npymc_knn.beta_max finds where):")
    print("  beta  " + "  ".join(f"k={kk:<4d}" for kk in curves))
    for b, row in zip(betas, zip(*curves.values())):
        print(f"  {b:4.2f}  " + "  ".join(f"{v:6.3f}" for v in row))
    _plot(Path(out), X, y, d.labels, betas, curves, beta, k)


def _plot(out: Path, X, y, z, betas, curves, beta, k) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, labels, title in [(axes[0], y, "observed labels"),
                              (axes[1], z, f"exact draw, beta = {beta}, k = {k}")]:
        for g, colour in [(0, "black"), (1, "tab:red")]:
            ax.scatter(*X[labels == g].T, s=12, c=colour, label=f"class {g}")
        ax.set(title=f"Ripley training set: {title}", xlabel="xs", ylabel="ys")
        ax.legend(loc="upper left")
    for kk, curve in curves.items():
        axes[2].plot(betas, curve, marker="o", label=f"k = {kk}")
    axes[2].set(title="Mean energy per point (000 Fig. 5)", xlabel="beta", ylabel="E_beta[E(y)] / n")
    axes[2].legend()
    fig.tight_layout()
    path = out / "ripley_potts.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"\nwrote {path}")
