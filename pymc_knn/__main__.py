"""Command line: ``python -m pymc_knn demo [--out DIR]``."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pymc_knn", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="Potts fields on Ripley's kNN graph: the auxiliary samplers")
    demo.add_argument("--out", default="demo-output", help="folder for the PNG (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=2009)
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        run_demo(args.out, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
