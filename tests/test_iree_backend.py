"""The IREE backend: legalisation, outlining, the disk cache, and the differential suites on IREE.

IREE compiles take about a second each on CI's 2 cores, so the compiled
pipelines are session-scoped fixtures, the L2 pipeline runs at 96×128, and
the disk cache (a per-session directory unless CORTEX_IREE_CACHE is set)
serves the engines' and Ray actors' second compiles. The passes' own tests
(`cortex-pad-as-tensor-pad`, `cortex-outline-segments`) run on the NumPy
backend and need no IREE.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, REORDERED, assert_f32_close
from helpers.pipelines import EVERY_RUN_ON_IREE, SMALL, small_l2_text
from helpers.scheduling import MODES, assert_same, assert_same_state, frames_of, passes, sequential, with_stage_threads
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.backends.iree.outline_segments import MIN_INTENSITY, MIN_WORK, estimate, outline_segments, runs_of
from cortex.backends.iree.pad_as_tensor_pad import PadAsTensorPadPass
from cortex.backends.numpy.emitter import emit, load
from cortex.examples.small_cnn import ENTRY as CNN_ENTRY
from cortex.examples.small_cnn import build_small_cnn, small_cnn_inputs
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import CortexError, parse_module
from cortex.semantics.defaults import ENCODER_THRESHOLD
from cortex.semantics.vision_kernels import low_score_mask

HAVE_IREE = importlib.util.find_spec("iree") is not None and all(
    importlib.util.find_spec(name) is not None for name in ("iree.compiler", "iree.runtime")
)
needs_iree = pytest.mark.skipif(not HAVE_IREE, reason="iree-base-compiler/iree-base-runtime not installed (pip install 'cortex[iree]')")


@pytest.fixture(scope="module", autouse=True)
def every_run_on_iree():
    """These tests are about IREE running programs, most of them too small for the outlining cost rule (the
    L2 at 96×128 would stay on the host): every run with a linalg op goes to IREE here. The rule's own
    tests below call the pass with its defaults."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in EVERY_RUN_ON_IREE.items():
            mp.setenv(name, value)
        yield


@pytest.fixture(scope="session", autouse=True)
def iree_cache(tmp_path_factory):
    """A disk cache for the session (kept if the caller set CORTEX_IREE_CACHE)."""
    if "CORTEX_IREE_CACHE" in os.environ:
        yield os.environ["CORTEX_IREE_CACHE"]
        return
    path = str(tmp_path_factory.mktemp("iree-cache"))
    os.environ["CORTEX_IREE_CACHE"] = path
    yield path
    del os.environ["CORTEX_IREE_CACHE"]


def numpy_function(module, entry):
    emitted = emit(module)
    return load(emitted, "<test>")[emitted.functions[entry]]


# ---------------------------------------------------------------- cortex-pad-as-tensor-pad (no IREE needed)

PAD_TEMPLATE = """
func.func @f(%x: tensor<{src}xf32>) -> tensor<{dst}xf32> {{
  %c = arith.constant {value} : f32
  %e = tensor.empty() : tensor<{dst}xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<{dst}xf32>) -> tensor<{dst}xf32>
  %r = tensor.insert_slice %x into %f[{offsets}] [{sizes}] [{strides}] : tensor<{src}xf32> into tensor<{dst}xf32>
  func.return %r : tensor<{dst}xf32>
}}
"""


def pad_module(shape, low, high, value=0.5, strides=None):
    dst = [s + lo + hi for s, lo, hi in zip(shape, low, high)]
    return parse_module(PAD_TEMPLATE.format(
        src="x".join(map(str, shape)), dst="x".join(map(str, dst)), value=value,
        offsets=", ".join(map(str, low)), sizes=", ".join(map(str, shape)),
        strides=", ".join(map(str, strides or [1] * len(shape))),
    ))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=4),
       st.sampled_from([0.0, -1.5, 0.5]))
def test_pad_pass_keeps_the_values(dims, value):
    shape, low, high = (list(t) for t in zip(*dims))
    module = pad_module(shape, low, high, value)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    before = numpy_function(module, "f")(x)[0]
    after_module = module.clone()
    PadAsTensorPadPass().apply(None, after_module)  # type: ignore[arg-type]
    names = [op.name for op in after_module.walk()]
    assert "tensor.pad" in names and "tensor.insert_slice" not in names and "linalg.fill" not in names
    after = numpy_function(after_module, "f")(x)[0]
    np.testing.assert_array_equal(after, before)
    np.testing.assert_array_equal(after, np.pad(x, list(zip(low, high)), constant_values=value))


