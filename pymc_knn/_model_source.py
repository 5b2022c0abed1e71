"""A PyMC model as the source of path sampling: its Potts term, labels and priors.

:func:`pymc_knn.log_normaliser`, :func:`pymc_knn.grid_posterior`,
:func:`pymc_knn.path_sampling_posterior` and :func:`pymc_knn.log_evidence` accept a
``pm.Model`` whose only likelihood is one observed ``PottsKNN`` or ``DistanceNN`` term. The
evidence ``p(y) = sum_theta int pi(beta) pi(theta) q(y | beta, theta) / Z(beta, theta) dbeta``
then uses the model's own priors, which must be independent: ``beta`` a free variable with a
prior of its own (constant parameters), ``k`` or ``sigma`` another such variable or a constant,
and no other free or observed variable (the evidence would have to integrate over them too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from .terms import PottsTerm

__all__ = ["ModelSource", "constant_theta", "is_model", "model_source", "model_term"]


class ModelSource(NamedTuple):
    """What the path-sampling functions take from a model."""

    term: PottsTerm
    y: np.ndarray
    name: str  # the term's name (observed_data's variable)
    beta_prior: Callable
    theta_prior: Callable | None  # None when theta is a constant
    beta_spec: dict  # how a saved fit finds beta: {"name": ...}
    theta_spec: dict  # {"name": ...} or {"value": ...}
    theta_value: float | None  # the constant k or sigma, if any
    beta_support: float  # the prior mass where the likelihood is defined: beta >= 0
    theta_support: float  # k in 1..k_max, sigma > 0 (1 for a constant)


def is_model(obj) -> bool:
    """Whether ``obj`` is a ``pm.Model`` (without importing PyMC for other inputs)."""
    try:
        import pymc as pm
    except ImportError:  # pragma: no cover - pymc is a dependency
        return False
    return isinstance(obj, pm.Model)


def _log_prior(rv, dtype) -> Callable:
    """``values -> log density (or mass)`` of a scalar variable's prior, vectorised."""
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    value = pt.vector(f"{rv.name}_value", dtype=dtype)
    fn = pytensor.function([value], pm.logp(rv, value), on_unused_input="ignore")

    def log_prior(x):
        x = np.asarray(x)
        return np.broadcast_to(fn(np.ravel(x).astype(dtype)), x.shape).reshape(x.shape)

    return log_prior


def _mass_above_zero(rv) -> float:
    """``P(rv > 0)`` of a continuous prior, from its CDF (1 when PyMC has none for it)."""
    import pymc as pm

    try:
        return float(-np.expm1(np.asarray(pm.logcdf(rv, 0.0).eval())))
    except Exception:  # noqa: BLE001 - no logcdf for this distribution
        return 1.0


def model_term(model):
    """``(rv, node, name)``: the one observed Potts term of ``model``, its ``PottsRV`` node and
    its name; ``ValueError`` when there is none or several."""
    from .distributions import potts_node, potts_terms, term_name

    terms = [rv for rv in potts_terms(model) if rv in model.observed_RVs]
    if len(terms) != 1:
        raise ValueError(
            "the model must have exactly one observed PottsKNN or DistanceNN term, got "
            f"{[term_name(rv) for rv in terms]}: pass the term's graph and labels instead"
        )
    return terms[0], potts_node(terms[0]), term_name(terms[0])


def constant_theta(node):
    """The constant ``k`` or ``sigma`` of a Potts term's node, or None for a variable one."""
    from pytensor.graph.traversal import graph_inputs
    from pytensor.tensor.variable import TensorConstant

    theta = node.inputs[3]
    if all(isinstance(v, TensorConstant) for v in graph_inputs([theta])):
        return float(np.asarray(theta.eval()))
    return None


def model_source(model) -> ModelSource:
    """The one observed Potts term of ``model``, its labels and the priors of its parameters.

    Raises
    ------
    ValueError
        When the model has no observed Potts term or several, missing labels, another free or
        observed variable, a ``beta`` that is not a free variable, a ``k`` or ``sigma`` that is
        an expression, or priors that depend on each other.
    """
    from pytensor.graph.traversal import ancestors

    from .distributions import missing_labels, term_labels

    rv, node, name = model_term(model)
    if missing_labels(model, rv) is not None:
        raise ValueError(
            f"{name!r} has missing labels: the evidence and the grid posterior are for fully "
            "observed labels (drop the unlabelled points, or use pm.sample)"
        )
    others = [v.name for v in model.observed_RVs if v is not rv]
    if others:
        raise ValueError(
            f"the model has other observed variables {others}: path sampling gives the "
            f"evidence and posterior of the Potts term {name!r} alone"
        )
    beta, theta = node.inputs[2], node.inputs[3]
    free = list(model.free_RVs)
    if beta not in free:
        raise ValueError(
            f"beta of {name!r} must be a free variable with a prior (e.g. pm.Uniform('beta', 0, "
            "4)), not a constant or an expression: path sampling integrates over it"
        )
    theta_is_free = theta in free
    theta_free_ancestors = [v for v in free if v in set(ancestors([theta]))]
    if not theta_is_free and theta_free_ancestors:
        raise ValueError(
            f"the {node.op.term.graph.parameter} of {name!r} is an expression of free "
            "variables: give it a prior of its own or a constant"
        )
    params = [beta] + ([theta] if theta_is_free else [])
    extra = [v.name for v in free if v not in params]
    if extra:
        raise ValueError(
            f"the model has free variables {extra} besides the parameters of {name!r}: the "
            "evidence would have to integrate over them too"
        )
    for a, b in ((beta, theta), (theta, beta)):
        if theta_is_free and b in set(ancestors(a.owner.inputs)):
            raise ValueError(
                f"the prior of {a.name} depends on {b.name}: path sampling takes independent "
                "priors of beta and k (or sigma)"
            )
    term = node.op.term
    theta_value = None if theta_is_free else float(np.asarray(theta.eval()))
    beta_prior = _log_prior(beta, "float64")
    theta_prior = None
    theta_support = 1.0
    if theta_is_free:
        theta_prior = _log_prior(theta, "int64" if term.is_knn else "float64")
        theta_support = (
            float(np.exp(theta_prior(np.arange(1, term.graph.k_max + 1))).sum())
            if term.is_knn
            else _mass_above_zero(theta)
        )
    return ModelSource(
        term=term,
        y=term_labels(model, rv),
        name=name,
        beta_prior=beta_prior,
        theta_prior=theta_prior,
        beta_spec={"name": beta.name},
        theta_spec={"name": theta.name} if theta_is_free else {"value": theta_value},
        theta_value=theta_value,
        beta_support=_mass_above_zero(beta),
        theta_support=theta_support,
    )
