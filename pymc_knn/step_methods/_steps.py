"""The step methods: thin adapters between ``pm.sample`` and the numba iteration kernel."""

from __future__ import annotations

import contextvars
import functools
import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pymc.step_methods.arraystep import BlockedStep
from pymc.step_methods.compound import Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_value_vars_from_user_vars
from pytensor.graph.traversal import ancestors

from .._compile_notice import note_first_compile
from .._forksafe import may_thread
from .._validation import check_count, check_positive
from ..diagnostics import BOUND_SDS, PriorBoundWarning
from ..distributions import (
    missing_labels,
    potts_node,
    potts_parameter_rvs,
    potts_parameters,
    potts_terms,
    term_labels,
)
from ..graphs import DNN_KERNELS, max_k
from ..kernels import mcmc
from ..kernels.path import energy_path
from ..kernels.structure import (
    NO_DISTANCE_TABLE,
    NO_ORDER,
    NO_SHELLS,
    breadth_first_order,
    smallest_positive_sq,
)
from ..terms import CFTP_MAX_SWEEPS, warn_not_exact
from ._adaptation import (
    AUX_SWEEPS,
    FIRST_RELAX_CHAINS,
    MAX_AUX_SWEEPS,
    MAX_BRIDGE,
    PLATEAU_MOVES,
    RELAX_CHAINS,
    RELAX_QUANTILE,
    START_MEMORY,
    TARGET_ACCEPT,
    Adaptation,
    agrees,
    draw_iterations,
    forgotten,
    relaxed,
    spreads,
)
from ._labels import impute_nearest
from ._tractable import TractableLogp

__all__ = ["Exchange", "Moller", "PottsStep", "PseudoLikelihoodMetropolis", "current_model"]

MAX_ITERATIONS_PER_DRAW = 1000
"""Default bound on the iterations per draw chosen during tuning."""
RELAX_SAME = 0.02
"""Relative distance in beta and in k or sigma within which a passed relaxation check holds."""
RELAX_GROWTH = 2**0.5
"""Factor between the sweeps of successive relaxation checks (10, 14, 20, 28, 40, 57, ...): a
doubling overshot the sweeps needed by 40% on average, a factor sqrt(2) by 20%."""
DNN_COVER_MARGIN = 1.5
"""During tuning a kept d-nn table is widened to cover this factor beyond the sigma visited."""
COVER_QUANTILES = (0.005, 0.995)
"""The sigma a kept d-nn table is widened to cover at the end of each tuning window: the window's
central 99%, times or over ``DNN_COVER_MARGIN``."""
PRIOR_CHECK_DRAWS = 1000
"""Prior draws that check a beta, k or sigma given as an expression stays in range."""
PROPOSAL_SD = 0.5
"""The continuous moves' first step (value scale) where none is given or derived."""
START_SDS = 2.38
"""The beta move's first step, in sds of the pseudo-likelihood's normal approximation (the
optimal random-walk step of a one-dimensional normal target)."""
START_JITTER = 0.2
"""Half-width of the uniform jitter of a chain's start around the maximum pseudo-likelihood
estimate (value scale of continuous variables; log scale of k)."""
_SAMPLERS = {
    "swendsen_wang": mcmc.SWENDSEN_WANG,
    "gibbs": mcmc.GIBBS,
    "cftp": mcmc.CFTP,
    "enumerate": mcmc.ENUMERATE,
}
_NO_CUT = 1 << 61
LOCALITY_POINTS = 50_000
"""Fewest points from which a kNN field numbers them breadth first (:func:`_locality`): on the
``k = 50`` graph of 2-d points a Swendsen-Wang sweep costs 3.2 ms instead of 3.9 at 5 x 10^4
points, 7.9 instead of 11.0 at 10^5 and 100 instead of 218 at 10^6; nothing below 2 x 10^4,
where the labels fit in the caches anyway (docs/scaling.md)."""
LARGE_POINTS = 10_000
"""Fewest points from which, on a kNN term, Exchange's ``delayed_acceptance="auto"`` means
True: it pays where an auxiliary draw is dear and the posterior narrow and near normal (at 10^4
points, with the tuned start, 1.8 times the smallest ESS per second; at 3,000 the screening
cost ``k`` its mixing, and on 2,000 points in 6 classes even the screening of all but the cheap
``k`` moves did); below, no screening (docs/inference.md, "Defaults by size"). On a d-nn term
the screening stops here (at 10^4 points, after 200 tuning draws, it cut the ESS five-fold)."""
DNN_SCREEN_POINTS = 500
"""Fewest points from which, on a d-nn term with the gaussian or exponential kernel,
``delayed_acceptance="auto"`` means True (up to ``LARGE_POINTS``): each iteration there passes
over tables of about ``n^2`` weights, a ``sigma`` move builds one, and a screened move skips them
all. On 14 such fits of 500-1,000 points it took 0.79 of the walls (blobs4's exponential kernel
61.5 s against 120.5, Hastie's gaussian 60.8 against 103.7), none slower by more than 1%, the
smallest ESS as high. Not the ball kernel, whose posterior in ``sigma`` is a staircase that the
fitted density smooths over (on class20 1.5 times the walls at both seeds), nor the shipped sets
(150-250 points), where it lost (docs/inference.md, "Defaults by size"). On 2,000 points
(Hastie's, gaussian) 0.82 of the wall (294 s against 358); on 4,000 screened 583 s, converged;
from there to ``LARGE_POINTS`` the same reasons hold (dearer iterations, a narrower posterior)
but no fit has been timed."""
TABLE_ENTRIES_A_SWEEP = 200.0
"""Entries of a d-nn table's row that a pass computing an energy reads in the time a
Swendsen-Wang sweep takes a row (on class20's 1,000 points, 2026-12-07: a pass 0.42 ms, a sweep
78 us), the price of a beta move's pass beyond its auxiliary draw (:func:`table_sweeps`)."""
GRAPH_ENTRIES_A_SWEEP = {"gaussian": 30.0, "exponential": 25.0, "ball": 100.0}
"""Entries of a d-nn table's row that a ``sigma`` move builds and passes over (the table at the
proposed ``sigma``, the energies at both) in the time a sweep takes a row, by kernel: a tuned
chain's graph moves alone cost 1.41-1.58 times its beta moves alone on the shipped sets'
gaussian kernels (200-250 points), 1.89 with Ripley's exponential, 1.16-1.21 with the ball
(whose rows end at the ball's edge, no exponentials) and 3.4-3.8 with class20's gaussian and
exponential (1,000 points; benchmarks/README.md, "A d-nn move's price")."""
TUNED_START_POINTS = 500
"""Fewest points from which, with tuned sweeps, ``start="auto"`` means "tuned" (on a d-nn term
up to ``LARGE_POINTS``): where the observed labels need 20 sweeps and more (a tuned start is
taken only then), as on scikit-learn's digits and generated sets of 500-1,000 points (digits
with equal neighbours 55-82 s against 125-145 from the labels; of 36 fits one did not converge,
a set whose chains from the labels came near failing too; on 22 d-nn fits of 500-1,000 points
0.82 of the walls, class20's gaussian kernel 84-102 s against 99-155); the shipped sets (150-250
points) keep the labels' draws. d-nn terms from ``LARGE_POINTS`` keep the labels (at 10^4
points the tuned start was refused after 200 tuning draws)."""
TUNED_START_DRAWS = 2
"""Starts a window draws for ``start="tuned"`` before it keeps the observed labels (the first
from the current start, the next from the labels): a draw is a single state, and chains from
one far in its law's tail take as long as the labels' to settle. Of eight starts drawn at one
point of digits with equal neighbours seven passed the mean's checks at 10-81 sweeps and one
failed; in a fit, the chain whose start failed kept the labels' 231 sweeps where the other
three took 10-40 (benchmarks/README.md, "A second tuned start, and the spread of its draws")."""
LADDER_RUNGS = 5
"""Rungs of a ladder of tuned starts (:meth:`PottsStep._ladder`): a draw at beta' starts from a
draw at one of the two rungs about it, chosen with linear weights, so that the start's mean
energy is the stationary one to second order in the spacing, and its law is the stationary one
but for the two rungs' difference, which the draw's sweeps then shrink. With the window's 5% and
95% quantiles of beta midway between rungs, five rungs are about 1.1 posterior sds apart; on
blobs4 with equal neighbours draws from such a ladder were within about 0.1 stationary sds of
the mean energy and had 0.85-1.21 of its variance after 10 sweeps, where a single start needed
28 and the labels 57 (benchmarks/README.md, "A ladder of tuned starts")."""
LADDER_PAYBACK = 1.0
"""How many times over the next window's cheaper sweeps must repay a ladder's draws."""
LOCALITY_WIDTH = 5
"""Nearest neighbours each point's breadth-first search follows (5 and 10 measured alike)."""

_MODEL: contextvars.ContextVar = contextvars.ContextVar("pymc_knn_model", default=None)


def current_model():
    """The model whose steps ``pm.sample`` is assigning (set by :mod:`pymc_knn.safety`)."""
    return _MODEL.get()


def _single_term(model, vars):
    terms = potts_terms(model)
    for rv in terms:
        if rv not in model.observed_RVs:
            raise ValueError(f"{rv.name}: a Potts term must be observed (observed=labels)")
    owners = [t for t in terms if set(vars) & set(potts_parameters(model, t))]
    if len(owners) != 1:
        raise ValueError(
            f"the variables {[v.name for v in vars]} must be parameters of exactly one PottsKNN or "
            f"DistanceNN term; they belong to {len(owners)}"
        )
    return owners[0]


def table_sweeps(term, field) -> tuple[float, float]:
    """What a beta move and a graph move cost beyond their auxiliary draws and bridging fields,
    in sweeps (:attr:`Adaptation.table_sweeps`): on a d-nn term, whose rows hold ``L`` others
    each, a beta move's pass for the energy of its draw (``L / TABLE_ENTRIES_A_SWEEP``) and a
    graph move's table at the proposed ``sigma`` with both energies
    (``L / GRAPH_ENTRIES_A_SWEEP``); nothing on a kNN term, whose moves cost their draws."""
    if term.is_knn:
        return 0.0, 0.0
    width = field.sorted_sq.shape[1]
    return width / TABLE_ENTRIES_A_SWEEP, width / GRAPH_ENTRIES_A_SWEEP[term.graph.kernel]


def _field(term, y) -> mcmc.Field:
    """The kernel's view of a :class:`pymc_knn.terms.PottsTerm`, with labels ``y`` in the data's
    order (a large kNN field numbers its points otherwise: :func:`_locality`)."""
    g = term.graph
    none_i = np.zeros((0, 0), dtype=np.int64)
    none_order = np.zeros((0, 0), dtype=np.int32)
    a = term.class_weights
    beta_max = np.inf if term.beta_max is None else term.beta_max
    if term.is_knn:
        kind = mcmc.KNN_EQUAL if g.kind == "equal" else mcmc.KNN_SYMMETRISED
        perm, rank = _locality(g)
        return mcmc.KnnField(
            kind,
            g.neighbours,
            g.reverse_rank,
            none_order,
            np.zeros((0, 0)),
            0,
            0.0,
            a,
            y[perm] if perm.size else y,
            g.energy_all_k(y, a),
            g.k_max,
            beta_max,
            0,
            _new_dropped(),
            NO_SHELLS,
            0.0,
            perm,
            rank,
            0.0,
            False,
            NO_DISTANCE_TABLE,
        )
    order, sorted_sq = g.sorted_rows()
    shells, shell_step = g.shells
    return mcmc.DnnField(
        mcmc.DNN,
        none_i,
        none_i,
        order,
        sorted_sq,
        DNN_KERNELS[g.kernel],
        g.epsilon,
        a,
        y,
        np.zeros(0),
        0,
        beta_max,
        g.n_points - 1,
        _new_dropped(),
        shells,
        shell_step,
        NO_ORDER,
        NO_ORDER,
        g.drop_tol,
        False,
        _distances(g, sorted_sq),
    )


def _distances(graph, sorted_sq) -> np.ndarray:
    """The distances of an exponential kernel's full table (``sqrt(sorted_sq)``, the same to the
    bit as the square roots its rows would otherwise take at every coupling: about a fifth of
    a coupling's time on 250-1,000 points), else none. A kept table (from ``UNCAPPED_N`` points) keeps
    its square roots: its memory is what limits it."""
    if graph.kernel != "exponential" or sorted_sq.shape[1] < graph.n_points - 1:
        return NO_DISTANCE_TABLE
    return np.sqrt(sorted_sq)


