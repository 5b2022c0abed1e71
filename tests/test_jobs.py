"""The command-line jobs: reading a user's CSV file and a small real fit (bad input:
test_bad_input.py)."""

import numpy as np

from pymc_knn.__main__ import main
from pymc_knn.jobs import read_csv


def write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_csv_maps_labels_and_keeps_column_order(tmp_path):
    path = write(tmp_path, "a,label,b\n1,yes,2\n3,no,4\n5,yes,6\n")
    X, y, features, classes = read_csv(path, "label")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
    assert features == ["a", "b"] and list(classes) == ["no", "yes"]
    np.testing.assert_array_equal(y, [1, 0, 1])


def test_cli_fits_a_csv_file(tmp_path, capsys):
    r = np.random.default_rng(0)
    X = r.normal(size=(40, 2))
    labels = np.where(X[:, 0] + 0.3 * r.normal(size=40) > 0, "right", "left")
    rows = "\n".join(f"{a:.4f},{b:.4f},{c}" for (a, b), c in zip(X, labels))
    path = write(tmp_path, "u,v,side\n" + rows + "\n")
    out = tmp_path / "out"
    code = main(
        [
            "fit",
            str(path),
            "--target",
            "side",
            "--out",
            str(out),
            "--draws",
            "300",
            "--tune",
            "200",
            "--chains",
            "2",
            "--cores",
            "1",
            "--seed",
            "1",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "beta" in printed and "convergence: r_hat <= " in printed
    assert {p.name for p in out.iterdir()} == {"trace.png", "k_posterior.png", "predictive_map.png"}


def test_the_fit_report_names_a_prior_bound(rng, capsys):
    """The command line prints (and warns of) a bound the steps found the posterior against."""
    import warnings

    import arviz as az
    import pytest

    import pymc_knn as pk
    from pymc_knn.jobs import _diagnose

    posterior = {"beta": rng.normal(size=(4, 500)), "k": rng.integers(3, 6, size=(4, 500))}
    bound = np.full((4, 500), "", dtype="U32")
    stats = {"prior_bound": bound, "iterations": np.ones((4, 500), int)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _diagnose(az.from_dict(posterior=posterior, sample_stats=stats))
    bound[2] = "beta upper"
    idata = az.from_dict(posterior=posterior, sample_stats=stats)
    with pytest.warns(pk.PriorBoundWarning, match=r"beta upper bound in chain\(s\) \[2\]"):
        assert not _diagnose(idata)
    assert "WARNING: the posterior presses against its prior" in capsys.readouterr().out


def test_the_fit_report_warns_of_chains_that_disagree(rng, capsys):
    """The command line prints the worst R-hat and ESS of ``beta`` and ``k`` and, when they
    fall short, a warning line and a ConvergenceWarning; a well-mixed fit gets neither."""
    import re
    import warnings

    import arviz as az
    import pytest

    import pymc_knn as pk
    from pymc_knn.jobs import _diagnose

    shift = np.array([0.0, 0.0, 0.0, 1.0])[:, None]  # one chain of four elsewhere
    beta = rng.normal(size=(4, 500))
    stats = {"prior_bound": np.full((4, 500), "", dtype="U32"), "iterations": np.ones((4, 500))}
    mixed = {"beta": beta, "k": rng.integers(3, 6, size=(4, 500))}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _diagnose(az.from_dict(posterior=mixed, sample_stats=stats))
    assert "WARNING" not in capsys.readouterr().out
    idata = az.from_dict(posterior={**mixed, "beta": beta + shift}, sample_stats=stats)
    with pytest.warns(pk.ConvergenceWarning, match=r"beta: r_hat .* > 1.01"):
        assert not _diagnose(idata)
    printed = capsys.readouterr().out
    worst = float(az.rhat(idata, method="rank")["beta"])
    assert re.search(r"r_hat <= (\d\.\d{3})", printed).group(1) == f"{worst:.3f}"
    assert "WARNING: the chains have not converged" in printed


def test_fit_csv_returns_the_fit(tmp_path, monkeypatch):
    """``fit_csv`` hands back the InferenceData of its fit (the sampling and the report replaced:
    the wiring, not the fit)."""
    import arviz as az

    from pymc_knn import jobs

    idata = az.from_dict(posterior={"beta": np.ones((2, 5)), "k": np.ones((2, 5), int)})
    monkeypatch.setattr(jobs, "fit", lambda X, y, **kw: (None, idata))
    monkeypatch.setattr(jobs, "_report", lambda *a, **kw: None)
    path = write(tmp_path, "u,side\n0.1,a\n0.4,b\n0.2,a\n0.9,b\n")
    assert jobs.fit_csv(path, "side", out=tmp_path / "out") is idata