def test_pad_pass_leaves_strided_inserts_alone():
    module = pad_module([2, 2], [0, 0], [0, 2], strides=[1, 2])
    before = str(module)
    PadAsTensorPadPass().apply(None, module)  # type: ignore[arg-type]
    assert str(module) == before


def test_pad_pass_small_cnn_same_as_reference():
    """The CNN whose NCHW pads IREE rejects: legalised, the NumPy backend still matches the reference."""
    module = build_small_cnn()
    plain = cortex.compile(module, entry=CNN_ENTRY, mode=None, post_passes=None)
    padded = cortex.compile(module, entry=CNN_ENTRY, mode=None, post_passes="cortex-pad-as-tensor-pad")
    assert "np.pad" in padded.source and "np.pad" not in plain.source
    reference = cortex.reference(module, entry=CNN_ENTRY, mode=None)
    for x in small_cnn_inputs(3):
        assert_f32_close(padded(x)[0], reference(x)[0], ulps=ACCUMULATED)
        np.testing.assert_array_equal(padded(x)[0], plain(x)[0])


# ---------------------------------------------------------------- cortex-crop-generic-inputs (no IREE needed)

POOL = """
func.func @f(%x: tensor<1x2x{h}x{w}xf32>) -> tensor<1x2x{oh}x{ow}xf32> {{
  %y = cortex.{kind} %x {{kernel_shape = array<i64: {k}, {k}>, strides = array<i64: {s}, {s}>, pads = array<i64: {p}, {p}, {p}, {p}>}} : tensor<1x2x{h}x{w}xf32> -> tensor<1x2x{oh}x{ow}xf32>
  func.return %y : tensor<1x2x{oh}x{ow}xf32>
}}
"""


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["max_pool", "avg_pool"]), st.integers(2, 7), st.integers(2, 7), st.integers(1, 3), st.integers(1, 3),
       st.integers(0, 1))
def test_crop_pass_keeps_pool_values(kind, h, w, k, s, p):
    """Pools whose padded input is longer than their windows read (ceil mode): cut, same values."""
    from cortex.backends.iree.crop_generic_inputs import CropGenericInputsPass

    oh, ow = -(-(h + 2 * p - k) // s) + 1, -(-(w + 2 * p - k) // s) + 1  # ceil mode
    if min(oh, ow) < 1 or k > h + 2 * p or k > w + 2 * p or p >= k or (oh - 1) * s >= h + p or (ow - 1) * s >= w + p:
        return
    try:
        module = parse_module(POOL.format(kind=kind, h=h, w=w, k=k, s=s, p=p, oh=oh, ow=ow))
    except CortexError:
        return  # a window configuration the dialect rejects
    lowered = cortex.lower(module)
    cropped = lowered.clone()
    CropGenericInputsPass().apply(None, cropped)  # type: ignore[arg-type]
    x = np.random.default_rng(h * 10 + w).standard_normal((1, 2, h, w)).astype(np.float32)
    np.testing.assert_array_equal(numpy_function(cropped, "f")(x)[0], numpy_function(lowered, "f")(x)[0])


def test_crop_pass_cuts_the_ceil_pool_onnx_writes():
    """ONNX's test_averagepool_2d_ceil_last_window_starts_on_pad: 2x2 padded to 4x4, one 3x3 window."""
    from cortex.backends.iree.crop_generic_inputs import CropGenericInputsPass

    module = parse_module(POOL.format(kind="avg_pool", h=2, w=2, k=3, s=3, p=1, oh=1, ow=1))
    lowered = cortex.lower(module)
    cropped = lowered.clone()
    CropGenericInputsPass().apply(None, cropped)  # type: ignore[arg-type]
    slices = [op for op in cropped.walk() if op.name == "tensor.extract_slice"]
    assert [str(op.result.type) for op in slices] == ["tensor<1x2x3x3xf32>"]
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(numpy_function(cropped, "f")(x)[0], numpy_function(lowered, "f")(x)[0])


# ---------------------------------------------------------------- cortex-raise-pooling (no IREE needed here)

POOL_NHWC = """
func.func @f(%x: tensor<1x{h}x{w}x3xf32>) -> tensor<1x{oh}x{ow}x3xf32> {{
  %y = cortex.{kind}_nhwc %x {{kernel_shape = array<i64: {k}, {k}>, strides = array<i64: {s}, {s}>, pads = array<i64: {p}, {p}, {p}, {p}>}} : tensor<1x{h}x{w}x3xf32> -> tensor<1x{oh}x{ow}x3xf32>
  func.return %y : tensor<1x{oh}x{ow}x3xf32>
}}
"""


def pool_nhwc_module(kind, h, w, k, s, p):
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    return parse_module(POOL_NHWC.format(kind=kind, h=h, w=w, k=k, s=s, p=p, oh=oh, ow=ow))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["max_pool", "avg_pool"]), st.integers(2, 9), st.integers(2, 9), st.integers(1, 3),
       st.integers(1, 3), st.integers(0, 1))
