"""Where a first ``pm.sample`` on a machine spends its numba compilation, function by function.

Run it on an empty numba cache (the first run of a user, or CI's clean clone)::

    rm -rf /tmp/nbcache && NUMBA_CACHE_DIR=/tmp/nbcache PYTHONPATH=benchmarks \\
        .venv/bin/python benchmarks/first_compile.py [--model gaussian]

It builds a Ripley model (a symmetrised kNN term, or a d-nn term with ``--model``), draws 2 + 2
iterations of one chain with the default step, and prints the wall of that ``pm.sample``, the
pipeline times of the step's kernel (``run_iterations``: type inference, which compiles its
callees, and lowering) and each function's own compilation seconds, callees' excluded (numba's
event API; a callee is compiled once per signature, then linked into its callers, whose own
seconds include optimising the linked code again).
"""

from __future__ import annotations

import argparse
import time
import warnings

from numba.core import event

from numba_compile_times import CompileTimer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="symmetrised", choices=["symmetrised", "gaussian"])
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    timer = CompileTimer()
    event.register("numba:compile", timer)
    warnings.simplefilter("ignore")
    import pymc as pm

    import pymc_knn as pk
    from pymc_knn.kernels import mcmc

    X, y, *_ = pk.datasets.load_ripley("train")
    with pm.Model():
        beta = pm.Uniform("beta", 0, 4)
        if args.model == "symmetrised":
            pk.PottsKNN("y", X=X, beta=beta, k=pm.DiscreteUniform("k", 1, 20), observed=y)
        else:
            sigma = pm.Uniform("sigma", 0, 100)
            pk.DistanceNN("y", X=X, beta=beta, sigma=sigma, kernel="gaussian", observed=y)
        t0 = time.perf_counter()
        pm.sample(draws=2, tune=2, chains=1, cores=1, progressbar=False, random_seed=1)
        wall = time.perf_counter() - t0
    total = sum(timer.own.values())
    print(f"first pm.sample: {wall:.1f} s; compilation, the model build's included: {total:.1f} s")
    meta = mcmc.run_iterations.get_metadata(mcmc.run_iterations.signatures[0]) or {}  # cached: none
    for pipeline, passes in meta.get("pipeline_times", {}).items():
        top = sorted(((v.init + v.run + v.finalize, k) for k, v in passes.items()), reverse=True)
        print(f"run_iterations, {pipeline}: " + ", ".join(f"{k} {t:.1f} s" for t, k in top[:3]))
    for name, seconds in timer.own.most_common(args.top):
        print(f"{seconds:6.1f} s  {name}")


if __name__ == "__main__":
    main()
