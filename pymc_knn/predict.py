"""Posterior predictive class probabilities of new points, their summaries and zones.

For a new point ``x`` and one posterior draw ``(beta, theta)``, the class probability is the full
conditional of ``x``'s label when ``x`` joins the training points as point ``n + 1`` of the same
Potts field, the training labels fixed (Cucala et al. 2009, eq. 5; Friel and Pettitt 2011, section
4 for d-nn):

``P(y_x = g | y, beta, theta) ∝ exp(beta a_g sum_j (W_xj + W_jx) [y_j == g])``:

* kNN, symmetrised: the class-``g`` training points among ``x``'s ``k`` nearest, plus those that
  would count ``x`` among their ``k`` nearest (a point in both counts twice), over ``k``;
* kNN, equal weights: the union of the two neighbourhoods, each point once, over ``k``;
* d-nn: ``x``'s row normalised over the training points, and each training row ``j``
  renormalised with ``x`` added.

Averaging over posterior draws gives the posterior predictive (000 eqs. 6-7); the equal-tailed
credible interval of each class probability over the draws, and the uncertainty zone of 000 Fig. 3,
follow. Summaries stream over the draws (draws that share ``k`` share their neighbour counts) and
over chunks of points: a 200 x 200 grid with 10,000 draws never holds the (draw, point, class)
array.

Memory: every function here goes over the new points in chunks whose working arrays (the
neighbour query: for kNN ``O(k)`` a point, :meth:`pymc_knn.KNNGraph.query_bytes`, for d-nn a
row of ``n`` distances; the strengths; per-draw probabilities) fit in
``working_memory`` MiB, scikit-learn's setting by default (``sklearn.get_config()``, 1024 MiB),
and in dask's ``array.chunk-size`` (128 MiB). What they return is on top of it: ``(chain, draw,
point, class)`` per-draw probabilities unless lazy, ``(point, class)`` summaries.

Joint (transductive) prediction (Segerie and Peyrot, section 3.1): for each posterior draw all the
new labels are drawn together by Gibbs sweeps on the field over training and new points, the
training labels fixed.
"""

from __future__ import annotations

import math
import uuid
import numba
import numpy as np
import pymc as pm
import xarray as xr
from pymc.pytensorf import compile as pm_compile
from pytensor.graph.traversal import ancestors

from ._progress import progress
from ._validation import as_float, check_covariates, kernel_array, working_memory_bytes
from .graphs import DNN_KERNELS, DistanceGraph, KNNGraph, knn_graph_bytes
from ._forksafe import ForkSafe
from .kernels import predictive
from .distributions import potts_node
from .records import recorded_terms, term_from_idata
from .terms import COUPLING_CACHE_BYTES, PottsTerm

_k = ForkSafe(predictive)

__all__ = [
    "add_predictions",
    "imputed_proba",
    "predict_proba",
    "predictive_summary",
    "summarize_proba",
    "uncertainty_zones",
]

SAMPLE_DIMS = ("chain", "draw")
WORK_ELEMENTS = 1 << 24
"""Kernel weights a d-nn kernel call computes at most (0.2-0.4 s on 2 cores): numba's parallel
loops cannot check for Ctrl-C, so the calls are kept short and Python checks between them."""