def _locality(graph) -> tuple[np.ndarray, np.ndarray]:
    """``(perm, rank)``: from :data:`LOCALITY_POINTS` points on, the kNN field numbers them
    breadth first over the graph (point ``perm[r]`` becomes ``r``, ``rank`` the inverse), so
    that a sweep finds neighbours' labels near each other in memory; below, both empty (the
    data's order, and the draws of earlier versions)."""
    if graph.n_points < LOCALITY_POINTS:
        return NO_ORDER, NO_ORDER
    perm = breadth_first_order(graph.neighbours, LOCALITY_WIDTH)
    rank = np.empty_like(perm)
    rank[perm] = np.arange(perm.size)
    return perm, rank


def _data_order(f: mcmc.Field, z) -> np.ndarray:
    """Labels ``z`` of field ``f`` in the data's order."""
    return z[f.rank] if f.rank.size else z


def _new_dropped() -> np.ndarray:
    """The kernel's record of a draw's couplings: the largest bound on a row's dropped weight,
    and the largest and smallest sigma asked for."""
    return np.array([0.0, -np.inf, np.inf])


@dataclass
class ChainState:
    """What one chain carries from draw to draw (reset for every chain)."""

    adaptation: Adaptation
    z: np.ndarray
    plug_in: np.ndarray  # Møller: (beta_hat, theta_hat, whether z is set)
    aux: Any = None  # mcmc.Auxiliary, its sweeps tuned per chain
    relaxed: bool = True  # the latest relaxation check passed within MAX_AUX_SWEEPS
    relaxed_at: tuple = ()  # (beta, theta, sweeps) of the latest check that passed
    observed_sweeps: int = AUX_SWEEPS  # the sweeps chains from the observed labels need
    value_sweeps: dict = field(default_factory=dict)  # ... at other frequent values of k
    value_checks: dict = field(default_factory=dict)  # ... where their checks last passed as is
    ladder: tuple = ()  # the latest ladder that passed its checks: (rungs, sweeps, start)
    main_aux: Any = None  # the auxiliary draws chosen at the current k (before other values')
    tuned_tried: bool = False  # start="tuned": a settled window has considered a tuned start
    ladder_tried: int = 0  # the labels' sweeps when a ladder was last drawn (0: never)
    settled_checked: bool = False  # a window after the first has chosen the sweeps afresh
    started: bool = False
    warned: bool = False
    warned_dropped: bool = False
    couplings: Any = None  # the kernel's last two couplings (mcmc.new_couplings); None: anew
    ridge_seeds: int = 0  # windows in a row whose stuck k had its ridge seeded (_seed_ridge)
    x: Any = None  # the chain's latest position (the layout's vector)
    prior_bound: str = ""  # the prior bounds the tuned posterior presses against


@dataclass_state
class PottsStepState(StepMethodState):
    chain: Any = field(default=None)
    tune: bool = True


