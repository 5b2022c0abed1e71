"""pymc-knn: Bayesian nearest-neighbour classification as PyMC models.

Potts (Boltzmann) random fields on class labels over nearest-neighbour graphs of the covariates:
the probabilistic kNN of Cucala et al. (2009) and the distance-nearest-neighbour models of Friel
and Pettitt (2011), with the numba samplers and exact enumeration they are checked against.
"""

from . import datasets, graphical, kernels, samplers, testing
from .approx import Korea, korea
from .classical import knn_error_rates, knn_predict, knn_vote, loo_choose_k, loo_error_curve
from .diagnostics import (
    ConvergenceWarning,
    PriorBoundWarning,
    check_convergence,
    check_prior_bounds,
)
from .distributions import DistanceNN, PottsKNN
from .evidence import (
    Evidence,
    compare_evidence,
    grid_posterior,
    log_evidence,
    path_sampling_posterior,
)
from .graphical import (
    DecomposableGraph,
    GaussianGraphicalEvidence,
    GraphicalPredictiveClassifier,
    GraphParticleGibbs,
)
from .graphs import Coupling, DistanceGraph, KNNGraph, default_k_max, max_k
from .normalising import log_normaliser
from .phase import beta_max, mean_energy_curve
from .predict import (
    add_predictions,
    compute_predictions,
    imputed_proba,
    predict_proba,
    predictive_summary,
    summarize_proba,
    uncertainty_zones,
)
from . import _numba_mode  # registers the Ops with PyTensor's numba backend
from .safety import install as _install
from .sklearn import BayesianKNNClassifier
from .step_methods import Exchange, Moller, PottsGibbs, PseudoLikelihoodMetropolis

_install()

__version__ = "0.1.0.dev0"

__all__ = [
    "BayesianKNNClassifier",
    "ConvergenceWarning",
    "Coupling",
    "DistanceGraph",
    "DecomposableGraph",
    "DistanceNN",
    "Evidence",
    "Exchange",
    "GaussianGraphicalEvidence",
    "GraphParticleGibbs",
    "GraphicalPredictiveClassifier",
    "PottsGibbs",
    "PottsKNN",
    "PriorBoundWarning",
    "PseudoLikelihoodMetropolis",
    "KNNGraph",
    "Korea",
    "Moller",
    "add_predictions",
    "beta_max",
    "check_convergence",
    "check_prior_bounds",
    "compare_evidence",
    "datasets",
    "default_k_max",
    "grid_posterior",
    "imputed_proba",
    "kernels",
    "knn_error_rates",
    "knn_predict",
    "knn_vote",
    "korea",
    "log_evidence",
    "log_normaliser",
    "loo_choose_k",
    "loo_error_curve",
    "max_k",
    "mean_energy_curve",
    "path_sampling_posterior",
    "compute_predictions",
    "predict_proba",
    "predictive_summary",
    "samplers",
    "summarize_proba",
    "testing",
    "uncertainty_zones",
]