class Posterior:
    """A Potts term of a PyMC model and the posterior draws of its ``(beta, theta)``.

    Parameters
    ----------
    idata : arviz.InferenceData
        With a ``posterior`` group from ``pm.sample`` on ``model``.
    model : pymc.Model, optional
        The model that produced ``idata``; default the model of the current ``with`` context,
        and outside any, the term ``idata`` records (:mod:`pymc_knn.records`).
    var_name : str, optional
        The observed ``PottsKNN`` or ``DistanceNN`` variable; needed only when the model has
        several.
    """

    def __init__(self, idata, model=None, var_name=None):
        if not hasattr(idata, "groups") or "posterior" not in idata.groups():
            raise ValueError(
                "idata has no posterior group: pass the InferenceData returned by pm.sample"
            )
        try:
            model = pm.modelcontext(model)
        except TypeError:
            model = None
        if model is None:
            self._from_record(idata, var_name)
        else:
            self._from_model(idata, model, var_name)
        self._row_sums_cache = (None, None)  # d-nn: (sigmas' bytes, (M, S))

    def _from_model(self, idata, model, var_name):
        from .distributions import missing_labels, potts_node, potts_terms, term_labels, term_name

        terms = [rv for rv in potts_terms(model) if rv in model.observed_RVs]
        if var_name is not None:
            terms = [rv for rv in terms if term_name(rv) == var_name]
        if len(terms) != 1:
            names = [term_name(rv) for rv in potts_terms(model)]
            raise ValueError(
                f"give var_name= as one of the model's observed Potts terms {names}"
                if var_name is not None or names
                else "the model has no observed PottsKNN or DistanceNN term to predict with"
            )
        self.rv = terms[0]
        self.name = term_name(self.rv)
        missing = missing_labels(model, self.rv)
        if missing is not None:
            _refuse_missing(self.name, missing[0].size)
        self.term: PottsTerm = potts_node(self.rv).op.term
        self.y = term_labels(model, self.rv)
        self._check_idata(idata)
        self.beta, self.theta = self._parameter_draws(idata.posterior, model)

    def _from_record(self, idata, var_name):
        """The term and draws from what ``idata`` records (a fit saved and reloaded)."""
        self.name, self.term, spec = term_from_idata(idata, var_name)
        if spec.get("missing_labels"):
            _refuse_missing(self.name, len(spec["missing_labels"]))
        observed = getattr(idata, "observed_data", None)
        if observed is None or self.name not in observed:
            raise ValueError(
                f"idata has no observed_data[{self.name!r}], the training labels: pass model=model"
            )
        self.y = kernel_array(observed[self.name], np.int64)
        post = idata.posterior
        shape = (post.sizes["chain"], post.sizes["draw"])
        values = []
        for role in ("beta", "theta"):
            how = spec[role]
            if how is None or ("name" in how and how["name"] not in post):
                raise ValueError(
                    f"the {role} of {self.name!r} is an expression of the model's variables, "
                    "which idata cannot hold: pass model=model"
                )
            values.append(
                np.asarray(post[how["name"]]) if "name" in how else np.full(shape, how["value"])
            )
        self.beta, self.theta = self._validated(*values, shape)

    def _check_idata(self, idata):
        observed = getattr(idata, "observed_data", None)
        if observed is not None and self.name in observed:
            seen = np.asarray(observed[self.name])
            if seen.shape != self.y.shape or not np.array_equal(seen, self.y):
                raise ValueError(
                    f"idata's observed {self.name!r} differs from the model's labels: idata was "
                    "sampled from another model or data set"
                )
        recorded = recorded_terms(idata).get(self.name)
        if recorded is not None:
            X = recorded[0]
            mine = self.term.graph.X_input
            if X.shape != mine.shape or not np.array_equal(X, mine):
                raise ValueError(
                    f"idata's training covariates of {self.name!r} differ from the model's: idata "
                    "was sampled from another model or data set"
                )

    def _parameter_draws(self, posterior, model):
        params = potts_node(self.rv).inputs[2:4]
        anc = set(ancestors(params))
        inputs = [rv for rv in model.free_RVs if rv in anc]
        missing = [rv.name for rv in inputs if rv.name not in posterior]
        if missing:
            raise ValueError(
                f"idata's posterior has no draws of {missing}, the parameters of {self.name!r}: "
                "was it sampled from this model?"
            )
        shape = (posterior.sizes["chain"], posterior.sizes["draw"])
        values = [np.asarray(posterior[rv.name]) for rv in inputs]
        if all(p in inputs for p in params):
            beta, theta = (values[inputs.index(p)] for p in params)
        else:
            fn = pm_compile(inputs, list(params), on_unused_input="ignore")
            beta, theta = np.empty(shape), np.empty(shape)
            for idx in np.ndindex(*shape):
                beta[idx], theta[idx] = (
                    np.asarray(o).item() for o in fn(*(v[idx] for v in values))
                )
        return self._validated(beta, theta, shape)

    def _validated(self, beta, theta, shape):
        beta = np.broadcast_to(np.asarray(beta, dtype=np.float64), shape)
        theta = np.broadcast_to(np.asarray(theta, dtype=np.float64), shape)
        self._check_draws(beta, theta)
        if self.term.is_knn:
            theta = theta.astype(np.int64)
        return kernel_array(beta), kernel_array(theta, theta.dtype)

    def _check_draws(self, beta, theta):
        """Every draw inside the term's parameter space, before any kernel reads with it."""
        if beta.size == 0:
            raise ValueError(
                f"idata's posterior has no draws (shape {beta.shape}): the "
                "predictive distribution would be an average over nothing"
            )
        if not np.all(np.isfinite(beta) & (beta >= 0)):
            raise ValueError(
                f"idata's posterior has draws of beta that are negative or not "
                f"finite (min {np.nanmin(beta):g}): was it sampled from this model?"
            )
        if self.term.is_knn:
            K = self.term.graph.k_max
            ok = np.isfinite(theta) & (theta == np.round(theta)) & (theta >= 1) & (theta <= K)
            if not np.all(ok):
                bad = theta[~ok].ravel()[0]
                raise ValueError(
                    f"idata's posterior has a draw k = {bad:g}, outside the integers 1..k_max = "
                    f"{K} of the model's graph: was it sampled from this model?"
                )
        elif not np.all(np.isfinite(theta) & (theta > 0)):
            raise ValueError(
                "idata's posterior has draws of sigma that are not finite and > 0: "
                "was it sampled from this model?"
            )

    @property
    def coords(self):
        return {"chain": np.arange(self.beta.shape[0]), "draw": np.arange(self.beta.shape[1])}

    def thetas(self):
        """The distinct thetas and each draw's index into them (flattened draws)."""
        thetas, index = np.unique(self.theta.ravel(), return_inverse=True)
        return thetas, index.astype(np.int64)

    def strengths(self, X_new, thetas) -> np.ndarray:
        """Strengths ``h[a, t, g]`` of the new points at each theta (see the module docstring)."""
        term, graph = self.term, self.term.graph
        if term.is_knn:
            q = graph.query(X_new, int(thetas.max()))
            return _k.knn_strengths(
                q.neighbours,
                q.enter_indptr,
                q.enter_index,
                q.enter_k,
                self.y,
                thetas.astype(np.int64),
                term.class_weights,
                graph.kind == "equal",
            )
        sigmas = np.asarray(thetas, dtype=np.float64)
        if graph.sparse:  # a kept table: neighbour queries (chunked by query_bytes)
            return graph.strengths(X_new, self.y, sigmas, term.class_weights)
        M, S = self._row_sums(sigmas)
        sq_new = graph.squared_distances_to(X_new)
        return np.concatenate(
            [
                _k.dnn_strengths(
                    sq_new[s],
                    self.y,
                    sigmas,
                    M,
                    S,
                    DNN_KERNELS[graph.kernel],
                    graph.epsilon,
                    term.class_weights,
                )
                for s in _work_slices(sq_new.shape[0], sigmas.size * graph.n_points)
            ]
        )

    def query_bytes(self) -> int:
        """Bytes a new point takes in the neighbour query (kNN: its neighbours and reverse
        neighbours, :meth:`pymc_knn.KNNGraph.query_bytes`; d-nn: a row of distances)."""
        return self.term.graph.query_bytes()

    def fixed_bytes(self, n_thetas) -> int:
        """Bytes held across chunks: d-nn's training row sums at each of ``n_thetas`` sigmas."""
        return 0 if self.term.is_knn else 16 * n_thetas * self.term.n

    def _row_sums(self, sigmas):
        """The training rows' reference distances and weight sums at ``sigmas`` (kernel
        ``dnn_row_sums``), kept for the next chunk."""
        key, value = self._row_sums_cache
        if key != sigmas.tobytes():
            g = self.term.graph
            parts = [
                _k.dnn_row_sums(g.sq_distances, sigmas[s], DNN_KERNELS[g.kernel], g.epsilon)
                for s in _work_slices(sigmas.size, g.n_points**2)
            ]
            value = tuple(np.concatenate(a) for a in zip(*parts))
            self._row_sums_cache = (sigmas.tobytes(), value)
        return value


def _refuse_missing(name, count):
    raise ValueError(
        f"{name!r} was fitted with {count} missing training labels: the predictive of a new point "
        "would have to average over their imputed values, which predict_proba does not do. The "
        f"missing points' own class probabilities are pk.imputed_proba(idata, {name!r}); to "
        "predict new points, append them to X with missing labels and refit (the joint "
        "prediction), or fit on the labelled points only"
    )


