"""PyMC step methods for the parameters of a Potts likelihood term.

* :class:`Exchange` — the exchange algorithm (Friel and Pettitt 2011, section 4.2; Murray,
  Ghahramani and MacKay 2006): the intractable ``Z`` cancels against an auxiliary draw
  ``z ~ f(. | beta', theta')``.
* :class:`PseudoLikelihoodMetropolis` — Metropolis on the pseudo-posterior (Cucala et al. 2009,
  section 3.2): fast, biased.

Both propose jointly (Cucala et al. 2009, section 3.1): a Gaussian random walk for continuous
parameters on their transformed (value-variable) scale, and for ``k`` a uniform move on
``{k-r..k+r} \\ {k}`` cut to ``{1..k_max}``, with the Hastings correction for the cut. The scale of
both (``scaling``; ``r = round(k_radius * scaling)``) is tuned during tuning only, towards an
acceptance rate of 0.2-0.5 (PyMC's Metropolis rule), never after.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
from pymc.pytensorf import compile as pm_compile
from pymc.step_methods.arraystep import BlockedStep
from pymc.step_methods.compound import Competence
from pymc.step_methods.metropolis import tune as metropolis_tune
from pymc.util import get_value_vars_from_user_vars
from pytensor.graph.traversal import ancestors

from .distributions import PottsRV
from .kernels import log_pseudo_likelihood
from .terms import warn_not_exact

__all__ = ["Exchange", "PseudoLikelihoodMetropolis", "potts_terms", "potts_parameters"]


def potts_terms(model) -> list:
    """The Potts-likelihood random variables of a model (observed or not)."""
    return [rv for rv in model.basic_RVs if isinstance(rv.owner.op, PottsRV)]


def potts_parameters(model, term_rv) -> list:
    """Value variables of the free variables that a Potts term's beta and theta depend on."""
    params = term_rv.owner.inputs[2:]
    anc = set(ancestors(params))
    return [model.rvs_to_values[rv] for rv in model.free_RVs if rv in anc]


def _single_term(model, vars):
    terms = potts_terms(model)
    for rv in terms:
        if rv not in model.observed_RVs:
            raise ValueError(f"{rv.name}: a Potts term must be observed (observed=labels)")
    owners = [t for t in terms if set(vars) & set(potts_parameters(model, t))]
    if len(owners) != 1:
        raise ValueError(
            f"the variables {[v.name for v in vars]} must be parameters of exactly one PottsKNN or "
            f"DistanceNN term; they belong to {len(owners)}"
        )
    return owners[0]