class PottsStep(BlockedStep):
    """Shared adapter: variables, checks, the chain's start, tuning, the kernel call, stats.

    Subclasses set ``name``, ``method`` (a kernel method code) and ``competence``.
    """

    default_blocked = True
    _state_class = PottsStepState
    method = mcmc.EXCHANGE
    stats_dtypes_shapes = {
        "accept": (np.float64, []),
        "accepted": (np.float64, []),
        "tune": (bool, []),
        "iterations": (np.int64, []),
        "scaling": (np.float64, []),
        "graph_step": (np.float64, []),
        "graph_share": (np.float64, []),
        "aux_sampler": (np.dtype("U16"), []),
        "aux_start": (np.dtype("U8"), []),
        "aux_sweeps": (np.float64, []),
        "aux_exact": (bool, []),
        "aux_energy": (np.float64, []),
        "bridge_sweeps": (np.int64, []),
        "screened": (np.int64, []),
        "dnn_dropped": (np.float64, []),
        # at most "beta lower, beta upper, sigma lower, sigma upper"
        "prior_bound": (np.dtype("U64"), []),
    }
    _bridge0, _adapt_bridge, _max_bridge, _delayed = 0, False, MAX_BRIDGE, mcmc.SCREEN_NONE
    warn_prior_bounds = True
    """Whether the chains warn of a prior bound the posterior presses against (it is recorded
    in sample_stats either way); the estimator sets it False and warns once itself."""
    _field: mcmc.Field
    _field_pid: int | None

    def __init__(
        self,
        vars=None,
        *,
        model=None,
        blocked=True,
        initial_point=None,
        compile_kwargs=None,
        sampler="swendsen_wang",
        sweeps=None,
        start="auto",
        max_sweeps=CFTP_MAX_SWEEPS,
        proposal_sd=None,
        k_radius=None,
        iterations_per_draw=None,
        max_iterations_per_draw=MAX_ITERATIONS_PER_DRAW,
        target_accept=TARGET_ACCEPT,
        tune=True,
        rng=None,
    ):
        model = pm.modelcontext(model)
        if vars is None:
            terms = potts_terms(model)
            if len(terms) != 1:
                raise ValueError("give vars=: the model has %d Potts terms" % len(terms))
            vars = potts_parameters(model, terms[0])
        vars = get_value_vars_from_user_vars(vars, model)
        self.term_rv = _single_term(model, vars)
        allowed = potts_parameters(model, self.term_rv)
        stray = [v.name for v in vars if v not in allowed]
        if stray:
            raise ValueError(f"{stray} are not parameters of the Potts term {self.term_rv.name!r}")
        self.vars = vars
        self.node = potts_node(self.term_rv)
        self.term = self.node.op.term
        self._missing = missing_labels(model, self.term_rv)
        self.y = term_labels(model, self.term_rv)
        default = model.initial_point()  # pm.sample's initial_point holds the user's initvals
        point = default if initial_point is None else initial_point
        if self.term.is_knn:  # Cucala et al.'s bound on k: the smallest observed class
            known = self.y if self._missing is None else np.delete(self.y, self._missing[0])
            self._k_top = max(self.term.graph.k_max, max_k(known))
        if self._missing is not None:
            self.y = impute_nearest(self.term, self.y)
        self.aux = self._auxiliary(sampler, sweeps, start, max_sweeps)
        self.proposal_sd = (
            None if proposal_sd is None else check_positive(proposal_sd, "proposal_sd")
        )
        self.k_radius = self._check_k_radius(k_radius)
        self.iterations_per_draw = _check_count(iterations_per_draw, "iterations_per_draw")
        self.max_iterations_per_draw = _check_count(
            max_iterations_per_draw, "max_iterations_per_draw"
        )
        if not 0.0 < float(target_accept) < 1.0:
            raise ValueError(f"target_accept must be in (0, 1), got {target_accept!r}")
        self.target_accept = float(target_accept)
        self.tune = self.adapt = bool(tune)
        self.rng = np.random.default_rng(rng)
        self._default = {v.name: np.asarray(default[v.name]) for v in vars}
        self.tractable = TractableLogp(model, self.term_rv, vars, point)
        self.layout = self.tractable.layout
        self._positions(model)
        self.field = _field(self.term, self.y.copy())
        self._plateau = self._ball_plateau(model)
        if self.term.is_knn:
            self._check_k_prior(point)
        self._check_beta_support(model, point)
        self._check_expression_support(model)
        if self.term.beta_max is not None:
            self._check_beta_prior(model, point)
        self._start_vars = self._start_variables(model)
        free = set(model.free_RVs)
        self._fixed_prior = [  # a prior whose bounds are free variables cannot be probed
            not (set(ancestors(rv.owner.inputs)) & free) for _, _, _, rv, _ in self._start_vars
        ]
        self._profile_cache = None
        self.chain = self._new_chain()
        note_first_compile(mcmc.run_iterations, type(self.field).__name__, type(self.aux).__name__)

    # -- construction ---------------------------------------------------------------------

    @property
    def field(self) -> mcmc.Field:
        """The kernel's view of the term. Whether its d-nn couplings and energies may use
        numba's thread pool is decided in the process that samples (:func:`may_thread`): a
        chain alone in the main process uses the idle cores, PyMC's chain processes one each."""
        pid = os.getpid()
        if self._field_pid != pid:
            self._field = self._field._replace(parallel=may_thread())
            self._field_pid = pid
        return self._field

    @field.setter
    def field(self, f: mcmc.Field) -> None:
        self._field, self._field_pid = f, None

    def _auxiliary(self, sampler, sweeps, start, max_sweeps) -> mcmc.Auxiliary:
        self.sampler = self.term.check_sampler(sampler)
        if start not in ("auto", "observed", "tuned", "random"):
            raise ValueError(
                f"start must be 'auto', 'observed', 'tuned' or 'random', got {start!r}"
            )
        self.sweeps = None if sweeps is None else _check_count(sweeps, "sweeps")
        self.max_sweeps = _check_count(max_sweeps, "max_sweeps")
        # only the Markov chain samplers' draws are approximate, and they relax with sweeps
        self._tune_sweeps = (
            sweeps is None and self.method != mcmc.PSEUDO and sampler in ("swendsen_wang", "gibbs")
        )
        if start == "auto":
            start = "tuned" if self._tune_sweeps and self._tuned_by_default() else "observed"
        self.start = start
        self._start_code = mcmc.START_RANDOM if start == "random" else mcmc.START_OBSERVED
        self._no_labels = mcmc.no_start_labels(self.term.n_classes)
        typed = mcmc.SwendsenWangAuxiliary if self.sampler == "swendsen_wang" else mcmc.Auxiliary
        return typed(
            self.method,
            _SAMPLERS[self.sampler],
            self.sweeps or AUX_SWEEPS,
            self._start_code,
            self.max_sweeps,
            self._no_labels,
            mcmc.NO_BETAS,
            mcmc.NO_THETAS,
        )

    def _observed(self, aux) -> mcmc.Auxiliary:
        """``aux`` starting from the observed labels (or uniform ones, ``start="random"``)."""
        return aux._replace(
            start=self._start_code,
            start_labels=self._no_labels,
            start_betas=mcmc.NO_BETAS,
            start_thetas=mcmc.NO_THETAS,
        )

    def _tuned_by_default(self) -> bool:
        """What ``start="auto"`` means where the sweeps are tuned: a kNN term of
        :data:`TUNED_START_POINTS` points or more; a d-nn term of as many up to
        :data:`LARGE_POINTS`."""
        n = self.term.graph.n_points
        return n >= TUNED_START_POINTS and (self.term.is_knn or n < LARGE_POINTS)

    def _screened_by_default(self) -> bool:
        """What ``delayed_acceptance="auto"`` means: a kNN term of :data:`LARGE_POINTS` points
        or more; a d-nn term with the gaussian or exponential kernel of :data:`DNN_SCREEN_POINTS`
        up to :data:`LARGE_POINTS`."""
        g = self.term.graph
        if self.term.is_knn:
            return g.n_points >= LARGE_POINTS
        return g.kernel != "ball" and DNN_SCREEN_POINTS <= g.n_points < LARGE_POINTS

    def _check_k_radius(self, k_radius):
        if k_radius is None:
            return max(1, round(self.term.graph.k_max / 20)) if self.term.is_knn else 1
        return _check_count(k_radius, "k_radius")

    def _positions(self, model):
        """Where the block's coordinates sit in ``x``: beta's (continuous, leaving the graph
        alone) and the graph's (any that ``k`` or ``sigma`` depends on, and any discrete one),
        with the cut of each discrete move: ``[1, k_max]`` for a ``k`` that is the term's own
        input, none otherwise."""
        theta_rv = self.node.inputs[3]
        moves_graph = set(ancestors([theta_rv]))
        free, graph, discrete, lower, upper = [], [], [], [], []
        for v, sl in zip(self.vars, self.layout.slices):
            idx = list(range(sl.start, sl.stop))
            rv = model.values_to_rvs[v]
            is_int = v.dtype.startswith("int")
            if not is_int and rv not in moves_graph:
                free += idx
                continue
            direct = is_int and self.term.is_knn and rv is theta_rv
            if direct and self.term.graph.k_max == 1:
                continue  # k = 1 is the only value: nothing to move
            graph += idx
            discrete += [is_int] * len(idx)
            lower += [1 if direct else -_NO_CUT] * len(idx)
            upper += [self.term.graph.k_max if direct else _NO_CUT] * len(idx)
        as_int = lambda a: np.asarray(a, dtype=np.int64)  # noqa: E731
        self._free, self._graph = as_int(free), as_int(graph)
        self._discrete = np.asarray(discrete, dtype=bool)
        self._lower, self._upper = as_int(lower), as_int(upper)

    def _ball_plateau(self, model) -> np.ndarray:
        """The ball kernel's plateau move (:class:`~pymc_knn.kernels.mcmc.Proposal`'s
        ``plateau``) where ``sigma`` is a free variable of the block with a transform of its own:
        the graph is that of ``sigma -> 0`` up to the data's smallest positive distance ``top``
        (the largest float whose square is at most the smallest squared one). None where a row
        of a kept table holds only points at distance 0 (its nearest other point, and so
        ``top``, may lie beyond the table)."""
        rv = self.node.inputs[3]
        if self.term.is_knn or self.term.graph.kernel != "ball" or rv not in model.free_RVs:
            return mcmc.NO_PLATEAU
        value_var = model.rvs_to_values[rv]
        sl = next((sl for v, sl in zip(self.vars, self.layout.slices) if v is value_var), None)
        if sl is None:
            return mcmc.NO_PLATEAU
        sq = smallest_positive_sq(self.field.sorted_sq)
        if not np.isfinite(sq):
            return mcmc.NO_PLATEAU
        top = math.sqrt(sq)
        while top * top > sq:
            top = math.nextafter(top, 0.0)
        edge = _to_value(rv, model.rvs_to_transforms.get(rv), top)
        if edge is None:
            return mcmc.NO_PLATEAU
        j = int(np.flatnonzero(self._graph == sl.start)[0])
        return np.array([j, top, float(edge), PLATEAU_MOVES])

    def _new_chain(self) -> ChainState:
        adaptation = Adaptation(
            self._free.size,
            self._discrete,
            self.proposal_sd or PROPOSAL_SD,
            self.k_radius,
            np.minimum(self._upper - self._lower, 1 << 20),
            iterations=self.iterations_per_draw or 1,
            adapt_iterations=self.iterations_per_draw is None,
            max_iterations=self.max_iterations_per_draw,
            target_accept=self.target_accept,
            bridge=self._bridge0,
            adapt_bridge=self._adapt_bridge and self.adapt,
            max_bridge=self._max_bridge,
            delayed=self._delayed,
            plateau=self._plateau,
            aux_sweeps=self.aux.sweeps,
            table_sweeps=table_sweeps(self.term, self.field),
        )
        return ChainState(adaptation, self.field.y.copy(), np.zeros(3), aux=self.aux)

    def _recorded(self, x, proposal, iterations, rng):
        """``iterations`` of the kernel with ``proposal`` from ``x`` (left as it is), recorded
        as tuning records them, for benchmarks and tests that read its moves: the trace (beta,
        ``k`` or ``sigma``, the block's coordinates), each iteration's acceptance probability and
        move type, and the auxiliary draws made."""
        lp, beta, theta = self.tractable.evaluate(x)
        n = iterations
        trace = np.empty((n, 2 + self._free.size + self._graph.size))
        accept, move = np.empty(n), np.empty(n, dtype=np.int64)
        out = mcmc.run_iterations(
            self.tractable.kernel_fn,
            x.copy(),
            np.array([lp, beta, theta]),
            self.field,
            self.chain.aux,
            proposal,
            self.chain.z,
            self.chain.plug_in,
            n,
            trace,
            accept,
            np.empty(n),
            move,
            np.empty((n, 3)),
            rng,
            mcmc.new_couplings(self.field),
        )
        return trace, accept, move, out[4]

    def _eval_at(self, point):
        return self.tractable.evaluate(self.layout.to_x(point))

    def _check_k_prior(self, point):
        """A prior on k must not put mass beyond k_max: the cut would silently truncate it."""
        K = self.term.graph.k_max
        for v in self.vars:
            if not v.dtype.startswith("int"):
                continue
            lp, _, theta = self._eval_at({**point, v.name: np.asarray(K + 1, dtype=v.dtype)})
            if np.isfinite(lp) and theta == K + 1:
                raise ValueError(
                    f"the prior of {v.name} allows k = {K + 1} > k_max = {K} (the smallest observed "
                    f"class size bounds k, Cucala et al. 2009, section 3): give it an upper bound "
                    f"<= {K}, e.g. pm.DiscreteUniform({v.name!r}, 1, {K})"
                )
            lp, _, theta = self._eval_at({**point, v.name: np.asarray(0, dtype=v.dtype)})
            if np.isfinite(lp) and theta == 0:
                raise ValueError(
                    f"the prior of {v.name} allows k = 0: the number of neighbours is >= 1, and "
                    f"the sampler would silently cut the prior there. Give it a lower bound of 1, "
                    f"e.g. pm.DiscreteUniform({v.name!r}, 1, {K})"
                )

    def _value_at(self, model, point, role, input_value):
        """``(lp, beta, theta)`` where the term's free beta (``role`` 0) or sigma (1) is
        ``input_value``, or None when it is an expression or the value lies outside its
        transform."""
        rv = self.node.inputs[2 + role]
        if rv not in model.free_RVs:
            return None
        value = _to_value(rv, model.rvs_to_transforms.get(rv), np.asarray(input_value, float))
        if value is None:
            return None
        return self._eval_at({**point, model.rvs_to_values[rv].name: value})

    def _beta_value_at(self, model, point, beta_value):
        found = self._value_at(model, point, 0, beta_value)
        return None if found is None else found[:2]

    def _check_beta_support(self, model, point):
        """A free beta's (or sigma's) prior must not put mass below 0: the kernel would reject
        every such proposal, silently truncating the prior."""
        roles = (0,) if self.term.is_knn else (0, 1)
        for role, value in ((r, v) for r in roles for v in (-0.5, -1e-6)):
            found = self._value_at(model, point, role, value)
            if found is None or not np.isfinite(found[0]):
                continue
            if role == 0:
                raise ValueError(
                    f"the prior of beta puts mass on beta < 0 (beta = {value:g} has positive "
                    "density): the interaction parameter of a Potts field is >= 0 (Cucala et "
                    "al. 2009, section 2). Give it a prior on [0, inf), e.g. pm.Uniform('beta', "
                    "0, 4) or pm.HalfNormal"
                )
            raise ValueError(
                f"the prior of sigma puts mass on sigma <= 0 (sigma = {value:g} has positive "
                "density): the kernel scale is > 0, and the sampler would silently cut the "
                "prior there. Give it a prior on (0, inf), e.g. pm.Uniform('sigma', 0, 2) or "
                "pm.HalfNormal"
            )

    def _check_expression_support(self, model):
        """A beta, k or sigma whose prior involves free variables other than itself (an
        expression of them, a Deterministic, or a variable whose prior's bounds are free) must
        stay in range under that prior, or the kernel's rejections would truncate it silently;
        beta must also stay within ``beta_max``. The point checks (:meth:`_check_beta_support`,
        :meth:`_check_k_prior`, :meth:`_check_beta_prior`) see such a prior at one value of its
        free inputs only: checked on ``PRIOR_CHECK_DRAWS`` draws from the joint prior instead
        (skipped for priors PyMC cannot draw; a proposal past ``beta_max`` still stops the
        sampler with the same error)."""
        free = set(model.free_RVs)
        for role, expr in enumerate(self.node.inputs[2:4]):
            inputs = expr.owner.inputs if expr in free else [expr]
            if not set(ancestors(inputs)) & free:
                continue
            try:
                draws = np.asarray(pm.draw(expr, draws=PRIOR_CHECK_DRAWS, random_seed=0), float)
            except NotImplementedError:  # e.g. pm.Flat: no prior draws
                continue
            name = expr.name or ("beta" if role == 0 else "theta")
            kind = (
                "a free variable whose prior has free inputs"
                if expr in free
                else "an expression of free variables"
            )
            if role == 0 and self.term.beta_max is not None and (draws > self.term.beta_max).any():
                raise ValueError(
                    f"{name} ({kind}) reaches past beta_max = {self.term.beta_max:g} under its "
                    f"prior: {(draws > self.term.beta_max).sum()} of {PRIOR_CHECK_DRAWS} prior "
                    f"draws (up to {draws.max():.4g}); beyond beta_max the field is frozen in one "
                    "class and its auxiliary draws break down (Cucala et al. 2009, section 3). "
                    f"Give its inputs priors that keep it within [0, {self.term.beta_max:g}]"
                )
            if role == 0:
                bad, what = draws < 0, "beta < 0 (the interaction parameter is >= 0)"
            elif self.term.is_knn:
                bad = (draws < 1) | (draws > self.term.graph.k_max)
                what = f"k outside 1..k_max = {self.term.graph.k_max}"
            else:
                bad, what = ~(draws > 0), "sigma <= 0 (the kernel scale is > 0)"
            if bad.any():
                raise ValueError(
                    f"{name} ({kind}) puts prior mass on {what}: {bad.sum()} of "
                    f"{PRIOR_CHECK_DRAWS} prior draws; the sampler would reject those values and "
                    "silently truncate the prior. Give its inputs priors that keep it in range"
                )

    def _check_beta_prior(self, model, point):
        """When beta is a free variable, its prior must not reach past the term's beta_max (at
        the point's values of its prior's inputs; see also :meth:`_check_expression_support`)."""
        found = self._beta_value_at(model, point, self.term.beta_max * (1 + 1e-6) + 1e-9)
        if found is not None and np.isfinite(found[0]):
            raise self._beta_error(found[1])

    def _beta_error(self, beta):
        return ValueError(
            f"the prior of beta reaches past beta_max = {self.term.beta_max:g} (here beta = "
            f"{float(beta):.4g} has positive prior density): beyond beta_max the field is frozen "
            f"in one class and its auxiliary draws break down (Cucala et al. 2009, section 3). "
            f"Bound the prior, e.g. pm.Uniform('beta', 0, {self.term.beta_max:g})"
        )

    @staticmethod
    def competence(var, has_grad):
        return Competence.INCOMPATIBLE

    # -- the start of a chain -------------------------------------------------------------

    def _profile(self, beta_upper):
        if self._profile_cache is None or self._profile_cache[0] != beta_upper:
            profile = self.term.pseudo_likelihood_profile(self.y, beta_upper)
            self._profile_cache = (beta_upper, profile)
        return self._profile_cache[1]

    def mple(self, beta_upper: float = 4.0):
        """The maximum pseudo-likelihood estimate ``(beta, theta)`` of the observed labels."""
        thetas, beta_hat, log_pl = self._profile(beta_upper)
        best = int(np.argmax(log_pl))
        return float(beta_hat[best]), thetas[best].item()

    def _beta_upper(self):
        return self.term.beta_max if self.term.beta_max is not None else 4.0

    def _start_variables(self, model):
        """The block's scalar variables that are the term's beta or theta themselves."""
        out = []
        for v, sl in zip(self.vars, self.layout.slices):
            rv = model.values_to_rvs[v]
            for role, term_input in enumerate(self.node.inputs[2:4]):
                if rv is term_input and sl.stop - sl.start == 1:
                    out.append((v.name, sl, role, rv, model.rvs_to_transforms.get(rv)))
        return out

    def _start_values(self, x):
        """The maximum pseudo-likelihood estimate among the thetas the prior allows, on the
        value scale of each start variable (``x``: the chain's position, for the prior)."""
        if not hasattr(self, "_start_cache"):
            thetas, beta_hat, log_pl = self._profile(self._beta_upper())
            best = int(np.argmax(np.where(self._prior_allows(thetas, x), log_pl, -np.inf)))
            mple = (float(beta_hat[best]), thetas[best].item())
            self._start_cache = {}
            for name, _, role, rv, transform in self._start_vars:
                value = _to_value(rv, transform, np.asarray(mple[role], dtype=float))
                if value is not None:
                    self._start_cache[name] = float(value)
        return self._start_cache

    def _prior_allows(self, thetas, x) -> np.ndarray:
        """Whether the prior gives each theta positive density at the chain's position ``x`` (a
        prior narrower than the graph, e.g. ``k ~ U{1..50}`` with ``k_max = 100``)."""
        allowed = np.ones(thetas.size, dtype=bool)
        for _, sl, role, rv, transform in self._start_vars:
            if role != 1:
                continue
            for i, theta in enumerate(thetas):
                value = _to_value(rv, transform, np.asarray(theta, dtype=float))
                if value is None:
                    allowed[i] = False
                    continue
                x1 = x.copy()
                x1[sl] = value
                allowed[i] = np.isfinite(self.tractable.evaluate(x1)[0])
        return allowed if allowed.any() else np.ones(thetas.size, dtype=bool)

    def _start(self, x):
        """``x`` with the block's variables that sit at the model's default initial value moved
        near the maximum pseudo-likelihood estimate, jittered per chain (the default start, the
        support point, may lie far out in the tails; custom steps get no jitter from PyMC), or
        at the estimate itself where the jitter leaves the prior's support."""
        values = self._start_values(x)
        for jitter in (START_JITTER, 0.0):
            new = x.copy()
            for name, sl, _, _, _ in self._start_vars:
                if name not in values or not np.array_equal(x[sl], np.ravel(self._default[name])):
                    continue
                u = self.rng.uniform(-jitter, jitter) if jitter else 0.0
                if self.layout.dtypes[self.layout.names.index(name)].startswith("int"):
                    top = self.term.graph.k_max if self.term.is_knn else np.inf
                    new[sl] = min(max(1, round(values[name] * np.exp(u))), top)
                else:
                    new[sl] = values[name] + u
            lp, beta, theta = self.tractable.evaluate(new)
            f = self.field
            if np.isfinite(lp) and mcmc._valid(f, beta, theta) and beta <= f.beta_max:
                return new
        return x

    def _start_scale(self, x):
        """The beta move's first step when ``proposal_sd`` is not given: 2.38 sds of the normal
        approximation of the pseudo-likelihood at the start, on the value scale, at most
        ``PROPOSAL_SD`` (None where beta is not the block's one continuous coordinate). The posterior of beta narrows as
        ``1 / sqrt(n)``: from a fixed 0.5 the tuning spent most of PyMC's 1000 tuning draws
        shrinking the step on 10^5 points."""
        beta_vars = [sl for _, sl, role, _, _ in self._start_vars if role == 0]
        if self._free.size != 1 or not beta_vars or beta_vars[0].start != self._free[0]:
            return None
        _, beta, theta = self.tractable.evaluate(x)
        info = self.term.pseudo_likelihood_information(self.y, beta, theta)
        slope = self._d_beta(x)
        if not (info > 0 and np.isfinite(slope) and slope != 0):
            return None
        return min(START_SDS / (math.sqrt(info) * abs(slope)), PROPOSAL_SD)

    def _d_beta(self, x) -> float:
        """``d beta / d x_i`` at ``x``, ``i`` the block's first continuous coordinate (beta's
        free coordinate), by a central difference."""
        i = int(self._free[0])
        h = 1e-6 * max(1.0, abs(x[i]))
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        return (self.tractable.evaluate(up)[1] - self.tractable.evaluate(down)[1]) / (2 * h)

    # -- tuning ---------------------------------------------------------------------------

    def reset_tuning(self):
        self.chain = self._new_chain()

    def set_rng(self, rng):
        """PyMC's call at the start of every chain (sequential or parallel): a fresh chain."""
        super().set_rng(rng)
        if not self.term.is_knn and self.term.graph.reset():  # widened by an earlier chain
            self.field = _field(self.term, self.field.y)
        self.chain = self._new_chain()
        self.tune = self.adapt

    def stop_tuning(self):
        chain = self.chain
        if self.tune and self.adapt:
            self._widen(chain, final=True)
            chain.adaptation.finish()
            a = chain.adaptation
            if a.adapt_iterations and a.iterations >= a.max_iterations:
                warnings.warn(
                    f"{type(self).__name__}: the chain mixes slowly (integrated autocorrelation "
                    f"time {a.tau:.0f} iterations); the iterations per draw stopped at "
                    f"max_iterations_per_draw={a.max_iterations}, so the draws are correlated. "
                    "Raise it, or draw more",
                    UserWarning,
                    stacklevel=2,
                )
            self._check_prior_bounds(chain)
            if not chain.relaxed:
                warnings.warn(
                    f"{type(self).__name__}: the auxiliary chains had not relaxed after "
                    f"{MAX_AUX_SWEEPS} sweeps at the end of tuning: the auxiliary draws, hence "
                    "the posterior, are approximate. Pass a larger sweeps=, or sampler='cftp' "
                    "(two classes: exact)",
                    UserWarning,
                    stacklevel=2,
                )
        self.tune = False

    def _model_range(self, role) -> tuple[float, float]:
        """Where the model itself (not a prior) bounds beta (``role`` 0) or k / sigma (1):
        ``k`` up to the smallest class size (Cucala et al. 2009, section 3), or the graph's
        ``k_max`` when built wider, not to a ``k_max`` that follows the prior."""
        if role == 0:
            return 0.0, self.term.beta_max if self.term.beta_max is not None else math.inf
        if self.term.is_knn:
            return 1.0, float(self._k_top)
        return math.ulp(0.0), math.inf

    def _prior_cut(self, x, sl, rv, transform, value) -> bool:
        """Whether the prior has no mass at ``value`` of a start variable, ``x`` elsewhere."""
        v = _to_value(rv, transform, np.asarray(value, dtype=float))
        if v is None:
            return True
        x1 = x.copy()
        x1[sl] = v
        return not np.isfinite(self.tractable.evaluate(x1)[0])

    def _check_prior_bounds(self, chain) -> None:
        """Warn when the prior of beta, k or sigma (the term's own inputs) ends the posterior
        where the model itself would go on: a bound within ``BOUND_SDS`` sds of the mean of the
        final tuning draws (for k, or at the next value), or both bounds within half an sd of
        the farthest draws (for k, at the next values), the draws filling a prior narrower than
        the posterior. Recorded per draw as ``prior_bound`` in sample_stats (``"beta upper"``,
        ...), which :func:`pymc_knn.check_prior_bounds` reads in the parent process."""
        rows, x = chain.adaptation.final_rows, chain.x
        if rows is None or x is None:
            return
        found = []
        warn = self.warn_prior_bounds
        for (_, sl, role, rv, transform), fixed in zip(self._start_vars, self._fixed_prior):
            v = rows[:, role]
            m, s = float(v.mean()), float(v.std())
            discrete = role == 1 and self.term.is_knn
            if (s == 0 and not discrete) or not fixed:
                continue  # a point mass, or a prior whose bounds move with other variables
            if _to_value(rv, transform, np.asarray(m)) is None:
                continue
            reach = BOUND_SDS * s
            margin = 1.0 if discrete else 0.5 * s
            low, high = self._model_range(role)

            def cut(probe):
                return low <= probe <= high and self._prior_cut(x, sl, rv, transform, probe)

            if discrete:  # at least the values next to the mean
                probes = (
                    min(math.floor(m - reach), math.ceil(m) - 1),
                    max(math.ceil(m + reach), math.floor(m) + 1),
                )
            else:
                probes = m - reach, m + reach
            near = [cut(probe) for probe in probes]
            fills = cut(v.min() - margin) and cut(v.max() + margin)
            role_name = "beta" if role == 0 else "k" if discrete else "sigma"
            for side, cuts in zip(("lower", "upper"), near):
                if cuts or fills:
                    found.append(f"{role_name} {side}")
                    if warn:
                        why = "near" if cuts else "fills"
                        self._warn_prior_bound(rv.name, role_name, side, v, why)
        chain.prior_bound = ", ".join(found)

    def _warn_prior_bound(self, name, role_name, side, draws, why) -> None:
        widen = ""
        if role_name == "beta":
            widen = " (past pk.beta_max, where the field nears freezing, auxiliary draws slow down)"
        elif role_name == "k":
            widen = f" (up to the smallest class size, {self._k_top}"
            k_max = self.term.graph.k_max
            extra = f"; past k_max = {k_max}, give the likelihood k_max= too)"
            widen += extra if k_max < self._k_top else ")"
        reason = (
            f"the prior ends within {BOUND_SDS:g} sds of their mean (for k, or at the next value)"
            if why == "near"
            else "they fill the prior's range, which ends where they do"
        )
        warnings.warn(
            f"{type(self).__name__}: the posterior of {name} presses against the {side} bound of "
            f"its prior: its final tuning draws have mean {draws.mean():.4g} and sd "
            f"{draws.std():.3g} (from {draws.min():.4g} to {draws.max():.4g}), and {reason}. "
            "The prior, not the data, ends the posterior there (sample_stats prior_bound). If "
            f"that bound is not a belief, widen the prior{widen}",
            PriorBoundWarning,
            stacklevel=4,
        )

    def _window_closed(self, chain):
        """Hook run when an adaptation window closes (Møller moves its plug-in)."""

    def _draw_start(self, chain, beta, theta, s, from_labels=False, ladder=None):
        """Labels for the auxiliary chains to start from, as ``(rows, betas, thetas)`` of
        :class:`mcmc.Auxiliary`'s ``start_labels``, ``start_betas`` and ``start_thetas``.

        Without a ``ladder``, one draw at the latest window's mean ``beta`` and the current
        ``theta`` (``k`` or ``sigma``), from the current start (``from_labels``: from the
        observed labels) with twice the sweeps it needs: a tuned start's own, the observed
        labels' ``s`` (this window's check). With the sweeps the labels needed before this
        window's check (digits with equal neighbours, beta at the prior's bound 4: 81, where
        the check then asked 462), the start was not yet a draw at beta, and chains from it
        needed 231 sweeps to relax where the other chains' starts needed 20-57.

        With a ``ladder`` (:meth:`_ladder`: for each ``theta``, its rungs' betas), at each rung
        ``RELAX_CHAINS`` draws from the observed labels with twice the sweeps they need at its
        ``theta`` (:meth:`_rung_sweeps`), from which a draw at ``(beta', theta')`` starts
        (:func:`mcmc.ladder_row`)."""
        f = self.field
        if ladder is not None:
            observed = self._observed(chain.aux)
            betas = np.array([rungs for _, rungs in ladder], dtype=float)
            # one array filled in place: at 10^5 points a ladder holds 32 MB a value of k
            rows = np.empty((betas.size * RELAX_CHAINS, f.y.size), dtype=self._no_labels.dtype)
            energies = np.full((RELAX_CHAINS, 1), np.nan)  # none recorded
            i = 0
            for (value, rungs), s_v in zip(ladder, self._rung_sweeps(chain, ladder, s)):
                for b in rungs:
                    mcmc.relaxation_sweeps(
                        f,
                        observed,
                        b,
                        value,
                        rows[i * RELAX_CHAINS : (i + 1) * RELAX_CHAINS],
                        energies,
                        0,
                        2 * s_v,
                        2 * s_v + 1,
                        self.rng,
                    )
                    i += 1
            return rows, betas, np.array([value for value, _ in ladder])
        aux = self._observed(chain.aux) if from_labels else chain.aux
        sweeps = aux.sweeps if aux.start == mcmc.START_LABELS else s
        z = np.empty(f.y.size, dtype=np.int64)
        c = mcmc.coupling(f, theta, aux.sampler != mcmc.SWENDSEN_WANG)
        mcmc.auxiliary_draw(f, aux._replace(sweeps=2 * sweeps), c, beta, theta, z, self.rng)
        return z[None].astype(self._no_labels.dtype), np.array([[beta]]), np.array([theta])

    def _starts(self, chain, mean, theta, s, ladder):
        """The tuned starts a window tries in turn (:meth:`_tuned_start`): the latest ladder
        where it still serves this window's (:meth:`_kept_ladder`), then ``TUNED_START_DRAWS``
        fresh draws (:meth:`_draw_start`; a second single start from the labels: one drawn from
        the same tuned start as the first would share its slow components, and a ladder's rows
        are all drawn from the labels)."""
        kept = self._kept_ladder(chain, ladder, s)
        if kept is not None:
            yield kept
        for attempt in range(TUNED_START_DRAWS):
            chain.ladder = ()  # only a ladder that passed its checks is kept
            start = self._draw_start(chain, mean, theta, s, attempt > 0, ladder)
            if ladder is not None:
                chain.ladder = (ladder, self._rung_sweeps(chain, ladder, s), start)
            yield start
        chain.ladder = ()

    def _kept_ladder(self, chain, ladder, s):
        """The chain's latest ladder (its rows) where it can serve for this window's
        ``ladder``: it has rungs at each of its values of ``k``, drawn with as many sweeps, at
        most twice as far apart, whose ends are within a spacing of the window's low and top
        of beta (a window's quantiles move by a third to half a spacing from one to the next).
        On a d-nn term the ladder's ``sigma`` serves wherever it lies within the window's central
        ``2 RELAX_QUANTILE - 1`` of ``sigma`` (a draw starts from the rungs of the nearest
        ``sigma`` whatever the chain's: :func:`mcmc.ladder_row`; each window's mean moves it a
        little, and a ladder at the window's own costs as much again: on digits with the
        gaussian kernel 13-14 s a ladder, a chain's tuning drew four). Its rows are checked as
        a fresh ladder's would be; where they pass, the window saves the ladder's draws (on
        blobs4 with equal neighbours, 2.5-2.8 s a ladder against 4-7 s for the window's
        iterations); else ``None``."""
        if ladder is None or not chain.ladder:
            return None
        old, old_sweeps, start = chain.ladder
        drawn = {value: (rungs, s_v) for (value, rungs), s_v in zip(old, old_sweeps)}
        if not self.term.is_knn:  # one sigma a ladder, which moves a little every window
            low, top = chain.adaptation.theta_range((1 - RELAX_QUANTILE, RELAX_QUANTILE))
            drawn = {ladder[0][0]: drawn[old[0][0]]} if low <= old[0][0] <= top else {}
        for (value, rungs), s_v in zip(ladder, self._rung_sweeps(chain, ladder, s)):
            if value not in drawn or drawn[value][1] < s_v:
                return None
            kept = drawn[value][0]
            h, h_kept = rungs[1] - rungs[0], kept[1] - kept[0]
            low, top = rungs[0] + h / 2, rungs[-1] - h / 2
            if kept[0] - h_kept > low or kept[-1] + h_kept < top or h_kept > 2 * h:
                return None
        return start

    @staticmethod
    def _rung_sweeps(chain, ladder, s):
        """The sweeps from the observed labels a ladder's rungs at each of its values need:
        ``s`` at the chain's ``k`` (the first), at least as many as each other value's checks
        asked (:meth:`_check_frequent`)."""
        return [s] + [max(s, chain.value_sweeps.get(value, 0)) for value, _ in ladder[1:]]

    def _ladder(self, chain, top, low, theta, s):
        """Where a ladder of tuned starts (:meth:`_draw_start`) is drawn, as ``(theta, rungs)``
        pairs, or ``None`` for a single start. For a window whose beta spans ``[low, top]`` (its
        5% and 95% quantiles) at ``theta``, ``LADDER_RUNGS`` rungs a ``LADDER_RUNGS - 2``-th of
        the span apart, so that ``low`` and ``top``, where the draws are checked, lie midway
        between two (where a start mixed from two strays most); the same for every other value
        of ``k`` the window visited often, its span ending at its own top
        (:meth:`Adaptation.frequent_values`, checked there too: :meth:`_check_frequent`). Only
        where the next window's iterations, each ``s' - AUX_SWEEPS`` sweeps cheaper, repay the
        ladder's draws (each twice its value's sweeps from the labels, :meth:`_rung_sweeps`)
        ``LADDER_PAYBACK`` times (its checks, and a second ladder where the first fails, not
        counted). ``s'`` is the most sweeps any of the values needs from the labels: where
        another value needs more than ``s``, a single start is dropped and the window draws with
        those (blobs4 with equal neighbours: a chain drew three windows, 5,600 iterations, with
        the 81 sweeps ``k = 8`` needed where its own ``k`` needed 40, priced at 40)."""
        if low is None or _near(top, low):
            return None
        tops = [(theta, top)] + [
            (value, t) for value, t in chain.adaptation.window_values if value != theta
        ]
        h = (top - low) / (LADDER_RUNGS - 2)
        steps = h * (np.arange(LADDER_RUNGS) - LADDER_RUNGS + 1.5)
        ladder = [(value, np.maximum(t + steps, 0.0)) for value, t in tops]
        sweeps = self._rung_sweeps(chain, ladder, s)
        # without a ladder, where another value needs more sweeps than s a single start is
        # dropped and the draws start from the labels with the most any value needs
        if not self._repays(chain, ladder, s, max(sweeps)):
            return None
        return ladder

    def _repays(self, chain, ladder, s, sweeps):
        """Whether the next window's iterations, drawn with ``AUX_SWEEPS`` instead of
        ``sweeps``, repay ``ladder``'s draws ``LADDER_PAYBACK`` times."""
        cost = LADDER_RUNGS * RELAX_CHAINS * 2 * sum(self._rung_sweeps(chain, ladder, s))
        return chain.adaptation.window_length * (sweeps - AUX_SWEEPS) >= LADDER_PAYBACK * cost

    def _ladder_due(self, chain, top, low, theta, s):
        """Whether a window whose checks would be skipped (its point near the last passed
        check's, :meth:`_relax`) checks again for a ladder: the labels need the sweeps a tuned
        start asks (``2 AUX_SWEEPS``), the draws come from the labels or a single start, no
        ladder was drawn at these sweeps and one now repays its draws from the sweeps the draws
        take. A window twice as long as the one that found a ladder too dear saves twice as
        much: on class20 (1,000 points, exponential kernel, seed 2) a chain whose window of 800
        iterations found a ladder at ``s = 40`` short of its price by 6% (24,000 sweeps saved
        against 25,600) then skipped its checks at every later window, its ``sigma`` within 2%
        of the last check's, and drew all its 4,700 draws' iterations with 40 sweeps from the
        labels where the other chains' ladders drew with 10 or 20."""
        aux = chain.aux
        if s < 2 * AUX_SWEEPS or chain.ladder_tried == s:  # no tuned start, or tried here
            return False
        if aux.start == mcmc.START_LABELS and aux.start_labels.shape[0] > 1:  # a ladder's
            return False
        ladder = self._ladder(chain, top, low, theta, s)
        return ladder is not None and self._repays(chain, ladder, s, aux.sweeps)

    def _check(
        self,
        aux,
        beta,
        theta,
        s,
        reference=None,
        limit=None,
        chains=RELAX_CHAINS,
        confirm=False,
        rng=None,
    ):
        """The fewest sweeps from ``s`` (growing by ``RELAX_GROWTH``, at most ``limit``) after
        which ``chains`` auxiliary chains from ``aux``'s start have relaxed at ``(beta,
        theta)`` (:func:`relaxed`) and, given a ``reference`` (the late windows of chains from
        the observed labels), settled where those did (:func:`agrees`) and spread as far and
        no farther (:func:`spreads`: draws from one start vary too little until its sweeps
        outlast the field's slow components, a ladder's too much until they close the gap
        between its rungs); and have forgotten their start: chains from the observed labels (or
        random ones) have run the energy's time (:func:`forgotten`), and chains from a tuned
        start keep at most ``START_MEMORY`` of its deviation (:func:`mcmc.start_memory`: a
        ladder's rungs share their mean's error with every draw started there). A check that
        fails extends the same chains to the next sweeps (cost: the last check's). With
        ``confirm``, a failure at ``s`` itself is checked again on fresh chains, and only a
        second failure counts. ``rng`` is the step's by default. Returns ``(s, passed, late,
        late_sq)``."""
        limit = MAX_AUX_SWEEPS if limit is None else limit
        rng = self.rng if rng is None else rng
        done, first = 0, s // 2
        while True:
            if not done:
                labels, energies = mcmc.relaxation_state(self.field, chains, MAX_AUX_SWEEPS)
            mcmc.relaxation_sweeps(
                self.field, aux, beta, theta, labels, energies, done, 2 * s, first, rng
            )
            done = 2 * s
            early, late, late_sq = mcmc.relaxation_windows(energies, s)
            settled = reference is None or (
                agrees(late, *reference) and spreads(mcmc.spread_at(energies, s), *reference)
            )
            if aux.start == mcmc.START_LABELS:
                forgets = mcmc.start_memory(energies, s) <= START_MEMORY
            else:
                forgets = forgotten(late, late_sq, s)
            ok = relaxed(early, late, late_sq) and settled and forgets
            if ok:
                return s, ok, late, late_sq
            if confirm:
                confirm, done = False, 0
                continue
            if s >= limit:
                return s, ok, late, late_sq
            s = min(max(s + 1, round(s * RELAX_GROWTH)), limit)

    def _relax(self, chain, beta, theta, low=None, mean=None):
        """Tune the auxiliary draws at ``(beta, theta)`` (the window's 95% quantile of beta,
        where the field orders) and at ``low`` (its 5% quantile): the sweeps from the observed
        labels (:meth:`_check`, from the current: they never fall, a check being noisy, but the
        first window's do not bind the later ones, so the first window's check runs only
        ``FIRST_RELAX_CHAINS`` and at ``beta`` only; at most ``MAX_AUX_SWEEPS``) and, given the
        window's ``mean`` (``start="tuned"``), a start drawn there once those sweeps are known
        (:meth:`_draw_start`; a ladder of starts where it repays its draws, :meth:`_ladder`),
        used with fewer sweeps (from ``AUX_SWEEPS``) if chains from it settle where the chains
        from the observed labels do and vary as much, at ``beta`` and at ``low``
        (:meth:`_tuned_start`); a start that fails is followed by a second
        (``TUNED_START_DRAWS``) before the observed labels are kept.

        Chains from the labels may relax slowest below the mean: on eight classes with equal
        neighbours (``k = 6``) they are 0.2 stationary sd from their mean after 192 sweeps at
        beta 3.44 and 0.47 sd at 3.38, but within 0.02 at 3.52, where the window's 95% quantile
        lies. The check at ``low`` draws from a stream jumped ahead of the step's and a failure
        counts only when fresh chains confirm it (as at other frequent values of ``k``,
        :meth:`_check_frequent`), so where it passes the draws are as without it.

        The observed labels have the posterior's energy but not a draw's structure: one sweep
        from them drops the energy by 5-10 sds at 10^5 points, and it takes 13-20 sweeps to come
        back; chains from a draw stay within the check's tolerance after a few. The checks on
        both sides of the mean and the agreement keep a start in one phase of a field at its ordering
        transition (chains from it can sit there for hundreds of sweeps: no drift, yet not the
        stationary law) from being taken for a relaxed one (docs/inference.md). A point within
        ``RELAX_SAME`` (relative) of the latest passed check, at the same sweeps, is not checked
        again (nor is the start drawn again; the window's other frequent values of ``k`` still
        are, :meth:`_check_frequent`): once a large data set's posterior has narrowed,
        every later window would repeat checks that cost ``RELAX_CHAINS`` auxiliary runs; but
        the first window that asks for a tuned start always gets its checks (the tuned start's
        agreement needs chains from the labels at this very beta), and so does one where a
        ladder now repays its draws and none was drawn at these sweeps (:meth:`_ladder_due`)."""
        s = chain.observed_sweeps
        if chain.adaptation.settled and not chain.settled_checked:
            # the first window may lie on the chain's way to the posterior (on digits, a k that
            # it left for good asked for 81 sweeps, where the posterior's needs 20): its sweeps
            # do not bind the later windows', which never fall
            chain.settled_checked = True
            s, chain.relaxed_at = AUX_SWEEPS, ()
        skip = chain.relaxed_at and chain.relaxed_at[2] == s and (mean is None or chain.tuned_tried)
        if skip:
            b, t, _ = chain.relaxed_at
            skip = _near(b, beta) and _near(t, theta)
        if skip and mean is not None:
            skip = not self._ladder_due(chain, beta, low, theta, s)
        if not skip:
            chain.tuned_tried = chain.tuned_tried or mean is not None
            observed = self._observed(chain.aux)
            ok_low, ref_low = True, None
            settled = chain.adaptation.settled
            if settled and low is not None and not _near(beta, low):
                s, ok_low, *windows = self._check(
                    observed._replace(sweeps=s), low, theta, s, confirm=True, rng=self._side_rng()
                )
                ref_low = tuple(windows)
            chains = RELAX_CHAINS if settled else FIRST_RELAX_CHAINS
            s, ok, late, late_sq = self._check(observed, beta, theta, s, chains=chains)
            ok = ok and ok_low
            aux = observed._replace(sweeps=s)
            if mean is not None and ok and s >= 2 * AUX_SWEEPS:
                betas = (beta,) if low is None else (beta, low)
                ladder = self._ladder(chain, beta, low, theta, s)
                if ladder is not None:
                    chain.ladder_tried = s
                for start in self._starts(chain, mean, theta, s, ladder):
                    tuned = self._tuned_start(aux, start, betas, theta, ((late, late_sq), ref_low))
                    if tuned.start == mcmc.START_LABELS:
                        aux = tuned
                        break
            chain.observed_sweeps = s
            chain.main_aux = aux
            chain.relaxed_at = (beta, theta, s) if ok else ()
        ok, aux = bool(chain.relaxed_at), chain.main_aux
        if chain.adaptation.settled:
            ok, aux = self._check_frequent(chain, theta, s, ok, aux)
        chain.aux = aux
        chain.relaxed = ok
        chain.adaptation.aux_sweeps = max(aux.sweeps, chain.observed_sweeps)

    def _side_rng(self) -> np.random.Generator:
        """A stream jumped ahead of the step's (the step's own where its bit generator cannot
        jump): checks that draw from it leave the step's draws as they were."""
        jumped = getattr(self.rng.bit_generator, "jumped", None)
        return np.random.Generator(jumped()) if jumped is not None else self.rng

    def _check_frequent(self, chain, theta, s, ok, aux):
        """The sweeps checked again at every other value of ``k`` that the window visited often
        (:meth:`Adaptation.frequent_values`, each at its own top of beta): the current ``k``
        may relax faster than another the chain spends time at (eight classes, beta 2.43: after
        128 sweeps from the labels, chains at ``k = 6`` are within 0.25 stationary sd of their
        mean, at ``k = 5`` 1.25 sds behind). Each value's check starts from the larger of ``s``
        (the current ``k``'s) and what that value needed before (kept per value, never falling),
        and a failure counts only when fresh chains confirm it (a check at the right sweeps fails
        about one time in ten: unconfirmed, every extra check would raise sweeps by chance).
        The draws use the most any of the window's frequent values needs, so a value a chain
        visited on its way and then left (digits: ``k = 4``, beta at its bound 4, 57 sweeps where
        the posterior's ``k = 3`` needs 20) stops costing sweeps once no window holds it. A
        tuned start is checked at every such value too (one checked at a single ``k`` is not
        used at another that relaxes more slowly: eight classes, docs/inference.md), its sweeps
        growing up to one growth step below the labels' there (as at the chain's ``k``,
        :meth:`_tuned_start`); one whose chains settle elsewhere than the labels' there, spread
        otherwise or keep their start is dropped, and the draws then start from the labels with
        the most sweeps any value needs. A single start is checked only where the labels need
        no more sweeps there than at the chain's ``k``, elsewhere dropped: its chains' memory of
        it does not show in their energies' slope on their starts' (:func:`mcmc.start_memory`),
        and on the eight classes one that passed its checks at both ``k`` left its chain a fifth
        of beta's sd low. (Dropped wherever a value needed more sweeps from the labels than the
        chain's ``k``, a ladder on blobs4 with equal neighbours that its chains left at 14-28
        sweeps at three values of ``k`` gave way to the labels' 81 at ``k = 8``: one chain of four
        took 36 s of the fit's 56.) The checks draw from a stream jumped ahead of the step's, so
        a chain whose checks all pass keeps its draws. A value whose checks last passed as they
        stood (the labels at their first sweeps, the tuned start at its own) with the same draws
        and ``s``, at a beta within ``RELAX_SAME``, is not checked again, as the chain's own
        value is not (:meth:`_relax`). Returns ``(ok, aux)``."""
        rng = self._side_rng()
        observed = self._observed(aux)
        # kept only for these draws: an older ladder's rows (32 MB a value of k at 10^5 points)
        # are not held on for a check that cannot be kept
        chain.value_checks = {
            v: kept for v, kept in chain.value_checks.items() if kept and _same_start(kept[3], aux)
        }
        need = s
        for value, beta in chain.adaptation.window_values:
            if value == theta:
                continue
            start = max(s, chain.value_sweeps.get(value, 0))
            kept = chain.value_checks.get(value)
            if (
                kept
                and _near(kept[0], beta)
                and kept[1:3] == (s, start)
                and _same_draws(kept[3], aux)
            ):
                s_v = start  # these draws passed here at about this beta: as in _relax
            else:
                s_v, ok_v, kept_aux = self._check_value(value, beta, s, start, aux, rng)
                ok = ok and ok_v
                clean = ok_v and s_v == start and _same_draws(kept_aux, aux)
                chain.value_checks[value] = (beta, s, start, aux) if clean else ()
                aux = kept_aux
            chain.value_sweeps[value] = s_v
            need = max(need, s_v)
        return ok, (aux if aux.start == mcmc.START_LABELS else observed._replace(sweeps=need))

    def _check_value(self, value, beta, s, start, aux, rng):
        """The checks at one frequent ``value`` of :meth:`_check_frequent`: the labels' from
        ``start`` sweeps and, for a tuned start ``aux``, its own. Returns the labels' sweeps
        there, whether they passed, and the draws to keep (``aux``, with more sweeps, or the
        labels')."""
        observed = self._observed(aux)
        s_v, ok_v, late, late_sq = self._check(
            observed._replace(sweeps=start), beta, value, start, confirm=True, rng=rng
        )
        if aux.start != mcmc.START_LABELS:
            return s_v, ok_v, aux
        if s_v > s and aux.start_labels.shape[0] == 1:
            return s_v, ok_v, observed  # a single start's memory does not show in the slope
        limit = max(aux.sweeps, round(s_v / RELAX_GROWTH))
        s_t, agreed, _, _ = self._check(
            aux, beta, value, aux.sweeps, (late, late_sq), limit, confirm=True, rng=rng
        )
        return s_v, ok_v, (aux._replace(sweeps=s_t) if agreed else observed)

    def _tuned_start(self, observed, start, betas, theta, references):
        """``observed`` (the observed labels' start and sweeps ``s``) with the tuned ``start``
        (a single one or a ladder: :meth:`_draw_start`) and the fewest sweeps, at most one
        growth step below ``s`` (``s / RELAX_GROWTH``), after which chains from it pass
        :meth:`_check` at each of ``betas``, settling (and spreading) where the chains from the
        observed labels did at each beta with ``references`` (their late windows; ``None``:
        relaxing is enough); or ``observed`` itself when they do not. On the eight classes with
        equal neighbours a start checked for agreement at the top of beta only passed with
        115-163 sweeps and left its chain 0.2 of beta's sd low; the labels' chains checked at
        the low end too are within 0.15 sd. A beta within
        ``RELAX_SAME`` of the first is not checked again (as in :meth:`_relax`): once the
        posterior has narrowed, the window's quantiles are one point."""
        limit = max(AUX_SWEEPS, round(observed.sweeps / RELAX_GROWTH))
        rows, rungs, thetas = start
        tuned = observed._replace(
            start=mcmc.START_LABELS, start_labels=rows, start_betas=rungs, start_thetas=thetas
        )
        s_t = AUX_SWEEPS
        for i, b in enumerate(betas):
            if i and _near(betas[0], b):
                continue
            s_t, ok, _, _ = self._check(tuned, b, theta, s_t, references[i], limit)
            if not ok:
                return observed
        return tuned._replace(sweeps=s_t)

    def _seed_ridge(self, chain, x, beta, k) -> None:
        """When ``k`` has not moved in a whole window, the ridge of ``k`` moves (the shift of
        beta per unit of ``k``) cannot be learned from the window's draws; take it from the
        modes of beta given ``k - 1``, ``k`` and ``k + 1`` instead (flat prior: where
        ``E_beta[E_k(z)] = E_k(y)``). On 2,000 points the mode falls by 0.12 per unit of ``k``,
        three posterior sds: a ``k`` move that keeps beta is all but never accepted.

        The curve of the modes bends (blobs10: 2.78, 2.44, 2.31 at ``k = 2, 3, 4``, beta's sd
        0.028), so one slope cannot serve both neighbours: the first seed takes the flatter
        side's (where the mode moves least), a window that stays stuck after it the other's,
        and so on in turn. The line through the three modes missed both neighbours' modes, by
        four sds at ``k = 4``, and the chain never left ``k = 3``.

        A new ridge also clears the window's judgement that graph moves are futile from here
        (:attr:`Adaptation.futile_at`): it was made on the old ridge's moves. Kept, it gave
        the flatter secant a twentieth of the moves (8 on blobs10 at seed 1, a quarter of them
        toward the modes' side), too few to cross, and the seeds turned to the steep side."""
        a = chain.adaptation
        if not (
            self.term.is_knn
            and self._graph.size == 1
            and self._discrete[0]
            and self._free.size == 1
            and a.graph_stuck[0]
        ):
            chain.ridge_seeds = 0
            return
        ks = [j for j in (k - 1, k, k + 1) if self._lower[0] <= j <= self._upper[0]]
        if len(ks) < 2:
            return
        free = [
            (rv, tr)
            for _, sl, role, rv, tr in self._start_vars
            if role == 0 and sl.start == self._free[0]
        ]
        modes, values = [], []
        for j in ks:
            modes.append(self._beta_mode(j, beta, chain.adaptation.aux_sweeps))
            if free:
                # beta's own value: the modes on its transformed scale, where a mode past the
                # prior's bound (digits: beta piles at 4 under U(0, 4)) has no value: the ridge
                # is left as it was, not made a step that throws beta onto its bound (and the
                # other modes are not searched for)
                values.append(_to_value(*free[0], np.asarray(modes[-1], dtype=float)))
                if values[-1] is None:
                    return
        if free:
            secants = np.diff(np.array(values, dtype=float))
        else:
            d_beta = self._d_beta(x)
            secants = np.diff(modes) / d_beta if d_beta > 0 else np.array([math.nan])
        side = np.argsort(np.abs(secants))[chain.ridge_seeds % secants.size]
        if np.isfinite(secants[side]):
            a.slope[0, 0] = secants[side]
            a.futile_at = np.empty(0)
            chain.ridge_seeds += 1

    def _beta_mode(self, k, beta, burn, newton_steps=8, sweeps=100):
        """The mode of beta given ``k`` under a flat prior: the root of ``E_k(y) -
        E_beta[E_k(z)]``, decreasing in beta with derivative ``-Var_beta[E_k]``, by Newton steps
        kept inside the bracket that the signs seen so far leave (bisecting where a step leaves
        it), each from a Swendsen-Wang chain started at the labels (``burn``: the tuned
        relaxation sweeps); it stops once a step is below a tenth of beta's sd at fixed ``k``
        (``1 / sd(E_k)``). Without the bracket, a step from a beta in one phase of an ordering
        transition (where the variance read there is small) overshot: on blobs10 one estimate in
        five of the mode at ``k = 4`` fell 20 sds short. Returns ``beta_max`` when a step points
        past it."""
        c = self.term.graph.coupling(k)
        cw = self.term.class_weights
        y = _data_order(self.field, self.field.y)
        target = c.energy(y, cw)
        top = self.field.beta_max
        lo, hi = 0.0, top
        for _ in range(newton_steps):
            z = y.copy()
            mean, _, var, _ = energy_path(
                c.src,
                c.dst,
                c.weight,
                c.uniform_weight,
                z,
                np.array([beta]),
                cw,
                burn,
                sweeps,
                self.rng,
            )
            if not var[0] > 0:
                break
            above = target > mean[0]  # the mode is above beta
            lo, hi = (beta, hi) if above else (lo, beta)
            new = beta + (target - mean[0]) / var[0]
            if above and new >= top:
                return float(top)
            if not lo < new < hi:
                new = 0.5 * (lo + hi)
            done = abs(new - beta) * math.sqrt(var[0]) < 0.1
            beta = float(new)
            if done:
                break
        return beta

    # -- one draw -------------------------------------------------------------------------

    def _sync_labels(self, point):
        """Missing labels: the field's labels are the observed ones and the current imputed
        ones (moved by :class:`~pymc_knn.PottsGibbs` between draws)."""
        sites, value_var = self._missing
        new = np.asarray(point[value_var.name], dtype=np.int64)
        f = self.field
        at = f.rank[sites] if f.rank.size else sites
        if np.array_equal(f.y[at], new):
            return
        f.y[at] = new
        if self.term.is_knn:
            y = _data_order(f, f.y)
            f.energy_y[:] = self.term.graph.energy_all_k(y, self.term.class_weights)
        self.chain.couplings = None  # their E(y) was of the labels before

    def step(self, point):
        chain = self.chain
        if self._missing is not None:
            self._sync_labels(point)
        x = self.layout.to_x(point)
        tuning = self.tune and self.adapt
        first = tuning and not chain.started
        if first:
            chain.started = True
            x = self._start(x)
        lp, beta, theta = self.tractable.evaluate(x)
        self._check_position(lp, beta, theta)
        if first and self.proposal_sd is None:
            chain.adaptation.start_scale(self._start_scale(x))
        state = np.array([lp, beta, theta])
        a = chain.adaptation
        m = draw_iterations(a.iterations, self.rng)
        rows = m if tuning else 0
        trace = np.empty((rows, 2 + self._free.size + self._graph.size))
        accept = np.empty(rows)
        cap = np.empty(rows)
        move = np.empty(rows, dtype=np.int64)
        noise = np.empty((rows, 3))
        proposal = a.proposal(self._free, self._graph, self._lower, self._upper)
        if chain.couplings is None:
            chain.couplings = mcmc.new_couplings(self.field)
        status, n_acc, acc_sum, sweeps, n_draws, n_inexact, aux_energy, bridged, screened, kept = (
            mcmc.run_iterations(
                self.tractable.kernel_fn,
                x,
                state,
                self.field,
                chain.aux,
                proposal,
                chain.z,
                chain.plug_in,
                m,
                trace,
                accept,
                cap,
                move,
                noise,
                self.rng,
                chain.couplings,
            )
        )
        chain.couplings = kept
        chain.x = x
        self.tractable.raise_error()
        if status == mcmc.PAST_BETA_MAX:
            raise self._beta_error(state[1])
        dropped = self._check_dropped(tuning)
        if n_inexact and self.sampler == "cftp" and not chain.warned:
            warn_not_exact(type(self).__name__, self.max_sweeps)
            chain.warned = True
        stats = {
            "accept": acc_sum / m,
            "accepted": n_acc / m,
            "tune": self.tune,
            "iterations": m,
            "scaling": a.scale if self._free.size else 0.0,
            "graph_step": float(proposal.step[0]) if self._graph.size else 0.0,
            "graph_share": float(proposal.p_graph),
            "bridge_sweeps": bridged,
            "screened": screened,
            "dnn_dropped": dropped,
            "prior_bound": chain.prior_bound,
            **self._aux_stats(n_draws, sweeps, n_inexact, aux_energy),
        }
        if tuning and a.observe(trace, accept, cap, move, noise, bridged):
            self._widen(chain)
            if self._tune_sweeps:
                mean = a.window_mean[0] if self.start == "tuned" and a.settled else None
                # sigma where the window's beta tops out, not the last draw's: a d-nn chain's
                # sigma moves a posterior sd a window, and each move re-ran the checks
                theta = state[2] if self.term.is_knn else a.window_theta_top
                self._relax(chain, a.window_beta_top, theta, a.window_beta_low, mean)
                self._seed_ridge(chain, x, state[1], int(round(state[2])))
            self._window_closed(chain)
        return self.layout.update(point, x, self._default), [stats]

    def _widen(self, chain, final: bool = False) -> None:
        """Widen a kept d-nn table to cover the sigma of the chain's latest tuning window (its
        central 99%, with a margin), as far as the working-memory budget allows (warned about
        at the end of tuning). Tuning draws are discarded, so a sigma a transient visits beyond
        the table's cover costs nothing; covering it could take every pair."""
        g = self.term.graph
        if self.term.is_knn or not g.sparse:
            return
        low, high = chain.adaptation.theta_range(COVER_QUANTILES)
        if not np.isfinite(high):
            return
        target = low / DNN_COVER_MARGIN if g.kernel == "exponential" else high * DNN_COVER_MARGIN
        g.cover(target, strict=False)
        if self.field.sorted_sq is not g.sorted_rows()[1] or self.field.shells is not g.shells[0]:
            self.field = _field(self.term, self.field.y)  # wider, or shells counted anew
            chain.couplings = None
        if final and not g.covers(target):
            warnings.warn(
                f"{type(self).__name__}: the d-nn table keeps the nearest {g.width} of each of "
                f"{g.n_points} points, as many as working_memory allows, which does not cover "
                f"sigma = {target:.4g} (the tuned posterior's central 99% with a margin) within "
                f"drop_tol = {g.drop_tol:g}: draws there are of the kept model (dnn_dropped in "
                "sample_stats). Raise working_memory= or drop_tol=",
                UserWarning,
                stacklevel=2,
            )

    def _check_dropped(self, tuning) -> float:
        """A kept d-nn table's bound on the weight a row left out in this draw's couplings;
        after tuning, one past ``drop_tol`` is warned about once (see :meth:`_widen`)."""
        f, g = self.field, self.term.graph
        dropped = float(f.dropped[0])
        f.dropped[:] = _new_dropped()
        if self.term.is_knn or not g.sparse or dropped <= g.drop_tol or tuning:
            return dropped
        if not self.chain.warned_dropped:
            warnings.warn(
                f"{type(self).__name__}: the d-nn table keeps the nearest {g.width} of each point, "
                f"which leaves out up to {dropped:.3g} of a row's weight at a sigma this chain "
                f"visited or proposed, above drop_tol = {g.drop_tol:g} (recorded per draw as "
                "dnn_dropped in sample_stats): the samples are of the kept model. Tune longer, or "
                "give the likelihood sigma_max= (the largest sigma of the posterior)",
                UserWarning,
                stacklevel=2,
            )
            self.chain.warned_dropped = True
        return dropped

    def _aux_start(self) -> str:
        """Where the chain's auxiliary draws start now (sample_stats ``aux_start``)."""
        start = self.chain.aux.start
        if start == mcmc.START_LABELS:
            return "tuned"
        return "random" if start == mcmc.START_RANDOM else "observed"

    def _aux_stats(self, n_draws, sweeps, n_inexact, aux_energy):
        exact = self.sampler in ("cftp", "enumerate") and n_inexact == 0
        return {
            "aux_sampler": self.sampler,
            "aux_start": self._aux_start(),
            "aux_sweeps": sweeps / max(n_draws, 1),
            "aux_exact": exact,
            "aux_energy": aux_energy,
        }

    def _check_position(self, lp, beta, theta):
        if not np.isfinite(lp):
            raise ValueError(
                f"{type(self).__name__}: the chain's position has zero prior density (log "
                f"density {lp}); give initvals inside the priors' support"
            )
        if not mcmc._valid(self.field, beta, theta):
            name = "k" if self.term.is_knn else "sigma"
            bound = f"an integer in 1..{self.term.graph.k_max}" if self.term.is_knn else "> 0"
            raise ValueError(
                f"{type(self).__name__}: the Potts term's parameters at the chain's position are "
                f"outside their range (beta = {beta:g} must be >= 0, {name} = {theta:g} must be "
                f"{bound}); give initvals inside it"
            )
        if beta > self.field.beta_max:
            raise self._beta_error(beta)


