"""Label draws of a Potts term for PyMC's forward sampling, and the count of approximate ones.

``pm.sample_prior_predictive``, ``pm.sample_posterior_predictive`` and ``pm.draw`` call the
term's ``rng_fn`` once per draw. Each draw is a fresh field ``z ~ f(. | beta, theta)`` over the
term's points (:func:`draw_labels`). With two classes it is exact by coupling from the past when
that coalesces within a bound; otherwise it falls back to Swendsen-Wang sweeps, which mix quickly
where coupling from the past is slow (at and above the field's critical beta). The fall-backs
are counted over the whole PyMC call and reported by one warning at its end
(:func:`counting_draws`, which :mod:`pymc_knn.safety` wraps those functions with).

If ``C`` is the event that coupling from the past coalesces within the bound, the law of a draw
is ``P(C) pi(. | C) + P(not C) Q``, with ``pi(. | C)`` the law of the unbounded algorithm's
output on ``C`` and ``Q`` that of the fall-back, so its total-variation distance from the Potts
law is at most ``P(not C)``, which the fraction of fall-backs estimates.
"""

from __future__ import annotations

import contextvars
import functools
import warnings
from dataclasses import dataclass

import numpy as np

from ._validation import check_covariates
from .terms import PottsTerm


def draw_labels(term: PottsTerm, beta: float, theta, rng, cftp_sweeps: int, sweeps: int):
    """One field ``z ~ f(. | beta, theta)`` from uniformly random labels: ``(z, fell_back)``.

    Two classes: coupling from the past, exact if it coalesces within ``cftp_sweeps`` sweeps of
    look-back; if not (``fell_back``), the chain it ran from the random labels is continued by
    ``sweeps`` Swendsen-Wang sweeps. More classes (no exact sampler): ``sweeps`` Swendsen-Wang
    sweeps, never counted as a fall-back.
    """
    if not beta >= 0:
        raise ValueError(
            f"beta must be >= 0 for a draw of the labels, got {beta!r}: give beta a "
            "prior on [0, inf), e.g. pm.Uniform('beta', 0, 4)"
        )
    if term.is_knn:
        theta = term.graph.check_k(theta)
    z = rng.integers(0, term.n_classes, term.n)
    if term.n_classes == 2:
        z, _, exact = term.draw(beta, theta, z, rng, "cftp", max_sweeps=cftp_sweeps)
        if exact:
            return z, False
    z, _, _ = term.draw(beta, theta, z, rng, "swendsen_wang", sweeps)
    return z, term.n_classes == 2


def predictive_labels(term: PottsTerm, beta, theta, X_new, rng) -> np.ndarray:
    """Labels of new points, one set per ``(beta, theta)`` (arrays of one shape): each point's
    label from its predictive given the training labels (Cucala et al. 2009, eq. 5; the
    independent predictive of :func:`pymc_knn.predict_proba`).

    What ``pm.sample_posterior_predictive`` draws after ``pm.set_data`` moved a ``pm.Data``
    covariate to new points.
    """
    from ._forksafe import ForkSafe
    from .kernels import predictive

    _k = ForkSafe(predictive)

    if term.labels is None or (term.labels < 0).any():
        raise ValueError(
            "predicting new points with pm.set_data needs every training label observed: this "
            "term's labels are missing or partly missing (see pk.imputed_proba)"
        )
    X_new = check_covariates(X_new, "X (set by pm.set_data)", min_rows=1)
    g, a = term.graph, term.class_weights
    thetas, index = np.unique(np.ravel(theta), return_inverse=True)
    if term.is_knn:
        ks = np.array([g.check_k(k) for k in thetas], dtype=np.int64)
        q = _query(term, X_new, int(ks.max()))
        h = _k.knn_strengths(
            q.neighbours,
            q.enter_indptr,
            q.enter_index,
            q.enter_k,
            term.labels,
            ks,
            a,
            g.kind == "equal",
        )
    else:
        h = g.strengths(X_new, term.labels, np.asarray(thetas, dtype=np.float64), a)
    p = _k.draw_probabilities(h, np.ravel(beta).astype(np.float64), index.astype(np.int64))
    u = rng.random(p.shape[:2])
    labels = (u[..., None] > np.cumsum(p, axis=2)[..., :-1]).sum(axis=2)
    return labels.reshape(np.shape(beta) + (X_new.shape[0],)).astype(np.int64)