class _PottsStep(BlockedStep):
    """Shared machinery: proposals, tuning, the tractable part of the posterior, stats."""

    default_blocked = True
    stats_dtypes_shapes = {
        "accept": (np.float64, []),
        "accepted": (np.float64, []),
        "tune": (bool, []),
        "scaling": (np.float64, []),
        "aux_sweeps": (np.int64, []),
        "aux_exact": (bool, []),
        "aux_energy": (np.float64, []),
    }

    def __init__(self, vars=None, *, model=None, blocked=True, scaling=1.0, proposal_sd=0.5,
                 k_radius=3, tune=True, tune_interval=100, rng=None, **kwargs):
        model = pm.modelcontext(model)
        if vars is None:
            terms = potts_terms(model)
            if len(terms) != 1:
                raise ValueError("give vars=: the model has %d Potts terms" % len(terms))
            vars = potts_parameters(model, terms[0])
        vars = get_value_vars_from_user_vars(vars, model)
        self.term_rv = _single_term(model, vars)
        allowed = potts_parameters(model, self.term_rv)
        stray = [v.name for v in vars if v not in allowed]
        if stray:
            raise ValueError(f"{stray} are not parameters of the Potts term {self.term_rv.name!r}")
        self.vars = vars
        self.term = self.term_rv.owner.op.term
        self.y = np.asarray(model.rvs_to_values[self.term_rv].data, dtype=np.int64)
        self._value_vars = list(model.value_vars)
        self._discrete = [v.dtype.startswith("int") for v in vars]
        others = [rv for rv in model.basic_RVs if rv is not self.term_rv]
        beta, theta = model.replace_rvs_by_values(self.term_rv.owner.inputs[2:])
        tractable = model.logp(vars=others, jacobian=True) if others else pm.math.constant(0.0)
        self._fn = pm_compile(self._value_vars, [tractable, beta, theta],
                              on_unused_input="ignore")
        self._fn.trust_input = True
        self._scaling0 = float(scaling)
        self.scaling = float(scaling)
        self.proposal_sd = float(proposal_sd)
        self.k_radius = int(k_radius)
        self.tune = bool(tune)
        self.tune_interval = int(tune_interval)
        self._n_tuned = 0
        self._n_accepted = 0
        self._warned = False
        self.rng = np.random.default_rng(rng)
        if self.term.is_knn:
            self._check_k_prior(model)

    def _check_k_prior(self, model):
        """A prior on k must not put mass beyond k_max: the cut would silently truncate it."""
        K = self.term.graph.k_max
        point = model.initial_point()
        for v, discrete in zip(self.vars, self._discrete):
            if not discrete:
                continue
            trial = dict(point)
            trial[v.name] = np.asarray(K + 1, dtype=v.dtype)
            lp, _, theta = self._fn(*[np.asarray(trial[w.name], dtype=w.dtype) for w in self._value_vars])
            if np.isfinite(lp) and theta == K + 1:
                raise ValueError(
                    f"the prior of {v.name} allows k = {K + 1} > k_max = {K} (the smallest observed "
                    f"class size bounds k, Cucala et al. 2009, section 3): give it an upper bound "
                    f"<= {K}, e.g. pm.DiscreteUniform({v.name!r}, 1, {K})"
                )

    @staticmethod
    def competence(var, has_grad):
        return Competence.INCOMPATIBLE

    def reset_tuning(self):
        self.scaling = self._scaling0
        self._n_tuned = 0
        self._n_accepted = 0

    def stop_tuning(self):
        self.tune = False

    def _evaluate(self, point):
        lp, beta, theta = self._fn(*[point[v.name] for v in self._value_vars])
        return float(lp), float(beta), theta.item()

    def _propose(self, point):
        """A proposal in value space and its log Hastings correction."""
        new = dict(point)
        log_h = 0.0
        K = self.term.graph.k_max if self.term.is_knn else None
        r = max(1, int(round(self.k_radius * self.scaling)))
        for v, discrete in zip(self.vars, self._discrete):
            x = point[v.name]
            if discrete:
                k = int(x)
                moves = _moves(k, r, K)
                k_new = moves[self.rng.integers(moves.size)]
                log_h += np.log(moves.size) - np.log(_moves(k_new, r, K).size)
                new[v.name] = np.asarray(k_new, dtype=x.dtype)
            else:
                step = self.rng.normal(size=np.shape(x)) * self.proposal_sd * self.scaling
                new[v.name] = np.asarray(x + step, dtype=x.dtype)
        return new, log_h

    def step(self, point):
        lp0, beta0, theta0 = self._evaluate(point)
        new, log_h = self._propose(point)
        lp1, beta1, theta1 = self._evaluate(new)
        stats = {"aux_sweeps": 0, "aux_exact": True, "aux_energy": np.nan}
        if np.isfinite(lp1):
            log_r, stats = self._log_ratio(beta0, theta0, beta1, theta1)
            log_alpha = lp1 - lp0 + log_h + log_r
        else:
            log_alpha = -np.inf
        accept = float(np.exp(min(0.0, log_alpha)))
        accepted = bool(np.log(self.rng.random()) < log_alpha)
        if self.tune:
            self._n_tuned += 1
            self._n_accepted += accepted
            if self._n_tuned == self.tune_interval:
                self.scaling = float(metropolis_tune(self.scaling, self._n_accepted / self._n_tuned))
                self._n_tuned = self._n_accepted = 0
        out = new if accepted else point
        stats.update(accept=accept, accepted=float(accepted), tune=self.tune, scaling=self.scaling)
        return out, [stats]


def _moves(k: int, r: int, K: int) -> np.ndarray:
    """``{k-r..k+r} \\ {k}`` cut to ``{1..K}``: the support of the k proposal from ``k``."""
    lo, hi = max(1, k - r), min(K, k + r)
    cand = np.arange(lo, hi + 1)
    return cand[cand != k]


