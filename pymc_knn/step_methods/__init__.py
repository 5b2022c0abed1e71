"""PyMC step methods for the parameters of a Potts likelihood term.

* :class:`Exchange` — the exchange algorithm (Friel and Pettitt 2011, section 4.2; Murray,
  Ghahramani and MacKay 2006): the intractable ``Z`` cancels against an auxiliary draw
  ``z' ~ f(. | beta', theta')``.
* :class:`Moller` — the auxiliary-variable method of Møller et al. (2006) as used by Cucala et al.
  (2009, section 3.4), with the acceptance ratio as corrected by Segerie and Peyrot (section 3.2):
  the auxiliary ``z`` is part of the chain's state, with a plug-in target ``q(z | theta_hat)``.
* :class:`PseudoLikelihoodMetropolis` — Metropolis on the pseudo-posterior (Cucala et al. 2009,
  section 3.2): fast, biased.
* :class:`PottsGibbs` — Gibbs sweeps over a term's missing labels (exact: their full conditionals
  involve no normalising constant).

Each is a thin adapter around one numba kernel, :func:`pymc_knn.kernels.mcmc.run_iterations`,
which runs many Metropolis-Hastings iterations per stored draw; the proposal, and the number of
iterations per draw, are tuned during ``pm.sample``'s tuning draws only
(:mod:`pymc_knn.step_methods._adaptation`).
"""

from ._adaptation import TARGET_ACCEPT, TARGET_TAU, integrated_time, iterations_for
from ._labels import PottsGibbs
from ._steps import (
    MAX_ITERATIONS_PER_DRAW,
    Exchange,
    Moller,
    PottsStep,
    PseudoLikelihoodMetropolis,
    current_model,
)

__all__ = [
    "MAX_ITERATIONS_PER_DRAW",
    "TARGET_ACCEPT",
    "TARGET_TAU",
    "Exchange",
    "Moller",
    "PottsGibbs",
    "PottsStep",
    "PseudoLikelihoodMetropolis",
    "current_model",
    "integrated_time",
    "iterations_for",
]
