"""numba kernel: many Metropolis-Hastings iterations on the parameters of a Potts term.

One call of :func:`run_iterations` runs ``n_iter`` iterations of the exchange algorithm
(Murray et al. 2006; Friel and Pettitt 2011, section 4.2), of Møller et al.'s auxiliary-variable
method (Cucala et al. 2009, section 3.4, ratio as corrected by Segerie and Peyrot, section 3.2) or
of pseudo-likelihood Metropolis (Cucala et al. 2009, eq. 8): proposal, couplings at the proposed
``k`` or ``sigma``, auxiliary draw, ratio and accept, with no return to Python in between. The
step methods of :mod:`pymc_knn.step_methods` are thin adapters around it.

The chain's position is a flat vector ``x`` of the model's value variables. Only the block
coordinates move; the tractable part of the log posterior (priors, Jacobians, other terms) and
the term's ``beta`` and ``theta`` come from ``logp(x, out) -> lp`` (``out[0] = beta``,
``out[1] = theta``), a first-class numba function compiled from the PyMC model.

Moves (each reversible on its own, mixed with a fixed probability, so the mixture is too):

* beta move: the coordinates that leave the graph alone (beta's), ``x_b' = x_b + L eps``,
  ``eps ~ N(0, I)``; the couplings are reused, so it costs one auxiliary draw and an energy;
* beta jump: beta's coordinates drawn afresh, whatever their current value, from a normal
  ``N(a + b g, L L')`` fitted to the tuning draws (``g`` the graph coordinates, which stay put),
  with weight ``BETA_JUMP_DEFENSIVE`` on the same normal ``BETA_JUMP_WIDE`` times as wide;
  Hastings term ``log h(x_b) - log h(x_b')``. On a large data set beta's posterior given ``k`` is
  close to normal and a jump decorrelates in one accepted move what the random walk takes many
  for;
* graph move: one coordinate that moves ``k`` or ``sigma`` by ``d``, uniform on
  ``{-r..r} \\ {0}`` cut to ``[lower, upper]`` for ``k`` (Hastings term
  ``log |N(k)| - log |N(k')|``), Gaussian for a continuous one; beta's coordinates follow the
  posterior's ridge, ``x_b' = x_b + slope * d``, a translation that the reverse move ``-d``
  undoes;
* jump move: the graph coordinate is drawn afresh from a density ``h`` fitted to the tuning
  draws (a mixture of normals; rounded and cut to ``[lower, upper]`` for ``k``), whatever its
  current value, and beta's coordinates follow the ridge as in a graph move; the Hastings term
  is ``log h(current) - log h(proposed)``. It crosses valleys between modes of ``k`` or
  ``sigma`` that a local move crosses rarely. (Drawing beta's coordinates afresh too, from a
  normal about the ridge, halved the acceptance on wine's ball kernel and mixed no faster.)
  Before the first fit, a *wide* move stands in: a graph move with a wider step (``r`` or the
  sd times a factor). Either is a kernel of its own, chosen with a fixed probability;
* plateau move (ball kernel, ``p.plateau``): the ball's likelihood is the same for every
  ``sigma`` up to the data's smallest positive distance, ``top``, where no ball holds another
  point unless it is at distance 0 (a plateau that reaches ``sigma = 0``, on the value scale
  a tail of density about ``e^u``). From a state on it (``theta <= top``), with probability
  ``share``, ``sigma``'s coordinate is drawn afresh from ``h(u) = e^{u - edge}`` on
  ``u <= edge`` (``edge``: ``top`` on the value scale), a proposal off the plateau rejected;
  Hastings term ``log h(u) - log h(u')``. Where beta stays put the Potts term is the same at both
  ends, so the ratio is the tractable one's and no auxiliary draw is made. Since the choice
  depends on the state, every other move carries ``log(1 - share [theta' <= top]) - log(1 -
  share [theta <= top])`` in its Hastings term. A random walk takes a time growing with the
  depth to climb off the plateau; this move puts the chain back near its edge in one step.

Delayed acceptance (Christen and Fox 2005; Banterle et al. 2019), exchange only, once tuning has
fitted the jump densities: a proposal ``x -> x'`` is first screened with probability
``min(1, A)``, ``A = g(x') h(x | x') / (g(x) h(x' | x))``, where ``g`` is the product of the fitted
densities (the graph coordinates' jump density and beta's given them: an approximation of the
posterior built from the tuning draws) and ``h`` the move's own proposal density; only a proposal
that passes pays for its couplings and auxiliary draw, and is then accepted with probability
``min(1, R / A)``, ``R`` the exchange ratio. Since ``A(x' -> x) = 1 / A(x -> x')`` and ``A`` does
not depend on the auxiliary draw ``z``, ``T(x, x', z) min(1, A) min(1, R / A)`` is symmetric in
``x`` and ``x'`` where ``T(x, x', z) min(1, R)`` is (``T``: the extended target times the
proposal, ``R = T(x', x, z) / T(x, x', z)``): the composite keeps detailed balance, whatever ``g``.
A poor ``g`` costs mixing, never exactness. ``SCREEN_MOST`` leaves out the local graph moves whose
ratio is not bridged (cheap moves, and ``g`` is rough at their scale on a small data set):
whether a move is bridged is a function of its size and its two ends, the same for the move
and its reverse, so each kind of move keeps detailed balance on its own.

The exchange ratio of a ``k`` or ``sigma`` move may be bridged (Murray et al. 2006, section 5):
the auxiliary draw at the proposal is carried through intermediate Potts fields between the two
graphs before its weights are taken, which divides the variance of the ratio's noise by about
the number of fields plus one. A ``k`` move's noise grows with ``n`` (a step of one in ``k``
does not shrink with the posterior) and about linearly with its size (measured: on Ripley a
variance of 0.34, 0.81, 1.7, 2.6 for moves of 1, 2, 5, 10; on 2,000 points of 6 classes 146,
334, 1363, 2698; a ``sigma`` move's of glass's ball kernel 1.3, 6.3, 15, 37 for 0.04, 0.14,
0.34, 0.67); beyond a variance of a few nats the move is never accepted. The number of fields
is fixed (``bridge``) or proportional to the move's size (``bridge_unit``, or, where the tuning
measured it, the larger of the units of the regions of the graph parameter its two ends lie in:
``BRIDGE_REGION``, symmetric in a move and its reverse): for ``k``,
``|1/k - 1/k'|`` (:func:`move_size`: the kNN weights are ``1/k``, and the noise's variance
follows that size, not ``|k' - k|``: on class20, symmetrised, 275-346 times it for moves from
``k`` 3, 4 and 6 of 1 and 3, where the variance per unit of ``k`` falls from 23 at 3 to 6.7 at
6; at an ordering transition, blobs10, the step in ``k`` fits better), for ``sigma`` the change
of its free coordinate; either is the same for the reverse move; jump moves are bridged as graph
moves are but, when bridged at all, through ``JUMP_BRIDGE`` times the stages (the reverse of a
jump is a jump of the same size, so it too); wide moves are not bridged.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.core import errors
from numba.extending import overload

from .cftp import cftp_potts2
from .energy import (
    energy,
    equal_pairs,
    equal_pairs_columns,
    local_fields,
    log_pl_derivatives,
    nested_equal_pairs,
    nested_equal_pairs_columns,
)
from .enumeration import enumerated_draw
from .gibbs import gibbs_sweeps
from .signals import check_signals
from .structure import (
    BALL,
    add_floor_fields,
    csr_from_edges,
    dnn_table_cumulative,
    knn_csr,
    knn_edges,
    rows_energies,
    rows_energy,
    rows_energy_columns,
    rows_to_edges,
)
from .swendsen_wang import _row_at, swendsen_wang_pair, swendsen_wang_rows, swendsen_wang_sweeps

EXCHANGE, MOLLER, PSEUDO = 0, 1, 2
SWENDSEN_WANG, GIBBS, CFTP, ENUMERATE = 0, 1, 2, 3
KNN_SYMMETRISED, KNN_EQUAL, DNN = 0, 1, 2
BETA_MOVE, GRAPH_MOVE, NULL_MOVE, WIDE_MOVE, JUMP_MOVE, BETA_JUMP, PLATEAU_MOVE = range(7)
SCREEN_NONE, SCREEN_MOST, SCREEN_ALL = 0, 1, 2
"""Which moves the delayed acceptance screens: none, all but the local graph moves that are not
bridged, every move."""
WRITTEN_ROW = 64
"""Mean entries a row up to which a d-nn bridging field is written out before its sweep, beyond
which the sweep reads its running sums where the events fall (:func:`bridged_log_ratio_rows`):
on the ball kernel's short rows (7-34 entries on glass, Ripley, Pima, shells3, class20) writing
cost 0.65-0.8 of reading, on gaussian and exponential rows (120-1,000 entries, Ripley to
class20) reading cost 0.65-0.9 of writing (benchmarks/README.md, "Bridging fields: read in
place, counted in one pass")."""
FIELD_ROW_SWEEP = 120
"""Mean entries a row per Swendsen-Wang sweep of a d-nn bridging field (:func:`field_sweeps`): a
field costs its two energies, which read every entry, and its sweeps, which probe a few, so on
long rows one sweep is a small part of a field and a field that relaxes ``z`` further is cheap.
On make_classification's 1,000 points (rows of 985 entries, an energy 0.83 ms, a sweep 0.1-0.24
ms) one sweep per field barely moves ``z`` (an auxiliary draw there takes 40): 16 fields of one
sweep left the ratio's noise variance at 4.8 times ``v / (m + 1)`` (``v`` the unbridged one), 4 and
8 sweeps at 2.0 and 1.4 times, for 1.4 and 1.9 times the field's cost (benchmarks/README.md,
"Sweeps per bridging field"). Half the energies' cost in sweeps was about the best trade there
while each field read its energies alone; since the fields' energies are computed in one pass
for all (2026-12-06: a field 1.6 ms there instead of 3.3, mostly its 8 sweeps) no count of
sweeps wins clearly there, 8 being at most a third dearer than the best in noise times time
(benchmarks/README.md, "Bridging fields' energies in one pass")."""
MAX_FIELD_SWEEPS = 8
"""Most sweeps per d-nn bridging field."""
JUMP_BRIDGE = 4
"""A jump move that the tuned bridging (``bridge_unit``) bridges at all goes through this many
times the stages (fields + 1) of a graph move of its size, so its ratio's noise variance is
about a quarter of the target: jumps cross between the modes of ``k`` or ``sigma``, the chain's
slowest motion, and are a small share of the moves (glass's ball kernel, whose ``sigma`` has a
spike and a plateau: tail ESS 1,178-2,248 against 652-1,507; docs/inference.md, "Bridged
jumps")."""
BRIDGE_REGION = 0.1
"""Width, in ``log theta``, of the regions of the graph parameter (``k`` or ``sigma``) that the
tuned bridging measures its noise over (:func:`bridge_region`; each ``k`` up to 10 is its own
region). The noise of a move is not one constant per unit of its size everywhere: on two
classes far apart (``apart``, a gaussian d-nn term) it is nil between ``sigma`` 0.1 and 1.3,
where every auxiliary draw keeps each class one colour, and 12 to 479 to 0.09-0.05, where the
classes' graphs fall apart; one noise for all bridged every move for the few that reach small
``sigma`` (benchmarks/README.md, "Bridging by region")."""
BETA_JUMP_WIDE = 3.0
"""Scale of the beta jump density's broad component, in units of its main one."""
BETA_JUMP_DEFENSIVE = 0.1
"""Weight of the beta jump density's broad component."""
OK, PAST_BETA_MAX = 0, 1
START_OBSERVED, START_RANDOM, START_LABELS = 0, 1, 2

LOGP_SIGNATURE = types.float64(types.float64[::1], types.float64[::1])
"""``logp(x, out) -> lp``: the tractable log density at ``x``; ``out[:2] = (beta, theta)``."""


class Field(NamedTuple):
    """The Potts field of one term, as arrays.

    ``kind`` is ``KNN_SYMMETRISED``, ``KNN_EQUAL`` or ``DNN``. kNN fields use ``neighbours``
    and ``reverse_rank`` (``n x k_max``) and ``energy_y[k - 1] = E_k(y)``; d-nn fields use each
    point's others by distance, ``order`` (int32) and ``sorted_sq`` (``n x L``: all
    ``n_others = n - 1`` of them, or a kept table of the nearest ``L``; an exponential kernel's
    full table also keeps its distances, ``sorted_d``), ``dnn_kernel`` and ``epsilon``; with
    ``drop_tol > 0`` each row keeps, at each ``theta``, its nearest others up to where the rest
    of its weight is within ``drop_tol``; every coupling raises ``dropped[0]``
    to its bound on the weight share a row leaves out
    (:func:`~pymc_knn.kernels.structure.dnn_table_cumulative`), and
    ``dropped[1:3]`` to the largest and lowers it to the smallest sigma asked for. The unused
    arrays are empty. A kNN field may number the points otherwise than the data (``perm``,
    ``rank``): ``y`` and every auxiliary draw are then in the field's order. The kernels take a
    :class:`KnnField` or a :class:`DnnField`, whose type chooses what they compile
    (:func:`by_type`).
    """

    kind: int
    neighbours: np.ndarray
    reverse_rank: np.ndarray
    order: np.ndarray
    sorted_sq: np.ndarray
    dnn_kernel: int
    epsilon: float
    class_weights: np.ndarray
    y: np.ndarray
    energy_y: np.ndarray
    k_max: int
    beta_max: float
    n_others: int
    dropped: np.ndarray
    shells: np.ndarray  # int32 (n, J): a kept table's dropped points by shell (J = 0: none)
    shell_step: float
    perm: np.ndarray  # kNN: the field's point r is the data's perm[r] (empty: the same order)
    rank: np.ndarray  # its inverse: the data's point i is the field's rank[i]
    drop_tol: float  # d-nn: the share of a row's weight it may leave out (0: every pair)
    parallel: bool  # d-nn: couplings and energies may run on numba's thread pool
    sorted_d: np.ndarray  # d-nn: sqrt(sorted_sq) of an exponential full table, else (0, 0)


class KnnField(Field):
    """A kNN term's :class:`Field`, typed as such: see :func:`by_type`."""

    __slots__ = ()


class DnnField(Field):
    """A d-nn term's :class:`Field`, typed as such: see :func:`by_type`."""

    __slots__ = ()


def by_type(cases, general=None):
    """A function that runs the njit function of the first ``(cls, function)`` of ``cases``
    whose ``cls`` its first argument's tuple class is a subclass of, else the njit function
    ``general``. Numba compiles the chosen one only, the others not at all; called from Python it
    chooses the same way.

    The steps build a :class:`KnnField` or a :class:`DnnField` and, for the default sampler, a
    :class:`SwendsenWangAuxiliary`, so a kNN term's kernels compile no d-nn code nor the other
    samplers', and the other way round: a first run compiles about 30% less for a kNN term and
    17% less for a d-nn term (benchmarks/README.md, "A kernel for each kind of term"). Another
    :class:`Auxiliary` compiles every sampler; a plain :class:`Field` is refused.
    """

    def pick(cls):
        for case, impl in cases:
            if issubclass(cls, case):
                return impl
        if general is None:
            kinds = " or ".join(case.__name__ for case, _ in cases)
            raise TypeError(f"{cls.__name__}: make it a {kinds}")
        return general

    def chosen(*args):
        return pick(type(args[0]))(*args)

    @overload(chosen)
    def _typed(*args):
        try:
            impl = pick(args[0].instance_class)
        except TypeError as e:
            raise errors.TypingError(str(e)) from None
        return _calling(impl)

    return chosen


def _calling(impl):
    return lambda *args: impl(*args)


def by_field_kind(knn, dnn):
    """:func:`by_type` on the field, the first argument: ``knn`` or ``dnn``."""
    return by_type(((KnnField, knn), (DnnField, dnn)))


class Auxiliary(NamedTuple):
    """The method and its auxiliary draws: a Markov chain sampler's draw runs ``sweeps`` sweeps
    from ``start``: the observed labels (``START_OBSERVED``), uniform labels (``START_RANDOM``)
    or a row of the fixed ``start_labels`` (``START_LABELS``; in the field's order): a ladder
    of draws, for each of the ``start_thetas`` (``k`` or ``sigma``) at the non-decreasing betas of
    its row of ``start_betas``, ``rows / start_betas.size`` draws at each (:func:`ladder_row`)."""

    method: int
    sampler: int
    sweeps: int
    start: int
    max_sweeps: int
    start_labels: np.ndarray  # (rows, n), a small integer type, for START_LABELS, else empty
    start_betas: np.ndarray  # float64 (thetas, rungs) for START_LABELS, else empty
    start_thetas: np.ndarray  # float64 (thetas,) for START_LABELS, else empty


class SwendsenWangAuxiliary(Auxiliary):
    """An :class:`Auxiliary` whose sampler is Swendsen-Wang, typed as such: see :func:`by_type`."""

    __slots__ = ()


class Proposal(NamedTuple):
    """Positions of the block's coordinates in ``x`` and the proposal's parameters.

    ``free`` are the continuous coordinates that leave the graph alone (beta's); ``graph`` the
    coordinates that move ``k`` or ``sigma``, each discrete (``k``: a uniform move of radius
    ``step``, cut to ``[lower, upper]``) or continuous (a Gaussian move of sd ``step``).
    """

    free: np.ndarray  # int64 (dc,)
    chol: np.ndarray  # (dc, dc): beta move x_free + chol @ eps
    graph: np.ndarray  # int64 (dg,)
    discrete: np.ndarray  # bool (dg,)
    lower: np.ndarray  # int64 (dg,)
    upper: np.ndarray  # int64 (dg,)
    step: np.ndarray  # (dg,): radius (discrete) or sd (continuous)
    wide_step: np.ndarray  # (dg,): the same for the wide move
    slope: np.ndarray  # (dg, dc): ridge shift of the free coordinates per unit of a graph move
    p_graph: float  # probability of a graph (or wide) move ...
    futile_at: np.ndarray  # (dg,) or (0,): ... but at these graph coordinates (where their moves
    p_futile: float  # were futile, or the chain's home) this one, the Hastings ratio corrected
    p_wide: float  # probability that a graph move is a jump (or wide, before the first fit)
    jump: np.ndarray  # (dg, m, 3): (weight, mean, sd) of the jump density's normal components
    p_beta_jump: float  # probability that a beta move is a beta jump
    beta_centre: np.ndarray  # (dc, 1 + dg): the beta jump's mean, a + b g (rows: a, b)
    beta_chol: np.ndarray  # (dc, dc): ... and its Cholesky factor (0 x 0: no beta jumps)
    bridge: int  # exchange: intermediate fields of a graph move's ratio (0: none) ...
    bridge_unit: float  # ... or, when > 0, (fields + 1) per unit of the move's size, ...
    bridge_units: np.ndarray  # ... the larger of its two ends' regions' (BRIDGE_REGION), ...
    bridge_origin: int  # ... the first entry's region; bridge_unit outside the table
    max_bridge: int  # bound on the fields of one move
    delayed: int  # exchange: which moves are screened by the fitted densities first (SCREEN_*)
    measure_noise: bool  # tuning: whether graph moves measure their ratio's noise (the bridging's)
    plateau: (
        np.ndarray
    )  # (0,): no plateau move, or (j, top, edge, share): see the module's docstring


PLATEAU_J, PLATEAU_TOP, PLATEAU_EDGE, PLATEAU_SHARE = range(4)
NO_PLATEAU = np.zeros(0)


_NO_EDGES = np.empty(0, dtype=np.int32)


@njit(cache=True)
def _empty_csr():
    return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)


