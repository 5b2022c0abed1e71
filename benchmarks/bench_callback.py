"""The Python-callback route: ``pm.sample`` time for two models in a row.

When PyTensor's numba backend cannot compile a model's tractable part, the step calls a
C-compiled function back from numba (``TractableLogp._use_python``). The kernel must not be
compiled again for each such model: the second model's time is the check.

    PYTHONPATH=benchmarks:. .venv/bin/python benchmarks/bench_callback.py
"""

import time

import numpy as np
import pymc as pm

import pymc_knn as pk
from pymc_knn.kernels import mcmc


def main():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(8, 2))
    y = np.array([0, 1] * 4)
    for model_number in (1, 2):
        with pm.Model():
            beta = pm.Uniform("beta", 0, 3)
            k = pm.DiscreteUniform("k", 1, 4)
            pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
            step = pk.Exchange()
            step.tractable._use_python()
            start = time.perf_counter()
            idata = pm.sample(
                draws=30,
                tune=30,
                chains=1,
                step=step,
                random_seed=1,
                progressbar=False,
                compute_convergence_checks=False,
            )
            seconds = time.perf_counter() - start
        print(
            f"model {model_number}: pm.sample {seconds:.1f} s, mean beta "
            f"{float(idata.posterior.beta.mean()):.6f}, kernel signatures "
            f"{len(mcmc.run_iterations.signatures)}"
        )


if __name__ == "__main__":
    main()