def _near(a, b) -> bool:
    """Whether ``b`` lies within ``RELAX_SAME`` (relative) of ``a``."""
    return abs(b - a) <= RELAX_SAME * a


def _same_start(a, b) -> bool:
    """Whether two :class:`mcmc.Auxiliary` start alike (tuned starts: from the very same
    labels)."""
    return a.start == b.start and (a.start != mcmc.START_LABELS or a.start_labels is b.start_labels)


def _same_draws(a, b) -> bool:
    """Whether two :class:`mcmc.Auxiliary` draw alike: the same sampler, sweeps and start."""
    return (a.sampler, a.sweeps) == (b.sampler, b.sweeps) and _same_start(a, b)


def _to_value(rv, transform, value):
    """``value`` of ``rv`` on its value (transformed) scale; None where the transform needs
    other variables or the value lies outside it."""
    value = np.asarray(value, dtype=float)
    if transform is not None:
        forward = _forward(rv, transform, value.shape)
        if forward is None:
            return None
        try:
            with np.errstate(all="ignore"):
                value = np.array(forward(value), dtype=float)  # a copy: outputs may be reused
        except Exception:  # noqa: BLE001 - a value the transform does not take
            return None
    return value if np.all(np.isfinite(value)) else None


@functools.lru_cache(maxsize=256)
def _forward(rv, transform, shape):
    """``transform``'s forward map of ``rv`` at values of ``shape``, compiled once per process
    (the start, the relaxation checks and the prior-bound checks map dozens of values a chain:
    a graph's ``eval`` compiled anew each time, up to 250 ms); None when it cannot be
    compiled on its own."""
    value = pt.tensor(dtype="float64", shape=shape)
    try:
        return pytensor.function(
            [value], transform.forward(value, *rv.owner.inputs), on_unused_input="ignore"
        )
    except Exception:  # noqa: BLE001 - a transform that needs other variables
        return None


