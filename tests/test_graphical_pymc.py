"""The graphical model in PyMC: graph prior, evidence term, the particle Gibbs step of pm.sample."""

import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytest
from pymc.sampling.mcmc import assign_step_methods

from conftest import VM_MODE
from pymc_knn.graphical import class_hyper, exact_graph_posterior
from pymc_knn.graphical.decomposable import enumerate_decomposable
from pymc_knn.graphical.evidence import cliques_and_separators, log_evidence_sets, new_cache
from pymc_knn.graphical.model import (
    DecomposableGraph,
    GaussianGraphicalEvidence,
    GraphParticleGibbs,
    adjacency_to_edges,
    edge_names,
)

SAMPLE = {"tune": 0, "chains": 1, "progressbar": False, "compute_convergence_checks": False}


def _tv(edge_draws, graphs, probs):
    """TV distance between edge-vector draws and an exact distribution over adjacency graphs."""
    exact = {adjacency_to_edges(g).tobytes(): q for g, q in zip(graphs, probs)}
    keys, counts = np.unique(edge_draws.astype(np.int64), axis=0, return_counts=True)
    sampled = {k.tobytes(): c / counts.sum() for k, c in zip(keys, counts)}
    assert set(sampled) <= set(exact)
    return 0.5 * sum(abs(sampled.get(k, 0.0) - q) for k, q in exact.items())


def _chain_data(n=15, seed=0):
    r = np.random.default_rng(seed)
    return r.normal(size=(n, 4)) @ (np.eye(4) + np.diag([0.8] * 3, 1))


def test_pm_sample_assigns_the_step_and_names_the_edges():
    """pm.sample picks GraphParticleGibbs; draws are edge indicators with named dims."""
    X = _chain_data()
    with pm.Model(coords={"edge": edge_names("abcd")}):
        G = DecomposableGraph("G", p=4, dims="edge")
        GaussianGraphicalEvidence("X", graph=G, observed=X)
        pm.Deterministic("graph_size", G.sum())
        _, selected = assign_step_methods(pm.modelcontext(None))
        assert [v.name for v in selected[GraphParticleGibbs]] == ["G"]
        idata = pm.sample(draws=300, random_seed=1, **SAMPLE)
    post = idata.posterior
    assert post["G"].dims == ("chain", "draw", "edge")
    assert list(post["edge"].values) == ["a-b", "a-c", "a-d", "b-c", "b-d", "c-d"]
    assert np.array_equal(post["graph_size"], post["G"].sum("edge"))
    assert np.array_equal(idata.sample_stats["graph_size"], post["graph_size"])
    assert np.isfinite(az.ess(idata, var_names=["graph_size"])["graph_size"])


def test_step_competence():
    """IDEAL for a DecomposableGraph, INCOMPATIBLE for anything else."""
    with pm.Model():
        G = DecomposableGraph("G", p=3)
        x = pm.Normal("x")
    assert GraphParticleGibbs.competence(G, False) == pm.step_methods.compound.Competence.IDEAL
    assert GraphParticleGibbs.competence(x, True) == (
        pm.step_methods.compound.Competence.INCOMPATIBLE
    )


def test_prior_logp():
    """The graph prior: its edge-count weight on decomposable graphs, -inf on a 4-cycle."""
    weights = np.arange(7, dtype=float) * -0.5
    with pm.Model() as model:
        DecomposableGraph("G", p=4, edge_logp=weights)
    logp = model.compile_logp()
    path = np.array([1, 0, 0, 1, 0, 1])  # a-b, b-c, c-d
    cycle = np.array([1, 0, 1, 1, 0, 1])  # a-b, a-d, b-c, c-d: chordless 4-cycle
    assert logp({"G": path}) == pytest.approx(-1.5)
    assert logp({"G": cycle}) == -np.inf


def test_forward_draws_are_exact_for_small_p():
    """pm.draw of a size-weighted graph prior matches the enumerated prior (p = 4)."""
    weights = np.array([0.0, 0.5, 1.0, 0.3, -0.2, 0.1, 2.0])
    graphs = enumerate_decomposable(4)
    logw = np.array([weights[adjacency_to_edges(g).sum()] for g in graphs])
    probs = np.exp(logw) / np.exp(logw).sum()
    draws = pm.draw(DecomposableGraph.dist(p=4, edge_logp=weights), draws=20_000, random_seed=2)
    assert _tv(draws, graphs, probs) <= 0.03


