"""Where the Potts field freezes: the mean-energy curve and ``beta_max``.

Above a data-dependent value of ``beta`` the field ``f(z | beta, theta) ∝ exp(beta E(z))`` is
"all black or all white" (Cucala et al. 2009, section 3): almost every pair of neighbours has equal
labels. The prior of ``beta`` is therefore bounded by a ``beta_max`` below that phase transition,
found, as in their Fig. 5, from Monte Carlo estimates of ``E_beta[E(z)]`` over a grid of ``beta``.

The curve is reported relative to ``E_max``, the energy of an all-equal labelling,
``max_g a_g * sum_e weight_e`` (the total coupling weight when all class weights are 1), so it
rises from about ``1/G`` at ``beta = 0`` (exactly ``sum_g a_g / (G^2 max_g a_g)``) to 1 when the
field freezes. For the symmetrised kNN graph ``E_max = n`` and the curve is ``E_beta[E(z)] / n``.

Measured on Ripley's training set (``KNNGraph(X, k_max=125)``, G = 2, one Swendsen-Wang chain of
200 + 2 000 sweeps per point of a grid of step 0.05; ``python -m pymc_knn.phase`` reproduces the
table; seeds 2009 and 7 agree within one grid step, and the largest Monte Carlo standard error
along a curve is about 0.004), the curve first reaches

=======  ======  ======  ======  ======
``k``    0.90    0.95    0.98    0.99
=======  ======  ======  ======  ======
1        1.55    2.15    3.05    3.75
13       1.75    2.05    2.50    2.85
125      1.65    2.00    2.50    2.80
=======  ======  ======  ======  ======

(observed labels: ``E(y) / n`` = 0.87, 0.81 and 0.63 for ``k`` = 1, 13, 125). For ``k = 1`` the
graph is a forest of small trees whose mutual-neighbour pairs (coupling 2) freeze early and single
edges (coupling 1) late, hence its slow approach to 1. Cucala et al. used ``beta_max = 4`` for
every ``k`` in ``1..125``, and the plug-in estimate ``(k, beta) = (13, 1.45)`` (their section 3.4).

The default ``tol = 0.01`` ("frozen" when 99 % of the coupling weight joins equal labels) gives
3.75 for ``k = 1`` and 2.8-2.85 for ``k = 13, 125``: the closest to their 4 of the measured levels
and well above 1.45, whereas 0.90 and 0.95 (1.55-2.2) sit right next to it. A much smaller
``tol`` needs grids far beyond 4 for small ``k`` and is decided by Monte Carlo noise, since the
curve is then nearly flat.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import xarray as xr

from ._progress import progress
from ._validation import check_class_weights, check_n_classes, check_positive
from .graphs import Coupling, NeighbourGraph
from .samplers import swendsen_wang

__all__ = ["DEFAULT_BETAS", "DEFAULT_TOL", "N_BATCHES", "beta_max", "mean_energy_curve"]

DEFAULT_TOL = 0.01
DEFAULT_BETAS = np.round(np.arange(0, 101) * 0.1, 10)
DEFAULT_BETAS.setflags(write=False)
N_BATCHES = 20


# ---------------------------------------------------------------------------- input checks


def _check_graph_theta(graph, theta):
    """``theta`` as ``k`` (an int in ``1..k_max``) or ``sigma`` (> 0), or a ``ValueError``."""
    if not isinstance(graph, NeighbourGraph):
        raise TypeError(f"graph must be a KNNGraph or DistanceGraph, got {type(graph).__name__}")
    if np.ndim(theta) != 0:
        raise ValueError(f"theta must be a single {graph.parameter}, got {theta!r}")
    if graph.parameter == "k":
        return graph.check_k(theta)
    return check_positive(theta, graph.parameter)


def _check_betas(betas) -> np.ndarray:
    """A non-empty, strictly increasing 1-D grid of finite ``beta >= 0``."""
    b = np.asarray(betas, dtype=np.float64)
    if b.ndim != 1:
        raise ValueError(f"betas must be a 1-D grid, got shape {b.shape}")
    if b.size == 0:
        raise ValueError("betas is empty: give at least one beta, e.g. np.linspace(0, 4, 41)")
    if not np.all(np.isfinite(b)) or b.min() < 0:
        raise ValueError(f"betas must be finite and >= 0, got min {b.min()!r}, max {b.max()!r}")
    if np.any(np.diff(b) <= 0):
        raise ValueError("betas must be strictly increasing (a grid without repeats)")
    return b


def _check_count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_tol(tol) -> float:
    t = float(tol)
    if not 0.0 < t < 1.0:
        raise ValueError(f"tol must be in (0, 1): the curve is compared with 1 - tol; got {tol!r}")
    return t


def _thetas(theta) -> list:
    values = np.atleast_1d(np.asarray(theta)).ravel().tolist()
    if not values:
        raise ValueError("theta is empty: give one k or sigma, or a sequence of them")
    return values


# ---------------------------------------------------------------------------- Monte Carlo


def _batch_means_se(trace: np.ndarray, n_batches: int = N_BATCHES) -> float:
    """Monte Carlo standard error of the mean of a correlated trace, by batch means."""
    size = trace.size // n_batches
    means = trace[: size * n_batches].reshape(n_batches, size).mean(axis=1)
    return float(means.std(ddof=1) / np.sqrt(n_batches))


def _energy_trace(
    coupling: Coupling,
    beta: float,
    G: int,
    a: np.ndarray,
    sweeps: int,
    burn: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``E(z)`` after each of ``sweeps`` Swendsen-Wang sweeps, after ``burn`` from random labels."""
    z = rng.integers(0, G, coupling.n)
    z = swendsen_wang(coupling, beta, z, G, rng, sweeps=burn, class_weights=a)
    trace = np.empty(sweeps)
    for s in range(sweeps):
        z = swendsen_wang(coupling, beta, z, G, rng, class_weights=a)
        trace[s] = coupling.energy(z, a)
    return trace


