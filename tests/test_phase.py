"""The mean-energy curve and beta_max against the exact enumeration oracle.

On graphs of 6-8 points the exact ``E_beta[E(z)] = sum_z f(z | beta) E(z)`` is a finite sum
(:mod:`pymc_knn.testing`); the Monte Carlo curve must match it within a few of its own standard
errors, and those standard errors must match the spread of independent replicates (otherwise a
huge standard error would let anything pass). Seeds are fixed, so every outcome is deterministic.
"""

import numpy as np
import pytest
import xarray as xr

import pymc_knn as pk
from pymc_knn.phase import DEFAULT_TOL, N_BATCHES
from pymc_knn.testing import label_probabilities, state_energies

from conftest import small_problem

Z_MAX = 4.0  # allowed |Monte Carlo - exact| in standard errors


def tiny_graph(kind="knn", option="symmetrised", G=2, seed=3):
    X, _ = small_problem(seed, n=8 if G == 2 else 6, G=G)
    if kind == "knn":
        return pk.KNNGraph(X, neighbours=option)
    return pk.DistanceGraph(X, kernel=option)


def exact_curve(graph, theta, betas, G=2, class_weights=None):
    """Exact ``E_beta[E(z)] / E_max`` by enumeration."""
    c = graph.coupling(theta)
    a = np.ones(G) if class_weights is None else np.asarray(class_weights, float)
    e = state_energies(c, G, a)
    e_max = a.max() * c.weight.sum()
    return np.array([label_probabilities(c, b, G, a) @ e for b in betas]) / e_max


def exact_crossing(graph, theta, level, grid, G=2):
    """First beta of ``grid`` where the exact curve reaches ``level``."""
    curve = exact_curve(graph, theta, grid, G)
    return grid[np.argmax(curve >= level)]


# ------------------------------------------------------------------------------- the curve


# (graph kind, option, G, parameter, class weights)
CASES = [
    ("knn", "symmetrised", 2, 3, None),
    ("knn", "equal", 2, 2, None),
    ("knn", "symmetrised", 3, 2, None),
    ("knn", "symmetrised", 2, 2, [1.0, 1.7]),
    ("dnn", "gaussian", 2, 0.8, None),
    ("dnn", "exponential", 3, 1.0, [0.7, 1.0, 1.5]),
]
IDS = [f"{c[0]}-{c[1]}-G{c[2]}{'-weighted' if c[4] else ''}" for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_curve_matches_exact_mean_energy(case):
    kind, option, G, theta, a = case
    graph = tiny_graph(kind, option, G)
    betas = np.array([0.0, 0.5, 1.0, 1.5, 2.5])
    curve = pk.mean_energy_curve(
        graph, theta, betas, n_classes=G, class_weights=a, sweeps=2000, random_seed=1
    )
    exact = exact_curve(graph, theta, betas, G, a)
    z = np.abs(curve.values - exact) / curve.mcse.values
    assert np.all(z < Z_MAX), f"MC {curve.values} vs exact {exact}, z = {z}"
    assert np.all(curve.mcse.values < 0.02)


@pytest.mark.parametrize("G", [2, 3])
def test_curve_at_beta_zero_is_one_over_G(G):
    X, _ = small_problem(5, n=40, G=G)
    graph = pk.KNNGraph(X)
    curve = pk.mean_energy_curve(graph, 5, [0.0], n_classes=G, sweeps=1000, random_seed=2)
    assert abs(curve.item() - 1 / G) < Z_MAX * curve.mcse.item()
    assert curve.mcse.item() < 0.01


def test_curve_at_beta_zero_with_class_weights():
    """Uniform labels at beta = 0: E / E_max has mean sum(a) / (G^2 max(a))."""
    X, _ = small_problem(5, n=40)
    a = np.array([1.0, 3.0])
    curve = pk.mean_energy_curve(
        pk.KNNGraph(X), 5, [0.0], class_weights=a, sweeps=1000, random_seed=2
    )
    assert abs(curve.item() - a.sum() / (4 * a.max())) < Z_MAX * curve.mcse.item()


def test_curve_increases_in_beta_and_freezes():
    graph = tiny_graph()
    betas = np.array([0.0, 0.4, 0.8, 1.2, 1.6, 2.0, 6.0])
    curve = pk.mean_energy_curve(graph, 3, betas, sweeps=2000, random_seed=3)
    assert np.all(np.diff(curve.values) > 0), curve.values
    assert curve.values[-1] > 0.99


def test_mcse_matches_spread_of_replicates():
    """The reported standard error is the spread of independent curves, within a factor 2."""
    graph = tiny_graph()
    reps = [pk.mean_energy_curve(graph, 3, [1.0], sweeps=300, random_seed=s) for s in range(40)]
    spread = np.std([r.item() for r in reps], ddof=1)
    reported = np.mean([r.mcse.item() for r in reps])
    assert 0.5 < reported / spread < 2.0, (reported, spread)


def test_curve_is_a_labelled_dataarray():
    graph = tiny_graph("knn", "equal")
    curve = pk.mean_energy_curve(graph, 2, [0.0, 1.0], sweeps=N_BATCHES, burn=0, random_seed=0)
    assert isinstance(curve, xr.DataArray)
    assert curve.dims == ("beta",) and curve.name == "mean_energy"
    assert curve.mcse.dims == ("beta",) and int(curve.k) == 2
    assert curve.attrs["e_max"] == pytest.approx(graph.coupling(2).weight.sum())
    np.testing.assert_array_equal(curve.beta, [0.0, 1.0])


def test_curve_is_reproducible():
    graph = tiny_graph("dnn", "gaussian")
    one, two, other = (
        pk.mean_energy_curve(graph, 0.8, [0.5, 1.5], sweeps=40, random_seed=s) for s in (7, 7, 8)
    )
    xr.testing.assert_identical(one, two)
    assert not np.array_equal(one.values, other.values)


# ------------------------------------------------------------------------------- beta_max


GRID = np.round(np.arange(0, 61) * 0.1, 10)


def test_beta_max_is_where_the_exact_curve_crosses():
    graph = tiny_graph()
    for tol in (0.1, 0.02):
        found = pk.beta_max(graph, 3, tol=tol, betas=GRID, sweeps=600, random_seed=4)
        # within the Monte Carlo wobble (about 0.01 on this scale) of the exact crossing
        lo = exact_crossing(graph, 3, 1 - tol - 0.01, GRID)
        hi = exact_crossing(graph, 3, 1 - tol + 0.01, GRID)
        assert lo <= found <= hi, (tol, lo, found, hi)


def test_beta_max_is_monotone_in_tol():
    graph = tiny_graph()
    tols = [0.3, 0.1, 0.03, 0.01]
    found = [pk.beta_max(graph, [2, 3], tol=t, betas=GRID, random_seed=5) for t in tols]
    assert np.all(np.diff(found) >= 0), found
    assert found[-1] > found[0]


def test_beta_max_over_thetas_is_the_smallest():
    """The minimum of the per-k crossings, each k on its own stream spawned from the seed."""
    graph, ks, grid = tiny_graph(), [1, 2, 7], GRID[GRID <= 5]
    streams = np.random.default_rng(6).spawn(len(ks))
    crossings = []
    for k, stream in zip(ks, streams):
        curve = pk.mean_energy_curve(graph, k, grid, random_seed=stream)
        crossings.append(float(grid[np.argmax(curve.values >= 1 - DEFAULT_TOL)]))
    assert crossings[-1] < min(crossings[:-1])  # the last k decides: the search must go on
    assert pk.beta_max(graph, ks, betas=grid, random_seed=6) == min(crossings), crossings


def test_beta_max_on_ripley_is_the_documented_value():
    X, *_ = pk.datasets.load_ripley("train")
    graph = pk.KNNGraph(X, k_max=125)
    assert 2.6 <= pk.beta_max(graph, 13, random_seed=2009) <= 3.1


# ------------------------------------------------------------------------------- errors


@pytest.fixture(scope="module")
def graph():
    return tiny_graph()


@pytest.mark.parametrize(
    "betas, match",
    [
        ([], "empty"),
        ([-0.5, 1.0], ">= 0"),
        ([0.0, np.nan], "finite"),
        ([1.0, 0.5], "strictly increasing"),
        ([0.5, 0.5], "strictly increasing"),
        ([[0.0, 1.0]], "1-D"),
    ],
)
def test_bad_betas(graph, betas, match):
    with pytest.raises(ValueError, match=match):
        pk.mean_energy_curve(graph, 2, betas)
    with pytest.raises(ValueError, match=match):
        pk.beta_max(graph, 2, betas=betas)


@pytest.mark.parametrize("tol", [0.0, 1.0, -0.1, 1.5, np.nan])
def test_bad_tol(graph, tol):
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1\)"):
        pk.beta_max(graph, 2, tol=tol)


