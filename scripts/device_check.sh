#!/usr/bin/env bash
# The IREE backend's GPU check: compile here, run on a GPU machine.
#
#   bash scripts/device_check.sh prepare   # HERE (network, iree-base-compiler installed): downloads the cp312
#                                          # wheels the device needs into .whl/ and compiles the tensor graphs
#                                          # for cuda and the CPU into .devcheck/ (about 35 MB in all)
#   bash scripts/device_check.sh run       # THERE (no network, Python 3.12, numpy/opencv/onnx/onnxruntime, no
#                                          # xdsl, no iree): installs .whl/ into /tmp/site, runs the checks and
#                                          # benchmarks of scripts/device_check.py, prints compact tables (< 7 min;
#                                          # the scaling table row by row, so a timeout keeps the rows done)
#   bash scripts/device_check.sh run --quick   # fewer rounds and frames (a CPU smoke run here)
#
# .whl/ and .devcheck/ are git-ignored: hand them to the device run as carried paths.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=(iree-base-runtime==3.13.0 ml-dtypes==0.6.0 xdsl==0.74.0 immutabledict==4.3.1 ordered-set==4.1.0
        typing-extensions==4.15.0)
case "${1:-}" in
prepare)
    rm -rf .whl .devcheck
    mkdir -p .whl
    for spec in "${WHEELS[@]}"; do
        python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
            -d .whl "$spec"
    done
    python3 scripts/device_check.py prepare .devcheck
    du -sh .whl .devcheck
    ;;
run)
    shift
    root=$(mktemp -d /tmp/cortexroot.XXXX)
    ln -s "$PWD" "$root/cortex"
    if python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then
        rm -rf /tmp/site && mkdir -p /tmp/site
        python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
        export PYTHONPATH="/tmp/site:$root"
    else  # the wheels are cp312: elsewhere (a rehearsal here) use what is installed
        echo "python3 is not 3.12: the installed packages run the check (.whl/ is for the device)"
        export PYTHONPATH="$root"
    fi
    timeout 400 python3 scripts/device_check.py run .devcheck "$@"
    ;;
*)
    sed -n '2,13p' "$0"
    exit 2
    ;;
esac
