"""Would bridging a d-nn jump's exchange ratio help? (issue 12, the ball kernel)

The exchange ratio of a move ``(beta0, sigma0) -> (beta1, sigma1)`` carries the auxiliary term
``beta0 E0(z) - beta1 E1(z)``, ``z ~ f(. | beta1, sigma1)``; between distant ``sigma`` its noise
is several nats and the move is seldom accepted. Bridging (Murray et al. 2006, section 5; what
the kNN ``k`` moves do) moves ``z`` by one Swendsen-Wang sweep through each intermediate field
``q_t ∝ exp(t beta0 E0 + (1 - t) beta1 E1)``. For a d-nn term the kernel falls with distance,
so both ``sigma`` order a row's neighbours alike and ``q_t``'s running sums along each row are
``t beta0 C0 + (1 - t) beta1 C1``: a bridging field is a convex combination of the two tables.

This script measures, for one such move (default: glass's ball kernel, from the far tail of
``sigma``'s posterior at 1.93 to its bulk at 1.26, beta at the posterior's mean given each),
the auxiliary term's mean and sd and the mean acceptance ``E[min(1, r)]`` (prior and proposal
terms left out) against the number of fields; ``z`` from a long chain at ``(beta1, sigma1)``
(``--burn`` sweeps, then ``--thin`` between draws). A prototype in NumPy around the package's
Swendsen-Wang kernel, not the step's code::

    PYTHONPATH=. python benchmarks/bench_dnn_bridge.py
    PYTHONPATH=. python benchmarks/bench_dnn_bridge.py crabs ball --start 2.2 0.45 --end 2.41 0.31
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import pymc_knn as pk
from pymc_knn.kernels import mcmc
from pymc_knn.kernels.swendsen_wang import swendsen_wang_rows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import build, load


def table(f, sigma):
    """Copies of the running sums, row ends and floors of the field's couplings at ``sigma``."""
    c = mcmc.coupling(f, sigma, False)
    return c[7].copy(), c[10].copy(), c[9].copy(), float(c[8])


def energy(f, C, ends, z):
    """``E(z)`` from a table's running sums (each directed entry once, class-weighted)."""
    w = np.diff(C, axis=1, prepend=0.0)
    kept = np.arange(C.shape[1])[None, :] < ends[:, None]
    same = z[f.order] == z[:, None]
    return float((w * kept * same * f.class_weights[z][:, None]).sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", default="glass")
    parser.add_argument("model", nargs="?", default="ball")
    parser.add_argument("--start", nargs=2, type=float, default=(1.6256, 1.9285))
    parser.add_argument("--end", nargs=2, type=float, default=(1.6557, 1.2570))
    parser.add_argument("--fields", nargs="+", type=int, default=[0, 2, 4, 8, 16])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--burn", type=int, default=300)
    parser.add_argument("--thin", type=int, default=25)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        f = pk.Exchange().field
    (b0, s0), (b1, s1) = args.start, args.end
    C0, e0, fl0, ey0 = table(f, s0)
    C1, e1, fl1, ey1 = table(f, s1)
    if not (np.array_equal(e0, e1) and fl0.max() == 0 and fl1.max() == 0):
        raise SystemExit("a kept table (rows of different lengths or a floor): not prototyped")
    a, rng = f.class_weights, np.random.default_rng(0)
    data = b1 * ey1 - b0 * ey0
    print(f"{args.data} {args.model}: ({b0}, {s0}) -> ({b1}, {s1}), data term {data:.2f}")
    print("| fields | aux term: mean | sd | E[min(1, r)] |")
    print("|---|---|---|---|")
    for n_bridge in args.fields:
        z = f.y.copy()
        swendsen_wang_rows(f.order, C1, e1, z, b1, a, args.burn, rng, fl1)
        terms = np.empty(args.draws)
        for i in range(args.draws):
            swendsen_wang_rows(f.order, C1, e1, z, b1, a, args.thin, rng, fl1)
            w, total = z.copy(), 0.0
            for s in range(n_bridge + 1):
                total += b0 * energy(f, C0, e0, w) - b1 * energy(f, C1, e1, w)
                if s == n_bridge:
                    break
                t = (s + 1.0) / (n_bridge + 1.0)
                mixed = t * b0 * C0 + (1 - t) * b1 * C1
                swendsen_wang_rows(f.order, mixed, e0, w, 1.0, a, 1, rng, fl0)
            terms[i] = total / (n_bridge + 1)
        accept = np.minimum(1.0, np.exp(data + terms)).mean()
        print(f"| {n_bridge} | {terms.mean():.2f} | {terms.std():.2f} | {accept:.3f} |", flush=True)


if __name__ == "__main__":
    main()
