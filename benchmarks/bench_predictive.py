"""Prior and posterior predictive draws of a PottsKNN term on Ripley's training set (issue 13).

The model and calls of the issue: ``beta ~ U(0, 4)``, ``k ~ U{1..20}``, standardised covariates;
50 prior predictive draws, ``pm.sample`` (by default PyMC's 4 chains of 1,000 draws after 1,000
tuning, on 2 cores), then one posterior predictive draw per posterior draw, all with
``random_seed=1``. Prints the wall time of each call
(compilation included; numba's on-disk cache warm), the warnings and pytensor error-log records
each call produced, and as references measured in the same run: the ``pm.sample`` call, and the
median time of one auxiliary draw of the exchange step (10 Swendsen-Wang sweeps) and of one
coupling-from-the-past draw at the posterior means of beta and k.

With ``--fallback-check`` it checks instead the Swendsen-Wang fall-back of the two-class draws
on the same graph: at a few (beta, k) it compares draws forced to fall back (a look-back bound of
1 sweep) with exact coupling-from-the-past draws (bound 16384; those that do not coalesce are
left out), by two-sample Kolmogorov-Smirnov tests on the energy per point and on the class
imbalance |share of class 1 - 1/2|, and prints the integrated autocorrelation time (in sweeps)
of both statistics along a Swendsen-Wang chain. With ``--bounds`` it also times
``draw_labels`` (the draw of one field) on 400 of the posterior draws for several bounds on the
look-back of coupling from the past, with the share of exact draws.

Run::

    python benchmarks/bench_predictive.py                                   # PyMC's defaults
    python benchmarks/bench_predictive.py --draws 100 --tune 100 --chains 1 # the issue's snippet
    python benchmarks/bench_predictive.py --fallback-check
    python benchmarks/bench_predictive.py --bounds
"""

import argparse
import logging
import time
import warnings

import arviz as az
import numpy as np
import pymc as pm
from scipy import stats

import pymc_knn as pk
from pymc_knn._forward import draw_labels
from pymc_knn.distributions import PREDICTIVE_CFTP_SWEEPS, PREDICTIVE_SWEEPS
from pymc_knn.graphs import KNNGraph
from pymc_knn.terms import PottsTerm


