"""PyMC's forward sampling of a Potts term: prior and posterior predictive label fields.

The exactness checks compare the draws' distribution over all ``G^n`` labelings of a tiny problem
with the Potts law computed by brute force (tests/brute.py) by a chi-square goodness-of-fit test,
cells of expected count below 5 pooled. With a fixed seed the test is deterministic; over seeds a
correct sampler would fail it with probability 1e-3. With 10,000 draws on 8 points it rejects the
law at beta + 0.05 (total-variation distance 0.03) at p = 8e-4, and at beta + 0.1 (0.06) at
p = 1e-21.
"""

import logging
import re
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import pytest
from scipy import stats

import pymc_knn as pk
import pymc_knn.distributions as dist
from pymc_knn.distributions import PottsRV

import brute
from conftest import VM_MODE, small_problem

DOCS = Path(__file__).resolve().parents[1] / "docs" / "prediction.md"


def knn_model(X, y, beta=None, k=None, K=4):
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 3) if beta is None else beta
        k = pm.DiscreteUniform("k", 1, K) if k is None else k
        pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
    return model


def dnn_model(X, y):
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 3)
        sigma = pm.Uniform("sigma", 0.2, 3.0)
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, observed=y)
    return model


def posterior(**draws):
    """An InferenceData with one chain of the given posterior draws."""
    return az.from_dict(posterior={name: np.asarray(v)[None] for name, v in draws.items()})


def label_warnings(caught):
    return [w for w in caught if "draws of the labels are approximate" in str(w.message)]


# --------------------------------------------------------------------- the inplace rewrite


def test_the_op_rebuilds_from_its_props_as_pytensor_rewrites_do():
    X, y = small_problem(3, n=8)
    op = knn_model(X, y)["y"].owner.op
    props = op._props_dict()
    props["inplace"] = True
    new = type(op)(**props)
    assert new.term is op.term and new.name == op.name and new.signature == op.signature
    assert new.inplace and new.destroy_map == {0: [0]}


def _ops(fgraph):
    """The Ops of ``fgraph``, inside the wrappers of PyTensor's numba backend too."""
    for node in fgraph.apply_nodes:
        inner = getattr(node.op, "fgraph", None)  # numba: RandomVariableWithCoreShape
        yield from _ops(inner) if inner is not None else [node.op]


@pytest.mark.parametrize("mode", [VM_MODE, "NUMBA"], ids=["vm", "numba"])
def test_forward_sampling_compiles_with_the_inplace_rewrite(caplog, mode):
    X, y = small_problem(3, n=8)
    model = knn_model(X, y)
    with caplog.at_level(logging.ERROR, logger="pytensor"), warnings.catch_warnings():
        warnings.filterwarnings("error", "Numba will use object mode to run PottsRV")
        with pytensor.config.change_flags(on_opt_error="raise"), model:
            pm.sample_prior_predictive(draws=3, random_seed=1, compile_kwargs={"mode": mode})
            fn = pm.compile([], model["y"], random_seed=1, mode=mode)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    ops = [op for op in _ops(fn.maker.fgraph) if isinstance(op, PottsRV)]
    assert len(ops) == 1 and ops[0].inplace


@pytest.mark.parametrize("build", [knn_model, dnn_model])
def test_the_numba_backend_draws_what_the_default_one_does(build):
    X, y = small_problem(3, n=8)
    with build(X, y) as model:
        draws = [
            pm.sample_prior_predictive(draws=4, random_seed=3, compile_kwargs={"mode": mode})
            for mode in (VM_MODE, "NUMBA")
        ]
    names = [("prior", v.name) for v in model.free_RVs] + [("prior_predictive", "y")]
    for group, name in names:
        np.testing.assert_array_equal(draws[0][group][name], draws[1][group][name])
    assert np.unique(draws[0].prior_predictive["y"].values.reshape(4, -1), axis=0).shape[0] > 1


