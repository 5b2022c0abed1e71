"""numba kernel: monotone coupling from the past (Propp and Wilson) for two classes.

With ``G = 2`` and non-negative couplings the heat-bath update is monotone: more neighbours
labelled 1 never lower ``P(z_i = 1)``. The chains started from all-0 and all-1 sandwich every other
chain driven by the same random numbers; when they meet by time 0, their common state is an exact
draw. The uniform used at site ``i`` in the sweep at time ``-t`` is a counter-based hash of
``(seed, t, i)``, so going further into the past reuses the same randomness for the same times
without storing it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .energy import neighbour_counts
from .gibbs import heat_bath_two as _heat_bath
from .gibbs import weighted_degrees
from .signals import check_signals

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True)
def counter_uniform(seed, counter):
    """A uniform in ``[0, 1)`` from splitmix64 of ``seed + counter * golden``."""
    x = np.uint64(seed) + np.uint64(counter) * _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    x = x ^ (x >> np.uint64(31))
    return np.float64(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _start(indptr, indices, data, z, c1, value):
    z[:] = value
    c1[:] = 0.0
    if value == 1:
        for i in range(z.size):
            for p in range(indptr[i], indptr[i + 1]):
                c1[i] += data[p]


@njit(cache=True)
def cftp_attempt(indptr, indices, data, deg, beta, class_weights, T, seed, up, lo, c_up, c_lo):
    """The bounding chains from all-1 (``up``) and all-0 (``lo``) at time ``-T`` run to time 0
    with the uniforms of ``seed``; whether they met (``up`` then holds the exact draw)."""
    n = up.size
    a0 = class_weights[0]
    a1 = class_weights[1]
    _start(indptr, indices, data, up, c_up, 1)
    _start(indptr, indices, data, lo, c_lo, 0)
    n_diff = n
    for t in range(T, 0, -1):
        check_signals()
        for i in range(n):
            u = counter_uniform(seed, t * n + i)
            if n_diff == 0:
                _heat_bath(indptr, indices, data, up, c_up, deg, i, u, beta, a0, a1)
                continue
            was_diff = up[i] != lo[i]
            new_up = _heat_bath(indptr, indices, data, up, c_up, deg, i, u, beta, a0, a1)
            new_lo = _heat_bath(indptr, indices, data, lo, c_lo, deg, i, u, beta, a0, a1)
            n_diff += int(new_up != new_lo) - int(was_diff)
    return n_diff == 0


@njit(cache=True)
def cftp_fallback(indptr, indices, data, deg, z, beta, class_weights, T, seed):
    """The chain from ``z`` at time ``-T`` run to time 0 with the uniforms of ``seed``, in
    place: between the bounding chains, an approximate draw when they have not met."""
    c_z = neighbour_counts(indptr, indices, data, z, 2)[:, 1].copy()
    for t in range(T, 0, -1):
        check_signals()
        for i in range(z.size):
            u = counter_uniform(seed, t * z.size + i)
            _heat_bath(
                indptr, indices, data, z, c_z, deg, i, u, beta, class_weights[0], class_weights[1]
            )


def cftp_look_backs(max_sweeps: int) -> list[int]:
    """The look-backs of :func:`cftp_potts2`: 1, 2, 4, ..., then ``max_sweeps``."""
    out = [1]
    while out[-1] < max_sweeps:
        out.append(min(2 * out[-1], max_sweeps))
    return out


@njit(cache=True)
def cftp_potts2(indptr, indices, data, z, beta, class_weights, max_sweeps, seed):
    """Exact draw from the two-class Potts field into ``z``; returns ``(coalesced, sweeps)``.

    The look-back doubles, 1, 2, 4, ... sweeps, up to ``max_sweeps`` (the work bound: at most
    about ``4 * max_sweeps`` single-chain sweeps; :func:`cftp_attempt` each). ``sweeps`` is the
    look-back at which the bounding chains met. If they do not meet within ``max_sweeps``, ``z``
    is replaced by the state at time 0 of the chain started from the given ``z`` at time
    ``-max_sweeps`` with the same random numbers (it lies between the bounding chains), and
    ``coalesced`` is False: an approximate draw (:func:`cftp_fallback`).
    """
    n = z.size
    deg = weighted_degrees(indptr, data)
    up = np.empty(n, dtype=np.int64)
    lo = np.empty(n, dtype=np.int64)
    c_up = np.empty(n)
    c_lo = np.empty(n)
    T = 1
    while True:
        if cftp_attempt(
            indptr, indices, data, deg, beta, class_weights, T, seed, up, lo, c_up, c_lo
        ):
            z[:] = up
            return True, T
        if T >= max_sweeps:
            break
        T = min(2 * T, max_sweeps)
    cftp_fallback(indptr, indices, data, deg, z, beta, class_weights, T, seed)
    return False, T
