"""Input checks shared by the public functions: clear errors, never silent coercion."""

from __future__ import annotations

import numpy as np


def kernel_array(a, dtype=np.float64) -> np.ndarray:
    """``a`` as a C-contiguous, writeable array of ``dtype``, copied only when it is not one.

    numba compiles a kernel once per type signature, and read-only (a memory map, a PyTensor
    constant, a broadcast) and strided (a column slice) arrays are types of their own: passed
    as they come, they compiled the same kernels a second time, 2-9 s each on a cold cache.
    """
    # asarray first: a subclass (a masked array of observed labels) becomes a plain array, as before
    return np.require(np.asarray(a, dtype=dtype), requirements=("C", "W"))


def check_covariates(X, name: str = "X", min_rows: int = 2) -> np.ndarray:
    """Return ``X`` as a C-contiguous, writeable float64 array ``(n, p)`` (:func:`kernel_array`)
    or raise ``ValueError``."""
    try:
        arr = np.asarray(X)
    except ValueError as err:  # rows of different lengths
        raise ValueError(f"{name} must be a 2-D array (n_points, n_features): {err}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} must hold numbers, got dtype {arr.dtype}; encode categorical covariates "
            "as numbers first"
        )
    if arr.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D (n_points, n_features), got shape {arr.shape}; "
            "use X.reshape(-1, 1) for a single feature"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_points, n_features), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no columns (shape {arr.shape})")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} points, got {arr.shape[0]}")
    arr = kernel_array(arr)
    bad = ~np.isfinite(arr)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        kind = "NaN" if np.isnan(arr[bad]).any() else "inf"
        raise ValueError(
            f"{name} contains {kind} values ({bad.sum()} entries, in rows {rows[:5].tolist()}"
            f"{' ...' if rows.size > 5 else ''}); drop or impute them first"
        )
    return arr


def check_labels(y, n: int | None = None, n_classes: int | None = None) -> np.ndarray:
    """Return labels as an int64 array with values in ``0..G-1`` or raise ``ValueError``.

    Parameters
    ----------
    y : array_like
        Integer labels (floats are accepted only when every value is a whole number).
    n : int, optional
        The required number of labels.
    n_classes : int, optional
        ``G``; when omitted it is ``max(y) + 1``.
    """
    arr = np.asarray(y)
    if arr.dtype.kind in "USO":
        kind = "objects" if arr.dtype.kind == "O" else "strings"
        example = arr.flat[0] if arr.size else None
        raise ValueError(
            f"labels must be integers 0..G-1, got {kind} (e.g. {example!r}); encode them first, "
            "for example `classes, y = np.unique(labels, return_inverse=True)`"
        )
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError(f"labels must be integers 0..G-1, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"got {arr.shape[0]} labels for {n} points; they must match")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError("labels must be whole numbers 0..G-1; got non-integer values")
    labels = arr.astype(np.int64)
    if labels.size and labels.min() < 0:
        raise ValueError(
            f"labels must be in 0..G-1, got {labels.min()} (labels such as -1 / +1: encode "
            "them first, for example `classes, y = np.unique(labels, return_inverse=True)`)"
        )
    G = int(labels.max()) + 1 if n_classes is None and labels.size else n_classes
    if G is not None and labels.size and labels.max() >= G:
        raise ValueError(f"labels must be in 0..{G - 1} for {G} classes, got {labels.max()}")
    return labels


def check_n_classes(n_classes) -> int:
    """``G`` must be an integer of at least 2."""
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    return int(n_classes)


def check_class_weights(class_weights, n_classes: int) -> np.ndarray:
    """Unbalanced-sampling weights ``a_g`` (Cucala et al. 2009, section 2.2): positive, length G."""
    if class_weights is None:
        return np.ones(n_classes)
    a = kernel_array(class_weights)
    if a.shape != (n_classes,):
        raise ValueError(
            f"class_weights must have one weight per class ({n_classes}), got shape {a.shape}"
        )
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"class_weights must be finite and positive, got {a.tolist()}")
    return a


def as_float(value, name: str, requirement: str) -> float:
    """``value`` as a Python float, or a ``ValueError`` naming ``name`` and ``requirement``."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be {requirement}, got the string {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {requirement}, got {value!r}") from None


def check_positive(value, name: str) -> float:
    """A finite, strictly positive scalar."""
    v = as_float(value, name, "finite and > 0")
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def check_beta(beta) -> float:
    """beta >= 0, finite."""
    b = as_float(beta, "beta", "finite and >= 0")
    if not np.isfinite(b) or b < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
    return b


def check_count(value, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (a whole float is accepted; bools and strings are not)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    if not ok or not float(value).is_integer() or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_flag(value, name: str) -> bool:
    """``True`` or ``False`` (not a string such as ``"no"``, which Python reads as true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_labels_and_weights(y, n: int, class_weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Labels and class weights that agree: ``G`` is ``len(class_weights)`` when given."""
    labels = check_labels(y, n)
    G = max(int(labels.max()) + 1, 2) if class_weights is None else len(class_weights)
    return check_labels(labels, n, G), check_class_weights(class_weights, G)


def working_memory_bytes(working_memory) -> int:
    """``working_memory`` (MiB) in bytes; ``None``: scikit-learn's ``working_memory`` setting."""
    if working_memory is None:
        import sklearn

        working_memory = sklearn.get_config()["working_memory"]
    ok = (
        isinstance(working_memory, (int, float, np.integer, np.floating))
        and not isinstance(working_memory, bool)
        and np.isfinite(working_memory)
        and working_memory > 0
    )
    if not ok:
        raise ValueError(
            f"working_memory must be a positive number of MiB (default scikit-learn's "
            f"working_memory setting, 1024), got {working_memory!r}"
        )
    return int(working_memory * 2**20)
