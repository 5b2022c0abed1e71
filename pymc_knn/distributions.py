"""PyMC distributions whose likelihood is a Potts field on a neighbour graph.

``PottsKNN`` (Cucala et al. 2009; Yoon and Friel 2015) and ``DistanceNN`` (Friel and Pettitt
2011) each have their own ``RandomVariable`` Op, so the step methods recognise them and
``pm.sample_prior_predictive`` / ``pm.sample_posterior_predictive`` draw label vectors with the
package's samplers: at each draw of ``(beta, theta)``, a fresh field over the *training* points
from the Potts law (see :class:`PottsRV`). They serve predictive checks of the training labels;
they are not predictions for new points (:func:`pymc_knn.predict_proba`,
:func:`pymc_knn.add_predictions`).

Their ``logp`` is ``beta * E_theta(y)``, the log of the *unnormalised* density: the normalising
constant ``Z(beta, theta)`` is intractable. Only the package's step methods (which cancel ``Z``)
may sample the parameters of such a term; PyMC's own steps are refused for them (see
:mod:`pymc_knn.safety`).
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.distributions.distribution import Distribution, PartialObservedRV, _support_point
from pymc.distributions.shape_utils import rv_size_is_none
from pymc.logprob.abstract import _logprob
from pymc.pytensorf import convert_data
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.gradient import grad_not_implemented, grad_undefined
from pytensor.graph.basic import Apply, Constant, Variable
from pytensor.graph.op import Op
from pytensor.graph.traversal import ancestors, graph_inputs
from pytensor.tensor.random.op import RandomVariable

from ._forward import count_fallbacks, draw_labels, predictive_labels
from ._validation import check_covariates, check_labels, check_n_classes, kernel_array
from .graphs import DistanceGraph, KNNGraph, default_k_max, max_k
from .terms import PottsTerm

__all__ = ["DistanceNN", "PottsKNN", "PottsRV", "potts_parameters", "potts_terms"]

PREDICTIVE_SWEEPS = 200
"""Swendsen-Wang sweeps of a label draw that is not exact: every draw when G > 2 (from uniformly
random labels), and a two-class draw after coupling from the past fails to coalesce."""

PREDICTIVE_CFTP_SWEEPS = 64
"""Bound on the look-back of coupling from the past in a two-class label draw. A failed attempt
(about ``5 * 64`` single-site sweeps) costs about as much as the Swendsen-Wang fall-back, so no
draw costs much more than twice the fall-back. On Ripley's kNN graph (k = 15), 99 of 100 draws
coalesce within 64 sweeps at beta = 1.0, 31 at 1.25, none at 1.5 (benchmarks/README.md)."""


class PottsEnergy(Op):
    """``E_theta(z)`` of a :class:`PottsTerm` as a PyTensor scalar (no gradient)."""

    __props__ = ("term",)

    def __init__(self, term: PottsTerm):
        self.term = term

    def make_node(self, value, theta, *X):
        inputs = [pt.as_tensor_variable(v) for v in (value, theta, *X)]
        return Apply(self, inputs, [pt.dscalar()])

    def perform(self, node, inputs, outputs):
        z, theta, *X = inputs
        if z.shape != (self.term.n,):
            raise _changed_data(f"the labels have shape {z.shape}", self.term.n)
        if X and not self.term.graph.is_training(X[0]):
            raise _changed_data(
                "the covariates differ from those the graph was built on", self.term.n
            )
        outputs[0][0] = np.asarray(self.term.energy(kernel_array(z, np.int64), theta.item()))

    def grad(self, inputs, output_grads):
        return [
            grad_undefined(self, 0, inputs[0], "labels are discrete"),
            grad_not_implemented(
                self, 1, inputs[1], "the Potts term's normalising constant is intractable"
            ),
            *(grad_undefined(self, 2, x, "the graph is built from data") for x in inputs[2:]),
        ]


def _changed_data(what, n) -> ValueError:
    return ValueError(
        f"{what}, but the Potts term's graph was built on {n} training points: its data changed "
        "(pm.set_data) after the model was built. Use pm.set_data for prediction only "
        "(pm.sample_posterior_predictive); to fit new data, build a new model"
    )


class PottsRV(RandomVariable):
    """A Potts term's labels: ``rng_fn`` draws ``z ~ f(. | beta, theta)`` over its points.

    Two classes: exact by coupling from the past when it coalesces within
    ``PREDICTIVE_CFTP_SWEEPS`` sweeps, else (counted, one warning per PyMC call) continued by
    ``PREDICTIVE_SWEEPS`` Swendsen-Wang sweeps; more classes: ``PREDICTIVE_SWEEPS`` Swendsen-Wang
    sweeps from uniformly random labels (see :mod:`pymc_knn._forward`).

    When the covariates are ``pm.Data``, they are a third input (signature
    ``"(),(),(n,p)->(n)"``): the logp refuses covariates other than the graph's, and after
    ``pm.set_data`` to new points ``rng_fn`` draws their labels from the predictive given the
    training labels (:func:`pymc_knn._forward.predictive_labels`), PyMC's prediction idiom.

    ``term`` is a prop beside ``RandomVariable``'s; the others (``signature``, ``dtype``,
    ``inplace``) pass through, so PyTensor's rewrites can rebuild the Op as ``type(op)(**props)``.
    """

    signature = "(),()->(n)"
    dtype = "int64"
    __props__ = RandomVariable.__props__ + ("term",)

    def __init__(self, term: PottsTerm, name: str, **kwargs):
        self.term = term
        super().__init__(name=name, **kwargs)

    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        if len(dist_params) > 2:
            return (dist_params[2].shape[0],)
        return (self.term.n,)

    def rng_fn(self, rng, beta, theta, *rest):
        *X, size = rest
        beta, theta = np.broadcast_arrays(np.asarray(beta, float), np.asarray(theta))
        batch = tuple(size) if size is not None else beta.shape
        beta = np.broadcast_to(beta, batch)
        theta = np.broadcast_to(theta, batch)
        if X and not self.term.graph.is_training(X[0]):
            return predictive_labels(self.term, beta, theta, X[0], rng)
        out = np.empty(batch + (self.term.n,), dtype=np.int64)
        fell_back = np.zeros(batch, dtype=bool)
        cftp_sweeps, sweeps = PREDICTIVE_CFTP_SWEEPS, PREDICTIVE_SWEEPS
        for idx in np.ndindex(*batch):
            out[idx], fell_back[idx] = draw_labels(
                self.term, float(beta[idx]), theta[idx].item(), rng, cftp_sweeps, sweeps
            )
        if self.term.n_classes == 2:
            count_fallbacks(self.name, self.term, fell_back.size, beta[fell_back])
        return out


def _potts_logp(op: PottsRV, values, rng, size, beta, theta, *X, **kwargs):
    (value,) = values
    term = op.term
    valid_labels = pt.all(pt.ge(value, 0)) & pt.all(pt.lt(value, term.n_classes))
    if term.is_knn:
        valid_theta = pt.ge(theta, 1) & pt.le(theta, term.graph.k_max)
        theta_safe = pt.switch(valid_theta, theta, 1)
    else:
        valid_theta = pt.gt(theta, 0)
        theta_safe = pt.switch(valid_theta, theta, 1.0)
    value_safe = pt.switch(valid_labels, value, 0)
    logq = beta * PottsEnergy(term)(value_safe, theta_safe, *X)
    logq = pt.switch(valid_labels, logq, -np.inf)
    name = "k" if term.is_knn else "sigma"
    bound = f"1 <= k <= k_max = {term.graph.k_max}" if term.is_knn else "sigma > 0"
    return check_parameters(logq, pt.ge(beta, 0), valid_theta, msg=f"beta >= 0, {bound} ({name})")


_logprob.register(PottsRV)(_potts_logp)


@_support_point.register(PottsRV)
def _potts_support_point(op, rv, rng, size, beta, theta, *X):
    """Every label in class 0: a valid start for missing labels (their Gibbs step moves them)."""
    batch = pt.broadcast_arrays(beta, theta)[0].shape if rv_size_is_none(size) else size
    n = X[0].shape[0] if X else op.term.n
    return pt.zeros((*batch, n), dtype="int64")


def data_value(value, name: str):
    """The array behind ``value``: itself, or the value of a ``pm.Data`` (shared) variable or
    constant. Expressions of random or free variables are refused: the graph is built once,
    from data."""
    if not isinstance(value, Variable):
        return value
    if isinstance(value, SharedVariable):
        return value.get_value()
    if isinstance(value, Constant):
        return value.data
    roots = graph_inputs([value])
    drawn = any(
        v.owner is not None and isinstance(v.owner.op, RandomVariable) for v in ancestors([value])
    )
    if drawn or not all(isinstance(r, (SharedVariable, Constant)) for r in roots):
        raise ValueError(
            f"{name} must be data (an array, or pm.Data), not an expression of the model's random "
            "variables: the neighbour graph is built once, when the model is"
        )
    return value.eval()


def _symbolic(X):
    """``X`` when it is ``pm.Data`` (or another expression of shared data), else None."""
    return X if isinstance(X, Variable) and not isinstance(X, Constant) else None


def _training_labels(observed):
    """The observed labels as int64, missing ones -1 (None when unobserved)."""
    if observed is None:
        return None
    known, mask = split_missing(observed)
    if mask is None:
        return np.asarray(known, dtype=np.int64)
    y = np.full(mask.shape, -1, dtype=np.int64)
    y[~mask] = known
    return y


def split_missing(observed):
    """Labels as PyMC sees them: ``(known, mask)``, ``mask`` True where a label is missing (a
    masked entry or NaN, as :func:`pymc.pytensorf.convert_data` marks them), or None."""
    if not hasattr(observed, "isnull"):  # pandas objects mark their own missing values
        observed = np.asanyarray(observed)
        if observed.dtype.kind != "f" and not isinstance(observed, np.ma.MaskedArray):
            return observed, None
    data = convert_data(observed)
    if isinstance(data, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(data)
        return np.asarray(data.data)[~mask], mask
    return np.asarray(data), None


def _as_observed(observed):
    """Labels with missing values as a masked integer array (NaN would be cast to int first)."""
    if observed is None or isinstance(observed, Variable):
        return observed
    if split_missing(observed)[1] is None:
        return observed
    y = _training_labels(observed)
    return np.ma.masked_array(np.maximum(y, 0), mask=y < 0)


def _observed_classes(observed, n, n_classes):
    if n_classes is not None:
        n_classes = check_n_classes(n_classes)
    if observed is None:
        if n_classes is None:
            raise ValueError("give n_classes when the labels are not observed")
        return n_classes
    known, mask = split_missing(observed)
    if mask is not None:
        if mask.shape != (n,):
            raise ValueError(f"got {mask.size} labels for {n} points; they must match")
        if mask.all():
            raise ValueError("every observed label is missing: observe at least two classes")
    y = check_labels(known, n if mask is None else None, n_classes)
    G = n_classes if n_classes is not None else int(y.max()) + 1
    counts = np.bincount(y, minlength=G)
    if np.count_nonzero(counts) < 2:
        raise ValueError(
            "the observed labels hold a single class: classification needs at least two"
        )
    empty = np.flatnonzero(counts == 0)
    if n_classes is None and empty.size:
        raise ValueError(
            f"the observed labels {np.unique(y).tolist()} leave the classes {empty.tolist()} of "
            f"0..{G - 1} empty, and a Potts field would still give them probability: encode the "
            "labels as 0..G-1, `classes, y = np.unique(labels, return_inverse=True)`, or pass "
            f"n_classes={G} if the empty classes are meant"
        )
    return G


def _prior_k_max(k) -> int | None:
    """The largest ``k`` a ``pm.DiscreteUniform`` prior with a constant upper bound allows, or
    None for any other ``k`` (a number, an expression, another prior, a bound in ``pm.Data``)."""
    from pymc.distributions.discrete import DiscreteUniformRV

    owner = getattr(k, "owner", None)
    if owner is None or not isinstance(owner.op, DiscreteUniformRV):
        return None
    upper = owner.inputs[-1]
    if not all(isinstance(v, Constant) for v in graph_inputs([upper])):
        return None
    return int(np.floor(upper.eval()))


def _integer_k(k):
    """``k`` as an integer tensor; a continuous ``k`` (a float prior) is refused, not rounded."""
    k = pt.as_tensor_variable(k)
    if k.dtype.startswith(("int", "uint")):
        return k
    if isinstance(k, pt.TensorConstant) and np.all(np.mod(k.data, 1) == 0):
        return pt.as_tensor_variable(np.asarray(k.data, dtype=np.int64))
    raise ValueError(
        f"k must be an integer, got a {k.dtype} expression: the number of neighbours takes "
        "the values 1..k_max, and a continuous k would be rounded silently. Give it a discrete "
        "prior, e.g. pm.DiscreteUniform('k', 1, pk.max_k(y))"
    )


def _check_constants(term, beta, theta):
    """A ``beta``, ``k`` or ``sigma`` given as a number must lie in its range now, not fail at
    ``pm.sample`` with advice about initial values."""
    if isinstance(beta, Constant) and not np.all(beta.data >= 0):
        raise ValueError(
            f"beta must be >= 0 (and not NaN), got {beta.data}: the interaction "
            "parameter of a Potts field is non-negative"
        )
    if not isinstance(theta, Constant):
        return
    value = theta.data
    if term.is_knn and not np.all((value >= 1) & (value <= term.graph.k_max)):
        raise ValueError(f"k must be an integer in 1..k_max = {term.graph.k_max}, got {value}")
    if not term.is_knn and not np.all(value > 0):
        raise ValueError(f"sigma must be > 0 (and not NaN), got {value}")


def _rv_op(cls, beta, theta, *X, term, size=None, rng=None):
    params = [pt.as_tensor_variable(v) for v in (beta, theta, *X)]
    _check_constants(term, *params[:2])
    signature = "(),(),(n,p)->(n)" if X else PottsRV.signature
    return PottsRV(term, cls.__name__, signature=signature)(*params, size=size, rng=rng)


class _PottsDistribution(Distribution):
    rv_type = PottsRV


class PottsKNN(_PottsDistribution):
    """The probabilistic kNN likelihood of Cucala et al. (2009), eq. 3.

    ``f(y | beta, k) = exp(beta sum_i a_{y_i} sum_{j ~k i} [y_i == y_j] / k) / Z(beta, k)``.

    Parameters
    ----------
    name : str
    X : array_like, shape (n, p)
        Covariates (standardised by default with their own statistics).
    beta : tensor_like
        Interaction parameter, ``>= 0``; any PyMC expression of free variables.
    k : tensor_like
        Number of neighbours, an integer in ``1..k_max``; any PyMC expression.
    neighbours : {"symmetrised", "equal"}
        ``"symmetrised"``: eq. 3 of Cucala et al. (mutual neighbours count twice);
        ``"equal"``: the Boltzmann(2) rule of Yoon and Friel (2015), each edge once.
    class_weights : array_like, optional
        Unbalanced-sampling weights ``a_g = p_g n / n_g`` (Cucala et al., section 2.2).
    n_classes : int, optional
        ``G``; default ``max(observed) + 1``.
    k_max : int, optional
        Largest ``k``; at most the smallest observed class size (Cucala et al., section 3).
        Default: the upper bound of ``k``'s prior when it is a ``pm.DiscreteUniform`` with a
        constant upper bound within that size; else that size, and beyond
        :data:`~pymc_knn.graphs.UNCAPPED_N` (2000) points at most
        :data:`~pymc_knn.graphs.DEFAULT_K_MAX_CAP` (100): :func:`pymc_knn.default_k_max`. The
        graph's tables take ``24 n k_max`` bytes, refused beyond scikit-learn's
        ``working_memory`` setting (``sklearn.config_context(working_memory=...)`` raises it).
    standardize : bool
    beta_max : float, optional
        Where the field freezes (:func:`pymc_knn.beta_max`). When given, the step methods refuse
        a prior on beta that reaches past it.
    observed : array_like of int
        Labels in ``0..G-1``.

    See Also
    --------
    DistanceNN : the distance-weighted models of Friel and Pettitt (2011).
    Exchange : the step ``pm.sample`` assigns to ``beta`` and ``k``.
    predict_proba : posterior predictive probabilities of new points.

    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
    .. [2] Yoon, J. W. and Friel, N. (2015). Efficient model selection for probabilistic K nearest
       neighbour classification. *Neurocomputing* 149, 1098-1108.

    Examples
    --------
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 4)
    ...     k = pm.DiscreteUniform("k", 1, 125)
    ...     labels = pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    >>> idata = pm.sample(model=model, random_seed=1)  # doctest: +SKIP
    """

    def __new__(
        cls,
        name,
        X,
        beta,
        k,
        *,
        neighbours="symmetrised",
        class_weights=None,
        n_classes=None,
        k_max=None,
        standardize=True,
        beta_max=None,
        observed=None,
        **kwargs,
    ):
        labels = data_value(observed, "observed")
        term = cls._term(
            data_value(X, "X"),
            neighbours,
            class_weights,
            n_classes,
            k_max,
            standardize,
            labels,
            beta_max,
            _prior_k_max(k),
        )
        term.labels = _training_labels(labels)
        return super().__new__(
            cls,
            name,
            beta,
            k,
            term=term,
            covariates=_symbolic(X),
            observed=_as_observed(observed),
            **kwargs,
        )

    rv_type = PottsRV
    rv_op = classmethod(_rv_op)

    @classmethod
    def dist(cls, beta, k, *, term, covariates=None, **kwargs):
        params = [beta, _integer_k(k)] + ([] if covariates is None else [covariates])
        return super().dist(params, term=term, **kwargs)

    @staticmethod
    def _term(
        X, neighbours, class_weights, n_classes, k_max, standardize, observed, beta_max, k_prior
    ):
        if neighbours not in ("symmetrised", "equal"):
            raise ValueError(
                f"neighbours must be 'symmetrised' or 'equal', got {neighbours!r} (the asymmetric "
                "Holmes-Adams neighbourhood has no joint model)"
            )
        n = check_covariates(X).shape[0]
        G = _observed_classes(observed, n, n_classes)
        smallest = max_k(split_missing(observed)[0]) if observed is not None else None
        K = n - 1 if smallest is None else smallest
        if k_max is None and k_prior is not None and 1 <= k_prior <= K:
            k_max = k_prior  # the graph the prior needs: no table beyond it
        elif k_max is None:
            k_max = default_k_max(n, smallest)
        elif isinstance(k_max, (int, np.integer)) and k_max > K:  # else KNNGraph refuses it
            raise ValueError(
                f"k_max={k_max} exceeds the smallest observed class size ({K}), the largest k "
                "Cucala et al. (2009, section 3) allow; lower it or leave it out"
            )
        graph = KNNGraph(X, k_max=k_max, neighbours=neighbours, standardize=standardize)
        return PottsTerm(graph, G, class_weights, beta_max)


class DistanceNN(_PottsDistribution):
    """The distance-nearest-neighbour likelihood of Friel and Pettitt (2011), eq. 2.

    Parameters
    ----------
    name : str
    X : array_like, shape (n, p)
    beta : tensor_like
        Interaction parameter, ``>= 0``.
    sigma : tensor_like
        Kernel scale, ``> 0``.
    kernel : {"gaussian", "ball", "exponential"}
        d-nn1, d-nn2 and d-nn3 of the paper.
    class_weights, n_classes, standardize, beta_max, observed
        As for :class:`PottsKNN`.
    drop_tol : float in [0, 1), optional
        Bound on the share of a point's weight left out by keeping only its nearest others
        (:class:`~pymc_knn.DistanceGraph`; at each ``sigma`` a row keeps the fewest whose rest is
        within the bound): default 0 (every pair) up to 2,000 points, 1e-6 beyond. The step
        methods widen the kept table during tuning to cover the ``sigma`` of the chain's tuning
        windows (docs/scaling.md), and record the bound of each draw (``dnn_dropped`` in
        sample_stats).
    sigma_max : float, optional
        ``sigma`` the kept table covers from the start (exponential kernel: the smallest rate).
    working_memory : float, optional
        MiB the kept table may take (default scikit-learn's ``working_memory``, 1024).

    See Also
    --------
    PottsKNN : the kNN model of Cucala et al. (2009).

    References
    ----------
    .. [1] Friel, N. and Pettitt, A. N. (2011). Classification using distance nearest neighbours.
       *Statistics and Computing* 21, 431-437.

    Examples
    --------
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 4)
    ...     sigma = pm.HalfNormal("sigma", 1.0)
    ...     labels = pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel="gaussian",
    ...                            observed=y)
    >>> idata = pm.sample(model=model, random_seed=1)  # doctest: +SKIP
    """

    def __new__(
        cls,
        name,
        X,
        beta,
        sigma,
        *,
        kernel="gaussian",
        class_weights=None,
        n_classes=None,
        standardize=True,
        beta_max=None,
        observed=None,
        drop_tol=None,
        sigma_max=None,
        working_memory=None,
        **kwargs,
    ):
        values, labels = data_value(X, "X"), data_value(observed, "observed")
        n = check_covariates(values).shape[0]
        G = _observed_classes(labels, n, n_classes)
        graph = DistanceGraph(
            values,
            kernel=kernel,
            standardize=standardize,
            drop_tol=drop_tol,
            sigma_max=sigma_max,
            working_memory=working_memory,
        )
        term = PottsTerm(graph, G, class_weights, beta_max)
        term.labels = _training_labels(labels)
        return super().__new__(
            cls,
            name,
            beta,
            sigma,
            term=term,
            covariates=_symbolic(X),
            observed=_as_observed(observed),
            **kwargs,
        )

    rv_type = PottsRV
    rv_op = classmethod(_rv_op)

    @classmethod
    def dist(cls, beta, sigma, *, term, covariates=None, **kwargs):
        params = [beta, sigma] + ([] if covariates is None else [covariates])
        return super().dist(params, term=term, **kwargs)


def potts_node(rv):
    """The ``PottsRV`` node behind a variable: its own, or that of a partially observed Potts
    term (labels with missing values, split by PyMC into ``<name>_observed`` and
    ``<name>_unobserved``); None for any other variable."""
    owner = rv.owner
    if owner is None:
        return None
    if isinstance(owner.op, PottsRV):
        return owner
    if isinstance(owner.op, PartialObservedRV):
        base = owner.inputs[0].owner
        if base is not None and isinstance(base.op, PottsRV):
            return base
    return None


def _is_missing_part(rv) -> bool:
    return isinstance(rv.owner.op, PartialObservedRV) and rv.owner.outputs.index(rv) == 1


def potts_terms(model) -> list:
    """The Potts-likelihood random variables of a model (observed or not): for labels with
    missing values, the observed part (which carries the term's log density). Each once:
    PyMC 5.28's ``sample_posterior_predictive`` appends the observed variables to
    ``model.observed_RVs`` again (its ``observed_vars += ...`` extends the model's own list)."""
    return list(
        dict.fromkeys(
            rv for rv in model.basic_RVs if potts_node(rv) is not None and not _is_missing_part(rv)
        )
    )


def term_name(rv) -> str:
    """The name the user gave a Potts term (``y`` for both parts of a partially observed one)."""
    node = potts_node(rv)
    return node.outputs[node.op.default_output].name or rv.name


def missing_labels(model, rv):
    """``(sites, value_var)`` of a Potts term's missing labels (their indices and the free
    variable PyMC imputes them with), or None when every label is observed."""
    owner = rv.owner
    if not isinstance(owner.op, PartialObservedRV):
        return None
    mask = np.asarray(pt.as_tensor_variable(owner.inputs[1]).eval(), dtype=bool)
    return np.flatnonzero(mask), model.rvs_to_values[owner.outputs[1]]


def term_labels(model, rv) -> np.ndarray:
    """A Potts term's labels, all ``n`` of them; missing ones are -1. Raises ``ValueError``
    when ``pm.set_data`` changed its covariates or labels since the model was built."""
    node = potts_node(rv)
    n = node.op.term.n
    covariates = node.inputs[4:]
    if covariates and not node.op.term.graph.is_training(data_value(covariates[0], "X")):
        raise _changed_data("the covariates differ from those the graph was built on", n)
    known = kernel_array(data_value(model.rvs_to_values[rv], rv.name), np.int64)
    missing = missing_labels(model, rv)
    if known.size + (0 if missing is None else missing[0].size) != n:
        raise _changed_data(f"the labels have shape {known.shape}", n)
    if missing is None:
        return known
    y = np.full(n, -1, dtype=np.int64)
    keep = np.ones(y.size, dtype=bool)
    keep[missing[0]] = False
    y[keep] = known
    return y


def potts_parameter_rvs(model, term_rv) -> list:
    """The free variables a Potts term's beta and theta are functions of, directly or through
    Deterministics; not those that reach them only through another free variable's prior (a
    hyper-parameter's conditional does not involve the normalising constant)."""
    reached = set(ancestors(potts_node(term_rv).inputs[2:4], blockers=model.free_RVs))
    return [rv for rv in model.free_RVs if rv in reached]


def potts_parameters(model, term_rv) -> list:
    """Value variables of :func:`potts_parameter_rvs`: the block of the Potts steps."""
    return [model.rvs_to_values[rv] for rv in potts_parameter_rvs(model, term_rv)]
