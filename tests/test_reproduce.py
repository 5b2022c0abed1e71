"""The reproduction suite's quick mode: its tables are written, with the papers' numbers.

Sane ranges: the classical kNN tables of Cucala et al. are reproduced exactly (to their three
decimals); the exchange fit's Ripley test error is within 0.015 of their 0.084-0.087 (we measure
0.092-0.094; see benchmarks/README.md), the pseudo-likelihood's within 0.01 of their 0.087, and
its posterior of k sits far above the exact one (their section 3.5); Pima within 0.02 of 0.209;
forensic glass: the classical kNN on standardised covariates within 0.06 of the paper's 0.35,
the probabilistic kNN no worse than it (+0.03) on the same covariates, and better than the
17-NN, the paper's comparator, by 0.05 at least on raw covariates (0.15 over 200 splits); Fig.
10: at k = 70 the pseudo-posterior of beta sits above 2.5 and the exact one below 1.5 (2.98 and
1.19 in the full run); Friel and Pettitt's Table 2: d-nn1 within 0.08 of their error on every
data set but crabs (where we measure about 0.29 against their 0.16, a slip on the paper's side,
see docs/reproductions.md), and every model's error on iris and wine below 0.12 (theirs:
0.04-0.06); Yoon and Friel: KOREA's F-measure within 0.1 of theirs on crabs and wine, the
kNN's within 0.1 on forensic glass (their iris row, 0.48-0.62, is not reachable by any of these
classifiers: 0.93-0.95 here, and error 0.05-0.06 in Friel and Pettitt on the same data), and
KOREA's posterior mean of k within 3 of pseudo-likelihood MCMC's and above the exact one's.
"""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # a quick reproduction of every paper: about 5 minutes


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("reproduce", ROOT / "benchmarks" / "reproduce.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("repro")
    return module, out, module.run(out, quick=True)


def test_writes_the_markdown_and_figures(quick):
    _, out, _ = quick
    text = (out / "reproductions.md").read_text()
    for heading in (
        "Papers by number: 000 Cucala",
        "000 Table 1",
        "000 Table 2",
        "000 Fig. 2",
        "000 sections 3.2-3.5",
        "000 Fig. 10",
        "000 section 4: Pima",
        "000 section 4: forensic glass",
        "001 Table 2",
        "003 Table 2",
        "003 Table 3",
        "003 Fig. 3",
        "004 Table 1",
        "000 section 3.3, Figs. 5-7",
        "Model evidence of the five neighbour systems",
    ):
        assert heading in text
    figures = {p.name for p in (out / "figures").iterdir()}
    assert figures == {
        "ripley_loo.png",
        "ripley_marginals.png",
        "ripley_probabilities.png",
        "ripley_beta_given_k.png",
        "wine_k_posterior.png",
        "ripley_mean_energy.png",
        "ripley_log_z.png",
        "ripley_path_posterior.png",
    }


def test_classical_tables_match_the_paper(quick):
    module, _, results = quick
    for name, table in (("Ripley", module.RIPLEY_TABLE_1), ("Pima", module.PIMA_TABLE_2)):
        for k, paper in table.items():
            assert results["classical"][name][k] == pytest.approx(paper, abs=0.0006)
    assert results["classical"]["ripley_loo_minimisers"] == module.RIPLEY_LOO_MINIMISERS


def test_bayesian_errors_are_near_the_paper(quick):
    _, _, results = quick
    ripley = results["ripley"]
    assert abs(ripley["exchange"]["error"] - 0.085) < 0.015
    assert abs(ripley["pseudo"]["error"] - 0.087) < 0.01
    assert 1.3 < ripley["exchange"]["beta"] < 1.6 and 11 < ripley["exchange"]["k"] < 19
    assert ripley["pseudo"]["k"] > ripley["exchange"]["k"] + 15  # PL overestimates k (000 3.5)
    assert abs(results["pima"]["error"] - 0.209) < 0.02


def test_glass_errors_are_in_the_papers_range(quick):
    _, _, results = quick
    glass = results["glass"]
    assert abs(glass[("kNN, leave-one-out k", "standardised")] - 0.35) < 0.06
    for cov in ("raw", "standardised"):
        assert glass[("pkNN, exchange", cov)] < glass[("kNN, leave-one-out k", cov)] + 0.03
    assert glass[("pkNN, exchange", "raw")] < glass[("kNN, k = 17", "raw")] - 0.05


def test_beta_given_k_shows_the_pseudo_likelihood_bias(quick):
    _, _, results = quick
    fixed = results["ripley"]["beta_given_k"]
    assert fixed[(70, "pseudo")]["beta"] > 2.5 and fixed[(70, "exchange")]["beta"] < 1.5
    assert abs(fixed[(10, "pseudo")]["beta"] - fixed[(10, "exchange")]["beta"]) < 0.3


def test_friel_pettitt_table_is_near_the_paper(quick):
    module, _, results = quick
    friel = results["friel"]
    for name, paper in module.FRIEL_TABLE_2.items():
        if name != "Crabs":
            assert abs(friel[(name, "d-nn1")] - paper[1]) < 0.08, name
    for name in ("Iris", "Wine"):
        for m in module.FRIEL_MODELS:
            assert friel[(name, m)] < 0.12, (name, m)


def test_yoon_friel_tables_are_near_the_paper(quick):
    module, _, results = quick
    yoon = results["yoon"]
    paper = importlib.util.spec_from_file_location("yoon2015", ROOT / "benchmarks" / "yoon2015.py")
    yoon2015 = importlib.util.module_from_spec(paper)
    paper.loader.exec_module(yoon2015)
    for r, rule in enumerate(yoon2015.RULES):
        for name in ("Crabs", "Wine"):
            f = yoon2015.PAPER_F["KOREA (average)"][name][r][0]
            assert abs(yoon[("KOREA (average)", name, rule)] - f) < 0.1, (name, rule)
        assert abs(yoon[("kNN", "Fglass", rule)] - yoon2015.PAPER_F["kNN"]["Fglass"][r][0]) < 0.1
        assert yoon[("KOREA (average)", "Iris", rule)] > 0.88
    k_korea, k_pseudo, k_exact = (
        yoon["fig3"][m][0]
        for m in ("KOREA", "pseudo-likelihood MCMC", "exchange (exact posterior)")
    )
    assert abs(k_korea - k_pseudo) < 3
    assert k_exact < k_korea - 3  # the pseudo-posterior's bias (000 section 3.5)


def test_graphical_bma_beats_the_complete_graph(quick):
    """004 Table 1 (one replicate, 300 sweeps): at n = 51, BMA with the true graphs and by
    particle Gibbs beat the complete-graph Bayes predictive, as in the paper (scenario A: 0.904
    and 0.816 against 0.725; B: 0.877 and 0.788 against 0.613)."""
    _, _, results = quick
    for column in ("A, n = 51", "B, n = 51"):
        rates = {name: mean for name, (mean, _) in results["pavlenko"][column].items()}
        assert rates["BMA (true graph)"] > rates["Bayes pred (complete graph)"] + 0.1
        assert rates["BMA (particle Gibbs)"] > rates["Bayes pred (complete graph)"] + 0.05


def test_path_sampling_agrees_with_exchange_on_ripley(quick):
    """000 section 3.3 (k in 1..40 in quick mode): the path-sampling posterior and the exchange
    algorithm's agree (full run, k in 1..125: k means 14.9 and 15.0, beta 1.460 and 1.458), and
    the test error is near the paper's 0.085 (0.093 here, as every exact method gives).

    In quick mode the distance between the two ``k`` marginals is set by path sampling's rough
    ``log Z`` surface, not by the exchange's draws: its two grids in ``k`` give marginals 0.30
    apart in total variation, the exchange's chains 1-2 and 3-4 0.07-0.08, and the two
    marginals were 0.27 and 0.30 apart under two tunings of the exchange (2026-12-05). So the
    exchange must be no further from path sampling than path sampling's grids are from each
    other, up to twice its own chains' spread."""
    _, _, results = quick
    path = results["path"]
    assert abs(path["k"] - path["k_exchange"]) < 2
    assert abs(path["beta"] - path["beta_exchange"]) < 0.05
    assert abs(path["error"] - 0.085) < 0.015 and abs(path["error_paper_grid"] - 0.085) < 0.015
    assert path["tv_k"] < path["tv_k_paper_grid"] + 2 * path["tv_k_exchange_halves"]
    assert path["max_mcse"] < 1


def test_the_evidence_table_ranks_five_systems(quick):
    _, _, results = quick
    (iris,) = results["evidence"].values()
    assert len(iris["log_evidence"]) == 5 and all(m < 0.5 for m in iris["mcse"].values())
    assert sum(iris["probability"].values()) == pytest.approx(1.0)
    assert all(e < 0.12 for e in iris["error"].values())  # 0.04-0.11 in the full run