@pytest.mark.parametrize("k", [0, 8, 1.5, -1])
def test_k_out_of_range(graph, k):
    with pytest.raises(ValueError, match=r"k must be an integer in 1\.\.7"):
        pk.mean_energy_curve(graph, k, [1.0])
    with pytest.raises(ValueError, match=r"k must be an integer in 1\.\.7"):
        pk.beta_max(graph, [2, k])


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.inf])
def test_sigma_out_of_range(sigma):
    graph = tiny_graph("dnn", "gaussian")
    with pytest.raises(ValueError, match="sigma must be finite and > 0"):
        pk.beta_max(graph, sigma)


def test_other_bad_input(graph):
    with pytest.raises(ValueError, match="theta is empty"):
        pk.beta_max(graph, [])
    with pytest.raises(ValueError, match="single k"):
        pk.mean_energy_curve(graph, [2, 3], [1.0])
    with pytest.raises(ValueError, match="sweeps must be an integer >= 20"):
        pk.mean_energy_curve(graph, 2, [1.0], sweeps=10)
    with pytest.raises(ValueError, match="burn must be"):
        pk.mean_energy_curve(graph, 2, [1.0], burn=-1)
    with pytest.raises(ValueError, match="n_classes"):
        pk.beta_max(graph, 2, n_classes=1)
    with pytest.raises(TypeError, match="KNNGraph or DistanceGraph"):
        pk.beta_max(graph.coupling(2), 2)
    X, _ = small_problem(3)
    with pytest.raises(ValueError, match="no joint distribution"):
        pk.mean_energy_curve(pk.KNNGraph(X, neighbours="asymmetric"), 2, [1.0])


def test_grid_too_short_says_extend(graph):
    with pytest.raises(ValueError, match=r"reaches only 0\.\d+ < 1 - tol = 0\.99.*extend the grid"):
        pk.beta_max(graph, [2, 3], betas=[0.0, 0.2, 0.4], random_seed=0)
