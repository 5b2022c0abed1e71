"""Bad and unusual input across the public surfaces: a clear error, or the right answer.

One table of bad inputs, grouped by surface (the model, the step methods, prediction, the
estimator, the command line): each case does one bad thing and must raise the given exception
with a message that names the argument at fault. Then unusual inputs that are valid and must give
a finite, correct answer. Then property tests (hypothesis, derandomized) over small random
problems with duplicate points and extreme scales: clean ones give class probabilities and label
probabilities that match brute force, and ones with a fault a ``ValueError`` naming it.
"""

import contextlib
import functools
import io
import itertools
import re
from typing import Callable, NamedTuple

import arviz as az
import numpy as np
import pymc as pm
import pytest
import xarray as xr
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp, softmax
from sklearn.exceptions import NotFittedError

import pymc_knn as pk
from pymc_knn.__main__ import main
from pymc_knn.plots import plot_k_posterior, predictive_grid
from pymc_knn.sklearn import BayesianKNNClassifier
from pymc_knn.testing import label_probabilities, labeling_index

X = np.random.default_rng(0).normal(size=(8, 2))
Y = np.array([0, 1] * 4)
Y3 = np.array([0, 1, 2, 0, 1, 2, 0, 1])
NAN_X = np.where(np.eye(8, 2) > 0, np.nan, X)
INF_X = np.where(np.eye(8, 2) > 0, np.inf, X)


class Case(NamedTuple):
    id: str
    call: Callable
    error: type
    match: str


# -- builders --------------------------------------------------------------------------------


def knn(X=X, y=Y, beta=None, k=None, **kwargs):
    """A PottsKNN model; ``beta`` and ``k`` are callables making the parameters (default
    Uniform(0, 2) and DiscreteUniform(1, 4))."""
    with pm.Model() as model:
        b = pm.Uniform("beta", 0, 2) if beta is None else beta()
        kk = pm.DiscreteUniform("k", 1, 4) if k is None else k()
        pk.PottsKNN("y", X=X, beta=b, k=kk, observed=y, **kwargs)
    return model


def dnn(X=X, y=Y, beta=None, sigma=None, **kwargs):
    with pm.Model() as model:
        b = pm.Uniform("beta", 0, 2) if beta is None else beta()
        s = pm.Uniform("sigma", 0.1, 2) if sigma is None else sigma()
        pk.DistanceNN("y", X=X, beta=b, sigma=s, observed=y, **kwargs)
    return model


def step(cls=pk.Exchange, model=None, **kwargs):
    with model if model is not None else knn():
        return cls(**kwargs)


def sample(model, **kwargs):
    kwargs = {
        "draws": 10,
        "tune": 10,
        "chains": 1,
        "cores": 1,
        "random_seed": 1,
        "progressbar": False,
        "compute_convergence_checks": False,
        **kwargs,
    }
    with model:
        return pm.sample(**kwargs)


def posterior(beta=1.0, k=2, sigma=None, y=Y, draws=4):
    """An InferenceData with chosen draws, as pm.sample would return for ``knn()`` or ``dnn()``."""
    post = {"beta": np.broadcast_to(np.asarray(beta, dtype=float), (1, draws))}
    if sigma is None:
        post["k"] = np.broadcast_to(np.asarray(k), (1, draws))
    else:
        post["sigma"] = np.broadcast_to(np.asarray(sigma, dtype=float), (1, draws))
    return az.from_dict(posterior=post, observed_data=None if y is None else {"y": y})


def proba(idata=None, X_new=X[:3], model=None, **kwargs):
    idata = posterior() if idata is None else idata
    return pk.predict_proba(idata, X_new, model=knn() if model is None else model, **kwargs)


def fit(X=X, y=Y, **kwargs):
    kwargs = {"method": "pseudo", "draws": 10, "tune": 10, "chains": 1, "random_seed": 0, **kwargs}
    return BayesianKNNClassifier(**kwargs).fit(X, y)


@functools.cache
def fitted():
    return fit()


class CLIError(Exception):
    """A command line that stopped with a non-zero exit: its message is what it printed."""


def cli(text, *args, raw=None, name="data.csv"):
    """``python -m pymc_knn fit <csv> ...`` on a file holding ``text`` (or bytes ``raw``); the
    returned call takes pytest's ``tmp_path``. ``{path}`` and ``{dir}`` in ``args`` are filled."""

    def run(tmp_path):
        path = tmp_path / name
        path.write_bytes(raw if raw is not None else text.encode("utf-8"))
        argv = [a.format(path=path, dir=tmp_path) for a in args]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code
        if code != 0:
            raise CLIError(err.getvalue())

    return run


GOOD_CSV = "a,y\n1,x\n2,z\n3,x\n4,z\n"


def fit_cli(text=GOOD_CSV, *options, **kwargs):
    return cli(text, "fit", "{path}", "--target", "y", "--out", "{dir}/out", *options, **kwargs)


# -- the table -------------------------------------------------------------------------------

