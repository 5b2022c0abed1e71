"""Scale of the kNN graph and of prediction (issue 18, items 1, 2 and 4).

Each measurement runs in its own process (peak resident memory, ``ru_maxrss``, after minus
before the call; the process has made the data and a warm-up call on 2,000 points first):

* ``build``: ``pk.KNNGraph(X, k_max=50)`` (default ``algorithm="exact"``) against scikit-learn's
  ``NearestNeighbors(n_neighbors=50, n_jobs=-1).fit(X).kneighbors(X)``, on ``n`` standard normal
  points in ``p`` dimensions (seed 0): n = 1e4 and 1e5 in 2-d and 10-d, and 1e6 in 2-d (its
  tables, 1.2 GB, above the default 1 GiB budget: ``working_memory=2048``);
* ``approximate``: ``algorithm="approximate"`` (pynndescent) at 1e5 in 10-d, and its recall of the
  exact lists;
* ``sample``: the kNN model at ``--sample-n`` points (default 1e5, 2-d, two classes as below,
  ``k ~ U{1..50}``): ``pm.sample(draws=500, tune=500, chains=2)`` with the default step,
  including the model build; R-hat and ESS of beta and k, and the test error on 1e4 new points
  against scikit-learn's best-k kNN; ``--sample-n 1e6 --sample-draws 1000 --sample-chains 1``
  is the 10^6-point row (1000 tuning draws and 1000 draws of one chain), and ``--pseudo`` runs
  either with ``pk.PseudoLikelihoodMetropolis`` (approximate: no auxiliary draws) instead;
* ``korea``: ``pk.korea(X, y)`` with its defaults at 1e5 points (2-d, two classes as below);
* ``predict``: 1e5 new points given 1e5 training points (2-d, two classes ``x0 + noise > 0``;
  the model's default ``k_max``, 100): ``pk.predictive_summary`` with 200 posterior draws (the bar of issue 18) over
  11 distinct k (k in 10..20, beta about 1.4, made up: the fit is not what is measured), and
  the neighbour query alone, ``graph.query(X_new, 15)`` (what ``k = 15`` needs: the 15 nearest
  and the reverse neighbours) and ``graph.query(X_new)`` (every ``k <= 100``), against
  ``KNeighborsClassifier(15).fit(X, y).predict_proba``.

Run::

    python benchmarks/bench_scale.py                  # everything (about 15 minutes on 2 cores)
    python benchmarks/bench_scale.py --only build --n 1e4 1e5 --p 2
    python benchmarks/bench_scale.py --out benchmarks/results/scale.jsonl
    python benchmarks/bench_scale.py --only sample --sample-n 1e6 --sample-draws 1000 \
        --sample-chains 1 --pseudo
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

K = 50
ROOT = Path(__file__).resolve().parents[1]


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(np.int64)
    return X, y


def timed(fn):
    before = peak_mib()
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, peak_mib() - before


def child_build(n, p, what):
    import pymc_knn as pk
    from sklearn.neighbors import NearestNeighbors

    X, _ = data(n, p)
    memory = max(1024, 2 * 24 * n * K / 2**20)
    if what == "sklearn":
        NearestNeighbors(n_neighbors=K, n_jobs=-1).fit(X[:2000]).kneighbors(X[:2000])
        _, seconds, extra = timed(
            lambda: NearestNeighbors(n_neighbors=K, n_jobs=-1).fit(X).kneighbors(X)
        )
        return {"seconds": seconds, "extra_mib": extra}
    algorithm = "approximate" if what == "approximate" else "exact"
    pk.KNNGraph(X[:2000], k_max=K, algorithm=algorithm)
    g, seconds, extra = timed(
        lambda: pk.KNNGraph(X, k_max=K, algorithm=algorithm, working_memory=memory)
    )
    engine = "nndescent" if what == "approximate" else g._search.engine
    out = {"seconds": seconds, "extra_mib": extra, "engine": engine}
    if what == "approximate":
        exact = pk.KNNGraph(X, k_max=K, working_memory=memory)
        hits = sum(np.intersect1d(a, b).size for a, b in zip(g.neighbours, exact.neighbours))
        out["recall"] = hits / (n * K)
    return out


def child_predict(n, p, what, m):
    import arviz as az
    import pymc as pm

    import pymc_knn as pk
    from sklearn.neighbors import KNeighborsClassifier

    X, y = data(n, p)
    X_new, _ = data(m, p, seed=1)
    if what == "sklearn":
        KNeighborsClassifier(15).fit(X[:2000], y[:2000]).predict_proba(X_new[:2000])
        _, seconds, extra = timed(lambda: KNeighborsClassifier(15).fit(X, y).predict_proba(X_new))
        return {"seconds": seconds, "extra_mib": extra}
    with pm.Model() as model:
        pk.PottsKNN(
            "y", X=X, beta=pm.Uniform("beta", 0, 4), k=pm.DiscreteUniform("k", 1, 100), observed=y
        )
    rng = np.random.default_rng(2)
    idata = az.from_dict(
        posterior={
            "beta": 1.4 + 0.1 * rng.standard_normal((4, 50)),
            "k": rng.integers(10, 21, size=(4, 50)),
        }
    )
    graph = model["y"].owner.op.term.graph
    pk.predictive_summary(idata, X_new[:2000], model=model)
    if what == "query15":
        _, seconds, extra = timed(lambda: graph.query(X_new, 15))
    elif what == "query":
        _, seconds, extra = timed(lambda: graph.query(X_new))
    else:
        _, seconds, extra = timed(lambda: pk.predictive_summary(idata, X_new, model=model))
    return {"seconds": seconds, "extra_mib": extra, "engine": graph._search.engine}


def aux_starts(idata):
    """Where each chain's auxiliary draws started after tuning."""
    return [str(v) for v in idata.sample_stats["aux_start"].values[:, -1]]