def test_raise_pooling_keeps_maps_and_combiner(kind, h, w, k, s, p):
    """Each NHWC pool's generic becomes one named op whose maps (as affine functions) and combiner are the
    generic's: the named op computes what the generic did (run on IREE in test_pools_on_iree_match_numpy)."""
    from xdsl.dialects.linalg.ops import GenericOp

    from cortex.backends.iree.raise_pooling import PoolingNhwcMaxOp, PoolingNhwcSumOp, RaisePoolingPass, pooling_of
    from cortex.backends.iree.raise_pooling import coefficients as coef

    if k > h + 2 * p or k > w + 2 * p or p >= k:
        return
    try:
        lowered = cortex.lower(pool_nhwc_module(kind, h, w, k, s, p))
    except CortexError:
        return  # a window configuration the dialect rejects
    (generic,) = [op for op in lowered.walk() if isinstance(op, GenericOp) and pooling_of(op) is not None]
    maps = [coef(m.data) for m in generic.indexing_maps.data]
    combiner = type(next(iter(generic.body.block.ops)))
    RaisePoolingPass().apply(None, lowered)  # type: ignore[arg-type]
    lowered.verify()
    (named,) = [op for op in lowered.walk() if isinstance(op, PoolingNhwcMaxOp | PoolingNhwcSumOp)]
    assert isinstance(named, PoolingNhwcMaxOp if kind == "max_pool" else PoolingNhwcSumOp)
    assert [coef(m) for m in named.get_default_indexing_maps()] == maps
    assert list(named.strides.get_values()) == [s, s] and list(named.dilations.get_values()) == [1, 1]
    assert type(next(iter(named.body.block.ops))) is combiner
    assert not [op for op in lowered.walk() if isinstance(op, GenericOp) and pooling_of(op) is not None]


def test_raise_pooling_leaves_nchw_pools_alone():
    """An NCHW pool (no NHWC named form applies) stays the generic it was, unchanged."""
    from cortex.backends.iree.raise_pooling import RaisePoolingPass

    module = cortex.lower(parse_module("""
    func.func @f(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32> {
      %y = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32> -> tensor<1x4x4x4xf32>
      func.return %y : tensor<1x4x4x4xf32>
    }"""))
    before = str(module)
    RaisePoolingPass().apply(None, module)  # type: ignore[arg-type]
    assert str(module) == before


# ---------------------------------------------------------------- cortex-outline-segments (no IREE needed)


def lowered_l2(mode, text=None):
    module = cortex.parse(text or small_l2_text())
    return cortex.lower(module, passes=passes(mode), post_passes="cortex-fuse-linalg-elementwise")


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_outlined_l2_is_the_same_program(mode):
    """Segments emitted as Python (the NumPy backend): the outlined pipeline gives exactly the same bytes,
    scores and states as the plain one over 20 frames (a scene cut and blurred frames among them)."""
    lowered = lowered_l2(mode)
    segments = outline_segments(lowered.clone(), min_intensity=0, min_work=0)
    assert segments, "the L2 pipeline has extern-free linalg runs"
    for segment in segments:
        assert not [op for op in segment.walk() if op.name == "func.call"]
    module = cortex.parse(small_l2_text())
    plain = cortex.compile(module, mode=mode, passes=passes(mode))
    outlined = cortex.compile(module, mode=mode, passes=passes(mode),
                              post_passes="cortex-fuse-linalg-elementwise,cortex-outline-segments{min-intensity=0 min-work=0}")
    assert "__seg0" in outlined.source and "__seg0" not in plain.source
    frames = frames_of(SMALL, 30)
    assert_same([outlined(f) for f in frames], sequential(plain, frames))
    assert_same_state(outlined.state, plain.state)


