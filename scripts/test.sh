#!/usr/bin/env bash
# Installs everything the tests need (Python extras, upstream mlir-opt,
# OpenCV's sample videos for the real-footage tests), then
# runs every check: ruff, mypy, pytest, then the lit/FileCheck suite. CI runs exactly this.
# pytest runs on CORTEX_TEST_WORKERS (default 2) pytest-xdist workers; arguments go to pytest
# (a later -n wins: `scripts/test.sh -n 0` runs in one process).
#
# The development loop (a few minutes on two cores; the tests marked slow, 4 s or more each, left out; CI runs everything):
#   python3 -m pytest -m "not slow" -n 2 --dist loadgroup -q
# One file while editing:  python3 -m pytest tests/test_x.py -x -q
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/lib/llvm-22/bin/mlir-opt ] || ! command -v dot >/dev/null \
   || [ ! -d /usr/share/doc/opencv-doc/examples/data ] || ! command -v chromium >/dev/null \
   || ! command -v ffmpeg >/dev/null || ! command -v jq >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mlir-22-tools graphviz opencv-doc chromium ffmpeg jq >/dev/null
fi
python3 -m pip install -q -e '.[test]'

status=0
# Lint and types first (fast): ruff's explicit rule set and mypy's scope are in pyproject.toml.
python3 -m ruff check . || status=$?
typeroot=$(mktemp -d) && ln -s "$PWD" "$typeroot/cortex"   # mypy sees the repository as the package `cortex`
MYPYPATH="$typeroot" python3 -m mypy --config-file pyproject.toml --cache-dir "$typeroot/.mypy_cache" || status=$?
rm -rf "$typeroot"
# stdin from /dev/null: a child that reads stdin can never wait on a terminal or a pipe.
# --dist loadgroup: tests marked xdist_group(name) (one Ray cluster, ...) run on one worker, in order.
python3 -m pytest -n "${CORTEX_TEST_WORKERS:-2}" --dist loadgroup "$@" < /dev/null || status=$?
python3 -c 'import lit.main; lit.main.main()' -sv --timeout=300 lit || status=$?
exit $status
