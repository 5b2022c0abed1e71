"""What a PyMC user would do without this package: the pseudo-likelihood as a ``pm.Potential``.

The pseudo-likelihood of the symmetrised kNN model (Cucala et al. 2009, eq. 8, section 3.2) is
written directly in PyTensor and added with ``pm.Potential``; ``pm.sample`` then picks its default
samplers itself (NUTS for beta, Metropolis for k). It is compared with the package's own
``pk.PseudoLikelihoodMetropolis`` on the same pseudo-posterior. Ripley's training set, beta ~
Uniform(0, 4), k ~ DiscreteUniform(1, 125).

Run: ``python benchmarks/bench_potential.py [--draws 5000 --tune 2000] [--only potential|plm]``.
Before sampling, the PyTensor log pseudo-likelihood is checked against the package's numba
``log_pseudo_likelihood`` at a few (beta, k). Prints the step assignment, wall time of pm.sample
after a warm-up compile and its sampling loop alone (``sample_stats.attrs["sampling_time"]``,
after step compilation), the posterior, ESS (bulk) and ESS/s.
"""

from __future__ import annotations

import argparse
import time

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm
import pymc.sampling.mcmc as pm_mcmc
import pytensor
import pytensor.tensor as pt

import pymc_knn as pk
from pymc_knn.kernels import log_pseudo_likelihood

K_MAX = 125
CHECK_POINTS = ((0.5, 1), (1.0, 7), (1.447, 16), (2.28, 53), (1.8, 90), (3.9, 125))


def pytensor_log_pl(
    graph: pk.KNNGraph, y: np.ndarray, beta, k, n_classes: int = 2, impl: str = "dense"
):
    """Log pseudo-likelihood (eq. 8 of Cucala et al. 2009) as a PyTensor expression.

    The full conditional of ``y_i`` counts class ``g`` among ``i``'s ``k`` nearest (mask
    ``rank < k`` on the sorted list ``graph.neighbours``) and among the points ``j`` that have
    ``i`` among their ``k`` nearest. Mutual neighbours are therefore counted twice, as in eq. 3/4.

    impl:
      ``"dense"``     ``(n, n)`` rank matrix ``R``, ``A = (R < k) + (R < k).T``, ``h = A @ onehot``
                      (the default: the fastest of the three here, n = 250, no BLAS);
      ``"scatter"``   reverse counts by scattering row ``j``'s first ``k`` columns onto ``i``, one
                      1-D ``inc_subtensor`` per class (C implementation);
      ``"scatter2d"`` the same with one ``(n*K, G)`` ``inc_subtensor`` (a Python op in PyTensor:
                      several times slower per evaluation).
    """
    nb = graph.neighbours  # (n, K), nearest first
    n, K = nb.shape
    onehot = np.eye(n_classes)[y]  # (n, G)
    if impl == "dense":
        R = np.full((n, n), K, dtype=np.int64)
        R[np.arange(n)[:, None], nb] = np.arange(K)
        M = pt.lt(R, k).astype("float64")  # j in N_k(i)
        counts = pt.dot(M + M.T, onehot)
    else:
        mask = pt.lt(pt.arange(K), k).astype("float64")  # rank < k
        if impl == "scatter2d":
            fwd = (onehot[nb] * mask[None, :, None]).sum(axis=1)
            contrib = (mask[None, :, None] * onehot[:, None, :]).reshape((n * K, n_classes))
            counts = fwd + pt.zeros((n, n_classes))[nb.ravel()].inc(contrib)
        elif impl == "scatter":
            cols = []
            for g in range(n_classes):
                fwd = (onehot[:, g][nb] * mask).sum(axis=1)  # j in N_k(i)
                rev = pt.zeros(n)[nb.ravel()].inc((onehot[:, g][:, None] * mask).ravel())
                cols.append(fwd + rev)  # i in N_k(j)
            counts = pt.stack(cols, axis=1)
        else:
            raise ValueError(f"unknown impl {impl!r}")
    h = beta * counts / k  # (n, G)
    return (h[np.arange(n), y] - pt.logsumexp(h, axis=1)).sum()


def pytensor_log_pl_reverse_rank(graph: pk.KNNGraph, y: np.ndarray, beta, k, n_classes: int = 2):
    """The tempting shortcut: the reverse term from ``graph.reverse_rank < k`` on ``i``'s own list.

    ``reverse_rank[i, r]`` is the rank of ``i`` in the list of ``j = neighbours[i, r]``, so this
    finds only the ``j`` that are among ``i``'s ``k_max`` nearest. A ``j`` with ``i`` in its
    ``k``-neighbourhood but ``j`` beyond ``i``'s ``k_max``-th neighbour is missed. Kept to show
    the discrepancy in the check.
    """
    nb, rr = graph.neighbours, graph.reverse_rank
    n, K = nb.shape
    onehot_nb = np.eye(n_classes)[y][nb]  # (n, K, G)
    mask = pt.lt(pt.arange(K), k).astype("float64")
    fwd = (onehot_nb * mask[None, :, None]).sum(axis=1)
    rev = (onehot_nb * pt.lt(rr, k).astype("float64")[:, :, None]).sum(axis=1)
    h = beta * (fwd + rev) / k
    return (h[np.arange(n), y] - pt.logsumexp(h, axis=1)).sum()