def test_outlining_leaves_a_function_without_linalg_alone():
    module = parse_module("""
    func.func @f(%a: f32) -> f32 {
      %b = arith.addf %a, %a : f32
      func.return %b : f32
    }""")
    assert outline_segments(module) == []


def test_outlining_a_scalar_boundary_wraps_it_in_a_rank0_tensor():
    module = parse_module("""
    func.func private @ext(tensor<4xf32>) -> f32
    func.func @f(%x: tensor<4xf32>, %s: f32) -> (tensor<4xf32>, i1) {
      %y = func.call @ext(%x) : (tensor<4xf32>) -> f32
      %e = tensor.empty() : tensor<4xf32>
      %z = linalg.fill ins(%y : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %p = arith.cmpf olt, %y, %s : f32
      func.return %z, %p : tensor<4xf32>, i1
    }""")
    (segment,) = outline_segments(module, min_intensity=0, min_work=0)
    kinds = segment.function_type
    assert [str(t) for t in kinds.inputs.data] == ["tensor<f32>", "tensor<f32>"]
    assert [str(t) for t in kinds.outputs.data] == ["tensor<4xf32>", "tensor<i8>"]


def only_run(text):
    module = parse_module(text)
    fn = next(op for op in module.ops if getattr(op, "sym_name", None) is not None and op.sym_name.data == "f")
    (run,) = runs_of(fn.body.block, 1)
    return module, run


def test_estimate_counts_iteration_space_times_body_ops_and_boundary_elements():
    """work = Σ iteration space × body ops: the matmul's 4·8·16 iterations × (mul, add), the generic's
    4·16 × (addf, mulf); boundary = the elements of the two inputs and the one output."""
    _, run = only_run("""
    func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
      %c = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4x16xf32>
      %z = linalg.fill ins(%c : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
      %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
        ^bb0(%x: f32, %o: f32):
          %s = arith.addf %x, %x : f32
          %p = arith.mulf %s, %x : f32
          linalg.yield %p : f32
      } -> tensor<4x16xf32>
      func.return %r : tensor<4x16xf32>
    }""")
    fill = 4 * 16  # a fill's body is its yield: 1 op per element
    assert estimate(run) == (fill + 4 * 8 * 16 * 2 + 4 * 16 * 2, 4 * 8 + 8 * 16 + 4 * 16)


LOW_INTENSITY = """
    func.func @f(%a: tensor<480x640xf32>, %b: tensor<480x640xf32>) -> tensor<480x640xf32> {
      %e = tensor.empty() : tensor<480x640xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                            affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%a, %b : tensor<480x640xf32>, tensor<480x640xf32>) outs(%e : tensor<480x640xf32>) {
        ^bb0(%x: f32, %y: f32, %o: f32):
          %s = arith.subf %x, %y : f32
          %q = arith.mulf %s, %s : f32
          linalg.yield %q : f32
      } -> tensor<480x640xf32>
      func.return %r : tensor<480x640xf32>
    }"""


def test_cost_rule_keeps_a_low_intensity_elementwise_run_on_the_host():
    """Two ops per pixel over three full frames crossing (intensity 2/3): NumPy's own vectorised pass is as
    fast and IREE would add the copies; with the rule off it is outlined."""
    module, run = only_run(LOW_INTENSITY)
    work, boundary = estimate(run)
    assert work < MIN_INTENSITY * boundary and work >= MIN_WORK
    assert outline_segments(module.clone()) == []
    assert len(outline_segments(module.clone(), min_intensity=0, min_work=0)) == 1


def test_cost_rule_keeps_a_tiny_run_on_the_host_even_at_high_intensity():
    """Ten chained 8×8 matmuls: 80 work per boundary element (above the intensity bar), but 10240 in all, far
    below what pays for IREE's fixed cost per call (the L2's 25-element history runs are of this kind)."""
    chain = "\n".join(f"  %m{i + 1} = linalg.matmul ins(%m{i}, %m{i} : tensor<8x8xf32>, tensor<8x8xf32>) "
                      f"outs(%m{i} : tensor<8x8xf32>) -> tensor<8x8xf32>" for i in range(10))
    text = f"func.func @f(%m0: tensor<8x8xf32>) -> tensor<8x8xf32> {{\n{chain}\n  func.return %m10 : tensor<8x8xf32>\n}}"
    module, run = only_run(text)
    work, boundary = estimate(run)
    assert work >= MIN_INTENSITY * boundary and work < MIN_WORK
    assert outline_segments(module) == []