def _curve_points(
    coupling, betas, G, a, sweeps, burn, rng, progressbar=False, description="mean energy"
) -> Iterator[tuple[float, float]]:
    """``(E_beta[E(z)] / E_max, its Monte Carlo standard error)`` for each beta, lazily."""
    e_max = float(a.max() * coupling.weight.sum())
    for beta in progress(betas, len(betas), description, progressbar):
        trace = _energy_trace(coupling, float(beta), G, a, sweeps, burn, rng) / e_max
        yield float(trace.mean()), _batch_means_se(trace)


def mean_energy_curve(
    graph: NeighbourGraph,
    theta,
    betas,
    *,
    n_classes: int = 2,
    class_weights=None,
    sweeps: int = 300,
    burn: int = 50,
    random_seed=None,
    progressbar: bool = True,
) -> xr.DataArray:
    """Monte Carlo ``E_beta[E(z)] / E_max`` over a grid of ``beta`` (Cucala et al. 2009, Fig. 5).

    At each ``beta`` one Swendsen-Wang chain starts from uniformly random labels, runs ``burn``
    sweeps, and averages ``E(z)`` over the next ``sweeps``.

    Parameters
    ----------
    graph : KNNGraph or DistanceGraph
    theta : int or float
        ``k`` for a :class:`~pymc_knn.KNNGraph` (in ``1..k_max``), ``sigma > 0`` for a
        :class:`~pymc_knn.DistanceGraph`.
    betas : array_like
        Strictly increasing grid of ``beta >= 0``.
    n_classes : int
        ``G >= 2``.
    class_weights : array_like, optional
        Unbalanced-sampling weights ``a_g`` (default all 1).
    sweeps : int
        Sweeps averaged per beta; at least ``N_BATCHES`` (20).
    burn : int
        Sweeps discarded per beta.
    random_seed : int, numpy.random.Generator or None
        Makes the curve reproducible.
    progressbar : bool, default=True
        Show a progress bar over the grid (transient: gone when the curve is done).

    Returns
    -------
    xarray.DataArray
        Named ``"mean_energy"``, dim ``"beta"``: ``E_beta[E(z)] / E_max``, where ``E_max =
        max_g a_g * sum_e weight_e`` is the energy of an all-equal labelling, so the curve runs
        from about ``1/G`` to 1. Coordinates: ``beta``; ``mcse`` (along ``beta``), the Monte
        Carlo standard error by batch means over ``N_BATCHES`` batches; and the scalar
        ``graph.parameter`` (``k`` or ``sigma``) holding ``theta``. ``attrs`` hold ``e_max``,
        ``n_classes``, ``sweeps`` and ``burn``. The ``mcse`` coordinate is carried through
        arithmetic unchanged, so rescale it yourself if you rescale the curve.

    See Also
    --------
    beta_max : where the curve reaches ``1 - tol``.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3 (the "all black or all white" phase above beta_max) and Fig. 5
       (the mean energy against beta, in section 3.3).
    .. [2] Swendsen, R. H. and Wang, J.-S. (1987). Nonuniversal critical dynamics in Monte Carlo
       simulations. *Physical Review Letters* 58(2), 86-88.

    Examples
    --------
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, *_ = pk.datasets.load_ripley("train")
    >>> graph = pk.KNNGraph(X, k_max=13)
    >>> curve = pk.mean_energy_curve(graph, 13, np.linspace(0, 4, 9), n_classes=2,
    ...                              random_seed=1, progressbar=False)
    >>> curve.dims
    ('beta',)
    >>> float(curve[0]) < 0.6 and float(curve[-1]) > 0.99    # from about 1/G to frozen
    True
    """
    theta = _check_graph_theta(graph, theta)
    betas = _check_betas(betas)
    G = check_n_classes(n_classes)
    a = check_class_weights(class_weights, G)
    sweeps = _check_count(sweeps, "sweeps", N_BATCHES)
    burn = _check_count(burn, "burn", 0)
    coupling = graph.coupling(theta)
    rng = np.random.default_rng(random_seed)
    mean, se = np.array(
        list(_curve_points(coupling, betas, G, a, sweeps, burn, rng, progressbar))
    ).T
    return xr.DataArray(
        mean,
        dims="beta",
        name="mean_energy",
        coords={"beta": betas, "mcse": ("beta", se), graph.parameter: theta},
        attrs={
            "e_max": float(a.max() * coupling.weight.sum()),
            "n_classes": G,
            "sweeps": sweeps,
            "burn": burn,
            "long_name": "E_beta[E(z)] / E_max (Monte Carlo, Swendsen-Wang)",
        },
    )