IMPLS = ("dense", "scatter", "scatter2d")


def check(graph, y) -> None:
    """Every PyTensor log PL against the package's numba kernel (raises beyond 1e-8), and the
    reverse-rank shortcut; then the cost of one logp + dlogp/dbeta evaluation of each."""
    b, kk = pt.dscalar("beta"), pt.lscalar("k")
    fns = {impl: pm.compile([b, kk], pytensor_log_pl(graph, y, b, kk, impl=impl)) for impl in IMPLS}
    f_rr = pm.compile([b, kk], pytensor_log_pl_reverse_rank(graph, y, b, kk))
    a = np.ones(2)
    print(
        "log pseudo-likelihood: numba kernel; largest |PyTensor - numba| over "
        f"{'/'.join(IMPLS)}; reverse-rank shortcut"
    )
    for beta, k in CHECK_POINTS:
        c = graph.coupling(k)
        ref = log_pseudo_likelihood(c.indptr, c.indices, c.data, y, beta, a)
        diff = max(abs(float(f(beta, k)) - ref) for f in fns.values())
        short = float(f_rr(beta, k))
        print(
            f"  beta = {beta:5.3f} k = {k:3d}: numba {ref:12.6f}  max diff {diff:.1e}  "
            f"shortcut {short:12.6f} (diff {abs(short - ref):.1e})"
        )
        if diff > 1e-8:
            raise AssertionError(f"PyTensor and numba log PL differ at beta={beta}, k={k}")
    n, K = graph.neighbours.shape
    inlist = np.zeros((n, n), bool)
    inlist[np.arange(n)[:, None], graph.neighbours] = True
    # rank_ok[j, r]: j is in the list of its r-th neighbour i, so i's reverse_rank row sees j
    rank_ok = inlist[graph.neighbours, np.arange(n)[:, None]]
    first = next((k for k in range(1, K + 1) if not rank_ok[:, :k].all()), None)
    print(
        f"  reverse-rank shortcut first wrong at k = {first}; at k = {K} it misses "
        f"{int((~rank_ok).sum())} of {n * K} directed pairs"
    )
    for impl in IMPLS:
        e = pytensor_log_pl(graph, y, b, kk, impl=impl)
        f = pm.compile([b, kk], [e, pytensor.grad(e, b)])
        f(1.5, 16)
        reps = 500
        t0 = time.perf_counter()
        for _ in range(reps):
            f(1.5, 16)
        us = (time.perf_counter() - t0) / reps * 1e6
        print(f"  logp + dlogp/dbeta, impl={impl}: {us:.0f} us")


def pseudo_posterior_by_quadrature(graph, y, n_beta: int = 2000) -> None:
    """The pseudo-posterior itself, without MCMC: log PL on a beta grid for every k (numba)."""
    a = np.ones(2)
    K = graph.k_max
    betas = (np.arange(n_beta) + 0.5) * 4.0 / n_beta  # midpoints on (0, 4)
    L = np.empty((K, n_beta))
    for k in range(1, K + 1):
        c = graph.coupling(k)
        L[k - 1] = [log_pseudo_likelihood(c.indptr, c.indices, c.data, y, b, a) for b in betas]
    P = np.exp(L - L.max())
    P /= P.sum()
    pk_, pb = P.sum(axis=1), P.sum(axis=0)
    ks = np.arange(1, K + 1)
    ek, eb = (ks * pk_).sum(), (betas * pb).sum()
    sk, sb = np.sqrt((ks**2 * pk_).sum() - ek**2), np.sqrt((betas**2 * pb).sum() - eb**2)
    q = np.cumsum(pk_)
    lo, med, hi = (int(ks[np.searchsorted(q, t)]) for t in (0.03, 0.5, 0.97))
    i, j = np.unravel_index(L.argmax(), L.shape)
    prof = L.max(axis=1)
    print(
        f"pseudo-posterior by quadrature (beta grid of {n_beta}, k = 1..{K}): beta {eb:.3f} "
        f"(sd {sb:.3f}); k {ek:.1f} (sd {sk:.1f}, median {med}, 3-97% {lo}-{hi}); "
        f"P(k <= 5) = {pk_[:5].sum():.4f}; maximum PL at k = {i + 1}, beta = {betas[j]:.2f}"
    )
    print("  profile max_beta log PL, k = 1..12: " + " ".join(f"{v:.1f}" for v in prof[:12]))


def step_assignment(model) -> dict:
    """What pm.sample would assign (through the package's checked assign_step_methods)."""
    provided, selected = pm_mcmc.assign_step_methods(model)
    return {cls.__name__: [v.name for v in vs] for cls, vs in selected.items() if vs}


