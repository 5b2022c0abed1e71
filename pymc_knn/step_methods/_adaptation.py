"""Tuning of the Potts steps, during PyMC's tuning draws only.

What is tuned, per chain:

* the step of the beta move, by Robbins-Monro on the acceptance of beta moves alone;
* the radius of the ``k`` move (or the sd of the ``sigma`` move), by Robbins-Monro on the
  acceptance of graph moves alone;
* in windows of doubling length (counted in iterations; the first, which may lie on the chain's
  way to the posterior, fits only the jump density), the ridge beta follows when the graph
  moves (the regression of beta's coordinates on ``k`` or ``sigma``), the density the jump move
  draws ``k`` or ``sigma`` from (a kernel density estimate of the window's draws) and, when several
  coordinates move with beta, the shape of the beta move (the Cholesky factor of their
  covariance given the graph coordinates, scaled to unit determinant: adaptive Metropolis,
  Haario et al. 2001) and the normal the beta jump draws beta from (its regression on the graph
  coordinates and the residuals' covariance);
* the mean number of iterations per stored draw (each draw takes its floor or ceiling at random),
  from the integrated autocorrelation time measured in the latest window (of each coordinate and
  of its tail indicators; the first window doubles them), so that a stored draw is worth about
  ``1 / TARGET_TAU`` of an independent one; the time read off the final rows counts up to a
  ``TRUSTED_TIMES``-th of their number, and where they never saw the (discrete) graph
  coordinates move though departures were due (``UNSEEN_DEPARTURES``), their time is bounded
  from the rate of those;
* for the exchange algorithm, the bridging of the ``k`` or ``sigma`` move's ratio, from the
  variance of its noise measured by pairs of independent estimates, so that the variance is
  about ``TARGET_NOISE`` whatever the move's size and wherever it goes (one noise per region of
  the graph parameter: :data:`pymc_knn.kernels.mcmc.BRIDGE_REGION`), and the share of graph
  and beta moves take about equal time (half each when nothing is bridged);
* whether the graph moves are futile where the chain sits (the graph coordinates sat still
  through a window in which less than a tenth of a transition was expected: ``k`` a point mass
  of the posterior, as on digits): from there graph moves then take ``FUTILE_TIME`` of the
  time, elsewhere ``AWAY_TIME``, each graph move's Hastings ratio carrying the two
  probabilities;
* at the end of tuning, the chain's home: a value of the (discrete) graph coordinates holding
  ``HOME_MASS`` of the final tuning draws, where graph moves keep the balanced share, while
  from anywhere else they take ``AWAY_TIME`` of the time, so that rare excursions end soon.

When tuning ends everything is fixed, so the chain after tuning is one fixed Metropolis-Hastings
kernel, repeated: its stationary law is the posterior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..kernels.mcmc import (
    BETA_JUMP,
    BETA_MOVE,
    GRAPH_MOVE,
    JUMP_MOVE,
    NO_PLATEAU,
    PLATEAU_MOVE,
    WIDE_MOVE,
    Proposal,
    bridge_region,
)

TARGET_ACCEPT = 0.3
"""Default acceptance rate aimed at by each move type (docs/inference.md)."""
TARGET_TAU = 3.0
"""Integrated autocorrelation time aimed at between stored draws: an ESS of a third of the draws,
so PyMC's default 1000 draws give about 330 per chain, 670 with its two chains on two cores."""
FIRST_WINDOW = 200
"""Iterations in the first adaptation window; each later window is twice as long."""
TAIL_PROBS = (0.05, 0.95)
"""Quantiles whose indicators the iterations per draw must also mix (ArviZ's ``ess_tail``)."""
WIDE_FACTOR = 4.0
"""The wide move's step, in steps of the graph move."""
P_WIDE = 0.25
"""Probability that a graph move is a wide one, before the first window has fitted the jumps'
density (measured on wine, whose k posterior has a second mode at k = 8 behind a valley at 6-7:
see docs/inference.md)."""
P_JUMP = 0.5
"""Probability that a graph move is a jump, once the first window has closed. Measured
on the ball kernel's multimodal sigma (wine): the integrated time of sigma per iteration 106 with
a quarter of the graph moves jumps, 68 with half, 54 with three quarters; on k (wine, glass,
crabs) half gives 10-25% shorter times than a quarter. See docs/inference.md."""
P_BETA_JUMP = 0.5
"""Probability that a beta move is a beta jump, once a window has fitted their density."""
BETA_JUMP_SCALE = 1.2
"""Width of the beta jump density's main normal, in sds of beta given the graph coordinates in
the tuning draws: a little wider, as an independence proposal should be (and the sds of a
short window's autocorrelated draws are noisy)."""
PLATEAU_MOVES = 0.5
"""Probability of a plateau move from a state on the ball kernel's plateau below the data's
smallest positive distance (:mod:`pymc_knn.kernels.mcmc`). On 400 points on the 25 sites of a
grid ("ties"), whose plateau a chain of the fit at seed 2 had stayed on for 133 draws, a tuned
kernel left it from ``sigma`` 0.1 in 26 iterations in the median and 132 at most, against 130
and 1,133 without the move; the three seeds converge (docs/inference.md, "The ball's
plateau"). A quarter left it sooner (19, at most 97) but its fits took 38.5-47.5 s against
30.5-39.8, converged as well. Off the plateau the move is never chosen: a chain that never
reaches it runs as without it, draw for draw."""
JUMP_CENTRES = 24
"""Components of the jump density at the quantiles of the window's draws of ``k`` or ``sigma``."""
JUMP_DEFENSIVE = 0.2
"""Weight of the jump density's broad component (a normal around the draws' median, as wide as
half their range or twice their sd), so that the density is not thinner than the posterior in
its tails: a mode or a plateau the tuning draws barely visited is still proposed now and then.
An independence proposal thinner than the posterior in a region makes a chain that got there
stay: with 0.1, Ripley's ball kernel had a mode of 1.5% of the mass (``sigma`` about 0.38, behind
a valley) where the posterior was 2-9 times the density fitted to a chain's draws, and chains
spent hundreds of iterations there (see docs/inference.md, "The jump density's broad component").
For ``k`` it is at least as wide as the wide move's reach (``WIDE_FACTOR`` radii): on class20
(scikit-learn's ``make_classification``) a chain whose tuning draws sat at ``k`` 5-7 had a
component of width 1, which put a tenth of the posterior's mass on ``k = 3`` (a second mode,
behind a valley at 5), and jumps from there back were accepted 4% of the time (R-hat of ``k``
1.02).
(Not heavier-tailed: a d-nn table is widened to cover the sigma the tuning draws visited, and a
proposal far beyond costs a coupling of the kept model there.)"""
JUMP_REACH = 0.05
"""Least width of the jump density's broad component for a continuous graph coordinate
(``sigma``), on its transformed scale (about ``log sigma``: 5% of ``sigma``). It acts only where
the tuning draws spread less (twice their sd and half their range under it: in the benchmarks
the ball kernel's narrow posteriors), and there a nearby mode the draws missed is proposed: on
Hastie's set (1,000 points in 10-d, the ball kernel) ``sigma`` has 12% of its mass 0.03-0.07
away from a spike of sd 0.0015, and a chain whose tuning never saw it had a broad component of
width 0.003 (R-hat 1.046 at seed 2). A normal of width ``w`` proposes a mode at distance ``d``
best when ``w = d``, and 0.05 keeps at least 0.45 of that best from ``d = 0.02`` to ``0.1``.
Its cost is bounded: broad proposals keep their share of the jumps whatever their width, and
each costs what any jump costs, so where ``sigma`` has one mode it loses at most that share of
them (docs/inference.md, "The jump density's broad component")."""
MIN_ACCEPTED = 10
"""Accepted moves a window needs before its covariance is used."""
MAX_LOG_SCALE = 10.0
"""Bound on the log of the continuous step (value scale), for a posterior flat to the horizon."""
TARGET_NOISE = 4.0
"""Variance (nats^2) of a graph move's exchange-ratio noise aimed at by bridging: a move whose
noise would be above it (by half, ``round`` of the fields) is bridged. With noise of variance
``s^2`` a move is accepted about ``2 Phi(-s / 2)`` as often as without (0.62 at 1, 0.32 at 4,
0.05 at 16), and bridging a noise of ``v`` down to ``s^2`` costs about ``v / s^2`` fields, a few
auxiliary sweeps each: acceptance per unit of cost is best near ``s^2 = 4-6``."""
SHARE_BOUNDS = (0.05, 0.95)
"""Bounds on the share of graph moves that evens the integrated times
(:meth:`Adaptation._balance_shares`)."""
FUTILE_TRANSITIONS = 0.1
"""Expected transitions of the graph coordinates (the sum of the graph moves' acceptance
probabilities) below which a window in which they never moved marks their moves from there
futile."""
FUTILE_TIME = 0.05
"""Share of the time given to graph moves from where they are futile (not 0: the chain must stay
able to leave). On digits ``k`` sits at 3 and every move to 2 or 4 is accepted with probability
below 1e-50, each after an auxiliary draw and 128 bridging fields: the time-balanced share
spent half the run on them. From any other value of the graph coordinates graph moves take
``AWAY_TIME``, so a chain that stepped away from a point mass is soon offered the way back."""
HOME_MASS = 0.9
"""Share of the final tuning rows at one value of the graph coordinates (all discrete) that makes
it the chain's home: from anywhere else graph moves then take ``AWAY_TIME`` of the time."""
AWAY_TIME = 0.8
"""Share of the time given to graph moves away from the home value (``HOME_MASS``), so that a
rare excursion ends within a few draws. Where ``k``'s posterior is nearly a point (shells3: 99%
at ``k = 4``) the tail ESS of ``k`` is the number of excursions, each as long as the way back
takes: at the balanced share of bridged moves (10% of the iterations there) one excursion
lasted 27 draws, and ESS_tail(k) was 165 of 4000 (docs/inference.md, "Excursions from home")."""
UNSEEN_DEPARTURES = 2.0
"""Expected departures (the sum of the graph moves' acceptance probabilities) from a value of the
(discrete) graph coordinates that the final tuning rows never left, above which their integrated
time is bounded from the departures' rate rather than read from beta alone (:meth:`Adaptation.
_unseen_departures_tau`). Seeing none of ``T`` expected has probability about ``exp(-T)``: below
2 (0.14) a constant series is what a short stay predicts (shells3's chains: 0.4-0.6 expected,
``k`` 99% at one value) and bounds there cost a fourfold wall for nothing; class20's chain whose
last 2,354 rows sat at ``k = 6`` expected 2.86 and mixed ``k`` at an ESS of 66 without one."""
TRUSTED_TIMES = 50
"""Integrated times a block of tuning rows must span for its estimate of the time to be taken at
face value: a block of ``L`` rows sets the iterations from at most ``L / TRUSTED_TIMES`` (emcee's
``tol``; Sokal 1997). A longer estimate comes from a few long stays, and its size is mostly
chance: on 400 points on 25 grid sites ("ties", equal neighbours, seed 2) one chain's final 6,313
rows held one stay of about 2,800 at ``k`` 14-18 (the other chains made several shorter ones) and
read ``k``'s time as 748, 8 times in the block; it chose 259 iterations a draw where the others
chose 10-16, and the fit took 81.5 s (27.5 s with the bound, converged as before)."""
NOISE_PAIRS = 20
"""Pairs of estimates behind each update of the bridging."""
REGION_MEMORY = 4 * NOISE_PAIRS
"""Pairs of estimates a region's noise is averaged over (older pairs weigh less, by
``1 - 1 / REGION_MEMORY`` each), as the pooled noise's moving average of batches is."""
REGION_SMOOTH = 2.0
"""Sd, in regions, of the normal weights by which a region's estimate of the noise takes in its
neighbours' pairs (up to three sds away): a region is seen a few times only (on ``apart``'s
gaussian d-nn term 1-10 pairs each over sigma's 90 regions), and the noise changes slowly but
where the classes' graphs come apart."""
REGION_PRIOR = 1.0
"""Weight, in pairs, of the pooled noise in a region's estimate: a region first reached is
bridged as the pooled noise asks, not left unbridged."""
MAX_BRIDGE = 128
"""Default bound on the intermediate fields of a bridged ``k`` move."""
AUX_SWEEPS = 10
"""Sweeps of an approximate auxiliary draw before (and at least after) tuning them."""
MAX_AUX_SWEEPS = 1024
"""Most sweeps the tuning gives an approximate auxiliary draw."""
RELAX_CHAINS = 64
"""Auxiliary chains run by each relaxation check."""
FIRST_RELAX_CHAINS = 16
"""Auxiliary chains run by the first window's check, which only sets the second window's sweeps
(the second window checks them afresh with ``RELAX_CHAINS``): at 10^5 points it cost about 70 s
a chain with 64."""
RELAX_QUANTILE = 0.95
"""Quantile of beta in the latest window at which relaxation is checked: the field orders, and
the auxiliary chains relax slowest, toward the top of beta's posterior."""
RELAX_TOL = 0.1
"""Largest energy bias an auxiliary draw may keep, in stationary sds of the energy. At fixed
``theta`` the posterior of ``beta`` has sd ``1 / sd(E)`` and the exchange ratio is linear in the
auxiliary energy, so a bias ``b`` of the draws' energy moves beta's posterior by about
``b / sd(E)`` of its sds."""