@pytest.mark.parametrize("build", [knn_model, dnn_model])
def test_the_numba_backend_computes_the_logp_the_default_one_does(build):
    X, y = small_problem(3, n=8)
    model = build(X, y)
    point = model.initial_point()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Numba will use object mode")
        logp = model.compile_logp(mode="NUMBA")(point)
    reference = model.compile_logp(mode=VM_MODE)(point)
    assert np.isfinite(logp) and logp == pytest.approx(reference, rel=1e-12)


# ---------------------------------------------------------------- shapes, seeds, warnings


@pytest.mark.parametrize("G", [2, 3])
@pytest.mark.parametrize("family", ["knn", "dnn"])
def test_prior_and_posterior_predictive_draw_label_fields(family, G):
    X, y = small_problem(4, n=9, G=G)
    model = knn_model(X, y, K=3) if family == "knn" else dnn_model(X, y)
    params = (
        {"beta": [0.5, 1.0, 2.0], "k": [1, 2, 3]}
        if family == "knn"
        else {"beta": [0.5, 1.0, 2.0], "sigma": [0.3, 1.0, 2.5]}
    )
    with model:
        prior = pm.sample_prior_predictive(draws=6, random_seed=1).prior_predictive["y"]
        post = pm.sample_posterior_predictive(
            posterior(**params), random_seed=1, progressbar=False
        ).posterior_predictive["y"]
    assert prior.shape == (1, 6, 9) and post.shape == (1, 3, 9)
    for labels in (prior.values, post.values):
        assert labels.dtype.kind == "i" and labels.min() >= 0 and labels.max() < G


def test_same_seed_same_draws():
    X, y = small_problem(5, n=9)
    post = posterior(beta=[0.3, 1.0, 2.5, 2.5], k=[1, 2, 3, 3])
    with knn_model(X, y):
        runs = [
            pm.sample_posterior_predictive(post, random_seed=s, progressbar=False)
            .posterior_predictive["y"]
            .values
            for s in (7, 7, 8)
        ]
        priors = [
            pm.sample_prior_predictive(draws=5, random_seed=s).prior_predictive["y"].values
            for s in (7, 7)
        ]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(priors[0], priors[1])
    assert not np.array_equal(runs[0], runs[2])


