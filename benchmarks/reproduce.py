"""Reproductions of the papers' results, written as Markdown tables and PNG figures.

Each experiment prints nothing but a progress bar; together they write ``OUT/reproductions.md``
and ``OUT/figures/*.png``, every table next to the paper's figures.

So far (issue 5, in progress):

* Cucala et al. (2009), Table 1 and Fig. 2: classical kNN on Ripley's test set and the
  leave-one-out curve; Table 2: the same on Pima.
* Cucala et al. (2009), sections 3.2-3.5 on Ripley: the posterior of beta and k and the test error
  for pseudo-likelihood, Møller and exchange, with the comparison figures of Figs. 11-12.
* Cucala et al. (2009), section 4: Pima (the 200/332 split) and forensic glass (4 classes,
  repeated random 89/96 splits).
* Friel and Pettitt (2011), Table 2: kNN, d-nn1/2/3 and the symmetrised pkNN on Pima, forensic
  glass, iris, crabs and wine with about 25% training.

Run::

    python benchmarks/reproduce.py                  # full: writes docs/reproductions.md
    python benchmarks/reproduce.py --quick --out /tmp/repro   # small settings, for CI
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

RIPLEY_TABLE_1 = {1: 0.150, 3: 0.134, 15: 0.095, 17: 0.087, 31: 0.084, 54: 0.081}
PIMA_TABLE_2 = {1: 0.316, 3: 0.229, 15: 0.226, 31: 0.211, 57: 0.205, 66: 0.208}
RIPLEY_LOO_MINIMISERS = [17, 18, 35, 36, 45, 46, 51, 52, 53, 54]
PAPER_RIPLEY_ERRORS = {"pseudo": "0.087", "moller": "0.084", "exchange": "0.084-0.085"}
METHOD_NAMES = {"pseudo": "pseudo-likelihood Metropolis", "moller": "Møller (plug-in 13, 1.45)",
                "exchange": "exchange"}


def _figure(out: Path, name: str, fig) -> str:
    import matplotlib.pyplot as plt

    (out / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "figures" / name, dpi=100)
    plt.close(fig)
    return f"![{name}](figures/{name})"


def classical_tables(out: Path, settings) -> tuple[str, dict]:
    """000 Tables 1-2 and Fig. 2: the classical kNN on raw covariates, ties by decreasing k."""
    import matplotlib.pyplot as plt

    import pymc_knn as pk

    lines, results = [], {}
    for name, load, table in [("Ripley", pk.datasets.load_ripley, RIPLEY_TABLE_1),
                              ("Pima", pk.datasets.load_pima, PIMA_TABLE_2)]:
        X, y, *_ = load("train")
        Xt, yt, *_ = load("test")
        ks = list(table)
        errors = pk.knn_error_rates(X, y, Xt, yt, ks, standardize=False).values
        results[name] = dict(zip(ks, errors))
        number = 1 if name == "Ripley" else 2
        lines += [f"### 000 Table {number}: classical kNN on the {name} test set ({len(yt)} points)",
                  "", "| k | paper | here |", "|---|---|---|"]
        lines += [f"| {k} | {table[k]:.3f} | {e:.3f} |" for k, e in zip(ks, errors)]
        lines.append("")
    X, y, *_ = pk.datasets.load_ripley("train")
    curve = pk.loo_error_curve(X, y, 125, standardize=False)
    best = curve.k[curve.n_errors == curve.n_errors.min()].values.tolist()
    results["ripley_loo_minimisers"] = best
    fig, ax = plt.subplots(figsize=(6, 3.5), constrained_layout=True)
    ax.plot(curve.k, curve.values)
    ax.set(xlabel="k", ylabel="leave-one-out error rate",
           title="Ripley's training set (000 Fig. 2)")
    lines += ["### 000 Fig. 2: leave-one-out error on Ripley's training set", "",
              f"Minimised by k = {best} (paper: {RIPLEY_LOO_MINIMISERS}).", "",
              _figure(out, "ripley_loo.png", fig), ""]
    return "\n".join(lines), results


def _fit(X, y, method, settings, seed, standardize=False):
    import pymc as pm

    import pymc_knn as pk

    steps = {"exchange": lambda: pk.Exchange(),
             "moller": lambda: pk.Moller(plug_in=(1.45, 13), adapt_plug_in=False),
             "pseudo": lambda: pk.PseudoLikelihoodMetropolis()}
    K = min(pk.max_k(y), len(y) - 1)
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 4)
        k = pm.DiscreteUniform("k", 1, K)
        pk.PottsKNN("y", X=X, beta=beta, k=k, standardize=standardize, observed=y)
        t0 = time.perf_counter()
        idata = pm.sample(draws=settings["draws"], tune=settings["tune"], chains=2, cores=2,
                          random_seed=seed, step=steps[method](), progressbar=False,
                          compute_convergence_checks=False)
    return model, idata, time.perf_counter() - t0


def ripley_methods(out: Path, settings) -> tuple[str, dict]:
    """000 sections 3.2-3.5: pseudo-likelihood, Møller and exchange on Ripley, raw covariates."""
    import arviz as az
    import matplotlib.pyplot as plt

    import pymc_knn as pk

    X, y, *_ = pk.datasets.load_ripley("train")
    Xt, yt, *_ = pk.datasets.load_ripley("test")
    rows, results, probas, posts = [], {}, {}, {}
    for method in ("pseudo", "moller", "exchange"):
        model, idata, wall = _fit(X, y, method, settings, seed=2009)
        summary = pk.predictive_summary(idata, Xt, model=model)
        error = float(np.mean(summary["bayes_class"].values != yt))
        post = idata.posterior
        ess = az.ess(idata)
        results[method] = {"error": error, "beta": float(post.beta.mean()),
                           "k": float(post.k.mean()), "wall": wall}
        probas[method] = summary["proba"].values[:, 1]
        posts[method] = post
        rows.append(
            f"| {METHOD_NAMES[method]} | {float(post.beta.mean()):.2f} ({float(post.beta.std()):.2f}) "
            f"| {float(post.k.mean()):.1f} ({int(np.median(post.k))}) "
            f"| {float(ess.beta):.0f} / {float(ess.k):.0f} | {error:.3f} "
            f"| {PAPER_RIPLEY_ERRORS[method]} | {wall:.0f} s |")
    n = 2 * settings["draws"]
    lines = [f"### 000 sections 3.2-3.5: Ripley, beta ~ U(0, 4), k ~ U{{1..125}}, raw covariates",
             "", f"2 chains x {settings['draws']} draws after {settings['tune']} tuning ({n} draws).",
             "", "| method | beta mean (sd) | k mean (median) | ESS beta / k | test error | "
             "paper's error | sampling time |", "|---|---|---|---|---|---|---|", *rows, "",
             RIPLEY_NOTES, ""]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), constrained_layout=True)
    for method, post in posts.items():
        axes[0].hist(post.beta.values.ravel(), bins=40, density=True, histtype="step",
                     label=METHOD_NAMES[method])
        ks, counts = np.unique(post.k.values, return_counts=True)
        axes[1].plot(ks, counts / counts.sum(), marker="o", ms=3, label=METHOD_NAMES[method])
    axes[0].set(xlabel="beta", title="posterior of beta (000 Fig. 11, top)")
    axes[1].set(xlabel="k", title="posterior of k (000 Fig. 11, bottom)")
    axes[0].legend(fontsize="small")
    lines += [_figure(out, "ripley_marginals.png", fig), ""]
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), constrained_layout=True)
    for ax, other in zip(axes, ("pseudo", "moller")):
        ax.scatter(probas["exchange"], probas[other], s=4)
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        ax.set(xlabel="P(class 1), exchange", ylabel=f"P(class 1), {METHOD_NAMES[other]}",
               title="test points (000 Fig. 12)")
    lines += [_figure(out, "ripley_probabilities.png", fig), ""]
    return "\n".join(lines), results


def pima(out: Path, settings) -> tuple[str, dict]:
    """000 section 4: Pima, the 200/332 split, exchange."""
    import pymc_knn as pk

    X, y, *_ = pk.datasets.load_pima("train")
    Xt, yt, *_ = pk.datasets.load_pima("test")
    model, idata, wall = _fit(X, y, "exchange", settings, seed=1)
    summary = pk.predictive_summary(idata, Xt, model=model)
    error = float(np.mean(summary["bayes_class"].values != yt))
    post = idata.posterior
    lines = ["### 000 section 4: Pima (200 training, 332 test), exchange", "",
             "| | beta mean | k mean (median) | test error | sampling time |", "|---|---|---|---|---|",
             f"| paper | | | 0.209 | |",
             f"| here | {float(post.beta.mean()):.2f} | {float(post.k.mean()):.1f} "
             f"({int(np.median(post.k))}) | {error:.3f} | {wall:.0f} s |", ""]
    return "\n".join(lines), {"error": error}


RIPLEY_NOTES = """\
* Pseudo-likelihood: its pseudo-posterior sits at large k and beta (000 section 3.5, Fig. 11)
  and its test error matches the paper's.