def test_cost_rule_outlines_the_cnns_and_keeps_the_l2_frame_on_the_host():
    """The measured sides of the rule: the small CNN's whole graph goes to IREE; none of the 96×128 L2
    frame's runs do (NumPy was faster on each of them at 480×640, notes/19-s3.md)."""
    cnn = cortex.lower(build_small_cnn())
    assert len(outline_segments(cnn)) == 1
    for mode in MODES:
        assert outline_segments(lowered_l2(mode)) == []


@pytest.mark.slow
@needs_iree
def test_an_iree_program_with_no_iree_code_runs_as_the_numpy_program_does(monkeypatch):
    """When the cost rule leaves every run of the L2 frame on the host, the IREE backend's program has no
    IREE code: it must not pay for running the frame split on every call (`calls_split`, ~0.3 ms a frame
    at 480×640) — that shape exists to keep engines bit-identical when IREE code runs."""
    for name in EVERY_RUN_ON_IREE:  # the cost rule's defaults (this module switches it off)
        monkeypatch.delenv(name, raising=False)
    iree = cortex.compile(cortex.parse(small_l2_text()), backend="iree")
    numpy_program = cortex.compile(cortex.parse(small_l2_text()))
    executables = iree.program.executables
    assert not executables["entry"].meta.get("segments") and not executables["split"].meta.get("segments")
    assert not iree.program.backend.calls_split
    frames = frames_of(SMALL, 12)
    called = [iree(f) for f in frames]
    iree.reset()
    assert_same(list(iree.run_video(frames, workers=2)), called)  # engines of one backend: exact
    for name in ("entry", "split"):  # the very code the NumPy backend runs, so its results are exactly equal
        assert executables[name].text("source") == numpy_program.program.executables[name].text("source")
    assert_same(called, [numpy_program(f) for f in frames])


# ---------------------------------------------------------------- the IREE backend


@pytest.fixture(scope="module")
def small_cnn_iree():
    return cortex.compile(build_small_cnn(), entry=CNN_ENTRY, mode=None, backend="iree")


@pytest.mark.slow
@needs_iree
def test_small_cnn_on_iree_matches_the_reference(small_cnn_iree):
    """The 1×3×16×16 NCHW CNN whose fill+insert_slice pads IREE 3.13 rejects ('slice along dimension 3
    runs out-of-bounds: 16 >= 8'); legalised, it compiles and matches the reference interpreter."""
    reference = cortex.reference(build_small_cnn(), entry=CNN_ENTRY, mode=None)
    assert list(small_cnn_iree.program.executables["entry"].meta["segments"]) == [f"{CNN_ENTRY}__seg0"]
    for x in small_cnn_inputs(4):
        assert_f32_close(small_cnn_iree(x)[0], reference(x)[0], ulps=ACCUMULATED)


@pytest.mark.slow
@needs_iree
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_tensor_graph_on_iree_matches_the_reference(name):
    spec = EXAMPLES[name]
    module = cortex.parse(str(spec.path))
    compiled = cortex.compile(module, entry=spec.entry, mode=None, backend="iree")
    reference = cortex.reference(module, entry=spec.entry, mode=None)
    for seed in (0, 1):
        inputs = spec.make_inputs(seed)
        for got, want in zip(compiled(*inputs), reference(*inputs)):
            assert got.dtype == want.dtype
            assert_f32_close(got, want, ulps=ACCUMULATED)


POOLS_NHWC = """
func.func @f(%x: tensor<1x13x11x5xf32>) -> (tensor<1x6x5x5xf32>, tensor<1x7x6x5xf32>, tensor<1x13x11x5xf32>, tensor<1x6x5x5xf32>) {
  %a = cortex.max_pool_nhwc %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x13x11x5xf32> -> tensor<1x6x5x5xf32>
  %b = cortex.max_pool_nhwc %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x13x11x5xf32> -> tensor<1x7x6x5xf32>
  %c = cortex.avg_pool_nhwc %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x13x11x5xf32> -> tensor<1x13x11x5xf32>
  %d = cortex.avg_pool_nhwc %x {kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 2>} : tensor<1x13x11x5xf32> -> tensor<1x6x5x5xf32>
  func.return %a, %b, %c, %d : tensor<1x6x5x5xf32>, tensor<1x7x6x5xf32>, tensor<1x13x11x5xf32>, tensor<1x6x5x5xf32>
}
"""