def report(idata, wall: float, label: str) -> None:
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(az.summary(idata, var_names=["beta", "k"], kind="all"))
    ess = az.ess(idata, var_names=["beta", "k"], method="bulk")
    sampling = float(idata.sample_stats.attrs["sampling_time"])
    eb, ek = float(ess["beta"]), float(ess["k"])
    print(
        f"{label}: pm.sample wall {wall:.1f} s, sampling loop {sampling:.1f} s; "
        f"ESS(beta) {eb:.0f} -> {eb / wall:.1f}/s (wall), {eb / sampling:.1f}/s (loop); "
        f"ESS(k) {ek:.0f} -> {ek / wall:.1f}/s (wall)"
    )
    post = idata.posterior
    kv = post["k"].values.ravel()
    print(
        f"  beta mean {float(post['beta'].mean()):.3f} sd {float(post['beta'].std()):.3f}; "
        f"k mean {kv.mean():.1f} sd {kv.std():.1f}, median {np.median(kv):.0f}, "
        f"distinct values {np.unique(kv).size}, k changed in {np.mean(np.diff(kv) != 0):.3f} "
        f"of draws, k <= 5 in {np.mean(kv <= 5):.3f}"
    )
    if post.sizes["chain"] > 1:
        print(
            "  per chain: "
            + "; ".join(
                f"beta {float(post['beta'][c].mean()):.3f}, k {float(post['k'][c].mean()):.1f}"
                for c in range(post.sizes["chain"])
            )
        )
        print(
            f"  r_hat beta {float(az.rhat(idata, var_names=['beta'])['beta']):.3f}, "
            f"k {float(az.rhat(idata, var_names=['k'])['k']):.3f}"
        )
    ss = idata.sample_stats
    for name in (
        "diverging",
        "acceptance_rate",
        "tree_depth",
        "n_steps",
        "step_size",
        "accepted",
        "accept",
        "scaling",
    ):
        if name in ss:
            v = np.asarray(ss[name].values, dtype=float)
            if name == "diverging":
                print(f"  diverging: total {int(v.sum())}")
                continue
            nan = int(np.isnan(v).sum())
            # Metropolis on k: a proposal k <= 0 gives a NaN Potential (0/0) plus a -inf prior,
            # so a NaN acceptance (rejected, since log(u) < NaN is False)
            print(f"  {name}: mean {np.nanmean(v):.4g}" + (f" ({nan} NaN)" if nan else ""))


def run_potential(X, y, draws, tune, chains, cores, seed, impl, standardize) -> None:
    graph = pk.KNNGraph(X, k_max=K_MAX, standardize=standardize)
    check(graph, y)
    pseudo_posterior_by_quadrature(graph, y)
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, K_MAX)
        pm.Potential("log_pl", pytensor_log_pl(graph, y, beta, k, impl=impl))
        print("step assignment (pm.sample's default):", step_assignment(model))
        pm.sample(
            draws=100,
            tune=100,
            chains=1,
            cores=1,
            progressbar=False,
            compute_convergence_checks=False,
        )  # compile
        t0 = time.perf_counter()
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
        wall = time.perf_counter() - t0
    report(
        idata,
        wall,
        f"Potential ({impl}) + NUTS/Metropolis (draws={draws}, tune={tune}, chains={chains})",
    )


def run_plm(X, y, draws, tune, seed, standardize) -> None:
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, K_MAX)
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y, standardize=standardize)
        pm.sample(
            draws=100,
            tune=100,
            chains=1,
            cores=1,
            progressbar=False,
            step=pk.PseudoLikelihoodMetropolis(),
            compute_convergence_checks=False,
        )
        t0 = time.perf_counter()
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=1,
            cores=1,
            random_seed=seed,
            step=pk.PseudoLikelihoodMetropolis(),
            progressbar=False,
            compute_convergence_checks=False,
        )
        wall = time.perf_counter() - t0
    report(idata, wall, f"pk.PseudoLikelihoodMetropolis (draws={draws}, tune={tune})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--draws", type=int, default=5_000, help="Potential run (NUTS + Metropolis)")
    p.add_argument("--tune", type=int, default=2_000)
    p.add_argument("--chains", type=int, default=1)
    p.add_argument("--cores", type=int, default=1)
    p.add_argument("--plm-draws", type=int, default=50_000)
    p.add_argument("--plm-tune", type=int, default=5_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--impl",
        choices=IMPLS,
        default="dense",
        help="PyTensor formulation of the Potential (see pytensor_log_pl)",
    )
    p.add_argument(
        "--no-standardize",
        dest="standardize",
        action="store_false",
        help="kNN on the raw covariates (as Cucala et al. 2009 seem to have done)",
    )
    p.add_argument("--only", choices=("potential", "plm"), default=None)
    args = p.parse_args()
    X, y, *_ = pk.datasets.load_ripley("train")
    y = np.asarray(y, dtype=np.int64)
    if args.only in (None, "potential"):
        run_potential(
            X,
            y,
            args.draws,
            args.tune,
            args.chains,
            args.cores,
            args.seed,
            args.impl,
            args.standardize,
        )
    if args.only in (None, "plm"):
        print()
        run_plm(X, y, args.plm_draws, args.plm_tune, args.seed, args.standardize)


if __name__ == "__main__":
    main()
