"""PyMC step methods for the parameters of a Potts likelihood term.

* :class:`Exchange` — the exchange algorithm (Friel and Pettitt 2011, section 4.2; Murray,
  Ghahramani and MacKay 2006): the intractable ``Z`` cancels against an auxiliary draw
  ``z' ~ f(. | beta', theta')``.
* :class:`Moller` — the auxiliary-variable method of Møller et al. (2006) as used by Cucala et al.
  (2009, section 3.4), with the acceptance ratio as corrected by Segerie and Peyrot (section 3.2):
  the auxiliary ``z`` is part of the chain's state, with a plug-in target ``q(z | theta_hat)``.
* :class:`PseudoLikelihoodMetropolis` — Metropolis on the pseudo-posterior (Cucala et al. 2009,
  section 3.2): fast, biased.

All propose jointly (Cucala et al. 2009, section 3.1): a Gaussian random walk for continuous
parameters on their transformed (value-variable) scale, and for ``k`` a uniform move on
``{k-r..k+r} \\ {k}`` cut to ``{1..k_max}``, with the Hastings correction for the cut. One factor
``scaling`` sets both (sd ``proposal_sd * scaling``; ``r = max(1, round(k_radius * scaling))``,
and ``k`` moves at all with probability ``min(1, k_radius * scaling)``, so that a small scaling
shrinks the k move as well as the beta move); it is tuned during tuning only, every
``tune_interval`` draws, by PyMC's Metropolis rule, which aims at an acceptance rate between 0.2
and 0.5, but never below ``SCALING_FLOOR`` times its initial value: Møller's acceptance does not
rise as the step shrinks (it is capped by the auxiliary weights), and on Ripley's data the rule
drove the scaling to zero and froze ``k``. Reaching the floor is reported by a warning when
tuning ends. ``tune=False`` keeps the scaling fixed (PyMC resets a step's ``tune`` flag itself,
so the choice is kept apart, as ``adapt``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
from pymc.pytensorf import compile as pm_compile
from pymc.step_methods.arraystep import BlockedStep
from pymc.step_methods.compound import Competence, StepMethodState
from pymc.step_methods.metropolis import tune as metropolis_tune
from pymc.step_methods.state import dataclass_state
from pymc.util import get_value_vars_from_user_vars
from pytensor.graph.traversal import ancestors

from ._validation import check_positive
from .distributions import PottsRV
from .terms import CFTP_MAX_SWEEPS, warn_not_exact

SCALING_FLOOR = 0.05
"""The smallest ``scaling`` tuning may reach, relative to the initial ``scaling``."""

__all__ = ["Exchange", "Moller", "PseudoLikelihoodMetropolis", "potts_terms", "potts_parameters"]


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


@dataclass_state
class PottsStepState(StepMethodState):
    scaling: float
    tune: bool
    n_tuned: int
    n_accepted: int


class _PottsStep(BlockedStep):
    """Shared machinery: proposals, tuning, the tractable part of the posterior, stats."""

    default_blocked = True
    _state_class = PottsStepState
    stats_dtypes_shapes = {
        "accept": (np.float64, []),
        "accepted": (np.float64, []),
        "tune": (bool, []),
        "scaling": (np.float64, []),
        "aux_sampler": (np.dtype("U16"), []),
        "aux_sweeps": (np.int64, []),
        "aux_exact": (bool, []),
        "aux_energy": (np.float64, []),
    }

    def __init__(self, vars=None, *, model=None, blocked=True, initial_point=None,
                 compile_kwargs=None, scaling=1.0, proposal_sd=0.5, k_radius=None, tune=True,
                 tune_interval=100, rng=None):
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
                              on_unused_input="ignore", **(compile_kwargs or {}))
        self._fn.trust_input = True
        self._scaling0 = check_positive(scaling, "scaling")
        self.scaling = self._scaling0
        self.proposal_sd = check_positive(proposal_sd, "proposal_sd")
        if k_radius is None:
            k_radius = max(3, self.term.graph.k_max // 5) if self.term.is_knn else 3
        if isinstance(k_radius, bool) or not float(k_radius).is_integer() or k_radius < 1:
            raise ValueError(f"k_radius must be an integer >= 1, got {k_radius!r}")
        self.k_radius = int(k_radius)
        self.tune = bool(tune)
        self.adapt = bool(tune)
        self.tune_interval = int(tune_interval)
        self.n_tuned = 0
        self.n_accepted = 0
        self._warned = False
        self.rng = np.random.default_rng(rng)
        point = model.initial_point() if initial_point is None else initial_point
        if self.term.is_knn:
            self._check_k_prior(point)
        if self.term.beta_max is not None:
            self._check_beta_prior(model, point)

    def _eval_at(self, point):
        return self._fn(*[np.asarray(point[w.name], dtype=w.dtype) for w in self._value_vars])

    def _check_k_prior(self, point):
        """A prior on k must not put mass beyond k_max: the cut would silently truncate it."""
        K = self.term.graph.k_max
        for v, discrete in zip(self.vars, self._discrete):
            if not discrete:
                continue
            lp, _, theta = self._eval_at({**point, v.name: K + 1})
            if np.isfinite(lp) and theta == K + 1:
                raise ValueError(
                    f"the prior of {v.name} allows k = {K + 1} > k_max = {K} (the smallest observed "
                    f"class size bounds k, Cucala et al. 2009, section 3): give it an upper bound "
                    f"<= {K}, e.g. pm.DiscreteUniform({v.name!r}, 1, {K})"
                )

    def _check_beta_prior(self, model, point):
        """When beta is a free variable, its prior must not reach past the term's beta_max."""
        beta_rv = self.term_rv.owner.inputs[2]
        if beta_rv not in model.free_RVs:
            return  # an expression: checked on every proposal instead
        value_var = model.rvs_to_values[beta_rv]
        beyond = np.asarray(self.term.beta_max * (1 + 1e-6) + 1e-9)
        transform = model.rvs_to_transforms.get(beta_rv)
        if transform is not None:
            beyond = transform.forward(beyond, *beta_rv.owner.inputs).eval()
        if np.all(np.isfinite(beyond)):
            lp, beta, _ = self._eval_at({**point, value_var.name: beyond})
            if np.isfinite(lp):
                raise self._beta_error(beta)

    def _beta_error(self, beta):
        return ValueError(
            f"the prior of beta reaches past beta_max = {self.term.beta_max:g} (here beta = "
            f"{float(beta):.4g} has positive prior density): beyond beta_max the field is frozen "
            f"in one class and its auxiliary draws break down (Cucala et al. 2009, section 3). "
            f"Bound the prior, e.g. pm.Uniform('beta', 0, {self.term.beta_max:g})"
        )

    @staticmethod
    def competence(var, has_grad):
        return Competence.INCOMPATIBLE

    def reset_tuning(self):
        self.scaling = self._scaling0
        self.n_tuned = 0
        self.n_accepted = 0

    def stop_tuning(self):
        if self.tune and self.adapt and self.scaling <= SCALING_FLOOR * self._scaling0 * (1 + 1e-9):
            warnings.warn(
                f"{type(self).__name__}: the acceptance rate stayed low at the smallest proposal "
                f"scaling ({self.scaling:.3g}); the chain may mix poorly. For Moller the acceptance "
                "is capped by the auxiliary weights whatever the step: move the plug-in nearer "
                "the posterior, or use Exchange", UserWarning, stacklevel=2)
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
        p_move = min(1.0, self.k_radius * self.scaling)
        for v, discrete in zip(self.vars, self._discrete):
            x = point[v.name]
            if discrete:
                k = int(x)
                if self.rng.random() >= p_move:
                    continue  # symmetric: a small scaling shrinks the k move too
                moves = _moves(k, r, K)
                if moves.size == 0:
                    continue  # k_max = 1: k is fixed
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
        stats = self._no_aux_stats()
        if np.isfinite(lp1):
            if self.term.beta_max is not None and beta1 > self.term.beta_max:
                raise self._beta_error(beta1)
            log_r, stats = self._log_ratio(beta0, theta0, beta1, theta1)
            log_alpha = lp1 - lp0 + log_h + log_r
        else:
            log_alpha = -np.inf
        accept = float(np.exp(min(0.0, log_alpha)))
        accepted = bool(np.log(self.rng.random()) < log_alpha)
        self._after(accepted, *((beta1, theta1) if accepted else (beta0, theta0)))
        if self.tune and self.adapt:
            self.n_tuned += 1
            self.n_accepted += accepted
            if self.n_tuned == self.tune_interval:
                tuned = metropolis_tune(self.scaling, self.n_accepted / self.n_tuned)
                self.scaling = max(float(tuned), SCALING_FLOOR * self._scaling0)
                self.n_tuned = self.n_accepted = 0
        stats.update(accept=accept, accepted=float(accepted), tune=self.tune, scaling=self.scaling)
        return (new if accepted else point), [stats]

    def _after(self, accepted, beta, theta):
        """Hook run after each accept/reject with the chain's new (beta, theta)."""

    def _no_aux_stats(self):
        return {"aux_sampler": "none", "aux_sweeps": 0, "aux_exact": True, "aux_energy": np.nan}


