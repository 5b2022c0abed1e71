"""Checks of a fit, with a warning when they fall short.

PyMC's own check (``pm.sample(compute_convergence_checks=True)``, the default) logs its findings;
:func:`check_convergence` returns them as a table and raises a :class:`ConvergenceWarning`, which
the estimator and the command line use, so that a badly mixed fit is never silent.
:func:`check_prior_bounds` reads where the package's steps found the posterior pressing against a
bound of its prior, and raises a :class:`PriorBoundWarning`.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = [
    "BOUND_SDS",
    "MAX_R_HAT",
    "MIN_ESS_PER_CHAIN",
    "ConvergenceWarning",
    "PriorBoundWarning",
    "check_convergence",
    "check_prior_bounds",
]

MAX_R_HAT = 1.01
"""Largest acceptable rank-normalised split R-hat (Vehtari et al. 2021; PyMC's threshold)."""
MIN_ESS_PER_CHAIN = 100
"""Smallest acceptable bulk and tail effective sample size, per chain (PyMC's threshold)."""
BOUND_SDS = 1.6
"""A bound of the prior of beta, k or sigma within this many sds of the mean of a chain's final
tuning draws cuts the posterior: warned about by the step (:class:`PriorBoundWarning`). A normal
posterior cut one sd from its mode, losing 16% of its mass, has its mean 1.6 of its (cut) sds
from the bound; cut at its mode, 1.3; the nearer the mode to the bound, the smaller. Iris with
equal neighbours and ``beta ~ U(0, 4)`` sits at 1.85-1.9 (its mode 1.5 sds from the bound, 7% of a
normal's mass beyond it): not warned."""


class ConvergenceWarning(_SklearnConvergenceWarning):
    """The chains have not converged or mixed enough for their summaries to be trusted.

    A subclass of scikit-learn's :class:`sklearn.exceptions.ConvergenceWarning`, so the filters
    of either catch it. :func:`check_convergence` (hence :class:`~pymc_knn.BayesianKNNClassifier`'s
    ``fit``) emits it when the rank-normalised R-hat of a variable exceeds :data:`MAX_R_HAT` or
    its bulk or tail effective sample size falls below :data:`MIN_ESS_PER_CHAIN` per chain, the
    thresholds of Vehtari et al. (2021) that PyMC uses.

    See Also
    --------
    check_convergence : the table of diagnostics behind the warning.

    References
    ----------
    .. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C. (2021).
       Rank-normalization, folding, and localization: an improved R-hat for assessing
       convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

    Examples
    --------
    Four chains stuck at four different levels:

    >>> import warnings
    >>> import arviz as az
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> rng = np.random.default_rng(0)
    >>> draws = rng.normal(0, 0.1, size=(4, 500)) + np.arange(4)[:, None]
    >>> idata = az.from_dict(posterior={"beta": draws})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     table = pk.check_convergence(idata)
    >>> caught[0].category is pk.ConvergenceWarning
    True
    >>> print(caught[0].message)
    the chains have not converged or mixed enough (beta: r_hat ... > 1.01; ...

    Like any warning, it can be made an error:

    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", pk.ConvergenceWarning)
    ...     try:
    ...         table = pk.check_convergence(idata)
    ...     except pk.ConvergenceWarning:
    ...         print("not converged")
    not converged
    """


def check_convergence(idata, var_names=None, *, warn: bool = True):
    """R-hat and effective sample sizes of the posterior, checked against PyMC's thresholds.

    Parameters
    ----------
    idata : arviz.InferenceData
        With a ``posterior`` group.
    var_names : list of str, optional
        Default: every variable of the posterior.
    warn : bool, default=True
        Emit a :class:`ConvergenceWarning` naming the variables that fall short.

    Returns
    -------
    pandas.DataFrame
        ``az.summary(..., kind="diagnostics", round_to="none")``: ``mcse_mean``, ``mcse_sd``,
        ``ess_bulk``, ``ess_tail`` and ``r_hat`` per variable (R-hat is NaN with one chain).
        A variable that never moves in any chain (``k`` fixed at one value by its posterior) is
        a point mass: its NaN R-hat and ESS raise no warning.

    See Also
    --------
    ConvergenceWarning : what falls short, and how to silence or raise it.

    Notes
    -----
    The thresholds are :data:`MAX_R_HAT` (1.01) for the rank-normalised split R-hat and
    :data:`MIN_ESS_PER_CHAIN` (100) per chain for the bulk and tail effective sample sizes, as
    recommended by Vehtari et al. (2021) and applied by ``pm.sample``.

    References
    ----------
    .. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C. (2021).
       Rank-normalization, folding, and localization: an improved R-hat for assessing
       convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

    Examples
    --------
    Four well-mixed chains (independent draws stand in for ``pm.sample``'s):

    >>> import arviz as az
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> rng = np.random.default_rng(0)
    >>> idata = az.from_dict(posterior={"beta": rng.normal(1.5, 0.2, size=(4, 500))})
    >>> table = pk.check_convergence(idata)
    >>> table.columns.tolist()
    ['mcse_mean', 'mcse_sd', 'ess_bulk', 'ess_tail', 'r_hat']
    >>> bool(table.loc["beta", "r_hat"] < 1.01), bool(table.loc["beta", "ess_bulk"] > 400)
    (True, True)

    After ``idata = pm.sample(...)``, ``pk.check_convergence(idata, ["beta", "k"])`` checks the
    parameters of the Potts term only.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Shape validation failed")
        table = az.summary(idata, var_names=var_names, kind="diagnostics", round_to="none")
    chains = idata.posterior.sizes["chain"]
    min_ess = MIN_ESS_PER_CHAIN * chains
    post = idata.posterior
    fixed = {v for v in post.data_vars if post[v].size and np.ptp(post[v].values) == 0}
    problems = []
    for name, row in table.iterrows():
        if name.split("[")[0] in fixed:
            continue
        if np.isfinite(row["r_hat"]) and row["r_hat"] > MAX_R_HAT:
            problems.append(f"{name}: r_hat {row['r_hat']:.3f} > {MAX_R_HAT}")
        for kind in ("ess_bulk", "ess_tail"):
            if not row[kind] >= min_ess:
                problems.append(f"{name}: {kind} {row[kind]:.0f} < {min_ess}")
    if warn and problems:
        warnings.warn(
            "the chains have not converged or mixed enough (" + "; ".join(problems) + f"; "
            f"{chains} chain(s)). Draw more (draws=, chains=), or look at the trace "
            "(az.plot_trace) before trusting the results",
            ConvergenceWarning,
            stacklevel=2,
        )
    return table


class PriorBoundWarning(UserWarning):
    """The posterior of a Potts parameter presses against a bound of its prior.

    The package's steps emit it at the end of tuning, per chain, when a bound of the prior of
    ``beta``, ``k`` or ``sigma`` lies within :data:`BOUND_SDS` sds of the mean of the final
    tuning draws (for ``k``, or at the next value), or the draws fill the prior's range (it has
    no mass half an sd beyond their farthest on either side), where the model itself would go
    on: the prior, not the data, ends the posterior there. Bounds of the model itself are not warned
    about: ``beta >= 0``, ``beta <= beta_max`` when the likelihood is given one, ``1 <= k`` up
    to the smallest class size, ``sigma > 0``. A bound that is a belief needs no change;
    otherwise widen the prior. ``beta`` may go past :func:`pymc_knn.beta_max`, where the field
    nears freezing, when the labels agree with their neighbours almost everywhere (scikit-learn's
    digits: 4.28 +- 0.12 where ``pk.beta_max`` gives 3.3); the auxiliary draws slow down there.

    With ``cores > 1`` the steps run in PyMC's worker processes, whose warnings reach a terminal
    but not a notebook: :func:`check_prior_bounds` raises it again from ``sample_stats``.
    """


def check_prior_bounds(idata, *, warn: bool = True) -> dict[str, list[int]]:
    """Where the package's steps found the posterior pressing against a bound of its prior.

    Parameters
    ----------
    idata : arviz.InferenceData
        From ``pm.sample`` with one of the package's steps (the ``prior_bound`` sample stat).
    warn : bool, default=True
        Emit a :class:`PriorBoundWarning` naming the bounds and chains.

    Returns
    -------
    dict
        ``"beta upper"``, ``"k upper"``, ``"sigma lower"``... to the chains that found it; empty
        when none did, or when ``idata`` has no ``prior_bound`` stat.

    Examples
    --------
    >>> import arviz as az
    >>> import numpy as np
    >>> import pymc_knn as pk
    >>> bound = np.full((2, 3), "", dtype="U32")
    >>> bound[1] = "beta upper"
    >>> idata = az.from_dict(sample_stats={"prior_bound": bound})
    >>> pk.check_prior_bounds(idata, warn=False)
    {'beta upper': [1]}
    """
    stats = getattr(idata, "sample_stats", None)
    found: dict[str, list[int]] = {}
    for name, stat in ({} if stats is None else stats.data_vars).items():
        if not str(name).endswith("prior_bound"):  # sampler_0__prior_bound in a compound step
            continue
        values = np.asarray(stat.values)
        for chain in range(values.shape[0]):
            for text in set(values[chain].ravel().tolist()) - {""}:
                for bound in str(text).split(", "):
                    if chain not in found.setdefault(bound, []):
                        found[bound].append(chain)
    if warn and found:
        where = "; ".join(f"{bound} bound in chain(s) {chains}" for bound, chains in found.items())
        warnings.warn(
            f"the posterior presses against its prior ({where}): the prior, not the data, ends "
            "it there. If that bound is not a belief, widen the prior (for beta: past pk.beta_max, "
            "where the field nears freezing, auxiliary draws slow down)",
            PriorBoundWarning,
            stacklevel=2,
        )
    return found