MODEL = [
    Case("X-nan", lambda: knn(X=NAN_X), ValueError, r"X contains NaN"),
    Case("X-inf", lambda: dnn(X=INF_X), ValueError, r"X contains inf"),
    Case("X-1d", lambda: knn(X=X[:, 0]), ValueError, r"X must be 2-D .*reshape\(-1, 1\)"),
    Case("X-3d", lambda: knn(X=X[:, :, None]), ValueError, r"X must be 2-D"),
    Case(
        "X-empty",
        lambda: knn(X=np.zeros((0, 2)), y=np.zeros(0, int)),
        ValueError,
        r"X needs at least 2 points, got 0",
    ),
    Case("X-one-point", lambda: knn(X=X[:1], y=Y[:1]), ValueError, r"X needs at least 2 points"),
    Case("X-no-columns", lambda: knn(X=np.zeros((8, 0))), ValueError, r"X has no columns"),
    Case(
        "X-strings", lambda: knn(X=np.array([["a", "b"]] * 8)), ValueError, r"X must hold numbers"
    ),
    Case(
        "X-objects", lambda: dnn(X=np.array([[None, 1.0]] * 8)), ValueError, r"X must hold numbers"
    ),
    Case("X-complex", lambda: knn(X=X + 1j), ValueError, r"X must hold numbers"),
    Case(
        "X-ragged",
        lambda: knn(X=[[1.0, 2.0], [3.0]] + [[1.0, 2.0]] * 6),
        ValueError,
        r"X must be a 2-D array",
    ),
    Case(
        "X-raw-1e155",
        lambda: knn(X=X * 1e155, standardize=False),
        ValueError,
        r"covariates reach a magnitude of .*overflow.*standardize=True",
    ),
    Case(
        "X-raw-1e-300",
        lambda: dnn(X=X * 1e-300, standardize=False),
        ValueError,
        r"covariates reach a magnitude of .*underflow.*standardize=True",
    ),
    Case("labels-too-few", lambda: knn(y=Y[:5]), ValueError, r"got 5 labels for 8 points"),
    Case("labels-negative", lambda: knn(y=Y - 1), ValueError, r"labels must be in 0..G-1, got -1"),
    Case("labels-not-whole", lambda: knn(y=Y * 0.5), ValueError, r"labels must be whole numbers"),
    Case(
        "X-random-variable",
        lambda: knn(X=pm.Normal.dist(size=X.shape)),
        ValueError,
        r"X must be data",
    ),
    # NaN marks a missing label (imputed, tests/test_missing_labels.py); all missing is refused
    Case(
        "labels-all-nan",
        lambda: dnn(y=np.full(8, np.nan)),
        ValueError,
        r"every observed label is missing",
    ),
    Case(
        "labels-nan-and-one-class",
        lambda: knn(y=np.where(Y == 1, np.nan, Y)),
        ValueError,
        r"single class",
    ),
    Case(
        "labels-strings",
        lambda: knn(y=np.array(list("abababab"))),
        ValueError,
        r"labels must be integers 0..G-1, got strings.*np.unique",
    ),
    Case(
        "labels-bool",
        lambda: knn(y=Y.astype(bool)),
        ValueError,
        r"labels must be integers 0..G-1, got dtype bool",
    ),
    Case("labels-2d", lambda: knn(y=Y[:, None]), ValueError, r"labels must be 1-D"),
    Case(
        "labels-0-2-5",
        lambda: knn(y=np.array([0, 2, 5, 0, 2, 5, 0, 2])),
        ValueError,
        r"labels \[0, 2, 5\] leave the classes \[1, 3, 4\] .* empty.*n_classes=6",
    ),
    Case(
        "labels-0-2-5-dnn",
        lambda: dnn(y=np.array([0, 2, 5, 0, 2, 5, 0, 2])),
        ValueError,
        r"leave the classes \[1, 3, 4\]",
    ),
    Case(
        "single-class", lambda: knn(y=np.zeros(8, int)), ValueError, r"labels hold a single class"
    ),
    Case(
        "single-class-dnn",
        lambda: dnn(y=np.ones(8, int), n_classes=2),
        ValueError,
        r"labels hold a single class",
    ),
    Case("n-classes-1", lambda: knn(n_classes=1), ValueError, r"n_classes must be an integer >= 2"),
    Case(
        "n-classes-float",
        lambda: knn(n_classes=2.5),
        ValueError,
        r"n_classes must be an integer >= 2, got 2.5",
    ),
    Case(
        "n-classes-below-labels",
        lambda: knn(y=Y3, n_classes=2, k=lambda: 2),
        ValueError,
        r"labels must be in 0..1 for 2 classes, got 2",
    ),
    Case(
        "unobserved-without-n-classes",
        lambda: _unobserved(n_classes=None),
        ValueError,
        r"give n_classes when the labels are not observed",
    ),
    Case(
        "class-weights-length",
        lambda: knn(class_weights=[1.0]),
        ValueError,
        r"class_weights must have one weight per class \(2\)",
    ),
    Case(
        "class-weights-negative",
        lambda: knn(class_weights=[1.0, -1.0]),
        ValueError,
        r"class_weights must be finite and positive",
    ),
    Case(
        "class-weights-zero",
        lambda: dnn(class_weights=[1.0, 0.0]),
        ValueError,
        r"class_weights must be finite and positive",
    ),
    Case(
        "class-weights-nan",
        lambda: dnn(class_weights=[1.0, np.nan]),
        ValueError,
        r"class_weights must be finite and positive",
    ),
    Case(
        "k-max-past-smallest-class",
        lambda: knn(k_max=7),
        ValueError,
        r"k_max=7 exceeds the smallest observed class size \(4\)",
    ),
    Case("k-max-zero", lambda: knn(k_max=0), ValueError, r"k_max must be an integer in 1..n-1"),
    Case("k-max-float", lambda: knn(k_max=2.5), ValueError, r"k_max must be an integer"),
    Case("k-max-bool", lambda: knn(k_max=True), ValueError, r"k_max must be an integer"),
    Case("k-max-string", lambda: knn(k_max="3"), ValueError, r"k_max must be an integer"),
    Case(
        "neighbours-asymmetric",
        lambda: knn(neighbours="asymmetric"),
        ValueError,
        r"neighbours must be 'symmetrised' or 'equal'.*no joint model",
    ),
    Case(
        "neighbours-unknown",
        lambda: knn(neighbours="mutual"),
        ValueError,
        r"neighbours must be 'symmetrised' or 'equal', got 'mutual'",
    ),
    Case(
        "kernel-unknown",
        lambda: dnn(kernel="cosine"),
        ValueError,
        r"kernel must be one of \('gaussian', 'ball', 'exponential'\), got 'cosine'",
    ),
    Case(
        "standardize-string",
        lambda: knn(standardize="no"),
        ValueError,
        r"standardize must be True or False, got 'no'",
    ),
    Case(
        "beta-max-zero", lambda: knn(beta_max=0.0), ValueError, r"beta_max must be finite and > 0"
    ),
    Case(
        "beta-max-nan", lambda: dnn(beta_max=np.nan), ValueError, r"beta_max must be finite and > 0"
    ),
    Case(
        "beta-max-string",
        lambda: knn(beta_max="2"),
        ValueError,
        r"beta_max must be finite and > 0, got the string '2'",
    ),
    Case(
        "k-continuous-prior",
        lambda: knn(k=lambda: pm.Uniform("k", 1, 4)),
        ValueError,
        r"k must be an integer, got a float64 expression.*DiscreteUniform",
    ),
    Case("k-constant-2.5", lambda: knn(k=lambda: 2.5), ValueError, r"k must be an integer"),
    # refused when the model is built (before: at pm.sample, with advice about initvals)
    Case(
        "k-constant-past-k-max",
        lambda: knn(k=lambda: 9),
        ValueError,
        r"k must be an integer in 1..k_max = 4, got 9",
    ),
    Case(
        "k-constant-zero",
        lambda: knn(k=lambda: 0),
        ValueError,
        r"k must be an integer in 1..k_max = 4, got 0",
    ),
    Case(
        "beta-constant-negative",
        lambda: knn(beta=lambda: -1.0),
        ValueError,
        r"beta must be >= 0 \(and not NaN\), got -1.0",
    ),
    Case(
        "beta-constant-nan",
        lambda: knn(beta=lambda: np.nan),
        ValueError,
        r"beta must be >= 0 \(and not NaN\), got nan",
    ),
    Case(
        "sigma-constant-zero",
        lambda: dnn(sigma=lambda: 0.0),
        ValueError,
        r"sigma must be > 0 \(and not NaN\), got 0.0",
    ),
    Case(
        "sigma-constant-negative",
        lambda: dnn(sigma=lambda: -1.0),
        ValueError,
        r"sigma must be > 0 \(and not NaN\), got -1.0",
    ),
]