def _checked_new(post: Posterior, X_new) -> np.ndarray:
    X_new = check_covariates(X_new, "X_new", min_rows=1)
    p = post.term.graph.n_features
    if X_new.shape[1] != p:
        raise ValueError(
            f"X_new has {X_new.shape[1]} columns but {post.name!r} was fitted on {p} features"
        )
    return X_new


def _chunks(m: int, per_point: int, budget: int, fixed: int = 0):
    """Slices of the ``m`` points at ``per_point`` bytes a point: a chunk takes at most
    ``budget - fixed`` bytes (``fixed`` being held across chunks) and at most dask's
    ``array.chunk-size``, since larger chunks are no faster; one point when not even one fits."""
    import dask
    from dask.utils import parse_bytes

    room = min(budget - fixed, parse_bytes(dask.config.get("array.chunk-size")))
    return _slices(m, max(1, min(m, room // max(per_point, 1))))


# a progress bar over the points from this many new points on, in at least PROGRESS_STEPS chunks
PROGRESS_POINTS = 10_000
PROGRESS_STEPS = 20


def _progress_slices(slices, m: int, progressbar: bool, description: str):
    """``slices`` (split finer when too few for a useful bar) behind a progress bar, when
    ``progressbar`` and the prediction has at least ``PROGRESS_POINTS`` points."""
    if not progressbar or m < PROGRESS_POINTS:
        return slices
    if len(slices) < PROGRESS_STEPS:
        size = -(-m // PROGRESS_STEPS)
        slices = [
            slice(a, min(s.stop, a + size)) for s in slices for a in range(s.start, s.stop, size)
        ]
    return progress(slices, len(slices), description)


def _work_slices(m: int, per_item: int):
    """Slices of ``m`` items of ``per_item`` kernel weights each, ``WORK_ELEMENTS`` a call."""
    return _slices(m, max(1, WORK_ELEMENTS // max(per_item, 1)))


def _slices(m: int, size: int):
    return [slice(s, min(m, s + size)) for s in range(0, m, size)]


def _gigabytes(nbytes) -> str:
    return f"{nbytes / 1e9:.3g} GB"


def _class_coord(G: int, classes):
    if classes is None:
        return np.arange(G)
    classes = np.asarray(classes)
    if classes.shape != (G,):
        raise ValueError(f"classes must hold {G} labels (one per class), got shape {classes.shape}")
    return classes


def predict_proba(
    idata,
    X_new,
    *,
    model=None,
    var_name=None,
    classes=None,
    joint=False,
    sweeps=20,
    random_seed=None,
    lazy=None,
    working_memory=None,
    progressbar=True,
) -> xr.DataArray:
    """Class probabilities of new points for every posterior draw (000 eq. 5).

    Parameters
    ----------
    idata : arviz.InferenceData
        From ``pm.sample`` on ``model``.
    X_new : array_like, shape (m, p)
        New covariates, on the scale of the training covariates (the model's standardisation is
        applied to them).
    model : pymc.Model, optional
        Default: the model of the current ``with`` context; outside any, the covariates and
        options ``idata`` records (a fit saved with ``to_netcdf`` predicts on its own).
    var_name : str, optional
        The Potts term, when the model has several.
    classes : array_like, optional
        Labels for the ``class`` coordinate (default ``0..G-1``).
    joint : bool
        Joint (transductive) prediction of Segerie and Peyrot (section 3.1): for each draw, all
        new labels are updated together by ``sweeps`` Gibbs sweeps on the field over training
        and new points (training labels fixed), continuing from the previous draw's labels; the
        probabilities returned are each new label's full conditional at the last sweep
        (Rao-Blackwellised), and ``attrs["labels"]`` holds the label draws ``(chain, draw,
        point)``. Costs ``sweeps`` Gibbs sweeps over the new points per draw; thin ``idata``
        first (``idata.sel(draw=slice(None, None, 10))``) for long runs. The graph of the
        ``n + m`` points is built whole (``(n + m)**2`` distances; for d-nn a dense coupling):
        beyond ``working_memory`` it is refused with its size.
    sweeps : int
        Gibbs sweeps per draw when ``joint``.
    random_seed : int or numpy.random.Generator, optional
        For ``joint`` only (the independent probabilities are deterministic).
    lazy : bool, optional
        Return a dask-backed array computed on demand in chunks of points. Default: lazy when
        the array (``8 * chains * draws * m * classes`` bytes) would exceed ``working_memory``.
        The fitted state is one key of the graph, shared by the chunks' tasks (a
        dask.distributed Client sends it to each worker once); :func:`compute_predictions`
        computes it with a clear error if the Client is lost.
    working_memory : float, optional
        MiB the working arrays may take: chunks of new points count the neighbour query (kNN:
        ``O(k_max)`` per new point; d-nn: ``n`` distances), the strengths and the chunk's
        per-draw probabilities, and are also at most dask's ``array.chunk-size`` (128 MiB by
        default). Default
        scikit-learn's setting (``sklearn.get_config()["working_memory"]``, 1024). The
        returned array is not counted: eager, it takes its full size; lazy, dask computes one
        chunk per thread at a time.
    progressbar : bool, default=True
        Show a progress bar over the points of an eager independent prediction of at least
        ``PROGRESS_POINTS`` (10,000) points, and over the draws of a joint prediction (in a
        terminal or notebook only; transient).

    Returns
    -------
    xarray.DataArray
        Dims ``(chain, draw, point, class)``, named ``f"{var_name}_proba"``.

    See Also
    --------
    predictive_summary : their mean and credible intervals, without the per-draw array.
    add_predictions : the same, stored in ``idata``.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 2.3, eq. 5 (the predictive given ``(beta, k)``) and section 3.1, eqs. 6-7
       (its average over the posterior draws).
    .. [2] Friel, N. and Pettitt, A. N. (2011). Classification using distance nearest neighbours.
       *Statistics and Computing* 21, 431-437.
       Section 4 (the predictive of the d-nn models, averaged over the draws).
    .. [3] Segerie, C.-R. and Peyrot, E. Revisiting of Bayesian reassessment of nearest-neighbor
       classification. Report, Master MVA, ENS Paris-Saclay.
       Section 3.1 (Gibbs prediction: ``joint=True``).

    Examples
    --------
    A posterior to predict with: ``pm.sample`` gives one (then call these inside its model's
    ``with`` block, or pass ``model=``); path sampling on 50 points is quicker here.

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X_test, y_test, *_ = pk.datasets.load_ripley("test")
    >>> graph = pk.KNNGraph(X[::5], k_max=10)
    >>> log_z = pk.log_normaliser(graph, np.linspace(0, 2, 11), n_classes=2, sweeps=40,
    ...                           burn=5, random_seed=1, progressbar=False)
    >>> idata = pk.path_sampling_posterior(graph, y[::5], log_z, draws=100, chains=2,
    ...                                    random_seed=1)
    >>> proba = pk.predict_proba(idata, X_test[:3])
    >>> proba.dims, proba.shape
    (('chain', 'draw', 'point', 'class'), (2, 100, 3, 2))
    >>> bool(np.allclose(proba.sum("class"), 1))
    True
    >>> proba.mean(("chain", "draw")).argmax("class").values   # the Bayes classes
    array([0, 0, 0])

    Joint prediction: the new labels are drawn together, given the training labels.

    >>> joint = pk.predict_proba(idata, X_test[:3], joint=True, random_seed=1)
    >>> joint.attrs["labels"].shape
    (2, 100, 3)
    """
    budget = working_memory_bytes(working_memory)
    post = Posterior(idata, model, var_name)
    X_new = _checked_new(post, X_new)
    coords = {
        **post.coords,
        "point": np.arange(X_new.shape[0]),
        "class": _class_coord(post.term.n_classes, classes),
    }
    dims = (*SAMPLE_DIMS, "point", "class")
    name = f"{post.name}_proba"
    if joint:
        probs, labels = _joint(
            post, X_new, sweeps, np.random.default_rng(random_seed), budget, progressbar
        )
        out = xr.DataArray(probs, coords=coords, dims=dims, name=name)
        out.attrs["labels"] = labels
        out.attrs["method"] = "joint Gibbs (Segerie and Peyrot, section 3.1)"
        return out
    C, D = post.beta.shape
    G = post.term.n_classes
    m = X_new.shape[0]
    thetas, index = post.thetas()
    beta = post.beta.ravel()

    state = (post, thetas, beta, index, (C, D, G))

    out_point = 8 * C * D * G  # one point's per-draw probabilities
    per_point = post.query_bytes() + 8 * thetas.size * G + out_point
    fixed = post.fixed_bytes(thetas.size)
    if lazy is None:
        lazy = m * out_point > budget
    if lazy:
        import dask
        import dask.array as da

        # the fitted state (training points, neighbour tree, labels, draws) is one key of the
        # graph that every chunk's task refers to: a distributed scheduler sends it to each
        # worker once, not pickled into each chunk's task
        shared = dask.delayed(state, name=f"{name}-state-{uuid.uuid4().hex}")
        blocks = [
            da.from_delayed(
                dask.delayed(_proba_block, pure=True)(shared, X_new[s]),
                shape=(C, D, s.stop - s.start, G),
                dtype=np.float64,
            )
            for s in _chunks(m, per_point, budget, fixed)
        ]
        data = da.concatenate(blocks, axis=2)
    else:
        data = np.empty((C, D, m, G))
        for s in _progress_slices(
            _chunks(m, per_point, budget, fixed), m, progressbar, "predict_proba"
        ):
            data[:, :, s] = _proba_block(state, X_new[s])
    out = xr.DataArray(data, coords=coords, dims=dims, name=name)
    out.attrs["method"] = "independent (Cucala et al. 2009, eq. 5)"
    return out


def _proba_block(state, X):
    """Per-draw probabilities ``(chain, draw, point, class)`` of the new points ``X``."""
    post, thetas, beta, index, (C, D, G) = state
    p = _k.draw_probabilities(post.strengths(X, thetas), beta, index)
    return p.reshape(C, D, X.shape[0], G)


def imputed_proba(idata, var_name=None, classes=None) -> xr.DataArray:
    """Posterior class probabilities of a Potts term's missing training labels.

    When the observed labels have missing values (a masked array or NaN), ``pm.sample`` draws
    them as ``<var_name>_unobserved`` (:class:`~pymc_knn.PottsGibbs`), jointly with the
    parameters: the joint prediction of Segerie and Peyrot (section 3.1). Each missing point's
    class probabilities are the classes' frequencies among its draws.

    Parameters
    ----------
    idata : arviz.InferenceData
        From ``pm.sample`` (its record of the term tells which points were missing).
    var_name : str, optional
        The Potts term, when the model has several.
    classes : array_like, optional
        Labels for the ``class`` coordinate (default ``0..G-1``).

    Returns
    -------
    xarray.DataArray
        Dims ``(point, class)``, ``point`` the missing points' indices among the training points,
        named ``f"{var_name}_imputed_proba"``.

    See Also
    --------
    PottsGibbs : the step that draws the missing labels.

    References
    ----------
    .. [1] Segerie, C.-R. and Peyrot, E. Revisiting of Bayesian reassessment of nearest-neighbor
       classification. Report, Master MVA, ENS Paris-Saclay.
       Section 3.1 (Gibbs prediction of unlabelled points jointly with the labelled ones).
    .. [2] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 2.3 (the joint model of training and unclassified points, with their
       classes missing at random).

    Examples
    --------
    Every tenth label of 50 points missing:

    >>> import numpy as np
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X, y = X[::5], y[::5]
    >>> y_obs = np.ma.masked_array(y, mask=np.arange(50) % 10 == 0)
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 4)
    ...     k = pm.DiscreteUniform("k", 1, 10)
    ...     labels = pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y_obs)
    ...     idata = pm.sample(draws=200, tune=200, chains=2, cores=1, random_seed=1,
    ...                       progressbar=False, compute_convergence_checks=False)
    >>> proba = pk.imputed_proba(idata)
    >>> proba.dims
    ('point', 'class')
    >>> proba.point.values
    array([ 0, 10, 20, 30, 40])
    >>> proba.argmax("class").values, y[::10]
    (array([0, 0, 0, 1, 1]), array([0, 0, 0, 1, 1]))
    """
    name, _, spec = term_from_idata(idata, var_name)
    sites = spec.get("missing_labels")
    if not sites:
        raise ValueError(f"{name!r} had no missing labels: every training label was observed")
    draws = np.asarray(idata.posterior[f"{name}_unobserved"]).reshape(-1, len(sites))
    G = spec["n_classes"]
    counts = np.stack([(draws == g).mean(axis=0) for g in range(G)], axis=1)
    return xr.DataArray(
        counts,
        coords={"point": np.asarray(sites), "class": _class_coord(G, classes)},
        dims=("point", "class"),
        name=f"{name}_imputed_proba",
    )


def _joint_graph(post: Posterior, X_new):
    g = post.term.graph
    both = np.vstack([g.X, g.transform(X_new)])
    if post.term.is_knn:
        return KNNGraph(both, k_max=g.k_max, neighbours=g.kind, standardize=False)
    return DistanceGraph(
        both,
        kernel=g.kernel,
        standardize=False,
        epsilon=g.epsilon,
        drop_tol=g.drop_tol,
        working_memory=g.working_memory,
    )


def _joint_bytes(post: Posterior, m: int) -> int:
    """Bytes of the graph of the ``n + m`` points and its couplings in :func:`_joint`."""
    N = post.term.n + m
    if post.term.is_knn:
        # the graph's tables (its search holds no N x N array), then the sparse couplings of
        # the distinct k (edges and CSR: at most 56 bytes per neighbour) the term keeps
        ks = np.unique(post.theta)
        kept = min(56 * N * int(ks.sum()), COUPLING_CACHE_BYTES + 56 * N * int(ks.max()))
        return knn_graph_bytes(N, post.term.graph.k_max) + kept
    # the distances, kept, and one sigma's coupling at a time: all pairs as edges (24 bytes
    # a pair) and CSR (16 a pair and row), the dense weights alongside while it is built
    return 36 * N * N


def _joint_terms(post: Posterior, m: int) -> str:
    N = post.term.n + m
    return (
        f"{N} x {post.term.graph.k_max} neighbours"
        if post.term.is_knn
        else f"{N}**2 pairwise terms"
    )


def _check_joint_size(post: Posterior, m: int, budget: int):
    need = _joint_bytes(post, m)
    if need > budget:
        raise ValueError(
            f"joint=True builds the graph of the n + m = {post.term.n} + {m} training and new "
            f"points: about {_gigabytes(need)} ({_joint_terms(post, m)}), over "
            f"working_memory = {budget / 2**20:g} MiB. Predict the new points in smaller batches "
            f"(each batch is then joint within itself only), use the independent predictive "
            f"(joint=False, which goes in chunks), or raise working_memory"
        )


def _joint(post: Posterior, X_new, sweeps, rng, budget, progressbar=True):
    if isinstance(sweeps, bool) or not isinstance(sweeps, (int, np.integer)) or sweeps < 1:
        raise ValueError(f"sweeps must be a positive integer, got {sweeps!r}")
    n, m, G = post.term.n, X_new.shape[0], post.term.n_classes
    _check_joint_size(post, m, budget)
    term = PottsTerm(_joint_graph(post, X_new), post.term.n_classes, post.term.class_weights)
    # kNN couplings are sparse and recur with k: cached; d-nn ones are dense: one at a time
    coupling = term.coupling if term.is_knn else term.graph.coupling
    C, D = post.beta.shape
    sites = np.arange(n, n + m)
    probs = np.empty((C, D, m, G))
    labels = np.empty((C, D, m), dtype=np.int64)
    cp, current = None, None
    z = post.y
    for c, d in progress(np.ndindex(C, D), C * D, "joint prediction", progressbar):
        if d == 0:  # each chain starts from random labels of the new points
            z = np.concatenate([post.y, rng.integers(0, G, m)])
        theta = post.theta[c, d].item()
        if theta != current:
            cp = None  # the last d-nn coupling goes before the next is built
            cp, current = coupling(theta), theta
        probs[c, d] = _k.clamped_gibbs(
            cp.indptr,
            cp.indices,
            cp.data,
            z,
            sites,
            post.beta[c, d],
            term.class_weights,
            int(sweeps),
            rng,
        )
        labels[c, d] = z[n:]
    return probs, labels


def _distinct_draws(post: Posterior):
    """Distinct ``(theta index, beta)`` pairs sorted by theta then beta, and their counts."""
    thetas, index = post.thetas()
    pairs, counts = np.unique(
        np.column_stack([index, post.beta.ravel()]), axis=0, return_counts=True
    )
    return thetas, pairs[:, 0].astype(np.int64), np.ascontiguousarray(pairs[:, 1]), counts


def _check_ci(ci_prob) -> float:
    if not 0.0 < as_float(ci_prob, "ci_prob", "in (0, 1)") < 1.0:
        raise ValueError(f"ci_prob must be in (0, 1), got {ci_prob!r}")
    return float(ci_prob)


def predictive_summary(
    idata,
    X_new,
    *,
    ci_prob=0.95,
    model=None,
    var_name=None,
    classes=None,
    working_memory=None,
    progressbar=True,
    lazy=False,
) -> xr.Dataset:
    """Posterior predictive summary of new points, streamed over draws and chunks of points.

    Parameters
    ----------
    idata, X_new, model, var_name, classes
        As for :func:`predict_proba`.
    ci_prob : float
        Probability of the equal-tailed credible interval (000 Fig. 3 uses 0.95).
    working_memory : float, optional
        MiB the working arrays may take (chunks of points: the neighbour query and the
        strengths at each distinct ``k`` or ``sigma``, each chunk also within dask's
        ``array.chunk-size``); default scikit-learn's setting
        (``sklearn.get_config()["working_memory"]``, 1024). The ``(point, class)`` results
        are not counted.
    progressbar : bool, default=True
        Show a progress bar over the points when there are at least ``PROGRESS_POINTS``
        (10,000) of them (in a terminal or notebook only; transient).
    lazy : bool, default=False
        Return dask-backed variables computed on demand, one task per chunk of points (each
        within ``working_memory``), the fitted state one key of the graph that every task
        refers to (a dask.distributed Client sends it to each worker once; see "Beyond one
        machine" in the Scaling page).

    Returns
    -------
    xarray.Dataset
        ``proba`` (point, class): the posterior predictive probability (000 eq. 7), the mean
        over draws;
        ``lower``, ``upper`` (point, class): the equal-tailed interval of the per-draw
        probabilities (the inverted-cdf quantiles at ``(1 -/+ ci_prob) / 2``); ``bayes_class``
        (point): the most probable class; ``uncertain`` (point): see
        :func:`uncertainty_zones`.

    Notes
    -----
    Nothing of size (draw, point) is held: draws are reduced to their distinct ``(beta,
    theta)`` pairs, and points go in chunks. With two classes and a kNN model each quantile is
    a bisection whose steps are binary searches among the draws sharing one ``k``; otherwise
    each point sorts its distinct draws' probabilities.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.3 and Fig. 3 (predictive probabilities, 95% credible intervals and the
       uncertainty zone) and section 3.1, eqs. 6-7 (the posterior predictive).

    Examples
    --------
    A posterior to predict with: ``pm.sample`` gives one (then call these inside its model's
    ``with`` block, or pass ``model=``); path sampling on 50 points is quicker here.

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X_test, y_test, *_ = pk.datasets.load_ripley("test")
    >>> graph = pk.KNNGraph(X[::5], k_max=10)
    >>> log_z = pk.log_normaliser(graph, np.linspace(0, 2, 11), n_classes=2, sweeps=40,
    ...                           burn=5, random_seed=1, progressbar=False)
    >>> idata = pk.path_sampling_posterior(graph, y[::5], log_z, draws=100, chains=2,
    ...                                    random_seed=1)
    >>> summary = pk.predictive_summary(idata, X_test[:3])
    >>> list(summary.data_vars)
    ['proba', 'lower', 'upper', 'bayes_class', 'uncertain']
    >>> summary["bayes_class"].values, y_test[:3]
    (array([0, 0, 0]), array([0, 0, 0]))
    >>> bool((summary["lower"] <= summary["proba"]).all() and
    ...      (summary["proba"] <= summary["upper"]).all())
    True
    """
    ci_prob = _check_ci(ci_prob)
    budget = working_memory_bytes(working_memory)
    post = Posterior(idata, model, var_name)
    X_new = _checked_new(post, X_new)
    thetas, t_index, beta, counts = _distinct_draws(post)
    state = (post, thetas, t_index, beta, counts.astype(np.float64), ci_prob, budget)
    classes = _class_coord(post.term.n_classes, classes)
    if not lazy:
        mean, lower, upper = _summary_block(state, X_new, progressbar)
        return _summary_dataset(mean, lower, upper, classes, ci_prob)
    import dask
    import dask.array as da

    G = post.term.n_classes
    m = X_new.shape[0]
    # one task a chunk of the size summarize_mixture streams; the state one key (see predict_proba)
    shared = dask.delayed(state, name=f"{post.name}_summary-state-{uuid.uuid4().hex}")
    per_point = post.query_bytes() + 8 * G * (thetas.size + 3)
    blocks = [
        da.from_delayed(
            dask.delayed(_summary_stack, pure=True)(shared, X_new[s]),
            shape=(3, s.stop - s.start, G),
            dtype=np.float64,
        )
        for s in _chunks(m, per_point, budget, post.fixed_bytes(thetas.size))
    ]
    stack = da.concatenate(blocks, axis=1)
    mean, lower, upper = stack[0], stack[1], stack[2]
    bayes = da.argmax(mean, axis=1).map_blocks(
        lambda b: np.asarray(classes)[b], dtype=np.asarray(classes).dtype
    )
    uncertain = stack.map_blocks(
        lambda a: uncertainty_zones(a[1], a[2], a[0]), drop_axis=[0, 2], dtype=bool
    )
    dims = ("point", "class")
    return xr.Dataset(
        {
            "proba": (dims, mean),
            "lower": (dims, lower),
            "upper": (dims, upper),
            "bayes_class": ("point", bayes),
            "uncertain": ("point", uncertain),
        },
        coords={"point": np.arange(m), "class": classes},
        attrs=_summary_dataset(*(np.zeros((0, G)),) * 3, classes, ci_prob).attrs,
    )


def _summary_block(state, X, progressbar=False):
    """Mean, lower and upper ``(point, class)`` of the new points ``X``."""
    post, thetas, t_index, beta, weights, ci_prob, budget = state
    return summarize_mixture(
        lambda Z: post.strengths(Z, thetas),
        X,
        thetas.size,
        t_index,
        beta,
        weights,
        post.term.n_classes,
        post.term.is_knn,
        post.query_bytes(),
        ci_prob,
        budget,
        post.fixed_bytes(thetas.size),
        progressbar=progressbar,
    )


def _summary_stack(state, X):
    return np.stack(_summary_block(state, X))


def summarize_mixture(
    strengths,
    X_new,
    n_thetas,
    t_index,
    beta,
    weights,
    G,
    is_knn,
    query_bytes,
    ci_prob,
    budget,
    fixed=0,
    progressbar=False,
):
    """Mean and equal-tailed interval of class probabilities under a weighted set of draws.

    ``strengths(X)`` gives ``h[a, t, g]`` for ``n_thetas`` thetas; draw ``u`` has ``beta[u]``,
    theta ``t_index[u]`` and weight ``weights[u]``, sorted by theta then beta. Points go in
    chunks of at most ``budget`` bytes, counting ``query_bytes`` a point for the query behind
    ``strengths`` and ``fixed`` bytes held throughout; with two classes and a kNN model each
    quantile is a bisection on the logit.
    """
    lo_q, hi_q = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    m = X_new.shape[0]
    mean, lower, upper = (np.empty((m, G)) for _ in range(3))
    two = G == 2 and is_knn
    by_sort = False
    if two:
        bounds = np.searchsorted(t_index, np.arange(n_thetas + 1)).astype(np.int64)
        cumw = np.concatenate([[0.0], np.cumsum(weights)])
        by_sort = _sort_is_cheaper(beta.size, n_thetas)
    per_point = query_bytes + 8 * G * (n_thetas + 3)  # query, strengths, the kernel's results
    if not two or by_sort:  # each thread sorts one point's distinct draws at a time
        fixed += numba.get_num_threads() * 8 * beta.size * (G + 3)
    for s in _progress_slices(
        _chunks(m, per_point, budget, fixed), m, progressbar, "predictive summary"
    ):
        h = strengths(X_new[s])
        if two:
            mean[s], lower[s], upper[s] = _k.summaries_two_classes(
                h, beta, cumw, bounds, lo_q, hi_q, by_sort
            )
        else:
            mean[s], lower[s], upper[s] = _k.summaries_general(
                h, beta, t_index, weights, lo_q, hi_q
            )
    return mean, lower, upper


def _sort_is_cheaper(n_draws: int, n_thetas: int) -> bool:
    """Whether sorting a point's ``n_draws`` logits costs less than four bisections (about 60
    steps of one binary search per theta each) for its two classes' intervals; a sort's step
    costs about two of a binary search's (measured: 10^5 points, 11 thetas, 200 draws 0.6 s
    against 3.2 s, 1,000 draws 6.2 s against 5.4 s)."""
    U, T = max(n_draws, 2), max(n_thetas, 1)
    return 2 * U * math.log2(U) <= 4 * 60 * T * math.log2(max(U / T, 2))


def summarize_proba(proba: xr.DataArray, ci_prob=0.95) -> xr.Dataset:
    """The summary of :func:`predictive_summary` from per-draw probabilities.

    For the output of :func:`predict_proba` (for instance with ``joint=True``); the array is
    reduced over ``chain`` and ``draw``.

    Parameters
    ----------
    proba : xarray.DataArray
        Dims ``(chain, draw, point, class)``, from :func:`predict_proba`.
    ci_prob : float
        Probability of the equal-tailed credible interval.

    Returns
    -------
    xarray.Dataset
        As :func:`predictive_summary`'s.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.3 and Fig. 3; section 3.1, eq. 7.

    Examples
    --------
    A posterior to predict with: ``pm.sample`` gives one (then call these inside its model's
    ``with`` block, or pass ``model=``); path sampling on 50 points is quicker here.

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X_test, y_test, *_ = pk.datasets.load_ripley("test")
    >>> graph = pk.KNNGraph(X[::5], k_max=10)
    >>> log_z = pk.log_normaliser(graph, np.linspace(0, 2, 11), n_classes=2, sweeps=40,
    ...                           burn=5, random_seed=1, progressbar=False)
    >>> idata = pk.path_sampling_posterior(graph, y[::5], log_z, draws=100, chains=2,
    ...                                    random_seed=1)
    >>> proba = pk.predict_proba(idata, X_test[:3])
    >>> summary = pk.summarize_proba(proba)
    >>> bool(np.allclose(summary["proba"], proba.mean(("chain", "draw"))))
    True
    >>> summary["bayes_class"].values
    array([0, 0, 0])
    """
    ci_prob = _check_ci(ci_prob)
    if not isinstance(proba, xr.DataArray) or set(proba.dims) != {*SAMPLE_DIMS, "point", "class"}:
        raise ValueError(
            "proba must be a DataArray with dims (chain, draw, point, class) from pk.predict_proba"
        )
    proba = proba.transpose(*SAMPLE_DIMS, "point", "class")
    mean = proba.mean(SAMPLE_DIMS)
    q = proba.quantile(
        [(1 - ci_prob) / 2, (1 + ci_prob) / 2], dim=SAMPLE_DIMS, method="inverted_cdf"
    )
    return _summary_dataset(
        np.asarray(mean), np.asarray(q[0]), np.asarray(q[1]), proba["class"].values, ci_prob
    )


def uncertainty_zones(lower, upper, mean) -> np.ndarray:
    """Whether each point is in the uncertainty zone (000 Fig. 3).

    Two classes: the credible interval of ``P(class 1)`` contains 0.5. More classes: the
    intervals of the two classes of highest mean probability overlap.

    Parameters
    ----------
    lower, upper, mean : array_like, shape (m, G)
        The credible intervals and means of the class probabilities of ``m`` points.

    Returns
    -------
    ndarray of bool, shape (m,)

    See Also
    --------
    predictive_summary : its ``uncertain`` variable.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 1.3 and Fig. 3 ("If the interval contains 0.5, the point is ranked as
       uncertain").

    Examples
    --------
    Two points, two classes: the interval of ``P(class 1)`` is ``[0.1, 0.3]`` (sure) and
    ``[0.4, 0.7]`` (uncertain).

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> lower = np.array([[0.7, 0.1], [0.3, 0.4]])
    >>> upper = np.array([[0.9, 0.3], [0.6, 0.7]])
    >>> pk.uncertainty_zones(lower, upper, (lower + upper) / 2)
    array([False,  True])
    """
    lower, upper, mean = (np.asarray(a, dtype=np.float64) for a in (lower, upper, mean))
    if lower.ndim != 2 or lower.shape != upper.shape or lower.shape != mean.shape:
        raise ValueError("lower, upper and mean must be (point, class) arrays of one shape")
    if lower.shape[1] == 2:
        return (lower[:, 1] <= 0.5) & (upper[:, 1] >= 0.5)
    top = np.argsort(-mean, axis=1, kind="stable")
    rows = np.arange(mean.shape[0])
    return lower[rows, top[:, 0]] <= upper[rows, top[:, 1]]


def _summary_dataset(mean, lower, upper, classes, ci_prob) -> xr.Dataset:
    bayes = np.argmax(mean, axis=1)
    point = np.arange(mean.shape[0])
    dims = ("point", "class")
    return xr.Dataset(
        {
            "proba": (dims, mean),
            "lower": (dims, lower),
            "upper": (dims, upper),
            "bayes_class": ("point", np.asarray(classes)[bayes]),
            "uncertain": ("point", uncertainty_zones(lower, upper, mean)),
        },
        coords={"point": point, "class": classes},
        attrs={
            "ci_prob": ci_prob,
            "interval": "equal-tailed, inverted-cdf quantiles over the posterior draws",
        },
    )


def add_predictions(
    idata,
    X_new,
    *,
    model=None,
    var_name=None,
    classes=None,
    joint=False,
    sweeps=20,
    random_seed=None,
    lazy=None,
    working_memory=None,
):
    """Store the posterior predictive of new points in ``idata`` (ArviZ's ``predictions`` group).

    ``predictions`` gets ``var_name`` (label draws as class indices ``0..G-1``, dims ``(chain,
    draw, point)``, as in ``observed_data``) and
    ``f"{var_name}_proba"`` (per-draw class probabilities, dims ``(chain, draw, point,
    class)``); ``predictions_constant_data`` gets ``f"{var_name}_X"`` (dims ``(point,
    feature)``). Existing groups of these names are replaced. Arguments as for
    :func:`predict_proba`; ``random_seed`` seeds the label draws, which go in chunks of draws
    within ``working_memory`` too.

    Returns
    -------
    arviz.InferenceData
        ``idata`` itself, extended in place.

    See Also
    --------
    predict_proba : the probabilities alone.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 2.3, eq. 5 and section 3.1, eq. 7.

    Examples
    --------
    A posterior to predict with: ``pm.sample`` gives one (then call these inside its model's
    ``with`` block, or pass ``model=``); path sampling on 50 points is quicker here.

    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> X_test, y_test, *_ = pk.datasets.load_ripley("test")
    >>> graph = pk.KNNGraph(X[::5], k_max=10)
    >>> log_z = pk.log_normaliser(graph, np.linspace(0, 2, 11), n_classes=2, sweeps=40,
    ...                           burn=5, random_seed=1, progressbar=False)
    >>> idata = pk.path_sampling_posterior(graph, y[::5], log_z, draws=100, chains=2,
    ...                                    random_seed=1)
    >>> idata = pk.add_predictions(idata, X_test[:3], random_seed=2)
    >>> "predictions" in idata.groups(), "predictions_constant_data" in idata.groups()
    (True, True)
    >>> idata.predictions["y"].dims
    ('chain', 'draw', 'point')
    >>> idata.predictions["y_proba"].dims
    ('chain', 'draw', 'point', 'class')
    """
    proba = predict_proba(
        idata,
        X_new,
        model=model,
        var_name=var_name,
        classes=classes,
        joint=joint,
        sweeps=sweeps,
        random_seed=random_seed,
        lazy=lazy,
        working_memory=working_memory,
    )
    name = proba.name[: -len("_proba")]
    X_new = np.asarray(X_new, dtype=np.float64)
    if joint:
        labels = xr.DataArray(
            proba.attrs.pop("labels"),
            dims=(*SAMPLE_DIMS, "point"),
            coords={d: proba[d] for d in (*SAMPLE_DIMS, "point")},
        )
    else:
        labels = _draw_labels(
            proba, np.random.default_rng(random_seed), working_memory_bytes(working_memory)
        )
    predictions = xr.Dataset({name: labels, proba.name: proba})
    constant = xr.Dataset(
        {f"{name}_X": (("point", "feature"), X_new)}, coords={"point": proba["point"].values}
    )
    for group, data in (("predictions", predictions), ("predictions_constant_data", constant)):
        if group in idata.groups():
            del idata[group]
        idata.add_groups({group: data})
    return idata


def _inverse_cdf(p, u):
    """Class indices with cdf ``p.cumsum(-1)`` at uniforms ``u`` (one per row of ``p``)."""
    return np.minimum((np.cumsum(p, axis=-1) < u[..., None]).sum(axis=-1), p.shape[-1] - 1)


def _draw_labels(proba: xr.DataArray, rng, budget) -> xr.DataArray:
    """One class index per draw and point, by inverse cdf: for dask arrays chunk by chunk of
    points, else in chunks of draws within ``budget`` bytes (one stream of uniforms either way)."""

    def draw(p, seed):
        return _inverse_cdf(p, np.random.default_rng(seed).random(p.shape[:-1]))

    data = proba.data
    if hasattr(data, "dask"):
        import dask
        import dask.array as da

        seeds = rng.integers(0, 2**63, len(data.chunks[2]))
        blocks = data.to_delayed().ravel()
        parts = [
            da.from_delayed(dask.delayed(draw)(b, s), shape=(*data.shape[:2], c), dtype=np.int64)
            for b, s, c in zip(blocks, seeds, data.chunks[2])
        ]
        labels = da.concatenate(parts, axis=2)
    else:
        p = np.asarray(data).reshape(-1, *data.shape[2:])  # (draw, point, class)
        stream = np.random.default_rng(rng.integers(0, 2**63))
        labels = np.empty(p.shape[:2], dtype=np.int64)
        # a draw's cumulative sums, their comparison and its uniforms
        for s in _chunks(p.shape[0], p[0].size * 9 + p.shape[1] * 8, budget):
            labels[s] = _inverse_cdf(p[s], stream.random(labels[s].shape))
        labels = labels.reshape(data.shape[:3])
    return xr.DataArray(
        labels, dims=(*SAMPLE_DIMS, "point"), coords={d: proba[d] for d in (*SAMPLE_DIMS, "point")}
    )


# what a dask.distributed Client raises when its scheduler or workers go away mid-computation
_CLIENT_LOST = {
    "FutureCancelledError",
    "CancelledError",
    "CommClosedError",
    "StreamClosedError",
    "ClosedClientError",
}


def _active_client():
    """The dask.distributed Client in use, or None. distributed is not imported for this: a
    Client exists only where it already was."""
    import sys

    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return distributed.default_client()
    except ValueError:
        return None


# what distributed's Lock (a netCDF write's), Semaphore, Event, Queue and Variable raise in a
# task that finds neither its Worker nor a Client: the cluster is closing under it
_NO_CONTEXT = "object not properly initialized"


def _client_lost(exc: BaseException, client) -> bool:
    """Whether ``exc`` came from losing ``client`` (the Client active when computing began).

    Besides the errors a lost connection raises: anything raised once that Client stopped
    running, and the bare RuntimeError of a distributed lock whose task lost its Worker and
    Client (reported while the scheduler still runs, so the Client may not know yet).
    """
    if any(t.__name__ in _CLIENT_LOST for t in type(exc).__mro__):
        return True
    if client is None:
        return False
    return client.status != "running" or (isinstance(exc, RuntimeError) and _NO_CONTEXT in str(exc))


def compute_predictions(obj, path=None):
    """Compute a lazy prediction or summary, on a dask.distributed Client if one is active.

    Parameters
    ----------
    obj : xarray.DataArray or xarray.Dataset
        What ``predict_proba(..., lazy=True)``, ``predictive_summary(..., lazy=True)`` or
        ``add_predictions(..., lazy=True)`` give, or anything derived from them.
    path : str or path-like, optional
        Write to this netCDF file instead of returning the values: chunk by chunk to a
        temporary file beside it, renamed to ``path`` only once complete, so that ``path``
        holds either the whole result or nothing (an earlier file there is replaced only then).

    Returns
    -------
    The computed object, or ``path`` when given.

    Raises
    ------
    RuntimeError
        The dask Client (its scheduler or workers) went away during the computation: nothing
        was written. The original error is chained.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> import pymc_knn as pk
    >>> lazy = xr.DataArray(np.arange(4.0), dims="point").chunk(2)
    >>> pk.compute_predictions(lazy.mean()).values
    array(1.5)
    """
    import os
    from pathlib import Path

    client = _active_client()
    try:
        if path is None:
            return obj.compute()
        path = Path(path)
        part = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
        try:
            obj.to_netcdf(part)
            os.replace(part, path)
        finally:
            part.unlink(missing_ok=True)
        return path
    except Exception as exc:
        if not _client_lost(exc, client):
            raise
        raise RuntimeError(
            f"the dask Client was lost mid-computation ({type(exc).__name__}: its scheduler or "
            "workers went away); nothing was written"
            + ("" if path is None else f" to {path}")
            + ". Reconnect (distributed.Client(address)) and compute again, or compute without "
            "a Client (close it: the threaded scheduler is used)"
        ) from exc
