"""A Potts likelihood term: a neighbour graph, the classes, and fast access to couplings.

A :class:`PottsTerm` is what the PyMC distributions, the step methods and the predictive code
share. It keeps the couplings it was last asked for, most recent first, within
:data:`COUPLING_CACHE_BYTES` (at least the last one; for d-nn models at most four, since ``sigma``
is continuous): a sampler's walk over ``k`` revisits a few values, and a coupling at ``k`` takes
about ``56 n k`` bytes, so keeping every visited ``k`` would grow to gigabytes on large data.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np

from ._validation import check_class_weights, check_n_classes, check_positive
from .graphs import Coupling, DistanceGraph, KNNGraph, NeighbourGraph
from .kernels import cftp_potts2, energy, gibbs_sweeps, swendsen_wang_sweeps
from .kernels.energy import local_fields, log_pl_derivatives
from .kernels.enumeration import enumerated_draw
from .kernels.structure import add_floor_fields

AUX_SAMPLERS = ("swendsen_wang", "gibbs", "cftp", "enumerate")
COUPLING_CACHE_BYTES = 256 * 2**20
"""Bytes of couplings a :class:`PottsTerm` keeps (besides the last one, always kept)."""
CFTP_MAX_SWEEPS = 16384
"""Default bound on CFTP's look-back. On Ripley (k = 14, raw covariates) the median look-back is
1024 sweeps at beta = 1.45 and 4096 at beta = 1.55, where 28% of draws need more than 4096: the
posterior sits just below the field's critical point."""


