"""The bridged exchange ratio (Murray et al. 2006, section 5) against enumeration.

With ``z_0`` an exact draw from ``f(. | theta1)`` and each bridging sweep leaving its field
invariant, ``exp`` of the bridged term is an unbiased estimate of ``Z(theta0) / Z(theta1)``
(annealed importance sampling): that is what makes the exchange algorithm with bridging exact.
On 8 points every ``Z`` is a finite sum.
"""

import numpy as np
import pytest
from scipy.special import logsumexp

import pymc_knn as pk
from pymc_knn.kernels.energy import energy
from pymc_knn.kernels.enumeration import decode_labelling, state_energies
from pymc_knn.kernels.mcmc import bridged_log_ratio
from pymc_knn.kernels.swendsen_wang import swendsen_wang_sweeps

from conftest import small_problem

DRAWS = 20000
CASES = {  # (neighbours, class weights, (beta0, k0), (beta1, k1))
    "symmetrised": ("symmetrised", [1.0, 1.0], (0.9, 2), (1.3, 4)),
    "equal, 3 classes": ("equal", [1.0, 1.0, 1.0], (1.6, 3), (1.1, 1)),
    "equal, 3 weighted classes": ("equal", [1.0, 0.6, 1.4], (1.6, 3), (1.1, 1)),
}


def _problem(case):
    neighbours, a, theta0, theta1 = CASES[case]
    a = np.asarray(a)
    X, _ = small_problem(3, n=8, G=a.size)
    g = pk.KNNGraph(X, k_max=5, neighbours=neighbours)

    def edges(k):
        c = g.coupling(k)
        return c.src, c.dst, c.weight, c.uniform_weight

    c0, c1 = edges(theta0[1]), edges(theta1[1])
    log_q0, log_q1 = (
        b * state_energies(*c[:3], a, 8, a.size) for b, c in ((theta0[0], c0), (theta1[0], c1))
    )
    exact = np.exp(logsumexp(log_q0) - logsumexp(log_q1))
    return a, c0, c1, theta0[0], theta1[0], exact, np.exp(log_q1 - logsumexp(log_q1))


def _estimates(ratio, case, n_bridge, seed=1):
    a, c0, c1, b0, b1, exact, p1 = _problem(case)
    rng = np.random.default_rng(seed)
    states = rng.choice(p1.size, size=DRAWS, p=p1)  # exact draws from f(. | theta1)
    out = np.empty(DRAWS)
    z = np.empty(8, dtype=np.int64)
    for i, s in enumerate(states):
        decode_labelling(s, a.size, z)
        out[i] = ratio(c0, c1, b0, b1, z, n_bridge, a, rng)
    return out, exact


def _z_score(log_terms, exact):
    w = np.exp(log_terms)
    return (w.mean() - exact) / (w.std() / np.sqrt(w.size))


def shifted_schedule(c0, c1, beta0, beta1, z, n_bridge, a, rng):
    """A broken bridge: each sweep runs in the field before its own (``t_{s-1}``), so the
    draws lag one field behind the weights taken on them."""
    src, dst = np.concatenate([c0[0], c1[0]]), np.concatenate([c0[1], c1[1]])
    total = 0.0
    for s in range(n_bridge + 1):
        total += beta0 * energy(*c0[:3], z, a) - beta1 * energy(*c1[:3], z, a)
        if s == n_bridge:
            break
        t = s / (n_bridge + 1)
        w = np.concatenate([t * beta0 * c0[2], (1 - t) * beta1 * c1[2]])
        swendsen_wang_sweeps(src, dst, w, 0.0, z, 1.0, a, 1, rng)
    return total / (n_bridge + 1)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("n_bridge", [0, 3])
def test_the_bridged_ratio_is_unbiased(case, n_bridge):
    terms, exact = _estimates(bridged_log_ratio, case, n_bridge)
    assert abs(_z_score(terms, exact)) < 4


def test_bridging_divides_the_noise():
    plain, _ = _estimates(bridged_log_ratio, "symmetrised", 0)
    bridged, _ = _estimates(bridged_log_ratio, "symmetrised", 8)
    assert bridged.var() < 0.5 * plain.var()


def test_the_check_rejects_a_shifted_schedule():
    """Negative control: the lagging bridge is biased (measured: z = -25 at 3 fields)."""
    terms, exact = _estimates(shifted_schedule, "symmetrised", 3)
    assert abs(_z_score(terms, exact)) > 4
