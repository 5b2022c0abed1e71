"""The normalising constant ``log Z(beta, theta)`` on a grid, by path sampling.

Path sampling (thermodynamic integration; Gelman and Meng 1998, used by Cucala et al. 2009,
section 3.3) rests on ``d log Z / d beta = E_beta[E(z)]``: with ``Z(0, theta) = G^n`` (every
labelling has weight ``exp(0) = 1``, whatever the class weights),

    log Z(beta, theta) = n log G + int_0^beta E_u[E(z)] du.

The mean energy is estimated by two Swendsen-Wang chains per ``theta``, one climbing the beta
grid and one descending it, each warm-started at each beta from the state the previous one left
(:func:`pymc_knn.kernels.path.energy_path`; in threads, ``energy_path_nogil``), and the
integral is taken by the trapezoid rule with its Euler-Maclaurin end correction,
``h^2 / 12 (E'(a) - E'(b))`` per interval, where the slope of the curve is the variance of the
energy, ``d E_beta[E] / d beta = Var_beta[E]``, estimated from the same chain. That is the integral of the cubic Hermite interpolant of the energy curve: its
error is ``O(h^4)``, and the size of the correction, the trapezoid rule's own error estimate, is
reported as a bound (``quad_error``).
"""

from __future__ import annotations

import hashlib
import os
import warnings
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import numpy as np
import xarray as xr

from ._model_source import constant_theta, is_model, model_term
from ._validation import check_class_weights, check_n_classes, check_positive
from .graphs import KNNGraph, NeighbourGraph
from .kernels.path import energy_path, energy_path_nogil

__all__ = ["MIN_SWEEPS", "log_normaliser", "quadrature_matrices"]

MIN_SWEEPS = 40
"""Fewest sweeps averaged at each grid point (for the autocovariances of the standard error)."""
HYSTERESIS_Z = 4.0
"""Gap between the up and down chains' ``log Z``, in units of its Monte Carlo sd, beyond which
:func:`log_normaliser` warns."""


# ---------------------------------------------------------------------------- inputs


def _check_n_jobs(n_jobs) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if n_jobs is None or (isinstance(n_jobs, (int, np.integer)) and n_jobs == -1):
        return max(1, cores or 1)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"n_jobs must be None, -1 or an integer >= 1, got {n_jobs!r}")
    return int(n_jobs)


def graph_and_classes(graph_or_term, n_classes, class_weights):
    """``(graph, G, a)`` from a graph (``n_classes`` required), a :class:`PottsTerm` or a
    ``pm.Model`` with one observed Potts term (whose term is taken)."""
    from .terms import PottsTerm

    if is_model(graph_or_term):
        graph_or_term = model_term(graph_or_term)[1].op.term
    if isinstance(graph_or_term, PottsTerm):
        G, a = graph_or_term.n_classes, graph_or_term.class_weights
        if n_classes is not None and check_n_classes(n_classes) != G:
            raise ValueError(
                f"n_classes={n_classes!r} differs from the term's {G} classes: "
                "leave it out when passing a PottsTerm"
            )
        if class_weights is not None and not np.array_equal(
            check_class_weights(class_weights, G), a
        ):
            raise ValueError(
                "class_weights differ from the term's: leave them out when passing a PottsTerm"
            )
        return graph_or_term.graph, G, a
    if not isinstance(graph_or_term, NeighbourGraph):
        raise TypeError(
            "graph_or_term must be a KNNGraph, DistanceGraph, PottsTerm or pm.Model, got "
            f"{type(graph_or_term).__name__}"
        )
    if isinstance(graph_or_term, KNNGraph) and graph_or_term.kind == "asymmetric":
        raise ValueError(
            "the asymmetric (Holmes-Adams) neighbourhood has no joint model and no "
            "normalising constant: use neighbours='symmetrised' or 'equal'"
        )
    if n_classes is None:
        raise ValueError("give n_classes (G >= 2) with a graph, or pass a PottsTerm")
    G = check_n_classes(n_classes)
    return graph_or_term, G, check_class_weights(class_weights, G)


def check_beta_grid(betas) -> np.ndarray:
    """A strictly increasing grid of finite ``beta >= 0``, with ``0`` prepended if missing."""
    b = np.asarray(betas, dtype=np.float64)
    if b.ndim != 1 or b.size == 0:
        raise ValueError(
            f"betas must be a non-empty 1-D grid, e.g. np.arange(0, 4.05, 0.05); "
            f"got shape {b.shape}"
        )
    if not np.all(np.isfinite(b)) or b.min() < 0:
        raise ValueError(f"betas must be finite and >= 0, got min {b.min()!r}, max {b.max()!r}")
    if np.any(np.diff(b) <= 0):
        raise ValueError("betas must be strictly increasing (a grid without repeats)")
    if b[0] > 0:
        b = np.concatenate([[0.0], b])
    if b.size < 2:
        raise ValueError("betas must reach past 0: path sampling integrates from beta = 0")
    return b


