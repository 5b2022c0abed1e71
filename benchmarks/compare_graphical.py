"""The graphical classifier against kNN and pkNN on the shipped data sets (issue 15, docs).

The protocol and splits of the reproduction of Friel and Pettitt (2011), Table 2
(``reproduce.py``, ``friel_table``): Pima, forensic glass, iris, crabs and wine, about 25% of
the points for training, 10 random splits drawn in the same order from the same seed, so the
kNN column here must equal that table's and its pkNN column (docs/reproductions.md) is on the
same splits. Covariates standardised with the training statistics. Prints a Markdown table of
test error rates, mean (sd) over the splits.

Run::

    PYTHONPATH=. python benchmarks/compare_graphical.py
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np


def _reproduce():
    spec = importlib.util.spec_from_file_location(
        "reproduce", Path(__file__).with_name("reproduce.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(splits: int = 10) -> None:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import pymc_knn as pk

    rep = _reproduce()
    rng = np.random.default_rng(2011)
    models = {
        "graphical BMA": lambda s: pk.GraphicalPredictiveClassifier(random_seed=s),
        "complete graph": lambda s: pk.GraphicalPredictiveClassifier("complete"),
    }
    rows = []
    t0 = time.perf_counter()
    for name, (X, y) in rep._friel_data().items():
        errors: dict[str, list[float]] = {"kNN": [], **{m: [] for m in models}}
        for split in range(splits):
            train, test = rep._quarter_split(rng, y)
            Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
            k = pk.loo_choose_k(Xtr, ytr)
            errors["kNN"].append(float(pk.knn_error_rates(Xtr, ytr, Xte, yte, [k])[0]))
            for m, make in models.items():
                clf = make_pipeline(StandardScaler(), make(split)).fit(Xtr, ytr)
                errors[m].append(float(np.mean(clf.predict(Xte) != yte)))
        rows.append(
            f"| {name} ({X.shape[1]} features) | "
            + " | ".join(f"{np.mean(e):.3f} ({np.std(e):.3f})" for e in errors.values())
            + " |"
        )
    print("| data set | kNN | graphical BMA | complete graph |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n({time.perf_counter() - t0:.0f} s in all)")


if __name__ == "__main__":
    main()
