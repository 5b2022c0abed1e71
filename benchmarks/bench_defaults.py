"""pm.sample() with PyMC's defaults on every data set and model: does it converge? (issue 12)

For each data set x model x seed: ``pm.sample(random_seed=seed, chains=4, cores=2)`` with PyMC's
default draws and tune (1000 + 1000), the docs' priors

* kNN (``PottsKNN``, symmetrised or equal): ``beta ~ U(0, 4)``, ``k ~ U{1..smallest class}``
  (beyond 2,000 points at most 100: ``pk.default_k_max``, since 2026-12-03);
* d-nn (``DistanceNN``, gaussian, exponential or ball): ``beta ~ HalfNormal(5)``,
  ``sigma ~ U(0, 100)``,

and the step pm.sample assigns (``pk.Exchange``), or ``--method moller|pseudo``, or an Exchange with
the keyword arguments of ``--exchange`` (JSON, e.g. ``'{"delayed_acceptance": false}'``). One JSON line
per fit goes to ``--out`` (appended): wall time of ``pm.sample`` (after a two-draw run that
compiles the kernels; the model's PyTensor graph is still compiled inside, about 0.5 s), the
machine's speed just after (``probe_ms``: a fixed Swendsen-Wang workload; ``stream_ms``: its
memory bandwidth, which the d-nn rows from about 1,000 points feel and the probe does not), PyMC's sampling time,
r_hat, ess_bulk and ess_tail of every parameter, ESS per second, acceptance and iterations per
draw. ``--table`` prints the Markdown table of a results file.

    python benchmarks/bench_defaults.py --data ripley pima glass iris wine crabs --seeds 1 2 3
    python benchmarks/bench_defaults.py --data breast_cancer digits blobs10 --seeds 1 2 3
    python benchmarks/bench_defaults.py --data moons circles shells3 class20 --seeds 1 2 3
    python benchmarks/bench_defaults.py --data rare classes8 --seeds 1 2 3
    python benchmarks/bench_defaults.py --data hastie --seeds 1 2
    python benchmarks/bench_defaults.py --data ties wide tiny line scales apart --seeds 1 2
    python benchmarks/bench_defaults.py --data hastie12000 --models symmetrised --seeds 1
    python benchmarks/bench_defaults.py --data gauss3000 --models symmetrised --seeds 1
    python benchmarks/bench_defaults.py --table benchmarks/results/defaults.jsonl
    python benchmarks/bench_defaults.py --bar benchmarks/results/defaults_2026-11-28c.jsonl benchmarks/results/defaults_2026-11-28d.jsonl

``--bar`` reads one or more results files and prints issue 12's verdict per data set and model:
each seed's wall, smallest ESS (bulk and tail), largest R-hat and the machine's probe, and
whether the row passes (R-hat <= 1.01, ESS >= 400, wall within 30 s for kNN and 90 s for d-nn)
at two seeds of three or more; the latest row of each seed counts. ``--matrix`` prints the
same results as one line a data set and one column a model: the seeds converged of those run and
the walls' range, ``*`` where fewer than two seeds also meet the wall (the docs' summary).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

KNN = ("symmetrised", "equal")
DNN = ("gaussian", "exponential", "ball")
SHIPPED = ("ripley", "pima", "glass", "iris", "wine", "crabs")
MADE = {
    # scikit-learn's generators, none of them shipped or tuned to: two curved classes, two
    # nested rings, three nested shells in 3-d, and 3 classes among 20 covariates of which 5 matter
    "moons": ("make_moons", {"n_samples": 600, "noise": 0.3}),
    "circles": ("make_circles", {"n_samples": 500, "noise": 0.15, "factor": 0.5}),
    "shells3": ("make_gaussian_quantiles", {"n_samples": 600, "n_features": 3, "n_classes": 3}),
    "class20": (
        "make_classification",
        {"n_samples": 1000, "n_features": 20, "n_informative": 5, "n_classes": 3},
    ),
    # (2026-12-02) a rare class (9 to 1), and eight classes of 100 points
    "rare": (
        "make_classification",
        {"n_samples": 800, "n_features": 6, "n_informative": 4, "weights": [0.9, 0.1]},
    ),
    "classes8": (
        "make_classification",
        {
            "n_samples": 800,
            "n_features": 8,
            "n_informative": 6,
            "n_classes": 8,
            "n_clusters_per_class": 1,
        },
    ),
    # (2026-12-04) half the labels drawn at random (the fits put k at 13, beta at 1.0-1.5), and
    # four overlapping round clusters in 3-d (on the four-class field's ordering transition)
    "noisy": (
        "make_classification",
        {"n_samples": 600, "n_features": 5, "n_informative": 2, "n_redundant": 0, "flip_y": 0.5},
    ),
    "blobs4": ("make_blobs", {"n_samples": 600, "centers": 4, "n_features": 3, "cluster_std": 2.0}),
    # (2026-12-04) two classes that do not overlap: round clusters 14 sds apart
    "apart": ("make_blobs", {"n_samples": 300, "centers": [[-5.0, -5.0], [5.0, 5.0]]}),
    # (2026-12-06) d-nn terms between 4,000 and 10^4 points: the moons at 5,000
    "moons5k": ("make_moons", {"n_samples": 5000, "noise": 0.3}),
}


def _ties(rng):
    X = rng.integers(0, 5, (400, 2)).astype(float)  # 25 distinct sites
    return X, (rng.random(400) < 1 / (1 + np.exp(X[:, 1] - X[:, 0]))).astype(int)


def _wide(rng):
    from sklearn.datasets import make_classification

    return make_classification(150, 300, n_informative=8, random_state=0)


def _tiny(rng):
    from sklearn.datasets import make_classification

    kwargs = {"n_informative": 3, "n_redundant": 0, "n_classes": 3, "n_clusters_per_class": 1}
    return make_classification(300, 4, weights=[0.6, 0.38, 0.02], random_state=1, **kwargs)


def _line(rng):
    X = rng.normal(size=(300, 1))
    return X, (X[:, 0] + rng.normal(0, 0.7, 300) > 0).astype(int)


def _scales(rng):
    from sklearn.datasets import make_classification

    X, y = make_classification(400, 3, n_informative=3, n_redundant=0, random_state=2)
    return X * np.array([1e6, 1e-3, 1.0]), y


def _likert(rng):
    # survey answers: 4 questions on a 1-5 scale, most answers near the middle (ties
    # everywhere, on a lattice of 625 sites), the class a logistic of two of them
    X = np.clip(np.round(rng.normal(3.0, 1.0, (600, 4))), 1, 5)
    return X, (rng.random(600) < 1 / (1 + np.exp(3.0 - X[:, 0] - X[:, 1] / 2))).astype(int)


ODD = {
    # (2026-12-04) shapes a user brings that the made sets above do not: 400 points on 25
    # distinct sites (ties everywhere), 300 covariates for 150 points, a class of 6 points, one
    # covariate, and covariates on scales 10^9 apart (standardised by the graph)
    "ties": _ties,
    "wide": _wide,
    "tiny": _tiny,
    "line": _line,
    "scales": _scales,
    # (2026-12-06) answers to a survey on a 1-5 scale: ties on a lattice, several distances
    "likert": _likert,
}


def load(name):
    """Covariates and integer labels of a data set (shipped, or from scikit-learn)."""
    import pymc_knn as pk

    if name in ("ripley", "pima"):
        X, y, *_ = getattr(pk.datasets, f"load_{name}")("train")
    elif name in SHIPPED:
        X, y, *_ = getattr(pk.datasets, f"load_{name}")()
    elif name in ("breast_cancer", "digits"):
        from sklearn import datasets

        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    elif name == "blobs10":  # 2,000 points, 10 covariates, 6 overlapping classes
        from sklearn.datasets import make_classification

        X, y = make_classification(
            2000,
            n_features=10,
            n_informative=6,
            n_classes=6,
            n_clusters_per_class=1,
            class_sep=1.0,
            random_state=0,
        )
    elif name[:6] == "hastie" and (name[6:].isdigit() or not name[6:]):
        # Hastie et al.'s 10-d boundary (a chi-squared quantile), 1,000 points or hastieN's N
        from sklearn.datasets import make_hastie_10_2

        X, y = make_hastie_10_2(int(name[6:] or 1000), random_state=0)
        y = y > 0  # its labels are -1 and 1
    elif name in ODD:
        X, y = ODD[name](np.random.default_rng(0))
    elif name in MADE:
        from sklearn import datasets

        maker, kwargs = MADE[name]
        X, y = getattr(datasets, maker)(random_state=0, **kwargs)
    elif name.startswith("gauss") and name[5:].isdigit():  # bench_scale's 2-d classes, n points
        from bench_scale import data

        X, y = data(int(name[5:]), 2)
    else:
        raise ValueError(f"unknown data set {name!r}")
    return np.asarray(X, float), np.asarray(y, np.int64)


def build(X, y, model):
    import pymc as pm

    import pymc_knn as pk

    with pm.Model() as m:
        if model in KNN:
            beta = pm.Uniform("beta", 0, 4)
            k = pm.DiscreteUniform("k", 1, pk.default_k_max(y.size, pk.max_k(y)))
            pk.PottsKNN("y", X=X, beta=beta, k=k, neighbours=model, observed=y)
        else:
            beta = pm.HalfNormal("beta", 5)
            sigma = pm.Uniform("sigma", 0, 100)
            pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel=model, observed=y)
    return m


def point_parser(doc):
    """A parser of ``data model beta theta`` (one point of a row) for the script whose docstring
    is ``doc``; the script adds its own options."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("beta", type=float)
    parser.add_argument("theta", type=float, help="k, or sigma of a d-nn model")
    return parser