def check_theta_grid(graph: NeighbourGraph, thetas) -> np.ndarray:
    """Distinct increasing ``k`` in ``1..k_max`` (int64) or ``sigma > 0`` (float64)."""
    if thetas is None:
        if isinstance(graph, KNNGraph):
            return np.arange(1, graph.k_max + 1)
        raise ValueError("give thetas, a grid of sigma > 0, for a DistanceGraph")
    t = np.atleast_1d(np.asarray(thetas))
    name = graph.parameter
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"thetas must be a non-empty 1-D grid of {name}, got shape {t.shape}")
    if t.dtype.kind not in "biuf" or t.dtype.kind == "b":
        raise ValueError(f"thetas must hold numbers ({name}), got dtype {t.dtype}")
    if np.any(np.diff(t) <= 0):
        raise ValueError(f"thetas must be strictly increasing (a grid of {name} without repeats)")
    if isinstance(graph, KNNGraph):
        return np.array([graph.check_k(v) for v in t.tolist()], dtype=np.int64)
    return np.array([check_positive(v, "sigma") for v in t.tolist()])


def _check_count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


# ---------------------------------------------------------------------------- quadrature


def quadrature_matrices(betas) -> tuple[np.ndarray, np.ndarray]:
    """``(Wm, Wv)``, ``(B, B)``: ``log Z(betas[j]) - log Z(betas[0]) = Wm[j] @ mean + Wv[j] @ var``.

    The trapezoid rule on the mean energy with the Euler-Maclaurin correction
    ``h^2 / 12 (var_i - var_{i+1})`` on each interval ``[betas[i], betas[i+1]]`` of width ``h``
    (exact for a cubic energy curve). On an evenly spaced grid the corrections telescope: only
    the variances at ``betas[0]`` and ``betas[j]`` enter.
    """
    b = np.asarray(betas, dtype=np.float64)
    B = b.size
    h = np.diff(b)
    step_m = np.zeros((B, B))
    step_v = np.zeros((B, B))
    rows = np.arange(1, B)
    step_m[rows, rows - 1] += h / 2
    step_m[rows, rows] += h / 2
    step_v[rows, rows - 1] += h**2 / 12
    step_v[rows, rows] -= h**2 / 12
    return np.cumsum(step_m, axis=0), np.cumsum(step_v, axis=0)


def integrate(betas, mean, var, log_z0):
    """``(log_z, quad_error)`` along the last axis of ``mean`` and ``var`` (see
    :func:`quadrature_matrices`); ``quad_error`` adds up the sizes of the corrections."""
    Wm, Wv = quadrature_matrices(betas)
    log_z = log_z0 + mean @ Wm.T + var @ Wv.T
    h = np.diff(betas)
    corr = np.abs(h**2 / 12 * np.diff(var, axis=-1))
    quad = np.concatenate([np.zeros(var.shape[:-1] + (1,)), np.cumsum(corr, axis=-1)], axis=-1)
    return log_z, quad


# ---------------------------------------------------------------------------- the surface


def _cache_key(betas, thetas, G, a, sweeps, burn, random_seed):
    if isinstance(random_seed, np.random.Generator):
        return None  # a generator's state is not a key: no caching
    if random_seed is not None and not isinstance(random_seed, (int, np.integer)):
        return None
    digest = hashlib.sha1()
    for arr in (betas, thetas.astype(np.float64), a):
        digest.update(np.ascontiguousarray(arr).tobytes())
    return (digest.hexdigest(), G, sweeps, burn, None if random_seed is None else int(random_seed))


def _progress(progressbar: bool):
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        disable=not progressbar,
    )


def _warn_hysteresis(gap, mcse, thetas, betas, parameter) -> None:
    """Warn when the chains up and down the beta grid give ``log Z`` values further apart than
    their Monte Carlo errors allow (each direction's is about ``sqrt(2)`` times ``mcse``)."""
    excess = gap / (2.0 * np.maximum(mcse, 1e-12))
    if not np.any(excess > HYSTERESIS_Z):
        return
    i, j = np.unravel_index(np.argmax(excess), excess.shape)
    warnings.warn(
        f"log_normaliser: the chains climbing and descending the beta grid disagree by "
        f"{gap[i, j]:.3g} nats at {parameter} = {thetas[i]}, beta = {betas[j]:g} ({excess[i, j]:.0f} "
        "times their Monte Carlo error): an abrupt ordering transition, which a chain crosses "
        "late in either direction. log Z (their average) is then off by up to half the gap (the "
        "`hysteresis` coordinate), which `mcse` does not include: raise burn and sweeps, or "
        "refine the beta grid near the transition",
        UserWarning,
        stacklevel=3,
    )