def _check_count(value, name):
    """``None`` or an integer >= 1."""
    return None if value is None else check_count(value, name)


_PARAMETERS = """
    Parameters
    ----------
    vars : list, optional
        The Potts term's parameters (default: all of them).
    sampler : {"swendsen_wang", "gibbs", "cftp", "enumerate"}, default="swendsen_wang"
        Auxiliary sampler. "cftp" (two classes) and "enumerate" (a dozen points) are exact; the
        others run ``sweeps`` sweeps from ``start`` and are approximate.
    sweeps : int, optional
        Sweeps of an approximate auxiliary draw ("swendsen_wang", "gibbs"). By default they are
        tuned per chain (at most 1024): whenever an adaptation window closes, 64 auxiliary
        chains at the current ``k`` (or ``sigma``) and the window's 95% quantile of beta show
        after how many sweeps their mean energy has settled (within 0.1 of its sd, or of what
        the check resolves); the draws then take that many. An int fixes them.
    start : {"auto", "observed", "tuned", "random"}, default="auto"
        Where an approximate auxiliary chain starts: "observed", the observed labels; "random",
        uniform labels; "tuned" (with tuned sweeps), the observed labels until the second
        adaptation window closes, then labels drawn at the window's mean beta whenever chains
        from them relax, at the window's 5% and 95% quantiles of beta, in fewer sweeps than
        the observed labels need (by a growth step, a factor sqrt(2), at least), settle
        where those do and vary as much, between four fifths and five fourths of their
        variance (a window whose start fails draws a second; docs/inference.md); where the
        next window repays it, a ladder of such labels, 64 at each of five betas across the
        window's span for each frequent ``k``, a draw starting from the rungs about its beta;
        the share of graph moves prices a draw at the observed labels' sweeps; fixed after
        tuning. "auto" (with tuned sweeps): "tuned" on a kNN term of 500 points or more and
        on a d-nn term of 500 up to 10,000 points, else "observed".
    max_sweeps : int, default=16384
        CFTP's bound on its look-back; beyond it the draw is approximate, with a warning and
        ``aux_exact = False`` in sample_stats.
    proposal_sd : float, optional
        Initial sd of the continuous random walk on the value (transformed) scale. Default: for
        beta, 2.38 sds of the pseudo-likelihood's normal approximation at the chain's start, at
        most 0.5 (the posterior narrows as ``1 / sqrt(n)``); 0.5 for the rest, and for beta
        where it is not a variable of its own.
    k_radius : int, optional
        Initial radius of the ``k`` move; default ``max(1, round(k_max / 20))``.
    iterations_per_draw : int, optional
        Metropolis-Hastings iterations between stored draws; default: a mean ``m`` chosen during
        tuning from the measured autocorrelation, so that a stored draw is worth about a third
        of an independent one (an ESS near 330 per chain of 1000 draws); each draw then takes
        ``floor(m)`` or ``floor(m) + 1`` iterations at random, with fixed odds after tuning.
    max_iterations_per_draw : int, default=1000
        Bound on the iterations per draw chosen during tuning (a warning says when it is met).
    target_accept : float, default=0.3
        Acceptance rate aimed at by the tuning of each move type.
    tune : bool, default=True
        Adapt the proposal and the iterations per draw during pm.sample's tuning draws; False
        keeps ``proposal_sd``, ``k_radius`` and ``iterations_per_draw`` (default 1) fixed.
"""