STEPS = [
    Case(
        "beta-expression-negative",
        lambda: step(model=knn(beta=lambda: pm.Deterministic("beta", pm.Normal("b", 0.5, 1)))),
        ValueError,
        r"beta \(an expression of free variables\) puts prior mass on beta < 0",
    ),
    Case(
        "sigma-expression-not-positive",
        lambda: step(model=dnn(sigma=lambda: pm.Deterministic("sigma", pm.Normal("s", 1, 1)))),
        ValueError,
        r"sigma \(an expression of free variables\) puts prior mass on sigma <= 0",
    ),
    Case(
        "sampler-unknown",
        lambda: step(sampler="metropolis"),
        ValueError,
        r"sampler must be one of \('swendsen_wang', 'gibbs', 'cftp', 'enumerate'\)",
    ),
    Case(
        "sampler-cftp-3-classes",
        lambda: step(model=knn(y=Y3, k=lambda: pm.DiscreteUniform("k", 1, 2)), sampler="cftp"),
        ValueError,
        r"sampler='cftp' .* two classes only; this model has 3",
    ),
    Case(
        "sampler-enumerate-too-big",
        lambda: step(
            model=knn(X=np.random.default_rng(1).normal(size=(30, 2)), y=np.arange(30) % 2),
            sampler="enumerate",
        ),
        ValueError,
        r"sampler='enumerate' needs G\^n <= 4194304",
    ),
    Case("sweeps-zero", lambda: step(sweeps=0), ValueError, r"sweeps must be an integer >= 1"),
    Case(
        "sweeps-negative",
        lambda: step(pk.Moller, sweeps=-5),
        ValueError,
        r"sweeps must be an integer >= 1, got -5",
    ),
    Case("sweeps-float", lambda: step(sweeps=2.5), ValueError, r"sweeps must be an integer"),
    Case("sweeps-bool", lambda: step(sweeps=True), ValueError, r"sweeps must be an integer"),
    Case(
        "sweeps-string",
        lambda: step(sweeps="10"),
        ValueError,
        r"sweeps must be an integer >= 1, got '10'",
    ),
    Case(
        "max-sweeps-zero",
        lambda: step(sampler="cftp", max_sweeps=0),
        ValueError,
        r"max_sweeps must be an integer >= 1",
    ),
    Case(
        "proposal-sd-negative",
        lambda: step(pk.Moller, proposal_sd=-1),
        ValueError,
        r"proposal_sd must be finite and > 0",
    ),
    Case(
        "proposal-sd-nan",
        lambda: step(proposal_sd=np.nan),
        ValueError,
        r"proposal_sd must be finite and > 0",
    ),
    Case(
        "proposal-sd-string",
        lambda: step(proposal_sd="big"),
        ValueError,
        r"proposal_sd must be finite and > 0, got the string 'big'",
    ),
    Case(
        "delayed-acceptance-string",
        lambda: step(delayed_acceptance="no"),
        ValueError,
        r"delayed_acceptance must be True, False, 'most' or 'auto', got 'no'",
    ),
    Case(
        "start-unknown",
        lambda: step(start="zeros"),
        ValueError,
        r"start must be 'auto', 'observed', 'tuned' or 'random', got 'zeros'",
    ),
    Case(
        "iterations-per-draw-zero",
        lambda: step(iterations_per_draw=0),
        ValueError,
        r"iterations_per_draw must be an integer >= 1",
    ),
    Case(
        "iterations-per-draw-float",
        lambda: step(iterations_per_draw=2.5),
        ValueError,
        r"iterations_per_draw must be an integer >= 1",
    ),
    Case(
        "max-iterations-per-draw-negative",
        lambda: step(max_iterations_per_draw=-1),
        ValueError,
        r"max_iterations_per_draw must be an integer >= 1",
    ),
    Case("bridge-negative", lambda: step(bridge=-1), ValueError, r"bridge must be an integer >= 0"),
    Case("bridge-float", lambda: step(bridge=2.5), ValueError, r"bridge must be an integer"),
    Case("bridge-word", lambda: step(bridge="auto"), ValueError, r"integer >= 0 or 'tuned'"),
    Case(
        "max-bridge-string",
        lambda: step(max_bridge="many"),
        ValueError,
        r"max_bridge must be an integer",
    ),
    Case("k-radius-zero", lambda: step(k_radius=0), ValueError, r"k_radius must be an integer"),
    Case("k-radius-bool", lambda: step(k_radius=True), ValueError, r"k_radius must be an integer"),
    Case(
        "target-accept-one",
        lambda: step(target_accept=1.0),
        ValueError,
        r"target_accept must be in \(0, 1\)",
    ),
    Case(
        "target-accept-zero",
        lambda: step(target_accept=0.0),
        ValueError,
        r"target_accept must be in \(0, 1\)",
    ),
    Case(
        "target-accept-nan",
        lambda: step(target_accept=np.nan),
        ValueError,
        r"target_accept must be in \(0, 1\)",
    ),
    Case(
        "tune-interval",
        lambda: step(tune_interval=0),
        TypeError,
        r"unexpected keyword argument 'tune_interval'",
    ),
    Case(
        "misspelt-sweeps", lambda: step(sweep=10), TypeError, r"unexpected keyword argument 'sweep'"
    ),
    Case(
        "beta-prior-normal",
        lambda: step(model=knn(beta=lambda: pm.Normal("beta", 1, 1))),
        ValueError,
        r"prior of beta puts mass on beta < 0",
    ),
    Case(
        "beta-prior-slightly-negative",
        lambda: step(model=knn(beta=lambda: pm.Uniform("beta", -0.1, 2))),
        ValueError,
        r"prior of beta puts mass on beta < 0 \(beta = -1e-06",
    ),
    Case(
        "beta-prior-in-sample",
        lambda: sample(knn(beta=lambda: pm.Normal("beta", 1, 1))),
        ValueError,
        r"prior of beta puts mass on beta < 0",
    ),
    Case(
        "beta-prior-past-beta-max",
        lambda: step(model=knn(beta=lambda: pm.Uniform("beta", 0, 3), beta_max=2.0)),
        ValueError,
        r"prior of beta reaches past beta_max = 2",
    ),
    Case(
        "beta-halfnormal-past-beta-max",
        lambda: step(pk.Moller, model=knn(beta=lambda: pm.HalfNormal("beta", 1), beta_max=2.0)),
        ValueError,
        r"prior of beta reaches past beta_max = 2",
    ),
    Case(
        "beta-expression-past-beta-max",
        lambda: step(
            model=knn(
                beta=lambda: pm.Deterministic("beta", 2 * pm.Uniform("b", 0, 2)), beta_max=2.0
            )
        ),
        ValueError,
        r"beta \(an expression of free variables\) reaches past beta_max = 2 under its prior: "
        r"\d+ of 1000 prior draws",
    ),
    Case(  # the point check sees the bound at its start, 2: the joint prior reaches 3
        "beta-free-bound-past-beta-max",
        lambda: step(
            model=knn(beta=lambda: pm.Uniform("beta", 0, pm.Uniform("top", 1, 3)), beta_max=2.5)
        ),
        ValueError,
        r"beta \(a free variable whose prior has free inputs\) reaches past beta_max = 2.5",
    ),
    Case(  # the bound starts at 3 <= k_max
        "k-free-bound-past-k-max",
        lambda: step(
            model=knn(k=lambda: pm.DiscreteUniform("k", 1, pm.DiscreteUniform("top", 1, 6)))
        ),
        ValueError,
        r"k \(a free variable whose prior has free inputs\) puts prior mass on k outside "
        r"1..k_max = 4: \d+ of 1000",
    ),
    Case(
        "k-prior-past-k-max",
        lambda: step(model=knn(k=lambda: pm.DiscreteUniform("k", 1, 7))),
        ValueError,
        r"prior of k allows k = 5 > k_max = 4",
    ),
    Case(
        "k-prior-poisson",
        lambda: step(model=knn(k=lambda: pm.Poisson("k", 2))),
        ValueError,
        r"prior of k allows k = 5 > k_max = 4",
    ),
    Case(
        "k-prior-from-zero",
        lambda: step(model=knn(k=lambda: pm.DiscreteUniform("k", 0, 4))),
        ValueError,
        r"prior of k allows k = 0.*lower bound of 1",
    ),
    Case(
        "sigma-prior-normal",
        lambda: step(model=dnn(sigma=lambda: pm.Normal("sigma", 0.5, 1))),
        ValueError,
        r"prior of sigma puts mass on sigma <= 0",
    ),
    Case(
        "sigma-prior-from-negative",
        lambda: step(
            pk.PseudoLikelihoodMetropolis, model=dnn(sigma=lambda: pm.Uniform("sigma", -1, 2))
        ),
        ValueError,
        r"prior of sigma puts mass on sigma <= 0",
    ),
    Case(
        "plug-in-scalar",
        lambda: step(pk.Moller, plug_in=1.0),
        ValueError,
        r"plug_in must be a pair",
    ),
    Case(
        "plug-in-k-past-k-max",
        lambda: step(pk.Moller, plug_in=(1.0, 9)),
        ValueError,
        r"k must be an integer in 1..4",
    ),
    Case(
        "plug-in-beta-negative",
        lambda: step(pk.Moller, plug_in=(-1.0, 2)),
        ValueError,
        r"plug_in beta_hat must be finite and >= 0",
    ),
    Case(
        "plug-in-beta-max-zero",
        lambda: step(pk.Moller, plug_in_beta_max=0.0),
        ValueError,
        r"plug_in_beta_max must be finite and > 0",
    ),
    Case(
        "vars-not-parameters",
        lambda: _stray_vars(),
        ValueError,
        r"\['mu'\] are not parameters of the Potts term 'y'",
    ),
    Case(
        "model-without-potts-term",
        lambda: _no_term(),
        ValueError,
        r"give vars=: the model has 0 Potts terms",
    ),
    Case("unobserved-term", lambda: _unobserved(), ValueError, r"y: a Potts term must be observed"),
    Case(
        "initval-outside-prior",
        lambda: sample(knn(), initvals={"beta": 5.0}),
        ValueError,
        r"zero prior density.*initvals",
    ),
    Case(
        "pymc-metropolis-on-beta",
        lambda: _pymc_step(pm.Metropolis),
        ValueError,
        r"Metropolis was assigned to 'beta_interval__'.*pk.Exchange",
    ),
    Case(
        "pymc-slice-on-beta",
        lambda: _pymc_step(pm.Slice),
        ValueError,
        r"Slice was assigned to 'beta_interval__'",
    ),
    Case(
        "sample-smc",
        lambda: _with(knn(), lambda: pm.sample_smc(draws=10, chains=1, progressbar=False)),
        ValueError,
        r"sample_smc .* pm.sample",
    ),
    Case(
        "find-map",
        lambda: _with(knn(), lambda: pm.find_MAP(progressbar=False)),
        ValueError,
        r"find_MAP .* normalising constant",
    ),
    # pm.sample's own refusal of zero draws (the same for NUTS): no empty or NaN trace
    Case("draws-zero-exchange", lambda: sample(knn(), draws=0), ValueError, r"Not enough samples"),
    Case("draws-zero-moller", lambda: _draws_zero(pk.Moller), ValueError, r"Not enough samples"),
    Case(
        "draws-zero-pseudo",
        lambda: _draws_zero(pk.PseudoLikelihoodMetropolis),
        ValueError,
        r"Not enough samples",
    ),
]

