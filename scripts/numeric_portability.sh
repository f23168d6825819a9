#!/usr/bin/env bash
# Runs the test suite once per arithmetic the machine can be made to use, to find tests that depend on
# the BLAS kernel's summation order, NumPy's SIMD width or OpenCV's optimised paths (issue: the suite
# failed on AVX-512 machines). Not run in CI: it is a check for whoever touches a tolerance.
#   bash scripts/numeric_portability.sh [pytest args...]    (default: the whole suite but Ray)
#   CORETYPES="Haswell Sandybridge" QUICK=1 bash scripts/numeric_portability.sh ...   (fewer settings)
# Each line of the summary names the setting and pytest's closing line. Settings a CPU cannot run are
# skipped by OpenBLAS itself (it falls back), so read the kernel threadpoolctl reports next to each.
set -uo pipefail
cd "$(dirname "$0")/.."
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(tests --deselect tests/test_ray_engine.py)
run() {  # run NAME ENV... -- python prelude
  local name=$1; shift
  local kernel
  kernel=$(env "$@" python3 -c 'import numpy; from threadpoolctl import threadpool_info as t; print([i.get("architecture") for i in t() if i["internal_api"]=="openblas"])')
  local line
  line=$(env "$@" python3 -c "import sys, cv2; cv2.setUseOptimized(${CV_OPT:-True}); import pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', *sys.argv[1:]]))" "${args[@]}" </dev/null 2>&1 | tail -n 1)
  printf '%-34s %-14s %s\n' "$name" "$kernel" "$line"
}
for core in ${CORETYPES:-SkylakeX Haswell Zen Sandybridge Prescott}; do
  run "OPENBLAS_CORETYPE=$core" OPENBLAS_CORETYPE=$core
done
[ -n "${QUICK:-}" ] || run "NPY_DISABLE_CPU_FEATURES=X86_V4..." NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"
run "NPY_DISABLE_CPU_FEATURES=X86_V3+" NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR"
CV_OPT=False run "cv2.setUseOptimized(False)" CV_OPT=False
[ -n "${QUICK:-}" ] || run "OPENBLAS_NUM_THREADS=1" OPENBLAS_NUM_THREADS=1