def test_one_counted_warning_per_call(monkeypatch):
    """At beta = 0 one sweep of coupling from the past coalesces; at beta = 4 on 60 points one
    sweep never does, so with a bound of 1 sweep exactly the draws at beta = 4 fall back."""
    monkeypatch.setattr(dist, "PREDICTIVE_CFTP_SWEEPS", 1)
    X, y = small_problem(6, n=60)
    post = posterior(beta=[0.0, 4.0] * 6, k=[3] * 12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with knn_model(X, y, K=5):
            for seed in (1, 2):  # each call counts its own draws
                pm.sample_posterior_predictive(post, random_seed=seed, progressbar=False)
        with knn_model(X, y, beta=4.0, k=3) as model:
            pm.draw(model["y"], draws=4, random_seed=1)
            pm.sample_prior_predictive(draws=3, random_seed=1)
    found = [str(w.message) for w in label_warnings(caught)]
    assert len(found) == 4, found
    for message in found[:2]:
        assert re.search(r"^PottsKNN: 6 of 12 draws .* \(beta = 4\) .* within 1 sweeps", message)
    assert found[2].startswith("PottsKNN: 4 of 4 draws")
    assert found[3].startswith("PottsKNN: 3 of 3 draws")
    assert {w.filename for w in label_warnings(caught)} == {__file__}  # the user's call


def test_no_warning_when_every_draw_is_exact():
    X, y = small_problem(6, n=60)
    with knn_model(X, y, K=5), warnings.catch_warnings():
        warnings.simplefilter("error")
        pm.sample_posterior_predictive(
            posterior(beta=[0.0, 0.5] * 3, k=[3] * 6), random_seed=1, progressbar=False
        )


def test_a_negative_beta_is_refused():
    X, y = small_problem(3, n=8)
    with pm.Model():
        beta = pm.Normal("beta", -1.0, 0.1)
        pk.PottsKNN("y", X=X, beta=beta, k=2, observed=y)
        with pytest.raises(ValueError, match="beta must be >= 0"):
            pm.sample_prior_predictive(draws=2, random_seed=1)


# --------------------------------------------------------------- exactness against brute force


def chi_square_p(z, probs, G):
    """The goodness-of-fit p-value of labelings ``z`` (rows) against ``probs``."""
    idx = pk.testing.labeling_index(z, G)
    counts = np.bincount(idx, minlength=probs.size).astype(float)
    expected = probs * len(z)
    small = expected < 5
    f_obs = np.append(counts[~small], counts[small].sum())
    f_exp = np.append(expected[~small], expected[small].sum())
    return stats.chisquare(f_obs, f_exp).pvalue


def draws_of(model, N, seed):
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rv = model["y"]
        beta, theta = rv.owner.inputs[2:]
        op = rv.owner.op
        return pm.draw(op(beta, theta, size=N), random_seed=seed)


@pytest.mark.parametrize(
    "beta, cftp_sweeps, G",
    [
        (1.0, None, 2),  # coupling from the past with the default bound: exact
        (2.5, 1, 2),  # a bound of 1 sweep: nearly every draw falls back to Swendsen-Wang
        (1.5, None, 3),  # three classes: Swendsen-Wang
    ],
)
def test_knn_draws_follow_the_potts_law(monkeypatch, beta, cftp_sweeps, G):
    if cftp_sweeps is not None:
        monkeypatch.setattr(dist, "PREDICTIVE_CFTP_SWEEPS", cftp_sweeps)
    n, k = (8, 2) if G == 2 else (6, 2)
    X, y = small_problem(11, n=n, G=G)
    z = draws_of(knn_model(X, y, beta=beta, k=k), 10_000, seed=3)
    _, probs = brute.exact_probs(brute.knn_W(brute.standardise(X), k, "symmetrised"), beta, G)
    assert chi_square_p(z, probs, G) > 1e-3


def test_dnn_draws_follow_the_potts_law(monkeypatch):
    monkeypatch.setattr(dist, "PREDICTIVE_CFTP_SWEEPS", 1)  # the fall-back, on weighted edges
    X, y = small_problem(12, n=8)
    beta, sigma = 3.0, 0.8
    with pm.Model() as model:
        pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, observed=y)
    z = draws_of(model, 10_000, seed=4)
    _, probs = brute.exact_probs(brute.dnn_W(brute.standardise(X), sigma, "gaussian"), beta, 2)
    assert chi_square_p(z, probs, 2) > 1e-3


def test_a_wrong_law_fails_the_check():
    """The check has power: draws at beta = 1.0 against the law at beta = 1.1 (TV 0.06)."""
    X, y = small_problem(11, n=8)
    z = draws_of(knn_model(X, y, beta=1.0, k=2), 10_000, seed=3)
    _, probs = brute.exact_probs(brute.knn_W(brute.standardise(X), 2, "symmetrised"), 1.1, 2)
    assert chi_square_p(z, probs, 2) < 1e-3


# ----------------------------------------------------------------------- the docs' example


def docs_example() -> str:
    text = DOCS.read_text()
    section = text.split("## Prior and posterior predictive draws", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_docs_posterior_predictive_check_runs():
    scope: dict = {}
    exec(compile(docs_example(), str(DOCS), "exec"), scope)
    replicated, observed = scope["replicated"], scope["observed"]
    assert replicated.shape == observed.shape == (100,)
    # the energy is the model's sufficient statistic: its replicates straddle the observed value
    assert 0.05 < scope["p_value"] < 0.95
    # but not the balance of the classes (125 and 125): the replicates are rarely balanced
    assert scope["imbalance"].shape == (100,) and scope["p_balance"] < 0.05