def point_field(data, model, theta, seed):
    """What the scripts that draw at one point of a row share: the default step's field, its
    auxiliary settings started at the observed labels, the coupling at ``theta`` (``k`` or
    ``sigma``) and a generator seeded with ``seed``."""
    import pymc_knn as pk
    from pymc_knn.kernels import mcmc

    X, y = load(data)
    with build(X, y, model):
        step = pk.Exchange()
    f = step.field
    labels = step.chain.aux._replace(start=mcmc.START_OBSERVED)
    return f, labels, mcmc.coupling(f, theta, False), np.random.default_rng(seed)


def stationary_energies(f, labels, c, beta, theta, sweeps, rng):
    """The energies of ``sweeps`` consecutive Swendsen-Wang sweeps at ``(beta, theta)`` (``c``:
    ``theta``'s couplings) of one chain after 500 from the observed labels (``labels``:
    :func:`point_field`'s)."""
    from pymc_knn.kernels import mcmc

    z = np.empty(f.y.size, dtype=np.int64)
    mcmc.auxiliary_draw(f, labels._replace(sweeps=500), c, beta, theta, z, rng)
    energy = np.empty(sweeps)
    for t in range(sweeps):
        mcmc._sweeps(f, labels, c, beta, z, 1, rng)
        energy[t] = mcmc._energy(f, c, z)
    return energy


