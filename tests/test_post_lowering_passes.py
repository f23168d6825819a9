"""The post-lowering slot: `cortex.compile` / `cortex-run` fuse elementwise linalg by default.

The slot is `post_passes` (`cortex.lowering.POST_LOWERING_PASSES` by default,
`cortex-fuse-linalg-elementwise`); `compiled.profile()` splits the time of a
fused statement block among every source op it came from.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.numerics import REORDERED, assert_f32_close

import cortex
from cortex.lowering import POST_LOWERING_PASSES
from cortex.runtime.profiling import split_fused
from cortex.tools.cortex_run import main

EXAMPLES = Path(cortex.__file__).resolve().parent / "examples"
GELU_SOURCES = {"kx", "kx2", "kx3", "inner", "arg", "th", "one_plus", "x_half", "out"}


@pytest.fixture(scope="module")
def gelu():
    return cortex.parse(EXAMPLES / "gelu_tanh.mlir")


def generic_origins(source: str) -> set[str]:
    return {line.split("# ")[1].split(":")[0] for line in source.splitlines() if "linalg.generic" in line}


def test_default_slot_is_elementwise_fusion(gelu):
    assert "cortex-fuse-linalg-elementwise" in POST_LOWERING_PASSES
    fused = cortex.compile(gelu, entry="gelu_tanh", mode=None)
    unfused = cortex.compile(gelu, entry="gelu_tanh", mode=None, post_passes=None)
    assert len(generic_origins(fused.source)) == 1
    assert len(generic_origins(unfused.source)) == len(GELU_SOURCES)
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    (want,) = cortex.reference(gelu, entry="gelu_tanh", mode=None)(x)
    assert_f32_close(fused(x)[0], want, ulps=REORDERED)
    assert_f32_close(unfused(x)[0], want, ulps=REORDERED)


def test_profile_attributes_fused_statements_to_every_source_op(gelu):
    compiled = cortex.compile(gelu, entry="gelu_tanh", mode=None)
    compiled.profiling = True
    x = np.ones((4, 8), np.float32)
    for _ in range(3):
        compiled(x)
    report = compiled.profile()
    assert GELU_SOURCES <= set(report)
    assert not any("+" in k for k in report)
    shares = [report[k] for k in GELU_SOURCES]
    assert max(shares) == pytest.approx(min(shares))  # one fused block, shared equally


def test_split_fused_keeps_the_total():
    split = split_fused({"a+b": 2.0, "b": 1.0, "c": 0.5})
    assert split == {"a": 1.0, "b": 2.0, "c": 0.5}
    assert sum(split.values()) == pytest.approx(3.5)


def test_a_custom_slot_runs_instead(gelu):
    compiled = cortex.compile(gelu, entry="gelu_tanh", mode=None, post_passes="cse")
    assert len(generic_origins(compiled.source)) == len(GELU_SOURCES)
    with pytest.raises(cortex.CortexError):
        cortex.compile(gelu, entry="gelu_tanh", mode=None, post_passes="no-such-pass")


@pytest.mark.slow
def test_cortex_run_takes_a_post_lowering_pipeline(capsys, tmp_path):
    runs = {}
    for post in ("default", ""):
        jsonl = tmp_path / f"scores{post or 'none'}.jsonl"
        rc = main(["--frames", "2", "--size", "96x128", "--quiet", "--no-frame-log", "--dce-frames", "0",
                   "--post-passes", post, "--scores-jsonl", str(jsonl)])
        capsys.readouterr()
        assert rc == 0
        runs[post] = [json.loads(line)["score"] for line in jsonl.read_text().splitlines()]
    assert_f32_close(np.array(runs["default"]), np.array(runs[""]), ulps=REORDERED)