def test_the_numba_backend_agrees_with_the_default_one():
    """Under PyTensor's numba backend the graph Ops give the same logp and draws, silently."""
    weights = np.arange(7, dtype=float) * -0.5
    with pm.Model() as model:
        G = DecomposableGraph("G", p=4, edge_logp=weights)
        GaussianGraphicalEvidence("X", graph=G, observed=_chain_data())
    point = {"G": np.array([1, 0, 0, 1, 0, 1])}
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Numba will use object mode")
        logp = model.compile_logp(mode="NUMBA")(point)
        draws = pm.draw(G, draws=50, random_seed=3, mode="NUMBA")
    reference = model.compile_logp(mode=VM_MODE)(point)
    assert np.isfinite(logp) and logp == pytest.approx(reference, rel=1e-12)
    np.testing.assert_array_equal(draws, pm.draw(G, draws=50, random_seed=3, mode=VM_MODE))


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["simplicial", "christmas_tree"])
def test_pm_sample_prior_without_data(kernel):
    """With no evidence term, pm.sample draws the size-weighted prior (TV <= 0.03)."""
    weights = np.array([0.0, 0.5, 1.0, 0.3, -0.2, 0.1, 2.0])
    graphs = enumerate_decomposable(4)
    logw = np.array([weights[adjacency_to_edges(g).sum()] for g in graphs])
    probs = np.exp(logw) / np.exp(logw).sum()
    with pm.Model():
        DecomposableGraph("G", p=4, edge_logp=weights)
        step = GraphParticleGibbs(n_particles=10, kernel=kernel)
        idata = pm.sample(draws=40_000, random_seed=3, **SAMPLE, step=step)
    assert _tv(idata.posterior["G"].values[0], graphs, probs) <= 0.03


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["simplicial", "christmas_tree"])
def test_pm_sample_graph_posterior_matches_enumeration(kernel):
    """pm.sample's graph draws are within TV 0.03 of the exact posterior (p = 4)."""
    X = _chain_data()
    graphs, probs = exact_graph_posterior(class_hyper(X))
    with pm.Model():
        G = DecomposableGraph("G", p=4)
        GaussianGraphicalEvidence("X", graph=G, observed=X)
        step = GraphParticleGibbs(n_particles=10, kernel=kernel)
        idata = pm.sample(draws=40_000, random_seed=4, **SAMPLE, step=step)
    assert _tv(idata.posterior["G"].values[0], graphs, probs) <= 0.03


def test_christmas_tree_step():
    """GraphParticleGibbs(kernel="christmas_tree") samples the graph posterior (2,000 draws:
    TV below 0.1; the slow test above holds it to 0.03); an unknown kernel is refused."""
    X = _chain_data()
    graphs, probs = exact_graph_posterior(class_hyper(X))
    with pm.Model():
        G = DecomposableGraph("G", p=4)
        GaussianGraphicalEvidence("X", graph=G, observed=X)
        step = GraphParticleGibbs(n_particles=10, kernel="christmas_tree")
        idata = pm.sample(draws=2000, random_seed=6, **SAMPLE, step=step)
        with pytest.raises(ValueError, match="kernel must be one of"):
            GraphParticleGibbs(kernel="christmas")
    assert _tv(idata.posterior["G"].values[0], graphs, probs) <= 0.1


def test_delta_with_a_prior():
    """delta can get a prior: pm.sample gives it a gradient-free step and the graph PG."""
    X = _chain_data()
    with pm.Model():
        G = DecomposableGraph("G", p=4)
        delta = pm.Gamma("delta", 2.0, 1.0)
        GaussianGraphicalEvidence("X", graph=G, delta=delta, observed=X)
        idata = pm.sample(draws=200, random_seed=5, **SAMPLE)
    assert (idata.posterior["delta"] > 0).all()
    assert idata.posterior["delta"].std() > 0
    assert idata.posterior["G"].sum("G_dim_0").std() > 0