PREDICTION = [
    Case(
        "X-new-columns",
        lambda: proba(X_new=np.zeros((2, 3))),
        ValueError,
        r"X_new has 3 columns but 'y' was fitted on 2",
    ),
    Case(
        "X-new-nan",
        lambda: pk.predictive_summary(posterior(), np.array([[0.0, np.nan]]), model=knn()),
        ValueError,
        r"X_new contains NaN",
    ),
    Case(
        "X-new-inf",
        lambda: pk.add_predictions(posterior(), np.array([[0.0, np.inf]]), model=knn()),
        ValueError,
        r"X_new contains inf",
    ),
    Case("X-new-1d", lambda: proba(X_new=X[0]), ValueError, r"X_new must be 2-D.*reshape"),
    Case(
        "X-new-empty",
        lambda: proba(X_new=np.zeros((0, 2))),
        ValueError,
        r"X_new needs at least 1 points",
    ),
    Case(
        "X-new-strings",
        lambda: proba(X_new=np.array([["a", "b"]])),
        ValueError,
        r"X_new must hold numbers",
    ),
    Case(
        "X-new-1e300",
        lambda: proba(X_new=X[:2] * 1e300),
        ValueError,
        r"X_new lies .* training scales .* overflow",
    ),
    Case(
        "X-new-1e300-dnn",
        lambda: pk.predictive_summary(posterior(sigma=1.0), X[:2] * 1e300, model=dnn()),
        ValueError,
        r"X_new lies .* training scales",
    ),
    Case(
        "no-posterior-group",
        lambda: proba(idata=az.from_dict(observed_data={"y": Y})),
        ValueError,
        r"idata has no posterior group",
    ),
    Case(
        "not-an-inferencedata",
        lambda: proba(idata={"beta": [1.0]}),
        ValueError,
        r"idata has no posterior group",
    ),
    Case(
        "posterior-without-k",
        lambda: proba(idata=az.from_dict(posterior={"beta": np.ones((1, 3))})),
        ValueError,
        r"no draws of \['k'\], the parameters of 'y'",
    ),
    Case(
        "knn-idata-for-dnn-model",
        lambda: proba(model=dnn()),
        ValueError,
        r"no draws of \['sigma'\]",
    ),
    Case(
        "k-past-k-max",
        lambda: proba(idata=posterior(k=7)),
        ValueError,
        r"draw k = 7, outside the integers 1..k_max = 4",
    ),
    Case("k-zero", lambda: proba(idata=posterior(k=0)), ValueError, r"draw k = 0, outside"),
    Case(
        "k-not-whole", lambda: proba(idata=posterior(k=2.5)), ValueError, r"draw k = 2.5, outside"
    ),
    Case(
        "beta-negative",
        lambda: proba(idata=posterior(beta=-0.1)),
        ValueError,
        r"draws of beta that are negative or not finite",
    ),
    Case(
        "beta-nan",
        lambda: pk.predictive_summary(posterior(beta=np.nan), X[:2], model=knn()),
        ValueError,
        r"draws of beta that are negative or not finite",
    ),
    Case(
        "sigma-zero",
        lambda: proba(idata=posterior(sigma=0.0), model=dnn()),
        ValueError,
        r"draws of sigma that are not finite and > 0",
    ),
    Case(
        "sigma-nan",
        lambda: proba(idata=posterior(sigma=np.nan), model=dnn()),
        ValueError,
        r"draws of sigma that are not finite and > 0",
    ),
    Case(
        "zero-draws",
        lambda: pk.predictive_summary(posterior(draws=0), X[:2], model=knn()),
        ValueError,
        r"idata's posterior has no draws",
    ),
    Case(
        "zero-draws-dnn",
        lambda: proba(idata=posterior(sigma=1.0, draws=0), model=dnn()),
        ValueError,
        r"idata's posterior has no draws",
    ),
    Case(
        "other-model-labels",
        lambda: proba(idata=posterior(y=1 - Y)),
        ValueError,
        r"observed 'y' differs from the model's labels",
    ),
    Case(
        "other-model-length",
        lambda: proba(idata=posterior(y=np.array([0, 1, 0]))),
        ValueError,
        r"observed 'y' differs from the model's labels",
    ),
    Case(
        "other-model-covariates",
        lambda: _other_covariates(),
        ValueError,
        r"training covariates of 'y' differ from the model's",
    ),
    Case(
        "no-model-no-record",
        lambda: pk.predict_proba(posterior(), X[:2]),
        ValueError,
        r"pass model=model",
    ),
    Case(
        "model-without-potts-term",
        lambda: pk.predict_proba(posterior(), X[:2], model=pm.Model()),
        ValueError,
        r"no observed PottsKNN or DistanceNN term",
    ),
    Case(
        "var-name-unknown",
        lambda: proba(var_name="z"),
        ValueError,
        r"give var_name= as one of the model's observed Potts terms \['y'\]",
    ),
    Case(
        "ci-prob-one",
        lambda: pk.predictive_summary(posterior(), X[:2], model=knn(), ci_prob=1.0),
        ValueError,
        r"ci_prob must be in \(0, 1\)",
    ),
    Case(
        "ci-prob-nan",
        lambda: pk.predictive_summary(posterior(), X[:2], model=knn(), ci_prob=np.nan),
        ValueError,
        r"ci_prob must be in \(0, 1\)",
    ),
    Case(
        "ci-prob-string",
        lambda: pk.predictive_summary(posterior(), X[:2], model=knn(), ci_prob="95%"),
        ValueError,
        r"ci_prob must be in \(0, 1\), got the string '95%'",
    ),
    Case("classes-length", lambda: proba(classes=["a"]), ValueError, r"classes must hold 2 labels"),
    Case(
        "joint-sweeps-zero",
        lambda: proba(joint=True, sweeps=0),
        ValueError,
        r"sweeps must be a positive integer",
    ),
    Case(
        "joint-sweeps-float",
        lambda: proba(joint=True, sweeps=2.5),
        ValueError,
        r"sweeps must be a positive integer",
    ),
    Case(
        "summarize-wrong-dims",
        lambda: pk.summarize_proba(xr.DataArray(np.zeros((2, 2)), dims=("a", "b"))),
        ValueError,
        r"proba must be a DataArray with dims \(chain, draw, point, class\)",
    ),
    Case(
        "zones-shapes",
        lambda: pk.uncertainty_zones(np.zeros((3, 2)), np.zeros((3, 3)), np.zeros((3, 2))),
        ValueError,
        r"lower, upper and mean must be .* of one shape",
    ),
    Case(
        "map-three-covariates",
        lambda: predictive_grid(posterior(), model=knn(X=np.hstack([X, X[:, :1]]))),
        ValueError,
        r"predictive map needs exactly two covariates",
    ),
    Case(
        "map-grid-size",
        lambda: predictive_grid(posterior(), model=knn(), grid_size=1),
        ValueError,
        r"grid_size must be an integer >= 2",
    ),
    Case(
        "k-posterior-not-integer",
        lambda: plot_k_posterior(posterior(beta=[0.5, 1.5, 1.0, 2.0]), var_name="beta"),
        ValueError,
        r"'beta' must be an integer parameter",
    ),
    Case(
        "k-posterior-missing",
        lambda: plot_k_posterior(posterior(), var_name="sigma"),
        ValueError,
        r"no posterior draws of 'sigma'",
    ),
]

