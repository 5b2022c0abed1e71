import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


def small_problem(seed, n=8, p=2, G=2):
    """Covariates and labels of a small problem, with every class present."""
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, p))
    y = np.arange(n) % G
    r.shuffle(y)
    return X, y