* Exchange: the exact posterior, beta 1.46, k about 15 (median 14), the paper's Møller plug-in
  (13, 1.45). Its test error is 0.092-0.094 against the paper's 0.084-0.085. With k fixed, this
  model's test error is 0.094 at k = 13, 0.092 at 14, 0.096 at 15, 0.089 at 17, 0.084 at 31, so
  the paper's figure needs more posterior mass on larger k than it reports. Not yet explained.
* Møller: its chain mixes badly here (ESS of k in single digits, k stuck low), so its row is not
  a posterior estimate. Its exactness tests on small problems pass; on Ripley the auxiliary
  variable, drawn once per proposal at the plug-in, makes moves in k rarely accepted. Open."""

def glass_split(rng):
    """A random 89/96 split of forensic glass without the 29 headlamps (185 fragments, 4 classes).

    Cucala et al. (2009, section 4) report 185 fragments in 89 + 96 without saying which 29 of
    the 214 were left out; 29 is the number of headlamp fragments, and leaving them out keeps
    the four coalesced classes (Other = containers + tableware). Redrawn until every class has
    at least two training points.
    """
    import pymc_knn as pk

    X, y, *_ = pk.datasets.load_glass(coalesce=True)
    X6, y6, _, types = pk.datasets.load_glass(coalesce=False)
    keep = y6 != types.index("Head")
    X, y = X[keep], y[keep]
    while True:
        order = rng.permutation(len(y))
        train, test = order[:89], order[89:]
        if np.bincount(y[train], minlength=4).min() >= 2:
            return X[train], y[train], X[test], y[test]


def glass(out: Path, settings) -> tuple[str, dict]:
    """000 section 4: forensic glass, 4 classes, repeated random 89/96 splits."""
    import pymc_knn as pk

    rng = np.random.default_rng(1994)
    rows = {("kNN, leave-one-out k", s): [] for s in (False, True)}
    rows.update({("pkNN, exchange", s): [] for s in (False, True)})
    ks = {s: [] for s in (False, True)}
    t0 = time.perf_counter()
    for split in range(settings["splits"]):
        X, y, Xt, yt = glass_split(rng)
        for std in (False, True):
            k = pk.loo_choose_k(X, y, standardize=std)
            ks[std].append(k)
            rows[("kNN, leave-one-out k", std)].append(
                float(pk.knn_error_rates(X, y, Xt, yt, [k], standardize=std)[0]))
            model, idata, _ = _fit(X, y, "exchange", settings, seed=split, standardize=std)
            summary = pk.predictive_summary(idata, Xt, model=model)
            rows[("pkNN, exchange", std)].append(float(np.mean(summary["bayes_class"].values != yt)))
    wall = time.perf_counter() - t0
    n = settings["splits"]
    lines = [f"### 000 section 4: forensic glass, 4 classes, {n} random 89/96 splits", "",
             "185 fragments (the 214 without the 29 headlamps, see `glass_split`); exchange with "
             f"2 chains x {settings['draws']} draws; mean (sd) of the test error over the splits.",
             "", "| method | covariates | paper | here |", "|---|---|---|---|"]
    results = {}
    for (name, std), errors in rows.items():
        paper = "0.35 (k = 17)" if name.startswith("kNN") else "0.29"
        cov = "standardised" if std else "raw"
        extra = f", k median {int(np.median(ks[std]))}" if name.startswith("kNN") else ""
        lines.append(f"| {name} | {cov} | {paper} | {np.mean(errors):.3f} ({np.std(errors):.3f})"
                     f"{extra} |")
        results[(name, cov)] = float(np.mean(errors))
    lines += ["", f"({wall:.0f} s in all.)", "", GLASS_NOTES, ""]
    return "\n".join(lines), results


GLASS_NOTES = """\
* The paper's split is not known, so these are means over random splits of its sizes, on the 185
  fragments left without the headlamps. Its classical kNN error (0.35) is met on standardised
  covariates; its leave-one-out k = 17 is not: here leave-one-out picks k = 1 in most splits.