@pytest.mark.slow
@needs_iree
def test_pools_on_iree_match_numpy():
    """NHWC max and average pools (strided, padded, non-square windows) handed to IREE as the named pooling ops
    (cortex-raise-pooling, in the legalisation): max pools equal the NumPy backend's exactly, averages within
    reordered-sum ULPs."""
    from cortex.backends.iree.compiler import legalized

    module = parse_module(POOLS_NHWC)
    handed_over = str(legalized(cortex.lower(module)))
    assert handed_over.count("linalg.pooling_nhwc_max") == 2 and handed_over.count("linalg.pooling_nhwc_sum") == 2
    on_iree = cortex.compile(module, entry="f", mode=None, backend="iree")
    on_numpy = cortex.compile(module, entry="f", mode=None)
    for seed in (0, 1):
        x = np.random.default_rng(seed).standard_normal((1, 13, 11, 5)).astype(np.float32)
        got, want = on_iree(x), on_numpy(x)
        for i in (0, 1):
            np.testing.assert_array_equal(got[i], want[i])
        for i in (2, 3):
            assert_f32_close(got[i], want[i], ulps=REORDERED)


@pytest.mark.slow
@needs_iree
def test_a_tensor_graph_calls_the_compiled_function_directly(small_cnn_iree):
    """The small CNN's entry only calls its one segment: the loaded program calls IREE's function itself (no
    generated Python, no NumPy error policy: ~3 of its ~24 us), with the same results as the profiled host code
    that still wraps the call."""
    from cortex.runtime.iree_runtime import SegmentCall

    assert isinstance(small_cnn_iree._plain, SegmentCall)
    plain = [small_cnn_iree(x)[0] for x in small_cnn_inputs(3)]
    small_cnn_iree.profiling = True
    try:
        assert not isinstance(small_cnn_iree._call, SegmentCall)
        profiled = [small_cnn_iree(x)[0] for x in small_cnn_inputs(3)]
    finally:
        small_cnn_iree.profiling = False
    for a, b in zip(plain, profiled):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(CortexError, match="argument"):
        small_cnn_iree(np.zeros((1, 3, 8, 8), np.float32))


@pytest.mark.slow
@needs_iree
def test_int8_cnn_on_iree_matches_the_reference():
    qmodule, _ = cortex.quantize(build_small_cnn(), small_cnn_inputs(16))
    compiled = cortex.compile(qmodule, entry=CNN_ENTRY, mode=None, backend="iree")
    reference = cortex.reference(qmodule, entry=CNN_ENTRY, mode=None)
    for x in small_cnn_inputs(3, seed=9):
        assert_f32_close(compiled(x)[0], reference(x)[0], ulps=ACCUMULATED)


@needs_iree
def test_f64_is_kept_not_demoted():
    """IREE demotes f64 to f32 by default; the backend passes the flag that keeps it (1e-200² is 1e-400 → 0
    only in f64 arithmetic past its range, while 1e-150² = 1e-300 must survive: f32 would flush it to 0)."""
    module = parse_module("""
    func.func @sq(%x: tensor<3xf64>) -> tensor<3xf64> {
      %e = tensor.empty() : tensor<3xf64>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]} ins(%x : tensor<3xf64>) outs(%e : tensor<3xf64>) {
      ^bb0(%a: f64, %b: f64):
        %m = arith.mulf %a, %a : f64
        linalg.yield %m : f64
      } -> tensor<3xf64>
      func.return %r : tensor<3xf64>
    }""")
    compiled = cortex.compile(module, entry="sq", mode=None, backend="iree")
    x = np.array([1e-150, 3.0, 1.0 + 2.0**-40], np.float64)
    (got,) = compiled(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, x * x)