def live_progress(param):
    """A pm.sample callback that prints every 25th draw of each chain to stderr (the parent
    passes it through): where the time goes, live."""
    start = time.perf_counter()

    def progress(trace, draw):
        if draw.draw_idx % 25 == 0:
            stats = draw.stats[0]
            # a bounded continuous parameter is in the point on its transformed scale
            name = next(v for v in draw.point if v == param or v.startswith(f"{param}_"))
            print(
                f"{time.perf_counter() - start:8.1f} s  chain {draw.chain} draw {draw.draw_idx}"
                f" {'tune' if draw.tuning else 'draw'}  iterations {stats['iterations']}"
                f"  sweeps {stats['aux_sweeps']:.0f} from {stats['aux_start']}"
                f"  accept {stats['accept']:.2f}"
                f"  {name} {float(draw.point[name]):.4g}",
                file=sys.stderr,
                flush=True,
            )

    return progress


def dnn_likelihood(X, y, drop_tol):
    """The d-nn rows' likelihood (gaussian kernel) and priors, in the current ``pm.Model``."""
    import pymc as pm

    import pymc_knn as pk

    return pk.DistanceNN(
        "y",
        X=X,
        beta=pm.Uniform("beta", 0, 4),
        sigma=pm.Uniform("sigma", 0, 2),
        observed=y,
        drop_tol=drop_tol,
        working_memory=3072,
    )


def child_dnn(n, p, what, draws, exchange=None):
    """A d-nn (gaussian) model: build and ``pm.sample(draws, tune=draws, chains=1)`` with the
    default step (or ``pk.Exchange(**exchange)``); ``what`` ``"kept"`` (default drop_tol: a
    kept table beyond 2,000 points, 1e-6 forced below) or ``"dense"`` (drop_tol 0, every
    pair)."""
    import arviz as az
    import pymc as pm

    import pymc_knn as pk

    X, y = data(n, p)
    tol = 0.0 if what == "dense" else 1e-6

    def sample(X, y, draws, callback=None):
        with pm.Model() as model:
            dnn_likelihood(X, y, tol)
            idata = pm.sample(
                draws=draws,
                tune=draws,
                chains=1,
                random_seed=1,
                progressbar=False,
                compute_convergence_checks=False,
                callback=callback,
                **({"step": pk.Exchange(**exchange)} if exchange else {}),
            )
        return model, idata

    sample(X[:300], y[:300], 5)  # warm-up: numba and pytensor compilations
    (model, idata), seconds, extra = timed(lambda: sample(X, y, draws, live_progress("sigma")))
    g = model["y"].owner.op.term.graph
    post = idata.posterior
    ess = az.ess(idata, var_names=["beta", "sigma"])
    return {
        "seconds": seconds,
        "extra_mib": extra,
        "width": g.width,
        "sigma": float(post["sigma"].mean()),
        "beta": float(post["beta"].mean()),
        "dropped": float(idata.sample_stats["dnn_dropped"].max()),
        "ess_beta": float(ess["beta"]),
        "ess_sigma": float(ess["sigma"]),
        "ess_per_s": float(ess["beta"]) / seconds,
        "sweeps": float(idata.sample_stats["aux_sweeps"].mean()),
        "aux_start": aux_starts(idata),
    }


