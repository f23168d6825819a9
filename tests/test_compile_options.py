"""`cortex.CompileOptions`: the one list of what a compile makes, checked when made, for static and
shape-generic modules alike; the entry a module's only public function by default; the compile steps one
printable pipeline (`compile_pipeline_text`) whose passes, run by hand, give the very same lowered module."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
from helpers.pipelines import SMALL, small_l2_text
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.driver import compile_program, lower, run_passes
from cortex.examples.small_cnn import build_small_cnn, small_cnn_inputs
from cortex.ir import to_text
from cortex.options import COMPILE_OPTION_NAMES, CompileOptions, compile_phases, compile_pipeline_text
from cortex.passes.specialize_mode import parse_weight_values
from cortex.registry import parse_pipeline
from cortex.semantics.modes import INPUT_DEFAULTS

BAD_OPTIONS = [
    ({"mode": "turbo"}, "unknown mode 'turbo'"),
    ({"passes": "nope"}, "passes: unknown pass 'nope'"),
    ({"post_passes": "cortex-nope"}, "post_passes: unknown pass 'cortex-nope'"),
    ({"weights": [1, 2]}, "weights must be a mapping"),
    ({"weights": {"wc": float("nan")}}, "weight 'wc' must be a finite number"),
    ({"split": "no"}, "split must be True or False"),
    ({"specialize": 1}, "specialize must be True or False"),
    ({"precision": "f16"}, "precision must be one of f64, f32"),
    ({"precision": "f32", "frame_work": False}, "needs frame_work=True"),
    ({"backend": "tpu"}, "unknown backend 'tpu'"),
    ({"entry": 3}, "entry must be a function name"),
    ({"bogus": 1}, "unknown compile option bogus"),
]


@pytest.mark.parametrize("module_text", ["static", "generic"])
@pytest.mark.parametrize(("fields", "message"), BAD_OPTIONS, ids=[m for _, m in BAD_OPTIONS])
def test_every_bad_option_is_refused_before_anything_compiles(module_text, fields, message):
    """A shape-generic module compiles on its first frame: its options are still checked at `compile`."""
    text = small_l2_text() if module_text == "static" else cortex.examples.L2_PIPELINE
    with pytest.raises(cortex.CortexError, match=message.replace("(", r"\(")):
        cortex.compile(cortex.parse(text), **fields)


def test_options_object_and_keywords_are_one_list():
    """`cortex.compile`'s signature names no compile option: they are `CompileOptions`' fields, written once."""
    params = set(inspect.signature(cortex.compile).parameters)
    assert params == {"module_or_path", "options", "workers", "profile", "fields"}
    assert COMPILE_OPTION_NAMES == tuple(f.name for f in dataclasses.fields(CompileOptions))
    options = CompileOptions(mode="motion", split=False)
    assert options.replace(mode="power_save").mode == "power_save" and options.mode == "motion"
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.mode = "x"  # type: ignore[misc]
    with pytest.raises(cortex.CortexError, match="unknown mode"):
        options.replace(mode="turbo")


def test_the_weights_are_copied_when_the_options_are_made():
    weights = {"wc": 0.5}
    options = CompileOptions(weights=weights)
    weights["wc"] = float("nan")
    assert options.weights == {"wc": 0.5}


def test_options_object_and_keywords_compile_the_same_program():
    module = cortex.parse(small_l2_text())
    by_object = cortex.compile(module, CompileOptions(mode="power_save", split=False))
    by_keywords = cortex.compile(module, mode="power_save", split=False)
    overridden = cortex.compile(module, CompileOptions(mode="motion", split=False), mode="power_save")
    assert by_object.source == by_keywords.source == overridden.source


def test_the_entry_is_the_only_public_function_by_default():
    """A generic compiler has no favourite entry name: a CNN compiles without naming its function."""
    module = build_small_cnn()
    compiled = cortex.compile(module)
    (x,) = small_cnn_inputs(1)
    (want,) = cortex.reference(module)(x)
    (got,) = compiled(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert compiled.entry == "small_cnn"


def test_several_public_functions_are_listed_when_no_entry_is_named():
    text = (
        "func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> { func.return %x : tensor<4xf32> }\n"
        "func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> { func.return %x : tensor<4xf32> }\n"
        "func.func private @c(%x: tensor<4xf32>) -> tensor<4xf32> { func.return %x : tensor<4xf32> }\n"
    )
    module = cortex.parse(text)
    for make in (cortex.compile, cortex.reference):
        with pytest.raises(cortex.CortexError, match=r"2 public functions \(@a, @b\): say which to run with entry="):
            make(module)
    assert cortex.compile(module, entry="b").entry == "b"
    with pytest.raises(cortex.CortexError, match=r"no function '@d' in the module \(functions: a, b, c\)"):
        cortex.compile(module, entry="d")


@pytest.mark.slow
@pytest.mark.parametrize("fields", [{}, {"mode": "power_save"}, {"weights": {"wc": 0.7}}, {"specialize": False},
                                    {"frame_work": False}, {"precision": "f32"}, {"passes": "cse"}])
def test_the_printed_pipeline_is_what_compile_runs(fields):
    """Running `compile_phases`' pipelines with `cortex.run_passes` gives the module `compile` lowered."""
    module = cortex.parse(small_l2_text())
    options = CompileOptions(split=False, **fields)
    compilation = compile_program(module, options)
    optimise, lowering = compile_phases(options)
    assert compile_pipeline_text(options) == ",".join(filter(None, (optimise, lowering)))
    by_hand = run_passes(module.clone(), optimise) if optimise else module.clone()
    assert to_text(by_hand) == to_text(compilation.optimised)
    lowered = compilation.lowered.clone()  # less the functions that recompute temporal reuse's derived states
    for fn in [op for op in lowered.ops if "__derive__" in getattr(getattr(op, "sym_name", None), "data", "")]:
        lowered.body.block.erase_op(fn)
    assert to_text(run_passes(by_hand, lowering)) == to_text(lowered)
    assert compilation.options.entry == "l2_frame"