@needs_iree
@pytest.mark.parametrize(("backend", "device", "message"), [
    ("tvm", "cpu", "unknown backend 'tvm'"),
    ("numpy", "cuda", "numpy backend runs on the CPU only"),
    ("iree", "tpu", "unknown device 'tpu'"),
])
def test_bad_backend_or_device_is_one_line(backend, device, message):
    with pytest.raises(CortexError, match=message):
        cortex.compile(build_small_cnn(), entry=CNN_ENTRY, mode=None, backend=backend, device=device)


def cuda_available() -> bool:
    if not HAVE_IREE:
        return False
    import iree.runtime as rt

    try:
        rt.get_device("cuda")
    except Exception:
        return False
    return True


@needs_iree
@pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU here (scripts/device_check.sh runs this on a GPU machine)")
def test_small_cnn_on_cuda_matches_the_reference():
    compiled = cortex.compile(build_small_cnn(), entry=CNN_ENTRY, mode=None, backend="iree", device="cuda")
    reference = cortex.reference(build_small_cnn(), entry=CNN_ENTRY, mode=None)
    for x in small_cnn_inputs(3):
        assert_f32_close(compiled(x)[0], reference(x)[0], ulps=ACCUMULATED)


@pytest.mark.slow
@needs_iree
@pytest.mark.skipif(cuda_available(), reason="a CUDA GPU is present")
def test_cuda_without_a_gpu_is_one_line():
    with pytest.raises(CortexError, match="IREE device 'cuda' is not available here"):
        cortex.compile(build_small_cnn(), entry=CNN_ENTRY, mode=None, backend="iree", device="cuda")


# ---------------------------------------------------------------- the disk cache

