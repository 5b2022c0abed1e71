"""Yoon and Friel (2015), Tables 2-3 and Fig. 3: F-measures and run times, 4-fold cross-validation.

Part of the reproduction suite (``benchmarks/reproduce.py --only yoon``). Per data set and fold:
the classical kNN with its leave-one-out ``k``; KOREA (average and optimal) under the three
neighbour rules; and the exact posterior by the exchange algorithm for the two rules that have a
joint model (the asymmetric one has none).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

RULES = {"asymmetric": "Asymmetric", "symmetrised": "Symmetric Boltzmann", "equal": "Boltzmann(2)"}
# 003 Table 2: F-measure mean (sd) per rule, in the order of RULES.
PAPER_F = {
    "kNN": {
        "Crabs": ((0.72, 0.08), (0.74, 0.08), (0.74, 0.08)),
        "Fglass": ((0.64, 0.06), (0.67, 0.05), (0.67, 0.05)),
        "Wine": ((0.97, 0.01), (0.97, 0.01), (0.97, 0.01)),
        "Iris": ((0.57, 0.10), (0.55, 0.10), (0.55, 0.10)),
    },
    "pkNN": {
        "Crabs": ((0.75, 0.09), (0.75, 0.09), (0.75, 0.08)),
        "Fglass": ((0.73, 0.06), (0.74, 0.06), (0.69, 0.06)),
        "Wine": ((0.98, 0.01), (0.98, 0.01), (0.98, 0.02)),
        "Iris": ((0.57, 0.12), (0.57, 0.12), (0.53, 0.10)),
    },
    "KOREA (average)": {
        "Crabs": ((0.86, 0.11), (0.89, 0.11), (0.87, 0.09)),
        "Fglass": ((0.76, 0.09), (0.77, 0.07), (0.81, 0.08)),
        "Wine": ((0.99, 0.12), (0.99, 0.02), (0.98, 0.02)),
        "Iris": ((0.62, 0.15), (0.58, 0.17), (0.56, 0.03)),
    },
    "KOREA (optimal)": {
        "Crabs": ((0.86, 0.13), (0.89, 0.11), (0.87, 0.09)),
        "Fglass": ((0.79, 0.04), (0.76, 0.08), (0.79, 0.07)),
        "Wine": ((0.99, 0.02), (0.99, 0.02), (0.98, 0.02)),
        "Iris": ((0.57, 0.17), (0.56, 0.19), (0.48, 0.16)),
    },
}
# 003 Table 3: mean execution time (s): KNN, PKNN, MCMC (10000 runs), KOREA.
PAPER_TIMES = {
    "Crabs": (0.10, 0.46, 168.76, 9.77),
    "Fglass": (0.11, 0.52, 200.59, 10.61),
    "Wine": (0.08, 0.30, 129.03, 6.25),
    "Iris": (0.07, 0.26, 95.47, 5.14),
}
METHODS = ("kNN", "pkNN", "KOREA (average)", "KOREA (optimal)")


def _data():
    import pymc_knn as pk

    return {
        "Crabs": pk.datasets.load_crabs()[:2],
        "Fglass": pk.datasets.load_glass()[:2],
        "Wine": pk.datasets.load_wine()[:2],
        "Iris": pk.datasets.load_iris()[:2],
    }


def _exchange(X, y, rule, draws, tune, seed):
    """The exact posterior under KOREA's prior, beta ~ Gamma(2, scale 10), k ~ U{1..K}."""
    import pymc as pm

    import pymc_knn as pk

    with pm.Model() as model:
        beta = pm.Gamma("beta", alpha=2.0, beta=0.1)
        k = pm.DiscreteUniform("k", 1, min(pk.max_k(y), len(y) - 1))
        pk.PottsKNN("y", X=X, beta=beta, k=k, neighbours=rule, observed=y)
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=2,
            cores=2,
            random_seed=seed,
            step=pk.Exchange(iterations_per_draw=1),  # the paper's chain: draws are iterations
            progressbar=False,
            compute_convergence_checks=False,
        )
    return model, idata


def _folds():
    """Every (data set, fold): 4-fold stratified cross-validation, shuffled with one seed."""
    from sklearn.model_selection import StratifiedKFold

    cv = StratifiedKFold(4, shuffle=True, random_state=2015)
    for name, (X, y) in _data().items():
        for fold, (train, test) in enumerate(cv.split(X, y)):
            yield name, fold, X[train], y[train], X[test], y[test]