# after each step's own parameters (numpydoc: Parameters before Notes)
_NOTES = """
    Notes
    -----
    Moves (see docs/inference.md): with probability 1/2 (more where ``k`` moves cost more, or
    are futile from the current ``k``) the continuous parameters move by a
    Gaussian random walk whose covariance is learned during tuning (adaptive Metropolis, with
    ``k`` fixed), otherwise ``k`` moves uniformly within the radius, cut to ``1..k_max`` with its
    Hastings term, and the continuous parameters follow the posterior's ridge (their regression
    on ``k``); half of the ``k`` moves are jumps, ``k`` drawn afresh from a density fitted to
    the tuning draws (wide moves, four times the radius, before the first fit). Everything
    adapts during tuning only, so the chain after tuning has the exact posterior as its
    stationary law (given exact auxiliary draws). sample_stats: ``accept``
    (mean acceptance probability of the draw's iterations), ``accepted`` (their fraction
    accepted), ``iterations``, ``scaling`` (the beta move's step), ``graph_step`` (the radius of
    the ``k`` move or the sd of the ``sigma`` move), ``graph_share`` (the probability of a
    ``k`` or ``sigma`` move: tuned for equal time, ``sigma``'s halfway to equal mixing),
    ``tune``, and
    ``aux_sampler``, ``aux_start`` ("observed", "tuned" or "random": where the auxiliary
    chains start; "none" without them), ``aux_sweeps`` (mean per auxiliary draw), ``aux_exact`` (every auxiliary
    draw of the draw's iterations exact), ``aux_energy`` (of the last auxiliary draw).
"""


