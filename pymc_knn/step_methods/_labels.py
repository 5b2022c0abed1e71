"""Missing labels: a Gibbs step that imputes them, and a start for them.

When the observed labels of a ``PottsKNN`` or ``DistanceNN`` term have missing values (a masked
array, NaN), PyMC splits the term into ``<name>_observed`` and a free ``<name>_unobserved``. The
missing labels' full conditionals, given the parameters and the other labels, are those of the
Potts field: the normalising constant does not depend on the labels, so Gibbs updates of them are
exact. With the exchange step on the parameters (which sees the current imputed labels as data)
the chain targets the joint posterior of the parameters and the missing labels; this is the joint
prediction of Segerie and Peyrot (section 3.1), and the parameters' posterior integrates the
missing labels out.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np
import pymc as pm
from pymc.step_methods.arraystep import BlockedStep
from pymc.step_methods.compound import Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_value_vars_from_user_vars
from scipy.spatial import cKDTree

from ..distributions import missing_labels, potts_node, potts_terms, term_labels
from ..kernels.predictive import clamped_gibbs

__all__ = ["PottsGibbs", "impute_nearest"]


def impute_nearest(term, y) -> np.ndarray:
    """``y`` with each missing label (-1) set to that of the nearest labelled point (in the
    term's standardised covariates): a start for the missing labels."""
    y = np.array(y, dtype=np.int64)
    missing = y < 0
    if not missing.any():
        return y
    X = term.graph.X
    _, nearest = cKDTree(X[~missing]).query(X[missing])
    y[missing] = y[~missing][nearest]
    return y


@dataclass_state
class PottsGibbsState(StepMethodState):
    started: Any = field(default=False)


def _missing_part_of(model, var):
    """The observed Potts term whose missing labels ``var`` (the variable or its value variable)
    holds, or None."""
    value = model.rvs_to_values.get(var, var)
    for rv in potts_terms(model):
        found = missing_labels(model, rv)
        if found is not None and found[1] is value:
            return rv
    return None


class PottsGibbs(BlockedStep):
    """Gibbs sampling of the missing labels of a ``PottsKNN`` or ``DistanceNN`` term.

    Each draw runs ``sweeps`` systematic-scan sweeps over the missing labels, each drawn from
    its full conditional ``f(y_i | y_-i, beta, theta)`` at the current parameters; the observed
    labels stay fixed. Exact: the conditional involves no normalising constant. ``pm.sample``
    assigns it to ``<name>_unobserved``, the variable PyMC creates for missing labels (a masked
    array or NaN in ``observed``); :class:`~pymc_knn.Exchange` (or ``Moller``,
    ``PseudoLikelihoodMetropolis``) samples the parameters given all the labels.

    Parameters
    ----------
    vars : list, optional
        The missing-label variable (default: the model's only one).
    sweeps : int, default=1
        Sweeps over the missing labels per draw.
    model : pymc.Model, optional
    rng : optional
        Seed or generator (``pm.sample`` resets it per chain from ``random_seed``).

    Notes
    -----
    The first draw of a chain starts the missing labels from the nearest labelled point's
    label when they sit at PyMC's default initial value (class 0 everywhere).
    sample_stats: ``label_changes``, the number of missing labels the draw changed.

    References
    ----------
    .. [1] Segerie, C.-R. and Peyrot, E. Revisiting of Bayesian reassessment of nearest-neighbor
       classification. Report, Master MVA, ENS Paris-Saclay.
       Section 3.1 (Gibbs prediction: unlabelled points drawn jointly, the labelled ones fixed).
    .. [2] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 2.2, eq. 4 (the full conditionals) and section 2.3 (classes missing at random).

    Examples
    --------
    ``pm.sample()`` assigns it by itself to the missing labels; given explicitly, with two
    sweeps per draw:

    >>> import numpy as np
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> y_obs = np.ma.masked_array(y, mask=np.arange(250) % 10 == 0)   # 25 labels missing
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 4)
    ...     k = pm.DiscreteUniform("k", 1, pk.max_k(y[~y_obs.mask]))
    ...     labels = pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y_obs)
    ...     steps = [pk.Exchange([beta, k]), pk.PottsGibbs([model["y_unobserved"]], sweeps=2)]
    >>> idata = pm.sample(model=model, step=steps, random_seed=1)  # doctest: +SKIP
    >>> steps[1].vars
    [y_unobserved]

    ``pk.imputed_proba(idata)`` then gives the missing points' class probabilities.
    """

    name = "potts_gibbs"
    default_blocked = True
    _state_class = PottsGibbsState
    stats_dtypes_shapes = {"label_changes": (np.int64, [])}

    def __init__(
        self,
        vars=None,
        *,
        sweeps=1,
        model=None,
        rng=None,
        initial_point=None,
        blocked=True,
        compile_kwargs=None,
    ):
        from ._steps import _check_count

        model = pm.modelcontext(model)
        if vars is None:
            vars = [
                found[1]
                for rv in potts_terms(model)
                if (found := missing_labels(model, rv)) is not None
            ]
        vars = get_value_vars_from_user_vars(vars, model)
        if len(vars) != 1 or _missing_part_of(model, vars[0]) is None:
            raise ValueError(
                f"PottsGibbs samples the missing labels of one Potts term (the variable "
                f"'<name>_unobserved' PyMC creates for a masked or NaN label); got "
                f"{[v.name for v in vars]}"
            )
        self.vars = vars
        self.sweeps = _check_count(sweeps, "sweeps")
        term_rv = _missing_part_of(model, vars[0])
        node = potts_node(term_rv)
        self.term = node.op.term
        self.sites, _ = missing_labels(model, term_rv)
        self.y = term_labels(model, term_rv)
        self._start_labels = impute_nearest(self.term, self.y)[self.sites]
        params = model.replace_rvs_by_values(node.inputs[2:4])
        self._parameters = model.compile_fn(
            params, inputs=model.value_vars, on_unused_input="ignore", point_fn=True
        )
        self.rng = np.random.default_rng(rng)
        self.started = False

    def set_rng(self, rng):
        """PyMC's call at the start of every chain: a fresh chain."""
        super().set_rng(rng)
        self.started = False

    @staticmethod
    def competence(var, has_grad):
        from ._steps import current_model

        try:
            model = pm.modelcontext(None)
        except TypeError:
            model = current_model()
        if model is not None and _missing_part_of(model, var) is not None:
            return Competence.IDEAL
        return Competence.INCOMPATIBLE

    def step(self, point):
        name = self.vars[0].name
        current = np.asarray(point[name], dtype=np.int64)
        if not self.started:
            self.started = True
            if not current.any():  # PyMC's default start: class 0 everywhere
                current = self._start_labels
        beta, theta = (np.asarray(v).item() for v in self._parameters(point))
        if self.term.is_knn:
            theta = self.term.graph.check_k(theta)
        z = self.y.copy()
        z[self.sites] = current
        c = self.term.coupling(theta)
        clamped_gibbs(
            c.indptr,
            c.indices,
            c.data,
            z,
            self.sites,
            float(beta),
            self.term.class_weights,
            self.sweeps,
            self.rng,
        )
        new = z[self.sites]
        point = {**point, name: new.astype(self.vars[0].dtype)}
        return point, [{"label_changes": int(np.count_nonzero(new != current))}]