ESTIMATOR = [
    Case(
        "model-unknown",
        lambda: fit(model="knn"),
        ValueError,
        r"model must be one of \('symmetrised', 'equal', 'dnn-gaussian', 'dnn-ball', "
        r"'dnn-exponential'\), got 'knn'",
    ),
    Case(
        "method-unknown",
        lambda: fit(method="nuts"),
        ValueError,
        r"method must be one of \('exchange', 'moller', 'pseudo', 'korea'\), got 'nuts'",
    ),
    Case(
        "korea-for-dnn",
        lambda: fit(method="korea", model="dnn-ball"),
        ValueError,
        r"method='korea' approximates the kNN models",
    ),
    *[
        Case(
            f"beta-upper-{v}",
            lambda v=v: fit(beta_upper=v),
            ValueError,
            r"beta_upper must be finite and > 0",
        )
        for v in (0.0, -1.0, np.nan, np.inf)
    ],
    *[
        Case(
            f"sigma-upper-{v}",
            lambda v=v: fit(model="dnn-gaussian", sigma_upper=v),
            ValueError,
            r"sigma_upper must be finite and > 0",
        )
        for v in (0.0, -1.0, np.nan)
    ],
    Case("k-max-zero", lambda: fit(k_max=0), ValueError, r"k_max must be an integer >= 1"),
    Case("k-max-float", lambda: fit(k_max=2.5), ValueError, r"k_max must be an integer"),
    Case("k-max-bool", lambda: fit(k_max=True), ValueError, r"k_max must be an integer"),
    Case("k-max-string", lambda: fit(k_max="3"), ValueError, r"k_max must be an integer"),
    Case(
        "k-max-past-smallest-class",
        lambda: fit(k_max=5),
        ValueError,
        r"k_max=5 exceeds the smallest observed class size",
    ),
    Case("draws-zero", lambda: fit(draws=0), ValueError, r"draws must be an integer >= 1"),
    Case("draws-negative", lambda: fit(draws=-1), ValueError, r"draws must be an integer >= 1"),
    Case("tune-negative", lambda: fit(tune=-1), ValueError, r"tune must be an integer >= 0"),
    Case("chains-zero", lambda: fit(chains=0), ValueError, r"chains must be an integer >= 1"),
    Case("cores-zero", lambda: fit(cores=0), ValueError, r"cores must be an integer >= 1"),
    Case(
        "sweeps-zero",
        lambda: fit(method="exchange", sweeps=0),
        ValueError,
        r"sweeps must be an integer >= 1",
    ),
    Case(
        "sampler-unknown",
        lambda: fit(method="exchange", sampler="metropolis"),
        ValueError,
        r"sampler must be one of",
    ),
    Case("ci-prob-above-one", lambda: fit(ci_prob=1.5), ValueError, r"ci_prob must be in \(0, 1\)"),
    Case("ci-prob-nan", lambda: fit(ci_prob=np.nan), ValueError, r"ci_prob must be in \(0, 1\)"),
    Case(
        "standardize-string",
        lambda: fit(standardize="no"),
        ValueError,
        r"standardize must be True or False",
    ),
    Case(
        "predict-before-fit",
        lambda: BayesianKNNClassifier().predict(X),
        NotFittedError,
        r"BayesianKNNClassifier instance is not fitted yet",
    ),
    Case(
        "predict-proba-before-fit",
        lambda: BayesianKNNClassifier().predict_proba(X),
        NotFittedError,
        r"not fitted yet",
    ),
    Case(
        "predict-summary-before-fit",
        lambda: BayesianKNNClassifier().predict_summary(X),
        NotFittedError,
        r"not fitted yet",
    ),
    Case("X-nan", lambda: fit(X=NAN_X), ValueError, r"Input X contains NaN"),
    Case("X-inf", lambda: fit(X=INF_X), ValueError, r"Input X contains infinity"),
    Case("X-1d", lambda: fit(X=X[:, 0]), ValueError, r"Expected 2D array, got 1D array"),
    Case(
        "X-empty",
        lambda: fit(X=np.zeros((0, 2)), y=np.zeros(0, int)),
        ValueError,
        r"Found array with 0 sample\(s\)",
    ),
    Case("y-length", lambda: fit(y=Y[:5]), ValueError, r"inconsistent numbers of samples"),
    Case("y-2d", lambda: fit(y=np.column_stack([Y, Y])), ValueError, r"y should be a 1d array"),
    Case(
        "y-continuous",
        lambda: fit(y=np.linspace(0, 1, 8)),
        ValueError,
        r"Unknown label type: continuous",
    ),
    Case(
        "y-nan",
        lambda: fit(y=np.where(np.arange(8) == 3, np.nan, Y)),
        ValueError,
        r"Input y contains NaN",
    ),
    Case(
        "y-single-class",
        lambda: fit(y=np.zeros(8, int)),
        ValueError,
        r"needs at least 2 classes in y, got 1 class",
    ),
    Case("one-point", lambda: fit(X=X[:1], y=Y[:1]), ValueError, r"at least 2 classes in y"),
    Case(
        "predict-columns",
        lambda: fitted().predict(np.zeros((2, 3))),
        ValueError,
        r"X has 3 features, but BayesianKNNClassifier is expecting 2 features",
    ),
    Case(
        "predict-nan",
        lambda: fitted().predict(np.array([[0.0, np.nan]])),
        ValueError,
        r"Input X contains NaN",
    ),
    Case(
        "predict-1d",
        lambda: fitted().predict_proba(X[0]),
        ValueError,
        r"Expected 2D array, got 1D array",
    ),
    Case(
        "predict-empty",
        lambda: fitted().predict(np.zeros((0, 2))),
        ValueError,
        r"Found array with 0 sample\(s\)",
    ),
]