def row_arguments(doc):
    """``(data, model, seed)`` of one row and seed from the command line of a script whose
    docstring is ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("model")
    parser.add_argument("seed", type=int)
    return parser.parse_args()


def probe_ms(sweeps=400):
    """The machine's speed at the time: milliseconds of ``sweeps`` Swendsen-Wang sweeps of
    Ripley's kNN graph (k = 13, beta = 1.45; best of 3), a fixed workload to set walls measured
    on different days or machines against each other (they differ by 2x and more). It runs the
    package's own sweep, so it moves with the code: since the bonds are gathered before their
    unions (2026-11-29) the same machine reads about 3.1 ms where it read 4.7 (compare rows
    across that change by machine and date, not by probe)."""
    import pymc_knn as pk

    X, y, *_ = pk.datasets.load_ripley("train")
    coupling = pk.KNNGraph(X, k_max=13).coupling(13)
    rng = np.random.default_rng(0)
    pk.samplers.swendsen_wang(coupling, 1.45, y, n_classes=2, rng=rng, sweeps=1)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        pk.samplers.swendsen_wang(coupling, 1.45, y, n_classes=2, rng=rng, sweeps=sweeps)
        times.append(time.perf_counter() - t0)
    return round(1e3 * min(times), 2)


def stream_ms(mib=128):
    """The machine's memory bandwidth at the time: milliseconds to sum ``mib`` MiB of float64
    (best of 3), four times the 32 MiB L3 cache of the 2-core AMD EPYC the walls were measured
    on. ``probe_ms`` stays in cache and misses what a d-nn fit from about 1,000 points feels:
    its tables (``n^2`` entries, 28 MB at 1,000 points) are streamed by every coupling and
    energy, so a host whose memory is shared with busy neighbours slows those rows and not the
    probe (class20's gaussian kernel, seed 1: 123.2 s at probe 2.87 ms in one session of
    2026-12-07, 81.5 s at 3.03 ms in the next, the same draws)."""
    a = np.ones(mib * 2**20 // 8)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        a.sum()
        times.append(time.perf_counter() - t0)
    return round(1e3 * min(times), 2)


def fit(data, model, seed, method, chains, cores, exchange=None):
    import arviz as az
    import pymc as pm

    import pymc_knn as pk

    X, y = load(data)
    m = build(X, y, model)
    step = {"exchange": pk.Exchange, "moller": pk.Moller, "pseudo": pk.PseudoLikelihoodMetropolis}[
        method
    ]
    with m:  # compile the kernels first (the forked workers inherit them): not timed
        pm.sample(
            draws=2,
            tune=2,
            chains=1,
            cores=1,
            step=step(),
            progressbar=False,
            compute_convergence_checks=False,
        )
    kwargs = {}
    with m:
        if method != "exchange":
            kwargs["step"] = step()
        elif exchange:
            kwargs["step"] = pk.Exchange(**exchange)
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            idata = pm.sample(
                random_seed=seed,
                chains=chains,
                cores=cores,
                progressbar=False,
                compute_convergence_checks=False,
                **kwargs,
            )
        wall = time.perf_counter() - t0
    names = [v for v in idata.posterior.data_vars]
    summ = az.summary(idata, var_names=names, kind="diagnostics", round_to="none")
    ss = idata.sample_stats
    row = {
        "data": data,
        "n": len(y),
        "p": X.shape[1],
        "G": int(y.max() + 1),
        "model": model,
        "method": method,
        "seed": seed,
        "chains": chains,
        "wall": round(wall, 2),
        "probe_ms": probe_ms(),
        "stream_ms": stream_ms(),
        "sampling_time": round(float(ss.attrs.get("sampling_time", np.nan)), 2),
        "accept": round(float(ss["accept"].mean()), 3),
        # the mean per chain: a draw takes the floor or the ceiling of the chosen mean
        "iterations": [round(float(v), 2) for v in ss["iterations"].mean("draw").values],
        "bridge_sweeps": round(float(ss["bridge_sweeps"].mean()), 1),
        "graph_share": [round(float(v), 3) for v in ss["graph_share"].isel(draw=-1).values],
        "screened": round(float(ss["screened"].mean()), 2),
        "aux_sweeps_all": [
            sorted(set(float(v) for v in ss["aux_sweeps"].sel(chain=c).values))
            for c in ss.chain.values
        ],
        "exchange": exchange or {},
        "aux_sweeps": [float(v) for v in ss["aux_sweeps"].isel(draw=-1).values],
        "mean": {v: round(float(idata.posterior[v].mean()), 4) for v in names},
        # the prior bounds the chains found the posterior against (the steps' warnings stay
        # in PyMC's worker processes)
        "prior_bound": pk.check_prior_bounds(idata, warn=False),
        "warnings": sorted(
            {str(w.message)[:120] for w in caught if issubclass(w.category, UserWarning)}
        ),
    }
    for v in names:
        row[v] = {
            "r_hat": float(summ.loc[v, "r_hat"]),
            "ess_bulk": float(summ.loc[v, "ess_bulk"]),
            "ess_tail": float(summ.loc[v, "ess_tail"]),
        }
    # a parameter that never moves in any chain (k on glass's equal graph) is a point mass:
    # r_hat and ESS are NaN, which is no failure of mixing
    row["constant"] = [v for v in names if np.ptp(idata.posterior[v].values) == 0]
    row["ok"] = all(
        v in row["constant"]
        or (row[v]["r_hat"] <= 1.01 and row[v]["ess_bulk"] >= 400 and row[v]["ess_tail"] >= 400)
        for v in names
    )
    return row


def table(path):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    print(
        "| data (n, p, G) | model | method | seed | wall s | ESS/s (min) | r_hat (max) | "
        "ess_bulk min | ess_tail min | accept | iterations/draw | pass | probe ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        params = [v for v in r["mean"] if v not in r.get("constant", [])]
        rhat = max((r[v]["r_hat"] for v in params), default=np.nan)
        bulk = min((r[v]["ess_bulk"] for v in params), default=np.nan)
        tail = min((r[v]["ess_tail"] for v in params), default=np.nan)
        its = r["iterations"]
        print(
            f"| {r['data']} ({r['n']}, {r['p']}, {r['G']}) | {r['model']} | {r['method']} | "
            f"{r['seed']} | {r['wall']:.1f} | {bulk / r['wall']:.0f} | {rhat:.3f} | "
            f"{bulk:.0f} | {tail:.0f} | {r['accept']:.2f} | {min(its):g}-{max(its):g} | "
            f"{'yes' if r['ok'] else '**no**'} | {r.get('probe_ms', '')} |"
        )


WALL_BAR = {"symmetrised": 30.0, "equal": 30.0, "gaussian": 90.0, "exponential": 90.0, "ball": 90.0}


def _worst(r):
    """(largest R-hat, smallest ESS bulk, smallest ESS tail) of a row's moving parameters."""
    params = [v for v in r["mean"] if v not in r.get("constant", [])]
    return (
        max((r[v]["r_hat"] for v in params), default=np.nan),
        min((r[v]["ess_bulk"] for v in params), default=np.nan),
        min((r[v]["ess_tail"] for v in params), default=np.nan),
    )


