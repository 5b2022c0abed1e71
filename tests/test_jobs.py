"""The command-line jobs: reading a user's CSV file, clear errors, and a small real fit."""

import numpy as np
import pytest

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


@pytest.mark.parametrize("text, target, message", [
    ("a,label\n1,x\n2,y\n", "class", "no column 'class'"),
    ("a,label\n1,x\nfoo,y\n3,x\n", "label", "column 'a' must be numeric; row 3 holds 'foo'"),
    ("a,label\n1,x\n,y\n3,x\n", "label", "column 'a' must be numeric"),
    ("a,label\n1,x\n2\n3,x\n", "label", r"rows \[3\] do not have 2 fields"),
    ("a,label\n1,x\n2,\n3,x\n", "label", "empty values"),
    ("label\nx\ny\n", "label", "no covariate columns"),
    ("a,label\n1,x\n", "label", "at least two data rows"),
])
def test_read_csv_errors(tmp_path, text, target, message):
    with pytest.raises(ValueError, match=message):
        read_csv(write(tmp_path, text), target)


def test_cli_reports_bad_files(tmp_path, capsys):
    assert main(["fit", str(tmp_path / "missing.csv"), "--target", "y"]) == 2
    assert "no such file" in capsys.readouterr().err
    path = write(tmp_path, "a,y\n1,x\n2,x\n3,x\n")
    assert main(["fit", str(path), "--target", "y"]) == 2
    assert "single class" in capsys.readouterr().err
    path = write(tmp_path, "a,y\n1,x\nnan,z\n3,x\n")
    assert main(["fit", str(path), "--target", "y"]) == 2
    assert "NaN" in capsys.readouterr().err
    path = write(tmp_path, "a,y\n1,x\n2,z\n3,x\n4,z\n")
    for bad in ("nan", "0", "-2"):
        assert main(["fit", str(path), "--target", "y", "--beta-upper", bad]) == 2
        assert "beta_upper must be finite and > 0" in capsys.readouterr().err


@pytest.mark.parametrize("option, value", [("--tune", "-1"), ("--chains", "0"),
                                           ("--draws", "0"), ("--cores", "x")])
def test_cli_refuses_bad_sampling_options(tmp_path, capsys, option, value):
    path = write(tmp_path, "a,y\n1,x\n2,z\n")
    with pytest.raises(SystemExit) as exit_:
        main(["fit", str(path), "--target", "y", option, value])
    assert exit_.value.code == 2 and f"argument {option}" in capsys.readouterr().err


def test_cli_refuses_an_out_that_is_a_file(tmp_path, capsys):
    path = write(tmp_path, "a,y\n1,x\n2,z\n")
    with pytest.raises(SystemExit):
        main(["fit", str(path), "--target", "y", "--out", str(path)])
    assert "is a file" in capsys.readouterr().err


def test_csv_labels_bom_and_repeated_columns(tmp_path):
    """1 and 1.0 are one class; a spreadsheet's byte-order mark is not part of the first name;
    a repeated column name is refused (it could leak the target into the covariates)."""
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffa,y\n1,1\n2,1.0\n3,2\n".encode("utf-8"))
    X, y, features, classes = read_csv(path, "y")
    assert features == ["a"] and classes.tolist() == [1, 2] and y.tolist() == [0, 0, 1]
    path = write(tmp_path, "a,y,y\n1,x,x\n2,z,z\n")
    with pytest.raises(ValueError, match=r"\['y'\] appear more than once"):
        read_csv(path, "y")


def test_cli_fits_a_csv_file(tmp_path, capsys):
    r = np.random.default_rng(0)
    X = r.normal(size=(40, 2))
    labels = np.where(X[:, 0] + 0.3 * r.normal(size=40) > 0, "right", "left")
    rows = "\n".join(f"{a:.4f},{b:.4f},{c}" for (a, b), c in zip(X, labels))
    path = write(tmp_path, "u,v,side\n" + rows + "\n")
    out = tmp_path / "out"
    code = main(["fit", str(path), "--target", "side", "--out", str(out), "--draws", "300",
                 "--tune", "200", "--chains", "2", "--cores", "1", "--seed", "1"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "beta" in printed and "r_hat" in printed
    assert {p.name for p in out.iterdir()} == {"trace.png", "k_posterior.png",
                                               "predictive_map.png"}