PATH_SAMPLING = [
    Case(
        "log-z-graph-without-n-classes",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [0, 1]),
        ValueError,
        r"give n_classes",
    ),
    Case(
        "log-z-not-a-graph",
        lambda: pk.log_normaliser(X, [0, 1], n_classes=2),
        TypeError,
        r"graph_or_term must be a KNNGraph, DistanceGraph, PottsTerm or pm.Model",
    ),
    Case(
        "log-z-asymmetric",
        lambda: pk.log_normaliser(pk.KNNGraph(X, neighbours="asymmetric"), [0, 1], n_classes=2),
        ValueError,
        r"asymmetric .* no normalising constant",
    ),
    Case(
        "log-z-betas-negative",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [-1, 1], n_classes=2),
        ValueError,
        r"betas must be finite and >= 0",
    ),
    Case(
        "log-z-betas-unsorted",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [0, 2, 1], n_classes=2),
        ValueError,
        r"betas must be strictly increasing",
    ),
    Case(
        "log-z-betas-only-zero",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [0], n_classes=2),
        ValueError,
        r"betas must reach past 0",
    ),
    Case(
        "log-z-betas-2d",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [[0, 1]], n_classes=2),
        ValueError,
        r"betas must be a non-empty 1-D grid",
    ),
    Case(
        "log-z-k-past-k-max",
        lambda: pk.log_normaliser(pk.KNNGraph(X, k_max=3), [0, 1], [4], n_classes=2),
        ValueError,
        r"k must be an integer in 1..3",
    ),
    Case(
        "log-z-thetas-repeated",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [0, 1], [2, 2], n_classes=2),
        ValueError,
        r"thetas must be strictly increasing",
    ),
    Case(
        "log-z-dnn-without-sigmas",
        lambda: pk.log_normaliser(pk.DistanceGraph(X), [0, 1], n_classes=2),
        ValueError,
        r"give thetas, a grid of sigma",
    ),
    Case(
        "log-z-sigma-negative",
        lambda: pk.log_normaliser(pk.DistanceGraph(X), [0, 1], [-1.0], n_classes=2),
        ValueError,
        r"sigma must be",
    ),
    Case(
        "log-z-sweeps-few",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [0, 1], n_classes=2, sweeps=10),
        ValueError,
        r"sweeps must be an integer >= 40",
    ),
    Case(
        "log-z-burn-negative",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [0, 1], n_classes=2, burn=-1),
        ValueError,
        r"burn must be an integer >= 0",
    ),
    Case(
        "log-z-n-jobs-zero",
        lambda: pk.log_normaliser(pk.KNNGraph(X), [0, 1], n_classes=2, n_jobs=0),
        ValueError,
        r"n_jobs must be None, -1 or an integer >= 1, got 0",
    ),
    Case(
        "log-z-term-other-classes",
        lambda: pk.log_normaliser(pk.terms.PottsTerm(pk.KNNGraph(X), 2), [0, 1], n_classes=3),
        ValueError,
        r"n_classes=3 differs from the term's 2 classes",
    ),
    Case(
        "posterior-not-a-surface",
        lambda: pk.path_sampling_posterior(pk.KNNGraph(X), Y, np.zeros((3, 2))),
        ValueError,
        r"log_z must be the DataArray",
    ),
    Case(
        "posterior-other-graph",
        lambda: pk.path_sampling_posterior(pk.KNNGraph(X[:6]), Y[:6], small_surface()),
        ValueError,
        r"log_z was computed on 8 points, the graph has 6",
    ),
    Case(
        "posterior-knn-surface-on-dnn",
        lambda: pk.grid_posterior(pk.DistanceGraph(X), Y, small_surface()),
        ValueError,
        r"log_z has dims \('k', 'beta'\)",
    ),
    Case(
        "posterior-labels-past-classes",
        lambda: pk.grid_posterior(pk.KNNGraph(X), Y3, small_surface()),
        ValueError,
        r"labels must be in 0..1",
    ),
    Case(
        "posterior-refine-zero",
        lambda: pk.grid_posterior(pk.KNNGraph(X), Y, small_surface(), refine=0),
        ValueError,
        r"refine must be an integer >= 1",
    ),
    Case(
        "posterior-prior-not-callable",
        lambda: pk.grid_posterior(pk.KNNGraph(X), Y, small_surface(), beta_prior=2.0),
        ValueError,
        r"beta_prior must be a callable",
    ),
    Case(
        "posterior-prior-zero",
        lambda: pk.grid_posterior(
            pk.KNNGraph(X), Y, small_surface(), theta_prior=lambda k: np.full(k.shape, -np.inf)
        ),
        ValueError,
        r"theta_prior is -inf .* on the whole grid",
    ),
    Case(
        "posterior-draws-zero",
        lambda: pk.path_sampling_posterior(pk.KNNGraph(X), Y, small_surface(), draws=0),
        ValueError,
        r"draws must be an integer >= 1",
    ),
    Case(
        "evidence-replicates-one",
        lambda: pk.log_evidence(pk.KNNGraph(X), Y, small_surface(), replicates=1),
        ValueError,
        r"replicates must be an integer >= 2",
    ),
    Case(
        "compare-empty",
        lambda: pk.compare_evidence({}),
        ValueError,
        r"models must be a non-empty mapping",
    ),
    Case(
        "compare-not-evidence",
        lambda: pk.compare_evidence({"a": 1.0}),
        ValueError,
        r"models\['a'\] must be an Evidence",
    ),
    Case(
        "compare-prior-probs-names",
        lambda: pk.compare_evidence({"a": (0.0, 0.1), "b": (-1.0, 0.1)}, prior_probs={"a": 1.0}),
        ValueError,
        r"prior_probs must give a probability for each of \['a', 'b'\]",
    ),
]


@functools.cache
def small_surface():
    return pk.log_normaliser(
        pk.KNNGraph(X, k_max=3),
        [0, 0.5, 1],
        n_classes=2,
        sweeps=40,
        burn=0,
        random_seed=0,
        progressbar=False,
    )


CLI = [
    Case(
        "tune-negative",
        fit_cli(GOOD_CSV, "--tune", "-1"),
        CLIError,
        r"argument --tune: -1 is below 0",
    ),
    Case(
        "chains-zero",
        fit_cli(GOOD_CSV, "--chains", "0"),
        CLIError,
        r"argument --chains: 0 is below 1",
    ),
    Case(
        "draws-zero", fit_cli(GOOD_CSV, "--draws", "0"), CLIError, r"argument --draws: 0 is below 1"
    ),
    Case(
        "cores-not-integer",
        fit_cli(GOOD_CSV, "--cores", "x"),
        CLIError,
        r"argument --cores: 'x' is not an integer",
    ),
    Case(
        "seed-not-integer",
        fit_cli(GOOD_CSV, "--seed", "x"),
        CLIError,
        r"argument --seed: invalid int value",
    ),
    *[
        Case(
            f"beta-upper-{v}",
            fit_cli(GOOD_CSV, "--beta-upper", v),
            CLIError,
            r"beta_upper must be finite and > 0",
        )
        for v in ("nan", "0", "-2", "inf")
    ],
    Case(
        "beta-upper-not-number",
        fit_cli(GOOD_CSV, "--beta-upper", "x"),
        CLIError,
        r"argument --beta-upper: invalid float value",
    ),
    Case(
        "out-is-a-file",
        cli(GOOD_CSV, "fit", "{path}", "--target", "y", "--out", "{path}"),
        CLIError,
        r"--out .* is a file; give a folder",
    ),
    Case(
        "demo-out-is-a-file",
        cli(GOOD_CSV, "demo", "--out", "{path}"),
        CLIError,
        r"--out .* is a file",
    ),
    Case("unknown-command", cli(GOOD_CSV, "frobnicate"), CLIError, r"invalid choice: 'frobnicate'"),
    Case(
        "no-target-option",
        cli(GOOD_CSV, "fit", "{path}"),
        CLIError,
        r"the following arguments are required: --target",
    ),
    Case(
        "missing-file",
        cli(GOOD_CSV, "fit", "{dir}/missing.csv", "--target", "y"),
        CLIError,
        r"missing.csv: no such file",
    ),
    Case(
        "folder-for-file",
        cli(GOOD_CSV, "fit", "{dir}", "--target", "y"),
        CLIError,
        r"is a folder; give the CSV file",
    ),
    Case(
        "not-utf8",
        fit_cli(raw="a,y\n1,caf\xe9\n2,z\n3,x\n".encode("latin-1")),
        CLIError,
        r"data.csv: not UTF-8 text",
    ),
    Case(
        "no-such-column",
        cli(GOOD_CSV, "fit", "{path}", "--target", "label"),
        CLIError,
        r"no column 'label'; the columns are \['a', 'y'\]",
    ),
    Case(
        "single-class",
        fit_cli("a,y\n1,x\n2,x\n3,x\n"),
        CLIError,
        r"the target 'y' holds a single class",
    ),
    Case(
        "covariate-nan",
        fit_cli("a,y\n1,x\nnan,z\n3,x\n"),
        CLIError,
        r"covariates of .*data.csv contains NaN values",
    ),
    Case(
        "covariate-inf",
        fit_cli("a,y\n1,x\ninf,z\n3,x\n"),
        CLIError,
        r"covariates of .*data.csv contains inf values",
    ),
    Case(
        "covariate-text",
        fit_cli("a,y\n1,x\nfoo,z\n3,x\n"),
        CLIError,
        r"column 'a' must be numeric; row 3 holds 'foo'",
    ),
    Case(
        "covariate-missing",
        fit_cli("a,y\n1,x\n,z\n3,x\n"),
        CLIError,
        r"column 'a' must be numeric; row 3 holds ''",
    ),
    Case("ragged-row", fit_cli("a,y\n1,x\n2\n3,x\n"), CLIError, r"rows \[3\] do not have 2 fields"),
    Case(
        "empty-label",
        fit_cli("a,y\n1,x\n2,\n3,x\n"),
        CLIError,
        r"the target column 'y' has empty values",
    ),
    Case("no-covariates", fit_cli("y\nx\nz\n"), CLIError, r"no covariate columns besides 'y'"),
    Case("one-data-row", fit_cli("a,y\n1,x\n"), CLIError, r"at least two data rows"),
    Case("empty-file", fit_cli(""), CLIError, r"needs a header row"),
    Case(
        "repeated-target-column",
        fit_cli("a,y,y\n1,x,x\n2,z,z\n3,x,x\n"),
        CLIError,
        r"the column names \['y'\] appear more than once.*leak",
    ),
    Case(
        "repeated-covariate-column",
        fit_cli("a,a,y\n1,1,x\n2,2,z\n3,3,x\n"),
        CLIError,
        r"the column names \['a'\] appear more than once",
    ),
    Case(
        "raw-1e155",
        fit_cli("a,y\n1e155,x\n2e155,z\n3e155,x\n4e155,z\n", "--raw"),
        CLIError,
        r"covariates reach a magnitude of 4e\+155",
    ),
]

