"""KOREA (``pk.korea``) on Ripley's data: the approximation, and prediction of a 200 x 200 grid.

Times, after a warm-up call that compiles the numba kernels and the prior's PyTensor function:

* ``pk.korea`` on Ripley's 250 training points (raw covariates, k = 1..125) for each neighbour
  rule;
* ``Korea.predictive_summary`` of the 1,000 test points and of a 200 x 200 grid (the mixture over
  every k and 9 Gauss-Hermite nodes of beta each), with the test error.

Run::

    python benchmarks/bench_korea.py
"""

import time

import numpy as np

import pymc_knn as pk


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, min(times)


def main() -> None:
    X, y, *_ = pk.datasets.load_ripley("train")
    X_test, y_test, *_ = pk.datasets.load_ripley("test")
    pk.korea(X[::6], y[::6]).predictive_summary(X_test[:5])  # compile
    lo, hi = X.min(0), X.max(0)
    g = np.linspace(0, 1, 200)
    grid = np.column_stack(
        [a.ravel() for a in np.meshgrid(lo[0] + g * (hi[0] - lo[0]), lo[1] + g * (hi[1] - lo[1]))]
    )
    print(
        "| rule | pk.korea | summary, 1,000 test points | summary, 200 x 200 grid | "
        "test error | K* | E(k given y) |"
    )
    print("|---|---|---|---|---|---|---|")
    for rule in ("symmetrised", "equal", "asymmetric"):
        approx, t_fit = best_of(lambda: pk.korea(X, y, neighbours=rule, standardize=False))
        summary, t_test = best_of(lambda: approx.predictive_summary(X_test))
        _, t_grid = best_of(lambda: approx.predictive_summary(grid), repeat=1)
        error = np.mean(summary["bayes_class"].values != y_test)
        post = approx.posterior
        print(
            f"| {rule} | {t_fit:.3f} s | {t_test:.3f} s | {t_grid:.2f} s | {error:.3f} | "
            f"{approx.k_map} | {float((post.k * post.p_k).sum()):.1f} |"
        )


if __name__ == "__main__":
    main()