def _moves(k: int, r: int, K: int) -> np.ndarray:
    """``{k-r..k+r} \\ {k}`` cut to ``{1..K}``: the support of the k proposal from ``k``."""
    lo, hi = max(1, k - r), min(K, k + r)
    cand = np.arange(lo, hi + 1)
    return cand[cand != k]


class _AuxiliaryStep(_PottsStep):
    """A step that draws auxiliary labels ``z' ~ f(. | beta', theta')`` on every proposal."""

    def __init__(self, vars=None, *, sampler="swendsen_wang", sweeps=10, start="observed",
                 max_sweeps=CFTP_MAX_SWEEPS, **kwargs):
        super().__init__(vars, **kwargs)
        self.sampler = self.term.check_sampler(sampler)
        if start not in ("observed", "random"):
            raise ValueError(f"start must be 'observed' or 'random', got {start!r}")
        self.start = start
        self.sweeps = int(sweeps)
        if self.sweeps < 1:
            raise ValueError(f"sweeps must be an integer >= 1, got {sweeps!r}")
        self.max_sweeps = int(max_sweeps)
        self._y_energy: dict = {}

    def _energy_y(self, theta):
        e = self._y_energy.get(theta)
        if e is None:
            if not self.term.is_knn and len(self._y_energy) > 4:
                self._y_energy.clear()  # sigma is continuous: keep the current and proposed
            e = self._y_energy[theta] = self.term.energy(self.y, theta)
        return e

    def _aux_draw(self, beta, theta):
        """``z ~ f(. | beta, theta)`` and its stats; warns once if CFTP did not coalesce."""
        term = self.term
        start = self.y if self.start == "observed" else self.rng.integers(0, term.n_classes, term.n)
        z, used, exact = term.draw(beta, theta, start, self.rng, self.sampler, self.sweeps,
                                   self.max_sweeps)
        if self.sampler == "cftp" and not exact and not self._warned:
            warn_not_exact(type(self).__name__, self.max_sweeps)
            self._warned = True
        exact = exact if self.sampler in ("cftp", "enumerate") else False
        return z, {"aux_sampler": self.sampler, "aux_sweeps": used, "aux_exact": exact,
                   "aux_energy": term.energy(z, theta)}


