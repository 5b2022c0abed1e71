"""Label draws of a Potts term for PyMC's forward sampling, and the count of approximate ones.

``pm.sample_prior_predictive``, ``pm.sample_posterior_predictive`` and ``pm.draw`` call the
term's ``rng_fn`` once per draw. Each draw is a fresh field ``z ~ f(. | beta, theta)`` over the
term's points (:func:`draw_labels`). With two classes it is exact by coupling from the past when
that coalesces within a bound; otherwise it falls back to Swendsen-Wang sweeps, which mix quickly
where coupling from the past is slow (at and above the field's critical beta). The fall-backs
are counted over the whole PyMC call and reported by one warning at its last draw
(:func:`count_fallbacks`).

If ``C`` is the event that coupling from the past coalesces within the bound, the law of a draw
is ``P(C) pi(. | C) + P(not C) Q``, with ``pi(. | C)`` the law of the unbounded algorithm's
output on ``C`` and ``Q`` that of the fall-back, so its total-variation distance from the Potts
law is at most ``P(not C)``, which the fraction of fall-backs estimates.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from types import FrameType

import numpy as np

from .terms import PottsTerm

# PyMC's forward-sampling functions, each with its local variable holding the number of times it
# calls the compiled function: pm.sample_posterior_predictive loops `for idx in range(samples)`.
_FORWARD_MODULE = "pymc.sampling.forward"
_FORWARD_CALLS = {"sample_prior_predictive": "draws", "sample_posterior_predictive": "samples",
                  "draw": "draws"}
_LIBRARIES = {"pymc", "pymc_knn", "pytensor", "numpy"}


def draw_labels(term: PottsTerm, beta: float, theta, rng, cftp_sweeps: int, sweeps: int):
    """One field ``z ~ f(. | beta, theta)`` from uniformly random labels: ``(z, fell_back)``.

    Two classes: coupling from the past, exact if it coalesces within ``cftp_sweeps`` sweeps of
    look-back; if not (``fell_back``), the chain it ran from the random labels is continued by
    ``sweeps`` Swendsen-Wang sweeps. More classes (no exact sampler): ``sweeps`` Swendsen-Wang
    sweeps, never counted as a fall-back.
    """
    if not beta >= 0:
        raise ValueError(f"beta must be >= 0 for a draw of the labels, got {beta!r}: give beta a "
                         "prior on [0, inf), e.g. pm.Uniform('beta', 0, 4)")
    if term.is_knn:
        theta = term.graph.check_k(theta)
    z = rng.integers(0, term.n_classes, term.n)
    if term.n_classes == 2:
        z, _, exact = term.draw(beta, theta, z, rng, "cftp", max_sweeps=cftp_sweeps)
        if exact:
            return z, False
    z, _, _ = term.draw(beta, theta, z, rng, "swendsen_wang", sweeps)
    return z, term.n_classes == 2


@dataclass
class _Tally:
    """Draws and fall-backs of one term over one PyMC call (``frame``: that call's frame)."""

    frame: FrameType | None
    calls: int = 0
    draws: int = 0
    fell_back: int = 0
    beta_lo: float = np.inf
    beta_hi: float = -np.inf

    def add(self, n_draws: int, betas: np.ndarray) -> None:
        self.calls += 1
        self.draws += n_draws
        self.fell_back += betas.size
        if betas.size:
            self.beta_lo = min(self.beta_lo, float(betas.min()))
            self.beta_hi = max(self.beta_hi, float(betas.max()))


_TALLIES: dict[tuple[int, int], _Tally] = {}


def _stack() -> list[FrameType]:
    frames, f = [], sys._getframe(1)
    while f is not None:
        frames.append(f)
        f = f.f_back
    return frames


def _forward_call(stack: list[FrameType]):
    """The frame of the PyMC forward-sampling call running, and how many times it calls the
    compiled function; ``(None, 1)`` outside one."""
    for f in stack:
        local = _FORWARD_CALLS.get(f.f_code.co_name)
        if local and f.f_globals.get("__name__") == _FORWARD_MODULE:
            total = f.f_locals.get(local)
            if isinstance(total, int | np.integer) and total > 0:
                return f, int(total)
            break
    return None, 1


def count_fallbacks(name: str, term: PottsTerm, n_draws: int, betas, cftp_sweeps: int,
                    sweeps: int) -> None:
    """Count one ``rng_fn`` call's ``n_draws`` draws, of which those at ``betas`` fell back.

    Inside a PyMC forward-sampling call the counts add up over its calls of ``rng_fn`` and one
    ``RuntimeWarning`` at the last says how many of how many draws fell back; elsewhere (a
    compiled function called directly) each call that has fall-backs warns for itself.
    """
    stack = _stack()
    live = {id(f) for f in stack}
    for key in [key for key, t in _TALLIES.items() if id(t.frame) not in live]:
        del _TALLIES[key]  # an interrupted call's: it never reached its last draw
    frame, n_calls = _forward_call(stack)
    key = (id(frame), id(term))
    tally = _TALLIES.pop(key, None) or _Tally(frame)
    tally.add(n_draws, np.asarray(betas, dtype=float).ravel())
    if tally.calls < n_calls:
        _TALLIES[key] = tally  # holding the frame keeps its id from being reused meanwhile
    elif tally.fell_back:
        _warn(name, tally, cftp_sweeps, sweeps)


def _warn(name: str, tally: _Tally, cftp_sweeps: int, sweeps: int) -> None:
    span = (f"beta = {tally.beta_lo:.3g}" if tally.beta_lo == tally.beta_hi
            else f"beta from {tally.beta_lo:.3g} to {tally.beta_hi:.3g}")
    warnings.warn(
        f"{name}: {tally.fell_back} of {tally.draws} draws of the labels are approximate: for "
        f"them ({span}) coupling from the past did not coalesce within {cftp_sweeps} sweeps, "
        f"as expected near and above the field's critical beta, so each is the state after "
        f"{sweeps} further Swendsen-Wang sweeps; the other draws are exact. Raising "
        "pymc_knn.distributions.PREDICTIVE_CFTP_SWEEPS makes more of them exact, at a cost "
        "proportional to it (see docs/prediction.md, 'Prior and posterior predictive draws').",
        RuntimeWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """``stacklevel`` of the first frame outside PyMC, PyTensor, NumPy and this package, for a
    ``warnings.warn`` in the function calling this one: the user's line."""
    level, f = 1, sys._getframe(1)
    while f is not None and str(f.f_globals.get("__name__")).split(".")[0] in _LIBRARIES:
        f = f.f_back
        level += 1
    return level if f is not None else 1
