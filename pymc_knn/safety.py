"""Keeps PyMC's own samplers away from the intractable term, and registers the package's steps.

On import (of ``pymc_knn``):

* :class:`~pymc_knn.step_methods.Exchange`, ``Moller`` and ``PseudoLikelihoodMetropolis`` go first
  in ``pymc.STEP_METHODS``; for a parameter of a Potts term their competences are IDEAL,
  PREFERRED and COMPATIBLE (INCOMPATIBLE elsewhere), so ``pm.sample`` assigns Exchange;
* ``pm.sample``'s step assignment is checked: a parameter of a Potts term handled by any step
  not written for it (NUTS, Metropolis, Slice, ...) raises a ``ValueError`` naming the steps to
  use;
* ``compute_log_likelihood`` (and so ``idata_kwargs={"log_likelihood": True}``) leaves the Potts
  terms out, with a warning: their logp is unnormalised, so LOO or WAIC on it would be meaningless.
"""

from __future__ import annotations

import functools
import warnings

import pymc as pm
import pymc.sampling.mcmc as _mcmc
import pymc.stats.log_density as _log_density

from .distributions import potts_parameters, potts_terms
from .step_methods import Exchange, Moller, PottsStep, PseudoLikelihoodMetropolis
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
        names = [rv.name for rv in model.observed_RVs] if var_names is None else list(var_names)
        dropped = [n for n in names if n in potts]
        if dropped:
            warnings.warn(
                f"log_likelihood: {dropped} left out: a Potts term's logp lacks its intractable "
                "normalising constant, so pointwise log-likelihoods (LOO, WAIC) are not defined "
                "for it", UserWarning, stacklevel=3)
        kept = [n for n in names if n not in potts]
        if not kept:
            return idata
        return original(idata, var_names=kept, model=model, **kwargs)

    compute_log_likelihood._pymc_knn_checked = True
    return compute_log_likelihood


def install() -> None:
    """Register the steps and the checks (idempotent)."""
    for i, cls in enumerate((Exchange, Moller, PseudoLikelihoodMetropolis)):
        if cls not in pm.STEP_METHODS:
            pm.STEP_METHODS.insert(i, cls)
    if not getattr(_mcmc.assign_step_methods, "_pymc_knn_checked", False):
        _mcmc.assign_step_methods = _checked_assign(_mcmc.assign_step_methods)
    if not getattr(_log_density.compute_log_likelihood, "_pymc_knn_checked", False):
        _log_density.compute_log_likelihood = _filtered_log_likelihood(
            _log_density.compute_log_likelihood)
