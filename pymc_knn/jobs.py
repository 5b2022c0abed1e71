"""The command-line jobs: the Ripley fit of the README, and a fit on the user's own CSV file.

``python -m pymc_knn demo`` fits the probabilistic kNN of Cucala et al. (2009) to Ripley's
training set with the exchange algorithm, prints ``az.summary``, the error on the 1,000 test
points next to the paper's and the classical kNN's, and writes the trace plot, the posterior of
``k`` and the predictive map with its uncertainty zones (000 Fig. 3).

``python -m pymc_knn fit data.csv --target label`` does the same for any CSV file with a header:
the target column holds the classes (any labels), every other column a numeric covariate.
"""

from __future__ import annotations

import csv
import time
import warnings
from pathlib import Path

import numpy as np

__all__ = ["fit_csv", "read_csv", "ripley_demo"]

PAPER_ERRORS = "0.087 pseudo-likelihood, 0.085 path sampling, 0.084 Moller/perfect sampling"


def fit(
    X,
    y,
    *,
    standardize=True,
    beta_upper=4.0,
    draws=1000,
    tune=1000,
    chains=4,
    cores=2,
    random_seed=None,
):
    """``beta ~ U(0, beta_upper)``, ``k ~ U{1..k_max}``, PottsKNN likelihood, exchange step;
    ``k_max`` by default (:func:`pymc_knn.default_k_max`)."""
    import pymc as pm

    from ._validation import check_positive

    check_positive(beta_upper, "beta_upper")

    from .distributions import PottsKNN
    from .graphs import default_k_max, max_k

    K = default_k_max(len(y), max_k(y))
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, beta_upper)
        k = pm.DiscreteUniform("k", 1, K)
        PottsKNN("y", X=X, beta=beta, k=k, standardize=standardize, observed=y)
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=random_seed,
            progressbar=False,
        )
    return model, idata


def _diagnose(idata) -> bool:
    """Print a line on R-hat and ESS; warn (and return False) when they fall short, or when
    the posterior presses against a bound of its prior."""
    import warnings

    from .diagnostics import (
        MAX_R_HAT,
        MIN_ESS_PER_CHAIN,
        ConvergenceWarning,
        PriorBoundWarning,
        check_convergence,
        check_prior_bounds,
    )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        warnings.simplefilter("always", PriorBoundWarning)
        table = check_convergence(idata, var_names=["beta", "k"])
        check_prior_bounds(idata)
    chains = idata.posterior.sizes["chain"]
    print(
        f"\nconvergence: r_hat <= {table['r_hat'].max():.3f} (want <= {MAX_R_HAT}), "
        f"ess_bulk >= {table['ess_bulk'].min():.0f}, ess_tail >= {table['ess_tail'].min():.0f} "
        f"(want >= {MIN_ESS_PER_CHAIN * chains} for {chains} chains); iterations per draw "
        f"{sorted(set(idata.sample_stats['iterations'].values.ravel().tolist()))}"
    )
    caught = [w for w in caught if issubclass(w.category, (ConvergenceWarning, PriorBoundWarning))]
    for w in caught:
        print(f"WARNING: {w.message}")
        warnings.warn(w.message, w.category, stacklevel=3)
    return not caught


def _report(model, idata, out: Path, feature_names, class_names, X_test=None, y_test=None):
    import arviz as az
    import matplotlib

    matplotlib.use("Agg")

    from .plots import plot_k_posterior, plot_predictive_map
    from .predict import predictive_summary

    out.mkdir(parents=True, exist_ok=True)
    import pandas as pd

    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print(az.summary(idata, var_names=["beta", "k"]))
    _diagnose(idata)
    error = None
    if X_test is not None:
        summary = predictive_summary(idata, X_test, model=model)
        error = float(np.mean(summary["bayes_class"].values != y_test))
        print(
            f"\ntest error on {len(y_test)} points: {error:.3f} "
            f"({int(summary['uncertain'].sum())} in the 95% uncertainty zone)"
        )
    written = []
    with warnings.catch_warnings():
        # ArviZ 0.23's matplotlib backend on matplotlib >= 3.11 (MatplotlibDeprecationWarning,
        # raised in arviz.plots.backends.matplotlib): not this package's call
        warnings.filterwarnings(
            "ignore", message="Passing a dict or None as alias_mapping", category=DeprecationWarning
        )
        axes = az.plot_trace(idata, var_names=["beta", "k"], figsize=(10, 5))
    axes[0, 0].figure.tight_layout()
    written.append(_save(axes[0, 0].figure, out / "trace.png"))
    written.append(_save(plot_k_posterior(idata).figure, out / "k_posterior.png"))
    if len(feature_names) == 2:
        axes = plot_predictive_map(
            idata, model=model, classes=class_names, feature_names=feature_names
        )
        written.append(_save(axes[0].figure, out / "predictive_map.png"))
    print("\nwrote " + ", ".join(str(p) for p in written))
    return error


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def ripley_demo(out="demo-output", seed=2009, draws=1000, tune=1000, chains=4, cores=2) -> float:
    """The README's main job; returns the test error."""
    from . import datasets
    from .classical import knn_error_rates, loo_choose_k

    t0 = time.perf_counter()
    X, y, features, classes = datasets.load_ripley("train")
    X_test, y_test, *_ = datasets.load_ripley("test")
    print(
        f"Ripley's data: {len(y)} training points, {len(y_test)} test points, covariates "
        f"{features}, raw scale as Cucala et al. (2009)"
    )
    print(
        "model: beta ~ U(0, 4), k ~ U{1..125}, y ~ PottsKNN (symmetrised kNN Potts field); "
        f"pm.sample with pk.Exchange, {chains} chains x {draws} draws after {tune} tuning\n"
    )
    model, idata = fit(
        X,
        y,
        standardize=False,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        random_seed=seed,
    )
    error = _report(model, idata, Path(out), features, classes, X_test, y_test)
    k_loo = loo_choose_k(X, y, k_max=125, standardize=False)
    knn = knn_error_rates(X, y, X_test, y_test, [k_loo], standardize=False)[0]
    print(
        f"paper (Cucala et al. 2009, Ripley test set): {PAPER_ERRORS}; classical kNN with the "
        f"leave-one-out k = {k_loo}: {knn:.3f}"
    )
    print(f"total time {time.perf_counter() - t0:.0f} s (including compilation)")
    return error


