"""The issue-11 benchmark script runs (a smoke run: tiny sizes; no timing is asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_quick_run_prints_every_section(capsys):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import quant_layout_fusion
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert quant_layout_fusion.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for heading in ("(q) int8 vs f32", "(l) NCHW vs NHWC", "(f) fused vs unfused", "peak memory"):
        assert heading in out
    assert "ratio to f32" in out and "ratio to NCHW" in out and "ratio to unfused" in out
