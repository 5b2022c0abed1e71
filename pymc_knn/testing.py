"""The exact-enumeration oracle: every quantity of a small Potts model, computed exactly.

For ``n`` points and ``G`` classes the normalising constant ``Z(beta, theta) = sum_z
exp(beta E_theta(z))`` is a finite sum over ``G^n`` labelings. For ``G^n`` up to a few million
(``n <= 12`` for ``G <= 3``) it is computed here exactly, and with it the label probabilities, the
exact posterior over a ``(beta, k)`` or ``(beta, sigma)`` grid and the exact pseudo-posterior. It
is the reference every sampler of the package is tested against.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import xarray as xr
from scipy.special import logsumexp

from ._validation import check_class_weights, check_labels, check_n_classes
from .graphs import Coupling, NeighbourGraph
from .kernels import log_pseudo_likelihood
from .kernels.enumeration import state_energies as _state_energies

__all__ = [
    "MAX_STATES",
    "all_labelings",
    "exact_posterior",
    "label_probabilities",
    "labeling_index",
    "log_normaliser",
    "state_energies",
]

MAX_STATES = 1 << 22


def _n_states(n: int, n_classes: int) -> int:
    G = check_n_classes(n_classes)
    if G**n > MAX_STATES:
        raise ValueError(
            f"{G}^{n} = {G**n} labelings is too many to enumerate (limit {MAX_STATES}); "
            "use fewer points or classes"
        )
    return G**n


def all_labelings(n: int, n_classes: int) -> np.ndarray:
    """Every labeling, shape ``(G^n, n)``, in the order of :func:`labeling_index`."""
    S = _n_states(n, n_classes)
    digits = np.arange(S)[:, None] // n_classes ** np.arange(n - 1, -1, -1)[None, :]
    return (digits % n_classes).astype(np.int64)


def labeling_index(z, n_classes: int) -> np.ndarray:
    """Index of labelings (rows of ``z``) in :func:`all_labelings`: base ``G``, point 0 first."""
    z = np.atleast_2d(np.asarray(z, dtype=np.int64))
    return z @ (n_classes ** np.arange(z.shape[1] - 1, -1, -1))


def state_energies(coupling: Coupling, n_classes: int, class_weights=None) -> np.ndarray:
    """``E(z)`` for every labeling ``z``, in the order of :func:`all_labelings`."""
    _n_states(coupling.n, n_classes)
    a = check_class_weights(class_weights, n_classes)
    return _state_energies(coupling.src, coupling.dst, coupling.weight, a, coupling.n, n_classes)


def _log_z(energies, betas):
    """``log Z`` at each beta, grouping labelings of equal energy."""
    values, counts = np.unique(energies, return_counts=True)
    log_counts = np.log(counts)
    return np.array([logsumexp(b * values + log_counts) for b in np.atleast_1d(betas)])


def log_normaliser(coupling: Coupling, beta, n_classes: int, class_weights=None):
    """``log Z(beta)`` exactly; ``beta`` may be a scalar or an array."""
    out = _log_z(state_energies(coupling, n_classes, class_weights), beta)
    return out if np.ndim(beta) else float(out[0])


def label_probabilities(
    coupling: Coupling, beta: float, n_classes: int, class_weights=None
) -> np.ndarray:
    """Exact ``f(z | beta)`` of every labeling, in the order of :func:`all_labelings`."""
    e = state_energies(coupling, n_classes, class_weights)
    logp = beta * e - _log_z(e, beta)[0]
    return np.exp(logp)


def _trapezoid_weights(x: np.ndarray) -> np.ndarray:
    if x.size == 1:
        return np.ones(1)
    d = np.diff(x)
    w = np.zeros_like(x)
    w[:-1] += d / 2
    w[1:] += d / 2
    return w


def _completions(y, missing, G) -> np.ndarray:
    """Every labeling that agrees with ``y`` outside ``missing``: ``(G^len(missing), n)``."""
    out = np.repeat(y[None, :], G**missing.size, axis=0)
    out[:, missing] = all_labelings(missing.size, G)
    return out


def exact_posterior(
    graph: NeighbourGraph,
    y,
    beta,
    params,
    log_prior: Callable | None = None,
    n_classes: int | None = None,
    class_weights=None,
    pseudo: bool = False,
    missing=None,
) -> xr.Dataset:
    """Exact posterior (or pseudo-posterior) of ``(beta, k)`` or ``(beta, sigma)`` on a grid.

    ``p(beta, theta | y) ∝ pi(beta, theta) exp(beta E_theta(y)) / Z(beta, theta)``; with
    ``pseudo=True`` the likelihood is replaced by the pseudo-likelihood (Cucala et al. 2009,
    eq. 8), as targeted by pseudo-likelihood Metropolis.

    Parameters
    ----------
    graph : KNNGraph or DistanceGraph
        On at most a dozen points.
    y : array_like of int
        Observed labels.
    beta : array_like
        Increasing grid of beta values.
    params : array_like
        Values of ``k`` (integers) or an increasing grid of ``sigma``.
    log_prior : callable, optional
        ``log_prior(beta, theta)`` on broadcast arrays; default flat on the grid box.
    n_classes : int, optional
        ``G``, default ``max(y) + 1``.
    class_weights : array_like, optional
    pseudo : bool
        Use the pseudo-likelihood instead of the likelihood.
    missing : array_like of int, optional
        Indices of missing labels (their values in ``y`` are ignored): the likelihood sums over
        their ``G^len(missing)`` completions, and the result also holds their posterior.

    Returns
    -------
    xarray.Dataset
        Dims ``("beta", graph.parameter)``: ``log_density`` (normalised: trapezoid rule over
        beta, and over sigma for d-nn; a sum over k), and ``mass``, the probability of each grid
        node under that rule, which sums to 1. Marginals are sums of ``mass``. With ``missing``,
        ``label_proba`` ``("missing", "class")``: each missing label's posterior probabilities.
    """
    missing = np.unique(np.asarray([] if missing is None else missing, dtype=np.int64))
    y = np.array(y)
    y[missing] = 0
    y = check_labels(y, graph.n_points, n_classes)
    G = check_n_classes(n_classes if n_classes is not None else max(int(y.max()) + 1, 2))
    if pseudo and missing.size:
        raise ValueError("missing labels are supported for the likelihood only, not pseudo=True")
    a = check_class_weights(class_weights, G)
    betas = np.asarray(beta, dtype=np.float64)
    params = np.asarray(params)
    completions = _completions(y, missing, G)
    # loglik[v, b, t] = beta E_t(completion v) - log Z(beta, t)
    loglik = np.empty((completions.shape[0], betas.size, params.size))
    for c, theta in enumerate(params):
        theta = theta.item()
        if pseudo:
            indptr, indices, data = graph.conditional_weights(theta)
            loglik[0, :, c] = [log_pseudo_likelihood(indptr, indices, data, y, b, a) for b in betas]
        else:
            coupling = graph.coupling(theta)
            e_all = state_energies(coupling, G, a)
            e_y = e_all[labeling_index(completions, G)]
            loglik[:, :, c] = betas[None, :] * e_y[:, None] - _log_z(e_all, betas)[None, :]
    B, P = np.meshgrid(betas, params, indexing="ij")
    prior = 0.0 if log_prior is None else np.broadcast_to(log_prior(B, P), B.shape)
    wb = _trapezoid_weights(betas)
    wp = (
        np.ones(params.size) if graph.parameter == "k" else _trapezoid_weights(params.astype(float))
    )
    quad = np.outer(wb, wp)
    joint = loglik + prior  # per completion
    with np.errstate(divide="ignore"):
        log_norm = logsumexp(joint, b=np.broadcast_to(quad, joint.shape))
        logp = logsumexp(joint, axis=0) - log_norm
        completion_mass = np.exp(logsumexp(joint, axis=(1, 2), b=quad) - log_norm)
    dims = ("beta", graph.parameter)
    coords = {"beta": betas, graph.parameter: params}
    out = xr.Dataset(
        {"log_density": (dims, logp), "mass": (dims, np.exp(logp) * quad)}, coords=coords
    )
    if missing.size:
        onehot = completions[:, missing, None] == np.arange(G)
        proba = np.einsum("v,vmg->mg", completion_mass, onehot)
        out["label_proba"] = xr.DataArray(
            proba, dims=("missing", "class"), coords={"missing": missing, "class": np.arange(G)}
        )
    return out
