"""Keeps PyMC's own samplers away from the intractable term, and registers the package's steps.

On import (of ``pymc_knn``):

* :class:`~pymc_knn.step_methods.Exchange`, ``Moller`` and ``PseudoLikelihoodMetropolis`` go first
  in ``pymc.STEP_METHODS``; for a parameter of a Potts term their competences are IDEAL,
  PREFERRED and COMPATIBLE (INCOMPATIBLE elsewhere), so ``pm.sample`` assigns Exchange;
* ``pm.sample``'s step assignment is checked: a parameter of a Potts term handled by any step
  not written for it (NUTS, Metropolis, Slice, ...) raises a ``ValueError`` naming the steps to
  use;
* ``compute_log_likelihood`` (``pm.compute_log_likelihood``, and ``idata_kwargs={"log_likelihood":
  True}``) leaves the Potts terms out, with a warning, and refuses a Potts term named in
  ``var_names``: their logp is unnormalised, so LOO or WAIC on it would be meaningless;
* every InferenceData PyMC builds from a model records each observed Potts term's covariates and
  options in ``constant_data`` (:mod:`pymc_knn.records`), so a saved fit predicts on its own;
* ``pm.sample_posterior_predictive``, ``pm.sample_prior_predictive`` and ``pm.draw`` count the
  approximate label draws of a Potts term over the whole call and warn once, with the count
  (:mod:`pymc_knn._forward`);
* ``pm.find_MAP`` on a Potts term's parameters and ``pm.sample_smc`` on a model with a Potts term
  raise a ``ValueError`` that names the cause and what to use instead: both would treat the
  unnormalised logp as the posterior's (find_MAP's beta runs to its prior's bound);
* ``pm.sample(nuts_sampler="nutpie" | "numpyro" | "blackjax")`` on a model whose Potts term has
  free parameters raises a ``ValueError`` that says why and what to use (PyMC's own message,
  "can not be sampled with NUTS alone", does not name the term).
"""

from __future__ import annotations

import functools
import warnings

import pymc as pm
import pymc.backends.arviz as _arviz
import pymc.sampling
import pymc.sampling.forward as _forward
import pymc.sampling.mcmc as _mcmc
import pymc.smc
import pymc.smc.sampling
import pymc.stats
import pymc.stats.log_density as _log_density
import pymc.tuning
import pymc.tuning.starting
from pymc.util import get_value_vars_from_user_vars

from ._forward import counting_draws
from .distributions import potts_parameter_rvs, potts_parameters, potts_terms
from .records import with_training_data
from .step_methods import Exchange, Moller, PottsGibbs, PottsStep, PseudoLikelihoodMetropolis
from .step_methods._steps import _MODEL


def _steps_and_vars(provided, selected):
    pairs = []
    for step in provided:
        for s in getattr(step, "methods", [step]):
            pairs.extend((type(s), v) for v in s.vars)
    for cls, vars in selected.items():
        pairs.extend((cls, v) for v in vars)
    return pairs


def _checked_assign(original):
    @functools.wraps(original)
    def assign_step_methods(model, step=None, methods=None):
        token = _MODEL.set(model)
        try:
            provided, selected = original(model, step, methods)
        finally:
            _MODEL.reset(token)
        params = {v for t in potts_terms(model) for v in potts_parameters(model, t)}
        for cls, var in _steps_and_vars(provided, selected):
            if var in params and not issubclass(cls, PottsStep):
                raise ValueError(
                    f"{cls.__name__} was assigned to {var.name!r}, a parameter of a PottsKNN or "
                    "DistanceNN likelihood whose normalising constant is intractable: its logp is "
                    "unnormalised and PyMC's own samplers would sample the wrong posterior. Use "
                    "pk.Exchange (the default), pk.Moller or pk.PseudoLikelihoodMetropolis for it."
                )
        return provided, selected

    assign_step_methods._pymc_knn_checked = True
    return assign_step_methods


def _filtered_log_likelihood(original):
    @functools.wraps(original)
    def compute_log_likelihood(idata, *, var_names=None, model=None, **kwargs):
        model = pm.modelcontext(model)
        potts = {rv.name for rv in potts_terms(model)}
        if var_names is not None and potts & set(var_names):
            raise ValueError(
                f"compute_log_likelihood: {sorted(potts & set(var_names))} is a Potts term, whose "
                "logp lacks its intractable normalising constant: pointwise log-likelihoods (LOO, "
                "WAIC) are not defined for it. Compare models by their evidence instead"
            )
        names = [rv.name for rv in model.observed_RVs] if var_names is None else list(var_names)
        dropped = [n for n in names if n in potts]
        if dropped:
            warnings.warn(
                f"log_likelihood: {dropped} left out: a Potts term's logp lacks its intractable "
                "normalising constant, so pointwise log-likelihoods (LOO, WAIC) are not defined "
                "for it",
                UserWarning,
                stacklevel=3,
            )
        kept = [n for n in names if n not in potts]
        if not kept:
            return idata
        return original(idata, var_names=kept, model=model, **kwargs)

    compute_log_likelihood._pymc_knn_checked = True
    return compute_log_likelihood