def _run_folds(settings):
    """F-measures ``f[(method, data, rule)]`` and times ``t[(method, data)]`` of every fold."""
    from sklearn.metrics import f1_score

    import pymc_knn as pk

    f, t = {}, {}

    def record(method, name, rule, truth, pred, seconds):
        f.setdefault((method, name, rule), []).append(f1_score(truth, pred, average="macro"))
        t.setdefault((method, name), []).append(seconds)

    for name, fold, X, y, Xt, yt in _folds():
        t0 = time.perf_counter()
        pred = pk.knn_predict(X, y, Xt, pk.loo_choose_k(X, y))
        seconds = time.perf_counter() - t0
        for rule in RULES:  # one classifier, the same in every column
            record("kNN", name, rule, yt, pred, seconds)
        for rule in RULES:
            t0 = time.perf_counter()
            approx = pk.korea(X, y, neighbours=rule)
            average = approx.predict(Xt)
            seconds = time.perf_counter() - t0
            record("KOREA (average)", name, rule, yt, average, seconds)
            record(
                "KOREA (optimal)", name, rule, yt, approx.predict(Xt, estimate="optimal"), seconds
            )
            if rule == "asymmetric" or fold >= settings["yoon_mcmc_folds"]:
                continue
            t0 = time.perf_counter()
            model, idata = _exchange(
                X, y, rule, settings["yoon_draws"], settings["yoon_tune"], seed=fold
            )
            summary = pk.predictive_summary(idata, Xt, model=model)
            record("pkNN", name, rule, yt, summary["bayes_class"].values, time.perf_counter() - t0)
    return f, t


def _k_figure(out: Path, settings, figure):
    """003 Fig. 3: p(k | y) on wine by KOREA, by pseudo-likelihood MCMC and by exchange."""
    import matplotlib.pyplot as plt
    import pymc as pm

    import pymc_knn as pk

    _, _, X, y, *_ = next(s for s in _folds() if s[0] == "Wine")
    approx = pk.korea(X, y)
    K = approx.graph.k_max
    draws = {}
    for label, step in (
        ("pseudo-likelihood MCMC", pk.PseudoLikelihoodMetropolis),
        ("exchange (exact posterior)", pk.Exchange),
    ):
        with pm.Model():
            beta = pm.Gamma("beta", alpha=2.0, beta=0.1)
            k = pm.DiscreteUniform("k", 1, K)
            pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
            idata = pm.sample(
                draws=settings["yoon_draws"],
                tune=settings["yoon_tune"],
                chains=2,
                cores=2,
                random_seed=3,
                step=step(iterations_per_draw=1),
                progressbar=False,
                compute_convergence_checks=False,
            )
        draws[label] = idata.posterior
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), constrained_layout=True)
    ks = np.arange(1, K + 1)
    axes[0].plot(ks, approx.posterior.p_k, marker="o", ms=3, color="C3", label="KOREA")
    for (label, post), colour in zip(draws.items(), ("C0", "C2")):
        counts = np.bincount(post.k.values.ravel(), minlength=K + 1)[1:]
        axes[0].plot(ks, counts / counts.sum(), marker="x", ms=4, color=colour, label=label)
        axes[1].hist(
            post.beta.values.ravel(),
            bins=40,
            density=True,
            histtype="step",
            color=colour,
            label=label,
        )
    grid = np.linspace(0, max(float(p.beta.max()) for p in draws.values()), 300)
    pb = approx.posterior
    density = sum(
        p * np.exp(-0.5 * ((grid - m) / s) ** 2) / (s * np.sqrt(2 * np.pi))
        for p, m, s in zip(pb.p_k.values, pb.beta_mode.values, pb.beta_sd.values)
    )
    axes[1].plot(grid, density, color="C3", label="KOREA")
    axes[0].set(
        xlabel="k",
        ylabel="posterior probability",
        title=f"wine, fold 1 ({len(y)} training points): p(k | y) (003 Fig. 3)",
    )
    axes[1].set(xlabel="beta", title="p(beta | y)")
    axes[0].legend(fontsize="small")
    summary = {label: (float(p.k.mean()), float(p.beta.mean())) for label, p in draws.items()}
    summary["KOREA"] = (float((pb.k * pb.p_k).sum()), pb.attrs["beta_mean"])
    return figure(out, "wine_k_posterior.png", fig), summary


def _seconds(x: float) -> str:
    return f"{x:.2f}" if x >= 0.005 else "< 0.01"


