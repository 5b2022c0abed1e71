"""The ball kernel's plateau below the data's smallest positive distance, and its move.

Up to ``top`` no ball holds another point unless it is at distance 0, so the couplings are the
same there to the bit, and a plateau move between two of its states needs no auxiliary draw.
Its exactness against the enumeration oracle is in tests/test_exactness.py.
"""

import numpy as np
import pymc as pm
import pytest
from scipy import stats

import pymc_knn as pk
from pymc_knn import graphs
from pymc_knn.kernels import mcmc
from pymc_knn.step_methods._adaptation import PLATEAU_MOVES


SITES = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.1], [1.2, 1.0]])


def ties(m=3, seed=0):
    """``m`` points on each of four sites, two classes."""
    X = np.repeat(SITES, m, axis=0)
    y = np.random.default_rng(seed).permutation(np.arange(X.shape[0]) % 2)
    return X, y


def ball_step(X, y, sigma_prior=lambda: pm.Uniform("sigma", 0, 100), drop_tol=None, **kwargs):
    with pm.Model():
        beta = pm.Uniform("beta", 0, 3)
        sigma = sigma_prior()
        pk.DistanceNN(
            "y", X=X, beta=beta, sigma=sigma, kernel="ball", observed=y, drop_tol=drop_tol
        )
        return pk.Exchange(**kwargs)


def rows(f, sigma):
    """A coupling's ``E(y)`` and each row's floor weight and written running sums."""
    c = mcmc.coupling(f, sigma, False)
    return c[8], [np.r_[c[9][i], c[7][i, : c[10][i]]] for i in range(f.y.size)]


@pytest.mark.parametrize("drop_tol", [None, 0.5], ids=["full", "kept"])
@pytest.mark.parametrize("tied", [False, True], ids=["no ties", "ties"])
def test_the_couplings_are_the_same_up_to_the_top_and_not_past_it(tied, drop_tol, monkeypatch):
    """``top`` is the largest float whose square is at most the smallest positive squared
    distance: every coupling from there down to ``sigma -> 0`` is the same to the bit, and the
    next float up holds another pair in a ball. With and without ties (where each row's nearest
    lies outside every ball, its weights uniform), on a full table and on a kept one."""
    monkeypatch.setattr(graphs, "DNN_START_WIDTH", 4)  # a kept table narrower than the data
    X, y = ties()
    if not tied:
        X = X + np.random.default_rng(1).normal(0, 0.05, X.shape)
    step = ball_step(X, y, drop_tol=drop_tol)
    f = step.field
    assert f.sorted_sq.shape[1] == (4 if drop_tol else X.shape[0] - 1)
    full = ball_step(X, y).field.sorted_sq
    smallest = full[full > 0].min()
    j, top, edge, share = step._plateau
    assert top * top <= smallest < np.nextafter(top, np.inf) ** 2
    assert edge == pytest.approx(np.log(top / (100 - top)))  # sigma ~ U(0, 100): log-odds
    assert share == PLATEAU_MOVES and step._graph[int(j)] == 1
    e_top, r_top = rows(f, top)
    for s in (top * 0.999, top * 1e-3, 1e-200):
        e, r = rows(f, s)
        assert e == e_top and all(np.array_equal(a, b) for a, b in zip(r, r_top))
    e, r = rows(f, np.nextafter(top, np.inf))
    assert any(a.size != b.size for a, b in zip(r, r_top))


def run_kernel(step, x, p, n, seed=0):
    """``n`` iterations of the step's kernel with proposal ``p`` from ``x``: the trace, the
    move types and the auxiliary draws made."""
    trace, _, move, draws = step._recorded(x, p, n, np.random.default_rng(seed))
    return trace, move, draws


def at(step, beta, sigma):
    return step.layout.to_x(
        {
            "beta_interval__": np.log(beta / (3 - beta)),
            "sigma_interval__": np.log(sigma / (100 - sigma)),
        }
    )


def test_plateau_moves_draw_sigma_from_its_prior_on_the_plateau_without_auxiliary_draws():
    """With every move from the plateau a plateau move, ``sigma`` is drawn from its prior
    restricted to ``(0, top]`` (``U(0, 100)``: uniform there; a wrong Hastings term would tilt
    it by a power of ``sigma``), each move accepted and none paying for an auxiliary draw."""
    step = ball_step(*ties())
    top = step._plateau[1]
    a = step.chain.adaptation
    a.plateau = step._plateau.copy()
    a.plateau[3] = 1.0
    p = a.proposal(step._free, step._graph, step._lower, step._upper)
    trace, move, draws = run_kernel(step, at(step, 1.0, 0.01 * top), p, 4000)
    sigma = trace[:, 1]
    assert draws == 0 and np.all(move == mcmc.PLATEAU_MOVE)
    assert np.all(sigma <= top) and np.all(trace[:, 0] == 1.0)
    assert np.mean(np.diff(sigma) != 0) > 0.99
    assert stats.kstest(sigma / top, "uniform").pvalue > 1e-3


def test_a_chain_off_the_plateau_runs_as_without_the_move():
    """Off the plateau the move is never chosen and no random number is spent on it: the same
    draws with and without it until the chain without it enters the plateau (a move onto it
    is accepted half as often with it, since the reverse move is chosen half as often)."""
    step = ball_step(*ties())
    top = step._plateau[1]
    a = step.chain.adaptation
    x = at(step, 1.0, 3 * top)
    with_it = run_kernel(
        step, x, a.proposal(step._free, step._graph, step._lower, step._upper), 500
    )
    a.plateau = mcmc.NO_PLATEAU
    without = run_kernel(
        step, x, a.proposal(step._free, step._graph, step._lower, step._upper), 500
    )
    upto = np.flatnonzero(without[0][:, 1] <= top)[0]
    assert upto > 100
    np.testing.assert_array_equal(with_it[0][:upto], without[0][:upto])


def test_no_plateau_move_where_there_is_none_to_make():
    """The gaussian kernel (no plateau), a prior that starts above ``top``, and a ``sigma`` that
    is an expression of another variable (its plateau's edge on that variable's scale is not
    known) run without it."""
    X, y = ties()
    top = ball_step(X, y)._plateau[1]
    assert ball_step(X, y, lambda: pm.Uniform("sigma", 1.5 * top, 100))._plateau.size == 0
    assert ball_step(X, y, lambda: 2 * pm.Uniform("s", 0, 50))._plateau.size == 0
    with pm.Model():
        pk.DistanceNN(
            "y",
            X=X,
            beta=pm.Uniform("beta", 0, 3),
            sigma=pm.Uniform("sigma", 0, 9),
            kernel="gaussian",
            observed=y,
        )
        assert pk.Exchange()._plateau.size == 0
    with pm.Model():
        pk.PottsKNN(
            "y", X=X, beta=pm.Uniform("beta", 0, 3), k=pm.DiscreteUniform("k", 1, 5), observed=y
        )
        assert pk.Exchange()._plateau.size == 0
