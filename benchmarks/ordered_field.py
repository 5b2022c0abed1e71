"""What draws of the Potts field look like at one point ``(beta, theta)`` of a row's model, against
the observed labels, and how fast Swendsen-Wang decorrelates them there.

One chain of the default step's auxiliary sampler, ``--sweeps`` sweeps from the observed labels
(the first tenth dropped), at ``beta`` and ``k`` (or ``sigma``). Printed: the energy's mean, sd
and integrated time in sweeps (ArviZ's ESS), and, over the observed classes, the share of the
sweeps in which their points' majority labels are 1, 2, ... distinct labels, the largest label's
share of all points, and the mean share of a class's points that carry its majority label
(each with its integrated time). Where the posterior's beta orders the field, draws put one label
on most points whatever the classes, and the energy's time is what each auxiliary draw's sweeps
must cover (benchmarks/README.md, "what blobs4's auxiliary draws face").

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/ordered_field.py blobs4 equal 3.12 9
"""

from __future__ import annotations


import arviz as az
import numpy as np

import pymc_knn as pk
from bench_defaults import build, load, point_parser
from pymc_knn.kernels import mcmc


def integrated_time(x):
    """Sweeps per effective draw of the series ``x``."""
    return x.size / float(az.ess(x[None, :]))


def main():
    parser = point_parser(__doc__)
    parser.add_argument("--sweeps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    X, y = load(args.data)
    with build(X, y, args.model):
        step = pk.Exchange()
    f = step.field
    G = f.class_weights.size
    c = mcmc.coupling(f, args.theta, False)
    rng = np.random.default_rng(args.seed)
    z = f.y.astype(np.int64).copy()
    classes = [f.y == g for g in range(G)]
    energy, distinct, largest, purity = (np.empty(args.sweeps) for _ in range(4))
    for t in range(args.sweeps):
        mcmc._sweeps(f, step.aux, c, args.beta, z, 1, rng)
        energy[t] = mcmc._energy(f, c, z)
        counts = [np.bincount(z[m], minlength=G) for m in classes]
        distinct[t] = len({int(n.argmax()) for n in counts})
        largest[t] = np.bincount(z, minlength=G).max() / z.size
        purity[t] = np.mean([n.max() / n.sum() for n in counts])
    keep = slice(args.sweeps // 10, None)
    observed = mcmc._energy(f, c, f.y.astype(np.int64))
    print(
        f"{args.data} {args.model} at beta {args.beta:g}, theta {args.theta:g} ({f.y.size} points, "
        f"{G} classes): E(y) {observed:.1f}"
    )
    for name, x in (("energy", energy), ("largest label's share", largest)):
        x = x[keep]
        print(f"{name:<26} mean {x.mean():8.3f}  sd {x.std():7.3f}  time {integrated_time(x):5.1f}")
    x = purity[keep]
    print(
        f"{'majority share of a class':<26} mean {x.mean():8.3f}  sd {x.std():7.3f}  "
        f"time {integrated_time(x):5.1f} (observed: 1)"
    )
    share = np.bincount(distinct[keep].astype(int), minlength=G + 1)[1:] / distinct[keep].size
    print(
        "classes' majority labels, distinct: "
        + ", ".join(f"{j + 1}: {s:.3f}" for j, s in enumerate(share))
        + f" of the sweeps (observed: {G})"
    )


if __name__ == "__main__":
    main()