# ---------------------------------------------------------------------------- beta_max


def _first_crossing(
    coupling, betas, level, G, a, sweeps, burn, rng, progressbar=False, description="beta_max"
) -> tuple[float | None, float]:
    """The first beta where the curve reaches ``level`` (or None), and the highest value seen."""
    highest = -np.inf
    points = _curve_points(coupling, betas, G, a, sweeps, burn, rng, progressbar, description)
    for beta, (mean, _) in zip(betas, points):
        highest = max(highest, mean)
        if mean >= level:
            return float(beta), highest
    return None, highest


def beta_max(
    graph: NeighbourGraph,
    theta,
    *,
    n_classes: int = 2,
    tol: float = DEFAULT_TOL,
    betas=None,
    class_weights=None,
    sweeps: int = 300,
    burn: int = 50,
    random_seed=None,
    progressbar: bool = True,
) -> float:
    """The smallest ``beta`` of a grid at which the field is frozen ("all black or all white").

    That is the first ``beta`` where :func:`mean_energy_curve` reaches ``1 - tol``: on average a
    fraction ``tol`` of the coupling weight joins unequal labels. Use it as the upper bound of a
    prior on ``beta`` (Cucala et al. 2009, section 3). The curve is computed in increasing
    ``beta`` and stops at the first crossing.

    Parameters
    ----------
    graph : KNNGraph or DistanceGraph
    theta : int, float or sequence of them
        ``k`` or ``sigma``. With several values the result is the smallest crossing over them:
        the most conservative bound, below which the field is not frozen for any of them. (Small
        ``k`` freeze late, so for ``k`` in ``1..125`` on Ripley this is set by the larger ``k``:
        about 2.85 for ``[1, 13, 125]``; call it per value to see each.)
    n_classes : int
        ``G >= 2``.
    tol : float
        In ``(0, 1)``. The default 0.01 was chosen on Ripley's training set, where it gives
        about 3.75 for ``k = 1`` and 2.85 for ``k = 13`` and ``k = 125`` (Cucala et al. used 4);
        see the table in the module docstring. Smaller ``tol`` gives a larger ``beta_max``.
    betas : array_like, optional
        Strictly increasing grid of ``beta >= 0``; default ``0, 0.1, ..., 10`` (``DEFAULT_BETAS``).
        The result is only as fine as the grid.
    class_weights : array_like, optional
        Unbalanced-sampling weights ``a_g``.
    sweeps, burn, random_seed
        As for :func:`mean_energy_curve`. Each value of ``theta`` gets its own stream spawned from
        ``random_seed``, so its curve does not depend on the other values or on ``tol``.
    progressbar : bool, default=True
        Show a progress bar over the grid, per value of ``theta`` (transient; the curve stops
        at the first crossing, so the bar may end early).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If no curve reaches ``1 - tol`` on the grid (extend the grid), or on invalid input.

    Notes
    -----
    Near 1 the curve is flat, so Monte Carlo noise moves the first crossing by a grid step or
    two, and rather earlier than later; more ``sweeps`` steady it. With the defaults on Ripley's
    training set (seeds 1-3) it gives 3.7-3.8 for ``k = 1``, 2.9 for ``k = 13`` and
    ``k = 125``, and 2.8-2.9 for ``[1, 13, 125]``, in about 1-6 s each.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.

    Examples
    --------
    >>> import pymc_knn as pk
    >>> X, *_ = pk.datasets.load_ripley("train")
    >>> bmax = pk.beta_max(pk.KNNGraph(X, k_max=125), [1, 13, 125], random_seed=1)
    >>> 2.5 <= bmax <= 3.2
    True
    """
    thetas = [_check_graph_theta(graph, t) for t in _thetas(theta)]
    tol = _check_tol(tol)
    grid = _check_betas(DEFAULT_BETAS if betas is None else betas)
    G = check_n_classes(n_classes)
    a = check_class_weights(class_weights, G)
    sweeps = _check_count(sweeps, "sweeps", N_BATCHES)
    burn = _check_count(burn, "burn", 0)
    rngs = np.random.default_rng(random_seed).spawn(len(thetas))
    best, highest = None, -np.inf
    for t, rng in zip(thetas, rngs):
        stop = grid if best is None else grid[grid < best]
        found, top = _first_crossing(
            graph.coupling(t),
            stop,
            1.0 - tol,
            G,
            a,
            sweeps,
            burn,
            rng,
            progressbar,
            f"beta_max, {graph.parameter} = {t}",
        )
        best, highest = (found if found is not None else best), max(highest, top)
    if best is None:
        raise ValueError(
            f"the mean energy reaches only {highest:.4f} < 1 - tol = {1 - tol:g} on the beta grid "
            f"(up to beta = {grid[-1]:g}) for {graph.parameter} = {_show(thetas)}: extend the "
            "grid to larger beta (betas=...) or raise tol"
        )
    return best