@njit(cache=True)
def coupling(f, theta, need_csr):
    """The field's couplings at ``theta`` in a new array (see :func:`coupling_into`)."""
    n = f.sorted_sq.shape[0]
    return coupling_into(
        f, theta, need_csr, np.empty(f.sorted_sq.shape), np.empty(n), np.empty(n, dtype=np.int64)
    )


@njit(cache=True)
def coupling_into(f, theta, need_csr, cumulative, floor, ends):
    """The field's couplings at ``theta``: ``(src, dst, weight, uniform_weight, indptr, indices,
    data, cumulative, energy_y, floor, ends)``.

    kNN: the edge list, and the CSR when ``need_csr`` (Gibbs, CFTP, the pseudo-likelihood);
    ``E(y)`` from the table of every k. d-nn: the running sums of the row-normalised weights in
    each row's distance order, written into ``cumulative`` up to each row's end, ``ends``, which
    is all Swendsen-Wang and the energies need, and ``E(y)`` computed with them; the edge list
    and CSR are built only when ``need_csr``. ``floor`` receives the ball kernel's floor weights
    on a kept table, and on a full one unless ``need_csr`` (the rows then end at the balls'
    edges: a third of the work on the shipped data); else 0.
    """
    return _coupling_of(f, theta, need_csr, cumulative, floor, ends)