def _query(term: PottsTerm, X_new, k_max):
    """``term.graph.query(X_new, k_max)``, kept for the next draw (PyMC draws one at a time):
    asked up to the graph's ``k_max`` when the draw needs more than the last query holds."""
    key = (X_new.shape, hash(X_new.tobytes()))
    cached = getattr(term, "_query_cache", None)
    if cached is None or cached[0] != key or cached[1].neighbours.shape[1] < k_max:
        K = k_max if cached is None or cached[0] != key else term.graph.k_max
        cached = term._query_cache = (key, term.graph.query(X_new, K))
    return cached[1]


@dataclass
class _Tally:
    """Draws and fall-backs of one term over one PyMC call."""

    name: str
    draws: int = 0
    fell_back: int = 0
    beta_lo: float = np.inf
    beta_hi: float = -np.inf

    def add(self, n_draws: int, betas: np.ndarray) -> None:
        self.draws += n_draws
        self.fell_back += betas.size
        if betas.size:
            self.beta_lo = min(self.beta_lo, float(betas.min()))
            self.beta_hi = max(self.beta_hi, float(betas.max()))


_TALLIES: contextvars.ContextVar = contextvars.ContextVar("pymc_knn_label_draws", default=None)


def counting_draws(forward):
    """``forward`` (``pm.sample_posterior_predictive``, ``pm.sample_prior_predictive``,
    ``pm.draw``) with the fall-backs of its label draws counted over the whole call and
    reported by one warning per term at its end (installed by :mod:`pymc_knn.safety`)."""

    @functools.wraps(forward)
    def counted(*args, **kwargs):
        if _TALLIES.get() is not None:  # inside another counted call: that one reports
            return forward(*args, **kwargs)
        tallies: dict = {}
        token = _TALLIES.set(tallies)
        try:
            out = forward(*args, **kwargs)
        finally:
            _TALLIES.reset(token)
        for tally in tallies.values():
            if tally.fell_back:
                _warn(tally, stacklevel=3)  # _warn <- counted <- the user's call
        return out

    counted._pymc_knn_checked = True
    return counted


def count_fallbacks(name: str, term: PottsTerm, n_draws: int, betas) -> None:
    """Count one ``rng_fn`` call's ``n_draws`` draws, of which those at ``betas`` fell back:
    inside :func:`counting_draws` for the call's one warning; elsewhere (a compiled function
    called directly) a call with fall-backs warns for itself."""
    betas = np.asarray(betas, dtype=float).ravel()
    tallies = _TALLIES.get()
    if tallies is None:
        tally = _Tally(name)
        tally.add(n_draws, betas)
        if tally.fell_back:
            _warn(tally, stacklevel=4)  # _warn <- here <- rng_fn <- its caller
        return
    tallies.setdefault(id(term), _Tally(name)).add(n_draws, betas)


def _warn(tally: _Tally, stacklevel: int) -> None:
    from . import distributions

    span = (
        f"beta = {tally.beta_lo:.3g}"
        if tally.beta_lo == tally.beta_hi
        else f"beta from {tally.beta_lo:.3g} to {tally.beta_hi:.3g}"
    )
    cftp, sweeps = distributions.PREDICTIVE_CFTP_SWEEPS, distributions.PREDICTIVE_SWEEPS
    warnings.warn(
        f"{tally.name}: {tally.fell_back} of {tally.draws} draws of the labels are approximate: "
        f"for them ({span}) coupling from the past did not coalesce within {cftp} sweeps, "
        f"as expected near and above the field's critical beta, so each is the state after "
        f"{sweeps} further Swendsen-Wang sweeps; the other draws are exact. Raising "
        "pymc_knn.distributions.PREDICTIVE_CFTP_SWEEPS makes more of them exact, at a cost "
        "proportional to it (see docs/prediction.md, 'Prior and posterior predictive draws').",
        RuntimeWarning,
        stacklevel=stacklevel,
    )