def _show(values: Sequence) -> str:
    return str(values[0]) if len(values) == 1 else str(list(values))


# ---------------------------------------------------------------------------- measurement


def _ripley_table(
    levels=(0.90, 0.95, 0.98, 0.99), ks=(1, 13, 125), sweeps=2000, step=0.05, seed=2009
) -> None:
    """Print where the Ripley curves cross each level (the table of the module docstring)."""
    from . import datasets
    from .graphs import KNNGraph

    X, _, _, _ = datasets.load_ripley("train")
    graph = KNNGraph(X, k_max=125)
    betas = np.round(np.arange(0, int(round(8 / step)) + 1) * step, 10)
    print("k     " + "  ".join(f"{lv:5.2f}" for lv in levels))
    for k in ks:
        curve = mean_energy_curve(
            graph, k, betas, sweeps=sweeps, burn=200, random_seed=seed, progressbar=False
        )
        cross = [
            betas[np.argmax(curve.values >= lv)] if (curve.values >= lv).any() else np.nan
            for lv in levels
        ]
        print(
            f"{k:<5d} "
            + "  ".join(f"{c:5.2f}" for c in cross)
            + f"   (max mcse {float(curve.mcse.max()):.4f})"
        )


if __name__ == "__main__":
    _ripley_table()
