"""Benchmark data sets of the papers, shipped with the package.

Every loader returns a :class:`Dataset`: covariates ``X`` as a float array ``(n, p)``, labels
``y`` as an int array with values ``0..G-1``, and the feature and class names. A ``Dataset``
unpacks like a tuple: ``X, y, feature_names, class_names = load_ripley("train")``.

The files and their licences are listed in ``pymc_knn/datasets/data/README.md``.
"""

from __future__ import annotations

import csv
from importlib import resources
from typing import NamedTuple

import numpy as np

__all__ = [
    "Dataset",
    "load_crabs",
    "load_glass",
    "load_iris",
    "load_pima",
    "load_ripley",
    "load_wine",
]


class Dataset(NamedTuple):
    """A classification data set: covariates, integer labels and names."""

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    class_names: tuple[str, ...]


def _read_csv(filename: str) -> tuple[list[str], list[list[str]]]:
    text = resources.files(__package__).joinpath("data", filename).read_text()
    rows = list(csv.reader(text.splitlines()))
    return rows[0], rows[1:]


def _make(features, labels, feature_names, class_names) -> Dataset:
    index = {name: g for g, name in enumerate(class_names)}
    X = np.asarray(features, dtype=np.float64)
    y = np.array([index[label] for label in labels], dtype=np.int64)
    return Dataset(X, y, tuple(feature_names), tuple(class_names))


def _check_split(split: str) -> str:
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    return "tr" if split == "train" else "te"


def _load_mass(filename, feature_cols, label_of, class_names) -> Dataset:
    """Read an Rdatasets export of a MASS data set (first column: R's row names)."""
    header, rows = _read_csv(filename)
    cols = [header.index(c) for c in feature_cols]
    features = [[r[c] for c in cols] for r in rows]
    labels = [label_of(dict(zip(header, r))) for r in rows]
    return _make(features, labels, feature_cols, class_names)


def load_ripley(split: str = "train") -> Dataset:
    """Ripley's (1994) synthetic two-class data: 250 training and 1000 test points.

    Parameters
    ----------
    split : {"train", "test"}

    Returns
    -------
    Dataset
        Two covariates ``xs, ys``; classes ``"0", "1"`` (MASS's ``yc``).
    """
    tag = _check_split(split)
    return _load_mass(f"synth.{tag}.csv", ["xs", "ys"], lambda r: r["yc"], ("0", "1"))


def load_pima(split: str = "train") -> Dataset:
    """Pima Indian diabetes data, the 200 / 332 split of Cucala et al. (2009), section 4.

    The training set (MASS ``Pima.tr``) has 200 women, 68 diagnosed with diabetes; the test set
    (``Pima.te``) 332, of whom 109 were diagnosed.

    Parameters
    ----------
    split : {"train", "test"}

    Returns
    -------
    Dataset
        Seven covariates; classes ``"No", "Yes"`` (diabetes).
    """
    tag = _check_split(split)
    features = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]
    return _load_mass(f"Pima.{tag}.csv", features, lambda r: r["type"], ("No", "Yes"))


GLASS_TYPES = ("WinF", "WinNF", "Veh", "Con", "Tabl", "Head")
GLASS_COALESCED = {
    "WinF": "WinF",
    "WinNF": "WinNF",
    "Veh": "Veh",
    "Con": "Other",
    "Tabl": "Other",
    "Head": "Other",
}


def load_glass(coalesce: bool = True) -> Dataset:
    """Forensic glass fragments (MASS ``fgl``): 214 fragments, nine covariates.

    Parameters
    ----------
    coalesce : bool, default True
        Coalesce the six glass types into the four classes of Ripley (1994) used in Cucala et al.
        (2009), section 4: window float glass ``WinF`` (70), window non-float glass ``WinNF``
        (76), vehicle window glass ``Veh`` (17), and ``Other`` = containers ``Con`` (13) +
        tableware ``Tabl`` (9) + vehicle headlamps ``Head`` (29), 51 in all. With
        ``coalesce=False`` the six types are the classes, in the order ``WinF, WinNF, Veh, Con,
        Tabl, Head``.

    Returns
    -------
    Dataset
        Covariates ``RI, Na, Mg, Al, Si, K, Ca, Ba, Fe``.

    Notes
    -----
    Cucala et al. report a random split of 89 training and 96 test fragments, 185 in all, not
    214; the paper does not say which 29 fragments were left out (29 is the number of
    headlamp fragments). The loader returns all 214.
    """
    features = ["RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe"]
    if coalesce:
        classes = ("WinF", "WinNF", "Veh", "Other")
        return _load_mass("fgl.csv", features, lambda r: GLASS_COALESCED[r["type"]], classes)
    return _load_mass("fgl.csv", features, lambda r: r["type"], GLASS_TYPES)


def load_crabs() -> Dataset:
    """Leptograpsus crabs (MASS ``crabs``): 200 crabs, five morphological measurements.

    Returns
    -------
    Dataset
        Covariates ``FL, RW, CL, CW, BD`` (mm); four classes, species x sex: ``B-F, B-M, O-F,
        O-M`` (blue or orange, female or male), 50 crabs each, as in Friel and Pettitt (2011).
    """
    features = ["FL", "RW", "CL", "CW", "BD"]
    classes = ("B-F", "B-M", "O-F", "O-M")
    return _load_mass("crabs.csv", features, lambda r: f"{r['sp']}-{r['sex']}", classes)


def _load_uci(filename: str, class_names: tuple[str, ...]) -> Dataset:
    header, rows = _read_csv(filename)
    return _make([r[:-1] for r in rows], [r[-1] for r in rows], header[:-1], class_names)


def load_iris() -> Dataset:
    """Fisher's iris data: 150 flowers, four covariates (cm), three species of 50."""
    return _load_uci("iris.csv", ("setosa", "versicolor", "virginica"))


def load_wine() -> Dataset:
    """UCI wine recognition data: 178 wines, 13 chemical covariates, three cultivars."""
    return _load_uci("wine.csv", ("class_0", "class_1", "class_2"))