def yoon_tables(out: Path, settings, figure) -> tuple[str, dict]:
    """003 Tables 2-3 and Fig. 3 (``figure(out, name, fig)`` saves a figure, returns its link)."""
    f, t = _run_folds(settings)
    results = {key: float(np.mean(v)) for key, v in f.items()}
    lines = [
        "### 003 Table 2: F-measure, 4-fold cross-validation",
        "",
        "Macro-averaged F-measure, mean (sd) over the 4 stratified folds; standardised "
        "covariates; kNN with the leave-one-out k (the same classifier in every column); "
        "KOREA with its default prior beta ~ Gamma(2, scale 10) and k ~ U{1..smallest "
        f"class}}; pkNN is the exact posterior (exchange, 2 chains x "
        f"{settings['yoon_draws']} draws after {settings['yoon_tune']}, one iteration a "
        "draw, same priors; "
        f"{min(4, settings['yoon_mcmc_folds'])} of the 4 folds), which the asymmetric rule "
        "does not have. Each cell: paper / here.",
        "",
        "| method | data set | " + " | ".join(RULES.values()) + " |",
        "|---|---|---|---|---|",
    ]
    for method in METHODS:
        for name in PAPER_F[method]:
            cells = []
            for (m, s), rule in zip(PAPER_F[method][name], RULES):
                here = f.get((method, name, rule))
                mine = f"{np.mean(here):.2f} ({np.std(here):.2f})" if here else "—"
                cells.append(f"{m:.2f} ({s:.2f}) / {mine}")
            lines.append(f"| {method} | {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### 003 Table 3: mean run time per fold (s)",
        "",
        "Here: one fold's fit and prediction of the test fold (KOREA: one neighbour rule; "
        f"exchange: 2 chains x ({settings['yoon_draws']} + {settings['yoon_tune']}) "
        "iterations on 2 cores). Paper: MATLAB, 10,000 MCMC iterations.",
        "",
        "| data set | kNN paper / here | pkNN (paper) | MCMC paper / exchange here | "
        "KOREA paper / here |",
        "|---|---|---|---|---|",
    ]
    for name, (p_knn, p_pknn, p_mcmc, p_korea) in PAPER_TIMES.items():
        mcmc = t.get(("pkNN", name))
        mine = f"{np.mean(mcmc):.1f}" if mcmc else "—"
        lines.append(
            f"| {name} | {p_knn:.2f} / {_seconds(np.mean(t[('kNN', name)]))} | "
            f"{p_pknn:.2f} | {p_mcmc:.1f} / {mine} | "
            f"{p_korea:.2f} / {np.mean(t[('KOREA (average)', name)]):.2f} |"
        )
    link, ks = _k_figure(out, settings, figure)
    lines += [
        "",
        "### 003 Fig. 3: KOREA against MCMC on wine",
        "",
        "| | E(k given y) | E(beta given y) |",
        "|---|---|---|",
        *[f"| {label} | {k:.1f} | {b:.2f} |" for label, (k, b) in ks.items()],
        "",
        link,
        "",
        YOON_NOTES,
        "",
    ]
    results["fig3"] = ks
    return "\n".join(lines), results


YOON_NOTES = """\
* Meat and olive oil (003 Table 1) are spectra not shipped here, so their rows are left out.
* The paper does not define its F-measure for several classes; these are macro averages (the
  mean of the per-class F). Weighted by class size, forensic glass gets 0.68 for kNN and
  0.68-0.70 for KOREA, nearer the paper's kNN (0.64-0.67); the other data sets change by 0.01.
* Iris: the paper's 0.48-0.62 for every method is not reachable by these classifiers on iris
  (0.93-0.95 here; Friel and Pettitt report error rates of 0.05-0.06 on the same data files),
  so that row is not comparable.
* The paper finds KOREA better than kNN and pkNN everywhere (crabs 0.86-0.89 against
  0.72-0.75). Here KOREA, kNN and the exact pkNN are within a few points of each other on every
  data set, and on forensic glass all three stay at 0.5-0.6 against the paper's 0.76-0.81 for
  KOREA. Not explained: the paper gives neither its folds nor its kNN's k.
* KOREA approximates the pseudo-posterior, as the paper says (section 7). Its p(k | y) agrees
  with pseudo-likelihood MCMC (the paper's MCMC of eq. 5 is also built on it), not with the
  exact posterior, which sits at smaller k and beta (Cucala et al. 2009, section 3.5); see the
  figure. Its E(beta | y) is below the MCMC's: on wine most neighbourhoods are pure and the
  pseudo-posterior of beta is skewed to the right, which a Gaussian at the mode misses.
* Run times: KOREA takes 0.1-0.3 s per fold against the paper's 5-11 s, the exact posterior
  (exchange) seconds against the paper's 95-200 s for 10,000 pseudo-likelihood MCMC
  iterations.
* pymc-knn's KOREA builds the approximation once from the training labels, not once per test
  point, and integrates beta with quadrature nodes of each k's Gaussian (see `pymc_knn.approx`)."""
