"""Command line of pymc-knn.

``python -m pymc_knn demo``: the Bayesian kNN fit of Ripley's data (the README's main job).
``python -m pymc_knn fit data.csv --target label``: the same model on your own CSV file.
The installed console script ``pymc-knn`` takes the same commands (``pymc-knn demo``).
"""

from __future__ import annotations

import argparse
import os
import sys


def _at_least(minimum):
    def count(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below {minimum}")
        return value

    count.__name__ = f"integer >= {minimum}"
    return count


def _sampling_args(p, draws=1000, tune=1000):
    p.add_argument(
        "--draws", type=_at_least(1), default=draws, help="draws per chain (%(default)s)"
    )
    p.add_argument(
        "--tune", type=_at_least(0), default=tune, help="tuning draws per chain (%(default)s)"
    )
    p.add_argument("--chains", type=_at_least(1), default=4, help="(%(default)s)")
    p.add_argument("--cores", type=_at_least(1), default=2, help="(%(default)s)")


def main(argv=None) -> int:
    # the `pymc-knn` console script and `python -m pymc_knn` both land here
    script = os.path.basename(sys.argv[0]).startswith("pymc-knn")
    prog = "pymc-knn" if script else "python -m pymc_knn"
    parser = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="fit Ripley's data with the exchange algorithm")
    demo.add_argument("--out", default="demo-output", help="folder for the PNGs (%(default)s)")
    demo.add_argument("--seed", type=int, default=2009)
    _sampling_args(demo)
    fit = sub.add_parser("fit", help="fit the probabilistic kNN to a CSV file")
    fit.add_argument("csv", help="CSV file with a header row")
    fit.add_argument("--target", required=True, help="the column holding the classes")
    fit.add_argument("--out", default="fit-output", help="folder for the PNGs (%(default)s)")
    fit.add_argument("--seed", type=int, default=None)
    fit.add_argument("--raw", action="store_true", help="do not standardise the covariates")
    fit.add_argument(
        "--beta-upper",
        type=float,
        default=4.0,
        help="upper bound of the uniform prior on beta (%(default)s)",
    )
    _sampling_args(fit)
    args = parser.parse_args(argv)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        parser.error(f"--out {args.out!r} is a file; give a folder for the PNGs")

    from . import jobs

    sampling = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "cores": args.cores}
    if args.command == "demo":
        jobs.ripley_demo(args.out, args.seed, **sampling)
        return 0
    try:
        jobs.fit_csv(
            args.csv,
            args.target,
            args.out,
            args.seed,
            standardize=not args.raw,
            beta_upper=args.beta_upper,
            **sampling,
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