* The probabilistic kNN is at least as good as the classical kNN on the same covariates in the
  mean, but the paper's gain (0.29 against 0.35) is not reproduced: here it is 0.01-0.02. On raw
  covariates both do better than the paper reports (0.26-0.27), which suggests the paper
  standardised (or its split was harder). Open for the next session."""


FRIEL_TABLE_2 = {"Pima": (0.30, 0.29, 0.32, 0.30), "Forensic glass": (0.35, 0.33, 0.39, 0.31),
                 "Iris": (0.06, 0.05, 0.05, 0.06), "Crabs": (0.16, 0.16, 0.23, 0.16),
                 "Wine": (0.06, 0.04, 0.06, 0.04)}
FRIEL_MODELS = ("kNN", "d-nn1", "d-nn2", "d-nn3", "pkNN")


def _friel_data():
    import pymc_knn as pk

    pima_tr, pima_te = pk.datasets.load_pima("train"), pk.datasets.load_pima("test")
    return {"Pima": (np.vstack([pima_tr.X, pima_te.X]), np.concatenate([pima_tr.y, pima_te.y])),
            "Forensic glass": pk.datasets.load_glass()[:2], "Iris": pk.datasets.load_iris()[:2],
            "Crabs": pk.datasets.load_crabs()[:2], "Wine": pk.datasets.load_wine()[:2]}


def _quarter_split(rng, y):
    """About 25% for training, every class with at least two training points."""
    n_train = int(round(0.25 * len(y)))
    while True:
        order = rng.permutation(len(y))
        if np.bincount(y[order[:n_train]], minlength=y.max() + 1).min() >= 2:
            return order[:n_train], order[n_train:]


def _friel_fit(X, y, model_name, settings, seed):
    """001's priors: beta ~ N(0, 50^2) on beta > 0, sigma ~ U(0, 100); exchange; standardised."""
    import pymc as pm

    import pymc_knn as pk

    with pm.Model() as model:
        beta = pm.TruncatedNormal("beta", 0, 50, lower=0)
        if model_name == "pkNN":
            k = pm.DiscreteUniform("k", 1, min(pk.max_k(y), len(y) - 1))
            pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
        else:
            kernel = {"d-nn1": "gaussian", "d-nn2": "ball", "d-nn3": "exponential"}[model_name]
            sigma = pm.Uniform("sigma", 0, 100)
            pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel=kernel, observed=y)
        idata = pm.sample(draws=settings["dnn_draws"], tune=settings["dnn_tune"], chains=2,
                          cores=2, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
    # d-nn prediction costs O(n) per point and distinct sigma: 500 draws per chain suffice
    thin = max(1, settings["dnn_draws"] // 500)
    return model, idata.sel(draw=slice(None, None, thin))


def friel_table(out: Path, settings) -> tuple[str, dict]:
    """001 Table 2: kNN (LOO k), d-nn1/2/3 and the symmetrised pkNN, 25% training, standardised."""
    import pymc_knn as pk

    rng = np.random.default_rng(2011)
    errors = {name: {m: [] for m in FRIEL_MODELS} for name in FRIEL_TABLE_2}
    t0 = time.perf_counter()
    for name, (X, y) in _friel_data().items():
        for split in range(settings["splits"]):
            train, test = _quarter_split(rng, y)
            Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
            k = pk.loo_choose_k(Xtr, ytr)
            errors[name]["kNN"].append(float(pk.knn_error_rates(Xtr, ytr, Xte, yte, [k])[0]))
            for m in FRIEL_MODELS[1:]:
                model, idata = _friel_fit(Xtr, ytr, m, settings, seed=split)
                s = pk.predictive_summary(idata, Xte, model=model)
                errors[name][m].append(float(np.mean(s["bayes_class"].values != yte)))
    wall = time.perf_counter() - t0
    n = settings["splits"]
    lines = [f"### 001 Table 2: error rates with about 25% training, {n} random splits", "",
             "Standardised covariates; beta ~ N(0, 50^2) truncated to beta > 0, sigma ~ U(0, 100), "
             f"k ~ U{{1..smallest class}}; exchange, 2 chains x {settings['dnn_draws']} draws; "
             "kNN with the leave-one-out k (smallest on ties). Each cell: paper / here, mean "
             "(sd) over the splits.", "",
             "| data set | " + " | ".join(FRIEL_MODELS) + " |", "|---" * (len(FRIEL_MODELS) + 1) + "|"]
    results = {}
    for name, paper in FRIEL_TABLE_2.items():
        cells = []
        for m, p in zip(FRIEL_MODELS, (*paper, None)):
            e = np.asarray(errors[name][m])
            results[(name, m)] = float(e.mean())
            head = f"{p:.2f} / " if p is not None else ""
            cells.append(f"{head}{e.mean():.3f} ({e.std():.3f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"({wall:.0f} s in all; the paper ran 20,000 iterations per fit, 1-12 hours "
              "each in Matlab.)", "", FRIEL_NOTES, ""]
    return "\n".join(lines), results


FRIEL_NOTES = """\
* Crabs: about 0.29 here against the paper's 0.16 for kNN and d-nn1 alike, far beyond split
  variability; the four species x sex classes on five standardised size measurements overlap
  strongly, so the paper may have transformed the covariates (e.g. logs or ratios). Open.
* Pima here is MASS's 532 women with 7 covariates (the paper's table says 8 features).
* The paper does not give its splits or their number; these are means over random splits of
  about 25% for training, with every class present at least twice."""

EXPERIMENTS = {"classical": classical_tables, "ripley": ripley_methods, "pima": pima,
               "glass": glass, "friel": friel_table}
SETTINGS = {"full": {"draws": 20000, "tune": 5000, "splits": 10, "dnn_draws": 5000,
                     "dnn_tune": 2000},
            "quick": {"draws": 1500, "tune": 1000, "splits": 2, "dnn_draws": 500,
                      "dnn_tune": 500}}


def run(out: Path, quick: bool = False, only=None) -> dict:
    """Run the experiments, write ``out/reproductions.md``, return their numbers."""
    import matplotlib
    from rich.progress import Progress

    matplotlib.use("Agg")
    out.mkdir(parents=True, exist_ok=True)
    settings = SETTINGS["quick" if quick else "full"]
    names = list(only or EXPERIMENTS)
    sections, results = [], {}
    with Progress(transient=False) as progress:
        task = progress.add_task("reproducing", total=len(names))
        for name in names:
            progress.update(task, description=f"reproducing: {name}")
            t0 = time.perf_counter()
            text, results[name] = EXPERIMENTS[name](out, settings)
            sections.append(text + f"\n*({name}: {time.perf_counter() - t0:.0f} s)*\n")
            progress.advance(task)
    mode = "quick (CI) settings" if quick else "full settings"
    header = ["# Reproductions of the papers' results", "",
              f"Written by `python benchmarks/reproduce.py{' --quick' if quick else ''}` "
              f"({mode}); the paper's figures next to ours.", ""]
    (out / "reproductions.md").write_text("\n".join(header + sections))
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small settings (for CI)")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "docs"))
    p.add_argument("--only", nargs="*", choices=list(EXPERIMENTS))
    args = p.parse_args()
    run(Path(args.out), args.quick, args.only)


if __name__ == "__main__":
    main()