@njit(cache=True)
def _dnn_coupling(f, theta, need_csr, cumulative, floor, ends):
    n = f.y.size
    ey = dnn_table_cumulative(
        f.sorted_sq,
        f.order,
        theta,
        f.dnn_kernel,
        f.epsilon,
        cumulative,
        f.y,
        f.class_weights,
        f.n_others,
        floor,
        f.dropped,
        f.shells,
        f.shell_step,
        f.drop_tol,
        ends,
        f.parallel,
        not need_csr,
        f.sorted_d,
    )
    f.dropped[1] = max(f.dropped[1], theta)
    f.dropped[2] = min(f.dropped[2], theta)
    if need_csr:
        src, dst, weight = rows_to_edges(f.order, cumulative, ends)
        indptr, indices, data = csr_from_edges(n, src, dst, weight)
    else:
        indptr, indices, data = _empty_csr()
        src, dst, weight = _NO_EDGES, _NO_EDGES, data
    return src, dst, weight, 0.0, indptr, indices, data, cumulative, ey, floor, ends


@njit(cache=True)
def _knn_coupling(f, theta, need_csr, cumulative, floor, ends):
    indptr, indices, data = _empty_csr()
    floor[:] = 0.0
    k = int(theta)
    equal = f.kind == KNN_EQUAL
    src, dst, weight = knn_edges(f.neighbours, f.reverse_rank, k, equal, f.perm, f.rank)
    if need_csr:
        indptr, indices, data = knn_csr(f.neighbours, f.reverse_rank, k, equal, f.perm, f.rank)
    ey = f.energy_y[k - 1]
    return (src, dst, weight, 1.0 / k, indptr, indices, data, cumulative, ey, floor, ends)


_coupling_of = by_field_kind(_knn_coupling, _dnn_coupling)


@njit(cache=True)
def new_couplings(f):
    """The couplings :func:`run_iterations` starts a chain with: two of no ``theta``, whose
    buffers (a d-nn field's running sums, floors and row ends) later calls fill."""
    n = f.sorted_sq.shape[0]
    kept = np.array([np.nan, 0.0, np.nan, 0.0])
    return _blank(f.sorted_sq.shape, n), _blank(f.sorted_sq.shape, n), kept


@njit(cache=True)
def _blank(shape, n):
    indptr, indices, data = _empty_csr()
    ends = np.zeros(n, dtype=np.int64)
    return (
        _NO_EDGES,
        _NO_EDGES,
        data,
        0.0,
        indptr,
        indices,
        data,
        np.empty(shape),
        0.0,
        np.zeros(n),
        ends,
    )


@njit(cache=True)
def _coupling_in(f, theta, need_csr, c):
    """The coupling at ``theta`` in ``c``'s buffers, and its own bound on the weight share a
    d-nn row leaves out (``f.dropped[0]`` is raised to it, as by every coupling)."""
    before = f.dropped[0]
    f.dropped[0] = 0.0
    out = coupling_into(f, theta, need_csr, c[7], c[9], c[10])
    own = f.dropped[0]
    f.dropped[0] = max(before, own)
    return out, own


@njit(cache=True)
def _dnn_noted(f, theta, bound):
    """Record a kept coupling's use in ``f.dropped`` as :func:`coupling_into` records a new one."""
    f.dropped[0] = max(f.dropped[0], bound)
    f.dropped[1] = max(f.dropped[1], theta)
    f.dropped[2] = min(f.dropped[2], theta)


@njit(cache=True)
def _nothing(*args):
    pass


_noted = by_field_kind(_nothing, _dnn_noted)


@njit(cache=True)
def _energy(f, c, z):
    """``E(z)`` at couplings ``c`` of field ``f``."""
    return _energy_of(f, c, z)


@njit(cache=True)
def _dnn_energy(f, c, z):
    return rows_energy(f.order, c[7], c[10], z, f.class_weights, c[9], f.parallel)


@njit(cache=True)
def _knn_energy(f, c, z):
    return _edges_energy(c, z, f.class_weights)


_energy_of = by_field_kind(_knn_energy, _dnn_energy)


@njit(cache=True)
def _energies(f, c0, c1, z):
    """``(E(z) at c0, E(z) at c1)``: of a d-nn field, one pass over both tables."""
    return _energies_of(f, c0, c1, z)


@njit(cache=True)
def _dnn_energies(f, c0, c1, z):
    a = f.class_weights
    return rows_energies(f.order, c0[7], c0[10], c0[9], c1[7], c1[10], c1[9], z, a, f.parallel)


@njit(cache=True)
def _knn_energies(f, c0, c1, z):
    # a symmetrised model's smaller graph is the first entries of each row of the larger's:
    # both graphs' equal pairs in one pass, the same counts (Ripley: 4-6 us a pass, a graph
    # move's auxiliary draw about 75)
    a = f.class_weights
    if f.kind == KNN_SYMMETRISED and c0[3] > 0.0 and c1[3] > 0.0 and a.min() == a.max():
        k0, k1 = c0[0].size // z.size, c1[0].size // z.size
        if k0 >= k1:
            n0, n1 = nested_equal_pairs(c0[0], c0[1], z, k0, k1)
        else:
            n1, n0 = nested_equal_pairs(c1[0], c1[1], z, k1, k0)
        return c0[3] * a[0] * n0, c1[3] * a[0] * n1
    return _knn_energy(f, c0, z), _knn_energy(f, c1, z)


_energies_of = by_field_kind(_knn_energies, _dnn_energies)


@njit(cache=True)
def _edges_energy(c, z, a):
    """``E(z)`` on a coupling's edge list: a count of equal pairs when its edges share one
    weight and its classes one weight (no weight read), else the weighted sum."""
    if c[3] > 0.0 and a.min() == a.max():
        return c[3] * a[0] * equal_pairs(c[0], c[1], z)
    return energy(c[0], c[1], c[2], z, a)


@njit(cache=True)
def ladder_row(betas, thetas, rows, beta, theta, rng):
    """A row of a ladder (:class:`Auxiliary`) to start a draw at ``(beta, theta)`` from: among
    the rungs of the nearest of ``thetas`` (the first of equals), of the two about ``beta`` the
    upper with probability ``(beta - below) / (above - below)`` (past the end rungs, the end
    one), then one of its draws, uniformly. The start's law is then the two rungs' stationary
    laws mixed with linear weights: its mean energy is the stationary one at ``beta`` to second
    order in the rungs' spacing, where the nearer rung alone would be off to first order. No
    random number is drawn where there is one row (a single start keeps its draws)."""
    g = 0
    for h in range(1, thetas.size):
        if abs(thetas[h] - theta) < abs(thetas[g] - theta):
            g = h
    b = betas[g]
    rungs = b.size
    j = 0
    if rungs > 1:
        if beta >= b[rungs - 1]:
            j = rungs - 1
        elif beta > b[0]:
            while b[j + 1] <= beta:
                j += 1
            if rng.random() * (b[j + 1] - b[j]) < beta - b[j]:
                j += 1
    per_rung = rows // betas.size
    return (g * rungs + j) * per_rung + (rng.integers(0, per_rung) if per_rung > 1 else 0)


@njit(cache=True)
def _start_labels(f, aux, z, rng, beta, theta):
    if aux.start == START_LABELS:
        r = ladder_row(
            aux.start_betas, aux.start_thetas, aux.start_labels.shape[0], beta, theta, rng
        )
        for i in range(z.size):
            z[i] = aux.start_labels[r, i]
    elif aux.start == START_OBSERVED:
        z[:] = f.y
    else:
        for i in range(z.size):
            z[i] = rng.integers(0, f.class_weights.size)


@njit(cache=True)
def _sweeps(f, aux, c, beta, z, n_sweeps, rng):
    """``n_sweeps`` sweeps of the (Markov chain) auxiliary sampler on ``z``."""
    _sweeps_of(aux, f, c, beta, z, n_sweeps, rng)


@njit(cache=True)
def _dnn_swendsen_wang(f, c, beta, z, n_sweeps, rng):
    swendsen_wang_rows(f.order, c[7], c[10], z, beta, f.class_weights, n_sweeps, rng, c[9])


@njit(cache=True)
def _knn_swendsen_wang(f, c, beta, z, n_sweeps, rng):
    swendsen_wang_sweeps(c[0], c[1], c[2], c[3], z, beta, f.class_weights, n_sweeps, rng)