def _is_potts_parameter(rv) -> bool:
    """Whether a model's free RV feeds the beta or theta of one of its Potts terms."""
    try:
        model = pm.modelcontext(None)
    except TypeError:
        model = current_model()
    if model is None:
        return False
    return any(rv in potts_parameter_rvs(model, term) for term in potts_terms(model))


class Exchange(PottsStep):
    __doc__ = (
        """The exchange algorithm for ``(beta, k)`` or ``(beta, sigma)`` of a Potts term.

    Murray, Ghahramani and MacKay (2006); Friel and Pettitt (2011), section 4.2. Acceptance ratio,
    with ``z ~ f(. | theta')`` drawn by the auxiliary sampler::

        q(y|theta') pi(theta') q(z|theta) h(theta|theta') / [q(y|theta) pi(theta) q(z|theta') h(theta'|theta)]

    A ``k`` move's ratio (kNN) or a ``sigma`` move's (d-nn) may be bridged (Murray et al. 2006,
    section 5): ``z`` is carried by one Swendsen-Wang sweep through each of ``m`` fields between
    ``theta'`` and ``theta``, and ``q(z|theta) / q(z|theta')`` is replaced by the geometric mean
    of the ratios along the way. The ratio stays exact; the variance of its noise, which grows
    with ``n`` and about linearly with the move's size, falls about as ``1 / (m + 1)``. By
    default ``m`` is chosen per move, proportional to ``|1/k' - 1/k|`` (or to the change of
    ``sigma``'s free coordinate) with a factor tuned on the noise measured during tuning (pairs
    of independent estimates of the same ratio) in each region of ``k`` or ``sigma`` (a tenth
    of ``log k`` or ``log sigma`` wide; a move takes the larger factor of its two ends', so its
    reverse has the same ``m``), aiming at a variance of 4 nats^2; small moves and moves where
    the ratio is quiet need none (``m = 0``: the plain exchange algorithm). A d-nn term is
    bridged by default only with the ball kernel and below ``LARGE_POINTS`` (10^4) points (a
    bridging field mixes two tables of about ``n^2`` entries, and the smooth kernels' noise is
    small: measuring it cost more than bridging saved); ``bridge=m`` bridges any. A d-nn field
    makes one Swendsen-Wang sweep per 120 entries of the mean row, up to 8 (its energies read
    every entry, its sweeps a few).
    sample_stats ``bridge_sweeps``: the draw's bridging fields (a kNN field is one sweep).
    """
        + _PARAMETERS
        + """    bridge : int or "tuned", optional
        Fix ``m`` for every ``k`` or ``sigma`` move instead (0: never bridge), or tune it on any
        term ("tuned"; by default it is tuned on kNN terms and on the ball kernel's d-nn terms
        below 10^4 points, and a d-nn term with a smooth kernel is not bridged).
    max_bridge : int, default=128
        Bound on ``m``.
    delayed_acceptance : bool, "most" or "auto", default="auto"
        Once the first adaptation window has fitted the jump densities, screen each proposal by
        them before paying for its auxiliary draw (Christen and Fox 2005): a proposal passes
        with probability ``min(1, A)``, ``A`` the ratio of the fitted densities times the
        proposal's, and is then accepted with ``min(1, R / A)``. Exact whatever the densities;
        faster on large data, whose posterior the fitted densities match (10^5 points: 1.8 times
        less time a draw), slower or worse mixed on small data sets. "most": screen every move
        but the local ``k`` or ``sigma`` moves whose ratio is not bridged (cheap, and the fitted
        density is rough at their scale on a small data set): faster where bridged ``k`` moves
        are never accepted (scikit-learn's digits: 36-38 s instead of 42-45), but it cost ``k``
        its mixing on 2,000 points in 6 classes (docs/inference.md, "Delayed acceptance").
        "auto": True for a kNN term of 10,000 points or more and for a d-nn term with the
        gaussian or exponential kernel of 500 up to 10,000 (each iteration there is
        ``O(n^2)``: 0.79 of the walls on 14 fits), else False. sample_stats
        ``screened``: the draw's iterations rejected by the first stage.
    """
        + _NOTES
        + """
    References
    ----------
    .. [1] Murray, I., Ghahramani, Z. and MacKay, D. J. C. (2006). MCMC for doubly-intractable
       distributions. *Proceedings of the 22nd Conference on Uncertainty in Artificial
       Intelligence*, 359-366.
    .. [2] Friel, N. and Pettitt, A. N. (2011). Classification using distance nearest neighbours.
       *Statistics and Computing* 21, 431-437.

    Examples
    --------
    ``pm.sample()`` assigns it by itself; given explicitly, with exact auxiliary draws:

    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 2.8)
    ...     k = pm.DiscreteUniform("k", 1, 125)
    ...     labels = pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    ...     step = pk.Exchange(sampler="cftp")
    >>> idata = pm.sample(model=model, step=step, random_seed=1)  # doctest: +SKIP
    """
    )

    name = "exchange"
    method = mcmc.EXCHANGE

    @staticmethod
    def competence(var, has_grad):
        return Competence.IDEAL if _is_potts_parameter(var) else Competence.INCOMPATIBLE

    def __init__(
        self, vars=None, *, bridge=None, max_bridge=MAX_BRIDGE, delayed_acceptance="auto", **kwargs
    ):
        named = isinstance(delayed_acceptance, str) and delayed_acceptance in ("auto", "most")
        if not (named or isinstance(delayed_acceptance, (bool, np.bool_))):
            raise ValueError(
                "delayed_acceptance must be True, False, 'most' or 'auto', got "
                f"{delayed_acceptance!r}"
            )
        tuned = isinstance(bridge, str)
        if tuned and bridge != "tuned":
            raise ValueError(f"bridge must be an integer >= 0 or 'tuned', got {bridge!r}")
        fixed = bridge is not None and not tuned
        self._bridge0 = check_count(bridge, "bridge", minimum=0) if fixed else 0
        self._max_bridge = max(check_count(max_bridge, "max_bridge", minimum=0), self._bridge0)
        self._adapt_bridge = not fixed
        super().__init__(vars, **kwargs)
        default = bridge is None and self._bridged_by_default()
        self._adapt_bridge = self._graph.size > 0 and (tuned or default)
        if named and delayed_acceptance == "auto":
            delayed_acceptance = self._screened_by_default()
        if isinstance(delayed_acceptance, str):
            self.delayed_acceptance, self._delayed = "most", mcmc.SCREEN_MOST
        else:
            self.delayed_acceptance = bool(delayed_acceptance)
            self._delayed = mcmc.SCREEN_ALL if delayed_acceptance else mcmc.SCREEN_NONE
        self.chain = self._new_chain()

    def _bridged_by_default(self) -> bool:
        """Whether graph moves are bridged by default (their noise measured while tuning): a
        kNN term's ``k`` moves, and a d-nn term's ``sigma`` moves with the ball kernel below
        ``LARGE_POINTS`` (a d-nn bridging field mixes two ``n x L`` tables: at 10^4 points a
        bridged draw cost 6.9 s instead of 1.9). The gaussian and exponential kernels' are not:
        their moves' noise is small, and measuring it (a second exchange estimate of every
        local move while tuning) cost more than the bridging saved (class20's gaussian kernel,
        sweeps fixed: 3.9 against 3.1 ms a tuning iteration, 8.4 against 5.3 iterations a
        draw; docs/inference.md, "Bridged `sigma` moves")."""
        if self.term.is_knn:
            return True
        return self.term.graph.kernel == "ball" and self.term.graph.n_points < LARGE_POINTS


