"""Auxiliary samplers of the Potts field ``f(z | beta, theta) ∝ exp(beta E(z))``.

Friendly wrappers around the numba kernels of :mod:`pymc_knn.kernels`: they check their input,
copy the starting labels and return a new array. Every draw is reproducible from the
``numpy.random.Generator`` passed in.

* :func:`gibbs` — systematic-scan Gibbs sweeps, any number of classes.
* :func:`swendsen_wang` — Swendsen-Wang cluster sweeps, any number of classes.
* :func:`cftp` — exact draws by monotone coupling from the past, two classes.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from ._validation import check_beta, check_class_weights, check_labels, check_n_classes
from .graphs import Coupling
from ._progress import progress
from .kernels import gibbs_sweeps, swendsen_wang_sweeps
from .kernels.cftp import cftp_attempt, cftp_fallback, cftp_look_backs
from .kernels.gibbs import weighted_degrees
from .terms import CFTP_MAX_SWEEPS

CFTP_PROGRESS_SWEEPS = 64
"""Look-backs of :func:`cftp` from which a progress bar is shown (shorter ones are quick)."""

__all__ = ["Draw", "cftp", "gibbs", "swendsen_wang"]


class Draw(NamedTuple):
    """An auxiliary draw: labels, sweeps used, and whether it is exact."""

    labels: np.ndarray
    sweeps: int
    exact: bool


def _prepare(coupling, beta, start, n_classes, class_weights, rng):
    if not isinstance(coupling, Coupling):
        raise TypeError(
            f"coupling must be a Coupling (from graph.coupling(...)), got {type(coupling).__name__}"
        )
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator, e.g. np.random.default_rng(seed)")
    G = check_n_classes(n_classes)
    z = check_labels(start, coupling.n, G).copy()
    return check_beta(beta), z, check_class_weights(class_weights, G)


def _check_sweeps(sweeps, name="sweeps") -> int:
    if isinstance(sweeps, bool) or not isinstance(sweeps, (int, np.integer)) or sweeps < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {sweeps!r}")
    return int(sweeps)


def gibbs(
    coupling: Coupling,
    beta: float,
    start,
    n_classes: int,
    rng: np.random.Generator,
    sweeps: int = 1,
    class_weights=None,
) -> np.ndarray:
    """Labels after ``sweeps`` systematic-scan Gibbs sweeps from ``start``.

    Parameters
    ----------
    coupling : Coupling
        From ``graph.coupling(k)`` or ``graph.coupling(sigma)``.
    beta : float
        Interaction parameter, ``>= 0``.
    start : array_like of int
        Starting labels in ``0..n_classes-1``.
    n_classes : int
        ``G >= 2``.
    rng : numpy.random.Generator
    sweeps : int
    class_weights : array_like, optional
        Unbalanced-sampling weights ``a_g`` (default all 1).
    """
    beta, z, a = _prepare(coupling, beta, start, n_classes, class_weights, rng)
    gibbs_sweeps(
        coupling.indptr, coupling.indices, coupling.data, z, beta, a, _check_sweeps(sweeps), rng
    )
    return z


def swendsen_wang(
    coupling: Coupling,
    beta: float,
    start,
    n_classes: int,
    rng: np.random.Generator,
    sweeps: int = 1,
    class_weights=None,
) -> np.ndarray:
    """Labels after ``sweeps`` Swendsen-Wang sweeps from ``start`` (same parameters as :func:`gibbs`)."""
    beta, z, a = _prepare(coupling, beta, start, n_classes, class_weights, rng)
    swendsen_wang_sweeps(
        coupling.src,
        coupling.dst,
        coupling.weight,
        coupling.uniform_weight,
        z,
        beta,
        a,
        _check_sweeps(sweeps),
        rng,
    )
    return z


def cftp(
    coupling: Coupling,
    beta: float,
    start,
    rng: np.random.Generator,
    max_sweeps: int = CFTP_MAX_SWEEPS,
    class_weights=None,
    progressbar: bool = True,
) -> Draw:
    """An exact draw for two classes by monotone coupling from the past.

    Parameters
    ----------
    coupling, beta, rng, class_weights
        As for :func:`gibbs`.
    start : array_like of int
        Used only if the bounding chains do not meet within ``max_sweeps``: the draw is then the
        state at time 0 of the chain started from ``start``, which is approximate.
    max_sweeps : int
        Bound on the look-back (the work is at most about ``4 * max_sweeps`` sweeps).
    progressbar : bool, default=True
        Show a progress bar over the look-backs tried (1, 2, 4, ... sweeps) from the 64-sweep one
        on, in a terminal or notebook only (transient): near the ordering transition a draw can
        take long. The draw does not depend on it.

    Returns
    -------
    Draw
        ``labels``; ``sweeps``, the look-back at which the chains met (or ``max_sweeps``); and
        ``exact``, False if they did not meet.
    """
    beta, z, a = _prepare(coupling, beta, start, 2, class_weights, rng)
    max_sweeps = _check_sweeps(max_sweeps, "max_sweeps")
    if max_sweeps < 1:
        raise ValueError("max_sweeps must be at least 1")
    seed = int(rng.integers(0, 2**63))
    csr = (coupling.indptr, coupling.indices, coupling.data)
    deg = weighted_degrees(coupling.indptr, coupling.data)
    up, lo = np.empty_like(z), np.empty_like(z)
    c_up, c_lo = np.empty(z.size), np.empty(z.size)
    look_backs = cftp_look_backs(max_sweeps)  # those of kernels.cftp.cftp_potts2: the same draw
    quick = [T for T in look_backs if T < CFTP_PROGRESS_SWEEPS]
    slow = progress(
        look_backs[len(quick) :], len(look_backs) - len(quick), "CFTP look-back", progressbar
    )
    try:
        for T in itertools.chain(quick, slow):
            if cftp_attempt(*csr, deg, beta, a, T, seed, up, lo, c_up, c_lo):
                return Draw(up, T, True)
    finally:
        slow.close()  # the bar goes when the chains meet
    cftp_fallback(*csr, deg, z, beta, a, look_backs[-1], seed)
    return Draw(z, look_backs[-1], False)