_swendsen_wang_of = by_field_kind(_knn_swendsen_wang, _dnn_swendsen_wang)


@njit(cache=True)
def _swendsen_wang_sweeps(aux, f, c, beta, z, n_sweeps, rng):
    _swendsen_wang_of(f, c, beta, z, n_sweeps, rng)


@njit(cache=True)
def _any_sweeps(aux, f, c, beta, z, n_sweeps, rng):
    if aux.sampler == SWENDSEN_WANG:
        _swendsen_wang_of(f, c, beta, z, n_sweeps, rng)
    else:
        gibbs_sweeps(c[4], c[5], c[6], z, beta, f.class_weights, n_sweeps, rng)


_sweeps_of = by_type(((SwendsenWangAuxiliary, _swendsen_wang_sweeps),), _any_sweeps)


@njit(cache=True)
def auxiliary_draw(f, aux, c, beta, theta, z, rng):
    """``z <- z ~ f(. | beta, theta)`` at couplings ``c`` (``theta``'s); returns ``(sweeps,
    exact)``."""
    _start_labels(f, aux, z, rng, beta, theta)
    return _draw_of(aux, f, c, beta, z, rng)


@njit(cache=True)
def _swendsen_wang_draw(aux, f, c, beta, z, rng):
    _swendsen_wang_of(f, c, beta, z, aux.sweeps, rng)
    return aux.sweeps, False


@njit(cache=True)
def _any_draw(aux, f, c, beta, z, rng):
    if aux.sampler == SWENDSEN_WANG or aux.sampler == GIBBS:
        _sweeps(f, aux, c, beta, z, aux.sweeps, rng)
        return aux.sweeps, False
    if aux.sampler == CFTP:
        seed = rng.integers(0, 9223372036854775807)
        ok, used = cftp_potts2(c[4], c[5], c[6], z, beta, f.class_weights, aux.max_sweeps, seed)
        return used, ok
    enumerated_draw(c[0], c[1], c[2], f.class_weights, beta, z, rng.random())
    return 0, True


_draw_of = by_type(((SwendsenWangAuxiliary, _swendsen_wang_draw),), _any_draw)


@njit(cache=True)
def is_checkpoint(t):
    """Whether the relaxation check reads the energy after ``t`` sweeps: every sweep below 16,
    then every ``2^j``-th in ``[2^(j+3), 2^(j+4))``, about 8 readings per doubling of ``t``, so
    that each window ``[s/2, s)`` and ``[s, 2s)`` holds about 8 whatever ``s``."""
    if t < 1:
        return False
    stride = 1
    while t >= 16 * stride:
        stride *= 2
    return t % stride == 0


@njit(cache=True)
def relaxation_sweeps(f, aux, beta, theta, labels, energies, done, upto, first, rng):
    """Advance the relaxation check's auxiliary chains at ``(beta, theta)`` from ``done`` to
    ``upto`` sweeps (``done = 0``: from the sampler's start labels).

    ``labels`` (replicates x n, a small integer type) holds each chain's labels between calls;
    ``energies[r, t]`` receives chain ``r``'s energy after ``t`` sweeps at every
    :func:`is_checkpoint` from ``first`` on (the first check's early window: a check of ``s``
    sweeps reads from ``s // 2``, and the sweeps only grow, so earlier readings would never be
    used; an energy costs about what a kNN sweep does), and ``energies[r, 0]`` its start's
    (:func:`start_memory`; none where ``first > upto``, as for a ladder's draws). On a d-nn
    field the readings' labels are held and their energies computed up to
    ``READING_COLUMNS`` at a time in one pass over the table (:func:`_read`): one reading
    alone cost about 6 sweeps on 1,000 points with rows of 999 (20 covariates). A check that
    fails at ``s`` sweeps extends the same chains to the next ``s`` instead of starting new ones
    (a chain's law after ``t`` sweeps does not depend on where it was paused), so growing the
    sweeps costs the sweeps of the last check only.
    """
    c = coupling(f, theta, aux.sampler != SWENDSEN_WANG)
    z = np.empty(f.y.size, dtype=np.int64)
    read = (energies, _reading_columns(f, labels), np.empty((READING_COLUMNS, 2), np.int64))
    m = 0  # readings held for one pass
    for r in range(labels.shape[0]):
        check_signals()
        if done == 0:
            _start_labels(f, aux, z, rng, beta, theta)
            if first <= upto:  # the start's energy, for start_memory (no reading at sweep 0)
                m = _read(f, c, z, r, 0, read, m)
        else:
            for i in range(z.size):
                z[i] = labels[r, i]
        for t in range(done + 1, upto + 1):
            _sweeps(f, aux, c, beta, z, 1, rng)
            if t >= first and is_checkpoint(t):
                m = _read(f, c, z, r, t, read, m)
        for i in range(z.size):
            labels[r, i] = z[i]
    _read_held(f, c, read, m)


READING_COLUMNS = 256
"""Readings of a d-nn relaxation check held for one pass over the table
(:func:`~pymc_knn.kernels.structure.rows_energy_columns`); from about 64 on a reading costs
about the same (a fifth of one alone on 1,000 points with rows of 999)."""
READING_BYTES = 1 << 22
"""The most the held readings' labels take (4 MB: 256 readings up to 16,384 points); also the
most a bridged move's fields' labels take (:func:`bridged_log_ratio`)."""


@njit(cache=True)
def _reading_columns(f, labels):
    """Room for the labels of the readings a d-nn check holds (none on a kNN field, whose
    energy costs a pass over its edge list and is read at once)."""
    return _reading_columns_of(f, labels)