SPREAD_TOL = 0.2
"""Largest share of the energy's stationary variance that draws from a tuned start may lack.
All chains from one start share its slow components until its sweeps outlast their time, and
an exchange ratio whose auxiliary energy varies less than the stationary law's narrows the
posterior: in a Gaussian model of beta's exchange moves, draws with 0.76 (0.59) of the variance
gave a posterior sd 4-5% (7-9%) short (benchmarks/spread_model.py). On digits, whose energy's
integrated time is 60 sweeps, starts passed the mean's checks at 10 sweeps with 0.44-0.63 of the
variance (benchmarks/README.md, "A second tuned start, and the spread of its draws"). The check
is noisy: with 64 chains the variance's ratio has a relative sd of about 0.18, so a start with
all of the variance fails a check about one time in eight (its sweeps then grow a step) and one
with 0.76 of it passes about one time in three; it catches the gross shortfalls."""
START_MEMORY = 0.5
"""Largest share of a tuned start's deviation in energy that its draws may keep after their
sweeps (:func:`pymc_knn.kernels.mcmc.start_memory`). A ladder's rungs are ``RELAX_CHAINS``
draws each: their mean energy is off the stationary one by about a stationary sd over 8, the
same for every draw started there, and a draw keeps that share of it. On eight classes with
equal neighbours (the energy's integrated time 190-316 sweeps) a chain whose ladder was taken at
10 sweeps had beta given ``k`` a quarter of its sd low and a fifth wider, where the checks of 64
chains resolve about 0.2 sd: at half the deviation a rung's error is about 0.06 sd."""
FREQUENT_SHARE = 0.1
"""Share of a window's rows at which a value of ``k`` is frequent: the sweeps are checked there
too, not only at the chain's current ``k`` (:meth:`Adaptation.frequent_values`)."""


