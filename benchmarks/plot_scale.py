"""Log-log plot of the graph build rows of ``benchmarks/results/scale.jsonl`` (issue 18, item 7).

Time and peak extra memory of ``pk.KNNGraph(X, k_max=50)`` against scikit-learn's
``NearestNeighbors(n_neighbors=50).kneighbors`` over ``n``, for each number of covariates, as
measured by ``bench_scale.py --out benchmarks/results/scale.jsonl`` (each row in its own process).

Run::

    python benchmarks/plot_scale.py [results.jsonl] [figure.png]
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parents[1]
STYLE = {
    "pymc_knn": ("C0", "pymc-knn (exact)"),
    "sklearn": ("C1", "scikit-learn"),
    "approximate": ("C2", "pymc-knn (NN-descent)"),
}


def main(
    results=ROOT / "benchmarks/results/scale.jsonl", out=ROOT / "docs/figures/scaling_build.png"
):
    rows = [json.loads(line) for line in Path(results).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["job"] == "build" and "seconds" in r]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
    for what, (colour, label) in STYLE.items():
        for p, marker in ((2, "o"), (10, "s")):
            pts = sorted(
                (r["n"], r["seconds"], r["extra_mib"])
                for r in rows
                if r["what"] == what and r["p"] == p
            )
            if not pts:
                continue
            n, seconds, mib = zip(*pts)
            kw = {"color": colour, "marker": marker, "label": f"{label}, {p}-d"}
            axes[0].plot(n, seconds, **kw)
            axes[1].plot(n, mib, **kw)
    for ax, name in zip(axes, ("seconds", "peak extra memory (MiB)")):
        ax.set(xscale="log", yscale="log", xlabel="training points n", ylabel=name)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_title("graph build, k_max = 50")
    axes[1].legend(fontsize=8)
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