@njit(cache=True)
def _dnn_reading_columns(f, labels):
    n = labels.shape[1]
    width = min(READING_COLUMNS, max(1, READING_BYTES // (n * labels.itemsize)))
    return np.empty((n, width), dtype=labels.dtype)


@njit(cache=True)
def _knn_reading_columns(f, labels):
    return np.empty((labels.shape[1], 0), dtype=labels.dtype)


_reading_columns_of = by_field_kind(_knn_reading_columns, _dnn_reading_columns)


@njit(cache=True)
def _read(f, c, z, r, t, read, m):
    """Chain ``r``'s energy after ``t`` sweeps into ``energies[r, t]`` (``read = (energies,
    columns, at)``): on a kNN field at once, on a d-nn one held in a column of ``columns`` (its
    place in ``at``) until they fill. Returns the readings held."""
    return _read_of(f, c, z, r, t, read, m)


@njit(cache=True)
def _knn_read(f, c, z, r, t, read, m):
    read[0][r, t] = _energy(f, c, z)
    return m


@njit(cache=True)
def _dnn_read(f, c, z, r, t, read, m):
    _, columns, at = read
    for i in range(z.size):
        columns[i, m] = z[i]
    at[m, 0], at[m, 1] = r, t
    if m + 1 < columns.shape[1]:
        return m + 1
    _dnn_read_held(f, c, read, m + 1)
    return 0


_read_of = by_field_kind(_knn_read, _dnn_read)


@njit(cache=True)
def _read_held(f, c, read, m):
    """The energies of the ``m`` readings :func:`_read` holds, into their places."""
    _read_held_of(f, c, read, m)


@njit(cache=True)
def _dnn_read_held(f, c, read, m):
    energies, columns, at = read
    e = rows_energy_columns(f.order, c[7], c[10], c[9], columns, m, f.class_weights)
    for j in range(m):
        energies[at[j, 0], at[j, 1]] = e[j]


_read_held_of = by_field_kind(_nothing, _dnn_read_held)


def relaxation_windows(energies, sweeps):
    """``(early, late, late_sq)`` of :func:`relaxation` from the energies of
    :func:`relaxation_sweeps` run to ``2 * sweeps``."""
    half = max(sweeps // 2, 1)
    t = np.arange(energies.shape[1])
    points = np.array([is_checkpoint(i) for i in t])
    early = energies[:, points & (t >= half) & (t < sweeps)]
    late = energies[:, points & (t >= sweeps) & (t < 2 * sweeps)]
    return early.mean(axis=1), late.mean(axis=1), (late**2).mean(axis=1)


def spread_at(energies, sweeps):
    """The variance of the energy across the chains of :func:`relaxation_sweeps` about
    ``sweeps`` sweeps from their common start: at the readings within a factor ``sqrt(2)`` of
    ``sweeps``, averaged over them (the spread grows with the sweeps, so the readings before
    and after ``sweeps`` about even out)."""
    return float(energies[:, _readings_near(energies, sweeps)].var(axis=0, ddof=1).mean())


def _readings_near(energies, sweeps):
    """The columns of :func:`relaxation_sweeps`' energies read within a factor ``sqrt(2)`` of
    ``sweeps``."""
    t = np.arange(energies.shape[1])
    near = (t * t * 2 >= sweeps * sweeps) & (t * t < 2 * sweeps * sweeps)
    return np.array([is_checkpoint(i) for i in t]) & near & np.isfinite(energies[0])


def start_memory(energies, sweeps):
    """The share of their start's deviation in energy that the chains of
    :func:`relaxation_sweeps` keep about ``sweeps`` sweeps from it: the slope, across the
    chains, of their energies at the readings within a factor ``sqrt(2)`` of ``sweeps`` (as
    :func:`spread_at`) on their start's (``energies[:, 0]``), averaged over the readings; 0
    where the chains share one start (its memory shows in their spread instead)."""
    e0 = energies[:, 0] - energies[:, 0].mean()
    var0 = float(e0 @ e0)
    if not var0 > 1e-12 * float(energies[:, 0] @ energies[:, 0]):
        return 0.0
    return float((e0 @ energies[:, _readings_near(energies, sweeps)]).mean() / var0)


def relaxation(f, aux, beta, theta, sweeps, replicates, rng):
    """How far ``replicates`` auxiliary chains (from the sampler's start labels, at ``beta,
    theta``) are from equilibrium after ``sweeps // 2`` sweeps.

    Returns ``(early, late, late_sq)``, one entry per chain: the mean energy over the readings
    (:func:`is_checkpoint`) in sweeps ``[sweeps // 2, sweeps)`` and in ``[sweeps, 2 sweeps)``,
    and the mean squared energy over the latter. When the chains have relaxed by ``sweeps //
    2`` both windows have the same mean. The readings are sparse because an energy costs more
    than a sweep on a wide d-nn table (``O(n L)`` against ``O(n beta log L)``); the check's
    noise is measured across the chains.
    """
    labels, energies = relaxation_state(f, replicates, sweeps)
    relaxation_sweeps(f, aux, beta, theta, labels, energies, 0, 2 * sweeps, sweeps // 2, rng)
    return relaxation_windows(energies, sweeps)


def label_dtype(G):
    """The smallest integer type that holds the labels of ``G`` classes."""
    return np.int8 if G <= 127 else np.int16 if G <= 32767 else np.int64


NO_BETAS, NO_THETAS = np.empty((0, 0)), np.empty(0)
"""``start_betas`` and ``start_thetas`` of an :class:`Auxiliary` that starts elsewhere than at
fixed labels."""


def no_start_labels(G):
    """``start_labels`` of an :class:`Auxiliary` that starts elsewhere than at fixed labels
    (typed as a ladder of ``G`` classes' labels is, so that both compile to one kernel)."""
    return np.empty((0, 0), dtype=label_dtype(G))


def relaxation_state(f, replicates, max_sweeps):
    """Empty ``(labels, energies)`` for :func:`relaxation_sweeps` up to ``2 * max_sweeps``."""
    labels = np.empty((replicates, f.y.size), dtype=label_dtype(f.class_weights.size))
    return labels, np.full((replicates, 2 * max_sweeps + 1), np.nan)


@njit(cache=True)
def bridged_log_ratio(
    c0,
    c1,
    beta0,
    beta1,
    z,
    n_bridge,
    class_weights,
    rng,
    ez1=np.nan,
    ez0=np.nan,
    nested=False,
    hold_bytes=READING_BYTES,
):
    """The exchange algorithm's auxiliary term with bridging (Murray et al. 2006, section 5).

    ``c0``, ``c1``: couplings ``(src, dst, weight, uniform_weight, ...)`` of the kNN graphs at
    ``theta0`` and ``theta1``. ``z`` (updated in place) enters as a draw from ``f(. | theta1)``;
    it is moved by one Swendsen-Wang sweep through each of the ``n_bridge`` fields
    ``q_s ∝ q(. | theta0)^{t_s} q(. | theta1)^{1 - t_s}``, ``t_s = s / (n_bridge + 1)`` (the
    Potts field on the union of both edge lists, each scaled by its weight). Returns
    ``sum_{s=0..n_bridge} [log q(z_s | theta0) - log q(z_s | theta1)] / (n_bridge + 1)``;
    ``n_bridge = 0`` is the plain exchange term. ``ez1``, ``ez0``: ``log q(z | theta1) / beta1``
    and ``log q(z | theta0) / beta0`` on entry when known (the auxiliary draw's energies), else
    computed. ``nested``: the edge lists
    are a symmetrised kNN model's (the smaller graph's edges the first of each row of the
    larger's), whose equal pairs a field then counts in one pass (:func:`nested_equal_pairs`).

    Where both graphs share one weight and the classes one weight, the fields' labels are held
    (up to ``hold_bytes``, :func:`_held_columns`) and their equal pairs counted in one pass
    over each edge list for all of them (:func:`equal_pairs_columns`): the same counts, so the
    same term to the bit, for a fraction of a pass each (``hold_bytes=0``: a pass a field).
    """
    src0, dst0, w0, u0 = c0[0], c0[1], c0[2], c0[3]
    src1, dst1, w1, u1 = c1[0], c1[1], c1[2], c1[3]
    fast = u0 > 0.0 and u1 > 0.0 and class_weights.min() == class_weights.max()
    e0 = src0.size
    union = 0 if fast else e0 + src1.size
    src = np.empty(union, dtype=np.int64)
    dst = np.empty(union, dtype=np.int64)
    w = np.empty(union)
    if not fast:
        src[:e0] = src0
        src[e0:] = src1
        dst[:e0] = dst0
        dst[e0:] = dst1
    nested = nested and fast and z.size > 0
    k0, k1 = src0.size // max(z.size, 1), src1.size // max(z.size, 1)
    fields = n_bridge + np.isnan(ez1) if fast else 0  # those whose energies are unknown
    held = _held_columns(z.size, fields, hold_bytes, class_weights.size)
    at = np.empty(held.shape[1], dtype=np.int64)
    energies = np.empty((n_bridge + 1, 2))
    m = 0  # fields held
    for s in range(n_bridge + 1):
        if s == 0 and not np.isnan(ez1):
            energies[0, 1] = ez1
            energies[0, 0] = _edges_energy(c0, z, class_weights) if np.isnan(ez0) else ez0
        elif held.shape[1]:
            m = _hold(z, s, held, at, m)
            if m == held.shape[1]:
                _knn_held_energies(c0, c1, held, m, at, energies, class_weights, nested)
                m = 0
        elif nested:
            if k0 >= k1:
                n0, n1 = nested_equal_pairs(src0, dst0, z, k0, k1)
            else:
                n1, n0 = nested_equal_pairs(src1, dst1, z, k1, k0)
            energies[s, 0] = u0 * class_weights[0] * n0
            energies[s, 1] = u1 * class_weights[0] * n1
        else:
            energies[s, 0] = _edges_energy(c0, z, class_weights)
            energies[s, 1] = _edges_energy(c1, z, class_weights)
        if s == n_bridge:
            break
        t = (s + 1.0) / (n_bridge + 1.0)
        if fast:  # two uniform graphs: the bonds of each are found by geometric gaps
            swendsen_wang_pair(
                src0,
                dst0,
                t * beta0 * u0,
                src1,
                dst1,
                (1.0 - t) * beta1 * u1,
                z,
                class_weights,
                rng,
            )
            continue
        w[:e0] = (t * beta0) * w0
        w[e0:] = ((1.0 - t) * beta1) * w1
        swendsen_wang_sweeps(src, dst, w, 0.0, z, 1.0, class_weights, 1, rng)
    if m:
        _knn_held_energies(c0, c1, held, m, at, energies, class_weights, nested)
    return _bridged_mean(energies, beta0, beta1)


HOLD_FIELDS = 4
"""Fewest bridging fields whose energies a move computes in one pass: below 4 columns a pass
costs more than a pass a field (one column 2-4.5 times, three 0.8-2.4 times; from four on
0.65-1.1 times, eight 0.3-0.7 times, on d-nn tables and kNN graphs of Ripley to class20:
benchmarks/README.md, "Bridging fields' energies in one pass")."""


@njit(cache=True)
def _held_columns(n, fields, hold_bytes, n_classes):
    """Room for the labels of up to ``fields`` bridging fields, whose energies are then computed
    in one pass for all (at most ``hold_bytes``; none where it is 0, where the labels need more
    than a byte or where ``fields`` are fewer than :data:`HOLD_FIELDS`)."""
    width = 0
    if n_classes <= 127 and hold_bytes > 0 and fields >= HOLD_FIELDS:
        width = min(fields, max(1, hold_bytes // max(n, 1)))
    return np.empty((n, width), dtype=np.int8)


@njit(cache=True)
def _hold(z, s, held, at, m):
    """Field ``s``'s labels ``z`` into column ``m`` of ``held``; returns the fields held."""
    for i in range(z.size):
        held[i, m] = z[i]
    at[m] = s
    return m + 1


@njit(cache=True)
def _knn_held_energies(c0, c1, held, m, at, energies, class_weights, nested):
    """The energies at both kNN couplings of the ``m`` fields ``held`` into their rows ``at``
    of ``energies``: each as :func:`bridged_log_ratio` computes it alone."""
    n = held.shape[0]
    k0, k1 = c0[0].size // n, c1[0].size // n
    if nested and k0 >= k1:
        n0, n1 = nested_equal_pairs_columns(c0[0], c0[1], held, m, k0, k1)
    elif nested:
        n1, n0 = nested_equal_pairs_columns(c1[0], c1[1], held, m, k1, k0)
    else:
        n0 = equal_pairs_columns(c0[0], c0[1], held, m)
        n1 = equal_pairs_columns(c1[0], c1[1], held, m)
    for j in range(m):
        energies[at[j], 0] = c0[3] * class_weights[0] * n0[j]
        energies[at[j], 1] = c1[3] * class_weights[0] * n1[j]


@njit(cache=True)
def _bridged_mean(energies, beta0, beta1):
    """The mean over the fields of ``beta0 E0(z_s) - beta1 E1(z_s)``, in the fields' order."""
    total = 0.0
    for s in range(energies.shape[0]):
        total += beta0 * energies[s, 0] - beta1 * energies[s, 1]
    return total / energies.shape[0]


@njit(cache=True)
def field_sweeps(e0, e1, row_sweep=FIELD_ROW_SWEEP):
    """Swendsen-Wang sweeps per bridging field of a d-nn move between tables whose rows end at
    ``e0`` and ``e1``: one per ``row_sweep`` entries of the mean row (:data:`FIELD_ROW_SWEEP`),
    between 1 and :data:`MAX_FIELD_SWEEPS`."""
    total = 0
    for i in range(e0.size):
        total += max(e0[i], e1[i])
    return min(max(int(round(total / (row_sweep * e0.size))), 1), MAX_FIELD_SWEEPS)


@njit(cache=True)
def bridged_log_ratio_rows(
    f,
    c0,
    c1,
    beta0,
    beta1,
    z,
    n_bridge,
    rng,
    ez1=np.nan,
    ez0=np.nan,
    written_row=WRITTEN_ROW,
    row_sweep=FIELD_ROW_SWEEP,
    hold_bytes=READING_BYTES,
):
    """:func:`bridged_log_ratio` for a d-nn field. Both ``sigma`` order a row's neighbours
    alike (the kernel falls with distance), so the field ``q(. | theta0)^t q(. | theta1)^(1-t)``
    has the running sums ``t beta0 C0 + (1 - t) beta1 C1`` along each row (a shorter row's sum
    carried to the longer's end) and the floors ``t beta0 floor0 + (1 - t) beta1 floor1``, and
    :func:`field_sweeps` sweeps of :func:`swendsen_wang_rows` at beta 1 move ``z`` through it
    (each leaves the field invariant, so the estimate stays unbiased: Neal 2001): written out
    when the rows hold at most ``written_row`` entries on average (:data:`WRITTEN_ROW`), else
    read where the events fall (its ``pair``), with the same draws either way. ``ez1``,
    ``ez0``: ``E_theta1(z)`` and ``E_theta0(z)`` when known (the auxiliary draw's), else
    computed. The fields' labels are held (up to ``hold_bytes``) and their energies under each
    table computed in one pass for all (:func:`rows_energy_columns`), each to the bit as alone
    (``hold_bytes=0``: both tables' in one pass a field, :func:`rows_energies`): an energy
    reads every entry of its table, a sweep a few a row, so alone a field's two energies cost
    more than its sweeps."""
    C0, e0, floor0 = c0[7], c0[10], c0[9]
    C1, e1, floor1 = c1[7], c1[10], c1[9]
    n = z.size
    ends = np.maximum(e0, e1)
    in_place = ends.sum() > written_row * n
    sweeps = field_sweeps(e0, e1, row_sweep)
    mixed = np.empty((0, 0) if in_place else C0.shape)
    floor = np.empty(n)
    a = f.class_weights
    held = _held_columns(n, n_bridge + np.isnan(ez1), hold_bytes, a.size)
    at = np.empty(held.shape[1], dtype=np.int64)
    energies = np.empty((n_bridge + 1, 2))
    m = 0  # fields held
    for s in range(n_bridge + 1):
        if s == 0 and not np.isnan(ez1):
            energies[0, 0] = _energy(f, c0, z) if np.isnan(ez0) else ez0
            energies[0, 1] = ez1
        elif held.shape[1]:
            m = _hold(z, s, held, at, m)
            if m == held.shape[1]:
                _dnn_held_energies(f, c0, c1, held, m, at, energies)
                m = 0
        else:
            energies[s, 0], energies[s, 1] = _energies(f, c0, c1, z)
        if s == n_bridge:
            break
        t = (s + 1.0) / (n_bridge + 1.0)
        a0, a1 = t * beta0, (1.0 - t) * beta1
        for i in range(n):
            floor[i] = a0 * floor0[i] + a1 * floor1[i]
        pair = (e0, C1, e1, a0, a1)
        if in_place:
            swendsen_wang_rows(f.order, C0, ends, z, 1.0, a, sweeps, rng, floor, pair)
            continue
        for i in range(n):
            for r in range(ends[i]):
                mixed[i, r] = _row_at(C0, i, r, pair)
        swendsen_wang_rows(f.order, mixed, ends, z, 1.0, a, sweeps, rng, floor)
    if m:
        _dnn_held_energies(f, c0, c1, held, m, at, energies)
    return _bridged_mean(energies, beta0, beta1)


@njit(cache=True)
def _dnn_held_energies(f, c0, c1, held, m, at, energies):
    """The energies under both d-nn tables of the ``m`` fields ``held`` into their rows ``at``
    of ``energies``."""
    a = f.class_weights
    e0 = rows_energy_columns(f.order, c0[7], c0[10], c0[9], held, m, a)
    e1 = rows_energy_columns(f.order, c1[7], c1[10], c1[9], held, m, a)
    for j in range(m):
        energies[at[j], 0] = e0[j]
        energies[at[j], 1] = e1[j]


@njit(cache=True)
def _exchange_term(f, aux, c0, c1, beta0, beta1, theta1, same_graph, bridge, z, rng):
    """``z ~ f(. | theta1)`` and the exchange ratio's auxiliary term (bridged for a graph move
    when ``bridge > 0``); returns ``(term, sweeps, exact, E_theta1(z))``."""
    used, exact = auxiliary_draw(f, aux, c1, beta1, theta1, z, rng)
    if same_graph:
        ez1 = _energy(f, c1, z)
        return beta0 * ez1 - beta1 * ez1, used, exact, ez1
    ez0, ez1 = _energies(f, c0, c1, z)
    if bridge > 0:
        term = _bridged_of(f, c0, c1, beta0, beta1, z, bridge, rng, ez1, ez0)
    else:
        term = beta0 * ez0 - beta1 * ez1
    return term, used, exact, ez1


@njit(cache=True)
def _knn_bridged(f, c0, c1, beta0, beta1, z, bridge, rng, ez1, ez0):
    nested = f.kind == KNN_SYMMETRISED
    a = f.class_weights
    return bridged_log_ratio(c0, c1, beta0, beta1, z, bridge, a, rng, ez1, ez0, nested)


_bridged_of = by_field_kind(_knn_bridged, bridged_log_ratio_rows)


@njit(cache=True)
def _log_pl(f, c, beta):
    h = local_fields(c[4], c[5], c[6], f.y, f.class_weights)
    _floor_fields_of(f, c, h)
    return log_pl_derivatives(h, f.y, beta)[0]


@njit(cache=True)
def _dnn_floor_fields(f, c, h):
    if f.sorted_sq.shape[1] < f.n_others:  # the ball's floor, if any
        add_floor_fields(h, f.y, c[9], f.class_weights)


_floor_fields_of = by_field_kind(_nothing, _dnn_floor_fields)


@njit(cache=True)
def _valid(f, beta, theta):
    if not (beta >= 0.0 and np.isfinite(beta) and np.isfinite(theta)):
        return False
    return _theta_valid_of(f, theta)


@njit(cache=True)
def _dnn_theta_valid(f, theta):
    return theta > 0.0


@njit(cache=True)
def _knn_theta_valid(f, theta):
    return theta == np.floor(theta) and 1.0 <= theta <= f.k_max


_theta_valid_of = by_field_kind(_knn_theta_valid, _dnn_theta_valid)


@njit(cache=True)
def n_moves(k, r, lower, upper):
    """``|{k-r..k+r} \\ {k}|`` cut to ``[lower, upper]`` (``k`` itself lies in it)."""
    return min(upper, k + r) - max(lower, k - r)


@njit(cache=True)
def graph_probability(p, x):
    """Probability of a graph move from ``x``: ``p.p_futile`` where the graph coordinates are
    at ``p.futile_at``, else ``p.p_graph``."""
    if p.futile_at.size == 0:
        return p.p_graph
    for j in range(p.graph.size):
        if x[p.graph[j]] != p.futile_at[j]:
            return p.p_graph
    return p.p_futile


@njit(cache=True)
def propose(x, x1, p, rng):
    """Write a proposal into ``x1``; returns ``(move type, log Hastings term)``.

    The choice between a beta and a graph move depends on the graph coordinates
    (:func:`graph_probability`); a graph move's Hastings term carries the ratio of the reverse
    choice's probability to this one's, so each kind of move keeps detailed balance."""
    x1[:] = x
    dc = p.free.size
    dg = p.graph.size
    p0 = graph_probability(p, x)
    if dg > 0 and (dc == 0 or rng.random() < p0):
        kind, log_h = _graph_move(x, x1, p, rng)
        if dc > 0 and kind != NULL_MOVE:
            log_h += np.log(graph_probability(p, x1)) - np.log(p0)
        return kind, log_h
    if p.beta_chol.shape[0] > 0 and rng.random() < p.p_beta_jump:
        return _beta_jump(x, x1, p, rng)
    eps = np.empty(dc)
    for i in range(dc):
        eps[i] = rng.standard_normal()
    for i in range(dc):
        step = 0.0
        for m in range(i + 1):
            step += p.chol[i, m] * eps[m]
        x1[p.free[i]] += step
    return BETA_MOVE, 0.0


@njit(cache=True)
def _graph_move(x, x1, p, rng):
    """A move of one graph coordinate (local, wide or jump) into ``x1``, the free coordinates
    shifted along the ridge; returns ``(move type, log Hastings term)``."""
    dc = p.free.size
    dg = p.graph.size
    j = rng.integers(0, dg) if dg > 1 else 0
    pos = p.graph[j]
    kind = GRAPH_MOVE
    step = p.step[j]
    if rng.random() < p.p_wide:
        if p.jump.shape[1] > 0:
            return _jump(x, x1, p, j, rng)
        kind = WIDE_MOVE
        step = p.wide_step[j]
    log_h = 0.0
    if p.discrete[j]:
        k = np.int64(x[pos])
        r = np.int64(step)
        count = n_moves(k, r, p.lower[j], p.upper[j])
        if count == 0:
            return NULL_MOVE, 0.0
        k1 = max(p.lower[j], k - r) + rng.integers(0, count)
        if k1 >= k:
            k1 += 1
        delta = float(k1 - k)
        log_h = np.log(count) - np.log(n_moves(k1, r, p.lower[j], p.upper[j]))
    else:
        delta = step * rng.standard_normal()
    x1[pos] = x[pos] + delta
    for i in range(dc):
        x1[p.free[i]] += p.slope[j, i] * delta
    return kind, log_h


@njit(cache=True)
def _beta_centre(p, x):
    """The beta jump density's mean at the graph coordinates of ``x``."""
    centre = p.beta_centre[:, 0].copy()
    for i in range(p.free.size):
        for j in range(p.graph.size):
            centre[i] += p.beta_centre[i, 1 + j] * x[p.graph[j]]
    return centre


@njit(cache=True)
def beta_jump_log_density(p, x):
    """Log density of the beta jump mixture at beta's coordinates of ``x`` (up to a constant)."""
    centre = _beta_centre(p, x)
    dc = p.free.size
    u = np.empty(dc)
    q = 0.0
    log_det = 0.0
    for i in range(dc):
        r = x[p.free[i]] - centre[i]
        for m in range(i):
            r -= p.beta_chol[i, m] * u[m]
        u[i] = r / p.beta_chol[i, i]
        q += u[i] * u[i]
        log_det += np.log(p.beta_chol[i, i])
    w = BETA_JUMP_WIDE
    main = np.log(1.0 - BETA_JUMP_DEFENSIVE) - 0.5 * q
    broad = np.log(BETA_JUMP_DEFENSIVE) - 0.5 * q / (w * w) - dc * np.log(w)
    top = max(main, broad)
    return top + np.log(np.exp(main - top) + np.exp(broad - top)) - log_det


@njit(cache=True)
def _beta_jump(x, x1, p, rng):
    """A beta jump (see the module's docstring)."""
    centre = _beta_centre(p, x)
    dc = p.free.size
    w = BETA_JUMP_WIDE if rng.random() < BETA_JUMP_DEFENSIVE else 1.0
    eps = np.empty(dc)
    for i in range(dc):
        eps[i] = rng.standard_normal()
    for i in range(dc):
        v = centre[i]
        for m in range(i + 1):
            v += w * p.beta_chol[i, m] * eps[m]
        x1[p.free[i]] = v
    return BETA_JUMP, beta_jump_log_density(p, x) - beta_jump_log_density(p, x1)


JUMP_TRIES = 1000
"""Draws of the jump density before a discrete jump that keeps falling outside ``[lower, upper]``
gives up (a null move; the chance does not depend on the chain's state)."""


@njit(cache=True)
def _mixture_draw(mix, rng):
    u = rng.random()
    c = 0
    while c < mix.shape[0] - 1 and u >= mix[c, 0]:
        u -= mix[c, 0]
        c += 1
    return mix[c, 1] + mix[c, 2] * rng.standard_normal()


@njit(cache=True)
def _normal_mass(a, b):
    """``Phi(b) - Phi(a)`` for ``a < b``, accurate in both tails."""
    r = 1.0 / np.sqrt(2.0)
    if a >= 0.0:
        return 0.5 * (math.erfc(a * r) - math.erfc(b * r))
    if b <= 0.0:
        return 0.5 * (math.erfc(-b * r) - math.erfc(-a * r))
    return 1.0 - 0.5 * (math.erfc(b * r) + math.erfc(-a * r))


@njit(cache=True)
def jump_log_density(mix, v, discrete):
    """Log density of the jump mixture (rows: weight, mean, sd) at ``v``; for a discrete
    coordinate its mass on ``v``'s unit cell, up to the cut to ``[lower, upper]``, which cancels
    in the ratio."""
    logs = np.empty(mix.shape[0])
    top = -np.inf
    for c in range(mix.shape[0]):
        w, mu, s = mix[c, 0], mix[c, 1], mix[c, 2]
        if discrete:
            logs[c] = np.log(w * _normal_mass((v - 0.5 - mu) / s, (v + 0.5 - mu) / s))
        else:
            d = (v - mu) / s
            logs[c] = np.log(w / s) - 0.5 * d * d - 0.5 * np.log(2.0 * np.pi)
        top = max(top, logs[c])
    if top == -np.inf:
        return top
    total = 0.0
    for c in range(mix.shape[0]):
        total += np.exp(logs[c] - top)
    return top + np.log(total)


SURROGATE_FLOOR = -700.0
"""Floor of the delayed acceptance's ``log g`` (any positive ``g`` keeps the chain exact; a
floor keeps a state far in the fitted densities' tails reachable)."""


@njit(cache=True)
def surrogate_log_density(p, x):
    """``log g(x)`` of the delayed acceptance's first stage: the jump density of each graph
    coordinate times the beta jump's density given them, as far as tuning has fitted them."""
    s = 0.0
    if p.jump.shape[1] > 0:
        for j in range(p.graph.size):
            s += jump_log_density(p.jump[j], x[p.graph[j]], p.discrete[j])
    if p.beta_chol.shape[0] > 0:
        s += beta_jump_log_density(p, x)
    return max(s, SURROGATE_FLOOR)


@njit(cache=True)
def _jump(x, x1, p, j, rng):
    """A jump move of graph coordinate ``j`` (see the module's docstring)."""
    pos = p.graph[j]
    mix = p.jump[j]
    discrete = p.discrete[j]
    v = _mixture_draw(mix, rng)
    if discrete:
        tries = 1
        v = np.round(v)
        while not (p.lower[j] <= v <= p.upper[j]):
            if tries == JUMP_TRIES:
                return NULL_MOVE, 0.0
            v = np.round(_mixture_draw(mix, rng))
            tries += 1
        if v == x[pos]:
            return NULL_MOVE, 0.0
    delta = v - x[pos]
    x1[pos] = v
    for i in range(p.free.size):
        x1[p.free[i]] += p.slope[j, i] * delta
    log_h = jump_log_density(mix, x[pos], discrete) - jump_log_density(mix, v, discrete)
    return JUMP_MOVE, log_h


@njit(cache=True)
def bridge_region(theta):
    """The region of the graph parameter ``theta`` (``k`` or ``sigma``) that its bridging's
    noise is tuned over: ``floor(log(theta) / BRIDGE_REGION)``."""
    return int(np.floor(np.log(theta) / BRIDGE_REGION))


@njit(cache=True)
def _region_unit(p, theta):
    i = bridge_region(theta) - p.bridge_origin
    return p.bridge_units[i] if 0 <= i < p.bridge_units.size else p.bridge_unit


@njit(cache=True)
def bridge_fields(p, delta, theta0, theta1):
    """Intermediate fields of a graph move of size ``delta`` between ``theta0`` and ``theta1``
    (the same for its reverse)."""
    if p.bridge_unit > 0.0:
        unit = max(_region_unit(p, theta0), _region_unit(p, theta1))
        return min(p.max_bridge, max(0, int(np.round(unit * abs(delta))) - 1))
    return p.bridge


@njit(cache=True)
def _cheap(f, p, kind, x, x1, theta0, theta1):
    """Whether a move is a local graph move whose exchange ratio is not bridged (as
    :func:`run_iterations` decides it)."""
    if kind != GRAPH_MOVE:
        return False
    if theta1 == theta0:
        return True
    return bridge_fields(p, move_size(f, p, x, x1, theta0, theta1), theta0, theta1) == 0


@njit(cache=True)
def _knn_move_size(f, p, x, x1, theta0, theta1):
    return abs(1.0 / theta0 - 1.0 / theta1)


@njit(cache=True)
def _dnn_move_size(f, p, x, x1, theta0, theta1):
    return abs(_graph_delta(p, x, x1))


move_size = by_field_kind(_knn_move_size, _dnn_move_size)
"""The size of a graph move, which its bridging fields are proportional to: ``|1/k - 1/k'|``
for a kNN term, the change of ``sigma``'s free coordinate for a d-nn term (``(f, p, x, x1,
theta0, theta1)``; the same for the move and its reverse)."""


@njit(cache=True)
def _graph_delta(p, x, x1):
    """The size of a graph move: the change of the moved graph coordinate."""
    for j in range(p.graph.size):
        d = x1[p.graph[j]] - x[p.graph[j]]
        if d != 0.0:
            return d
    return 0.0


@njit(cache=True)
def _ball(f):
    return f.kind == DNN and f.dnn_kernel == BALL


@njit(cache=True)
def _on_plateau(p, theta):
    """Whether ``theta`` lies on the ball's plateau (``theta <= top``)."""
    return p.plateau.size > 0 and theta <= p.plateau[PLATEAU_TOP]


@njit(cache=True)
def _log_other_moves(p, on):
    """Log probability of choosing any move but the plateau move, on the plateau or off it."""
    return np.log1p(-p.plateau[PLATEAU_SHARE]) if on else 0.0


@njit(cache=True)
def _plateau_move(x, x1, p, rng):
    """A plateau move into ``x1`` (see the module's docstring); ``(move type, log Hastings
    term)``: ``-inf`` where the current coordinate lies above the edge, which the proposal
    density never reaches (a rounding of the transform)."""
    pos = p.graph[int(p.plateau[PLATEAU_J])]
    edge = p.plateau[PLATEAU_EDGE]
    x1[:] = x
    x1[pos] = edge + np.log1p(-rng.random())
    return PLATEAU_MOVE, (x[pos] - x1[pos] if x[pos] <= edge else -np.inf)


@njit(cache=True)
def _record(trace, t, p, x, beta, theta):
    trace[t, 0] = beta
    trace[t, 1] = theta
    for i in range(p.free.size):
        trace[t, 2 + i] = x[p.free[i]]
    for i in range(p.graph.size):
        trace[t, 2 + p.free.size + i] = x[p.graph[i]]


@njit(cache=True)
def run_iterations(
    logp, x, state, f, aux, p, z, plug_in, n_iter, trace, accept, cap, move, noise, rng, cache
):
    """Run ``n_iter`` iterations from ``x`` (updated in place).

    Parameters
    ----------
    logp : first-class function of signature :data:`LOGP_SIGNATURE`
    x : float64 array
        The chain's position in value space.
    state : float64 array (3,)
        ``(lp, beta, theta)`` at ``x``; updated in place.
    f, aux, p : Field, Auxiliary, Proposal
    z : int64 array (n,)
        Møller's auxiliary labels (in the chain's state); ``plug_in[2] == 0`` asks for a first
        draw at the current parameters. Unused by the other methods.
    plug_in : float64 array (3,)
        Møller's ``(beta_hat, theta_hat, z is set)``.
    trace, accept, cap, move, noise : arrays with ``n_iter`` rows, or none
        When given (tuning), the state after each iteration (``beta, theta`` and the block's
        continuous then discrete coordinates), its acceptance probability, the acceptance
        probability a move of size zero would have had (1, except for Møller, whose acceptance
        is capped by the weights ``q(z | theta_hat) / q(z | theta)`` of the fresh and the kept
        auxiliary labels), the move type and, for an exchange kNN graph move, the squared
        difference of two independent estimates of its auxiliary term times ``(fields + 1) /
        |size|`` (``2 x`` the noise variance per field and unit of the move's size, which
        :func:`bridge_fields` scales by) and the move's two ends ``theta0, theta1``: ``noise``
        has 3 columns; ``nan`` in the first for other moves, and for every move unless
        ``p.measure_noise``, when the bridging is not tuned.
    rng : numpy Generator
    cache : tuple
        The two couplings the chain's previous call ended with (:func:`new_couplings` at the
        chain's start): a call at the same ``theta`` starts from them instead of building its
        coupling again, and a proposal at the other's ``theta`` reuses it; their buffers hold
        the couplings the call builds (two d-nn tables of running sums, kept between draws
        instead of allocated and paged in again every call).

    Returns
    -------
    status, n_accepted, accept_sum, sweeps_sum, n_draws, n_inexact, aux_energy, bridge_sweeps, \
screened, cache
        ``n_draws`` auxiliary draws were made, ``n_inexact`` of them approximate,
        ``bridge_sweeps`` bridging fields (a kNN field is one sweep, a d-nn field
        :func:`field_sweeps`), and ``screened`` proposals were
        rejected by the delayed acceptance's first stage (their acceptance probability counts as
        0: given the first stage's uniform, an unbiased estimate of the move's). ``status``
        is ``PAST_BETA_MAX`` (the iteration stopped at a proposal past beta_max with
        positive prior density, its beta in ``state[1]``) or ``OK``. ``cache``: the couplings
        for the next call.
    """
    n = f.y.size
    out = np.zeros(2)
    x1 = np.empty_like(x)
    z1 = np.empty(n, dtype=np.int64)
    need_csr = aux.method == PSEUDO or aux.sampler != SWENDSEN_WANG
    lp0, beta0, theta0 = state[0], state[1], state[2]
    # c0 is the coupling at theta0; c_other, in the other buffers, the latest other one (a
    # chain whose k moves between two values builds each graph's edge list once)
    c_a, c_b, kept = cache
    if kept[0] == theta0:
        c0, b0, c_other, theta_other, b_other = c_a, kept[1], c_b, kept[2], kept[3]
        _noted(f, theta0, b0)
    elif kept[2] == theta0:
        c0, b0, c_other, theta_other, b_other = c_b, kept[3], c_a, kept[0], kept[1]
        _noted(f, theta0, b0)
    else:
        c0, b0 = _coupling_in(f, theta0, need_csr, c_a)
        c_other, theta_other, b_other = c_b, kept[2], kept[3]
    ey0 = c0[8]
    pl0 = _log_pl(f, c0, beta0) if aux.method == PSEUDO else 0.0
    if aux.method == MOLLER:
        c_hat = coupling(f, plug_in[1], need_csr)
        if plug_in[2] == 0.0:
            auxiliary_draw(f, aux, c0, beta0, theta0, z, rng)
            plug_in[2] = 1.0
        ez_hat, ez0 = _energies(f, c_hat, c0, z)
    else:
        c_hat = c0
        ez_hat = 0.0
        ez0 = 0.0
    record = trace.shape[0] > 0
    n_accepted = 0
    accept_sum = 0.0
    sweeps_sum = 0
    n_draws = 0
    n_inexact = 0
    aux_energy = np.nan
    bridge_sweeps = 0
    lp1, beta1, theta1, ey1, pl1, ez1, ez1_hat = lp0, beta0, theta0, ey0, pl0, ez0, ez_hat
    c1 = c0
    status = OK
    delayed = p.delayed != SCREEN_NONE and aux.method == EXCHANGE
    g0 = surrogate_log_density(p, x) if delayed else 0.0
    g1 = g0
    screened = 0
    on0 = _on_plateau(p, theta0)
    for t in range(n_iter):
        check_signals()
        if on0 and rng.random() < p.plateau[PLATEAU_SHARE]:
            kind, log_h = _plateau_move(x, x1, p, rng)
        else:
            kind, log_h = propose(x, x1, p, rng)
        zero_move = 1.0
        if record:
            noise[t, 0] = np.nan
        if kind == NULL_MOVE:
            alpha = 1.0
            accepted = True
        else:
            lp1 = logp(x1, out)
            beta1 = out[0]
            theta1 = out[1]
            log_alpha = -np.inf
            go = np.isfinite(lp1) and _valid(f, beta1, theta1)
            if go and beta1 > f.beta_max:
                status = PAST_BETA_MAX
                break
            on1 = _on_plateau(p, theta1)
            flat = False  # the same Potts term at both ends
            if kind == PLATEAU_MOVE:
                go = go and on1  # its reverse is a plateau move only from the plateau
                flat = beta1 == beta0 and _ball(f)
            else:
                log_h += _log_other_moves(p, on1) - _log_other_moves(p, on0)
            log_a = 0.0
            if go and delayed:
                g1 = surrogate_log_density(p, x1)
                if not flat and (
                    p.delayed == SCREEN_ALL or not _cheap(f, p, kind, x, x1, theta0, theta1)
                ):
                    log_a = g1 - g0 + log_h
                if log_a < 0.0 and not np.log(rng.random()) < log_a:
                    go = False  # screened out before its couplings and auxiliary draw
                    screened += 1
            if go and flat:
                c1, ey1, pl1, ez1, ez1_hat = c0, ey0, pl0, ez0, ez_hat
                log_alpha = lp1 - lp0 + log_h
            elif go:
                if theta1 == theta0:
                    c1 = c0
                elif theta1 == theta_other:
                    c1 = c_other
                    _noted(f, theta1, b_other)
                else:
                    c1, b_other = _coupling_in(f, theta1, need_csr, c_other)
                    c_other, theta_other = c1, theta1
                ey1 = c1[8]
                log_r = beta1 * ey1 - beta0 * ey0
                if aux.method == PSEUDO:
                    pl1 = _log_pl(f, c1, beta1)
                    log_r = pl1 - pl0
                elif aux.method == EXCHANGE:
                    same = theta1 == theta0
                    bridged = 0
                    if not same:
                        delta = move_size(f, p, x, x1, theta0, theta1)
                        # wide moves cross valleys now and then: not worth a bridge each
                        if kind != WIDE_MOVE:
                            bridged = bridge_fields(p, delta, theta0, theta1)
                        if kind == JUMP_MOVE and bridged > 0 and p.bridge_unit > 0.0:
                            bridged = min(p.max_bridge, JUMP_BRIDGE * (bridged + 1) - 1)
                    term, used, exact, aux_energy = _exchange_term(
                        f, aux, c0, c1, beta0, beta1, theta1, same, bridged, z1, rng
                    )
                    log_r += term
                    sweeps_sum += used
                    n_draws += 1
                    n_inexact += not exact
                    bridge_sweeps += bridged
                    if record and p.measure_noise and kind == GRAPH_MOVE and not same:
                        # tuning: a second estimate of the same ratio measures its noise, here
                        # per unit of the move's size and per field (x 2)
                        term2, used, exact, _ = _exchange_term(
                            f, aux, c0, c1, beta0, beta1, theta1, same, bridged, z1, rng
                        )
                        noise[t, 0] = (term - term2) ** 2 * (bridged + 1.0) / delta
                        noise[t, 1], noise[t, 2] = theta0, theta1
                else:
                    used, exact = auxiliary_draw(f, aux, c1, beta1, theta1, z1, rng)
                    sweeps_sum += used
                    n_draws += 1
                    if not exact:
                        n_inexact += 1
                    ez1_hat, ez1 = _energies(f, c_hat, c1, z1)
                    aux_energy = ez1
                    log_r += plug_in[0] * (ez1_hat - ez_hat) + beta0 * ez0 - beta1 * ez1
                    if record:
                        ez1_at_0 = ez1 if theta1 == theta0 else _energy(f, c0, z1)
                        log_w = plug_in[0] * (ez1_hat - ez_hat) - beta0 * (ez1_at_0 - ez0)
                        zero_move = np.exp(min(0.0, log_w))
                log_alpha = lp1 - lp0 + log_h + log_r - log_a
            if np.isnan(log_alpha):
                log_alpha = -np.inf
            alpha = np.exp(min(0.0, log_alpha))
            accepted = np.log(rng.random()) < log_alpha
            if accepted:
                x[:] = x1
                lp0, beta0, g0, on0 = lp1, beta1, g1, on1
                if flat:  # c0 is the coupling at theta1 too
                    theta0 = theta1
                    _noted(f, theta0, b0)
                elif theta1 != theta0:  # c1 is c_other: the two swap
                    c0, c_other = c_other, c0
                    theta0, theta_other = theta_other, theta0
                    b0, b_other = b_other, b0
                ey0 = ey1
                if aux.method == PSEUDO:
                    pl0 = pl1
                elif aux.method == MOLLER and not flat:
                    z[:] = z1
                    ez0 = ez1
                    ez_hat = ez1_hat
        n_accepted += accepted
        accept_sum += alpha
        if record:
            _record(trace, t, p, x, beta0, theta0)
            accept[t] = alpha
            cap[t] = zero_move
            move[t] = kind
    state[0], state[1], state[2] = lp0, beta1 if status == PAST_BETA_MAX else beta0, theta0
    return (
        status,
        n_accepted,
        accept_sum,
        sweeps_sum,
        n_draws,
        n_inexact,
        aux_energy,
        bridge_sweeps,
        screened,
        (c0, c_other, np.array([theta0, b0, theta_other, b_other])),
    )