SURFACES = {
    "model": MODEL,
    "steps": STEPS,
    "prediction": PREDICTION,
    "estimator": ESTIMATOR,
    "path_sampling": PATH_SAMPLING,
    "cli": CLI,
}
CASES = [
    pytest.param(surface, case, id=f"{surface}/{case.id}")
    for surface, cases in SURFACES.items()
    for case in cases
]


@pytest.mark.parametrize("surface, case", CASES)
def test_bad_input_gets_a_clear_error(surface, case, tmp_path):
    with pytest.raises(case.error, match=case.match):
        case.call(tmp_path) if surface == "cli" else case.call()


def test_case_ids_are_unique():
    ids = [f"{s}/{c.id}" for s, cases in SURFACES.items() for c in cases]
    assert len(ids) == len(set(ids))


def _with(model, call):
    with model:
        return call()


def _stray_vars():
    with knn() as model:
        mu = pm.Normal("mu")
        pm.Normal("obs", mu, 1, observed=[1.0])
        return pk.Exchange(vars=[model["beta"], mu])


def _no_term():
    with pm.Model():
        pm.Normal("mu")
        return pk.Exchange()


def _unobserved(n_classes=2):
    with pm.Model():
        pk.PottsKNN(
            "y",
            X=X,
            beta=pm.Uniform("beta", 0, 2),
            k=pm.DiscreteUniform("k", 1, 4),
            n_classes=n_classes,
        )
        return pk.Exchange()


def _draws_zero(cls):
    model = knn()
    return sample(model, draws=0, step=step(cls, model=model))


def _pymc_step(cls):
    model = knn()
    with model:
        return pm.sample(draws=5, tune=5, chains=1, step=cls([model["beta"]]), progressbar=False)


def _other_covariates():
    """A fit's record of its covariates against a model on other covariates."""
    with knn():
        idata = pm.sample(
            draws=5,
            tune=5,
            chains=1,
            random_seed=1,
            progressbar=False,
            compute_convergence_checks=False,
        )
    return pk.predict_proba(idata, X[:2], model=knn(X=X + 1.0))


# -- unusual but valid input: the right answer -----------------------------------------------


@pytest.mark.parametrize("kernel", ["gaussian", "ball", "exponential"])
@pytest.mark.parametrize("sigma", [1e-300, 1e-160, 1e160, 1e300])
def test_extreme_sigma_gives_the_limit_weights(kernel, sigma):
    """sigma past 1e154 or below 1e-154 (sigma**2 leaves float64): the row-normalised weights
    are their limit, each point's nearest neighbours (gaussian at small sigma, exponential at
    large) or uniform weights, never NaN."""
    Xd = np.vstack([X, X[:1]])  # a duplicate: zero distances
    graph = pk.DistanceGraph(Xd, kernel=kernel)
    W = graph.weights(sigma)
    assert np.all(np.isfinite(W))
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    sq = graph.sq_distances + np.diag(np.full(len(Xd), np.inf))
    nearest = (sq == sq.min(axis=1, keepdims=True)).astype(float)
    off = 1.0 - np.eye(len(Xd))
    concentrated = (kernel == "gaussian") == (sigma < 1) and kernel != "ball"
    if concentrated:
        expected = nearest / nearest.sum(axis=1, keepdims=True)
    elif kernel == "ball" and sigma < 1:  # only coincident points are inside the ball
        inside = off * (graph.sq_distances == 0) + 1e-10 * off * (graph.sq_distances > 0)
        expected = inside / inside.sum(axis=1, keepdims=True)
    else:
        expected = off / off.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(W, expected, atol=1e-12)


def test_tiny_sigma_prior_samples_and_predicts():
    """A prior on sigma below 1e-154 (item 9 of the issue): the chain moves and predictions are
    finite, where sigma**2 used to underflow to NaN weights and a stuck chain."""
    model = dnn(sigma=lambda: pm.Uniform("sigma", 0, 1e-160))
    for cls in (pk.Exchange, pk.PseudoLikelihoodMetropolis):
        idata = sample(model, draws=30, tune=30, step=step(cls, model=model))
        assert float(idata.sample_stats["accepted"].mean()) > 0
        assert np.all(np.isfinite(idata.posterior["beta"]))
    p = pk.predict_proba(idata, X[:3] + 0.01, model=model).values
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0)


def test_csv_labels_1_and_1_0_and_a_bom_are_one_class_and_no_name(tmp_path):
    from pymc_knn.jobs import read_csv

    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffa,y\n1,1\n2,1.0\n3,2\n".encode("utf-8"))
    X_, y, features, classes = read_csv(path, "y")
    assert features == ["a"] and classes.tolist() == [1, 2] and y.tolist() == [0, 0, 1]


def test_initvals_given_to_pm_sample_are_the_chains_start():
    """pm.sample builds the step with its initial point, the user's initvals: they are kept,
    not replaced by the default start near the maximum pseudo-likelihood estimate; and one
    outside the prior is refused, not silently replaced."""
    model = knn()
    point = {**model.initial_point(), "beta_interval__": np.array(1.5), "k": np.array(4)}
    x = step(model=model, initial_point=point).layout.to_x(point)
    np.testing.assert_array_equal(step(model=model, initial_point=point)._start(x), x)
    with pytest.raises(ValueError, match="zero prior density.*initvals"):
        sample(model, initvals={"k": 9})


def test_empty_classes_are_allowed_when_asked_for():
    """Labels 0, 2 with n_classes=3: class 1 is empty on purpose, and predicted with a small but
    positive probability."""
    y = np.array([0, 2] * 4)
    model = knn(y=y, n_classes=3)
    p = pk.predict_proba(posterior(y=y), X[:2] + 0.05, model=model).values
    assert np.all(p[..., 1] > 0) and np.all(p[..., 1] < p.max(axis=-1))


# -- property: a clear error, or the exact answer --------------------------------------------

ARGUMENT_WORDS = r"\b(X|X_new|labels|n_classes|k|k_max|beta|sigma|covariates)\b"
DNN_KINDS = ("gaussian", "ball", "exponential")
MODELS = ("symmetrised", "equal", *DNN_KINDS)


def brute_weights(Z, theta, kind):
    """Dense ``W`` of ``kind`` on the rows of ``Z``, from the definitions (Cucala et al. 2009,
    eq. 3; Yoon and Friel 2015; Friel and Pettitt 2011, section 3), in a form that stays exact
    at extreme ``sigma``: ties go to the lower index; squared distances as the package sums
    them (so that ties are the same ties)."""
    n = len(Z)
    sq = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    W = np.zeros((n, n))
    for i in range(n):
        others = sorted((j for j in range(n) if j != i), key=lambda j: (sq[i, j], j))
        if kind in ("symmetrised", "equal"):
            W[i, others[:theta]] = 1.0 / theta
            continue
        d2 = sq[i, others]
        with np.errstate(over="ignore", invalid="ignore"):
            if kind == "gaussian":  # relative to the nearest: 0/0 never arises
                logw = -((d2 - d2.min()) / (2 * theta)) / theta
            elif kind == "exponential":
                d = np.sqrt(d2)
                logw = -(d - d.min()) * theta
            else:
                logw = np.where(np.sqrt(d2) < theta, 0.0, np.log(1e-10))
        W[i, others] = softmax(logw)
    if kind == "equal":
        return np.triu(((W > 0) | (W > 0).T) / theta, 1)
    return W


