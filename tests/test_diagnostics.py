"""pk.check_convergence: R-hat and ESS against PyMC's thresholds, with a warning when short."""

import warnings

import arviz as az
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import pymc_knn as pk


def idata(**posterior):
    return az.from_dict(posterior=posterior)


def test_well_mixed_chains_pass_quietly(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.ConvergenceWarning)
        table = pk.check_convergence(idata(beta=rng.normal(size=(4, 1000))))
    assert table.loc["beta", "r_hat"] < 1.01 and table.loc["beta", "ess_bulk"] > 2000


def test_chains_that_disagree_are_named(rng):
    stuck = rng.normal(size=(4, 1000)) + np.array([[0.0], [0.0], [0.0], [3.0]])
    with pytest.warns(pk.ConvergenceWarning, match=r"k: r_hat .* > 1.01"):
        pk.check_convergence(idata(beta=rng.normal(size=(4, 1000)), k=stuck))


def test_a_slowly_mixing_chain_is_flagged_by_its_ess(rng):
    walk = np.cumsum(rng.normal(size=(4, 1000)), axis=1) * 0.01
    with pytest.warns(pk.ConvergenceWarning, match="ess_bulk"):
        pk.check_convergence(idata(beta=walk))


def test_a_point_mass_is_not_a_failure(rng):
    """glass's equal model: k = 3 in every draw of every chain; R-hat and ESS are NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.ConvergenceWarning)
        table = pk.check_convergence(
            idata(beta=rng.normal(size=(4, 1000)), k=np.full((4, 1000), 3))
        )
    assert np.isnan(table.loc["k", "r_hat"])


def test_warn_false_returns_the_table_silently(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.ConvergenceWarning)
        table = pk.check_convergence(
            idata(beta=np.cumsum(rng.normal(size=(2, 200)), axis=1)), warn=False
        )
    assert set(table.columns) >= {"r_hat", "ess_bulk", "ess_tail"}
    assert issubclass(pk.ConvergenceWarning, ConvergenceWarning)  # scikit-learn's filters apply
