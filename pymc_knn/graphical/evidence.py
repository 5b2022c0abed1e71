r"""Hyper normal-inverse-Wishart evidence and graph-t predictive of a decomposable Gaussian model.

Per class, the mean and covariance of ``x ~ N(m, Sigma)`` follow, given a decomposable graph
``G``, the hyper normal-inverse-Wishart law of Pavlenko and Rios (2017, eq. 10-11) in the
hyper-consistent form of Dawid and Lauritzen (1993): on a node set ``A`` of size ``a``,
``Sigma_A ~ IW(Phi_A, delta + a - 1)`` and ``m_A | Sigma_A ~ N(mu_A, Sigma_A / nu)``. The degrees
of freedom grow with the set, so that the marginal law on a separator is the same from both its
cliques (one common ``theta`` for every clique, as printed in the paper, is not consistent;
``theta = p`` there corresponds to ``delta = 1``).

Local evidence (conjugate normal-inverse-Wishart marginal likelihood of the ``n`` points of the
class restricted to ``A``), with ``nu* = nu + n`` and
``Phi* = Phi + S + nu n / nu* (mu - xbar)(mu - xbar)'``:

.. math::

    \log h(A) = -\tfrac{na}{2}\log\pi + \tfrac{a}{2}\log\tfrac{\nu}{\nu^*}
        + \log\Gamma_a\!\big(\tfrac{\delta+n+a-1}{2}\big) - \log\Gamma_a\!\big(\tfrac{\delta+a-1}{2}\big)
        + \tfrac{\delta+a-1}{2}\log|\Phi_A| - \tfrac{\delta+n+a-1}{2}\log|\Phi^*_A|,

and ``log f(X | G) = sum_Q log h(Q) - sum_S log h(S)`` over the cliques and the separators
(with multiplicity) of a junction tree of ``G``; ``h(empty set) = 1``. The ``(a/2) log(nu/nu*)``
term is the paper's ``kappa`` with ``nu^(q/2)`` in place of the printed ``nu^(1/2)``.

Predictive: integrating ``N(x | m, Sigma)`` against the posterior of a clique gives a
multivariate t with ``delta + n`` degrees of freedom (the same for every set, hence consistent),
location ``mu* = (nu mu + n xbar) / nu*`` and scale matrix ``Phi*_A (nu* + 1) / (nu* (delta + n))``.
The graph t density is the clique product over the separator product (Pavlenko and Rios 2017,
eq. 14) and equals ``f(X and x | G) / f(X | G)`` exactly; the paper's printed t misses the
``1 / delta*`` in its bracket and uses the Wishart's degrees of freedom for the t's.
"""

from __future__ import annotations

import importlib
import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .._validation import kernel_array
from ._bits import ZERO, members
from .decomposable import junction_tree, maximal_cliques, separators

LOG_PI = math.log(math.pi)


class Hyper(NamedTuple):
    """Prior and posterior hyperparameters of one class (all arrays float64).

    Attributes
    ----------
    phi, phi_post : ndarray, shape (p, p)
        Prior scale ``Phi`` and posterior scale ``Phi*``.
    mu_post : ndarray, shape (p,)
        Posterior location ``mu*``.
    consts : ndarray, shape (3,)
        ``(n, nu, delta)``: the class's number of points, the prior mean's pseudo-count and the
        Dawid-Lauritzen degrees of freedom.
    """

    phi: np.ndarray
    phi_post: np.ndarray
    mu_post: np.ndarray
    consts: np.ndarray