def brute_label_probabilities(W, beta, G):
    """``f(z | beta)`` of every labeling (point 0 most significant), by itertools."""
    states = np.array(list(itertools.product(range(G), repeat=len(W))))
    same = states[:, :, None] == states[:, None, :]
    energy = (W[None] * same).sum(axis=(1, 2))
    logp = beta * energy - logsumexp(beta * energy)
    return np.exp(logp)


KNN_FAULTS = {"k = 0": 0, "k = -1": -1, "k = 2.5": 2.5, "k = nan": np.nan}
SIGMA_FAULTS = {"sigma = 0": 0.0, "sigma = -1": -1.0, "sigma = nan": np.nan, "sigma = inf": np.inf}


FAULTS = (
    "labels -1",
    "labels + 0.5",
    "labels past G",
    "a single class",
    "labels too few",
    "beta < 0",
    "beta nan",
    "beta inf",
    "k past k_max",
    "bad theta",
    "raw 1e155",
    "raw 1e-300",
    "X_new far",
)


@st.composite
def problems(draw, kind, fault="none"):
    """A small problem of the model ``kind``, clean or with one ``fault``: bad labels, a
    parameter out of range, or covariates that float64 cannot hold as they are."""
    n = draw(st.integers(3, 8))
    p = draw(st.integers(1, 3))
    G = draw(st.integers(2, 3))
    # small integers: duplicate points and tied distances are common
    Z = np.array(
        draw(
            st.lists(st.lists(st.integers(-2, 2), min_size=p, max_size=p), min_size=n, max_size=n)
        ),
        dtype=float,
    )
    standardize = draw(st.booleans())
    scales = (
        [1e-300, 1e-100, 1e-10, 1.0, 1e10, 1e100, 1e155]
        if standardize
        else [1e-100, 1e-10, 1.0, 1e10, 1e100]
    )
    scale = draw(st.sampled_from(scales))
    y = np.array([0, 1] + draw(st.lists(st.integers(0, G - 1), min_size=n - 2, max_size=n - 2)))
    K = int(np.bincount(y)[np.bincount(y) > 0].min())  # the largest k allowed
    beta = draw(st.sampled_from([0.0, 0.3, 1.0, 2.5, 8.0, 50.0]))
    if kind in ("symmetrised", "equal"):
        theta = draw(st.integers(1, K))
    else:
        theta = draw(st.sampled_from([1e-300, 1e-160, 0.05, 0.7, 3.0, 1e160, 1e300]))
    z_new = np.array(draw(st.lists(st.integers(-3, 3), min_size=p, max_size=p)), dtype=float)
    x_new = z_new * scale
    if fault == "labels -1":
        y = y - 1
    elif fault == "labels + 0.5":
        y = y + 0.5
    elif fault == "labels past G":
        y = np.concatenate([y[:-1], [G]])
    elif fault == "a single class":
        y = np.zeros(n, dtype=int)
    elif fault == "labels too few":
        y = y[:-1]
    elif fault.startswith("beta"):
        beta = {"beta < 0": -0.5, "beta nan": np.nan, "beta inf": np.inf}[fault]
    elif fault == "k past k_max" and kind in ("symmetrised", "equal"):
        theta = K + 1
    elif fault in ("bad theta", "k past k_max"):
        faults = KNN_FAULTS if kind in ("symmetrised", "equal") else SIGMA_FAULTS
        theta = faults[draw(st.sampled_from(sorted(faults)))]
    elif fault.startswith("raw"):
        standardize, scale = False, {"raw 1e155": 1e155, "raw 1e-300": 1e-300}[fault]
        Z[0, 0] = 1.0  # not all zero: a magnitude to overflow or underflow
    elif fault == "X_new far":
        with np.errstate(over="ignore"):  # past 1e8 training scales: inf, refused as such
            x_new = np.full(p, 1e300 * max(scale, 1.0))
    return {
        "Z": Z,
        "scale": scale,
        "standardize": standardize,
        "y": y,
        "G": G,
        "kind": kind,
        "beta": beta,
        "theta": theta,
        "x_new": x_new[None, :],
        "fault": fault,
    }


def _model_and_proba(case):
    """The case's model (its priors do not matter here) and ``pk.predict_proba`` of the new
    point at the single posterior draw ``(beta, theta)``."""
    X_ = case["Z"] * case["scale"]
    knn_ = case["kind"] in ("symmetrised", "equal")
    common = dict(n_classes=case["G"], standardize=case["standardize"], observed=case["y"])
    with pm.Model() as model:
        beta = pm.Uniform("beta", 0, 10)
        if knn_:
            pk.PottsKNN(
                "y",
                X=X_,
                beta=beta,
                k=pm.DiscreteUniform("k", 1, 2),
                neighbours=case["kind"],
                **common,
            )
        else:
            pk.DistanceNN(
                "y",
                X=X_,
                beta=beta,
                sigma=pm.Uniform("sigma", 0, 10),
                kernel=case["kind"],
                **common,
            )
    post = az.from_dict(
        posterior={"beta": [[case["beta"]]], "k" if knn_ else "sigma": [[case["theta"]]]}
    )
    return model, pk.predict_proba(post, case["x_new"], model=model).values[0, 0, 0]


PROPERTY = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kind", MODELS)
@settings(PROPERTY, max_examples=12)
@given(data=st.data())
def test_clean_problems_give_the_exact_answer(kind, data):
    """Small problems with duplicate points, ties and extreme but finite scales and
    parameters: the new point's class probabilities (Cucala et al. 2009, eq. 5) equal its full
    conditional in the joint model of the n + 1 points, by brute force; and the training
    labels' exact probability under the enumeration oracle equals itertools brute force."""
    case = data.draw(problems(kind))
    model, p = _model_and_proba(case)
    event(f"sigma = {case['theta']:g}" if kind in DNN_KINDS else f"k = {case['theta']}")
    G, beta, theta = case["G"], case["beta"], case["theta"]
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    term = model["y"].owner.op.term
    graph = term.graph
    Zs = graph.X
    W = brute_weights(np.vstack([Zs, graph.transform(case["x_new"])]), theta, kind)
    A = W + W.T
    y = case["y"].astype(int)
    h = np.array([A[-1, :-1][y == g].sum() for g in range(G)])
    np.testing.assert_allclose(p, softmax(beta * h), atol=1e-9)
    exact = label_probabilities(term.coupling(theta), beta, G)
    expected = brute_label_probabilities(brute_weights(Zs, theta, kind), beta, G)
    np.testing.assert_allclose(exact, expected, rtol=1e-9, atol=1e-300)
    observed = labeling_index(y, G)[0]
    assert exact[observed] == pytest.approx(expected[observed], rel=1e-9)


@pytest.mark.parametrize("fault", FAULTS)
@settings(PROPERTY, max_examples=3)
@given(data=st.data())
def test_faulty_problems_get_a_clear_error(fault, data):
    """The same problems with one fault each: a ValueError whose message names the argument,
    never a number."""
    case = data.draw(problems(data.draw(st.sampled_from(MODELS)), fault))
    with pytest.raises(ValueError) as err:
        _model_and_proba(case)
    assert re.search(ARGUMENT_WORDS, str(err.value)), str(err.value)
    event(f"refused ({case['kind']})")


@pytest.mark.parametrize("drop_tol", [-0.1, 1.0, 2, float("nan"), True, "small"])
def test_drop_tol_outside_zero_one_is_refused(drop_tol):
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match="drop_tol must be a number in \\[0, 1\\)"):
        pk.DistanceGraph(X, drop_tol=drop_tol)


def test_a_kept_dnn_table_over_the_memory_budget_is_refused():
    X = np.random.default_rng(0).normal(size=(3000, 2))
    with pytest.raises(ValueError, match="working_memory") as err:
        pk.DistanceGraph(X, drop_tol=1e-6, sigma_max=50.0, working_memory=2)
    assert "raise drop_tol" in str(err.value) and "sigma" in str(err.value)
