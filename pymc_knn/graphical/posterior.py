"""Graph posteriors of one class: particle Gibbs draws, exact enumeration, model averaging."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .decomposable import enumerate_decomposable
from .evidence import Hyper, graph_log_evidence, graph_log_predictive, new_cache
from .particle_gibbs import KERNELS, particle_gibbs


class GraphDraws(NamedTuple):
    """Particle Gibbs output of one class.

    Attributes
    ----------
    graphs : ndarray of uint64, shape (n_sweeps, p)
        The graph of each sweep as adjacency masks (``graphs[t, i]`` bit ``j``: edge ``i-j``).
    log_likelihood : ndarray, shape (n_sweeps,)
        ``log f(X | G)`` of each sweep's graph.
    """

    graphs: np.ndarray
    log_likelihood: np.ndarray


def sample_graphs(
    hyper: Hyper,
    *,
    n_particles=50,
    n_sweeps=2000,
    alpha=0.5,
    beta=0.5,
    seed=0,
    cache=None,
    log_q_offset=0.0,
    kernel="christmas_tree",
) -> GraphDraws:
    """Particle Gibbs draws of the class's graph (:mod:`pymc_knn.graphical.particle_gibbs`).

    ``kernel`` is ``"christmas_tree"`` (the paper's kernel over junction trees) or
    ``"simplicial"`` (the node-by-node expansion kernel over graphs). ``log_q_offset`` is for the
    tests' negative control only (a wrong kernel probability).
    """
    p = hyper.phi.shape[0]
    cache = new_cache() if cache is None else cache
    graphs, loglik = particle_gibbs(
        p,
        int(n_particles),
        int(n_sweeps),
        float(alpha),
        float(beta),
        float(log_q_offset),
        int(seed),
        cache,
        hyper.phi,
        hyper.phi_post,
        hyper.consts,
        kernel_code(kernel),
    )
    return GraphDraws(graphs, loglik)


def kernel_code(kernel: str) -> int:
    """The numba code of an expansion kernel's name; a ``ValueError`` for an unknown one."""
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {tuple(KERNELS)}, got {kernel!r}")
    return KERNELS[kernel]


def graph_frequencies(graphs) -> tuple[np.ndarray, np.ndarray]:
    """The distinct graphs among ``graphs`` (draws, p) and their relative frequencies."""
    unique, counts = np.unique(np.asarray(graphs, dtype=np.uint64), axis=0, return_counts=True)
    return unique, counts / counts.sum()


def exact_graph_posterior(hyper: Hyper) -> tuple[np.ndarray, np.ndarray]:
    """Every decomposable graph (p <= 6) and its posterior under the uniform graph prior."""
    graphs = enumerate_decomposable(hyper.phi.shape[0])
    cache = new_cache()
    logf = np.array([graph_log_evidence(hyper, g, cache) for g in graphs])
    w = np.exp(logf - logf.max())
    return graphs, w / w.sum()


def bma_log_predictive(hyper: Hyper, graphs, weights, X) -> np.ndarray:
    """``log sum_G w_G T_G(x)`` for each row of ``X``: the model-averaged predictive density."""
    table: dict[int, np.ndarray] = {}
    logs = np.stack([graph_log_predictive(hyper, g, X, table) for g in graphs])
    logw = np.log(np.asarray(weights, dtype=np.float64))[:, None]
    top = (logs + logw).max(axis=0)
    return top + np.log(np.exp(logs + logw - top).sum(axis=0))


def edge_inclusion(graphs) -> np.ndarray:
    """The fraction of ``graphs`` (draws, p) holding each edge: a symmetric (p, p) matrix."""
    graphs = np.asarray(graphs, dtype=np.uint64)
    p = graphs.shape[1]
    shifts = np.arange(p, dtype=np.uint64)
    bits = (graphs[:, :, None] >> shifts[None, None, :]) & np.uint64(1)
    return bits.mean(axis=0)


def graph_sizes(graphs) -> np.ndarray:
    """The number of edges of each graph in ``graphs`` (draws, p)."""
    graphs = np.asarray(graphs, dtype=np.uint64)
    p = graphs.shape[1]
    shifts = np.arange(p, dtype=np.uint64)
    bits = (graphs[:, :, None] >> shifts[None, None, :]) & np.uint64(1)
    return bits.sum(axis=(1, 2)) // 2