class Exchange(_PottsStep):
    """The exchange algorithm for ``(beta, k)`` or ``(beta, sigma)`` of a Potts term.

    Acceptance ratio, with ``z ~ f(. | theta')`` drawn by the auxiliary sampler::

        q(y|theta') pi(theta') q(z|theta) h(theta|theta') / [q(y|theta) pi(theta) q(z|theta') h(theta'|theta)]

    Parameters
    ----------
    vars : list, optional
        The Potts term's parameters (default: all of them).
    sampler : {"swendsen_wang", "gibbs", "cftp", "enumerate"}
        Auxiliary sampler. "cftp" (two classes) and "enumerate" (a dozen points) are exact; the
        others run ``sweeps`` sweeps from ``start`` and are approximate.
    sweeps : int
        Sweeps of an approximate auxiliary draw.
    start : {"observed", "random"}
        Where an approximate auxiliary chain starts: the observed labels or uniform labels.
    max_sweeps : int
        CFTP's bound on its look-back; beyond it the draw is approximate, with a warning and
        ``aux_exact = False`` in sample_stats.
    scaling, proposal_sd, k_radius, tune_interval
        Random-walk sd ``proposal_sd * scaling`` (value scale) and k radius
        ``round(k_radius * scaling)``; ``scaling`` is tuned every ``tune_interval`` draws
        during tuning.
    """

    name = "exchange"

    def __init__(self, vars=None, *, sampler="swendsen_wang", sweeps=10, start="observed",
                 max_sweeps=4096, **kwargs):
        super().__init__(vars, **kwargs)
        self.sampler = self.term.check_sampler(sampler)
        if start not in ("observed", "random"):
            raise ValueError(f"start must be 'observed' or 'random', got {start!r}")
        self.start = start
        self.sweeps = int(sweeps)
        self.max_sweeps = int(max_sweeps)
        self._y_energy: dict = {}

    @staticmethod
    def competence(var, has_grad):
        return Competence.IDEAL if _is_potts_parameter(var) else Competence.INCOMPATIBLE

    def _energy_y(self, theta):
        key = theta
        e = self._y_energy.get(key)
        if e is None:
            e = self._y_energy[key] = self.term.energy(self.y, theta)
        return e

    def _log_ratio(self, beta0, theta0, beta1, theta1):
        term = self.term
        start = self.y if self.start == "observed" else self.rng.integers(0, term.n_classes, term.n)
        z, used, exact = term.draw(beta1, theta1, start, self.rng, self.sampler, self.sweeps,
                                   self.max_sweeps)
        if self.sampler == "cftp" and not exact and not self._warned:
            warn_not_exact("Exchange", self.max_sweeps)
            self._warned = True
        e1 = term.energy(z, theta1)
        e0 = e1 if theta0 == theta1 else term.energy(z, theta0)
        log_r = (beta1 * self._energy_y(theta1) - beta0 * self._energy_y(theta0)
                 + beta0 * e0 - beta1 * e1)
        exact = exact if self.sampler in ("cftp", "enumerate") else False
        return log_r, {"aux_sweeps": used, "aux_exact": exact, "aux_energy": e1}


class PseudoLikelihoodMetropolis(_PottsStep):
    """Random-walk Metropolis on the pseudo-posterior (Cucala et al. 2009, eq. 8).

    The likelihood is replaced by the product of the full conditionals. Fast, but biased: its
    posterior is not the model's (Cucala et al., section 3.5). Parameters as for :class:`Exchange`
    without the auxiliary ones.
    """

    name = "pseudo_likelihood_metropolis"

    def __init__(self, vars=None, **kwargs):
        super().__init__(vars, **kwargs)
        self._pl: dict = {}

    def _log_pl(self, beta, theta):
        key = (beta, theta)
        v = self._pl.get(key)
        if v is None:
            c = self.term.coupling(theta)
            v = log_pseudo_likelihood(c.indptr, c.indices, c.data, self.y, beta, self.term.class_weights)
            if len(self._pl) > 4:
                self._pl.clear()
            self._pl[key] = v
        return v

    def _log_ratio(self, beta0, theta0, beta1, theta1):
        log_r = self._log_pl(beta1, theta1) - self._log_pl(beta0, theta0)
        return log_r, {"aux_sweeps": 0, "aux_exact": True, "aux_energy": np.nan}


def _is_potts_parameter(rv) -> bool:
    """Whether a model's free RV feeds the beta or theta of one of its Potts terms."""
    try:
        model = pm.modelcontext(None)
    except TypeError:
        from .safety import current_model

        model = current_model()
    if model is None:
        return False
    for term in potts_terms(model):
        if rv in set(ancestors(term.owner.inputs[2:])):
            return True
    return False