class _Count(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.n = 0

    def emit(self, record):
        self.n += 1


def timed(label, fn):
    errors = _Count()
    logger = logging.getLogger("pytensor")
    logger.addHandler(errors)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        out = fn()
        wall = time.perf_counter() - t0
    logger.removeHandler(errors)
    ours = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    print(f"{label}: {wall:.2f} s, {len(ours)} RuntimeWarnings, {errors.n} pytensor error records")
    for w in ours[:2]:
        print(f"    {str(w.message)[:300]}")
    return out, wall


def median_time(fn, repeats=21):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def statistics(term, k, z):
    """Energy per point and class imbalance of label fields ``z`` (rows)."""
    c = term.coupling(k)
    energy = np.array([c.energy(row) for row in z]) / term.n
    return energy, np.abs(z.mean(axis=1) - 0.5)


def fallback_check(n_draws=300, seed=2) -> None:
    d = pk.datasets.load_ripley()
    term = PottsTerm(KNNGraph(d.X, k_max=20), 2)
    rng = np.random.default_rng(seed)
    print(
        f"fall-back ({PREDICTIVE_SWEEPS} Swendsen-Wang sweeps) against exact draws, "
        f"{n_draws} each; KS p-values of energy / imbalance; autocorrelation times (sweeps)"
    )
    for beta, k in [(1.3, 15), (1.45, 15), (1.55, 15)]:
        exact = []
        for _ in range(n_draws):
            z, _, ok = term.draw(beta, k, rng.integers(0, 2, term.n), rng, "cftp")
            if ok:
                exact.append(z)
        approx = np.array(
            [draw_labels(term, beta, k, rng, 1, PREDICTIVE_SWEEPS)[0] for _ in range(n_draws)]
        )
        s_exact, s_approx = statistics(term, k, np.array(exact)), statistics(term, k, approx)
        ks = [stats.ks_2samp(a, b).pvalue for a, b in zip(s_exact, s_approx)]
        z = draw_labels(term, beta, k, rng, 1, PREDICTIVE_SWEEPS)[0]
        chain = np.empty((5000, term.n), dtype=np.int64)
        for t in range(5000):
            z = chain[t] = term.draw(beta, k, z, rng, "swendsen_wang", 1)[0]
        tau = [5000 / float(az.ess(s)) for s in statistics(term, k, chain)]
        print(
            f"beta {beta}, k {k}: {len(exact)} exact; energy {s_exact[0].mean():.3f} vs "
            f"{s_approx[0].mean():.3f} (KS p {ks[0]:.2f}), imbalance {s_exact[1].mean():.3f} "
            f"vs {s_approx[1].mean():.3f} (KS p {ks[1]:.2f}); tau {tau[0]:.1f} / {tau[1]:.1f}"
        )


def bounds_table(term, b, ks, n=400, seed=3) -> None:
    rng = np.random.default_rng(seed)
    idx = rng.choice(b.size, n, replace=False)
    for T in [32, 64, 128, 256, 1024]:
        t0, fell_back = time.perf_counter(), 0
        for i in idx:
            fell_back += draw_labels(term, float(b[i]), int(ks[i]), rng, T, PREDICTIVE_SWEEPS)[1]
        t = (time.perf_counter() - t0) / n
        print(f"look-back bound {T}: {1 - fell_back / n:.3f} exact, {t * 1e3:.2f} ms per draw")
    t0 = time.perf_counter()
    for i in idx[:100]:
        term.draw(
            float(b[i]),
            int(ks[i]),
            rng.integers(0, 2, term.n),
            rng,
            "swendsen_wang",
            PREDICTIVE_SWEEPS,
        )
    print(
        f"{PREDICTIVE_SWEEPS} Swendsen-Wang sweeps alone: "
        f"{(time.perf_counter() - t0) / 100 * 1e3:.2f} ms per draw"
    )
    for beta in [0.5, 1.0, 1.25, 1.5, 2.0]:
        exact = [
            not draw_labels(term, beta, 15, rng, PREDICTIVE_CFTP_SWEEPS, 1)[1] for _ in range(100)
        ]
        print(
            f"beta {beta}, k 15: {np.mean(exact):.2f} of 100 draws exact with the default "
            f"bound {PREDICTIVE_CFTP_SWEEPS}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--fallback-check", action="store_true")
    parser.add_argument("--bounds", action="store_true")
    args = parser.parse_args()
    if args.fallback_check:
        fallback_check()
        return
    d = pk.datasets.load_ripley()
    X, y = d.X, d.y
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, 20)
        pk.PottsKNN("y", X, beta, k, observed=y)
        _, t_prior = timed(
            "sample_prior_predictive(50)", lambda: pm.sample_prior_predictive(50, random_seed=1)
        )
        idata, t_sample = timed(
            f"pm.sample(draws={args.draws}, tune={args.tune}, chains={args.chains}, cores=2)",
            lambda: pm.sample(
                draws=args.draws,
                tune=args.tune,
                chains=args.chains,
                cores=2,
                random_seed=1,
                progressbar=False,
            ),
        )
        _, t_post = timed(
            f"sample_posterior_predictive({args.draws * args.chains} draws)",
            lambda: pm.sample_posterior_predictive(idata, random_seed=1, progressbar=False),
        )
    b = idata.posterior["beta"].values.ravel()
    ks = idata.posterior["k"].values.ravel()
    print(
        f"posterior beta: mean {b.mean():.3f}, range {b.min():.3f}-{b.max():.3f}; "
        f"k: median {np.median(ks):.0f}, range {ks.min()}-{ks.max()}"
    )
    term = model["y"].owner.op.term
    beta_hat, k_hat = float(b.mean()), int(np.median(ks))
    rng = np.random.default_rng(0)
    term.coupling(k_hat)
    t_aux = median_time(lambda: term.draw(beta_hat, k_hat, y, rng, "swendsen_wang", 10))
    t_cftp = median_time(lambda: term.draw(beta_hat, k_hat, y, rng, "cftp"))
    print(
        f"one auxiliary draw (10 SW sweeps) at beta {beta_hat:.3f}, k {k_hat}: "
        f"{t_aux * 1e3:.3f} ms; one CFTP draw (max 16384 sweeps): {t_cftp * 1e3:.1f} ms"
    )
    print(
        f"posterior predictive per draw: {t_post / b.size * 1e3:.1f} ms = "
        f"{t_post / b.size / t_aux:.0f} auxiliary draws; "
        f"posterior predictive / pm.sample = {t_post / t_sample:.2f}; "
        f"prior predictive / pm.sample = {t_prior / t_sample:.2f}"
    )
    if args.bounds:
        bounds_table(term, b, ks)


if __name__ == "__main__":
    main()