def read_csv(path, target: str):
    """Covariates, integer labels and names from a CSV file with a header row.

    Returns
    -------
    X : ndarray (n, p)
    y : ndarray (n,) of int, the index of each label in ``classes``
    features : list of str
    classes : ndarray, the sorted distinct labels
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a folder; give the CSV file")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:  # a spreadsheet's BOM is no name
            rows = [r for r in csv.reader(f) if r]
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{path}: not UTF-8 text ({err.reason} at byte {err.start}); save it "
            "as a UTF-8 CSV file"
        ) from None
    if len(rows) < 3:
        raise ValueError(f"{path}: needs a header row and at least two data rows")
    header, data = [h.strip() for h in rows[0]], rows[1:]
    if target not in header:
        raise ValueError(f"{path}: no column {target!r}; the columns are {header}")
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise ValueError(
            f"{path}: the column names {repeated} appear more than once; each "
            "column needs its own name (a repeated target would leak into the "
            "covariates)"
        )
    bad = [i + 2 for i, r in enumerate(data) if len(r) != len(header)]
    if bad:
        raise ValueError(f"{path}: rows {bad[:5]} do not have {len(header)} fields")
    t = header.index(target)
    features = [h for i, h in enumerate(header) if i != t]
    if not features:
        raise ValueError(f"{path}: no covariate columns besides {target!r}")
    X = np.empty((len(data), len(features)))
    for j, col in enumerate(i for i in range(len(header)) if i != t):
        for i, r in enumerate(data):
            try:
                X[i, j] = float(r[col])
            except ValueError:
                raise ValueError(
                    f"{path}: column {header[col]!r} must be numeric; row {i + 2} holds "
                    f"{r[col]!r} (encode categorical covariates as numbers, drop or impute "
                    "missing values)"
                ) from None
    labels = np.array([r[t].strip() for r in data])
    if np.any(labels == ""):
        raise ValueError(f"{path}: the target column {target!r} has empty values")
    classes, y = np.unique(_numeric_if_possible(labels), return_inverse=True)
    return X, y.astype(np.int64), features, classes


def _numeric_if_possible(labels):
    """Labels as numbers when they all are (so that ``1`` and ``1.0`` are one class), whole
    numbers as integers; as the strings they are otherwise."""
    try:
        values = labels.astype(np.float64)
    except ValueError:
        return labels
    if not np.all(np.isfinite(values)):
        return labels
    return values.astype(np.int64) if np.all(values == np.round(values)) else values


def fit_csv(
    path,
    target,
    out="fit-output",
    seed=None,
    draws=1000,
    tune=1000,
    chains=4,
    cores=2,
    standardize=True,
    beta_upper=4.0,
):
    """Fit the probabilistic kNN to a CSV file and write its summary and plots.

    Prints ``az.summary``, a line on R-hat and the bulk and tail ESS of ``beta`` and ``k``
    against PyMC's thresholds (and a ``WARNING`` line, with a
    :class:`pymc_knn.ConvergenceWarning`, when they fall short), and writes the trace plot,
    the posterior of ``k`` and, with two covariates, the predictive map into ``out``.

    Returns
    -------
    arviz.InferenceData
        The posterior draws of ``pm.sample``.
    """
    from ._validation import check_covariates

    X, y, features, classes = read_csv(path, target)
    X = check_covariates(X, f"the covariates of {path}")
    if classes.size < 2:
        raise ValueError(
            f"{path}: the target {target!r} holds a single class {classes[0]!r}; "
            "classification needs at least two"
        )
    print(
        f"{path}: {len(y)} points, covariates {features}, classes "
        f"{dict(zip(classes.tolist(), np.bincount(y).tolist()))}\n"
    )
    model, idata = fit(
        X,
        y,
        standardize=standardize,
        beta_upper=beta_upper,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        random_seed=seed,
    )
    _report(model, idata, Path(out), features, [str(c) for c in classes])
    return idata