_AUX_PARAMETERS = """
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
        ``max(1, round(k_radius * scaling))``, k moving with probability
        ``min(1, k_radius * scaling)``; ``scaling`` is tuned every ``tune_interval`` draws
        during tuning, towards an acceptance rate of 0.2-0.5, down to ``SCALING_FLOOR`` (0.05)
        times its initial value at most (a warning says when it got there). Default
        ``k_radius``: ``max(3, k_max // 5)`` (25 on Ripley, where the ESS of k is ten times
        that of the paper's r = 3).
    tune : bool
        Adapt ``scaling`` during pm.sample's tuning draws (default); ``False`` keeps it fixed.
"""


class Exchange(_AuxiliaryStep):
    __doc__ = """The exchange algorithm for ``(beta, k)`` or ``(beta, sigma)`` of a Potts term.

    Acceptance ratio, with ``z ~ f(. | theta')`` drawn by the auxiliary sampler::

        q(y|theta') pi(theta') q(z|theta) h(theta|theta') / [q(y|theta) pi(theta) q(z|theta') h(theta'|theta)]
    """ + _AUX_PARAMETERS

    name = "exchange"

    @staticmethod
    def competence(var, has_grad):
        return Competence.IDEAL if _is_potts_parameter(var) else Competence.INCOMPATIBLE

    def _log_ratio(self, beta0, theta0, beta1, theta1):
        z, stats = self._aux_draw(beta1, theta1)
        e1 = stats["aux_energy"]
        e0 = e1 if theta0 == theta1 else self.term.energy(z, theta0)
        log_r = (beta1 * self._energy_y(theta1) - beta0 * self._energy_y(theta0)
                 + beta0 * e0 - beta1 * e1)
        return log_r, stats


@dataclass_state
class MollerState(PottsStepState):
    z: np.ndarray | None
    plug_in: tuple
    path: list


