"""The tuning rules of the Potts steps (pymc_knn.step_methods._adaptation), on synthetic traces."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pymc_knn.kernels.mcmc import (
    BETA_MOVE,
    GRAPH_MOVE,
    _normal_mass,
    beta_jump_log_density,
    bridge_fields,
    bridge_region,
    graph_probability,
    jump_log_density,
)
from pymc_knn.step_methods import TARGET_TAU, integrated_time, iterations_for
from pymc_knn.step_methods._adaptation import (
    AWAY_TIME,
    BETA_JUMP_SCALE,
    FIRST_WINDOW,
    FUTILE_TIME,
    JUMP_DEFENSIVE,
    JUMP_REACH,
    SHARE_BOUNDS,
    TARGET_NOISE,
    TRUSTED_TIMES,
    UNSEEN_DEPARTURES,
    WIDE_FACTOR,
    Adaptation,
    draw_iterations,
)


def ar1(rho, n, rng):
    x = np.empty(n)
    x[0] = rng.normal()
    e = rng.normal(size=n) * math.sqrt(1 - rho**2)
    for t in range(1, n):
        x[t] = rho * x[t - 1] + e[t]
    return x


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9, 0.98])
def test_integrated_time_of_an_ar1_chain(rho, rng):
    exact = (1 + rho) / (1 - rho)
    estimates = [integrated_time(ar1(rho, 20000, rng)) for _ in range(5)]
    assert np.mean(estimates) == pytest.approx(exact, rel=0.15)


def test_integrated_time_is_nan_when_it_cannot_say():
    assert math.isnan(integrated_time(np.ones(100)))
    assert math.isnan(integrated_time([1.0, 2.0]))


def test_iterations_for_reaches_the_target_between_draws(rng):
    assert iterations_for(1.5) == 1 and iterations_for(math.nan) == 1
    for tau in (4.0, 10.0, 50.0):
        m = iterations_for(tau)
        rho = (tau - 1) / (tau + 1)
        a, frac = math.floor(m), m - math.floor(m)
        between = (1 - frac) * rho**a + frac * rho ** (a + 1)  # E[rho^M]
        assert (1 + between) / (1 - between) == pytest.approx(TARGET_TAU)
        assert 0 < frac < 1
        want = (TARGET_TAU - 1) / (TARGET_TAU + 1)
        whole = math.ceil(math.log(want) / math.log(rho))  # the smallest whole count that does
        assert whole - 1 < m < whole
    x = ar1(0.6, 300000, rng)  # tau 4: a mean of 1.42, where 1 gives 4 and 2 give 2.1
    m = iterations_for(4.0)
    thinned = np.cumsum([draw_iterations(m, rng) for _ in range(x.size // 2)])
    thinned = thinned[thinned < x.size]
    assert integrated_time(x[thinned]) == pytest.approx(TARGET_TAU, rel=0.1)


def test_draw_iterations_takes_the_floor_or_the_ceiling_with_the_mean(rng):
    counts = np.array([draw_iterations(2.3, rng) for _ in range(20000)])
    assert set(counts.tolist()) == {2, 3}
    assert counts.mean() == pytest.approx(2.3, abs=0.02)

    class NoRandom:
        def random(self):
            raise AssertionError("a whole mean draws no random number")

    assert draw_iterations(7, NoRandom()) == 7


def observe(a, trace, acc, cap=None, move=BETA_MOVE, noise=np.nan, ends=(3.0, 4.0)):
    """``noise``: of each row's move, between the graph parameters ``ends``."""
    n = len(trace)
    cap = np.ones(n) if cap is None else np.full(n, cap)
    noise = np.column_stack([np.full(n, noise), np.full(n, ends[0]), np.full(n, ends[1])])
    return a.observe(trace, np.full(n, acc), cap, np.full(n, move, dtype=np.int64), noise)


def rows(block, rng):
    """Trace rows (beta, theta, block...) with a state change at every row."""
    return np.column_stack([rng.random(len(block)), rng.random(len(block)), block])


def adaptation(n_free=1, graph=(True,), **kwargs):
    return Adaptation(
        n_free,
        np.array(graph, bool),
        proposal_sd=0.5,
        k_radius=4.0,
        max_radius=np.full(len(graph), 100),
        **kwargs,
    )


def test_steps_follow_their_own_acceptance(rng):
    a = adaptation(graph=(True, False))  # k and a continuous graph coordinate
    scale0, steps0 = a.scale, a.steps.copy()
    np.testing.assert_array_equal(steps0, [4.0, 0.5])
    for _ in range(20):
        observe(a, rows(rng.normal(size=(5, 3)), rng), acc=0.05, move=BETA_MOVE)
    assert a.scale < scale0 and (a.steps == steps0).all()  # graph moves were not seen
    for _ in range(20):
        observe(a, rows(rng.normal(size=(5, 3)), rng), acc=0.9, move=GRAPH_MOVE)
    assert (a.steps > steps0).all() and a.steps[0] == round(a.steps[0])


def test_rare_graph_moves_adapt_at_the_pace_of_their_own_count(rng):
    """Bridged graph moves can be rare (a tenth of the iterations on 2,000 points): after 200
    draws of beta moves alone, 40 draws of refused graph moves bring a radius of 16 down to 1
    (a gain shared with the beta moves' count would leave it at 10: blobs10's chains kept
    proposing k four to seven away from a posterior on {3, 4} through all of tuning)."""
    a = adaptation()
    a.log_step[:] = math.log(16.0)
    for _ in range(200):
        observe(a, rows(rng.normal(size=(2, 2)), rng), acc=0.3, move=BETA_MOVE)
    assert a.steps[0] == 16
    for _ in range(40):
        observe(a, rows(rng.normal(size=(2, 2)), rng), acc=0.0, move=GRAPH_MOVE)
    assert a.steps[0] == 1


