"""The graphical model in PyMC: a distribution over decomposable graphs, the Gaussian graphical
evidence as an observed term, and a particle Gibbs step that ``pm.sample`` assigns by itself.

::

    with pm.Model(coords={"edge": edge_names(feature_names)}) as model:
        G = DecomposableGraph("G", p=4, dims="edge")          # uniform over decomposable graphs
        delta = pm.Gamma("delta", 2.0, 1.0)                    # optional: a prior on delta
        GaussianGraphicalEvidence("X", graph=G, delta=delta, observed=X)
        pm.Deterministic("graph_size", G.sum())
        idata = pm.sample()                                    # GraphParticleGibbs on G, Slice on delta

The graph is a vector of edge indicators, edges ``(i, j)``, ``i < j``, in lexicographic order.
The evidence is ``log f(X | G)`` of :mod:`pymc_knn.graphical.evidence` with the class mean as
``mu`` and ``Phi = I`` unless given; it has no gradient, so continuous parameters (``nu``,
``delta``) get PyMC's gradient-free steps.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import field
from typing import Any

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions.distribution import Distribution, _support_point
from pymc.logprob.abstract import _logprob
from pymc.step_methods.arraystep import BlockedStep
from pymc.step_methods.compound import Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_value_vars_from_user_vars
from pytensor.graph.basic import Apply
from pytensor.graph.traversal import ancestors
from pytensor.graph.op import Op
from pytensor.tensor.random.op import RandomVariable

from ._bits import MAX_NODES
from .decomposable import (
    MAX_ENUMERATION_NODES,
    adjacency_from_matrix,
    enumerate_decomposable,
    is_chordal,
    matrix_from_adjacency,
)
from .evidence import class_hyper, graph_log_evidence, new_cache
from .particle_gibbs import SIMPLICIAL, pg_transition
from .posterior import kernel_code

__all__ = ["DecomposableGraph", "GaussianGraphicalEvidence", "GraphParticleGibbs", "edge_names"]


def n_nodes(n_edges: int) -> int:
    """``p`` from the number of possible edges ``p (p - 1) / 2``."""
    p = int(round((1 + np.sqrt(1 + 8 * n_edges)) / 2))
    if p * (p - 1) // 2 != n_edges:
        raise ValueError(f"{n_edges} is not p (p - 1) / 2 for any p")
    return p


def edge_names(names) -> list[str]:
    """Coordinate labels ``"a-b"`` of the edges of the features ``names``, in the graph's order."""
    names = [str(n) for n in names]
    return [f"{names[i]}-{names[j]}" for i in range(len(names)) for j in range(i + 1, len(names))]


def edges_to_adjacency(edges, p: int) -> np.ndarray:
    """Adjacency masks from an edge-indicator vector."""
    M = np.zeros((p, p), bool)
    M[np.triu_indices(p, 1)] = np.asarray(edges) != 0
    return adjacency_from_matrix(M | M.T)


def adjacency_to_edges(adj) -> np.ndarray:
    """The edge-indicator vector (int64) of adjacency masks."""
    M = matrix_from_adjacency(adj)
    return M[np.triu_indices(len(adj), 1)].astype(np.int64)


@functools.lru_cache(maxsize=8)
def _edge_table(p: int) -> np.ndarray:
    """Every decomposable graph on ``p <= 6`` nodes as edge-indicator rows."""
    return np.stack([adjacency_to_edges(a) for a in enumerate_decomposable(p)])


PRIOR_SWEEPS = 200
"""Particle Gibbs sweeps (50 particles, no data, from the empty graph) per forward draw beyond
``MAX_ENUMERATION_NODES`` nodes."""