def integrated_time(x) -> float:
    """Integrated autocorrelation time of a series (Geyer's initial monotone sequence).

    ``nan`` for a series that is constant or too short to say.
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    if n < 8 or not np.ptp(x) > 0:
        return math.nan
    x = x - x.mean()
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(x, size)
    acov = np.fft.irfft(f * np.conj(f), size)[:n]
    rho = acov / acov[0]
    pairs = rho[0 : 2 * (n // 2) : 2] + rho[1 : 2 * (n // 2) : 2]
    negative = np.flatnonzero(pairs <= 0)
    pairs = pairs[: negative[0] if negative.size else pairs.size]
    return float(max(-1.0 + 2.0 * np.minimum.accumulate(pairs).sum(), 1.0))


def relaxed(early, late, late_sq) -> bool:
    """Whether auxiliary chains have relaxed (see :func:`pymc_knn.kernels.mcmc.relaxation`):
    the mean energy of the early window within ``RELAX_TOL`` stationary sds of the late one's,
    or within two of its standard errors (what the check can resolve)."""
    d = early - late
    sd = math.sqrt(max(float(late_sq.mean() - late.mean() ** 2), 0.0))
    se = float(d.std(ddof=1)) / math.sqrt(d.size)
    return abs(float(d.mean())) <= max(RELAX_TOL * sd, 2.0 * se)


def agrees(late, late_ref, late_sq_ref) -> bool:
    """Whether auxiliary chains from a tuned start settle where chains from the observed
    labels do: the mean energy of their late windows within ``RELAX_TOL`` stationary sds of
    the reference's, or within two standard errors of the difference."""
    sd = math.sqrt(max(float(late_sq_ref.mean() - late_ref.mean() ** 2), 0.0))
    se = math.sqrt(
        float(late.var(ddof=1)) / late.size + float(late_ref.var(ddof=1)) / late_ref.size
    )
    return abs(float(late.mean() - late_ref.mean())) <= max(RELAX_TOL * sd, 2.0 * se)


def spreads(spread, late_ref, late_sq_ref) -> bool:
    """Whether auxiliary draws from a tuned start vary as stationary draws do: the energy's
    variance across chains from the start about the draws' sweeps
    (:func:`pymc_knn.kernels.mcmc.spread_at`) at least ``1 - SPREAD_TOL`` of the variance of the
    reference's late windows (chains from the observed labels), and at most ``1 / (1 -
    SPREAD_TOL)`` of it (draws from a ladder's two rungs vary more until their sweeps close the
    rungs' gap, and a wider auxiliary energy widens the posterior)."""
    stationary = float(late_sq_ref.mean() - late_ref.mean() ** 2)
    return (1.0 - SPREAD_TOL) * stationary <= spread <= stationary / (1.0 - SPREAD_TOL)


def energy_time(late, late_sq, sweeps) -> float:
    """The time in sweeps over which the energy's deviations decay (as ``exp(-t / tau)``),
    from the late windows (sweeps ``[sweeps, 2 sweeps)``) of chains from one start: the
    variance of a window's mean across the chains over the mean variance within a window is
    about the integrated time, ``2 tau``, over ``sweeps``. It reads high rather than low: a
    window holds about 8 readings (at 200 sweeps a ``tau`` of 5 reads as 9-26, of 80 as 69-230)
    and its variance lacks the slow components. ``inf`` where the chains' energies differ but
    do not vary within a window (frozen), 0 where they do neither."""
    within = float(np.mean(late_sq - late**2))
    between = float(late.var(ddof=1))
    rounding = 1e-12 * float(np.mean(late_sq))
    if not within > rounding:
        return math.inf if between > rounding else 0.0
    return between / within * sweeps / 2


def forgotten(late, late_sq, sweeps) -> bool:
    """Whether chains from one start (the observed labels) have run at least the energy's time
    (:func:`energy_time`), so that their draws keep at most ``e^-1`` of its slow deviation and
    the check's tolerance bounds the draws' bias (within 1.5 times it). Where they have not,
    the early and late windows differ by less than the bias still left: with the time at twice
    the sweeps, by a third of it (on eight classes with equal neighbours, where the energy's
    time is 190-316 sweeps, a chain drawing with 163 sat a quarter of beta's sd high)."""
    return energy_time(late, late_sq, sweeps) <= sweeps