class Moller(PottsStep):
    __doc__ = (
        """The auxiliary-variable method of Møller et al. (2006) for a Potts term's parameters.

    The chain runs on ``(theta, z)``: ``z`` lives in the step's state, with the artificial target
    ``g(z) = q(z | theta_hat) / Z(theta_hat)`` at a plug-in ``theta_hat = (beta_hat, k_hat)``
    (Cucala et al. 2009, section 3.4). A proposal ``(theta', z')`` draws ``z' ~ f(. | theta')`` and
    is accepted with the ratio as corrected by Segerie and Peyrot (section 3.2)::

        q(y|theta') pi(theta') q(z'|theta_hat) q(z|theta) h(theta|theta')
        / [q(y|theta) pi(theta) q(z|theta_hat) q(z'|theta') h(theta'|theta)]

    The plug-in starts at the maximum pseudo-likelihood estimate (or ``plug_in``) and, when
    ``adapt_plug_in``, is replaced during tuning, at the end of every adaptation window, by the
    window's mean (``k_hat`` rounded); it is fixed after tuning (Cucala et al., section 4).
    Whatever the plug-in, ``theta``'s stationary law is the exact posterior when the auxiliary
    draws are exact; a poor plug-in only slows mixing (their Fig. 8). The plug-in in use is
    reported as ``plug_in_beta`` and ``plug_in_theta`` in sample_stats.
    """
        + _PARAMETERS
        + """    plug_in : tuple (beta_hat, theta_hat), optional
        The starting plug-in; default the maximum pseudo-likelihood estimate with beta in
        ``[0, plug_in_beta_max]``.
    adapt_plug_in : bool, default=True
        Update the plug-in during tuning.
    plug_in_beta_max : float, default=4.0
        Upper end of the pseudo-likelihood search for ``beta_hat``.
    """
        + _NOTES
        + """
    References
    ----------
    .. [1] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
    .. [2] Møller, J., Pettitt, A. N., Reeves, R. and Berthelsen, K. K. (2006). An efficient
       Markov chain Monte Carlo method for distributions with intractable normalising constants.
       *Biometrika* 93(2), 451-458.
    .. [3] Segerie, C.-R. and Peyrot, E. Revisiting of Bayesian reassessment of nearest-neighbor
       classification. Report, Master MVA, ENS Paris-Saclay.
       Section 3.2 (the corrected acceptance ratio).

    Examples
    --------
    With perfect (CFTP) auxiliary draws and, as a starting plug-in, the estimate
    ``(beta_hat, k_hat) = (1.45, 13)`` of Cucala et al. (2009, section 3.4):

    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 4)
    ...     k = pm.DiscreteUniform("k", 1, 125)
    ...     labels = pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    ...     step = pk.Moller(sampler="cftp", plug_in=(1.45, 13))
    >>> idata = pm.sample(model=model, step=step, random_seed=1)  # doctest: +SKIP
    """
    )

    name = "moller"
    method = mcmc.MOLLER
    stats_dtypes_shapes = {
        **PottsStep.stats_dtypes_shapes,
        "plug_in_beta": (np.float64, []),
        "plug_in_theta": (np.float64, []),
    }

    @staticmethod
    def competence(var, has_grad):
        return Competence.PREFERRED if _is_potts_parameter(var) else Competence.INCOMPATIBLE

    def __init__(
        self, vars=None, *, plug_in=None, adapt_plug_in=True, plug_in_beta_max=4.0, **kwargs
    ):
        super().__init__(vars, **kwargs)
        if plug_in is None:
            plug_in = self.mple(check_positive(plug_in_beta_max, "plug_in_beta_max"))
        self._plug_in0 = self._check_plug_in(plug_in)
        self.adapt_plug_in = bool(adapt_plug_in)
        self.chain = self._new_chain()

    @property
    def plug_in(self):
        """The plug-in ``(beta_hat, theta_hat)`` of the current chain."""
        beta, theta = self.chain.plug_in[:2]
        return float(beta), (int(theta) if self.term.is_knn else float(theta))

    def _check_plug_in(self, plug_in):
        try:
            beta, theta = plug_in
        except (TypeError, ValueError):
            raise ValueError(f"plug_in must be a pair (beta_hat, theta_hat), got {plug_in!r}")
        beta = float(beta)
        if not np.isfinite(beta) or beta < 0:
            raise ValueError(f"plug_in beta_hat must be finite and >= 0, got {beta!r}")
        if self.term.is_knn:
            theta = self.term.graph.check_k(theta)
        else:
            theta = check_positive(theta, "plug_in sigma_hat")
        return beta, theta

    def _new_chain(self) -> ChainState:
        chain = super()._new_chain()
        if hasattr(self, "_plug_in0"):
            chain.plug_in[:2] = self._plug_in0
        return chain

    def _window_closed(self, chain):
        if self.adapt_plug_in and chain.adaptation.window_mean is not None:
            beta, theta = chain.adaptation.window_mean
            chain.plug_in[:2] = (beta, round(theta) if self.term.is_knn else theta)

    def step(self, point):
        point, stats = super().step(point)
        stats[0].update(
            plug_in_beta=float(self.chain.plug_in[0]), plug_in_theta=float(self.chain.plug_in[1])
        )
        return point, stats


class PseudoLikelihoodMetropolis(PottsStep):
    """Random-walk Metropolis on the pseudo-posterior (Cucala et al. 2009, eq. 8).

    The likelihood is replaced by the product of the full conditionals. Fast, but biased: its
    posterior is not the model's (Cucala et al., section 3.5). Parameters, moves and tuning as
    for :class:`Exchange`, without the auxiliary ones.

    See Also
    --------
    Exchange, Moller : exact alternatives.
    korea : a deterministic approximation of the same pseudo-posterior.

    References
    ----------
    .. [1] Besag, J. (1974). Spatial interaction and the statistical analysis of lattice systems
       (with discussion). *Journal of the Royal Statistical Society, Series B* 36(2), 192-236.
       The pseudo-likelihood, as cited by Cucala et al. (2009, section 3.2).
    .. [2] Cucala, L., Marin, J.-M., Robert, C. P. and Titterington, D. M. (2009). A Bayesian
       reassessment of nearest-neighbor classification. *Journal of the American Statistical
       Association* 104(485), 263-273.
       Section 3.2, eq. 8 (the pseudo-likelihood of the kNN model) and section 3.5 (its bias).
    .. [3] Friel, N. and Pettitt, A. N. (2011). Classification using distance nearest neighbours.
       *Statistics and Computing* 21, 431-437.
       Section 4.1 (the pseudo-likelihood of the d-nn models).

    Examples
    --------
    >>> import pymc as pm
    >>> import pymc_knn as pk
    >>> X, y, *_ = pk.datasets.load_ripley("train")
    >>> with pm.Model() as model:
    ...     beta = pm.Uniform("beta", 0, 4)
    ...     k = pm.DiscreteUniform("k", 1, 125)
    ...     labels = pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    ...     step = pk.PseudoLikelihoodMetropolis()
    >>> idata = pm.sample(model=model, step=step, random_seed=1)  # doctest: +SKIP
    """

    name = "pseudo_likelihood_metropolis"
    method = mcmc.PSEUDO

    @staticmethod
    def competence(var, has_grad):
        return Competence.COMPATIBLE if _is_potts_parameter(var) else Competence.INCOMPATIBLE

    def _aux_stats(self, n_draws, sweeps, n_inexact, aux_energy):
        return {
            "aux_sampler": "none",
            "aux_start": "none",
            "aux_sweeps": 0.0,
            "aux_exact": True,
            "aux_energy": np.nan,
        }