def test_the_pipeline_text_names_each_step():
    text = compile_pipeline_text(CompileOptions(mode="power_save", passes="cse", post_passes=None))
    assert text == ('cortex-specialize-weights{weights="wc=0.7,wm=0.0,ws=0.0,wt=0.3"},canonicalize,dce,cse,'
                    "cortex-decompose-scene-change{precision=f64},cortex-temporal-reuse{report=false},"
                    "convert-cortex-to-linalg,convert-cortex-to-extern")
    assert "cortex-specialize-weights" not in compile_pipeline_text(CompileOptions(specialize=False))
    assert "cortex-fuse-linalg-elementwise" in compile_pipeline_text(CompileOptions())


@settings(max_examples=20, deadline=None)
@given(st.dictionaries(st.sampled_from(["wc", "wt", "ws", "wm"]),
                       st.floats(allow_nan=False, allow_infinity=False, width=32), max_size=4))
def test_baked_weights_round_trip_through_the_pipeline_text(weights):
    """Every weight value survives the printed pipeline: the pass gets the very float the call asked for."""
    options = CompileOptions(weights=weights)
    (bake, *_) = parse_pipeline(compile_phases(options)[0])
    table = options.weight_table()[0]
    assert parse_weight_values(bake.weights) == {k: v for k, v in table.items() if k not in INPUT_DEFAULTS}


def test_lower_is_the_lowering_step():
    module = cortex.parse(small_l2_text())
    assert to_text(lower(module)) == to_text(run_passes(module.clone(), "convert-cortex-to-linalg,convert-cortex-to-extern"))


@pytest.mark.slow
def test_a_small_frame_runs_the_same_with_an_options_object():
    module = cortex.parse(small_l2_text())
    frame = np.random.default_rng(0).integers(0, 255, (*SMALL, 3), dtype=np.uint8)
    a = cortex.compile(module, CompileOptions(mode="motion"))(frame)
    b = cortex.compile(module, mode="motion")(frame)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("weights", [{5: 1.0}, {None: 0.2}, {("wc",): 0.1}, {"wc": 0.5, b"wt": 0.1}], ids=repr)
def test_a_weight_name_that_is_not_text_is_one_cortex_error_naming_it(weights):
    bad = next(k for k in weights if not isinstance(k, str))
    with pytest.raises(cortex.CortexError, match=r"weight names are text") as info:
        cortex.compile(cortex.parse(small_l2_text()), weights=weights)
    assert repr(bad) in str(info.value)
    with pytest.raises(cortex.CortexError, match=r"weight names are text"):
        CompileOptions(weights=weights)


def test_weights_without_a_mode_are_baked_in_and_drop_the_stages_they_zero():
    """`mode=None` with `weights=`: the row is the weights given, baked in like a mode's (the printed pipeline
    names the bake), and a stage a zero weight leaves unused is gone from the compiled module, as with a mode."""
    weights = {"wc": 1.0, "wt": 0.0, "ws": 0.0, "wm": 0.0}
    options = CompileOptions(mode=None, weights=weights, split=False)
    assert compile_pipeline_text(options).startswith('cortex-specialize-weights{weights="wc=1.0,wm=0.0,ws=0.0,wt=0.0"}')
    optimised = to_text(compile_program(cortex.parse(small_l2_text()), options).optimised)
    kept = to_text(compile_program(cortex.parse(small_l2_text()), CompileOptions(split=False)).optimised)
    zeroed = ("cortex.text_roi", "cortex.saliency_dft", "cortex.motion_map")
    assert all(op in kept for op in zeroed)
    assert not [op for op in zeroed if op in optimised]


def test_replace_with_a_name_that_is_no_option_is_a_type_error_naming_it():
    """As `dataclasses.replace` would: a misspelt option is refused, not stored on the copy unread."""
    options = CompileOptions(mode="motion")
    with pytest.raises(TypeError, match="'passs'"):
        options.replace(passs="canonicalize")  # type: ignore[call-arg]


def test_replace_with_another_pipeline_compiles_that_pipeline():
    """The pipelines `replace` did not change are handed over; one it changed is parsed again (and checked)."""
    options = CompileOptions(mode="motion", passes="canonicalize", post_passes="cse")
    other = options.replace(passes="cortex-fuse-batch-norm,canonicalize")
    assert [p.name for p in other.pass_list("passes")] == ["cortex-fuse-batch-norm", "canonicalize"]
    assert [p.name for p in other.pass_list("post_passes")] == ["cse"]
    assert "cortex-fuse-batch-norm" in compile_pipeline_text(other)
    with pytest.raises(cortex.CortexError, match="passes: "):
        options.replace(passes="no-such-pass")
