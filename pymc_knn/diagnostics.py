"""Convergence diagnostics of a fit, with a warning when they fall short.

PyMC's own check (``pm.sample(compute_convergence_checks=True)``, the default) logs its findings;
:func:`check_convergence` returns them as a table and raises a :class:`ConvergenceWarning`, which
the estimator and the command line use, so that a badly mixed fit is never silent.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = ["MAX_R_HAT", "MIN_ESS_PER_CHAIN", "ConvergenceWarning", "check_convergence"]

MAX_R_HAT = 1.01
"""Largest acceptable rank-normalised split R-hat (Vehtari et al. 2021; PyMC's threshold)."""
MIN_ESS_PER_CHAIN = 100
"""Smallest acceptable bulk and tail effective sample size, per chain (PyMC's threshold)."""


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