def test_the_radius_stays_within_its_bounds(rng):
    a = adaptation()
    for _ in range(500):
        observe(a, rows(rng.normal(size=(2, 2)), rng), acc=1.0, move=GRAPH_MOVE)
    assert a.steps[0] == 100  # max_radius
    for _ in range(5000):  # the gain has decayed: more draws to come back
        observe(a, rows(rng.normal(size=(2, 2)), rng), acc=0.0, move=GRAPH_MOVE)
    assert a.steps[0] == 1


def test_a_capped_acceptance_does_not_shrink_the_step(rng):
    """Møller's acceptance is capped by the auxiliary weights: at 0.05 against a cap of 0.1 the
    step must grow (target 0.3 x 0.1), where an uncapped step would shrink."""
    capped = adaptation(graph=())
    plain = adaptation(graph=())
    for _ in range(50):
        observe(capped, rows(rng.normal(size=(4, 1)), rng), acc=0.05, cap=0.1)
        observe(plain, rows(rng.normal(size=(4, 1)), rng), acc=0.05)
    assert capped.scale > 0.5 > plain.scale


def way_in(a, rng):
    """A first window on the chain's way in, whose beta falls steeply with ``k``: the ridge,
    the shape and the beta jump are not fitted on it."""
    n = FIRST_WINDOW
    k = rng.integers(1, 30, size=n).astype(float)
    block = -k[:, None] + rng.normal(size=(n, a.n_free))
    assert observe(a, rows(np.column_stack([block, k]), rng), acc=0.3)
    np.testing.assert_array_equal(a.slope, 0.0)
    assert a.beta_chol.shape == (0, 0)


def test_a_window_learns_the_shape_the_ridge_and_the_iterations(rng):
    """Beta's coordinates (u, v) correlated with k: the slope is their regression on k, the
    shape the Cholesky factor of their covariance given k, scaled to unit determinant; from
    the second window (the first is the chain's way in)."""
    a = adaptation(n_free=2)
    way_in(a, rng)
    n = 2 * FIRST_WINDOW
    k = rng.integers(1, 30, size=n).astype(float)
    u = 0.1 * k + rng.normal(size=n)
    v = 0.5 * u + 0.2 * rng.normal(size=n)
    closed = [
        observe(a, rows(np.column_stack([u, v, k])[i : i + 20], rng), acc=0.3)
        for i in range(0, n, 20)
    ]
    assert closed == [False] * 19 + [True]
    assert a.window_length == 4 * FIRST_WINDOW
    np.testing.assert_allclose(a.slope[0], [0.1, 0.05], atol=0.03)
    assert abs(np.prod(np.diag(a.shape)) - 1) < 1e-12
    r = a.shape[1, 0] / math.hypot(a.shape[1, 0], a.shape[1, 1])  # correlation of (u, v)
    assert 0.8 < r < 0.95  # 0.93, shrunk towards 0 by the few accepted moves: 0.84
    assert a.iterations == 1  # independent rows


def test_one_row_a_draw_counts_its_moves(rng):
    """With one iteration a draw, each draw's row is a move from the last draw's: the window
    counts them and learns the ridge and the beta jump (it counted moves within a draw only,
    none, and never learned them)."""
    a = adaptation(n_free=2, iterations=1, adapt_iterations=False)
    way_in(a, rng)
    n = 2 * FIRST_WINDOW
    k = rng.integers(1, 30, size=n).astype(float)
    u = 0.1 * k + rng.normal(size=n)
    v = 0.5 * u + 0.2 * rng.normal(size=n)
    trace = rows(np.column_stack([u, v, k]), rng)
    closed = [observe(a, trace[i : i + 1], acc=0.3) for i in range(n)]
    assert sum(closed) == 1 and closed[-1]
    np.testing.assert_allclose(a.slope[0], [0.1, 0.05], atol=0.03)
    assert a.beta_chol.shape == (2, 2)
    assert a.iterations == 1


