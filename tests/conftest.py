import numpy as np
import pytest
from pytensor.compile.mode import Mode

VM_MODE = Mode(linker="vm", optimizer="fast_run")
"""PyTensor's default rewrites on its VM linker (C thunks where a compiler is found), whatever
``PYTENSOR_FLAGS`` say: the reference the numba backend is compared with (CI may run the suite
with ``linker=numba``, under which ``"FAST_RUN"`` is numba too)."""


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


def poison_past_ends(c):
    """Set a d-nn coupling's running sums past each row's end to NaN, in place: the table is
    written for ``r < ends[i]`` only and holds whatever the memory held beyond, which no kernel
    may read. Returns how many entries were poisoned."""
    past = np.arange(c[7].shape[1]) >= c[10][:, None]
    c[7][past] = np.nan
    return int(past.sum())