def child_korea(n, p):
    """``pk.korea(X, y)`` with its defaults (k_max 100 beyond 2,000 points)."""
    import pymc_knn as pk

    X, y = data(n, p)
    pk.korea(X[:2000], y[:2000])
    fit, seconds, extra = timed(lambda: pk.korea(X, y))
    post = fit.posterior
    return {"seconds": seconds, "extra_mib": extra, "k": float((post.k * post.p_k).sum())}


def child_sample(n, p, what, draws, exchange=None, seed=1, chains=2):
    """The kNN bar row: ``pm.sample(draws, tune=draws, chains=chains, random_seed=seed)`` with the
    default step (``what="pymc_knn"``), ``pk.Exchange(**exchange)``, or
    ``pk.PseudoLikelihoodMetropolis()`` (``what="pseudo"``) on ``n`` points (k ~ U{1..50},
    beta ~ U(0, 4)), including the model build; its test error on 10^4 new points against
    scikit-learn's best k (1..50, chosen on the test points: a bound)."""
    import arviz as az
    import pymc as pm
    import sklearn

    import pymc_knn as pk
    from sklearn.neighbors import KNeighborsClassifier

    X, y = data(n, p)
    X_new, y_new = data(10_000, p, seed=1)

    def step():
        if what == "pseudo":
            return {"step": pk.PseudoLikelihoodMetropolis()}
        return {"step": pk.Exchange(**exchange)} if exchange else {}

    def sample(X, y, draws, callback=None):
        # 10^6 points' tables (1.2 GB at k_max 50) need more than the default 1 GiB budget
        with pm.Model() as model, sklearn.config_context(working_memory=4096):
            pk.PottsKNN(
                "y", X=X, beta=pm.Uniform("beta", 0, 4), k=pm.DiscreteUniform("k", 1, K), observed=y
            )
            idata = pm.sample(
                draws=draws,
                tune=draws,
                chains=chains,
                cores=2,
                random_seed=seed,
                progressbar=False,
                compute_convergence_checks=False,
                callback=callback,
                **step(),
            )
        return model, idata

    sample(X[:300], y[:300], 5)  # warm-up: numba and pytensor compilations
    (model, idata), seconds, extra = timed(lambda: sample(X, y, draws, live_progress("k")))
    summary = az.summary(idata, var_names=["beta", "k"], kind="diagnostics")
    proba = pk.predict_proba(idata, X_new, model=model, progressbar=False)
    error = float(np.mean(proba.mean(("chain", "draw")).values.argmax(axis=-1) != y_new))
    sk = min(
        np.mean(KNeighborsClassifier(k).fit(X, y).predict(X_new) != y_new)
        for k in range(1, K + 1, 2)
    )
    post = idata.posterior
    return {
        "seconds": seconds,
        "extra_mib": extra,
        "error": error,
        "sklearn_best": float(sk),
        "beta": float(post["beta"].mean()),
        "beta_chains": [round(float(b), 5) for b in post["beta"].mean("draw")],
        "iterations": [round(float(i), 2) for i in idata.sample_stats["iterations"].mean("draw")],
        "k": float(post["k"].mean()),
        "rhat_beta": float(summary.loc["beta", "r_hat"]),
        "ess_beta": float(summary.loc["beta", "ess_bulk"]),
        "rhat_k": float(summary.loc["k", "r_hat"]),
        "ess_k": float(summary.loc["k", "ess_bulk"]),
        "sweeps": float(idata.sample_stats["aux_sweeps"].mean()),
        "aux_start": aux_starts(idata),
        "ess_per_s": float(summary.loc["beta", "ess_bulk"]) / seconds,
        "beta_sd": float(post["beta"].std()),
    }