def class_hyper(X, *, mu=None, nu=1.0, phi=None, delta=1.0) -> Hyper:
    """Posterior hyperparameters of one class from its points ``X`` (n, p); ``n`` may be 0.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    mu : ndarray, shape (p,), default=None
        Prior mean ``mu``; ``None`` means the class mean (Pavlenko and Rios 2017, section 5),
        which drops the ``(mu - xbar)`` term of ``Phi*``, or zero when ``n = 0``.
    nu, delta : float, default=1.0
    phi : ndarray, shape (p, p), default=None
        Prior scale; ``None`` means the identity.
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    phi = np.eye(p) if phi is None else np.asarray(phi, dtype=np.float64)
    xbar = X.mean(axis=0) if n else np.zeros(p)
    mu = xbar if mu is None else np.asarray(mu, dtype=np.float64)
    centred = X - xbar
    nu_post = nu + n
    d = (mu - xbar)[:, None]
    phi_post = phi + centred.T @ centred + (nu * n / nu_post) * (d @ d.T)
    mu_post = (nu * mu + n * xbar) / nu_post
    return Hyper(
        np.ascontiguousarray(phi),
        np.ascontiguousarray(phi_post),
        mu_post,
        np.array([float(n), float(nu), float(delta)]),
    )


@njit(cache=True)
def chol_logdet(mat, idx, a, work):
    """``log det`` of ``mat[idx[:a]][:, idx[:a]]`` by Cholesky into ``work`` (lower factor).

    Returns NaN when the submatrix is not positive definite.
    """
    for r in range(a):
        for c in range(r + 1):
            work[r, c] = mat[idx[r], idx[c]]
    logdet = 0.0
    for j in range(a):
        s = work[j, j]
        for k in range(j):
            s -= work[j, k] * work[j, k]
        if s <= 0.0:
            return np.nan
        d = math.sqrt(s)
        work[j, j] = d
        logdet += 2.0 * math.log(d)
        for i in range(j + 1, a):
            s = work[i, j]
            for k in range(j):
                s -= work[i, k] * work[j, k]
            work[i, j] = s / d
    return logdet


@njit(cache=True)
def log_mvgamma(a, x):
    """Log of the multivariate gamma function ``Gamma_a(x)``."""
    out = a * (a - 1) / 4.0 * LOG_PI
    for i in range(a):
        out += math.lgamma(x - i / 2.0)
    return out


@njit(cache=True)
def log_h(mask, phi, phi_post, consts):
    """Local log evidence ``log h(A)`` of the node set ``mask`` (module docstring formula)."""
    if mask == ZERO:
        return 0.0
    n, nu, delta = consts[0], consts[1], consts[2]
    p = phi.shape[0]
    idx = np.empty(p, np.int64)
    work = np.empty((p, p))
    a = members(mask, idx)
    prior_df = delta + a - 1.0
    post_df = prior_df + n
    out = -n * a / 2.0 * LOG_PI + a / 2.0 * math.log(nu / (nu + n))
    out += log_mvgamma(a, post_df / 2.0) - log_mvgamma(a, prior_df / 2.0)
    out += prior_df / 2.0 * chol_logdet(phi, idx, a, work)
    out -= post_df / 2.0 * chol_logdet(phi_post, idx, a, work)
    return out


def new_cache():
    """An empty ``log h`` cache: a numba typed dict from node mask to value."""
    # through importlib: a static import of numba.typed makes mypy analyse numba (untyped) and
    # reject `from numba import njit` in every module of the package
    typed, types = importlib.import_module("numba.typed"), importlib.import_module("numba.types")
    return typed.Dict.empty(key_type=types.uint64, value_type=types.float64)


@njit(cache=True)
def log_h_cached(mask, cache, phi, phi_post, consts):
    """``log h(mask)``, looked up in or stored into ``cache``."""
    if mask in cache:
        return cache[mask]
    value = log_h(mask, phi, phi_post, consts)
    cache[mask] = value
    return value


@njit(cache=True)
def log_evidence_sets(cliques, separators, cache, phi, phi_post, consts):
    """``sum log h(cliques) - sum log h(separators)`` (separators with multiplicity)."""
    out = 0.0
    for c in cliques:
        out += log_h_cached(c, cache, phi, phi_post, consts)
    for s in separators:
        out -= log_h_cached(s, cache, phi, phi_post, consts)
    return out


@njit(cache=True)
def log_t_points(mask, X, mu_post, phi_post, consts):
    """Log predictive t density of the columns ``mask`` of each row of ``X`` (module docstring).

    Returns zeros for the empty set.
    """
    m, p = X.shape
    out = np.zeros(m)
    if mask == ZERO:
        return out
    n, nu, delta = consts[0], consts[1], consts[2]
    nu_post = nu + n
    df = delta + n
    factor = (nu_post + 1.0) / (nu_post * df)
    idx = np.empty(p, np.int64)
    L = np.empty((p, p))
    a = members(mask, idx)
    logdet = chol_logdet(phi_post, idx, a, L) + a * math.log(factor)
    const = (
        math.lgamma((df + a) / 2.0)
        - math.lgamma(df / 2.0)
        - a / 2.0 * math.log(df * math.pi)
        - 0.5 * logdet
    )
    y = np.empty(a)
    root = math.sqrt(factor)
    for r in range(m):
        quad = 0.0
        for i in range(a):  # forward solve (root L) y = x - mu
            s = X[r, idx[i]] - mu_post[idx[i]]
            for k in range(i):
                s -= root * L[i, k] * y[k]
            y[i] = s / (root * L[i, i])
            quad += y[i] * y[i]
        out[r] = const - (df + a) / 2.0 * math.log1p(quad / df)
    return out


def cliques_and_separators(adj) -> tuple[np.ndarray, np.ndarray]:
    """The maximal cliques and the separators (with multiplicity) of a decomposable graph."""
    adj = np.asarray(adj, dtype=np.uint64)
    cliques = maximal_cliques(adj)
    return cliques, separators(cliques, junction_tree(cliques))


def graph_log_evidence(hyper: Hyper, adj, cache=None) -> float:
    """``log f(X | G)`` of the class summarised by ``hyper`` under the decomposable graph ``adj``."""
    cliques, seps = cliques_and_separators(adj)
    cache = new_cache() if cache is None else cache
    return log_evidence_sets(cliques, seps, cache, hyper.phi, hyper.phi_post, hyper.consts)


def graph_log_predictive(hyper: Hyper, adj, X, table=None) -> np.ndarray:
    """``log T_G(x)`` of each row of ``X`` (m, p): the graph t density (module docstring).

    ``table``, a dict from mask to the rows' log t densities on that set, is filled and reused.
    """
    X = kernel_array(X)
    # an estimator loaded from a memory map holds read-only arrays
    mu_post, phi_post, consts = (
        kernel_array(a) for a in (hyper.mu_post, hyper.phi_post, hyper.consts)
    )
    cliques, seps = cliques_and_separators(adj)
    table = {} if table is None else table
    out = np.zeros(X.shape[0])
    for sign, sets in ((1.0, cliques), (-1.0, seps)):
        for s in sets:
            key = int(s)
            if key not in table:
                table[key] = log_t_points(s, X, mu_post, phi_post, consts)
            out += sign * table[key]
    return out
