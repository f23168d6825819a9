"""Every option a shape cannot change is checked when `cortex.compile` is called, shape-generic or not.

A shape-generic module compiles per concrete shape on its first frame, so a
misspelt mode, pass or weight name used to surface only there -- or, for a
weight name nothing reads, never. Both compiles share one check
(`cortex.CompileOptions`, and `driver.check_weight_names` for the names the module reads).
"""

from __future__ import annotations

import pytest

import cortex
from cortex.errors import CortexError
from cortex.examples.l2_pipeline import L2_PIPELINE
from cortex.shape_generic import ShapeGenericPipeline

BAD = [
    ({"mode": "turbo"}, r"unknown mode 'turbo' \(known: balanced, motion, power_save\)"),
    ({"passes": "nope"}, r"unknown pass 'nope'"),
    ({"passes": "canonicalize{bogus=1}"}, r"pass 'canonicalize' has no option 'bogus'"),
    ({"post_passes": "cse,nope"}, r"unknown pass 'nope'"),
    ({"passes": 3}, r"passes must be a pipeline string"),
    ({"weights": [1, 2]}, r"weights must be a mapping of weight name to number, got list"),
    ({"weights": {"wc": "high"}}, r"weight 'wc' must be a number"),
    ({"weights": {"wq": 1.0}}, r"unknown weight 'wq' \(known: blur_fraction, blur_threshold, wc, wm, ws, wt\)"),
    ({"weights": {"blur_treshold": 1.0}}, r"unknown weight 'blur_treshold'.*did you mean 'blur_threshold'\?"),
]


@pytest.fixture(scope="module")
def generic():
    module = cortex.parse(L2_PIPELINE)
    assert isinstance(cortex.compile(module, split=False), ShapeGenericPipeline)
    return module


@pytest.mark.parametrize(("options", "message"), BAD, ids=[str(o) for o, _ in BAD])
def test_a_shape_generic_compile_refuses_a_bad_option_at_once(generic, options, message):
    with pytest.raises(CortexError, match=message):
        cortex.compile(generic, split=False, **options)


def test_a_static_compile_refuses_a_weight_nothing_reads():
    with pytest.raises(CortexError, match=r"unknown weight 'wq'"):
        cortex.compile(cortex.build_l2_pipeline(64, 96), split=False, weights={"wq": 1.0})


def test_known_weights_and_pipelines_still_compile(generic):
    compiled = cortex.compile(generic, split=False, mode=None, weights={"wc": 1.0, "wt": 0.0, "ws": 0.0, "wm": 0.0},
                              passes="canonicalize", post_passes="default")
    assert isinstance(compiled, ShapeGenericPipeline)