def test_moves_of_other_steps_variables_are_not_the_blocks(rng):
    """Beta and theta in a trace row come from the whole model: where another step moves them
    between draws while the block sits still, the window saw no move and doubles the
    iterations (counted on the whole row, every draw was a move, and the window's time, ``nan``,
    set one iteration a draw)."""
    a = adaptation(graph=())
    still = rng.normal(size=(1, 1))
    for window in (1, 2):
        m = window  # one iteration a draw, then the doubled two
        for _ in range(window * FIRST_WINDOW // m):
            trace = np.column_stack([np.full((m, 2), rng.random()), np.repeat(still, m, 0)])
            observe(a, trace, acc=0.0)
        assert a.iterations == 2 * m


def test_the_first_window_doubles_the_iterations_and_later_ones_read_their_time(rng):
    """A chain of integrated time 39 (iterations_for: 22), from one iteration a draw: the first
    window, which may be the chain's way in, doubles the iterations whatever it reads; each later
    one sets them from its own time."""
    x = ar1(0.95, 40 * FIRST_WINDOW, rng)[:, None]
    a = adaptation(graph=())
    chosen, i = [], 0
    while a.window_length <= 8 * FIRST_WINDOW:
        m = draw_iterations(a.iterations, rng)
        if observe(a, rows(x[i : i + m], rng), acc=0.3):
            chosen.append((a.iterations, iterations_for(a.tau)))
        i += m
    (first, read), *later = chosen
    assert first == 2 and read > 4
    assert all(c == want for c, want in later) and min(c for c, _ in later) > 4


def test_fixed_iterations_stay_fixed(rng):
    a = adaptation(graph=(), iterations=7, adapt_iterations=False)
    x = ar1(0.95, 4 * FIRST_WINDOW, rng)[:, None]
    for i in range(0, len(x), 50):
        observe(a, rows(x[i : i + 50], rng), acc=0.3)
    a.finish()
    assert a.iterations == 7


def test_iterations_follow_the_autocorrelation_and_stop_at_the_bound(rng):
    x = ar1(0.95, 32 * FIRST_WINDOW, rng)[:, None]  # tau 39; the final 3,400 rows span 87
    a = adaptation(graph=())
    for i in range(0, len(x), 50):
        observe(a, rows(x[i : i + 50], rng), acc=0.3)
    a.finish()
    assert 12 <= a.iterations <= 40  # iterations_for(39) = 22
    capped = adaptation(graph=(), max_iterations=5)
    for i in range(0, len(x), 50):
        observe(capped, rows(x[i : i + 50], rng), acc=0.3)
    capped.finish()
    assert capped.iterations == 5


def test_window_tau_sees_a_slowly_mixing_tail(rng):
    """A chain that flips fast between k = 1 and 2 but enters and leaves k = 0 (5%) rarely: its
    tail mixes three times slower than its mean, and the iterations per draw must cover the tail
    (ArviZ's ess_tail)."""
    x, s = np.empty(40000), 1
    for t in range(x.size):
        if s == 0:
            s = 0 if rng.random() < 0.99 else 1
        else:
            s = 0 if rng.random() < 0.00064 else 1 + (rng.random() < 0.5)
        x[t] = s
    tail = integrated_time(x <= np.quantile(x, 0.05))
    assert tail > 2 * integrated_time(x)
    assert Adaptation._window_tau(x[:, None]) == tail


def test_series_taus_give_each_coordinate_and_tail_and_the_window_takes_the_largest(rng):
    """One row a coordinate (bulk, 5% tail, 95% tail), nan for a coordinate that never moved
    (a ``k`` a window held): what benchmarks/tuning_taus.py prints to tell a slow chain's series."""
    slow = ar1(0.95, 4000, rng)
    block = np.column_stack([rng.normal(size=4000), slow, np.full(4000, 3.0)])
    taus = Adaptation.series_taus(block)
    assert taus.shape == (3, 3)
    assert np.isnan(taus[2]).all()
    assert taus[1, 0] == integrated_time(slow) > 5 * taus[0, 0]
    assert taus[1, 2] == integrated_time(slow <= np.quantile(slow, 0.95))
    assert Adaptation._window_tau(block) == np.nanmax(taus)
    assert math.isnan(Adaptation._window_tau(block[:, 2:]))


def test_a_window_says_which_graph_coordinates_never_moved(rng):
    a = adaptation(n_free=1, graph=(True, False))
    block = np.column_stack(
        [rng.normal(size=FIRST_WINDOW), np.full(FIRST_WINDOW, 3.0), rng.normal(size=FIRST_WINDOW)]
    )
    assert observe(a, rows(block, rng), acc=0.3)
    assert a.graph_stuck.tolist() == [True, False]


def still_k(rng, n, k=3.0):
    """Rows whose beta coordinate moves and whose ``k`` stays at ``k``."""
    return rows(np.column_stack([rng.normal(size=n), np.full(n, k)]), rng)


def test_graph_moves_from_where_they_are_futile_get_a_twentieth_of_the_time(rng):
    """A window in which ``k`` never moved and fewer than FUTILE_TRANSITIONS graph moves were
    expected to be accepted (digits: k = 3, every move accepted with probability < 1e-50) gives
    graph moves from that ``k`` FUTILE_TIME of the time, and from every other ``k`` AWAY_TIME,
    so that an excursion ends soon; a window that expected a transition, or saw one, ends it."""
    a = adaptation()
    for _ in range(FIRST_WINDOW // 20):
        observe(a, still_k(rng, 20), acc=1e-60, move=GRAPH_MOVE)
    np.testing.assert_array_equal(a.futile_at, [3.0])
    assert a.p_graph == 0.5 and a.p_futile == pytest.approx(FUTILE_TIME)
    a.fields_per_move = 30.0  # dearer graph moves: still a twentieth of the time
    cost = 1 + 2 * 30.0 / a.aux_sweeps
    assert a.p_futile * cost / (a.p_futile * cost + 1 - a.p_futile) == pytest.approx(FUTILE_TIME)
    assert a.p_graph == pytest.approx(1 / (1 + cost))
    p = a.proposal(np.array([0]), np.array([1]), np.array([1]), np.array([9]))
    np.testing.assert_array_equal(p.futile_at, [3.0])
    assert p.p_futile == a.p_futile
    assert p.p_graph * cost / (p.p_graph * cost + 1 - p.p_graph) == pytest.approx(AWAY_TIME)
    x = np.array([0.0, 3.0])
    assert graph_probability(p, x) == p.p_futile
    assert graph_probability(p, x + [0.5, 1.0]) == p.p_graph
    # 400 graph moves with acceptance 0.001: 0.4 transitions expected, none seen
    for _ in range(2 * FIRST_WINDOW // 20):
        observe(a, still_k(rng, 20), acc=0.001, move=GRAPH_MOVE)
    assert a.futile_at.size == 0
    assert graph_probability(a.proposal(p.free, p.graph, p.lower, p.upper), x) == a.p_graph


def ar1_with_time(tau, n, rng):
    """An AR(1) series of integrated time ``tau``."""
    return ar1((tau - 1) / (tau + 1), n, rng)


def logit(q):
    return math.log(q / (1 - q))


def feed_window(a, beta_tau, graph_tau, share, rng):
    """One adaptation window (to its close) of rows whose beta and graph coordinate have the
    given integrated times, a ``share`` of them graph moves; returns the window's block of
    coordinates and the share of graph moves it made."""
    n = a.window_length
    block = np.column_stack([ar1_with_time(beta_tau, n, rng), ar1_with_time(graph_tau, n, rng)])
    move = np.where(rng.permutation(n) < round(share * n), GRAPH_MOVE, BETA_MOVE)
    noise = np.full((n, 3), np.nan)
    assert a.observe(rows(block, rng), np.full(n, 0.3), np.ones(n), move, noise)
    return block, float(np.mean(move == GRAPH_MOVE))


def test_the_balanced_share_is_where_the_integrated_times_are_equal(rng):
    """Where each kind of move mixes its coordinates in proportion to how often it is chosen
    (beta's time ``A / (1 - p)``, sigma's ``B / p`` at a share ``p`` of graph moves), the
    balanced share settles within a few windows at ``B / (A + B)``, where the two times are
    equal, from either side, whatever share the windows ran with (apart's gaussian d-nn term:
    sigma's time 30 iterations and beta's 5 at 13% graph moves). The first window, which may
    still be on the chain's way, sets nothing."""
    for big_a, big_b in ((3.0, 12.0), (12.0, 1.5)):
        a = adaptation(graph=(False,))
        start = a.p_graph
        feed_window(a, big_a / (1 - start), big_b / start, start, rng)
        assert math.isnan(a.balanced) and a.p_graph == start
        for _ in range(4):
            p = a.p_graph
            feed_window(a, big_a / (1 - p), big_b / p, p, rng)
        assert a.balanced == pytest.approx(big_b / (big_a + big_b), abs=0.1)


def test_the_graph_share_is_halfway_between_time_and_mixing(rng):
    """The probability of a graph move is halfway, in log-odds, between the share that gives
    both kinds of move equal time and the balanced one: the times read while tuning are noisy,
    and a share past the balanced one costs more where graph moves are the dearer kind than one
    short of it by as much (Hastie's ball kernel: 43 effective draws a second at 0.35, 30 at
    0.66, 28 at 0.2)."""
    a = adaptation(graph=(False,))
    for _ in range(3):
        feed_window(a, 2.0, 20.0, a.p_graph, rng)
    for fields in (0.0, 30.0):
        a.fields_per_move = fields
        timed = a._graph_share(0.5)
        assert min(timed, a.balanced) < a.p_graph < max(timed, a.balanced)
        assert logit(a.p_graph) == pytest.approx((logit(timed) + logit(a.balanced)) / 2)
    assert a.balanced > 0.7


def test_a_dnn_graph_move_is_priced_with_its_table():
    """A d-nn graph move builds the table at the proposed sigma and passes over both tables, a
    beta move passes over one (``table_sweeps``, in sweeps): graph moves take the share of the
    time asked at that price, so fewer of the iterations where the table is wide against the
    draw's sweeps; with no table (kNN) the price is the draw and the bridging fields alone."""
    knn = adaptation(graph=(False,))
    dnn = adaptation(graph=(False,), table_sweeps=(5.0, 40.0))
    assert knn.p_graph == 0.5
    for fields, sweeps in ((0.0, 10), (3.0, 10), (3.0, 40)):
        dnn.fields_per_move, dnn.aux_sweeps = fields, sweeps
        cost = (sweeps + 2 * fields + 40.0) / (sweeps + 5.0)
        for time in (FUTILE_TIME, AWAY_TIME, 0.5):
            share = dnn._graph_share(time)
            assert share * cost / (share * cost + 1 - share) == pytest.approx(time)
    # priced at the labels' 40 sweeps a draw, the table weighs less: more graph moves
    assert dnn._graph_share(0.5) > 1 / (1 + 50.0 / 15.0)


def test_the_graph_share_is_read_at_the_share_the_window_ran_with(rng):
    """``A`` and ``B`` are read off a window at the share of its iterations that chose a graph
    move (not the probability it was tuned to); a window in which the graph coordinate never
    moved, or only one kind of move was made, leaves the share; it stays within SHARE_BOUNDS."""
    a = adaptation(graph=(False,))
    feed_window(a, 2.0, 2.0, 0.5, rng)
    block, share = feed_window(a, 3.0, 20.0, 0.2, rng)
    taus = Adaptation.series_taus(block)
    big_a, big_b = np.nanmax(taus[0]) * (1 - share), np.nanmax(taus[1]) * share
    assert a.balanced == pytest.approx(big_b / (big_a + big_b))
    assert share == 0.2 and a.balanced > 0.5
    before = a.balanced
    n = a.window_length
    still = np.column_stack([rng.normal(size=n), np.zeros(n)])
    move = np.where(np.arange(n) % 2 == 0, GRAPH_MOVE, BETA_MOVE)
    a.observe(rows(still, rng), np.full(n, 0.3), np.ones(n), move, np.full((n, 3), np.nan))
    assert a.balanced == before
    feed_window(a, 1.0, 50.0, 1.0, rng)  # graph moves only: nothing to compare
    assert a.balanced == before
    feed_window(a, 1.0, 500.0, 0.5, rng)
    assert a.balanced == SHARE_BOUNDS[1]
    k = adaptation()  # k's share is the home and futility rules' (docstring)
    for _ in range(3):
        feed_window(k, 2.0, 20.0, 0.5, rng)
    assert math.isnan(k.balanced) and k.p_graph == 0.5


def test_the_end_of_tuning_judges_futility_on_the_pooled_draws(rng):
    """A chain whose last window sat still but which moved ``k`` since (digits at seed 2: a
    chain stuck at k = 4 crossed to 3 in its last tuning draws) has no futile value, and one
    that moved no more keeps it."""
    for moved in (True, False):
        a = adaptation()
        for _ in range(FIRST_WINDOW // 20):
            observe(a, still_k(rng, 20, k=4.0), acc=0.0, move=GRAPH_MOVE)
        np.testing.assert_array_equal(a.futile_at, [4.0])
        observe(a, still_k(rng, 20, k=3.0 if moved else 4.0), acc=0.0, move=GRAPH_MOVE)
        a.finish()
        np.testing.assert_array_equal(a.futile_at, [] if moved else [4.0])


def test_graph_moves_away_from_the_home_of_k_get_most_of_the_time(rng):
    """Tuning rows with ``k`` at one value at least HOME_MASS of the time and moving now and then
    (shells3: 99% at k = 4, excursions to 5 that lasted up to 27 draws at the balanced share)
    make that value the chain's home at the end of tuning: graph moves take the balanced share
    of the time there and AWAY_TIME from anywhere else. Rows spread over several values leave
    the balanced share everywhere, as does a continuous graph coordinate (sigma)."""
    for share, home in ((0.95, [4.0]), (0.8, [])):
        a = adaptation()
        a.fields_per_move = 30.0
        k = np.where(rng.random(2 * FIRST_WINDOW) < share, 4.0, 5.0)
        observe(a, rows(np.column_stack([rng.normal(size=k.size), k]), rng), acc=0.3)
        a.finish()
        np.testing.assert_array_equal(a.home_at, home)
        assert a.futile_at.size == 0
        p = a.proposal(np.array([0]), np.array([1]), np.array([1]), np.array([9]))
        x = np.array([0.0, 4.0])
        assert graph_probability(p, x) == a.p_graph
        away = graph_probability(p, x + [0.0, 1.0])
        cost = 1 + 2 * 30.0 / a.aux_sweeps
        time = away * cost / (away * cost + 1 - away)
        assert time == pytest.approx(AWAY_TIME if home else 0.5)
    a = adaptation(graph=(False,))
    block = np.column_stack([rng.normal(size=2 * FIRST_WINDOW), np.full(2 * FIRST_WINDOW, 0.3)])
    observe(a, rows(block, rng), acc=0.3)
    a.finish()
    assert a.home_at.size == 0


def test_the_end_of_tuning_reads_the_mixing_after_a_stuck_window(rng):
    """A last window in which k sat still, and a chain that moved k in the iterations since
    (blobs10: the stuck window's close seeded the ridge): the iterations come from the
    iterations since, not from a pooled series that reads as one slow step (211 iterations a
    draw on blobs10). Too few iterations since, or none of them moving k: pooled as before."""

    def since(n):  # k flips between 3 and 4 with probability 0.1 an iteration
        k = 3.0 + np.cumsum(rng.random(n) < 0.1) % 2
        return rows(np.column_stack([rng.normal(size=n), k]), rng)

    def finished(tail):
        a = adaptation()
        for _ in range(3 * FIRST_WINDOW // 50):  # closes windows of 200 and 400
            observe(a, since(50), acc=0.3, move=GRAPH_MOVE)
        for _ in range(4 * FIRST_WINDOW // 50):  # the third window (800) closes stuck at 4
            observe(a, still_k(rng, 50, k=4.0), acc=0.0, move=GRAPH_MOVE)
        assert a.graph_stuck.tolist() == [True]
        observe(a, tail, acc=0.3, move=GRAPH_MOVE)
        final, _ = a.final_block()
        a.finish()
        return a.iterations, final

    moving = since(5 * FIRST_WINDOW)
    alone = iterations_for(Adaptation._window_tau(moving[:, 2:]))
    assert 1 < alone < 4  # a flip every 10 iterations: tau about 9
    its, final = finished(moving)
    assert its == pytest.approx(alone) and len(final) == len(moving)
    short = since(FIRST_WINDOW // 2)
    its, final = finished(short)
    assert len(final) == 4 * FIRST_WINDOW + len(short)  # pooled: it reads as one slow step
    pooled = min(Adaptation._window_tau(final[:, 2:]), len(final) / TRUSTED_TIMES)
    assert its == pytest.approx(iterations_for(pooled))
    assert its > 2 * iterations_for(Adaptation._window_tau(short[:, 2:]))


def test_final_rows_that_never_left_k_though_departures_were_due_bound_its_time(rng):
    """class20 at seed 1: a chain whose settled windows saw ``k`` away from 6 a share ``p`` of the
    time, then whose final tuning rows never left 6 though ``T`` departures were expected (the
    sum of the graph moves' acceptance probabilities) chose its iterations from beta alone and
    mixed ``k`` at an ESS of 66. With ``T >= UNSEEN_DEPARTURES`` the time of ``k`` is bounded
    by ``2 p L / T`` over the ``L`` final rows; with fewer expected (shells3), with ``k`` moving
    in the final rows, or never seen elsewhere, beta's time sets the iterations as before."""

    def finished(expected, moved=False, away=40):
        a = adaptation()
        observe(a, still_k(rng, FIRST_WINDOW, k=4.0), acc=0.3, move=GRAPH_MOVE)
        second = still_k(rng, 2 * FIRST_WINDOW, k=6.0)
        second[:away, 3] = 3.0
        observe(a, second, acc=0.3, move=GRAPH_MOVE)
        n = 4 * FIRST_WINDOW  # the third window (800 rows at 6), then as many since
        for _ in range(2):
            observe(a, still_k(rng, n, k=6.0), acc=expected / (2 * n), move=GRAPH_MOVE)
        if moved:
            observe(a, still_k(rng, 1, k=5.0), acc=0.0, move=GRAPH_MOVE)
        a.finish()
        return a.iterations

    beta_alone = finished(0.0)
    assert beta_alone < 1.5  # beta's draws are independent
    p = 40 / (6 * FIRST_WINDOW)
    for expected in (1.25 * UNSEEN_DEPARTURES, 4.0, 10.0):
        want = iterations_for(2 * p * 8 * FIRST_WINDOW / expected)
        assert want > 3
        assert finished(expected) == pytest.approx(want, rel=1e-9)
    assert finished(0.9 * UNSEEN_DEPARTURES) == beta_alone
    assert finished(4.0, away=0) == beta_alone
    assert finished(4.0, moved=True) < 1.5


def test_a_time_longer_than_the_final_rows_can_tell_counts_as_a_fiftieth_of_them(rng):
    """ties (equal neighbours, seed 2): one chain's final 6,313 tuning rows held one stay of
    about 2,800 at the far end of ``k``, which Geyer's estimate reads as a time of 748, eight of
    them in the rows: it chose 259 iterations a draw where the other chains chose 10-16, and its
    draws then showed a time per iteration of 276 at most, the others' 36-40. A time counts up to
    a ``TRUSTED_TIMES``-th of the rows it is read from; a well-measured one is left alone."""

    def finished(block):
        a = adaptation(graph=())
        for i in range(0, len(block), 50):
            observe(a, rows(block[i : i + 50, None], rng), acc=0.3)
        final, _ = a.final_block()
        a.finish()
        return a.iterations, len(final), Adaptation._window_tau(final[:, 2:])

    n = 20 * FIRST_WINDOW  # windows close at 200, 600, 1400 and 3000; 1,000 rows since
    stay = rng.normal(size=n) * 0.3
    stay[-2000:-800] += 3.0  # one stay in the final rows, which the earlier windows never saw
    its, final, raw = finished(stay)
    assert final == 2600 and raw > final / TRUSTED_TIMES
    assert its == pytest.approx(iterations_for(final / TRUSTED_TIMES), rel=1e-12)
    assert its < iterations_for(raw) / 3
    its, final, raw = finished(ar1(0.8, n, rng))  # tau 9, 289 of them in the final rows
    assert raw < final / TRUSTED_TIMES
    assert its == pytest.approx(iterations_for(raw), rel=1e-12)


def test_a_window_without_a_move_asks_for_more_iterations(rng):
    a = adaptation(graph=())
    a.iterations = 8
    still = np.tile(rng.normal(size=(1, 3)), (FIRST_WINDOW, 1))
    assert observe(a, still, acc=0.0)
    assert a.iterations == 16


def test_the_bridge_follows_the_noise_of_the_ratio(rng):
    """Pairs of estimates differ by 2 x the noise variance in mean square; the kernel reports
    them per field and per unit of the move's size, so a noise of v per unit asks for
    ``v |d| / TARGET_NOISE - 1`` fields on a move of size d: v is estimated within 20%, and
    pooled it sets the moves between regions the tuning did not see."""
    a = adaptation(adapt_bridge=True, max_bridge=1000)
    for _ in range(60):
        pairs = 2 * 40.0 * rng.chisquare(1, size=8)
        observe(a, rows(rng.normal(size=(8, 2)), rng), acc=0.3, move=GRAPH_MOVE, noise=pairs)
    assert a.bridge_unit * TARGET_NOISE == pytest.approx(40.0, rel=0.2)
    p = a.proposal(np.array([0]), np.array([1]), np.array([1]), np.array([9]))
    assert (p.bridge_unit, p.max_bridge) == (a.bridge_unit, 1000)
    assert [bridge_fields(p, d, 100.0, 200.0) for d in (1.0, -2.0, 10.0, 1000.0)] == [
        round(a.bridge_unit) - 1,
        round(2 * a.bridge_unit) - 1,
        round(10 * a.bridge_unit) - 1,
        1000,
    ]


def test_the_noise_is_measured_only_where_the_bridging_is_tuned():
    args = np.array([0]), np.array([1]), np.array([1]), np.array([9])
    assert adaptation(adapt_bridge=True).proposal(*args).measure_noise
    assert not adaptation(bridge=5).proposal(*args).measure_noise


def test_a_quiet_ratio_bridges_only_large_moves_and_a_fixed_one_stays(rng):
    """A unit move whose noise is below the target is not bridged, a large move with the same
    noise per unit is (moons and Pima mix k about twice as fast per iteration so)."""
    quiet = adaptation(adapt_bridge=True)
    fixed = adaptation(bridge=5)
    for _ in range(30):
        trace = rows(rng.normal(size=(8, 2)), rng)
        observe(quiet, trace, acc=0.3, move=GRAPH_MOVE, noise=1.8 * TARGET_NOISE)
        observe(fixed, trace, acc=0.3, move=GRAPH_MOVE, noise=1e4)
    args = np.array([0]), np.array([1]), np.array([1]), np.array([9])
    assert quiet.bridge_unit == pytest.approx(0.9)  # v = 0.9 TARGET_NOISE per unit of |d|
    assert [bridge_fields(quiet.proposal(*args), d, 3.0, 4.0) for d in (1.0, 20.0)] == [
        0,
        round(20 * quiet.bridge_unit) - 1,
    ]
    assert [bridge_fields(fixed.proposal(*args), d, 3.0, 4.0) for d in (1.0, 3.0)] == [5, 5]


def test_the_bridge_follows_the_noise_where_the_moves_go(rng):
    """Moves within a quiet region and moves from it into a noisy one (as sigma's on two
    classes far apart, ``apart``: nil noise from 0.3 to 0.35, a large one to 0.05): the noisy
    region's noise sets the moves into it, in either direction, and the quiet moves are not
    bridged for them, though the pooled noise would bridge them all."""
    a = adaptation(adapt_bridge=True, graph=(False,), max_bridge=1000)
    quiet, noisy = (0.3, 0.35), (0.3, 0.05)
    for i in range(80):
        trace = rows(rng.normal(size=(8, 2)), rng)
        if i % 3:
            observe(a, trace, acc=0.3, move=GRAPH_MOVE, noise=0.01, ends=quiet)
        else:
            pairs = 2 * 400.0 * rng.chisquare(1, size=8)
            observe(a, trace, acc=0.3, move=GRAPH_MOVE, noise=pairs, ends=noisy[::-1])
    p = a.proposal(np.array([0]), np.array([1]), np.array([-9]), np.array([9]))
    noisy_unit = float(p.bridge_units[bridge_region(0.05) - p.bridge_origin])
    assert noisy_unit * TARGET_NOISE == pytest.approx(400.0, rel=0.3)
    assert a.bridge_unit * TARGET_NOISE == pytest.approx(400.0 / 3, rel=0.35)
    assert bridge_fields(p, 1.0, *quiet) == bridge_fields(p, 1.0, *quiet[::-1]) == 0
    assert bridge_fields(p, 1.0, *noisy) == bridge_fields(p, -1.0, *noisy[::-1])
    assert bridge_fields(p, 1.0, *noisy) == round(noisy_unit) - 1
    assert bridge_fields(p, 1.0, 100.0, 200.0) == round(a.bridge_unit) - 1  # not seen: pooled


QUAD_PIECES = [(-np.inf, -3.0), (-3.0, -1.0), (-1.0, 0.5), (0.5, 1.5), (1.5, np.inf)]


def test_a_window_fits_a_jump_density_with_the_posteriors_modes(rng):
    """sigma's draws from two modes give a density with both, and nothing between them; a
    k that never moved gets a density that still reaches its neighbours."""
    a = adaptation(n_free=1, graph=(False, True))
    assert a.jump.shape[1] == 0  # no fit yet: the wide move stands in
    n = FIRST_WINDOW
    sigma = np.where(rng.random(n) < 0.3, rng.normal(-2.0, 0.05, n), rng.normal(1.0, 0.1, n))
    block = np.column_stack([rng.normal(size=n), sigma, np.full(n, 3.0)])
    assert observe(a, rows(block, rng), acc=0.3)
    h = lambda j, v: math.exp(jump_log_density(a.jump[j], v, a.graph_discrete[j]))  # noqa: E731
    f = lambda v: h(0, v)  # noqa: E731
    total = sum(integrate.quad(f, lo, hi, limit=200)[0] for lo, hi in QUAD_PIECES)
    assert total == pytest.approx(1.0, abs=1e-6)
    assert h(0, -2.0) > 1.0 and h(0, 1.0) > 1.0 and h(0, -0.5) < 0.05
    # out there only the broad component: its weight on a normal about the draws' median, as
    # wide as twice their sd or half their range
    width = max(2 * sigma.std(), 0.5 * np.ptp(sigma))
    broad = JUMP_DEFENSIVE * stats.norm.pdf(5.0, np.median(sigma), width)
    assert h(0, 5.0) == pytest.approx(broad, rel=1e-6)
    mass = {k: h(1, k) for k in range(-100, 107)}
    assert sum(mass.values()) == pytest.approx(1.0, abs=1e-9)
    assert mass[3] > 0.5 and 0.1 < mass[2] < 0.25 and mass[2] == pytest.approx(mass[4])


@pytest.mark.parametrize("radius", [1.0, 3.0])
def test_the_broad_component_for_k_reaches_as_far_as_the_wide_move(rng, radius):
    """A k whose tuning draws sat at one value (class20's chains: 93-97% at 6, a mode at 3-4
    that some chains' tuning never visited) still has the broad component reach the wide
    move's span: its width is WIDE_FACTOR radii unless the draws' spread is wider."""
    a = adaptation(n_free=1, graph=(True,))
    a.log_step[0] = math.log(radius)
    n = FIRST_WINDOW
    k = np.where(rng.random(n) < 0.02, 7.0, 6.0)
    assert observe(a, rows(np.column_stack([rng.normal(size=n), k]), rng), acc=0.3)
    weight, centre, width = a.jump[0, -1]
    assert (weight, centre) == (JUMP_DEFENSIVE, 6.0)
    assert width == pytest.approx(WIDE_FACTOR * radius)
    mass = lambda v: math.exp(jump_log_density(a.jump[0], v, True))  # noqa: E731
    cell = stats.norm.cdf(3.5, 6.0, width) - stats.norm.cdf(2.5, 6.0, width)
    assert JUMP_DEFENSIVE * cell < mass(3) < 1.01 * JUMP_DEFENSIVE * cell  # the rest: 6's tails
    narrow = JUMP_DEFENSIVE * (stats.norm.cdf(3.5, 6.0, 1.0) - stats.norm.cdf(2.5, 6.0, 1.0))
    assert mass(3) > 5 * narrow  # the draws' spread alone (width 1): the trap class20 had
    spread = np.where(rng.random(n) < 0.5, 2.0, 30.0)  # wider than any reach: the draws decide
    block = np.column_stack([rng.normal(size=2 * n), np.r_[spread, spread]])
    assert observe(a, rows(block, rng), acc=0.3)
    assert a.jump[0, -1, 2] == pytest.approx(max(2 * spread.std(), 14.0))


def test_the_broad_component_for_sigma_reaches_a_mode_the_tuning_draws_missed(rng):
    """A sigma whose tuning draws sat in one narrow spike (Hastie's ball kernel: sd 0.0015 on
    the transformed scale, a minor mode 0.03-0.07 away that some chains' tuning never visited)
    still has a broad component JUMP_REACH wide; draws that spread wider set it themselves."""
    a = adaptation(n_free=1, graph=(False,))
    a.log_step[0] = math.log(0.003)  # the random walk's step there: two sds
    n = FIRST_WINDOW
    spike = rng.normal(0.61, 0.0015, n)
    assert observe(a, rows(np.column_stack([rng.normal(size=n), spike]), rng), acc=0.3)
    weight, centre, width = a.jump[0, -1]
    assert (weight, centre) == (JUMP_DEFENSIVE, np.median(spike))
    assert width == JUMP_REACH
    h = lambda v: math.exp(jump_log_density(a.jump[0], v, False))  # noqa: E731
    minor = centre + 0.05
    assert h(minor) == pytest.approx(JUMP_DEFENSIVE * stats.norm.pdf(minor, centre, width))
    assert h(minor) > 0.5  # with the draws' spread alone (width 2 sds): about exp(-139)
    spread = rng.normal(0.61, 0.1, 2 * n)  # wider than the reach: the draws decide
    assert observe(a, rows(np.column_stack([rng.normal(size=2 * n), spread]), rng), acc=0.3)
    assert a.jump[0, -1, 2] == pytest.approx(max(2 * spread.std(), 0.5 * np.ptp(spread)))


@pytest.mark.parametrize("a", [-40.0, -9.0, -0.3, 0.2, 8.0, 30.0])
def test_the_normal_mass_of_a_unit_cell_is_accurate_in_both_tails(a):
    from scipy import stats

    b = a + 1.0
    if a > 0:  # the upper tail's mass from log survival functions, without cancellation
        log_a, log_b = stats.norm.logsf(a), stats.norm.logsf(b)
        exact = math.exp(log_a) * -math.expm1(log_b - log_a)
    else:
        log_a, log_b = stats.norm.logcdf(a), stats.norm.logcdf(b)
        exact = math.exp(log_b) * -math.expm1(log_a - log_b)
    assert _normal_mass(a, b) == pytest.approx(exact, rel=1e-9, abs=1e-300)


def test_later_windows_pool_their_draws_for_the_jump_density(rng):
    """The first window (the chain may still be on its way) is fitted on alone, then dropped;
    later windows pool: a mode visited in the second window only stays in the density."""
    a = adaptation(n_free=1, graph=(False,))
    n = FIRST_WINDOW
    far = np.column_stack([rng.normal(size=n), rng.normal(9.0, 0.1, n)])
    assert observe(a, rows(far, rng), acc=0.3)
    h = lambda v: math.exp(jump_log_density(a.jump[0], v, False))  # noqa: E731
    assert h(9.0) > 1.0
    second = np.column_stack([rng.normal(size=2 * n), rng.normal(0.0, 0.1, 2 * n)])
    second[: n // 2, 1] += 3.0
    assert observe(a, rows(second, rng), acc=0.3)
    third = np.column_stack([rng.normal(size=4 * n), rng.normal(0.0, 0.1, 4 * n)])
    assert observe(a, rows(third, rng), acc=0.3)
    assert h(9.0) < 0.01 < 0.1 < h(3.0) and h(0.0) > 1.0


def test_a_window_fits_the_beta_jump_to_beta_given_the_graph(rng):
    """Beta's coordinates (u, v) whose mean moves with k: the beta jump's normal is their
    regression on k and, BETA_JUMP_SCALE times wider, their covariance given k; its density
    (with the broad component) integrates to one."""
    a = adaptation(n_free=2)
    way_in(a, rng)  # no fit yet: random-walk beta moves only
    n = 2 * FIRST_WINDOW
    k = rng.integers(1, 30, size=n).astype(float)
    u = 1.0 + 0.1 * k + rng.normal(size=n)
    v = -2.0 + 0.5 * u + 0.2 * rng.normal(size=n)
    assert observe(a, rows(np.column_stack([u, v, k]), rng), acc=0.3)
    np.testing.assert_allclose(a.beta_centre[:, 1], [0.1, 0.05], atol=0.03)
    np.testing.assert_allclose(a.beta_centre[:, 0], [1.0, -1.5], atol=0.3)
    cov = a.beta_chol @ a.beta_chol.T / BETA_JUMP_SCALE**2
    np.testing.assert_allclose(cov, [[1.0, 0.5], [0.5, 0.29]], rtol=0.25)
    p = a.proposal(np.array([0, 1]), np.array([2]), np.array([1]), np.array([30]))

    def h(x0, x1):
        return math.exp(beta_jump_log_density(p, np.array([x0, x1, 10.0])))

    det = 2 * math.pi  # the kernel's density drops the normal's constant
    total = integrate.dblquad(lambda x1, x0: h(x0, x1) / det, -30, 30, -30, 30)[0]
    assert total == pytest.approx(1.0, abs=1e-5)


def test_a_beta_jump_fitted_where_k_never_moved_follows_the_ridge(rng):
    """Draws all at one k say nothing of beta at another: the centre there follows the ridge,
    not a least-squares split of beta's mean between the intercept and k (which put the centre
    at k = 3 at 13/17 of beta's mean at 4: delayed acceptance, whose first stage uses this
    density, would screen out nearly every move away from the k a chain sat at)."""
    a = adaptation()
    way_in(a, rng)
    a.slope[:] = -0.12
    n = 2 * FIRST_WINDOW
    u = 2.3 + 0.05 * rng.normal(size=n)
    assert observe(a, rows(np.column_stack([u, np.full(n, 4.0)]), rng), acc=0.3)
    for k in (3.0, 4.0, 5.0):
        centre = a.beta_centre[0, 0] + a.beta_centre[0, 1] * k
        assert centre == pytest.approx(u.mean() - 0.12 * (k - 4.0))


def test_a_moves_fields_are_its_reverses(rng):
    """Exactness asks that a move and its reverse be bridged alike: the larger of the units of
    the regions of the two ends sets both, inside the table or beyond it (the pooled unit)."""
    a = adaptation(adapt_bridge=True, max_bridge=500)
    a.bridge_unit = 7.0
    a.bridge_units, a.bridge_origin = rng.uniform(0.0, 50.0, size=40), -25
    p = a.proposal(np.array([0]), np.array([1]), np.array([1]), np.array([9]))

    def unit(theta):
        i = bridge_region(theta) - a.bridge_origin
        return a.bridge_units[i] if 0 <= i < a.bridge_units.size else a.bridge_unit

    for theta0, theta1 in np.exp(rng.uniform(-4.0, 3.0, size=(200, 2))):
        d = rng.uniform(-3.0, 3.0)
        fields = bridge_fields(p, d, theta0, theta1)
        assert fields == bridge_fields(p, -d, theta1, theta0)
        want = round(max(unit(theta0), unit(theta1)) * abs(d)) - 1
        assert fields == min(500, max(0, want))