def bar(paths):
    """Issue 12's verdict per data set and model over the seeds of ``paths`` (latest row of
    each seed wins): converged (``ok``) and within the wall bar at two seeds or more."""
    groups = {}
    for (data, model, method, seed), r in _rows(paths).items():
        groups.setdefault((data, model, method), {})[seed] = r
    print("| data (n, p, G) | model | seed: wall s (probe ms), R-hat, ESS bulk / tail | met |")
    print("|---|---|---|---|")
    for (data, model, method), by_seed in groups.items():
        cells, passed = [], 0
        for seed in sorted(by_seed):
            r = by_seed[seed]
            rhat, bulk, tail = _worst(r)
            ok = r["ok"] and r["wall"] <= WALL_BAR.get(model, np.inf)
            passed += ok
            mark = "" if ok else (" **no**" if not r["ok"] else " **slow**")
            cells.append(
                f"{seed}: {r['wall']:.0f} ({r.get('probe_ms', 0):.1f}), {rhat:.3f}, "
                f"{bulk:.0f} / {tail:.0f}{mark}"
            )
        r = next(iter(by_seed.values()))
        name = model if method == "exchange" else f"{model}, {method}"
        met = "yes" if passed >= 2 else "**no**" if len(by_seed) >= 2 else "-"
        print(f"| {data} ({r['n']}, {r['p']}, {r['G']}) | {name} | {'; '.join(cells)} | {met} |")