def _chain_draws(rng, edge_logp, p: int, shape) -> np.ndarray:
    """Forward draws of a graph too large to enumerate: each the last state of a particle Gibbs
    chain on the prior alone (:func:`~pymc_knn.graphical.particle_gibbs.pg_transition`)."""
    warnings.warn(
        f"DecomposableGraph on p = {p} > {MAX_ENUMERATION_NODES} nodes: its graphs cannot be "
        f"enumerated, so each forward draw is the end of a {PRIOR_SWEEPS}-sweep particle Gibbs "
        "chain on the prior, approximately exact",
        UserWarning,
        stacklevel=4,
    )
    hyper, cache = class_hyper(np.zeros((0, p))), new_cache()
    edge_logp = np.ascontiguousarray(edge_logp, dtype=np.float64)
    out = np.empty((int(np.prod(shape, dtype=np.int64)), p * (p - 1) // 2), dtype=np.int64)
    for d in range(out.shape[0]):
        graph = np.zeros(p, dtype=np.uint64)
        for _ in range(PRIOR_SWEEPS):
            graph, _ = pg_transition(
                graph,
                50,
                0.5,
                0.5,
                edge_logp,
                int(rng.integers(2**31 - 1)),
                cache,
                hyper.phi,
                hyper.phi_post,
                hyper.consts,
                SIMPLICIAL,
            )
        out[d] = adjacency_to_edges(graph)
    return out.reshape((*shape, out.shape[1]))


class DecomposableGraphRV(RandomVariable):
    """Edge indicators of a decomposable graph, with log weights per number of edges."""

    name = "decomposable_graph"
    signature = "(m)->(e)"
    dtype = "int64"
    _print_name = ("DecomposableGraph", "\\operatorname{DecomposableGraph}")

    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        return (dist_params[0].shape[-1] - 1,)

    def rng_fn(self, rng, edge_logp, size):
        """Exact draws by enumeration (p <= 6); beyond, each draw is the end of a particle Gibbs
        chain of ``PRIOR_SWEEPS`` sweeps with no data (approximate: warned)."""
        p = n_nodes(edge_logp.shape[-1] - 1)
        if edge_logp.ndim != 1:
            raise ValueError(
                "DecomposableGraph draws need one vector of edge weights (edge_logp of shape "
                f"(p (p - 1) / 2 + 1,)), got shape {edge_logp.shape}"
            )
        shape = () if size is None else tuple(size)
        if p > MAX_ENUMERATION_NODES:
            return _chain_draws(rng, edge_logp, p, shape)
        graphs = _edge_table(p)
        logw = edge_logp[graphs.sum(axis=1)]
        w = np.exp(logw - logw.max())
        picks = rng.choice(len(graphs), size=shape, p=w / w.sum())
        return graphs[picks]


class DecomposableGraph(Distribution):
    """A decomposable graph on ``p`` nodes as edge indicators: uniform, or weighted by size.

    ``P(G) ∝ exp(edge_logp[|E(G)|])`` over decomposable graphs (zero elsewhere); the default,
    zeros, is the uniform prior of Pavlenko and Rios (2017).

    Parameters
    ----------
    p : int
        Number of nodes, at most 64.
    edge_logp : array_like of shape (p (p - 1) / 2 + 1,), default=None
        Log weight of each number of edges (unnormalised).

    References
    ----------
    .. [1] Pavlenko, T. and Rios, F. L. (2017). Graphical posterior predictive classifier:
       Bayesian model averaging with particle Gibbs. Preprint.

    Examples
    --------
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> with pm.Model() as model:
    ...     G = pk.DecomposableGraph("G", p=4)
    >>> logp = model.compile_logp()
    >>> float(logp({"G": [1, 0, 0, 1, 0, 1]}))      # the path a-b-c-d
    0.0
    >>> float(logp({"G": [1, 0, 1, 1, 0, 1]}))      # a chordless 4-cycle: not decomposable
    -inf
    """

    rv_type = DecomposableGraphRV
    rv_op = DecomposableGraphRV()

    @classmethod
    def dist(cls, p, edge_logp=None, **kwargs):
        if not isinstance(p, (int, np.integer)) or not 1 <= p <= MAX_NODES:
            raise ValueError(f"p must be an integer in 1..{MAX_NODES}, got {p!r}")
        size = p * (p - 1) // 2 + 1
        w = np.zeros(size) if edge_logp is None else np.asarray(edge_logp, dtype=np.float64)
        if w.shape != (size,) or np.isnan(w).any():
            raise ValueError(
                f"edge_logp must be {size} log weights (0..{size - 1} edges), got shape {w.shape}"
            )
        return super().dist([pt.as_tensor_variable(w)], **kwargs)


class _GraphLogPrior(Op):
    """``edge_logp[|E|]`` for a decomposable graph's edge indicators, -inf otherwise."""

    __props__ = ()

    def make_node(self, edges, edge_logp):
        edges, edge_logp = pt.as_tensor_variable(edges), pt.as_tensor_variable(edge_logp)
        return Apply(self, [edges, edge_logp], [pt.dscalar()])

    def perform(self, node, inputs, output_storage):
        edges, edge_logp = inputs
        p = n_nodes(edges.shape[-1])
        ok = np.isin(edges, (0, 1)).all() and is_chordal(edges_to_adjacency(edges, p))
        output_storage[0][0] = np.asarray(edge_logp[int(edges.sum())] if ok else -np.inf)


@_logprob.register(DecomposableGraphRV)
def _graph_logp(op, values, rng, size, edge_logp, **kwargs):
    (value,) = values
    return _GraphLogPrior()(value, edge_logp)


@_support_point.register(DecomposableGraphRV)
def _graph_support_point(op, rv, rng, size, edge_logp):
    """The empty graph: decomposable, a valid start."""
    return pt.zeros((edge_logp.shape[-1] - 1,), dtype="int64")


class GraphEvidence(Op):
    """``log f(X | G)`` under the hyper normal-inverse-Wishart prior (class mean as ``mu``)."""

    __props__ = ("has_phi",)

    def __init__(self, has_phi: bool = False):
        self.has_phi = has_phi

    def make_node(self, edges, nu, delta, X, *phi):
        inputs = [pt.as_tensor_variable(v) for v in (edges, nu, delta, X, *phi)]
        return Apply(self, inputs, [pt.dscalar()])

    def perform(self, node, inputs, output_storage):
        edges, nu, delta, X, *phi = inputs
        p = X.shape[1]
        adj = edges_to_adjacency(edges, p)
        if nu <= 0 or delta <= 0 or not is_chordal(adj):
            output_storage[0][0] = np.asarray(-np.inf)
            return
        hyper = class_hyper(X, nu=float(nu), phi=phi[0] if phi else None, delta=float(delta))
        output_storage[0][0] = np.asarray(graph_log_evidence(hyper, adj))


def _evidence_logp(value, graph, nu, delta, shape_carrier, *phi):
    return GraphEvidence(bool(phi))(graph, nu, delta, value, *phi)


def GaussianGraphicalEvidence(name, graph, *, nu=1.0, delta=1.0, phi=None, observed, **kwargs):
    """The points ``observed`` (n, p) of one class given its decomposable graph ``graph``.

    Its log density is ``log f(X | G)`` (:mod:`pymc_knn.graphical.evidence`): the mean and
    covariance integrated out under the hyper normal-inverse-Wishart prior with the class mean
    as ``mu``. ``nu`` and ``delta`` may be PyMC variables; ``phi`` (p, p) is a fixed matrix
    (default the identity). No gradient: PyMC gives ``nu`` and ``delta`` gradient-free steps.

    References
    ----------
    .. [1] Pavlenko, T. and Rios, F. L. (2017). Graphical posterior predictive classifier:
       Bayesian model averaging with particle Gibbs. Preprint.
    .. [2] Dawid, A. P. and Lauritzen, S. L. (1993). Hyper Markov laws in the statistical analysis
       of decomposable graphical models. *The Annals of Statistics* 21(3), 1272-1317.

    Examples
    --------
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_iris()
    >>> with pm.Model() as model:
    ...     G = pk.DecomposableGraph("G", p=4)
    ...     pk.GaussianGraphicalEvidence("X", graph=G, observed=X[y == 0])
    X
    >>> logp = model.compile_logp()
    >>> round(float(logp({"G": [0] * 6})), 2), round(float(logp({"G": [1] * 6})), 2)  # empty, complete
    (-36.38, -16.31)
    """
    X = np.asarray(observed, dtype=np.float64)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise ValueError(f"observed must be a finite (n, p) array, got shape {X.shape}")
    # X is also a parameter: it gives PyTensor the value's shape (the logp reads the value)
    params = [graph, nu, delta, X] + (
        [np.asarray(phi, dtype=np.float64)] if phi is not None else []
    )
    signature = "(e),(),(),(n,p),(p,p)->(n,p)" if phi is not None else "(e),(),(),(n,p)->(n,p)"
    return pm.CustomDist(
        name, *params, logp=_evidence_logp, observed=X, signature=signature, **kwargs
    )


def _evidence_inputs(model, value_var):
    """Per observed term whose evidence uses ``value_var``: the (nu, delta, X, *phi) inputs."""
    found = []
    for rv in model.observed_RVs:
        logp = model.logp(vars=[rv], sum=True, jacobian=False)
        for var in ancestors([logp]):
            node = var.owner
            if (
                node is not None
                and isinstance(node.op, GraphEvidence)
                and (node.inputs[0] is value_var)
            ):
                found.append(node.inputs[1:])  # nu, delta, X, *phi
    return found


@dataclass_state
class GraphParticleGibbsState(StepMethodState):
    unused: Any = field(default=None)


class GraphParticleGibbs(BlockedStep):
    """Particle Gibbs on a :class:`DecomposableGraph` given its evidence terms.

    Each draw is one transition of :func:`pymc_knn.graphical.particle_gibbs.pg_transition`: the
    history of the current graph redrawn by the backward kernel, conditional SMC around it, one
    particle drawn by weight. Its target is ``P(G) f(X | G)`` at the current values of ``nu``
    and ``delta``; with no evidence term, the prior.

    Parameters
    ----------
    vars : list, optional
        The graph variable (default: the model's only ``DecomposableGraph``).
    n_particles : int, default=50
    kernel : {"christmas_tree", "simplicial"}, default="christmas_tree"
        Expansion kernel (docs/graphical.md): the paper's Christmas-tree kernel over junction
        trees (each transition starts from a uniform junction tree of the current graph), or
        the node-by-node kernel over graphs.
    alpha, beta : float, default=0.5
        Expansion kernel parameters (docs/graphical.md).
    model : pymc.Model, optional
    rng : optional
        Seed or generator (``pm.sample`` resets it per chain).

    References
    ----------
    .. [1] Pavlenko, T. and Rios, F. L. (2017). Graphical posterior predictive classifier:
       Bayesian model averaging with particle Gibbs. Preprint.

    Examples
    --------
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_iris()
    >>> with pm.Model():
    ...     G = pk.DecomposableGraph("G", p=4)
    ...     pk.GaussianGraphicalEvidence("X", graph=G, observed=X[y == 0])
    ...     idata = pm.sample(draws=100, tune=0, chains=1, random_seed=1, progressbar=False,
    ...                       compute_convergence_checks=False)   # assigns GraphParticleGibbs
    X
    >>> idata.posterior["G"].shape
    (1, 100, 6)
    """

    name = "graph_particle_gibbs"
    default_blocked = True
    _state_class = GraphParticleGibbsState
    stats_dtypes_shapes: dict[str, tuple[Any, list[int]]] = {
        "graph_size": (np.int64, []),
        "log_likelihood": (np.float64, []),
    }

    def __init__(
        self,
        vars=None,
        *,
        n_particles=50,
        kernel="christmas_tree",
        alpha=0.5,
        beta=0.5,
        model=None,
        rng=None,
        initial_point=None,
        blocked=True,
        compile_kwargs=None,
    ):
        model = pm.modelcontext(model)
        if vars is None:
            vars = [
                v
                for v in model.value_vars
                if isinstance(model.values_to_rvs[v].owner.op, DecomposableGraphRV)
            ]
        vars = get_value_vars_from_user_vars(vars, model)
        if len(vars) != 1 or not isinstance(
            model.values_to_rvs[vars[0]].owner.op, DecomposableGraphRV
        ):
            raise ValueError(
                "GraphParticleGibbs samples one DecomposableGraph variable, got "
                f"{[v.name for v in vars]}"
            )
        self.vars = vars
        rv = model.values_to_rvs[vars[0]]
        self.edge_logp = np.asarray(rv.owner.op.dist_params(rv.owner)[0].eval(), np.float64)
        self.p = n_nodes(self.edge_logp.size - 1)
        terms = _evidence_inputs(model, vars[0])
        if len(terms) > 1:
            raise ValueError(f"{vars[0].name}: one evidence term per graph, got {len(terms)}")
        self._inputs = (
            model.compile_fn(
                list(terms[0]), inputs=model.value_vars, on_unused_input="ignore", point_fn=True
            )
            if terms
            else None
        )
        if not 2 <= int(n_particles) or not (0 < alpha < 1 and 0 < beta < 1):
            raise ValueError("n_particles must be >= 2, alpha and beta in (0, 1)")
        self.n_particles, self.alpha, self.beta = int(n_particles), float(alpha), float(beta)
        self.kernel = kernel_code(kernel)
        self.rng = np.random.default_rng(rng)
        self._cache_key, self._cache = None, None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_cache_key"], state["_cache"] = None, None  # a numba dict does not pickle
        return state

    @staticmethod
    def competence(var, has_grad):
        if var.owner is not None and isinstance(var.owner.op, DecomposableGraphRV):
            return Competence.IDEAL
        return Competence.INCOMPATIBLE

    def _hyper(self, point):
        if self._inputs is None:
            return class_hyper(np.zeros((0, self.p)))
        nu, delta, X, *phi = (np.asarray(v) for v in self._inputs(point))
        return class_hyper(X, nu=float(nu), delta=float(delta), phi=phi[0] if phi else None)

    def step(self, point):
        name = self.vars[0].name
        hyper = self._hyper(point)
        key = (hyper.consts.tobytes(), hyper.phi_post.tobytes())
        if key != self._cache_key:
            self._cache_key, self._cache = key, new_cache()
        graph = edges_to_adjacency(point[name], self.p)
        new, loglik = pg_transition(
            graph,
            self.n_particles,
            self.alpha,
            self.beta,
            self.edge_logp,
            int(self.rng.integers(2**31 - 1)),
            self._cache,
            hyper.phi,
            hyper.phi_post,
            hyper.consts,
            self.kernel,
        )
        edges = adjacency_to_edges(new)
        point = {**point, name: edges.astype(self.vars[0].dtype)}
        return point, [{"graph_size": int(edges.sum()), "log_likelihood": float(loglik)}]


def register() -> None:
    """Put :class:`GraphParticleGibbs` in ``pm.STEP_METHODS`` (done on import)."""
    if GraphParticleGibbs not in pm.STEP_METHODS:
        pm.STEP_METHODS.append(GraphParticleGibbs)


register()
