"""Time of a d-nn coupling on a kept table cut at drop_tol (5,000 2-d points, the default
drop_tol beyond 2,000 points): the path of `structure._cut_weights`.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_cut_coupling.py
"""

import time

import numpy as np
import pymc as pm

import pymc_knn as pk
from pymc_knn.kernels import mcmc

rng = np.random.default_rng(0)
X = rng.standard_normal((5000, 2))
y = (X[:, 0] + 0.5 * rng.standard_normal(5000) > 0).astype(int)
with pm.Model():
    b = pm.Uniform("beta", 0, 4)
    s = pm.Uniform("sigma", 0.05, 0.5)
    pk.DistanceNN("y", X=X, beta=b, sigma=s, observed=y)
    step = pk.Exchange()
f = step.field
n = f.y.size
cum = np.empty(f.sorted_sq.shape)
floor = np.empty(n)
ends = np.empty(n, np.int64)
for sig in (0.1, 0.2):
    mcmc.coupling_into(f, sig, False, cum, floor, ends)
    best = np.inf
    for _ in range(7):
        t0 = time.perf_counter()
        [mcmc.coupling_into(f, sig, False, cum, floor, ends) for _ in range(10)]
        best = min(best, (time.perf_counter() - t0) / 10)
    print(
        f"drop_tol {f.drop_tol} width {f.sorted_sq.shape[1]} sigma {sig}: cut mean {ends.mean():.0f}, coupling {best * 1e3:.3f} ms"
    )
