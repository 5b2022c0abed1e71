"""The graphical posterior predictive classifier (Pavlenko and Rios 2017).

Decomposable Gaussian graphical models per class with a hyper normal-inverse-Wishart prior,
their exact local evidence and graph t predictive (:mod:`.evidence`), decomposable graphs on bit
masks (:mod:`.decomposable`), particle Gibbs over graphs (:mod:`.particle_gibbs`), graph
posteriors and model averaging (:mod:`.posterior`), the scikit-learn estimator
(:class:`GraphicalPredictiveClassifier`) and the PyMC side (:mod:`.model`: a distribution over
decomposable graphs, the evidence as an observed term, a particle Gibbs step).
"""

from .decomposable import enumerate_decomposable, is_chordal, n_junction_trees
from .estimator import GraphicalPredictiveClassifier
from .evidence import Hyper, class_hyper, graph_log_evidence, graph_log_predictive
from .model import DecomposableGraph, GaussianGraphicalEvidence, GraphParticleGibbs, edge_names
from .plots import plot_edge_inclusion
from .posterior import (
    GraphDraws,
    bma_log_predictive,
    edge_inclusion,
    exact_graph_posterior,
    graph_frequencies,
    graph_sizes,
    sample_graphs,
)

__all__ = [
    "DecomposableGraph",
    "GaussianGraphicalEvidence",
    "GraphDraws",
    "GraphParticleGibbs",
    "GraphicalPredictiveClassifier",
    "Hyper",
    "bma_log_predictive",
    "class_hyper",
    "edge_inclusion",
    "edge_names",
    "enumerate_decomposable",
    "exact_graph_posterior",
    "graph_frequencies",
    "graph_log_evidence",
    "graph_log_predictive",
    "graph_sizes",
    "is_chordal",
    "n_junction_trees",
    "plot_edge_inclusion",
    "sample_graphs",
]
