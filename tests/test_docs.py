"""Every ```python block of the documentation runs as written.

The blocks of docs/*.md and README.md are run page by page, in order, in one namespace per page
(a page reads as one session: a later block may use what an earlier one defined), in a fresh
temporary directory, with matplotlib's non-interactive backend.

A block that is deliberately not runnable (a fragment, pseudo-code) is preceded, on the line
just before its fence, by the marker

    <!-- docs-test: skip -->

(an HTML comment: invisible on GitHub and on the Sphinx site). Use it sparingly: a block that
can run should. Pages whose blocks sample (``pm.sample``, an estimator's ``fit``, scikit-learn's
cross-validation, ...) take from 10 seconds to a few minutes each and are marked ``slow``; only
the pages of ``FAST_PAGES``, which take seconds, run in the default suite (a new page is slow
until it is added there). The API reference is checked here too: docs/api.md lists every public
name.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
SKIP_MARKER = "<!-- docs-test: skip -->"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
# the pages of the default suite (seconds each); every other page with code is `slow`
FAST_PAGES = {"docs/approximations.md"}
# what cannot be in a fast page: sampling, fitting, cross-validation, posterior predictive draws
SAMPLES = re.compile(r"pm\.sample|\.fit\(|cross_val_score|sample_posterior_predictive")


def python_blocks(path):
    """The page's ```python blocks as (first line number, code, skipped)."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        line = text.count("\n", 0, match.start()) + 2
        blocks.append((line, match.group(1), before == SKIP_MARKER))
    return blocks


def _param(path):
    name = str(path.relative_to(ROOT))
    return pytest.param(path, id=name, marks=[] if name in FAST_PAGES else [pytest.mark.slow])


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p)]


@pytest.mark.parametrize("path", [_param(p) for p in PAGES_WITH_CODE])
def test_code_blocks_run(path, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    try:
        for line, code, skipped in python_blocks(path):
            if skipped:
                continue
            where = f"{path.relative_to(ROOT)}:{line}"
            try:
                exec(compile(code, where, "exec"), namespace)
            except Exception as error:
                raise AssertionError(
                    f"the code block at {where} fails as written: {error!r}"
                ) from error
    finally:
        plt.close("all")


def test_fast_pages_do_not_sample():
    for name in FAST_PAGES:
        assert not any(SAMPLES.search(code) for _, code, _ in python_blocks(ROOT / name)), name


def test_skip_marker_is_rare():
    """The marker is for fragments that cannot run; every page's blocks mostly run."""
    skipped = [(p.name, line) for p in PAGES for line, _, s in python_blocks(p) if s]
    total = sum(len(python_blocks(p)) for p in PAGES)
    assert total > 15 and len(skipped) <= 3, skipped


def test_block_extraction():
    blocks = python_blocks(ROOT / "README.md")
    assert blocks and all("import" in code for _, code, _ in blocks[:1])


def test_api_reference_lists_every_public_name():
    import pymc_knn

    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   ([A-Za-z_][A-Za-z0-9_]*)$", api, re.M))
    modules = {"datasets", "kernels", "samplers", "testing"}
    missing = [n for n in pymc_knn.__all__ if n not in modules and n not in listed]
    assert not missing, f"docs/api.md does not list {missing}"
    for name in modules | {"plots"}:
        module = getattr(pymc_knn, name, None) or __import__(f"pymc_knn.{name}", fromlist=["_"])
        assert f".. automodule:: pymc_knn.{name}" in api
        missing = [n for n in module.__all__ if n not in listed]
        assert not missing, f"docs/api.md does not list pymc_knn.{name}.{missing}"


# --- the Examples sections of the API reference ------------------------------------------------


def _public_objects():
    import importlib

    import pymc_knn

    out = {}
    for name in pymc_knn.__all__:
        obj = getattr(pymc_knn, name)
        if isinstance(obj, type(pymc_knn)):
            for member in obj.__all__:
                out[f"{name}.{member}"] = getattr(obj, member)
        else:
            out[name] = obj
    plots = importlib.import_module("pymc_knn.plots")
    out.update({f"plots.{m}": getattr(plots, m) for m in plots.__all__})
    return out


# docstrings whose examples sample (an estimator's fit): slow
SLOW_DOCSTRINGS = {"BayesianKNNClassifier", "imputed_proba"}


def _docstring_params():
    import doctest

    finder = doctest.DocTestFinder(recurse=False)
    params = []
    for name, obj in _public_objects().items():
        tests = [t for t in finder.find(obj, name) if t.examples]
        if tests:
            marks = [pytest.mark.slow] if name in SLOW_DOCSTRINGS else []
            params.append(pytest.param(tests, id=name, marks=marks))
    return params


@pytest.mark.parametrize("tests", _docstring_params())
def test_docstring_examples_run(tests, tmp_path, monkeypatch):
    """The ``>>>`` examples of the public docstrings run and print what they say (doctest, with
    ELLIPSIS and NORMALIZE_WHITESPACE; ``# doctest: +SKIP`` on the lines that sample)."""
    import doctest

    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