def _exact_joint(X, name, grid, log_prior):
    """The exact joint posterior of (G, nu or delta) on a grid of the parameter (uniform graph
    prior, every decomposable graph on 4 nodes): the parameter's mean and the graph marginal."""
    graphs = enumerate_decomposable(X.shape[1])
    sets = [cliques_and_separators(g) for g in graphs]
    log_joint = np.empty((grid.size, len(graphs)))
    for i, v in enumerate(grid):
        h = class_hyper(X, **{name: float(v)})
        cache = new_cache()
        log_joint[i] = [
            log_evidence_sets(c, s, cache, h.phi, h.phi_post, h.consts) for c, s in sets
        ]
    log_joint += log_prior(grid)[:, None]
    w = np.exp(log_joint - log_joint.max())
    marginal_v = np.trapezoid(w.sum(1), grid)
    mean_v = np.trapezoid(grid * w.sum(1), grid) / marginal_v
    graph_probs = np.trapezoid(w, grid, axis=0) / marginal_v
    return graphs, graph_probs, mean_v


@pytest.mark.slow
@pytest.mark.parametrize("name", ["delta", "nu"])
def test_joint_posterior_with_a_free_hyperparameter_matches_enumeration(name):
    """(G, delta) or (G, nu) by pm.sample (particle Gibbs for G, PyMC's gradient-free step for
    the other) against the exact joint posterior: every graph times a fine grid of the
    parameter. delta changes each clique's degrees of freedom, so it moves with the graph; with
    the class mean as mu, nu enters f(X | G) only as (nu / (nu + n))^(p / 2), whatever G."""
    X = _chain_data()
    grid = np.linspace(1e-4, 25.0, 2501)  # Gamma(2, 1) leaves 3e-10 beyond 25
    graphs, probs, mean_v = _exact_joint(X, name, grid, lambda v: np.log(v) - v)
    with pm.Model():
        G = DecomposableGraph("G", p=4)
        v = pm.Gamma(name, 2.0, 1.0)
        GaussianGraphicalEvidence("X", graph=G, observed=X, **{name: v})
        idata = pm.sample(
            draws=6000,
            tune=1000,
            chains=2,
            random_seed=11,
            progressbar=False,
            compute_convergence_checks=False,
        )
    draws = idata.posterior[name]
    mcse = float(az.mcse(draws)[name])
    assert abs(float(draws.mean()) - mean_v) <= 4 * mcse + 0.01
    # the check has power: the exact mean under a Gamma(3, 1) prior is rejected
    wrong = _exact_joint(X, name, grid, lambda v: 2 * np.log(v) - v)[2]
    assert abs(float(draws.mean()) - wrong) > 4 * mcse + 0.01
    edges = idata.posterior["G"].values.reshape(-1, idata.posterior["G"].shape[-1])
    assert _tv(edges, graphs, probs) <= 0.03


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: DecomposableGraph.dist(p=0), "p must be an integer in 1..64"),
        (lambda: DecomposableGraph.dist(p=65), "p must be an integer in 1..64"),
        (lambda: DecomposableGraph.dist(p=4, edge_logp=np.zeros(6)), "edge_logp must be 7 log"),
    ],
)
def test_bad_graph_prior(make, message):
    """A bad number of nodes or of edge weights raises a ValueError that says so."""
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_evidence_data():
    """NaN in the observed points is refused."""
    X = _chain_data()
    X[0, 0] = np.nan
    with pm.Model(), pytest.raises(ValueError, match="finite"):
        GaussianGraphicalEvidence("X", graph=DecomposableGraph("G", p=4), observed=X)


def test_forward_draws_beyond_enumeration_follow_the_prior(monkeypatch):
    """Beyond enumeration a forward draw is the end of a particle Gibbs chain on the prior
    (warned): at p = 5, with enumeration switched off, the number of edges of 600 draws is
    within TV 0.08 of the exact prior's (a uniform over 822 graphs); a p = 7 draw is a
    decomposable graph."""
    from pymc_knn.graphical import model as gm
    from pymc_knn.graphical.decomposable import is_chordal

    monkeypatch.setattr(gm, "MAX_ENUMERATION_NODES", 4)
    with pytest.warns(UserWarning, match="particle Gibbs"):
        draws = pm.draw(DecomposableGraph.dist(p=5), draws=600, random_seed=1)
    exact = np.bincount(gm._edge_table(5).sum(axis=1), minlength=11) / 822
    got = np.bincount(draws.sum(axis=1), minlength=11) / 600
    assert 0.5 * np.abs(got - exact).sum() < 0.08
    monkeypatch.setattr(gm, "MAX_ENUMERATION_NODES", 6)
    with pytest.warns(UserWarning, match="particle Gibbs"):
        g = pm.draw(DecomposableGraph.dist(p=7), random_seed=1)
    assert g.shape == (21,) and is_chordal(gm.edges_to_adjacency(g, 7))