TINY = """
func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def run_tiny(vmfb: bytes) -> np.ndarray:
    from xdsl.dialects.builtin import TensorType, f32

    from cortex.runtime.iree_runtime import LoadedModule

    t = TensorType(f32, [4])
    return LoadedModule(vmfb, "local-sync").function("twice", [t], [t])(np.arange(4, dtype=np.float32))[0]


@pytest.mark.slow
@needs_iree
def test_cache_hit_then_corrupt_and_stale_entries_are_rebuilt(tmp_path, monkeypatch):
    from cortex.backends.iree import compiler as ic

    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path))
    target = ic.TARGETS["cpu"]
    start = (ic.STATS.hits, ic.STATS.compiles, ic.STATS.rebuilt)
    first = ic.compile_text(TINY, target)
    (entry,) = tmp_path.glob("*.vmfb")
    assert (ic.STATS.compiles - start[1], ic.STATS.hits - start[0]) == (1, 0)
    assert ic.compile_text(TINY, target) == first  # a hit: no compile
    assert (ic.STATS.compiles - start[1], ic.STATS.hits - start[0]) == (1, 1)

    data = bytearray(entry.read_bytes())
    data[-100] ^= 0xFF  # bit rot in the module bytes: the checksum catches it
    entry.write_bytes(bytes(data))
    assert ic.compile_text(TINY, target) == first
    assert (ic.STATS.compiles - start[1], ic.STATS.rebuilt - start[2]) == (2, 1)
    assert entry.read_bytes() != bytes(data)  # replaced

    entry.write_bytes(entry.read_bytes()[: len(data) // 2])  # a truncated write
    assert ic.compile_text(TINY, target) == first
    assert ic.STATS.rebuilt - start[2] == 2

    fields = ic.cache_fields(TINY, target, ())
    stale = ic.pack_entry(dict(fields, iree="0.0.1"), b"not a module")  # another version's entry at this key
    entry.write_bytes(stale)
    assert ic.unpack_entry(stale, fields) is None
    vmfb = ic.compile_text(TINY, target)
    assert vmfb == first and ic.STATS.rebuilt - start[2] == 3
    np.testing.assert_array_equal(run_tiny(vmfb), 2 * np.arange(4, dtype=np.float32))


@needs_iree
def test_cache_key_changes_with_target_flags_and_ir():
    from cortex.backends.iree import compiler as ic

    cpu, portable = ic.TARGETS["cpu"], ic.TARGETS["cpu-portable"]
    keys = {
        ic.cache_key(ic.cache_fields(TINY, cpu, ())),
        ic.cache_key(ic.cache_fields(TINY, portable, ())),
        ic.cache_key(ic.cache_fields(TINY, cpu, ("--iree-opt-level=O1",))),
        ic.cache_key(ic.cache_fields(TINY.replace("addf", "mulf"), cpu, ())),
    }
    assert len(keys) == 4


# ---------------------------------------------------------------- the L2 pipeline, every mode and engine


@pytest.fixture(scope="module")
def l2_pairs():
    """(IREE, NumPy) compiled small L2 pipelines per mode, made once per session."""
    def pair(mode):
        module = cortex.parse(small_l2_text())
        return (cortex.compile(module, mode=mode, passes=passes(mode), backend="iree"),
                cortex.compile(module, mode=mode, passes=passes(mode)))
    return {mode: pair(mode) for mode in MODES}


@pytest.fixture(scope="session")
def frames60():
    return frames_of(SMALL)  # 60 frames: blurred 8, 28, 29, 48; cuts at 20, 40


@pytest.mark.slow
@needs_iree
@pytest.mark.parametrize("mode", MODES)
def test_l2_on_iree_matches_numpy_over_60_frames(l2_pairs, frames60, mode):
    iree, numpy_ = l2_pairs[mode]
    iree.reset()
    numpy_.reset()
    assert iree.calls_split and iree.program.executables["split"].meta["segments"], "the frame's linalg runs on IREE"
    same_decisions = 0
    for frame in frames60:
        (e_got, s_got), (e_want, s_want) = iree(frame), numpy_(frame)
        assert_f32_close(s_got, s_want, ulps=ACCUMULATED)
        # the encoder's bytes depend on the score only through its low-score mask: same mask, same bytes
        if np.array_equal(low_score_mask(s_got, ENCODER_THRESHOLD), low_score_mask(s_want, ENCODER_THRESHOLD)):
            same_decisions += 1
            assert e_got.tobytes() == e_want.tobytes()
    assert same_decisions >= 55, f"only {same_decisions} of 60 frames blur the same blocks"
    for name in numpy_.state:
        assert_f32_close(iree.state[name], numpy_.state[name], ulps=ACCUMULATED)


@pytest.mark.slow
@needs_iree
def test_l2_on_iree_every_engine_equals_its_sequential_run(l2_pairs, frames60):
    """Stage-parallel calls, frame-parallel threads (and Ray below) give what the IREE pipeline gives frame
    after frame: exact equality, since the same compiled code runs on the same values."""
    mode = "balanced"
    module = cortex.parse(small_l2_text())
    a = cortex.compile(module, mode=mode, passes=passes(mode), backend="iree")
    want = sequential(a, frames60)
    b = cortex.compile(module, mode=mode, passes=passes(mode), backend="iree")
    assert_same(list(b.run_video(frames60, workers=3)), want)
    assert_same_state(b.state, a.state)
    c = with_stage_threads(cortex.compile(module, mode=mode, passes=passes(mode), backend="iree"), 2)
    assert_same([c(f) for f in frames60], want)


@pytest.mark.slow
@needs_iree
@pytest.mark.xdist_group("ray")
def test_l2_on_iree_ray_equals_sequential(frames60, local_ray):
    mode = "power_save"
    module = cortex.parse(small_l2_text())
    a = cortex.compile(module, mode=mode, passes=passes(mode), backend="iree")
    b = cortex.compile(module, mode=mode, passes=passes(mode), backend="iree")
    want = sequential(a, frames60)
    assert_same(list(b.run_video(frames60, workers=2, engine="ray", chunk=10)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
@needs_iree
def test_profile_at_compile_time_carries_over_to_the_split_program(frames60):
    """Regression: cortex-run profiles a compiled program; on IREE the calls run the split program, whose
    profile was empty (the flag was set on the whole entry before the split took over)."""
    mode = "balanced"
    compiled = cortex.compile(cortex.parse(small_l2_text()), mode=mode, passes=passes(mode), backend="iree")
    compiled.profiling = True
    assert compiled.calls_split and compiled.profiling
    for frame in frames60[:2]:
        compiled(frame)
    assert {"gray", "encoded"} <= set(compiled.profile())


@pytest.mark.slow
@needs_iree
def test_profile_on_iree_shares_a_segment_among_its_source_ops(l2_pairs, frames60):
    iree, _ = l2_pairs["balanced"]
    iree.profiling = True
    try:
        for frame in frames60[:3]:
            iree(frame)
        report = iree.profile(reset=True)
    finally:
        iree.profiling = False
    assert {"gray", "saliency", "encoded"} <= set(report)
