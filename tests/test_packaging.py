"""Packaging metadata (issue 16 item 3): the SPDX licence and its file, the console script,
py.typed, CITATION.cff and the changelog. Building and installing the wheel and sdist in a clean
environment is `make wheel-check` (.ci/wheel_check.sh), too slow for the test suite."""

import subprocess
import sys
import tomllib
import warnings
from importlib import import_module
from pathlib import Path

import pytest

import pymc_knn
from pymc_knn.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_spdx_licence_with_its_file():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    assert "LICENSE" in project["license-files"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Programming Language :: Python :: 3" in project["classifiers"]
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # PEP 639
    requires = PYPROJECT["build-system"]["requires"]
    assert requires == ["setuptools>=77"]


def test_console_script_points_at_main():
    target = PYPROJECT["project"]["scripts"]["pymc-knn"]
    module, func = target.split(":")
    assert getattr(import_module(module), func) is main


@pytest.mark.parametrize(
    "argv0, prog",
    [("/venv/bin/pymc-knn", "pymc-knn"), ("/src/pymc_knn/__main__.py", "python -m pymc_knn")],
)
def test_usage_names_the_command_used(monkeypatch, capsys, argv0, prog):
    monkeypatch.setattr(sys, "argv", [argv0])
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {prog} ")


def test_py_typed_is_package_data():
    assert (Path(pymc_knn.__file__).parent / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["pymc_knn"]


def test_citation_cites_the_software_and_five_papers():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == pymc_knn.__version__ == PYPROJECT["project"]["version"]
    assert cff["license"] == "MIT"
    refs = cff["references"]
    assert len(refs) == 5
    families = [ref["authors"][0]["family-names"] for ref in refs]
    assert families == ["Cucala", "Friel", "Segerie", "Yoon", "Pavlenko"]
    assert all(ref["title"] for ref in refs)


def test_changelog_keeps_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "keepachangelog.com" in text
    assert "## [Unreleased]" in text and "### Added" in text


def test_import_raises_no_warning():
    """A fresh interpreter: `import pymc_knn` with every warning shown prints nothing."""
    out = subprocess.run(
        [sys.executable, "-W", "default", "-c", "import pymc_knn"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0
    assert "Warning" not in out.stderr, out.stderr


def test_cli_help_raises_no_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(SystemExit):
            main(["demo", "--help"])
    assert not caught, [str(w.message) for w in caught]
