"""The notebooks run from a clean kernel (with small settings: PYMC_KNN_QUICK=1) and end with
the numbers their conclusions rest on."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    monkeypatch.setenv("PYMC_KNN_QUICK", "1")
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[-1].cell_type == "markdown"
    assert "Conclusion" in nb.cells[-1].source
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    assert not errors


def test_there_are_four_notebooks():
    assert {p.stem for p in NOTEBOOKS} == {
        "ripley_workflow",
        "inference_methods",
        "glass_multiclass",
        "graphical_comparison",
    }