def _path_of(graph, theta):
    c = graph.coupling(theta)
    if c.floor is not None:
        raise ValueError(
            "log_normaliser does not carry the ball kernel's floor weight of a kept d-nn table: "
            "build the DistanceGraph with drop_tol=0 (the dense model)"
        )
    return c.src, c.dst, c.weight, c.uniform_weight


def _chain(kernel, path, z, betas, down, a, burn, sweeps, rng, *stop):
    """One chain's ``(mean, mean_se, var, var_se)`` in increasing beta, climbing or
    descending the grid."""
    grid = betas[::-1].copy() if down else betas
    out = np.array(kernel(*path, z, grid, a, burn, sweeps, rng, *stop))
    return out[:, ::-1] if down else out


def _run_chains(graph, thetas, betas, G, a, burn, sweeps, rngs, n_jobs, tick):
    """Both chains of every theta: ``(up, down)``, each ``(4, T, B)``. Chain ``2 i`` of theta
    ``i`` climbs from uniform labels, chain ``2 i + 1`` descends from all labels in the class
    of largest weight; with ``n_jobs > 1`` they run in threads, at most ``2 n_jobs`` couplings
    alive at a time (built here: a graph's caches are not for threads)."""
    n = graph.n_points
    res = np.empty((2, 4, thetas.size, betas.size))
    ordered = np.full(n, int(np.argmax(a)), dtype=np.int64)

    def start(j):
        return rngs[j].integers(0, G, n) if j % 2 == 0 else ordered.copy()

    if n_jobs == 1:
        for i, theta in enumerate(thetas.tolist()):
            path = _path_of(graph, theta)
            for j in (2 * i, 2 * i + 1):
                res[j % 2, :, i] = _chain(
                    energy_path, path, start(j), betas, j % 2, a, burn, sweeps, rngs[j]
                )
                tick()
        return res[0], res[1]
    stop = np.zeros(1, dtype=np.bool_)
    pending: dict = {}

    def collect(return_when):
        done, _ = wait(pending, return_when=return_when)
        for fut in done:
            j = pending.pop(fut)
            res[j % 2, :, j // 2] = fut.result()
            tick()

    with ThreadPoolExecutor(n_jobs) as pool:
        try:
            for i, theta in enumerate(thetas.tolist()):
                while len(pending) >= 2 * n_jobs:
                    collect(FIRST_COMPLETED)
                path = _path_of(graph, theta)
                for j in (2 * i, 2 * i + 1):
                    fut = pool.submit(
                        _chain,
                        energy_path_nogil,
                        path,
                        start(j),
                        betas,
                        j % 2,
                        a,
                        burn,
                        sweeps,
                        rngs[j],
                        stop,
                    )
                    pending[fut] = j
            while pending:
                collect(FIRST_COMPLETED)
        except BaseException:
            stop[0] = True  # the running chains return at their next beta
            for fut in pending:
                fut.cancel()
            raise
    return res[0], res[1]


def log_normaliser(
    graph_or_term,
    betas,
    thetas=None,
    *,
    n_classes: int | None = None,
    class_weights=None,
    sweeps: int = 400,
    burn: int = 100,
    random_seed=None,
    n_jobs: int | None = None,
    progressbar: bool = True,
    cache: bool = True,
) -> xr.DataArray:
    """``log Z(beta, theta)`` on a grid by path sampling (Cucala et al. 2009, section 3.3).

    ``log Z(beta, theta) = n log G + int_0^beta E_u[E(z)] du`` (``Z(0, theta) = G^n`` whatever
    the class weights). For each ``theta`` two Swendsen-Wang chains run along the beta grid,
    one climbing from uniformly random labels (an exact draw at ``beta = 0``), one descending
    from all labels in one class (near the law at a high beta); at each beta a chain runs
    ``burn`` sweeps from where the previous beta left it, then averages ``E(z)`` and
    ``(E(z) - mean)^2`` over ``sweeps`` sweeps, and the two chains' averages are averaged. Where
    an abrupt ordering transition holds a chain in its former phase, the two directions
    disagree: their gap is reported, and warned about beyond ``HYSTERESIS_Z`` of its Monte
    Carlo sd. The integral is the trapezoid rule with its
    Euler-Maclaurin end correction (the slope of the energy curve is ``Var_beta[E(z)]``): the
    integral of the cubic Hermite interpolant of the curve, error ``O(h^4)`` in the step ``h``.

    Parameters
    ----------
    graph_or_term : KNNGraph, DistanceGraph, PottsTerm or pymc.Model
        A :class:`~pymc_knn.terms.PottsTerm` brings its ``n_classes`` and ``class_weights``; a
        model with one observed ``PottsKNN`` or ``DistanceNN`` term brings that term (its
        graph, as the model built it), and a constant ``k`` or ``sigma`` of it is the default
        ``thetas``.
    betas : array_like
        Strictly increasing grid of ``beta >= 0``; ``0`` is prepended when missing (the
        integral starts there). E.g. ``np.arange(0, 4.05, 0.05)``.
    thetas : array_like, optional
        Values of ``k`` (integers in ``1..k_max``) or of ``sigma > 0``, increasing. Default every
        ``k`` in ``1..k_max`` of a :class:`~pymc_knn.KNNGraph`; required for a
        :class:`~pymc_knn.DistanceGraph` (unless a model fixes ``sigma``).
    n_classes : int, optional
        ``G >= 2``; required with a graph.
    class_weights : array_like, optional
        Unbalanced-sampling weights ``a_g`` (default all 1).
    sweeps : int, default=400
        Sweeps averaged at each beta by each of the two chains; at least ``MIN_SWEEPS`` (40).
    burn : int, default=100
        Sweeps discarded at each beta before averaging. The warm start makes a few enough away
        from the ordering transition; near it, with several classes, Swendsen-Wang relaxes
        slowly (about 80 sweeps from a poor start on 2,000 points and 6 classes), hence the
        default.
    random_seed : int, numpy.random.Generator or None
        Each chain (two per ``theta``) gets its own stream spawned from it, so a curve depends
        neither on the other values of the grid nor on ``n_jobs``.
    n_jobs : int, optional
        Threads running the chains (each its own task, the numba kernel without the GIL).
        Default: the cores this process may use; ``-1`` likewise; ``1`` runs them in this
        thread. Ctrl-C stops the chains at their next beta and re-raises.
    progressbar : bool, default=True
        A rich progress bar over the values of ``theta``.
    cache : bool, default=True
        Keep the result on the graph, keyed by the grids, classes, settings and an integer (or
        None) ``random_seed``: the same call again returns it without sampling. A
        ``numpy.random.Generator`` seed is never cached.

    Returns
    -------
    xarray.DataArray
        Named ``"log_z"``, dims ``(graph.parameter, "beta")`` (``"k"`` or ``"sigma"``). Coordinates
        on the same dims: ``mcse``, the Monte Carlo standard error of ``log Z`` (the standard
        errors of the mean energies and variances, by Geyer's initial monotone sequence
        estimator on each chain's trace, propagated through the quadrature, treating the grid
        points' estimates as independent); ``quad_error``, a bound on the quadrature
        error (the summed sizes of the Euler-Maclaurin corrections, i.e. the trapezoid rule's
        error estimate; the corrected rule's own error is of higher order); ``hysteresis``,
        half the gap between the ``log Z`` of the climbing and the descending chain (not in
        ``mcse``: a systematic error where a transition is abrupt); ``mean_energy``
        (``E_beta[E(z)]``), ``mean_energy_mcse``, ``energy_var`` and ``energy_var_mcse``.
        ``attrs``: ``n_points``, ``n_classes``, ``class_weights``, ``parameter``, ``sweeps``,
        ``burn``, ``mcse_method``, ``method``. Save with ``.to_netcdf`` and reload with
        ``xarray.open_dataarray``.

    See Also
    --------
    path_sampling_posterior, log_evidence, mean_energy_curve

    Notes
    -----
    Checked against exact enumeration in ``tests/test_path_sampling.py``: at 95% of the grid
    points ``|log Z - exact| <= 3 mcse + quad_error``, and at every one within ``4 mcse +
    quad_error`` (a surface is several curves of strongly correlated points, whose largest
    ``|error| / mcse`` passes 3 by chance for about half the seeds). On short chains the
    ``mcse`` is about right, a little low past the transition: on Ripley's 250 points (75 sweeps
    after 50 per beta; k = 3, 10, 16, 30, 60, 125) the spread of ``log Z`` over 30 seeds is
    0.8-1.3 times the mean reported ``mcse``, 1.1-1.3 at k >= 16 and beta >= 1.4 (batch means
    in 20 batches, used before, gave 1.3-1.6 there). The Monte Carlo error grows with beta (it is a
    sum over the grid) and with the number of points; raise ``sweeps`` to shrink it as
    ``1 / sqrt(sweeps)``. A step of 0.05 to 0.1 keeps ``quad_error`` well below ``mcse`` away
    from the transition.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3.3 (path sampling of ``Z(beta, k)`` on a grid, Figs. 5-6).
    .. [2] Gelman, A. and Meng, X.-L. (1998). Simulating normalizing constants: from importance
       sampling to bridge sampling to path sampling. *Statistical Science* 13(2), 163-185.
    .. [3] Swendsen, R. H. and Wang, J.-S. (1987). Nonuniversal critical dynamics in Monte Carlo
       simulations. *Physical Review Letters* 58(2), 86-88.

    Examples
    --------
    A small grid on 50 of Ripley's points (the docs use ``sweeps=150`` or more):

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X, y = X[::5], y[::5]                      # 50 points, to be quick
    >>> graph = pk.KNNGraph(X, k_max=10)
    >>> betas = np.linspace(0, 2, 11)
    >>> log_z = pk.log_normaliser(graph, betas, n_classes=2, sweeps=40, burn=5,
    ...                           random_seed=1, progressbar=False)
    >>> log_z.dims, log_z.shape
    (('k', 'beta'), (10, 11))
    >>> bool(np.allclose(log_z.sel(beta=0), 50 * np.log(2)))     # Z(0, k) = G^n
    True
    >>> bool((log_z.mcse >= 0).all()), bool((log_z.diff("beta") > 0).all())
    (True, True)

    Use it with :func:`grid_posterior`, :func:`path_sampling_posterior` and
    :func:`log_evidence`.
    """
    graph, G, a = graph_and_classes(graph_or_term, n_classes, class_weights)
    if thetas is None and is_model(graph_or_term):  # a constant k or sigma: that value
        value = constant_theta(model_term(graph_or_term)[1])
        if value is not None:
            thetas = [int(value) if isinstance(graph, KNNGraph) else value]
    b = check_beta_grid(betas)
    t = check_theta_grid(graph, thetas)
    sweeps = _check_count(sweeps, "sweeps", MIN_SWEEPS)
    burn = _check_count(burn, "burn", 0)
    jobs = _check_n_jobs(n_jobs)
    key = _cache_key(b, t, G, a, sweeps, burn, random_seed) if cache else None
    store = graph.__dict__.setdefault("_log_normaliser_cache", {})
    if key is not None and key in store:
        return store[key].copy()
    n = graph.n_points
    rngs = np.random.default_rng(random_seed).spawn(2 * t.size)
    with _progress(progressbar) as bar:
        task = bar.add_task(f"log Z: {t.size} x {b.size} grid", total=t.size)
        up, down = _run_chains(
            graph, t, b, G, a, burn, sweeps, rngs, jobs, lambda: bar.update(task, advance=0.5)
        )
    mean, var = (up[0] + down[0]) / 2, (up[2] + down[2]) / 2
    mean_se, var_se = np.hypot(up[1], down[1]) / 2, np.hypot(up[3], down[3]) / 2
    log_z, quad = integrate(b, mean, var, n * np.log(G))
    gap = np.abs(integrate(b, up[0], up[2], 0.0)[0] - integrate(b, down[0], down[2], 0.0)[0])
    Wm, Wv = quadrature_matrices(b)
    mcse = np.sqrt(mean_se**2 @ (Wm**2).T + var_se**2 @ (Wv**2).T)
    _warn_hysteresis(gap, mcse, t, b, graph.parameter)
    dims = (graph.parameter, "beta")
    out = xr.DataArray(
        log_z,
        dims=dims,
        name="log_z",
        coords={
            "beta": b,
            graph.parameter: t,
            "mcse": (dims, mcse),
            "quad_error": (dims, quad),
            "hysteresis": (dims, gap / 2),
            "mean_energy": (dims, mean),
            "mean_energy_mcse": (dims, mean_se),
            "energy_var": (dims, var),
            "energy_var_mcse": (dims, var_se),
        },
        attrs={
            "n_points": n,
            "n_classes": G,
            "class_weights": a.copy(),
            "parameter": graph.parameter,
            "sweeps": sweeps,
            "burn": burn,
            "mcse_method": "Geyer initial monotone sequence, per beta and chain",
            "method": "path sampling: Swendsen-Wang mean energy of two chains warm-started "
            "up and down the beta grid; trapezoid rule with Euler-Maclaurin end "
            "correction",
        },
    )
    if key is not None:
        store[key] = out
    return out.copy()
