"""The path-sampling posterior and the model evidence, from a ``log Z`` surface.

With ``log Z(beta, theta)`` known on a grid (:func:`pymc_knn.log_normaliser`) the likelihood
``q(y | beta, theta) / Z(beta, theta)`` is known there too, and everything follows by quadrature:

* the posterior of ``(beta, theta)`` (Cucala et al. 2009, section 3.3): ``log Z`` is interpolated
  in beta by the cubic Hermite interpolant whose slopes are the estimated mean energies
  (``d log Z / d beta = E_beta[E(z)]``), on ``refine`` sub-steps per grid step; ``k`` is discrete,
  ``sigma`` stays on its grid (trapezoid weights);
* the evidence ``p(y) = sum_k int pi(beta, k) q(y | beta, k) / Z(beta, k) dbeta`` (an integral
  over sigma for d-nn), which compares neighbour systems by Bayes factors. Its Monte Carlo error
  comes from redoing the whole computation with the surface's mean energies and variances
  perturbed by their standard errors (a parametric bootstrap), which keeps the strong
  correlation of ``log Z`` along beta (a running integral of the same estimates).

Priors given as callables are truncated to the grid box and renormalised there: the evidence is
that of the prior restricted to the grid. A ``pm.Model`` brings its own, normalised, priors,
which are not renormalised: the evidence is the model's, counting the grid only.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import logsumexp

from ._model_source import ModelSource, is_model, model_source
from ._validation import check_labels
from .graphs import KNNGraph, NeighbourGraph
from .normalising import graph_and_classes, quadrature_matrices
from .terms import PottsTerm

__all__ = [
    "Evidence",
    "compare_evidence",
    "grid_posterior",
    "log_evidence",
    "path_sampling_posterior",
]

DEFAULT_REFINE = 8
DEFAULT_REPLICATES = 200
PRIOR_COVERAGE = 0.01
"""A model's prior mass off the grid (where its likelihood is defined) beyond which the functions
warn that the evidence counts the grid only."""


# ---------------------------------------------------------------------------- the surface


class _Surface(NamedTuple):
    betas: np.ndarray  # (B,)
    thetas: np.ndarray  # (T,)
    parameter: str
    log_z0: float
    mean: np.ndarray  # (T, B)
    mean_se: np.ndarray
    var: np.ndarray
    var_se: np.ndarray
    quad_error: np.ndarray
    G: int
    a: np.ndarray


_NEEDED = ("mean_energy", "mean_energy_mcse", "energy_var", "energy_var_mcse", "quad_error")


def _surface(log_z, graph) -> _Surface:
    if not isinstance(log_z, xr.DataArray) or any(c not in log_z.coords for c in _NEEDED):
        raise ValueError(
            "log_z must be the DataArray returned by pk.log_normaliser (with its "
            f"coordinates {list(_NEEDED)})"
        )
    p = graph.parameter
    if log_z.dims != (p, "beta"):
        raise ValueError(
            f"log_z has dims {log_z.dims}, expected ({p!r}, 'beta'): was it "
            f"computed on a {type(graph).__name__}?"
        )
    if isinstance(graph, KNNGraph):
        ks = np.asarray(log_z["k"])
        if ks.size and (ks.min() < 1 or ks.max() > graph.k_max):
            raise ValueError(
                f"log_z has k in {ks.min()}..{ks.max()}, the graph only 1..{graph.k_max}: was "
                "it computed on this graph?"
            )
    if int(log_z.attrs.get("n_points", -1)) != graph.n_points:
        raise ValueError(
            f"log_z was computed on {log_z.attrs.get('n_points')} points, the graph "
            f"has {graph.n_points}: compute it on this graph"
        )
    b = np.asarray(log_z["beta"], dtype=np.float64)
    G = int(log_z.attrs["n_classes"])
    vals = {c: np.asarray(log_z[c], dtype=np.float64) for c in _NEEDED}
    return _Surface(
        b,
        np.asarray(log_z[p]),
        p,
        graph.n_points * np.log(G),
        vals["mean_energy"],
        vals["mean_energy_mcse"],
        vals["energy_var"],
        vals["energy_var_mcse"],
        vals["quad_error"],
        G,
        np.asarray(log_z.attrs["class_weights"], dtype=float),
    )


def _fine_grid(betas, refine):
    """Sub-steps of each grid step: ``(fine betas, interval index, position in [0, 1])``."""
    B = betas.size
    s = np.arange(refine) / refine
    idx = np.repeat(np.arange(B - 1), refine)
    pos = np.tile(s, B - 1)
    idx = np.append(idx, B - 2)
    pos = np.append(pos, 1.0)
    h = np.diff(betas)
    return betas[idx] + pos * h[idx], idx, pos


def _hermite(L, m, betas, idx, pos):
    """Cubic Hermite interpolant of ``L`` (values) with slopes ``m`` at the fine points."""
    h = np.diff(betas)[idx]
    s2, s3 = pos**2, pos**3
    return (
        (2 * s3 - 3 * s2 + 1) * L[..., idx]
        + (s3 - 2 * s2 + pos) * h * m[..., idx]
        + (3 * s2 - 2 * s3) * L[..., idx + 1]
        + (s3 - s2) * h * m[..., idx + 1]
    )


def _trapezoid_weights(x):
    if x.size == 1:
        return np.ones(1)
    d = np.diff(x)
    w = np.zeros_like(x, dtype=np.float64)
    w[:-1] += d / 2
    w[1:] += d / 2
    return w


def _log_prior(prior, x, name) -> np.ndarray:
    if prior is None:
        return np.zeros(x.shape)
    if not callable(prior):
        raise ValueError(
            f"{name} must be a callable giving the log prior density (or mass) at "
            f"an array of values, or None for uniform on the grid; got {prior!r}"
        )
    out = np.broadcast_to(np.asarray(prior(x), dtype=np.float64), x.shape).copy()
    if np.any(np.isnan(out)) or np.any(out == np.inf):
        raise ValueError(f"{name} gave NaN or +inf on the grid")
    if not np.any(np.isfinite(out)):
        raise ValueError(f"{name} is -inf (zero density) on the whole grid")
    return out


def _energies(graph, y, thetas, a) -> np.ndarray:
    if isinstance(graph, KNNGraph):
        return graph.energy_all_k(y, a)[thetas - 1]
    return np.array([graph.energy(y, t, a) for t in thetas.tolist()])


class _Problem(NamedTuple):
    surface: _Surface
    graph: NeighbourGraph
    y: np.ndarray
    fine: np.ndarray  # fine betas (F,)
    idx: np.ndarray
    pos: np.ndarray
    base: np.ndarray  # (T, F): log prior + beta E(y) + log quadrature weights (normalised prior)
    log_z_nodes: np.ndarray  # (T, B)
    log_z: xr.DataArray  # the surface used (a model's constant theta: that row)
    source: ModelSource | None  # what a model gave


def _resolve(graph_or_term, y, log_z, beta_prior, theta_prior):
    """``(graph_or_term, y, log_z, beta_prior, theta_prior, source)``: a model's term, labels
    and priors in place of the model (and, for a constant ``k`` or ``sigma``, that row of
    ``log_z``)."""
    if not is_model(graph_or_term):
        if y is None or log_z is None:
            raise ValueError(
                "give the labels y and the surface log_z (from pk.log_normaliser), or a pm.Model "
                "(which holds the labels and priors) and log_z"
            )
        return graph_or_term, y, log_z, beta_prior, theta_prior, None
    if log_z is None and isinstance(y, xr.DataArray):  # log_evidence(model, log_z)
        y, log_z = None, y
    if y is not None:
        raise ValueError("a model brings its labels: leave y out and pass log_z=")
    if log_z is None:
        raise ValueError("give log_z, the surface from pk.log_normaliser(model, betas, ...)")
    if beta_prior is not None or theta_prior is not None:
        raise ValueError("a model brings its priors: leave beta_prior and theta_prior out")
    src = model_source(graph_or_term)
    if src.theta_value is not None and isinstance(log_z, xr.DataArray):
        p = src.term.graph.parameter
        if p in log_z.dims:
            grid = np.asarray(log_z[p], dtype=np.float64)
            hit = np.flatnonzero(np.isclose(grid, src.theta_value, rtol=1e-9, atol=0.0))
            if hit.size == 0:
                raise ValueError(
                    f"log_z has no {p} = {src.theta_value:g}, the model's constant: compute it "
                    f"with pk.log_normaliser(model, betas) (which takes that {p})"
                )
            log_z = log_z.isel({p: hit[:1]})
    return src.term, src.y, log_z, src.beta_prior, src.theta_prior, src


def _coverage_warning(what: str, grid: float, support: float) -> None:
    """Warn when the grid misses more than ``PRIOR_COVERAGE`` of a model's prior mass where its
    likelihood is defined (``support``: beta >= 0, k in 1..k_max, sigma > 0)."""
    if support - grid > PRIOR_COVERAGE:
        warnings.warn(
            f"the grid holds {grid:.3g} of the model's prior mass of {what}, {support:.3g} of "
            "which is where the likelihood is defined: the evidence counts the grid only (as if "
            "the likelihood were 0 beyond it), which is right only if the posterior is well "
            f"inside the grid; extend the grid of {what} to cover its prior",
            UserWarning,
            stacklevel=4,
        )


def _problem(graph_or_term, y, log_z, beta_prior, theta_prior, refine) -> _Problem:
    graph_or_term, y, log_z, beta_prior, theta_prior, source = _resolve(
        graph_or_term, y, log_z, beta_prior, theta_prior
    )
    if isinstance(graph_or_term, PottsTerm):
        graph = graph_or_term.graph
    else:  # the classes come from log_z
        graph, _, _ = graph_and_classes(
            graph_or_term,
            int(log_z.attrs.get("n_classes", 2)) if isinstance(log_z, xr.DataArray) else 2,
            None,
        )
    surf = _surface(log_z, graph)
    if isinstance(graph_or_term, PottsTerm) and (
        graph_or_term.n_classes != surf.G or not np.array_equal(graph_or_term.class_weights, surf.a)
    ):
        raise ValueError("log_z was computed with other classes or class weights than the term's")
    y = check_labels(y, graph.n_points, surf.G)
    if isinstance(refine, bool) or not isinstance(refine, (int, np.integer)) or refine < 1:
        raise ValueError(f"refine must be an integer >= 1, got {refine!r}")
    fine, idx, pos = _fine_grid(surf.betas, int(refine))
    lp_b = _log_prior(beta_prior, fine, "beta_prior")
    lp_t = _log_prior(theta_prior, surf.thetas, "theta_prior")
    wb = _trapezoid_weights(fine)
    wt = (
        np.ones(surf.thetas.size)
        if surf.parameter == "k"
        else _trapezoid_weights(surf.thetas.astype(float))
    )
    with np.errstate(divide="ignore"):
        mass_b, mass_t = logsumexp(lp_b, b=wb), logsumexp(lp_t, b=wt)
        quad = np.log(wt)[:, None] + np.log(wb)[None, :]
    if source is None:  # priors truncated to the grid and renormalised there
        lp_b, lp_t = lp_b - mass_b, lp_t - mass_t
    else:  # the model's own (normalised) priors, on the grid
        _coverage_warning("beta", float(np.exp(mass_b)), source.beta_support)
        if source.theta_prior is None:  # a constant k or sigma
            lp_t = np.zeros_like(lp_t) - np.log(wt)
        else:
            _coverage_warning(surf.parameter, float(np.exp(mass_t)), source.theta_support)
    e_y = _energies(graph, y, surf.thetas, surf.a)
    base = lp_t[:, None] + lp_b[None, :] + fine[None, :] * e_y[:, None] + quad
    log_z_nodes = np.asarray(log_z.values, dtype=np.float64)
    return _Problem(surf, graph, y, fine, idx, pos, base, log_z_nodes, log_z, source)


def _log_joint(prob: _Problem, log_z_nodes, mean):
    """``log (prior x likelihood x quadrature weight)`` on the (theta, fine beta) grid."""
    s = prob.surface
    return prob.base - _hermite(log_z_nodes, mean, s.betas, prob.idx, prob.pos)


# ---------------------------------------------------------------------------- public


def grid_posterior(
    graph_or_term,
    y=None,
    log_z=None,
    *,
    beta_prior: Callable | None = None,
    theta_prior: Callable | None = None,
    refine: int = DEFAULT_REFINE,
) -> xr.Dataset:
    """The path-sampling posterior of ``(beta, k)`` or ``(beta, sigma)`` on a grid.

    ``p(beta, theta | y) ∝ pi(beta) pi(theta) exp(beta E_theta(y)) / Z(beta, theta)`` with
    ``log Z`` from :func:`log_normaliser`, interpolated in beta by cubic Hermite interpolation
    (slopes: the mean energies) on ``refine`` sub-steps per grid step.

    Parameters
    ----------
    graph_or_term : KNNGraph, DistanceGraph, PottsTerm or pymc.Model
        The graph ``log_z`` was computed on, or a model whose only likelihood is one observed
        ``PottsKNN`` or ``DistanceNN`` term: it brings the labels and the priors of ``beta``
        and of ``k`` or ``sigma`` (free variables with priors of their own; ``k`` or ``sigma``
        may be a constant), and ``y``, ``beta_prior`` and ``theta_prior`` are left out. The
        model's priors are taken as they are, not renormalised on the grid: the evidence is
        the model's when its likelihood is negligible off the grid (a warning says when the
        grid misses more than 1% of a prior's mass where the likelihood is defined).
    y : array_like of int
        Observed labels in ``0..G-1`` (``G`` from ``log_z``); not with a model.
    log_z : xarray.DataArray
        From :func:`log_normaliser` (with a model, ``pk.log_normaliser(model, betas)``; it may
        then be passed second, in the place of ``y``).
    beta_prior : callable, optional
        ``beta_prior(beta_array) -> log density``; default uniform on the grid's range. Any
        prior is truncated to the grid and renormalised there.
    theta_prior : callable, optional
        ``theta_prior(theta_array) -> log mass`` (``k``) or log density (``sigma``); default
        uniform on the grid. Truncated and renormalised likewise.
    refine : int, default=8
        Sub-steps per beta grid step.

    Returns
    -------
    xarray.Dataset
        Dims ``(parameter, "beta")``, beta the refined grid: ``log_density`` (the normalised
        density in beta, mass in ``k``) and ``mass`` (the probability of each node under the
        trapezoid rule in beta, and in sigma for d-nn; sums to 1). ``attrs["log_evidence"]``.

    See Also
    --------
    path_sampling_posterior : independent draws from this posterior.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3.3 (the posterior of ``(beta, k)`` with ``Z`` from path sampling, Fig. 7).
    .. [2] Gelman, A. and Meng, X.-L. (1998). Simulating normalizing constants: from importance
       sampling to bridge sampling to path sampling. *Statistical Science* 13(2), 163-185.

    Examples
    --------
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X, y = X[::5], y[::5]                      # 50 points, to be quick
    >>> graph = pk.KNNGraph(X, k_max=10)
    >>> betas = np.linspace(0, 2, 11)
    >>> log_z = pk.log_normaliser(graph, betas, n_classes=2, sweeps=40, burn=5,
    ...                           random_seed=1, progressbar=False)
    >>> post = pk.grid_posterior(graph, y, log_z)
    >>> post["mass"].dims
    ('k', 'beta')
    >>> round(float(post["mass"].sum()), 6)
    1.0
    >>> p_k = post["mass"].sum("beta")      # the posterior of k
    >>> p_k.sizes["k"]
    10
    """
    prob = _problem(graph_or_term, y, log_z, beta_prior, theta_prior, refine)
    joint = _log_joint(prob, prob.log_z_nodes, prob.surface.mean)
    log_ev = logsumexp(joint)
    mass = np.exp(joint - log_ev)
    with np.errstate(divide="ignore"):
        quad = (
            _trapezoid_weights(prob.fine)[None, :]
            * (
                np.ones(prob.surface.thetas.size)
                if prob.surface.parameter == "k"
                else _trapezoid_weights(prob.surface.thetas.astype(float))
            )[:, None]
        )
        log_density = joint - log_ev - np.log(quad)
    p = prob.surface.parameter
    return xr.Dataset(
        {"log_density": ((p, "beta"), log_density), "mass": ((p, "beta"), mass)},
        coords={p: prob.surface.thetas, "beta": prob.fine},
        attrs={"log_evidence": float(log_ev), "refine": int(refine)},
    )


def _linear_draw(pa, pb, u):
    """Position in ``[0, 1]`` of a draw from the density linear between ``pa`` and ``pb``."""
    d = pb - pa
    with np.errstate(invalid="ignore", divide="ignore"):
        x = (-pa + np.sqrt(pa**2 + u * (pb**2 - pa**2))) / d
    return np.where(np.abs(d) <= 1e-12 * np.maximum(pa, pb), u, np.clip(x, 0.0, 1.0))


def path_sampling_posterior(
    graph_or_term,
    y=None,
    log_z=None,
    *,
    beta_prior: Callable | None = None,
    theta_prior: Callable | None = None,
    draws: int = 1000,
    chains: int = 4,
    refine: int = DEFAULT_REFINE,
    var_name: str | None = None,
    random_seed=None,
):
    """Independent draws from the path-sampling posterior, as InferenceData.

    The posterior of :func:`grid_posterior`: ``(theta, beta-cell)`` is drawn by its mass, then
    beta within the cell from the linear interpolant of the density (beta is continuous);
    ``k`` is discrete; ``sigma`` takes its grid values.

    Parameters
    ----------
    graph_or_term, y, log_z, beta_prior, theta_prior, refine
        As for :func:`grid_posterior`.
    draws : int, default=1000
        Draws per chain.
    chains : int, default=4
        The draws are independent; chains only shape the result like ``pm.sample``'s.
    var_name : str, optional
        The name the labels get in ``observed_data`` (and the term in the record that
        :func:`predict_proba` reads); default ``"y"``, or the model's name of the term.
    random_seed : int, numpy.random.Generator or None

    Returns
    -------
    arviz.InferenceData
        ``posterior``: ``beta`` and ``k`` (int64) or ``sigma`` (a model's names for them; a
        model's constant ``k`` or ``sigma`` is not drawn), dims ``(chain, draw)``, with
        ``attrs`` ``log_evidence`` and ``method``; ``observed_data[var_name]``: the labels;
        ``constant_data[f"{var_name}_X"]``: the training covariates and the term's record, so
        that ``pk.predict_proba(idata, X_new)`` and ``pk.predictive_summary`` work on it without a
        model.

    Notes
    -----
    Errors: the log density at each grid point is off by the error of ``log Z`` there (its
    ``mcse`` and ``quad_error``); a posterior concentrated on a region where ``log Z``'s error
    varies by ``delta`` is distorted by a factor up to ``exp(delta)``. Only differences of
    ``log Z`` within the posterior's support matter, so the error is smaller than ``log Z``'s
    own (which grows with beta). The Hermite interpolation in beta adds ``O(h^4)`` relative to
    the grid step ``h``; the draws' cells add ``O((h / refine)^2)``.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3.3 and Fig. 7.
    .. [2] Gelman, A. and Meng, X.-L. (1998). Simulating normalizing constants: from importance
       sampling to bridge sampling to path sampling. *Statistical Science* 13(2), 163-185.

    Examples
    --------
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X, y = X[::5], y[::5]                      # 50 points, to be quick
    >>> graph = pk.KNNGraph(X, k_max=10)
    >>> betas = np.linspace(0, 2, 11)
    >>> log_z = pk.log_normaliser(graph, betas, n_classes=2, sweeps=40, burn=5,
    ...                           random_seed=1, progressbar=False)
    >>> idata = pk.path_sampling_posterior(graph, y, log_z, draws=200, chains=2,
    ...                                    random_seed=1)
    >>> idata.posterior["beta"].dims
    ('chain', 'draw')
    >>> idata.posterior["k"].dtype
    dtype('int64')

    It predicts as the output of ``pm.sample`` does:

    >>> X_test, *_ = pk.datasets.load_ripley("test")
    >>> summary = pk.predictive_summary(idata, X_test[:3])
    >>> summary["bayes_class"].values
    array([0, 0, 0])
    """
    import arviz as az

    from .records import ATTR, covariates_name

    for value, name in ((draws, "draws"), (chains, "chains")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if var_name is not None and (not isinstance(var_name, str) or not var_name):
        raise ValueError(f"var_name must be a non-empty string, got {var_name!r}")
    prob = _problem(graph_or_term, y, log_z, beta_prior, theta_prior, refine)
    src = prob.source
    if src is not None and var_name not in (None, src.name):
        raise ValueError(f"the model's term is {src.name!r}: leave var_name out")
    var_name = src.name if src is not None else var_name or "y"
    s = prob.surface
    joint = _log_joint(prob, prob.log_z_nodes, s.mean)
    log_ev = logsumexp(joint)
    with np.errstate(divide="ignore"):
        dens = np.exp(joint - log_ev - np.log(_trapezoid_weights(prob.fine))[None, :])
    h = np.diff(prob.fine)
    cells = (dens[:, :-1] + dens[:, 1:]) / 2 * h[None, :]  # (T, F - 1) up to theta weights
    if s.parameter != "k":
        cells = cells * _trapezoid_weights(s.thetas.astype(float))[:, None]
    cells = (cells / cells.sum()).ravel()
    rng = np.random.default_rng(random_seed)
    size = int(chains) * int(draws)
    pick = rng.choice(cells.size, size=size, p=cells)
    t_i, c_i = np.divmod(pick, prob.fine.size - 1)
    frac = _linear_draw(dens[t_i, c_i], dens[t_i, c_i + 1], rng.random(size))
    beta = prob.fine[c_i] + frac * h[c_i]
    theta = s.thetas[t_i]
    shape = (int(chains), int(draws))
    if src is not None:
        term, beta_spec, theta_spec = src.term, src.beta_spec, src.theta_spec
    else:
        term = (
            graph_or_term
            if isinstance(graph_or_term, PottsTerm)
            else PottsTerm(prob.graph, s.G, s.a)
        )
        beta_spec, theta_spec = {"name": "beta"}, {"name": s.parameter}
    spec = {**term.spec(), "beta": beta_spec, "theta": theta_spec, "missing_labels": []}
    X = term.graph.X_input
    draws_of = {beta_spec["name"]: beta.reshape(shape)}
    if "name" in theta_spec:  # a model's constant k or sigma is in the record, not drawn
        draws_of[theta_spec["name"]] = theta.reshape(shape)
    posterior = xr.Dataset(
        {name: (("chain", "draw"), values) for name, values in draws_of.items()},
        coords={"chain": np.arange(shape[0]), "draw": np.arange(shape[1])},
        attrs={
            "log_evidence": float(log_ev),
            "refine": int(refine),
            "method": "path sampling (Cucala et al. 2009, section 3.3): independent draws "
            "from the grid posterior",
        },
    )
    observed = xr.Dataset({var_name: ((f"{var_name}_dim_0",), prob.y)})
    constant = xr.Dataset(
        {
            covariates_name(var_name): xr.DataArray(
                X, dims=(f"{var_name}_dim_0", f"{var_name}_feature"), attrs={ATTR: json.dumps(spec)}
            )
        }
    )
    return az.InferenceData(posterior=posterior, observed_data=observed, constant_data=constant)


class Evidence(NamedTuple):
    """The log marginal likelihood ``log p(y)`` of one model and its errors.

    Attributes
    ----------
    log_evidence : float
    mcse : float
        Monte Carlo standard error (parametric bootstrap over the surface's estimates).
    quad_error : float
        The posterior mean of ``log Z``'s quadrature bound (:func:`log_normaliser`'s
        ``quad_error``): a bound on the error from the beta grid.
    labels : str
        A digest of the labels, so that :func:`compare_evidence` refuses models fitted to
        different labels.
    hysteresis : float
        Half the spread of the evidence when ``log Z`` is moved by its ``hysteresis`` (half the
        gap between the chains climbing and descending the beta grid) one way and the other: a
        systematic error near an abrupt ordering transition, which ``mcse`` does not include
        (0 for a surface without the coordinate).

    See Also
    --------
    log_evidence : which makes it.
    compare_evidence : which ranks several.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3.3.
    .. [2] Gelman, A. and Meng, X.-L. (1998). Simulating normalizing constants: from importance
       sampling to bridge sampling to path sampling. *Statistical Science* 13(2), 163-185.
    .. [3] Kass, R. E. and Raftery, A. E. (1995). Bayes factors. *Journal of the American
       Statistical Association* 90(430), 773-795.

    Examples
    --------
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X, y = X[::5], y[::5]                      # 50 points, to be quick
    >>> graph = pk.KNNGraph(X, k_max=10)
    >>> betas = np.linspace(0, 2, 11)
    >>> log_z = pk.log_normaliser(graph, betas, n_classes=2, sweeps=40, burn=5,
    ...                           random_seed=1, progressbar=False)
    >>> ev = pk.log_evidence(graph, y, log_z, random_seed=1)
    >>> ev
    Evidence(log_evidence=-24..., mcse=0..., quad_error=0.0..., labels='...', hysteresis=0...)
    >>> ev._fields
    ('log_evidence', 'mcse', 'quad_error', 'labels', 'hysteresis')
    """

    log_evidence: float
    mcse: float
    quad_error: float
    labels: str
    hysteresis: float = 0.0


def log_evidence(
    graph_or_term,
    y=None,
    log_z=None,
    *,
    beta_prior: Callable | None = None,
    theta_prior: Callable | None = None,
    refine: int = DEFAULT_REFINE,
    replicates: int = DEFAULT_REPLICATES,
    random_seed=None,
) -> Evidence:
    """The model evidence ``log p(y) = log sum_theta int pi(beta, theta) q(y|beta, theta) /
    Z(beta, theta) dbeta``, with its Monte Carlo error.

    Parameters
    ----------
    graph_or_term, y, log_z, beta_prior, theta_prior, refine
        As for :func:`grid_posterior`. The evidence depends on the priors: compare models under
        priors you would defend (the defaults are uniform on each model's grid).
    replicates : int, default=200
        Replicates of the parametric bootstrap of the Monte Carlo error: the mean energies and
        variances are redrawn from normals with their Monte Carlo standard errors, ``log Z`` is
        re-integrated and the evidence recomputed.
    random_seed : int, numpy.random.Generator or None
        For the bootstrap.

    Returns
    -------
    Evidence
        ``(log_evidence, mcse, quad_error, labels, hysteresis)``.

    See Also
    --------
    compare_evidence : Bayes factors and posterior model probabilities.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3.3 (``log Z`` by path sampling).
    .. [2] Gelman, A. and Meng, X.-L. (1998). Simulating normalizing constants: from importance
       sampling to bridge sampling to path sampling. *Statistical Science* 13(2), 163-185.
    .. [3] Kass, R. E. and Raftery, A. E. (1995). Bayes factors. *Journal of the American
       Statistical Association* 90(430), 773-795.

    Examples
    --------
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X, y = X[::5], y[::5]                      # 50 points, to be quick
    >>> graph = pk.KNNGraph(X, k_max=10)
    >>> betas = np.linspace(0, 2, 11)
    >>> log_z = pk.log_normaliser(graph, betas, n_classes=2, sweeps=40, burn=5,
    ...                           random_seed=1, progressbar=False)
    >>> ev = pk.log_evidence(graph, y, log_z, random_seed=1)
    >>> ev.log_evidence
    -24...
    >>> bool(ev.mcse < 0.5)
    True

    A PyMC model brings its labels and priors; its graph is the one :func:`log_normaliser`
    takes from it (here the same as above, as are the priors: uniform on the grid):

    >>> import pymc as pm
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 2)
    ...     k = pm.DiscreteUniform("k", 1, 10)
    ...     _ = pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    >>> log_z_model = pk.log_normaliser(model, betas, sweeps=40, burn=5, random_seed=1,
    ...                                 progressbar=False)
    >>> ev_model = pk.log_evidence(model, log_z_model, random_seed=1)
    >>> bool(np.isclose(ev_model.log_evidence, ev.log_evidence, rtol=1e-8))
    True
    """
    if (
        isinstance(replicates, bool)
        or not isinstance(replicates, (int, np.integer))
        or replicates < 2
    ):
        raise ValueError(f"replicates must be an integer >= 2, got {replicates!r}")
    prob = _problem(graph_or_term, y, log_z, beta_prior, theta_prior, refine)
    s = prob.surface
    joint = _log_joint(prob, prob.log_z_nodes, s.mean)
    log_ev = float(logsumexp(joint))
    post = np.exp(joint - log_ev)
    quad = _hermite(s.quad_error, np.zeros_like(s.quad_error), s.betas, prob.idx, prob.pos)
    rng = np.random.default_rng(random_seed)
    Wm, Wv = quadrature_matrices(s.betas)
    reps = np.empty(int(replicates))
    for r in range(reps.size):
        m = s.mean + s.mean_se * rng.standard_normal(s.mean.shape)
        v = s.var + s.var_se * rng.standard_normal(s.var.shape)
        L = s.log_z0 + m @ Wm.T + v @ Wv.T
        reps[r] = logsumexp(_log_joint(prob, L, m))
    digest = hashlib.sha1(prob.y.tobytes()).hexdigest()[:16]
    coords = prob.log_z.coords
    shift = np.asarray(coords["hysteresis"]) if "hysteresis" in coords else 0.0
    ends = [logsumexp(_log_joint(prob, prob.log_z_nodes + d, s.mean)) for d in (shift, -shift)]
    return Evidence(
        log_ev,
        float(reps.std(ddof=1)),
        float((post * quad).sum()),
        digest,
        float(abs(ends[1] - ends[0]) / 2),
    )


def compare_evidence(models: Mapping, *, prior_probs: Mapping | None = None) -> pd.DataFrame:
    """Rank models of the same labels by their evidence, like ``arviz.compare`` does by LOO.

    Parameters
    ----------
    models : mapping of str to Evidence
        ``{name: pk.log_evidence(...)}``; at least one. (A ``(log_evidence, mcse)`` pair is
        accepted too, without the labels check.)
    prior_probs : mapping of str to float, optional
        Prior model probabilities (default equal); renormalised.

    Returns
    -------
    pandas.DataFrame
        Indexed by name, best first: ``rank`` (0 = best), ``log_evidence``, ``mcse``,
        ``quad_error``, ``hysteresis`` (see :class:`Evidence`; NaN for a pair), ``log_bf`` (log
        Bayes factor against the best, <= 0), ``log_bf_se``
        (the two models' Monte Carlo errors combined) and ``probability``, the posterior model
        probability.

    Notes
    -----
    Bayes factors between neighbour systems compare marginal likelihoods, which the
    unnormalised Potts term cannot give to LOO or WAIC (see ``docs/inference.md``).

    References
    ----------
    .. [1] Kass, R. E. and Raftery, A. E. (1995). Bayes factors. *Journal of the American
       Statistical Association* 90(430), 773-795.

    Examples
    --------
    The symmetrised kNN graph of Cucala et al. (2009) against the equal-weight graph of Yoon
    and Friel (2015):

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X, y = X[::5], y[::5]                      # 50 points, to be quick
    >>> graph = pk.KNNGraph(X, k_max=10)
    >>> betas = np.linspace(0, 2, 11)
    >>> log_z = pk.log_normaliser(graph, betas, n_classes=2, sweeps=40, burn=5,
    ...                           random_seed=1, progressbar=False)
    >>> equal = pk.KNNGraph(X, k_max=10, neighbours="equal")
    >>> log_z_equal = pk.log_normaliser(equal, betas, n_classes=2, sweeps=40, burn=5,
    ...                                 random_seed=1, progressbar=False)
    >>> table = pk.compare_evidence({
    ...     "symmetrised": pk.log_evidence(graph, y, log_z, random_seed=1),
    ...     "equal": pk.log_evidence(equal, y, log_z_equal, random_seed=1)})
    >>> table.columns.tolist()[:5]
    ['rank', 'log_evidence', 'mcse', 'quad_error', 'hysteresis']
    >>> table.columns.tolist()[5:]
    ['log_bf', 'log_bf_se', 'probability']
    >>> round(float(table["probability"].sum()), 6)
    1.0
    """
    if not isinstance(models, Mapping) or not models:
        raise ValueError("models must be a non-empty mapping {name: Evidence}")
    rows, labels = {}, set()
    for name, ev in models.items():
        if isinstance(ev, Evidence):
            labels.add(ev.labels)
            rows[name] = (ev.log_evidence, ev.mcse, ev.quad_error, ev.hysteresis)
        elif isinstance(ev, (tuple, list)) and len(ev) == 2:
            rows[name] = (float(ev[0]), float(ev[1]), np.nan, np.nan)
        else:
            raise ValueError(
                f"models[{name!r}] must be an Evidence from pk.log_evidence, got "
                f"{type(ev).__name__}"
            )
    if len(labels) > 1:
        raise ValueError(
            "the models were fitted to different labels: evidences compare models "
            "of the same data only"
        )
    df = pd.DataFrame.from_dict(
        rows, orient="index", columns=["log_evidence", "mcse", "quad_error", "hysteresis"]
    )
    if not np.all(np.isfinite(df["log_evidence"])):
        raise ValueError("every log_evidence must be finite")
    df = df.sort_values("log_evidence", ascending=False)
    if prior_probs is None:
        log_prior = np.zeros(len(df))
    else:
        if set(prior_probs) != set(df.index):
            raise ValueError(f"prior_probs must give a probability for each of {list(df.index)}")
        pp = np.array([float(prior_probs[n]) for n in df.index])  # in the sorted order
        if np.any(~np.isfinite(pp)) or np.any(pp <= 0):
            raise ValueError("prior_probs must be finite and > 0")
        log_prior = np.log(pp / pp.sum())
    best = df.iloc[0]
    df["log_bf"] = df["log_evidence"] - best["log_evidence"]
    df["log_bf_se"] = np.sqrt(df["mcse"] ** 2 + best["mcse"] ** 2)
    df.loc[df.index[0], "log_bf_se"] = 0.0
    post = df["log_evidence"].to_numpy() + log_prior
    df["probability"] = np.exp(post - logsumexp(post))
    df.insert(0, "rank", np.arange(len(df)))
    return df