def _rows(paths):
    """The latest row of each (data, model, method, seed) in ``paths``."""
    rows = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows[(r["data"], r["model"], r["method"], r["seed"])] = r
    return rows


def matrix(paths):
    """One line a data set, one column a model (the default step's rows): seeds converged of
    those run, the walls' range, and ``*`` where fewer than two seeds are also within the wall."""
    cells, sizes = {}, {}
    for (data, model, method, _), r in _rows(paths).items():
        if method != "exchange":
            continue
        cells.setdefault((data, model), []).append(r)
        sizes[data] = (r["n"], r["p"], r["G"])
    models = [m for m in KNN + DNN if any(m == key[1] for key in cells)]
    print("| data (points, covariates, classes) | " + " | ".join(models) + " |")
    print("|---|" + "---|" * len(models))
    for data in dict.fromkeys(key[0] for key in cells):
        line = []
        for model in models:
            rs = cells.get((data, model))
            if not rs:
                line.append("-")
                continue
            walls = sorted(r["wall"] for r in rs)
            met = sum(r["ok"] and r["wall"] <= WALL_BAR[model] for r in rs)
            span = f"{walls[0]:.0f}" if len(walls) == 1 else f"{walls[0]:.0f}-{walls[-1]:.0f}"
            mark = "" if met >= min(2, len(rs)) else "*"
            line.append(f"{sum(r['ok'] for r in rs)}/{len(rs)}, {span} s{mark}")
        print(f"| {data} {sizes[data]} | " + " | ".join(line) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=list(SHIPPED))
    parser.add_argument("--models", nargs="+", default=list(KNN + DNN))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--method", default="exchange", choices=["exchange", "moller", "pseudo"])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/results/defaults.jsonl")
    parser.add_argument("--exchange", type=json.loads, default=None, metavar="JSON")
    parser.add_argument("--table", metavar="JSONL")
    parser.add_argument("--bar", nargs="+", metavar="JSONL")
    parser.add_argument("--matrix", nargs="+", metavar="JSONL")
    args = parser.parse_args()
    if args.matrix:
        matrix(args.matrix)
        return
    if args.table:
        table(args.table)
        return
    if args.bar:
        bar(args.bar)
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for data in args.data:
        for model in args.models:
            for seed in args.seeds:
                row = fit(data, model, seed, args.method, args.chains, args.cores, args.exchange)
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                params = list(row["mean"])
                print(
                    f"{data:>13} {model:>11} {args.method} seed {seed}: {row['wall']:6.1f} s  "
                    + "  ".join(
                        f"{v} {row['mean'][v]:.3g} r_hat {row[v]['r_hat']:.3f} "
                        f"ess {row[v]['ess_bulk']:.0f}/{row[v]['ess_tail']:.0f}"
                        for v in params
                    )
                    + f"  acc {row['accept']:.2f} its {row['iterations']} bridge sweeps/draw {row['bridge_sweeps']}"
                    + f" screened/draw {row['screened']}"
                    + ("" if row["ok"] else "  FAIL"),
                    flush=True,
                )


if __name__ == "__main__":
    main()
