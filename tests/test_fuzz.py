"""The fuzz suite: mutated examples and API misuse, on a bounded budget.

Every case must end in success or a clean error: for text, one located
`file:line:col: error:` line from `cortex.parse` and exit 1 from `cortex-opt`;
for the Python API, a `CortexError` with a one-line message. Accepted mutants
are lowered, emitted, and (when installed) checked with upstream `mlir-opt`.
`tests/helpers/fuzz_cases.py --cases N` runs a longer campaign with the same operators.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from helpers.fuzz_cases import MLIR_OPT, MUTATORS, SEEDS, classify, layout_case, mutate, output_case, quant_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.registry import cortex_passes

SCALE = int(os.environ.get("CORTEX_FUZZ_SCALE", "1"))
"""CI runs the bounded budget; CORTEX_FUZZ_SCALE=10 runs ten times as many, newly drawn, cases."""


def examples(n: int) -> int:
    return n * SCALE


FUZZ = settings(
    max_examples=examples(40),
    deadline=None,  # no per-case time limit (a loaded machine makes one flaky); pytest-timeout stops a hang
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=SCALE == 1,  # the same cases on every CI run; a scaled run explores new ones
)

mutants = st.builds(
    mutate,
    st.sampled_from(sorted(SEEDS)),
    st.lists(st.sampled_from(MUTATORS), min_size=1, max_size=3),
    st.integers(0, 2**32 - 1).map(random.Random),
)


def assert_clean(call) -> object:
    """`call()` succeeds or raises a CortexError with a one-line message; returns its result or the error."""
    try:
        return call()
    except CortexError as e:
        assert "\n" not in str(e).strip(), f"multi-line error: {e}"
        assert "internal error" not in str(e), str(e)
        assert str(e).strip(), "an empty error message"
        return e


@pytest.mark.slow
@pytest.mark.timeout(240 * SCALE)
@settings(FUZZ, max_examples=examples(80))
@given(mutants)
def test_mutated_examples_are_accepted_or_cleanly_rejected(text):
    classify(text, mlir_opt=False, cli=False)


@pytest.mark.timeout(240 * SCALE)
@settings(FUZZ, max_examples=examples(16))
@given(mutants)
def test_mutants_through_cortex_opt_and_mlir_opt(text):
    """The CLI agrees with the API; what cortex lowers, mlir-opt 22 accepts."""
    classify(text, mlir_opt=MLIR_OPT.exists(), cli=True)


@pytest.mark.timeout(120 * SCALE)
@FUZZ
@given(
    st.one_of(
        st.none(),
        st.binary(max_size=40),
        st.integers(),
        st.floats(),
        st.lists(st.text(max_size=5), max_size=3),
        st.text(max_size=60),
        st.sampled_from(["builtin.module {}", "/nonexistent/x.mlir", "", "\ufeff", "func.func @f() {"]),
    )
)
def test_parse_misuse(value):
    assert_clean(lambda: cortex.parse(value))


@pytest.mark.timeout(120 * SCALE)
@FUZZ
@given(
    st.one_of(st.integers(-100, 20000), st.floats(allow_nan=True), st.none(), st.booleans()),
    st.one_of(st.integers(-100, 20000), st.sampled_from([32, 64, 0.5])),
    st.sampled_from([32, 16, 0, -32, 7, 64]),
)
def test_build_l2_pipeline_misuse(height, width, block):
    result = assert_clean(lambda: cortex.build_l2_pipeline(height, width, block))
    if not isinstance(result, CortexError):
        cortex.ir.verify_located(result)


SMALL = """func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = cortex.weight "wc" : f32
  %t = tensor.from_elements %w : tensor<f32>
  %y = cortex.mul %x, %t : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %p = cortex.state "p" : tensor<2x3xf32>
  %z = cortex.add %y, %p : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  cortex.update_state "p" = %z : tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
