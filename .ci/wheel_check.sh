#!/usr/bin/env bash
# Build the wheel and the sdist into dist/, check them with `twine check --strict`, install the
# wheel in a clean virtual environment (outside the checkout) and run .ci/smoke.py there; then
# build and install the sdist in the same environment and run the quick smoke test again.
#
#   BUILD_PYTHON: a Python with `build` and `twine` (the `dev` extra); default python3
#   PYTHON:       the Python the clean environment is made from; default python3
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_PYTHON=${BUILD_PYTHON:-python3}
PYTHON=${PYTHON:-python3}

rm -rf dist
"$BUILD_PYTHON" -m build --outdir dist .
"$BUILD_PYTHON" -m twine check --strict dist/*

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --upgrade pip
echo "installing the wheel and its dependencies in a clean environment ($tmp/venv)"
"$tmp/venv/bin/python" -m pip install --quiet dist/*.whl
cp .ci/smoke.py "$tmp/smoke.py"
(cd "$tmp" && venv/bin/python smoke.py)

echo "installing the sdist in the same environment"
"$tmp/venv/bin/python" -m pip install --quiet --no-deps --force-reinstall dist/*.tar.gz
(cd "$tmp" && venv/bin/python smoke.py --quick)
echo "wheel-check passed: $(ls dist)"