def run(spec):
    """One measurement in a fresh process."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    live = spec["job"] in ("sample", "dnn")  # progress lines go to our stderr as they come
    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(spec)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=None if live else subprocess.PIPE,
        text=True,
        env=env,
    )
    if out.returncode:
        return {**spec, "error": "see stderr" if live else out.stderr.strip().splitlines()[-1]}
    return {**spec, **json.loads(out.stdout.strip().splitlines()[-1])}


def plan(args):
    specs = []
    if "build" in args.only:
        for n in args.n:
            for p in args.p:
                if n > 10**5 and p > 2:
                    continue  # 1e6 in 10-d: hours for both
                for what in ("pymc_knn", "sklearn"):
                    specs.append({"job": "build", "n": n, "p": p, "what": what})
    if "approximate" in args.only:
        specs.append({"job": "build", "n": 10**5, "p": 10, "what": "approximate"})
    if "dnn" in args.only:
        for n in args.dnn_n:
            for what in ("kept", "dense") if n <= 3000 else ("kept",):
                specs.append(
                    {
                        "job": "dnn",
                        "n": n,
                        "p": 2,
                        "what": what,
                        "draws": 200,
                        "exchange": args.exchange,
                    }
                )
    if "korea" in args.only:
        specs.append({"job": "korea", "n": 10**5, "p": 2, "what": "pymc_knn"})
    if "sample" in args.only:
        specs.append(
            {
                "job": "sample",
                "n": args.sample_n,
                "p": 2,
                "what": "pseudo" if args.pseudo else "pymc_knn",
                "draws": args.sample_draws,
                "chains": args.sample_chains,
                "exchange": args.exchange,
                "seed": args.seed,
            }
        )
    if "predict" in args.only:
        for what in ("pymc_knn", "query15", "query", "sklearn"):
            specs.append({"job": "predict", "n": 10**5, "p": 2, "what": what, "m": 10**5})
    return specs


def report(rows):
    """A markdown table; ``x sklearn``: time over scikit-learn's in the same job, n and p."""
    base = {
        (r["job"], r["n"], r["p"]): r.get("seconds")
        for r in rows
        if r["what"] in ("sklearn", "dense")
    }
    print("| job | n | p | what | seconds | x sklearn | peak extra MiB | note |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        note = ", ".join(
            f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in r.items()
            if k
            in (
                "engine",
                "recall",
                "width",
                "sigma",
                "beta",
                "dropped",
                "k",
                "error",
                "sklearn_best",
                "rhat_beta",
                "ess_beta",
                "rhat_k",
                "ess_k",
                "ess_sigma",
                "ess_per_s",
                "sweeps",
                "beta_sd",
            )
        )
        ref = base.get((r["job"], r["n"], r["p"]))
        ratio = f"{r['seconds'] / ref:.2f}" if ref and "seconds" in r else ""
        # d-nn rows: the ratio is to the dense model (drop_tol = 0) at the same n
        print(
            f"| {r['job']} | {r['n']:.0e} | {r['p']} | {r['what']} | "
            f"{r.get('seconds', float('nan')):.2f} | {ratio} | "
            f"{r.get('extra_mib', float('nan')):.0f} | {note} |",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument(
        "--only",
        nargs="+",
        default=["build", "approximate", "predict"],
        choices=["build", "approximate", "predict", "dnn", "sample", "korea"],
    )
    parser.add_argument("--sample-n", type=lambda s: int(float(s)), default=10**5)
    parser.add_argument(
        "--dnn-n", nargs="+", type=lambda s: int(float(s)), default=[1000, 10_000, 30_000]
    )
    parser.add_argument(
        "--n", nargs="+", type=lambda s: int(float(s)), default=[10**4, 10**5, 10**6]
    )
    parser.add_argument("--p", nargs="+", type=int, default=[2, 10])
    parser.add_argument(
        "--exchange",
        type=json.loads,
        default=None,
        metavar="JSON",
        help="the sample and d-nn rows' step: pk.Exchange with these keyword arguments",
    )
    parser.add_argument("--seed", type=int, default=1, help="the sample row's random_seed")
    parser.add_argument(
        "--sample-draws", type=int, default=500, help="the sample row's draws (and tuning draws)"
    )
    parser.add_argument("--sample-chains", type=int, default=2, help="the sample row's chains")
    parser.add_argument(
        "--pseudo",
        action="store_true",
        help="the sample row's step: pk.PseudoLikelihoodMetropolis (approximate) instead",
    )
    parser.add_argument("--out", help="append the results to this JSON-lines file")
    args = parser.parse_args()
    if args.child:
        spec = json.loads(args.child)
        if spec["job"] == "build":
            print(json.dumps(child_build(spec["n"], spec["p"], spec["what"])))
        elif spec["job"] == "dnn":
            result = child_dnn(
                spec["n"], spec["p"], spec["what"], spec["draws"], spec.get("exchange")
            )
            print(json.dumps(result))
        elif spec["job"] == "korea":
            print(json.dumps(child_korea(spec["n"], spec["p"])))
        elif spec["job"] == "sample":
            result = child_sample(
                spec["n"],
                spec["p"],
                spec["what"],
                spec["draws"],
                spec.get("exchange"),
                spec.get("seed", 1),
                spec.get("chains", 2),
            )
            print(json.dumps(result))
        else:
            print(json.dumps(child_predict(spec["n"], spec["p"], spec["what"], spec["m"])))
        return
    rows = []
    for spec in plan(args):
        rows.append(run(spec))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(rows[-1]) + "\n")
    report(rows)


if __name__ == "__main__":
    main()