"""

weight_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.text(max_size=3), st.none(), st.booleans()
)


@pytest.mark.timeout(240 * SCALE)
@settings(FUZZ, max_examples=examples(25))
@given(
    st.sampled_from(["reference", "compile"]),
    st.one_of(st.none(), st.sampled_from(["balanced", "turbo", ""]), st.integers()),
    st.one_of(
        st.none(),
        st.dictionaries(st.sampled_from(["wc", "wt", "x"]), weight_values, max_size=3),
        st.lists(st.floats(), max_size=2),
        st.integers(),
    ),
    st.one_of(st.none(), st.integers(), st.sampled_from(["canonicalize", "nope", "cse{", ""])),
)
def test_runner_construction_misuse(kind, mode, weights, passes):
    module = cortex.parse(SMALL)
    if kind == "reference":
        assert_clean(lambda: cortex.reference(module, entry="f", mode=mode, weights=weights))
    else:
        assert_clean(lambda: cortex.compile(module, entry="f", mode=mode, weights=weights, passes=passes))


@pytest.fixture(scope="module")
def small_runners():
    module = cortex.parse(SMALL)
    return {
        "reference": cortex.reference(module, entry="f", mode=None, weights={"wc": 2.0}),
        "compiled": cortex.compile(module, entry="f", mode=None, weights={"wc": 2.0}),
    }


arrays = st.builds(
    lambda dtype, shape, masked: (np.ma.masked_array if masked else np.asarray)(np.zeros(shape, dtype)),
    st.sampled_from(["float32", "float64", "uint8", "int64", "bool"]),
    st.sampled_from([(2, 3), (3, 2), (2, 3, 1), (), (0,)]),
    st.booleans(),
)


@pytest.mark.timeout(120 * SCALE)
@settings(FUZZ, max_examples=examples(30))
@given(
    kind=st.sampled_from(["reference", "compiled"]),
    args=st.lists(st.one_of(arrays, st.none(), st.floats(), st.text(max_size=2)), max_size=2),
    state=st.one_of(st.none(), st.just("keep"), st.dictionaries(st.sampled_from(["p", "q"]), arrays, max_size=2)),
)
def test_runner_call_misuse(small_runners, kind, args, state):
    runner = small_runners[kind]
    runner.reset()
    if state != "keep":
        runner.state = state
    assert_clean(lambda: runner(*args))
    runner.reset()


# Cortex's passes and the xDSL ones Cortex uses (other xDSL passes are not Cortex's to harden).
pass_names = st.sampled_from(sorted(set(cortex_passes()) - {"cortex-profile"}) + ["canonicalize", "cse", "dce", "nope", ""])
options = st.sampled_from(["", "{mode=power_save}", "{mode=turbo}", "{frames=2}", "{x=1}", "{", "{mode=}", '{table="/nonexistent"}'])


@pytest.mark.timeout(240 * SCALE)
@settings(FUZZ, max_examples=examples(30))
@given(st.lists(st.tuples(pass_names, options).map("".join), min_size=1, max_size=3).map(",".join))
def test_run_passes_misuse_leaves_failed_modules_untouched(pipeline):
    module = cortex.build_l2_pipeline(64, 64)
    before = cortex.to_text(module)
    result = assert_clean(lambda: cortex.run_passes(module, pipeline))
    if isinstance(result, CortexError):
        assert cortex.to_text(module) == before
    else:
        cortex.ir.verify_located(module)


# ---------------------------------------------------------------- beyond IR text


@pytest.mark.timeout(240 * SCALE)
@settings(FUZZ, max_examples=examples(12))
@given(st.integers(0, 2**32 - 1))
def test_quantisation_inputs_are_accepted_or_cleanly_rejected(seed):
    quant_case(random.Random(seed))  # raises InternalError on anything but success or one CortexError line


@pytest.mark.timeout(240 * SCALE)
@settings(FUZZ, max_examples=examples(20))
@given(st.integers(0, 2**32 - 1))
def test_layout_conversion_keeps_results_or_rejects_cleanly(seed):
    layout_case(random.Random(seed))


@pytest.mark.timeout(120 * SCALE)
@settings(FUZZ, max_examples=examples(40))
@given(st.integers(0, 2**32 - 1))
def test_output_paths_keep_their_kind_or_reject_cleanly(seed):
    output_case(random.Random(seed))
