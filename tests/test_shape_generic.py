"""Shape-generic pipelines: one module with `?` dimensions, compiled per concrete shape.

The bundled L2 pipeline is shape-generic; bound to a size (padded in IR where
a side is no multiple of the block, tests/test_pad_frames.py) it must give the
very bytes and scores of the static pipeline built for that size, with either
backend and every engine. A shape
that breaks a rule is one CortexError naming the op, the rule and the shape.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.examples.l2_pipeline import L2_PIPELINE, build_l2_pipeline
from cortex.ir import to_text
from cortex.passes.specialize_shapes import is_shape_generic, specialize_shapes, video_block
from cortex.shape_generic import ShapeGenericPipeline
from cortex.video.source import open_video

FRAMES = 4


def generic():
    return cortex.parse(L2_PIPELINE)


def frames_of(h: int, w: int, n: int = FRAMES):
    source = open_video(None, frames=n, height=h, width=w)
    return source, list(source)


def same(a, b) -> bool:
    return all(x[0].tobytes() == y[0].tobytes() and np.array_equal(x[1], y[1]) for x, y in zip(a, b, strict=True))


def test_the_bundled_pipeline_is_shape_generic():
    module = generic()
    assert is_shape_generic(module, "l2_frame") and video_block(module, "l2_frame") == 32
    assert not is_shape_generic(build_l2_pipeline(96, 128), "l2_frame")


@pytest.mark.parametrize("size", [(96, 128), (160, 96)])
def test_bound_generic_module_is_the_static_module(size):
    bound = specialize_shapes(generic(), "l2_frame", [(*size, 3)])
    assert to_text(bound) == to_text(build_l2_pipeline(*size))


@pytest.mark.slow
@pytest.mark.parametrize("size", [(96, 128), (64, 160), (100, 150)], ids=["96x128", "64x160", "100x150-padded"])
def test_same_bytes_and_scores_as_the_static_pipeline(size):
    _, frames = frames_of(*size)
    static = cortex.compile(build_l2_pipeline(*size))
    want = [static(f) for f in frames]
    jit = cortex.compile(generic())  # the jit-like object, compiled on its first call, gives the same
    assert isinstance(jit, ShapeGenericPipeline)
    assert same([jit(f) for f in frames], want)
    assert jit.compiled_shapes == [((*size, 3),)]


@pytest.mark.slow
def test_per_shape_cache_is_bounded_and_visible_and_state_follows_the_shape():
    jit = cortex.compile(generic())
    jit.max_shapes = 2
    _, small = frames_of(64, 64, 2)
    _, wide = frames_of(64, 96, 2)
    _, tall = frames_of(96, 64, 1)
    first = jit(small[0])
    jit(small[1])
    assert jit.state["prev_gray"].shape == (64, 64)
    jit(wide[0])  # a new shape: its program starts from zeros
    assert jit.state["prev_gray"].shape == (64, 96)
    again = jit(small[0])  # back to 64x64: reset, so frame 0 gives what it gave first
    assert same([again], [first])
    jit(tall[0])  # a third shape evicts the least recently used (64x96)
    assert jit.compiled_shapes == [((64, 64, 3),), ((96, 64, 3),)]
    assert set(jit.compile_seconds) == {((64, 64, 3),), ((64, 96, 3),), ((96, 64, 3),)}
    assert "64x64x3" in repr(jit)


def test_reference_interpreter_is_shape_generic_too():
    _, frames = frames_of(64, 96, 2)
    runner = cortex.reference(generic())
    static = cortex.reference(build_l2_pipeline(64, 96))
    assert same([runner(f) for f in frames], [static(f) for f in frames])


def engines_run_a_shape_generic_pipeline(engine, **options):
    _, frames = frames_of(64, 96, 6)
    jit = cortex.compile(generic())
    static = cortex.compile(build_l2_pipeline(64, 96))
    sequential = [static(f) for f in frames]
    got = list(jit.run_video(frames, workers=2, engine=engine, **options))
    assert same(got, sequential)
    assert jit.compiled_shapes == [((64, 96, 3),)]


@pytest.mark.slow
def test_the_threads_engine_runs_a_shape_generic_pipeline():
    engines_run_a_shape_generic_pipeline("threads")


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_the_ray_engine_runs_a_shape_generic_pipeline(local_ray):
    engines_run_a_shape_generic_pipeline("ray", num_cpus=2)


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ((9000, 128, 3), "image H=9000 exceeds the largest supported side, 8192"),
        ((96, 0, 3), "image W=0 must be positive"),
        ((96, 128, 4), "@l2_frame argument #0 (%frame) is tensor<?x?x3xui8>; an input of shape 96x128x4 does not fit it"),
        ((96, 128), "an input of shape 96x128 does not fit it"),
    ],
)
def test_shapes_that_break_a_rule_are_one_clean_error(shape, message):
    jit = cortex.compile(generic())
    with pytest.raises(CortexError) as info:
        jit(np.zeros(shape, np.uint8))
    assert message in str(info.value) and "\n" not in str(info.value)
    assert jit.compiled_shapes == []


def test_a_weight_without_a_value_fails_at_compile_not_at_the_first_frame():
    """A shape-generic entry compiles per frame size at its first call; what the options alone decide is
    checked before that, when `cortex.compile` returns."""
    assert is_shape_generic(cortex.parse(L2_PIPELINE), "l2_frame")
    with pytest.raises(CortexError, match="weight 'wc' has no value"):
        cortex.compile(L2_PIPELINE, mode=None)
    with pytest.raises(CortexError, match="weight 'wm' has no value"):
        cortex.compile(L2_PIPELINE, mode=None, weights={"wc": 1.0})


def test_nothing_has_run_yet_is_a_clean_error():
    jit = cortex.compile(generic())
    with pytest.raises(CortexError, match="no shape has run yet"):
        _ = jit.state


@settings(max_examples=15, deadline=None)
@given(h=st.integers(1, 12), w=st.integers(1, 12))
def test_binding_accepts_exactly_the_multiples_of_the_block(h, w):
    """Property: a frame binds iff both sides are multiples of 32, and the score grid is their quotient."""
    size = (8 * h, 8 * w, 3)
    ok = size[0] % 32 == 0 and size[1] % 32 == 0
    try:
        module = specialize_shapes(generic(), "l2_frame", [size])
    except CortexError as e:
        assert not ok and "is not a multiple of block=32" in str(e)
        return
    assert ok
    fn = next(op for op in module.ops if getattr(op, "sym_name", None) is not None)
    assert fn.function_type.outputs.data[1].get_shape() == (size[0] // 32, size[1] // 32)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_the_shape_cache_holds_at_least_one_program(bad):
    with pytest.raises(CortexError, match=r"max_shapes must be an integer >= 1, got"):
        ShapeGenericPipeline(generic(), "l2_frame", lambda module: module, max_shapes=bad)
    assert ShapeGenericPipeline(generic(), "l2_frame", lambda module: module, max_shapes=1).max_shapes == 1
