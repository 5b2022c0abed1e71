"""Smoke test of an installed pymc-knn (run by .ci/wheel_check.sh, outside the source tree).

Checks that the package is imported from the installation, ships its data and py.typed, that the
`pymc-knn` console script and `python -m pymc_knn` answer, and that a small fit and prediction
run. Every warning raised meanwhile is listed; a warning of the package's own (raised in its
files, or attributed by stacklevel to this script's calls into it) fails the test.

    python smoke.py           # all of it (a fit of Ripley's data: about a minute, compilation included)
    python smoke.py --quick   # no fit
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

HERE = Path(__file__).resolve()
failures: list[str] = []
seen: list[warnings.WarningMessage] = []


def check(ok: bool, what: str) -> None:
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def own(w: warnings.WarningMessage, package: Path) -> bool:
    path = Path(w.filename).resolve()
    return path == HERE or package in path.parents


def run(*cmd: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "default"}
        )
    except FileNotFoundError as err:
        return subprocess.CompletedProcess(cmd, 127, "", str(err))


def main() -> int:
    quick = "--quick" in sys.argv
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import pymc_knn as pk
    seen.extend(caught)
    package = Path(pk.__file__).resolve().parent
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    check(site in package.parents, f"pymc_knn {pk.__version__} imported from {package}")
    check((package / "py.typed").is_file(), "py.typed installed")
    X, y, features, classes = pk.datasets.load_ripley("train")
    check(X.shape == (250, 2), f"Ripley's training data shipped: {X.shape}")

    bindir = Path(sys.executable).parent
    for cmd, prog in (
        ((str(bindir / "pymc-knn"), "--help"), "pymc-knn"),
        ((sys.executable, "-m", "pymc_knn", "--help"), "python -m pymc_knn"),
    ):
        out = run(*cmd)
        check(
            out.returncode == 0 and out.stdout.startswith(f"usage: {prog} "),
            f"{prog} --help (exit {out.returncode})",
        )
        check("Warning" not in out.stderr, f"{prog} --help prints no warning: {out.stderr!r}")

    if not quick:
        import numpy as np
        import pymc as pm

        X_test, y_test, *_ = pk.datasets.load_ripley("test")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pm.Model():
                beta = pm.Uniform("beta", 0, 4)
                k = pm.DiscreteUniform("k", 1, 30)
                pk.PottsKNN("y", X=X, beta=beta, k=k, observed=y)
                idata = pm.sample(
                    draws=200,
                    tune=200,
                    chains=2,
                    cores=1,
                    random_seed=1,
                    progressbar=False,
                    compute_convergence_checks=False,
                )
            proba = pk.predict_proba(idata, X_test[:200])
            error = float((proba.mean(axis=(0, 1)).argmax(axis=1) != y_test[:200]).mean())
        seen.extend(caught)
        beta_mean = float(idata.posterior["beta"].mean())
        check(0.5 < beta_mean < 3.5, f"posterior mean of beta {beta_mean:.2f}")
        check(error < 0.2 and np.isfinite(error), f"test error on 200 points {error:.3f}")

    ours = [w for w in seen if own(w, package)]
    for w in seen:
        tag = "OWN  " if w in ours else "other"
        print(f"{tag} warning {w.category.__name__} at {w.filename}:{w.lineno}: {w.message}")
    check(not ours, f"no warning of pymc-knn's own ({len(seen)} warnings in all)")
    print("smoke test " + ("FAILED: " + "; ".join(failures) if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