class Moller(_AuxiliaryStep):
    __doc__ = """The auxiliary-variable method of Møller et al. (2006) for a Potts term's parameters.

    The chain runs on ``(theta, z)``: ``z`` lives in the step's state, with the artificial target
    ``g(z) = q(z | theta_hat) / Z(theta_hat)`` at a plug-in ``theta_hat = (beta_hat, k_hat)``
    (Cucala et al. 2009, section 3.4). A proposal ``(theta', z')`` draws ``z' ~ f(. | theta')`` and
    is accepted with the ratio as corrected by Segerie and Peyrot (section 3.2)::

        q(y|theta') pi(theta') q(z'|theta_hat) q(z|theta) h(theta|theta')
        ------------------------------------------------------------------
        q(y|theta)  pi(theta)  q(z|theta_hat)  q(z'|theta') h(theta'|theta)

    The plug-in starts at the maximum pseudo-likelihood estimate (or ``plug_in``) and, when
    ``adapt_plug_in``, is replaced during tuning, every ``tune_interval`` draws, by the average of
    the second half of the tuning draws so far (``k_hat`` rounded); it is fixed after tuning
    (Cucala et al., section 4). Whatever the plug-in, ``theta``'s stationary law is the exact
    posterior when the auxiliary draws are exact; a poor plug-in only slows mixing
    (their Fig. 8). The plug-in in use is reported as ``plug_in_beta`` and ``plug_in_theta`` in
    sample_stats.
    """ + _AUX_PARAMETERS + """    plug_in : tuple (beta_hat, theta_hat), optional
        The starting plug-in; default the maximum pseudo-likelihood estimate with beta in
        ``[0, plug_in_beta_max]``.
    adapt_plug_in : bool
        Update the plug-in during tuning.
    plug_in_beta_max : float
        Upper end of the pseudo-likelihood search for ``beta_hat``.
    """

    name = "moller"

    @staticmethod
    def competence(var, has_grad):
        return Competence.PREFERRED if _is_potts_parameter(var) else Competence.INCOMPATIBLE
    _state_class = MollerState
    stats_dtypes_shapes = {
        **_PottsStep.stats_dtypes_shapes,
        "plug_in_beta": (np.float64, []),
        "plug_in_theta": (np.float64, []),
    }

    def __init__(self, vars=None, *, plug_in=None, adapt_plug_in=True, plug_in_beta_max=4.0,
                 **kwargs):
        super().__init__(vars, **kwargs)
        if plug_in is None:
            plug_in = self.term.max_pseudo_likelihood(self.y, beta_upper=plug_in_beta_max)
        self._plug_in0 = self._check_plug_in(plug_in)
        self.adapt_plug_in = bool(adapt_plug_in)
        self.plug_in = self._plug_in0
        self.z = None
        self.path = []

    def _check_plug_in(self, plug_in):
        try:
            beta, theta = plug_in
        except (TypeError, ValueError):
            raise ValueError(f"plug_in must be a pair (beta_hat, theta_hat), got {plug_in!r}")
        beta = float(beta)
        if not np.isfinite(beta) or beta < 0:
            raise ValueError(f"plug_in beta_hat must be finite and >= 0, got {beta!r}")
        if self.term.is_knn:
            theta = self.term.graph.check_k(theta)
        else:
            theta = check_positive(theta, "plug_in sigma_hat")
        return beta, theta

    def reset_tuning(self):
        super().reset_tuning()
        self.plug_in = self._plug_in0
        self.z = None
        self.path = []

    def _log_ratio(self, beta0, theta0, beta1, theta1):
        if self.z is None:
            self.z = self._aux_draw(beta0, theta0)[0]
        z1, stats = self._aux_draw(beta1, theta1)
        self._z_proposed = z1
        bh, th = self.plug_in
        term = self.term
        log_r = (beta1 * self._energy_y(theta1) - beta0 * self._energy_y(theta0)
                 + bh * (term.energy(z1, th) - term.energy(self.z, th))
                 + beta0 * term.energy(self.z, theta0) - beta1 * stats["aux_energy"])
        return log_r, stats

    def _after(self, accepted, beta, theta):
        if accepted:
            self.z = self._z_proposed
        if self.tune and self.adapt_plug_in:
            self.path.append((beta, theta))
            if len(self.path) % self.tune_interval == 0:
                recent = np.array(self.path[len(self.path) // 2:])
                b, t = recent.mean(axis=0)
                self.plug_in = (float(b), int(round(t)) if self.term.is_knn else float(t))

    def step(self, point):
        point, stats = super().step(point)
        stats[0].update(plug_in_beta=self.plug_in[0], plug_in_theta=float(self.plug_in[1]))
        return point, stats


class PseudoLikelihoodMetropolis(_PottsStep):
    """Random-walk Metropolis on the pseudo-posterior (Cucala et al. 2009, eq. 8).

    The likelihood is replaced by the product of the full conditionals. Fast, but biased: its
    posterior is not the model's (Cucala et al., section 3.5). Parameters as for :class:`Exchange`
    without the auxiliary ones.
    """

    name = "pseudo_likelihood_metropolis"

    @staticmethod
    def competence(var, has_grad):
        return Competence.COMPATIBLE if _is_potts_parameter(var) else Competence.INCOMPATIBLE

    def __init__(self, vars=None, **kwargs):
        super().__init__(vars, **kwargs)
        self._pl: dict = {}

    def _log_pl(self, beta, theta):
        key = (beta, theta)
        v = self._pl.get(key)
        if v is None:
            v = self.term.log_pseudo_likelihood(self.y, beta, theta)
            if len(self._pl) > 4:
                self._pl.clear()
            self._pl[key] = v
        return v

    def _log_ratio(self, beta0, theta0, beta1, theta1):
        log_r = self._log_pl(beta1, theta1) - self._log_pl(beta0, theta0)
        return log_r, self._no_aux_stats()


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