def iterations_for(tau: float, target: float = TARGET_TAU) -> float:
    """Mean iterations between stored draws so that a chain of integrated time ``tau`` per
    iteration has about ``target`` between draws.

    A draw takes ``a = floor(m)`` or ``a + 1`` iterations at random (``a + 1`` with probability
    ``m - a``): thinned so, an AR(1) chain of lag-one autocorrelation ``rho`` keeps
    autocorrelation ``E[rho^M]`` between draws, and ``m`` is the mean that makes it
    ``(target - 1) / (target + 1)``. A whole number of iterations would overshoot by half an
    iteration on average (digits: 2 where 1.4 do).
    """
    if not np.isfinite(tau) or tau <= target:
        return 1.0
    rho = (tau - 1.0) / (tau + 1.0)
    want = (target - 1.0) / (target + 1.0)
    a = max(1, math.floor(math.log(want) / math.log(rho)))
    frac = (rho**a - want) / (rho**a - rho ** (a + 1))
    return a + min(max(frac, 0.0), 1.0)


def draw_iterations(mean: float, rng) -> int:
    """A draw's iterations: ``floor(mean)``, or one more with probability ``mean - floor(mean)``
    (no random number used for a whole ``mean``, so fixed iterations keep their draws)."""
    a = math.floor(mean)
    frac = mean - a
    return int(a + (frac > 0 and rng.random() < frac))