def _refusing_find_map(original):
    @functools.wraps(original)
    def find_MAP(*args, vars=None, model=None, **kwargs):
        model = pm.modelcontext(model)
        params = {v for t in potts_terms(model) for v in potts_parameters(model, t)}
        chosen = params if vars is None else set(get_value_vars_from_user_vars(vars, model))
        if params & chosen:
            raise ValueError(
                "find_MAP would maximise the unnormalised logp of a PottsKNN or DistanceNN term, "
                "which lacks its normalising constant Z(beta, theta): its beta runs to the prior's "
                "upper bound. For a point estimate use the posterior of pm.sample (pk.Exchange), "
                "or pk.korea(X, y) (the pseudo-posterior's Laplace approximation, kNN models)"
            )
        return original(*args, vars=vars, model=model, **kwargs)

    find_MAP._pymc_knn_checked = True
    return find_MAP


def _refusing_smc(original):
    @functools.wraps(original)
    def sample_smc(*args, model=None, **kwargs):
        if potts_terms(pm.modelcontext(model)):
            raise ValueError(
                "sample_smc tempers the likelihood's logp, which for a PottsKNN or DistanceNN term "
                "lacks its intractable normalising constant: it would sample the wrong "
                "posterior. Use pm.sample (pk.Exchange is assigned by default)"
            )
        return original(*args, model=model, **kwargs)

    sample_smc._pymc_knn_checked = True
    return sample_smc


def _refusing_external_nuts(original):
    @functools.wraps(original)
    def sample(*args, **kwargs):
        nuts_sampler = kwargs.get("nuts_sampler", "pymc")
        if nuts_sampler != "pymc":
            model = pm.modelcontext(kwargs.get("model"))
            params = sorted(
                {v.name for t in potts_terms(model) for v in potts_parameter_rvs(model, t)}
            )
            if params:
                raise ValueError(
                    f"nuts_sampler={nuts_sampler!r}: {params} are parameters of a PottsKNN or "
                    "DistanceNN likelihood, whose normalising constant is intractable; an external "
                    "NUTS sampler would sample its unnormalised logp (and a kNN term's k is "
                    "discrete). Leave nuts_sampler at 'pymc': pm.sample assigns pk.Exchange to "
                    "them (and NUTS to the model's other continuous variables)"
                )
        return original(*args, **kwargs)

    sample._pymc_knn_checked = True
    return sample


def _recording_constant_data(original):
    @functools.wraps(original)
    def constant_data_to_xarray(self):
        return with_training_data(
            original(self), self.model, getattr(self, "dims", None), getattr(self, "coords", None)
        )

    constant_data_to_xarray._pymc_knn_checked = True
    return constant_data_to_xarray


def _patch(wrapper, *places):
    """Replace the function named ``places[0][1]`` by ``wrapper(it)`` wherever it is bound."""
    module, name = places[0]
    current = getattr(module, name)
    if getattr(current, "_pymc_knn_checked", False):
        return
    wrapped = wrapper(current)
    for module, name in places:
        setattr(module, name, wrapped)


def install() -> None:
    """Register the steps and the checks (idempotent)."""
    for i, cls in enumerate((Exchange, Moller, PseudoLikelihoodMetropolis, PottsGibbs)):
        if cls not in pm.STEP_METHODS:
            pm.STEP_METHODS.insert(i, cls)
    if not getattr(_mcmc.assign_step_methods, "_pymc_knn_checked", False):
        _mcmc.assign_step_methods = _checked_assign(_mcmc.assign_step_methods)
    _patch(
        _filtered_log_likelihood,
        (_log_density, "compute_log_likelihood"),
        (pymc.stats, "compute_log_likelihood"),
        (pm, "compute_log_likelihood"),
    )
    _patch(
        _refusing_find_map,
        (pymc.tuning.starting, "find_MAP"),
        (pymc.tuning, "find_MAP"),
        (pm, "find_MAP"),
    )
    _patch(_recording_constant_data, (_arviz.InferenceDataConverter, "constant_data_to_xarray"))
    _patch(
        _refusing_smc,
        (pymc.smc.sampling, "sample_smc"),
        (pymc.smc, "sample_smc"),
        (pm, "sample_smc"),
    )
    _patch(_refusing_external_nuts, (_mcmc, "sample"), (pymc.sampling, "sample"), (pm, "sample"))
    for name in ("sample_posterior_predictive", "sample_prior_predictive", "draw"):
        _patch(counting_draws, (_forward, name), (pymc.sampling, name), (pm, name))
