"""Pavlenko and Rios (2017), Table 1, synthetic columns: graphical BMA against 12 classifiers.

Part of the reproduction suite (``benchmarks/reproduce.py --only pavlenko``); also runs alone::

    PYTHONPATH=. python benchmarks/pavlenko2017.py [--quick] [--replicates 10]

Per scenario and replicate (section 5.1): p = 50; each class has its own random decomposable
graph, drawn by the Christmas-tree algorithm with alpha = beta = 0.5 as in the paper (trilearn's
``junction_tree.sample``; ``christmas_tree_graph`` below), and a G-intraclass covariance (variance
1, correlation 0.5 on the edges, precision zero off the graph); class means 0 and ``Delta = 1e-4``
apart (scenario A: two classes, means 0 and Delta * 1; B: three classes, means 0 and Delta on the
odd or the even coordinates); ``n`` training and 50 test points per class. The classifiers: the
Bayes predictive with the complete graph, BMA with each class's true graph, BMA by particle Gibbs
(50 particles, 2,000 sweeps, a quarter burnt), all with nu = 1, Phi = I, delta = 1 and the class
mean as mu; scikit-learn's classifiers with the settings of its classifier comparison,
standardised covariates; and this package's pkNN (``BayesianKNNClassifier`` with its defaults:
exchange, 2 chains of 1000 draws after 1000 tuning draws on 2 cores; ``--pknn-draws N`` changes
the draws, 0 leaves the row out). On these 600 points in 50 dimensions one such fit takes about
10 s (it took 827 s before the step's tuning of issue 12 settled).

The true graphs matter: the Christmas-tree algorithm joins a new node to the union of several
cliques (a random subtree of the junction tree), about 120-140 edges at p = 50, where this
package's one-clique expansion kernel gives about 32. With those sparse graphs (``--graphs
expansion``, the previous default) the classes' covariances differ less and scenario B's
complete-graph rate was 0.519 against the paper's 0.613.

The particle Gibbs sampler runs the paper's Christmas-tree kernel over junction trees (the
estimator's default); ``--kernel simplicial`` runs this package's node-by-node kernel
(docs/graphical.md). ``--scenarios`` picks columns and ``--bma-only``
leaves out the scikit-learn classifiers (to compare the kernels quickly). The walking data set of the
paper's first column cannot be had offline and is not reproduced.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

# 004 Table 1, synthetic columns: correct classification rate (standard error)
PAPER = {
    "Bayes pred (complete graph)": ((0.888, 0.041), (0.725, 0.040), (0.613, 0.052)),
    "BMA (true graph)": ((0.948, 0.015), (0.904, 0.037), (0.877, 0.029)),
    "BMA (particle Gibbs)": ((0.933, 0.025), (0.816, 0.047), (0.788, 0.038)),
    "3-NN": ((0.716, 0.054), (0.670, 0.040), (0.558, 0.026)),
    "Gauss proc": ((0.700, 0.047), (0.652, 0.029), (0.538, 0.028)),
    "Dec tree (5)": ((0.548, 0.050), (0.543, 0.063), (0.373, 0.047)),
    "Naive Bayes": ((0.480, 0.026), (0.504, 0.042), (0.340, 0.036)),
    "Linear SVM": ((0.471, 0.041), (0.487, 0.032), (0.358, 0.050)),
    "Neural net": ((0.825, 0.047), (0.631, 0.050), (0.521, 0.036)),
    "AdaBoost": ((0.488, 0.053), (0.496, 0.036), (0.331, 0.036)),
    "LDA": ((0.482, 0.031), (0.490, 0.038), (0.348, 0.047)),
    "QDA": ((0.889, 0.041), (0.535, 0.032), (0.391, 0.022)),
    "Rand forest": ((0.541, 0.055), (0.526, 0.057), (0.348, 0.040)),
}
SCENARIOS = (("A", 2, 300), ("A", 2, 51), ("B", 3, 51))
P, N_TEST, DELTA, SIGMA2, RHO = 50, 50, 1e-4, 1.0, 0.5


def random_graph(p: int, rng, alpha: float = 0.5, beta: float = 0.5) -> np.ndarray:
    """A decomposable graph drawn node by node by the expansion kernel (docs/graphical.md).

    Sparser than the paper's Christmas-tree graphs (about 32 edges at p = 50): ``--graphs
    expansion`` only, to compare."""
    from pymc_knn.graphical._bits import nodes_of

    order = rng.permutation(p)
    A = np.zeros((p, p), bool)
    cliques = [1 << int(order[0])]
    for v in order[1:]:
        nb = 0
        if rng.random() < beta:
            members = nodes_of(cliques[rng.integers(len(cliques))])
            while nb == 0:
                nb = sum(1 << j for j in members if rng.random() < alpha)
        if nb in cliques:
            cliques[cliques.index(nb)] = nb | 1 << int(v)
        else:
            cliques.append(nb | 1 << int(v))
        for j in nodes_of(nb):
            A[v, j] = A[j, v] = True
    return A


def _join_components(comps, rng) -> list:
    """A uniform random tree joining junction-tree components by empty separators.

    Wilson's loop-erased random walk over the components with edge weight ``|c_i| |c_j|`` and
    uniform clique endpoints: every junction tree of the forest's union is equally likely
    (trilearn rebuilds the empty-separator edges the same way after adding an isolated node).
    """
    q = len(comps)
    if q < 2:
        return []
    sizes = np.array([len(c) for c in comps], float)
    in_tree = np.zeros(q, bool)
    in_tree[rng.integers(q)] = True
    nxt = np.full(q, -1)
    for i in range(q):
        u = i
        while not in_tree[u]:
            w = sizes.copy()
            w[u] = 0.0
            nxt[u] = rng.choice(q, p=w / w.sum())
            u = nxt[u]
        u = i
        while not in_tree[u]:
            in_tree[u] = True
            u = nxt[u]
    return [
        (comps[i][rng.integers(len(comps[i]))], comps[nxt[i]][rng.integers(len(comps[nxt[i]]))])
        for i in range(q)
        if nxt[i] >= 0
    ]


def _components(tree) -> list:
    seen, comps = set(), []
    for a in tree:
        if a in seen:
            continue
        comp, stack = [], [a]
        seen.add(a)
        while stack:
            x = stack.pop()
            comp.append(x)
            for y in tree[x]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        comps.append(comp)
    return comps


def christmas_tree_graph(p: int, rng, alpha: float = 0.5, beta: float = 0.5) -> np.ndarray:
    """A decomposable graph drawn by the Christmas-tree algorithm (Rios et al. 2016), as 004
    section 5.1 generates its true graphs (trilearn's ``junction_tree.sample(p, 0.5, 0.5)``).

    Nodes 0, ..., p - 1 join a junction tree (cliques as frozensets, tree as an adjacency
    dict) one at a time. With probability ``1 - beta`` the new node is isolated (a new clique
    joined by an empty separator, the empty-separator edges then redrawn uniformly); otherwise
    a random subtree is grown from a uniform clique, each neighbour kept with probability
    ``alpha``, and in every clique of the subtree the new node joins the nodes shared with its
    subtree neighbours plus a random half of the rest (at least one of them when the clique's
    shared nodes equal one separator, or the subtree is a single clique); the new cliques
    replicate the subtree and take over a random half of the old cliques' eligible neighbours.
    The new node thus joins the union of several cliques: at p = 50 these graphs have about
    120-140 edges (means 123 and 139 in two batches of 30 draws, sd 36-37), about four times the
    32 of the one-clique expansion kernel.
    """
    tree = {frozenset([0]): set()}
    A = np.zeros((p, p), bool)
    for v in range(1, p):
        cliques = list(tree)
        if rng.random() >= beta:
            tree[frozenset([v])] = set()
            for a in list(tree):
                for b in [b for b in tree[a] if not (a & b)]:
                    tree[a].discard(b)
                    tree[b].discard(a)
            for a, b in _join_components(_components(tree), rng):
                tree[a].add(b)
                tree[b].add(a)
            continue
        start = cliques[rng.integers(len(cliques))]
        sub, adj, queue, visited = [], {start: []}, [start], set()
        while queue:
            node = queue.pop(0)
            visited.add(node)
            sub.append(node)
            for nb in list(tree[node]):
                keep = rng.random() < alpha
                if keep and nb not in visited and nb not in adj:
                    adj[node].append(nb)
                    adj[nb] = [node]
                    queue.append(nb)
        in_sub = set(sub)
        shared = {c: set().union(*[c & nb for nb in adj[c]]) for c in sub}
        new = {}
        for c in sub:
            rest = sorted(c - shared[c])
            at_least_one = len(sub) == 1 or any(shared[c] == (nb & c) for nb in adj[c])
            if at_least_one and rest:
                i0 = rng.integers(len(rest))
                chosen = {rest[i0]} | {
                    x for j, x in enumerate(rest) if j != i0 and rng.random() < 0.5
                }
            else:
                chosen = {x for x in rest if rng.random() < 0.5}
            new[c] = frozenset(chosen | shared[c] | {v})
        sub_edges = [(a, b) for a in sub for b in adj[a] if b in in_sub]
        movable = {c: {nb for nb in tree[c] if nb & c <= new[c] and nb not in in_sub} for c in sub}
        for c in sub:
            tree.setdefault(new[c], set())
        for a, b in sub_edges:
            tree[new[a]].add(new[b])
            tree[new[b]].add(new[a])
        for c in sub:
            if new[c] - {v} == c:  # the new clique swallows c
                for nb in tree.pop(c):
                    tree[nb].discard(c)
                    if nb not in in_sub:
                        tree[new[c]].add(nb)
                        tree[nb].add(new[c])
            else:
                tree[new[c]].add(c)
                tree[c].add(new[c])
                for nb in movable[c]:
                    if rng.random() < 0.5:
                        tree[new[c]].add(nb)
                        tree[nb].add(new[c])
                        tree[c].discard(nb)
                        tree[nb].discard(c)
        for a, b in sub_edges:
            tree.get(a, set()).discard(b)
            tree.get(b, set()).discard(a)
        for c in sub:
            for x in new[c] - {v}:
                A[v, x] = A[x, v] = True
    return A


def intraclass_covariance(A: np.ndarray) -> np.ndarray:
    """The covariance with variance 1 and correlation rho on the edges, Markov to ``A``."""
    from pymc_knn.graphical._bits import nodes_of
    from pymc_knn.graphical.evidence import cliques_and_separators
    from pymc_knn.graphical.decomposable import adjacency_from_matrix

    p = A.shape[0]
    K = np.zeros((p, p))
    cliques, seps = cliques_and_separators(adjacency_from_matrix(A))
    for sign, sets in ((1.0, cliques), (-1.0, seps)):
        for s in sets:
            idx = nodes_of(s)
            if idx:
                block = SIGMA2 * ((1 - RHO) * np.eye(len(idx)) + RHO)
                K[np.ix_(idx, idx)] += sign * np.linalg.inv(block)
    return np.linalg.inv(K)


def scenario_data(kind: str, n_classes: int, n: int, rng, graph_kind: str = "christmas-tree"):
    """Training and test sets of one replicate, with each class's true graph."""
    means = (
        [np.zeros(P), DELTA * np.ones(P)]
        if kind == "A"
        else [
            np.zeros(P),
            DELTA * (np.arange(1, P + 1) % 2),
            DELTA * ((np.arange(1, P + 1) + 1) % 2),
        ]
    )
    draw_graph = christmas_tree_graph if graph_kind == "christmas-tree" else random_graph
    graphs = [draw_graph(P, rng) for _ in range(n_classes)]
    covs = [intraclass_covariance(A) for A in graphs]

    def draw(k):
        X = np.vstack(
            [rng.multivariate_normal(means[c], covs[c], size=k) for c in range(n_classes)]
        )
        return X, np.repeat(np.arange(n_classes), k)

    return draw(n), draw(N_TEST), graphs


def competitors():
    """scikit-learn's classifier comparison settings, in the rows of Table 1."""
    from sklearn.discriminant_analysis import (
        LinearDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
    )
    from sklearn.ensemble import AdaBoostClassifier, RandomForestClassifier
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    return {
        "3-NN": KNeighborsClassifier(3),
        "Gauss proc": GaussianProcessClassifier(1.0 * RBF(1.0), random_state=42),
        "Dec tree (5)": DecisionTreeClassifier(max_depth=5, random_state=42),
        "Naive Bayes": GaussianNB(),
        "Linear SVM": SVC(kernel="linear", C=0.025, random_state=42),
        "Neural net": MLPClassifier(alpha=1, max_iter=1000, random_state=42),
        "AdaBoost": AdaBoostClassifier(random_state=42),
        "LDA": LinearDiscriminantAnalysis(),
        "QDA": QuadraticDiscriminantAnalysis(),
        "Rand forest": RandomForestClassifier(
            max_depth=5, n_estimators=10, max_features=1, random_state=42
        ),
    }


def true_graph_accuracy(X, y, Xt, yt, graphs) -> float:
    """BMA with a point mass on each class's true graph."""
    from pymc_knn.graphical import class_hyper, graph_log_predictive
    from pymc_knn.graphical.decomposable import adjacency_from_matrix

    counts = np.bincount(y)
    scores = np.column_stack(
        [
            graph_log_predictive(class_hyper(X[y == c]), adjacency_from_matrix(A), Xt)
            + np.log((counts[c] + 1) / (counts.sum() + counts.size))
            for c, A in enumerate(graphs)
        ]
    )
    return float((scores.argmax(axis=1) == yt).mean())


def replicate(kind, n_classes, n, seed, settings) -> dict:
    """Correct classification rates of every classifier on one replicate."""
    import warnings

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import pymc_knn as pk
    from pymc_knn.sklearn import BayesianKNNClassifier

    rng = np.random.default_rng(seed)
    (X, y), (Xt, yt), graphs = scenario_data(
        kind, n_classes, n, rng, settings.get("graphs", "christmas-tree")
    )
    out = {
        "Bayes pred (complete graph)": pk.GraphicalPredictiveClassifier("complete")
        .fit(X, y)
        .score(Xt, yt),
        "BMA (true graph)": true_graph_accuracy(X, y, Xt, yt, graphs),
    }
    clf = pk.GraphicalPredictiveClassifier(
        n_particles=50,
        n_sweeps=settings["pg_sweeps"],
        kernel=settings.get("kernel", "christmas_tree"),
        random_seed=seed,
    ).fit(X, y)
    out["BMA (particle Gibbs)"] = clf.score(Xt, yt)
    if settings.get("pknn_draws", 0) > 0:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pknn = BayesianKNNClassifier(
                draws=settings["pknn_draws"],
                tune=settings["pknn_draws"],
                chains=2,
                cores=2,
                random_seed=seed,
            ).fit(X, y)
        out["pkNN (exchange)"] = pknn.score(Xt, yt)
        out["pkNN converged"] = float(
            not any(issubclass(w.category, pk.ConvergenceWarning) for w in caught)
        )
    for name, model in (competitors() if settings.get("competitors", True) else {}).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # QDA's collinearity, MLP's convergence
            try:
                out[name] = make_pipeline(StandardScaler(), model).fit(X, y).score(Xt, yt)
            except np.linalg.LinAlgError:  # QDA with n = 51 points in 50 dimensions
                out[name] = float("nan")
    return out


def _mean(values) -> float:
    ok = [v for v in values if v == v]
    return float(np.mean(ok)) if ok else float("nan")


def _sd(values) -> float:
    ok = [v for v in values if v == v]
    return float(np.std(ok)) if ok else float("nan")


def table1(out: Path, settings, figure=None) -> tuple[str, dict]:
    """The synthetic columns of Table 1 as Markdown, and the mean rates per column."""
    reps = settings["pg_replicates"]
    results, columns = {}, []
    rows: list[dict] = []
    for col, (kind, k, n) in enumerate(SCENARIOS):
        if f"{kind}{n}" not in settings.get("scenarios", ("A300", "A51", "B51")):
            continue
        t0 = time.perf_counter()
        rows = [replicate(kind, k, n, 1000 * col + r, settings) for r in range(reps)]
        name = f"{kind}, n = {n}"
        results[name] = {
            m: (_mean([r[m] for r in rows]), _sd([r[m] for r in rows])) for m in rows[0]
        }
        columns.append((name, time.perf_counter() - t0, col))
    lines = [
        f"### 004 Table 1: correct classification rates, synthetic data (p = {P}, "
        f"{reps} replicates, 50 test points per class)",
        "",
        "Mean (sd over replicates) here, the paper's mean (standard error) after the slash. "
        "Particle Gibbs: 50 particles, "
        f"{settings['pg_sweeps']} sweeps, {settings.get('kernel', 'christmas_tree')} kernel. "
        "Seconds per column: " + ", ".join(f"{c}: {s:.0f}" for c, s, _ in columns) + ".",
        "",
        "| classifier | " + " | ".join(c for c, _, _ in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for m in [m for m in PAPER if m in rows[0]] + (
        ["pkNN (exchange)"] if "pkNN (exchange)" in rows[0] else []
    ):
        cells = [
            f"{results[c][m][0]:.3f} ({results[c][m][1]:.3f}) / "
            + (f"{PAPER[m][i][0]:.3f} ({PAPER[m][i][1]:.3f})" if m in PAPER else "-")
            for c, _, i in columns  # i: the scenario's column of the paper's table
        ]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    if "pkNN converged" in rows[0]:
        lines += [
            "",
            "pkNN: `BayesianKNNClassifier()` with its defaults (exchange, 2 chains of 1000 draws "
            "after 1000 tuning draws, `k ~ U{1..smallest class}`); fits without a convergence "
            "warning (R-hat <= 1.01, ESS >= 100 per chain): "
            + ", ".join(
                f"{c}: {results[c]['pkNN converged'][0] * reps:.0f} of {reps}"
                for c, _, _ in columns
            )
            + ".",
        ]
    lines += [
        "",
        "A missing rate (nan) is a classifier that failed on every replicate (QDA's "
        "covariance is singular with 51 points in 50 dimensions); a rate over fewer "
        "replicates is averaged over those that ran.",
        "",
        "The walking / Nordic walking column needs the PAMAP2 data set, which cannot be "
        "had offline: not reproduced.",
        "",
    ]
    return "\n".join(lines), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--replicates", type=int, default=None)
    parser.add_argument(
        "--pknn-draws",
        type=int,
        default=1000,
        help="draws (and tuning draws) of the pkNN (exchange) row (0: no row)",
    )
    parser.add_argument(
        "--graphs",
        choices=("christmas-tree", "expansion"),
        default="christmas-tree",
        help="how the true graphs are drawn (the paper: christmas-tree)",
    )
    parser.add_argument(
        "--kernel",
        choices=("simplicial", "christmas_tree"),
        default="christmas_tree",
        help="the particle Gibbs expansion kernel (the paper's and the estimator's default: "
        "christmas_tree; simplicial: this package's node-by-node kernel)",
    )
    parser.add_argument(
        "--scenarios",
        nargs="+",
        choices=("A300", "A51", "B51"),
        default=["A300", "A51", "B51"],
        help="the columns to run",
    )
    parser.add_argument(
        "--bma-only",
        action="store_true",
        help="only the three graphical rows (no scikit-learn classifiers)",
    )
    a = parser.parse_args()
    settings = {
        "kernel": a.kernel,
        "scenarios": tuple(a.scenarios),
        "competitors": not a.bma_only,
        "pg_sweeps": 300 if a.quick else 2000,
        "pknn_draws": a.pknn_draws,
        "graphs": a.graphs,
        "pg_replicates": a.replicates or (1 if a.quick else 10),
    }
    text, _ = table1(Path("."), settings)
    print(text)


if __name__ == "__main__":
    main()