@dataclass
class Adaptation:
    """The proposal's parameters and their tuning state, for one chain.

    Parameters
    ----------
    n_free : int
        Continuous coordinates that leave the graph alone (beta's).
    graph_discrete : ndarray of bool
        For each coordinate that moves the graph (``k`` or ``sigma``), whether it is discrete.
    proposal_sd : float
        Initial sd of the continuous moves on the value scale.
    k_radius : float
        Initial radius of the discrete moves.
    max_radius : ndarray of int
        Largest useful radius of each graph coordinate (ignored for continuous ones).
    iterations : float
        Initial (or, with ``adapt_iterations`` False, fixed) iterations per draw; a mean that
        is not whole is drawn per draw (:func:`draw_iterations`).
    """

    n_free: int
    graph_discrete: np.ndarray
    proposal_sd: float
    k_radius: float
    max_radius: np.ndarray
    iterations: float = 1.0
    adapt_iterations: bool = True
    max_iterations: int = 1000
    target_accept: float = TARGET_ACCEPT
    p_jump: float = P_JUMP
    p_beta_jump: float = P_BETA_JUMP
    bridge: int = 0
    adapt_bridge: bool = False
    bridge_unit: float = 0.0
    bridge_units: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bridge_origin: int = 0
    max_bridge: int = MAX_BRIDGE
    delayed: int = 0  # mcmc.SCREEN_*
    plateau: np.ndarray = field(default_factory=lambda: NO_PLATEAU)  # Proposal.plateau
    aux_sweeps: int = 10  # a draw's sweeps from the observed labels, at which moves are priced
    fields_per_move: float = 0.0
    # what a beta and a graph move cost beyond their auxiliary draws and bridging fields, in
    # sweeps: a d-nn term's passes over its table (0 for a kNN term)
    table_sweeps: tuple[float, float] = (0.0, 0.0)
    balanced: float = math.nan  # the share of graph moves that evens the taus (nan: not yet)
    log_scale: float = field(init=False)
    log_step: np.ndarray = field(init=False)
    shape: np.ndarray = field(init=False)
    slope: np.ndarray = field(init=False)
    graph_stuck: np.ndarray = field(init=False)
    futile_at: np.ndarray = field(init=False)
    home_at: np.ndarray = field(init=False)
    jump: np.ndarray = field(init=False)
    beta_centre: np.ndarray = field(init=False)
    beta_chol: np.ndarray = field(init=False)
    tau: float = math.nan
    window_length: int = FIRST_WINDOW
    window_mean: np.ndarray | None = None
    window_beta_top: float = 0.0
    window_beta_low: float = 0.0
    window_theta_top: float = math.nan
    window_values: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))
    _window: list = field(default_factory=list)
    _filled: int = 0
    _updates: dict = field(default_factory=lambda: dict.fromkeys((BETA_MOVE, GRAPH_MOVE), 0))
    final_rows: np.ndarray | None = None  # (beta, theta) of the rows finish() read
    _last_rows: np.ndarray | None = None
    _last_row: np.ndarray | None = None  # the block's coordinates in the latest draw's last row
    _last_transitions: float = 0.0
    _noise: list = field(default_factory=list)
    _noise_scale: float | None = None
    _regions: dict = field(default_factory=dict)  # region: (weighted noise sum, weight)
    _mixing: np.ndarray = field(default_factory=lambda: np.zeros(2))  # sums of A, B
    _pooled: list = field(default_factory=list)

    def __post_init__(self):
        self.graph_discrete = np.asarray(self.graph_discrete, dtype=bool)
        self.log_scale = math.log(self.proposal_sd)
        self.log_step = np.where(
            self.graph_discrete, math.log(self.k_radius), math.log(self.proposal_sd)
        )
        self._max_log_step = np.where(
            self.graph_discrete, np.log(np.maximum(self.max_radius, 1)), MAX_LOG_SCALE
        )
        self.shape = np.eye(self.n_free)
        self.slope = np.zeros((self.graph_discrete.size, self.n_free))
        self.graph_stuck = np.zeros(self.graph_discrete.size, dtype=bool)
        self.futile_at = np.empty(0)
        self.home_at = np.empty(0)
        self.jump = np.zeros((self.graph_discrete.size, 0, 3))
        self.beta_centre = np.zeros((self.n_free, 1 + self.graph_discrete.size))
        self.beta_chol = np.zeros((0, 0))

    def start_scale(self, scale: float | None) -> None:
        """Start the beta move's step at ``scale`` (kept as it is for None)."""
        if scale is not None and np.isfinite(scale) and scale > 0:
            self.log_scale = min(math.log(scale), MAX_LOG_SCALE)

    @property
    def scale(self) -> float:
        """The step of the beta move (value scale)."""
        return math.exp(self.log_scale)

    @property
    def settled(self) -> bool:
        """Whether a window after the first has closed: the first may still be on the chain's
        way to the posterior (it is fitted on, not kept, and no tuned start is drawn at it)."""
        return self.window_length > 2 * FIRST_WINDOW

    @property
    def steps(self) -> np.ndarray:
        """The step of each graph move: a radius (discrete) or an sd (continuous)."""
        step = np.exp(self.log_step)
        return np.where(self.graph_discrete, np.maximum(1.0, np.round(step)), step)

    @property
    def p_graph(self) -> float:
        """Probability of a graph move. The *timed* share is 1/2, less when bridging or a d-nn
        term's table makes graph moves dearer, so that both kinds take about equal time
        (:meth:`_graph_share`). Once a settled window has
        measured the integrated times, the share is halfway, in log-odds, between the timed
        one and the ``balanced`` one that equalises beta's and the graph coordinates' times
        (:meth:`_balance_shares`): the times read while tuning are noisy, and a share past
        the balanced one costs more where graph moves are the dearer kind than one short of it
        by as much (docs/inference.md, "Which move, how often")."""
        timed = self._graph_share(0.5)
        if not math.isfinite(self.balanced):
            return timed
        odds = math.sqrt(timed / (1 - timed) * self.balanced / (1 - self.balanced))
        return odds / (1 + odds)

    @property
    def p_futile(self) -> float:
        """Probability of a graph move from ``futile_at``: ``FUTILE_TIME`` of the time."""
        return self._graph_share(FUTILE_TIME)

    def _shares(self) -> tuple[np.ndarray, float, float]:
        """Where graph moves take another share of the time than elsewhere: the coordinates,
        the probability of a graph move there and elsewhere. Futile there (``futile_at``):
        ``FUTILE_TIME`` there, ``AWAY_TIME`` elsewhere; the home of the final tuning rows
        (``home_at``): the balanced share there, ``AWAY_TIME`` elsewhere; else the balanced
        share everywhere."""
        if self.futile_at.size:
            return self.futile_at, self.p_futile, self._graph_share(AWAY_TIME)
        if self.home_at.size:
            return self.home_at, self.p_graph, self._graph_share(AWAY_TIME)
        return self.futile_at, self.p_graph, self.p_graph

    def _graph_share(self, time) -> float:
        """Probability of a graph move such that graph moves take ``time`` of the time, a
        draw priced at ``aux_sweeps``: the sweeps a draw needs from the observed labels, not
        from a tuned start. A tuned start makes every draw cheaper, beta's and the graph
        moves' alike, and priced at its sweeps the graph moves' bridging fields would weigh
        more and get fewer iterations: on blobs4 (four clusters in 3-d, equal neighbours),
        whose ``k`` sets the iterations a draw, chains whose ladder of starts ran 10 sweeps a
        draw (the labels' 40) made graph moves in 11-13% of their iterations instead of
        25-33%, and chose twice the iterations a draw (benchmarks/README.md, "A ladder of
        tuned starts, and the moves' share priced at the labels' sweeps"). A graph move costs
        its draw, its bridging fields (about two sweeps each: a field has the edges of both
        graphs) and ``table_sweeps[1]``, a beta move its draw and ``table_sweeps[0]``."""
        if not self.graph_discrete.size or not self.n_free:
            return float(self.graph_discrete.size > 0)
        sweeps = max(self.aux_sweeps, 1)
        beta_table, graph_table = self.table_sweeps
        graph_cost = 1.0 + 2.0 * self.fields_per_move / sweeps + graph_table / sweeps
        cost = graph_cost / (1.0 + beta_table / sweeps)
        return time / (time + (1.0 - time) * cost)

    def proposal(self, free, graph, lower, upper) -> Proposal:
        """The kernel's proposal at the current tuning state."""
        steps = self.steps
        wide = np.where(
            self.graph_discrete,
            np.minimum(
                np.maximum(steps + 1, np.round(WIDE_FACTOR * steps)), np.maximum(self.max_radius, 1)
            ),
            WIDE_FACTOR * steps,
        )
        at, p_at, p_elsewhere = self._shares()
        return Proposal(
            free,
            self.scale * self.shape,
            graph,
            self.graph_discrete,
            lower,
            upper,
            steps,
            wide,
            self.slope,
            p_elsewhere,
            at,
            p_at,
            self.p_jump if self.jump.shape[1] else P_WIDE,
            self.jump,
            self.p_beta_jump,
            self.beta_centre,
            self.beta_chol,
            self.bridge,
            self.bridge_unit if self.adapt_bridge else 0.0,
            self.bridge_units if self.adapt_bridge else np.zeros(0),
            self.bridge_origin,
            self.max_bridge,
            self.delayed if (self.jump.shape[1] > 0 or self.beta_chol.shape[0] > 0) else 0,
            self.adapt_bridge,
            self.plateau,
        )

    def observe(self, trace, accept, cap, move, noise, bridge_sweeps=0) -> bool:
        """Tune on one draw's iterations: ``trace`` rows are ``(beta, theta, block...)``.

        Each move type aims at ``target_accept`` times its acceptance cap (``cap``: what a move of
        size zero would be accepted with; 1 but for Møller), so that a capped acceptance does
        not shrink the step to nothing. ``noise``: see :func:`pymc_knn.kernels.mcmc.run_iterations`;
        ``bridge_sweeps``: the draw's sweeps through bridging fields. Returns whether an
        adaptation window closed.
        """
        for kind in (BETA_MOVE, GRAPH_MOVE):
            mask = move == kind
            if mask.any():
                # each kind's own count: graph moves made rare by bridging still adapt
                gain = (self._updates[kind] + 1.0) ** -0.6
                self._updates[kind] += 1
                target = self.target_accept * float(cap[mask].mean())
                step = gain * (float(accept[mask].mean()) - target)
                if kind == BETA_MOVE:
                    self.log_scale = min(self.log_scale + step, MAX_LOG_SCALE)
                else:
                    low = np.where(self.graph_discrete, 0.0, -np.inf)
                    self.log_step = np.clip(self.log_step + step, low, self._max_log_step)
        if self.adapt_bridge:
            self._tune_bridge(noise[np.isfinite(noise[:, 0])])
            graph_moves = int(np.count_nonzero(np.isin(move, (GRAPH_MOVE, WIDE_MOVE, JUMP_MOVE))))
            if graph_moves:
                self.fields_per_move += 0.1 * (bridge_sweeps / graph_moves - self.fields_per_move)
        # a draw's first row is a move from the previous draw's last (one row a draw: m = 1);
        # on the block's own coordinates, which other steps of the model leave alone
        block = trace[:, 2:]
        steps = block if self._last_row is None else np.vstack([self._last_row, block])
        moved = int(np.any(np.diff(steps, axis=0) != 0, axis=1).sum())
        self._last_row = block[-1].copy()
        expected = float(accept[np.isin(move, (GRAPH_MOVE, WIDE_MOVE, JUMP_MOVE))].sum())
        graph_chosen = int(np.count_nonzero(~np.isin(move, (BETA_MOVE, BETA_JUMP, PLATEAU_MOVE))))
        self._window.append((trace.copy(), moved, expected, graph_chosen))
        self._filled += len(trace)
        if self._filled >= self.window_length:
            self._close_window()
            return True
        return False

    def _tune_bridge(self, noise) -> None:
        """Bridge each graph move with about ``v |d| / TARGET_NOISE - 1`` fields, ``d`` its
        size, where ``v`` is the noise variance per unit of size times the fields plus one
        (about constant: the variance falls as ``1 / (fields + 1)`` and grows about linearly
        with ``|d|``) of the noisier of the regions of the move's two ends (``noise`` rows:
        twice that variance, ``theta0``, ``theta1``).

        The pooled ``v``, a moving average over batches of ``NOISE_PAIRS`` pairs, is
        ``bridge_unit``'s (outside the regions seen); each pair also counts toward the region of
        the end whose ``v`` is the larger so far (both when equal), so that a region whose own
        moves are quiet is not charged with the noise of moves into a noisy one.
        """
        ends = [(bridge_region(theta0), bridge_region(theta1)) for theta0, theta1 in noise[:, 1:]]
        seen = sorted({r for pair in ends for r in pair})
        level = dict(zip(seen, self._region_noise(seen)))
        for v, pair in zip(noise[:, 0], ends):
            top = max(level[r] for r in pair)
            for r in set(pair):
                if level[r] == top:
                    total, weight = self._regions.get(r, (0.0, 0.0))
                    keep = 1.0 - 1.0 / REGION_MEMORY
                    self._regions[r] = (keep * total + 0.5 * v, keep * weight + 1.0)
        self._noise.extend((0.5 * noise[:, 0]).tolist())
        if len(self._noise) >= NOISE_PAIRS:
            batch = float(np.mean(self._noise))
            self._noise = []
            v = (
                batch
                if self._noise_scale is None
                else self._noise_scale + 0.25 * (batch - self._noise_scale)
            )
            self._noise_scale = v
            # every move whose noise exceeds the target is bridged, also when a unit move's is
            # below it: unbridged, the radius shrinks to what the noise allows, and k mixes
            # about half as fast per iteration (moons, Pima; docs/inference.md)
            self.bridge_unit = v / TARGET_NOISE
        if self._noise_scale is not None and self._regions:
            # the regions from the first seen to the last (the pooled unit beyond them)
            self.bridge_origin = min(self._regions)
            span = np.arange(self.bridge_origin, max(self._regions) + 1)
            self.bridge_units = self._region_noise(span) / TARGET_NOISE

    def _region_noise(self, regions) -> np.ndarray:
        """The noise variance per unit of size of each of ``regions``: the mean of its pairs and
        its neighbours' (``REGION_SMOOTH``), the pooled noise weighing ``REGION_PRIOR`` pairs
        (``inf`` where no pair is near before the first batch)."""
        regions = np.asarray(regions, dtype=float)
        if not self._regions:
            pooled = math.inf if self._noise_scale is None else self._noise_scale
            return np.full(regions.size, pooled)
        keys = np.fromiter(self._regions, float)
        sums = np.array(list(self._regions.values()))
        gap = (regions[:, None] - keys[None, :]) / REGION_SMOOTH
        kernel = np.where(np.abs(gap) <= 3.0, np.exp(-0.5 * gap**2), 0.0)
        total, weight = kernel @ sums[:, 0], kernel @ sums[:, 1]
        if self._noise_scale is None:
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(weight > 0, total / weight, math.inf)
        return (total + REGION_PRIOR * self._noise_scale) / (weight + REGION_PRIOR)

    @staticmethod
    def series_taus(block) -> np.ndarray:
        """Integrated times of a block's coordinates (columns) and of the indicators of their
        5% and 95% tails (what ArviZ's bulk and tail ESS measure): ``(coordinates, 3)``, ``nan``
        where a series is constant."""
        taus = np.full((block.shape[1], 3), math.nan)
        for j, x in enumerate(block.T):
            low, high = np.quantile(x, TAIL_PROBS)
            for i, series in enumerate((x, x <= low, x <= high)):
                taus[j, i] = integrated_time(series)
        return taus

    @staticmethod
    def _largest(taus) -> float:
        """The largest of :meth:`series_taus` (``nan`` if none is finite)."""
        return float(np.nanmax(taus)) if np.isfinite(taus).any() else math.nan

    @classmethod
    def _window_tau(cls, block) -> float:
        """The largest of :meth:`series_taus` of a block."""
        return cls._largest(cls.series_taus(block))

    def _close_window(self) -> None:
        rows = np.concatenate([b for b, *_ in self._window])
        accepted = sum(w[1] for w in self._window)
        transitions = sum(w[2] for w in self._window)
        self.window_mean = rows[:, :2].mean(axis=0)
        self.graph_stuck = np.ptp(rows[:, 2 + self.n_free :], axis=0) == 0
        self.futile_at = self._futile_at(rows, transitions)
        self.window_beta_top = float(np.quantile(rows[:, 0], RELAX_QUANTILE))
        self.window_beta_low = float(np.quantile(rows[:, 0], 1 - RELAX_QUANTILE))
        self.window_values = self.frequent_values(rows)
        self.window_theta_top = self.theta_at(rows, self.window_beta_top)
        block = rows[:, 2:]
        after_first = self.window_length > FIRST_WINDOW  # the first may be on the way in
        pooled = block
        if after_first:  # the first window is fitted on for the jumps, not kept
            self._learn_covariance(block, accepted)
            self._pooled.append(block)
            pooled = np.concatenate(self._pooled)
        self._fit_jumps(pooled[:, self.n_free :])
        if after_first and accepted >= MIN_ACCEPTED:
            self._fit_beta_jump(pooled)
        taus = self.series_taus(block)
        self.tau = self._largest(taus)
        if after_first:
            self._balance_shares(taus, sum(w[3] for w in self._window), len(rows))
        if self.adapt_iterations:
            # the first window may have timed the chain's way in, and a window in which the
            # chain never moved is slower than it can measure: twice the iterations, never
            # fewer (Møller from a poor plug-in can sit for a while)
            want = 2 * self.iterations
            if after_first and accepted:
                want = iterations_for(self.tau)
            self.iterations = min(want, self.max_iterations)
        self._last_rows, self._last_transitions = rows, transitions
        self.window_length *= 2
        self._window, self._filled = [], 0

    def _balance_shares(self, taus, graph_chosen, rows) -> None:
        """Set the balanced share of graph moves from a window's integrated times (``taus``,
        as :meth:`series_taus`) and how many of its ``rows`` iterations chose a graph move.

        Each kind of move mixes its coordinates about in proportion to how often it is chosen:
        beta's time is ``A / (1 - p)`` and the graph coordinates' ``B / p`` for a share ``p`` of
        graph moves. The stored draws' ESS is set by the larger, and a larger ``p`` shortens
        one while lengthening the other whatever the two moves cost, so the ESS per second is
        best where they are equal, at ``p = B / (A + B)``. ``A`` and ``B`` are read off each
        settled window at the share it ran with and averaged over the windows, weighted by
        their iterations (one window's times are noisy). A window in which either kind never
        moved its coordinates, or only one kind was chosen, leaves the share as it was.

        Continuous graph coordinates (``sigma``) only. ``k``'s time while tuning is read off
        the excursions the chain happened to make (class20: a second mode at ``k = 3`` visited
        once or twice a run), and its share at home and away is set by the rules built for
        that (``HOME_MASS``, ``FUTILE_TIME``): balanced on class20 with symmetrised neighbours,
        graph moves took 0.63-0.73 of the iterations, the chains chose fewer iterations a draw
        and the ESS of ``k`` fell from 1,253-1,375 to 502-657 (R-hat 1.011 at seed 2)."""
        share = graph_chosen / rows
        if not self.n_free or not self.graph_discrete.size or self.graph_discrete.any():
            return
        if not 0 < share < 1:  # one kind only: nothing to compare
            return
        free, graph = taus[: self.n_free], taus[self.n_free :]
        if not (np.isfinite(free).any() and np.isfinite(graph).any()):
            return
        self._mixing += rows * np.array([np.nanmax(free) * (1.0 - share), np.nanmax(graph) * share])
        a, b = self._mixing
        self.balanced = float(np.clip(b / (a + b), *SHARE_BOUNDS))

    def frequent_values(self, rows) -> np.ndarray:
        """Rows ``(value, beta)`` for each value of the graph coordinate, when it is a single
        discrete one (``k``), that holds at least ``FREQUENT_SHARE`` of ``rows``: the value and
        the ``RELAX_QUANTILE`` quantile of beta's first coordinate among its rows. Empty for
        ``sigma`` or several graph coordinates."""
        if self.graph_discrete.size != 1 or not self.graph_discrete[0]:
            return np.empty((0, 2))
        values, counts = np.unique(rows[:, 1], return_counts=True)
        frequent = values[counts >= FREQUENT_SHARE * len(rows)]
        tops = [np.quantile(rows[rows[:, 1] == v, 0], RELAX_QUANTILE) for v in frequent]
        return np.column_stack([frequent, tops]) if tops else np.empty((0, 2))

    @staticmethod
    def theta_at(rows, beta) -> float:
        """``theta`` (``k`` or ``sigma``) that ``rows`` ``(beta, theta, ...)`` pair with
        ``beta``: their least-squares line of ``theta`` on beta there, within the range of
        ``theta`` they hold (their mean where beta or ``theta`` stays put)."""
        b, t = rows[:, 0], rows[:, 1]
        if np.ptp(t) == 0.0:
            return float(t[0])
        var = float(np.var(b))
        if var == 0.0:
            return float(np.mean(t))
        slope = float(np.mean((b - b.mean()) * (t - t.mean()))) / var
        return float(np.clip(t.mean() + slope * (beta - b.mean()), t.min(), t.max()))

    def _learn_covariance(self, block, accepted) -> None:
        """The ridge (regression of beta's coordinates on each graph coordinate) and the shape
        of the beta move (their covariance given the graph coordinates)."""
        dc, dg = self.n_free, self.graph_discrete.size
        if accepted < MIN_ACCEPTED or len(block) < 2 * (dc + dg) + 2 or dc == 0:
            return
        cov = np.atleast_2d(np.cov(block, rowvar=False))
        cc, cg, gg = cov[:dc, :dc], cov[:dc, dc:], cov[dc:, dc:]
        var_g = np.diag(gg)
        if dg and np.all(var_g > 0):
            self.slope = (cg / var_g).T
            cc = cc - cg @ np.linalg.pinv(gg) @ cg.T
        if dc > 1 and np.all(np.diag(cc) > 0):
            weight = accepted / (accepted + 20.0)
            cc = weight * cc + (1 - weight) * np.diag(np.diag(cc))
            try:
                chol = np.linalg.cholesky(cc)
            except np.linalg.LinAlgError:
                return
            self.shape = chol / np.exp(np.log(np.diag(chol)).mean())

    def _fit_beta_jump(self, block) -> None:
        """The beta jump's density, from the tuning draws (every closed window's but the
        first's, where the chain may still be on its way): the least-squares regression of
        beta's coordinates on the graph coordinates, and ``BETA_JUMP_SCALE`` times the Cholesky
        factor of its residuals' covariance. A graph coordinate that never moved in them says
        nothing of how beta changes with it: there the centre follows the ridge (``slope``)."""
        dc, dg = self.n_free, self.graph_discrete.size
        if dc == 0 or len(block) < 2 * (dc + dg) + 2:
            return
        graph = block[:, dc:]
        mean = graph.mean(axis=0)
        varies = np.ptp(graph, axis=0) > 0
        design = np.column_stack([np.ones(len(block)), (graph - mean)[:, varies]])
        coef, *_ = np.linalg.lstsq(design, block[:, :dc], rcond=None)
        resid = block[:, :dc] - design @ coef
        cov = resid.T @ resid / (len(block) - 1 - int(varies.sum()))
        slopes = self.slope.T.copy()
        slopes[:, varies] = coef[1:].T
        try:
            chol = np.linalg.cholesky(np.atleast_2d(cov))
        except np.linalg.LinAlgError:
            return
        if np.all(np.isfinite(chol)) and np.all(np.diag(chol) > 0):
            self.beta_centre = np.column_stack([coef[0] - slopes @ mean, slopes])
            self.beta_chol = BETA_JUMP_SCALE * chol

    def _fit_jumps(self, graph) -> None:
        """The jump move's density, from the tuning draws of the graph coordinates (every
        closed window's but the first's, where the chain may still be on its way; the first
        alone until the second closes). For each,
        ``JUMP_CENTRES`` normal components of equal weight at the draws' quantiles, each as wide
        as the nearer of its neighbours (so a narrow mode keeps narrow components and a valley
        between modes stays empty; at least half a unit for ``k``, which must reach the
        neighbouring integers, and a tenth of the local step for ``sigma``), and a broad one of
        weight ``JUMP_DEFENSIVE`` about their median, as wide as twice their sd or half their
        range, and at least the reach of the wide move for ``k`` (``WIDE_FACTOR`` radii) and
        ``JUMP_REACH`` for ``sigma``, so that a nearby mode that a chain's tuning draws missed
        is not a trap (``JUMP_DEFENSIVE``)."""
        m = JUMP_CENTRES
        probs = (np.arange(m) + 0.5) / m
        jump = np.empty((graph.shape[1], m + 1, 3))
        for j, v in enumerate(graph.T):
            centres = np.quantile(v, probs)
            gaps = np.diff(centres)
            nearer = np.minimum(np.r_[gaps[0], gaps], np.r_[gaps, gaps[-1]])
            floor = 0.5 if self.graph_discrete[j] else 0.1 * float(self.steps[j])
            widths = np.maximum(nearer, floor)
            weights = np.full(m, (1 - JUMP_DEFENSIVE) / m)
            jump[j, :m] = np.column_stack([weights, centres, widths])
            reach = WIDE_FACTOR * float(self.steps[j]) if self.graph_discrete[j] else JUMP_REACH
            broad = max(2.0 * float(v.std()), 0.5 * float(np.ptp(v)), reach)
            jump[j, m] = JUMP_DEFENSIVE, float(np.median(v)), broad
        self.jump = jump

    def theta_range(self, quantiles) -> tuple[float, float]:
        """Quantiles of ``theta`` (``k`` or ``sigma``) over the latest closed window and the
        iterations since (``nan`` before any iteration)."""
        blocks = [b for b, *_ in self._window]
        if self._last_rows is not None:
            blocks.insert(0, self._last_rows)
        if not blocks:
            return math.nan, math.nan
        low, high = np.quantile(np.concatenate(blocks)[:, 1], quantiles)
        return float(low), float(high)

    def _futile_at(self, rows, transitions) -> np.ndarray:
        """Where the graph moves of a block of tuning draws were futile: the graph coordinates
        never moved and fewer than ``FUTILE_TRANSITIONS`` moves were expected to be accepted
        (their values), or nowhere (empty)."""
        graph = rows[:, 2 + self.n_free :]
        still = graph.shape[1] and np.all(np.ptp(graph, axis=0) == 0)
        return graph[0].copy() if still and transitions < FUTILE_TRANSITIONS else np.empty(0)

    def _home_at(self, rows) -> np.ndarray:
        """The value of the (all discrete) graph coordinates at which at least ``HOME_MASS`` of
        a block of tuning draws sat, or nowhere (empty)."""
        graph = rows[:, 2 + self.n_free :]
        if not graph.shape[1] or not np.all(self.graph_discrete):
            return np.empty(0)
        values, counts = np.unique(graph, axis=0, return_counts=True)
        top = np.argmax(counts)
        return values[top].copy() if counts[top] >= HOME_MASS * len(graph) else np.empty(0)

    def _stale_last_window(self, since) -> bool:
        """Whether the latest closed window says nothing of the final kernel's mixing: its
        graph coordinates never moved, and at least ``FIRST_WINDOW`` iterations since moved
        them. The close of a stuck window changes the graph moves (the ridge is seeded from the
        modes, the radius shrinks, the futile share may apply): pooled with the moving stretch
        after it, the stuck one reads as a single slow step. On blobs10 a chain stuck 800
        iterations at ``k = 4`` under a ridge fitted on one transient crossing, then moving
        between 3 and 4 seven times in the 1,038 since, chose 211 iterations a draw from the
        pooled series."""
        if not since or not np.all(self.graph_stuck):
            return False
        rows = np.concatenate(since)[:, 2 + self.n_free :]
        return len(rows) >= FIRST_WINDOW and bool(np.any(np.ptp(rows, axis=0) > 0))

    def _unseen_departures_tau(self, rows, transitions) -> float:
        """A lower bound on the integrated time of the (discrete) graph coordinates when a block
        of tuning draws never saw them move, though ``transitions`` (at least
        ``UNSEEN_DEPARTURES``) departures were expected, and the settled windows saw them
        elsewhere (else ``nan``). A constant series says nothing of its own time, so beta's
        would set the iterations alone. Two-state arithmetic: away a share ``p`` of the time and
        leaving at a rate ``a`` per iteration, the indicator's time is about ``2 p / a``; ``p``
        is the settled windows' share away, ``a`` is ``transitions`` over the rows (a count of
        the departures that did not happen, which is better than the none that did)."""
        graph = rows[:, 2 + self.n_free :]
        if (
            not graph.shape[1]
            or not np.all(self.graph_discrete)
            or transitions < UNSEEN_DEPARTURES
            or np.any(np.ptp(graph, axis=0) > 0)
            or not self._pooled
        ):
            return math.nan
        settled = np.concatenate(self._pooled)[:, self.n_free :]
        away = float(np.mean(np.any(settled != graph[0], axis=1)))
        return 2.0 * away * len(rows) / transitions if away > 0 else math.nan

    def final_block(self):
        """``(rows, transitions)`` that :meth:`finish` reads: the latest closed window and the
        iterations since, or those alone when the window is stale; ``(None, 0)`` before any."""
        blocks = [b for b, *_ in self._window]
        transitions = sum(w[2] for w in self._window)
        if self._last_rows is not None and not self._stale_last_window(blocks):
            blocks.insert(0, self._last_rows)
            transitions += self._last_transitions
        return (np.concatenate(blocks) if blocks else None), transitions

    def finish(self) -> None:
        """End of tuning: the iterations per draw and whether the graph moves are futile, from
        the latest closed window and the iterations since, pooled (one window's tail
        autocorrelation is noisy: a single short window chose 7 iterations on Ripley where
        12-14 were needed), or from the iterations since alone when that window is stale
        (:meth:`_stale_last_window`). The time read off those rows counts up to a
        ``TRUSTED_TIMES``-th of their number (the bound from unseen departures, which no series
        shows, is not cut). Their ``(beta, theta)`` are kept as ``final_rows``."""
        rows, transitions = self.final_block()
        if rows is not None:
            self.final_rows = rows[:, :2].copy()
            self.futile_at = self._futile_at(rows, transitions)
            self.home_at = self._home_at(rows)
            measured = np.minimum(self._window_tau(rows[:, 2:]), len(rows) / TRUSTED_TIMES)
            tau = float(np.fmax(measured, self._unseen_departures_tau(rows, transitions)))
            if self.adapt_iterations and np.isfinite(tau):
                self.tau = tau
                self.iterations = min(iterations_for(tau), self.max_iterations)
        self._window, self._filled = [], 0
        self._updates = dict.fromkeys(self._updates, 0)