class PottsTerm:
    """The Potts field ``f(y | beta, theta)`` on one graph with ``G`` classes.

    Parameters
    ----------
    graph : KNNGraph or DistanceGraph
    n_classes : int
    class_weights : array_like, optional
        Unbalanced-sampling weights ``a_g``.
    beta_max : float, optional
        Where the field freezes (see :func:`pymc_knn.beta_max`); the step methods refuse a prior
        on beta that reaches past it.
    """

    _DNN_CACHE = 4

    def __init__(self, graph: NeighbourGraph, n_classes: int, class_weights=None, beta_max=None):
        self.graph = graph
        self.beta_max = None if beta_max is None else check_positive(beta_max, "beta_max")
        self.n_classes = check_n_classes(n_classes)
        self.class_weights = check_class_weights(class_weights, self.n_classes)
        self.n = graph.n_points
        self.is_knn = isinstance(graph, KNNGraph)
        self.labels = None  # the training labels (-1 where missing): prediction after set_data
        self._cache: OrderedDict = OrderedDict()

    def spec(self) -> dict:
        """What rebuilds this term from its covariates (:meth:`from_spec`): the likelihood and
        its options, JSON-serialisable (a saved fit's record)."""
        g = self.graph
        out = {
            "likelihood": "PottsKNN" if self.is_knn else "DistanceNN",
            "standardize": g.standardize,
            "n_classes": self.n_classes,
            "class_weights": self.class_weights.tolist(),
            "beta_max": self.beta_max,
        }
        if self.is_knn:
            out.update(neighbours=g.kind, k_max=g.k_max)
        else:
            out.update(kernel=g.kernel, epsilon=g.epsilon, drop_tol=g.drop_tol)
        return out

    @classmethod
    def from_spec(cls, X, spec: dict) -> PottsTerm:
        """The term of :meth:`spec` on covariates ``X`` (as given to the likelihood)."""
        if spec["likelihood"] == "PottsKNN":
            graph = KNNGraph(
                X,
                k_max=spec["k_max"],
                neighbours=spec["neighbours"],
                standardize=spec["standardize"],
            )
        else:
            graph = DistanceGraph(
                X,
                kernel=spec["kernel"],
                standardize=spec["standardize"],
                epsilon=spec["epsilon"],
                drop_tol=spec.get("drop_tol", 0.0),
            )
        return cls(graph, spec["n_classes"], spec["class_weights"], spec["beta_max"])

    def coupling(self, theta) -> Coupling:
        """The coupling at ``k`` or ``sigma``, cached: the most recently used within
        :data:`COUPLING_CACHE_BYTES` (four at most for ``sigma``)."""
        key = int(theta) if self.is_knn else float(theta)
        c = self._cache.get(key)
        if c is not None:
            self._cache.move_to_end(key)
            return c
        c = self._cache[key] = self.graph.coupling(key)
        limit = len(self._cache) if self.is_knn else self._DNN_CACHE
        while len(self._cache) > 1 and (
            len(self._cache) > limit or _total_bytes(self._cache) > COUPLING_CACHE_BYTES
        ):
            self._cache.popitem(last=False)
        return c

    def energy(self, z, theta) -> float:
        """``E_theta(z)`` (no input checks: labels must be valid)."""
        c = self.coupling(theta)
        return energy(c.src, c.dst, c.weight, z, self.class_weights)

    def log_pseudo_likelihood(self, y, beta, theta) -> float:
        """The log pseudo-likelihood ``sum_i log f(y_i | y_-i, beta, theta)`` (000 eq. 8)."""
        return _log_pl(self.coupling(theta), y, beta, self.class_weights)

    def pseudo_likelihood_grid(self):
        """The thetas a maximum pseudo-likelihood search scans: every ``k``, or 25 ``sigma``.

        For d-nn the grid spans the pairwise distances (their inverses for the exponential
        kernel, whose ``sigma`` is a rate), log-spaced: from the smallest positive one to the
        largest, or for a kept table (``drop_tol > 0``) to the ``sigma`` it covers.
        """
        if self.is_knn:
            return np.arange(1, self.graph.k_max + 1)
        g = self.graph
        if g.sparse:
            d = g.nearest_distances()
        else:
            d = np.sqrt(g.sq_distances[np.triu_indices(self.n, 1)])
        d = d[d > 0]
        lo, hi = (d.min(), g.diameter_bound()) if d.size else (1.0, 1.0)
        if g.sparse:
            cover = g.sigma_cover()
            if g.kernel == "exponential":  # a rate: covered from it on (0: every rate)
                cover = 1.0 / cover if cover > 0 else np.inf
            hi = max(lo, min(hi, cover))
        grid = np.geomspace(lo, hi, 25)
        return 1.0 / grid[::-1] if self.graph.kernel == "exponential" else grid

    def pseudo_likelihood_profile(self, y, beta_upper: float = 4.0):
        """``(thetas, beta_hat, log_pl)``: for each theta of :meth:`pseudo_likelihood_grid`, the
        beta in ``[0, beta_upper]`` that maximises the (concave) log pseudo-likelihood, and
        its maximum.

        A kNN term's fields of every ``k`` come from class counts updated ``k`` by ``k``, with
        the rows of equal counts and label merged (as :func:`pymc_knn.korea` does): ``O(n)``
        per ``k`` instead of a coupling each."""
        from scipy.optimize import minimize_scalar

        y = np.asarray(y, dtype=np.int64)
        thetas = self.pseudo_likelihood_grid()
        beta_hat, log_pl = np.empty(thetas.size), np.empty(thetas.size)
        fields = self._knn_fields(y) if self.is_knn else None
        for i, theta in enumerate(thetas):
            if fields is not None:
                h, labels, weights = fields.next()
                objective = lambda b: -log_pl_derivatives(h, labels, b, weights)[0]  # noqa: E731
            else:  # the fields once a theta: each beta then costs O(n G), not a pass over W
                c = self.graph.coupling(theta.item())  # not cached: many would not fit
                h = _fields(c, y, self.class_weights)
                objective = lambda b: -log_pl_derivatives(h, y, b)[0]  # noqa: E731
            res = minimize_scalar(
                objective, bounds=(0.0, beta_upper), method="bounded", options={"xatol": 1e-4}
            )
            beta_hat[i], log_pl[i] = res.x, -res.fun
        return thetas, beta_hat, log_pl

    def _knn_fields(self, y):
        from .approx import _Fields

        return _Fields(self.graph, y, self.class_weights)

    def pseudo_likelihood_information(self, y, beta, theta) -> float:
        """``-d^2 log PL / d beta^2`` at ``(beta, theta)``: the sum over points of the variance
        of their local field under their full conditional (000 eq. 8)."""
        y = np.asarray(y, dtype=np.int64)
        return -log_pl_derivatives(_fields(self.coupling(theta), y, self.class_weights), y, beta)[2]

    def max_pseudo_likelihood(self, y, beta_upper: float = 4.0):
        """The maximum pseudo-likelihood estimate ``(beta, theta)`` of Besag (1974)."""
        thetas, beta_hat, log_pl = self.pseudo_likelihood_profile(y, beta_upper)
        best = int(np.argmax(log_pl))
        return float(beta_hat[best]), thetas[best].item()

    def draw(
        self,
        beta,
        theta,
        start,
        rng,
        sampler="swendsen_wang",
        sweeps=10,
        max_sweeps=CFTP_MAX_SWEEPS,
    ):
        """An auxiliary draw ``z ~ f(. | beta, theta)``: ``(labels, sweeps, exact)``.

        ``"swendsen_wang"`` and ``"gibbs"`` run ``sweeps`` sweeps from ``start`` (approximate);
        ``"cftp"`` is exact for two classes unless it fails to coalesce within ``max_sweeps``
        (then approximate, ``exact`` False); ``"enumerate"`` draws exactly from the enumerated
        law (a dozen points at most, for tests).
        """
        z = np.array(start, dtype=np.int64)
        a = self.class_weights
        c = self.coupling(theta)
        if c.floor is not None:
            raise ValueError(
                "PottsTerm.draw does not carry the ball kernel's floor on a kept d-nn table: use "
                "the step methods (Swendsen-Wang), or drop_tol=0"
            )
        if sampler == "swendsen_wang":
            swendsen_wang_sweeps(c.src, c.dst, c.weight, c.uniform_weight, z, beta, a, sweeps, rng)
            return z, sweeps, False
        if sampler == "gibbs":
            gibbs_sweeps(c.indptr, c.indices, c.data, z, beta, a, sweeps, rng)
            return z, sweeps, False
        if sampler == "cftp":
            ok, used = cftp_potts2(
                c.indptr, c.indices, c.data, z, beta, a, max_sweeps, int(rng.integers(0, 2**63))
            )
            return z, int(used), bool(ok)
        if sampler == "enumerate":
            enumerated_draw(c.src, c.dst, c.weight, a, beta, z, rng.random())
            return z, 0, True
        raise ValueError(f"sampler must be one of {AUX_SAMPLERS}, got {sampler!r}")

    def check_sampler(self, sampler: str) -> str:
        if sampler not in AUX_SAMPLERS:
            raise ValueError(f"sampler must be one of {AUX_SAMPLERS}, got {sampler!r}")
        if sampler == "cftp" and self.n_classes != 2:
            raise ValueError(
                f"sampler='cftp' (coupling from the past) is exact for two classes only; this model "
                f"has {self.n_classes}: use 'swendsen_wang' or 'gibbs'"
            )
        if sampler == "enumerate" and self.n_classes**self.n > 1 << 22:
            raise ValueError(
                f"sampler='enumerate' needs G^n <= 4194304 labelings, this model has "
                f"{self.n_classes}^{self.n}: use 'cftp', 'swendsen_wang' or 'gibbs'"
            )
        if (
            sampler not in ("swendsen_wang",)
            and not self.is_knn
            and self.graph.sparse
            and self.graph.kernel == "ball"
        ):
            raise ValueError(
                f"sampler={sampler!r} does not carry the ball kernel's floor on a kept d-nn table "
                f"(drop_tol = {self.graph.drop_tol:g}): use 'swendsen_wang', or drop_tol=0"
            )
        return sampler


def _log_pl(c, y, beta, class_weights) -> float:
    """The log pseudo-likelihood with couplings ``c`` (floor included)."""
    return log_pl_derivatives(_fields(c, y, class_weights), y, beta)[0]


def _fields(c, y, class_weights) -> np.ndarray:
    """The local fields of the labels ``y`` under couplings ``c``, the floor's included."""
    h = local_fields(c.indptr, c.indices, c.data, y, class_weights)
    if c.floor is not None:
        add_floor_fields(h, y, c.floor, class_weights)
    return h


def _total_bytes(cache) -> int:
    return sum(a.nbytes for c in cache.values() for a in c if isinstance(a, np.ndarray))


def warn_not_exact(where: str, max_sweeps: int) -> None:
    warnings.warn(
        f"{where}: coupling from the past did not coalesce within max_sweeps={max_sweeps}; the "
        "draw is approximate (the chain from the start labels over the same sweeps). Such draws "
        "are flagged aux_exact=False in sample_stats. Raise max_sweeps, or lower the prior's "
        "upper bound on beta if it reaches the phase transition.",
        RuntimeWarning,
        stacklevel=3,
    )
