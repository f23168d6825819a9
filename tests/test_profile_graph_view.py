"""cortex-profile, and the graph view: table, diff, DOT."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from xdsl.dialects.builtin import Float64Type, FloatAttr, f64
from xdsl.utils.exceptions import PassFailedException

from cortex.driver import run_passes
from cortex.errors import CortexError
from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import make_context, parse_module
from cortex.passes.partition import PartitionPass
from cortex.passes.profile import PROFILE_ATTR, ProfilePass, profile_ms
from cortex.reports import graph_view
from cortex.reports.graph_view import render_diff, render_dot, render_table, stages, write_image

POWER_SAVE = "canonicalize,cortex-specialize-mode{mode=power_save},canonicalize,dce"
HAS_DOT = shutil.which("dot") is not None


def profiled_l2(frames: int = 3, **build):
    module = build_l2_pipeline(96, 128, 32, **build)
    ProfilePass(frames=frames).apply(make_context(), module)
    return module


@pytest.fixture(scope="module")
def l2():
    return profiled_l2()


def cortex_ops(module):
    return [op for op in module.walk() if op.name.startswith("cortex.")]


# ---- cortex-profile ------------------------------------------------------


def test_profile_marks_every_cortex_op_that_ran(l2):
    ops = cortex_ops(l2)
    assert len(ops) == 24  # 12 stages (with the gate's 2 window ops), 3 state reads, 6 weights, 3 state updates
    for op in ops:
        attr = op.attributes[PROFILE_ATTR]
        assert isinstance(attr.type, Float64Type) and attr.value.data > 0.0, op.name
    assert not any(PROFILE_ATTR in op.attributes for op in l2.walk() if not op.name.startswith("cortex."))


def test_a_shape_generic_pipeline_is_profiled_at_a_size_and_keeps_its_types(l2):
    """The bundled pipeline (tensor<?x?x3xui8>) failed: "state 'prev_gray' has a dynamic shape" (the README's
    `cortex-profile` examples). Now a bound copy runs; every op the static pipeline times gets a time."""
    from cortex.examples.l2_pipeline import L2_PIPELINE
    from cortex.ir import to_text

    generic = parse_module(L2_PIPELINE.read_text())
    before = to_text(generic)
    ProfilePass(frames=2, size="96x128").apply(make_context(), generic)
    timed = [op.name for op in cortex_ops(generic) if profile_ms(op) is not None]
    assert timed == [op.name for op in cortex_ops(l2)]
    unprofiled = to_text(generic)
    for op in generic.walk():
        op.attributes.pop(PROFILE_ATTR, None)
    assert to_text(generic) == before and "tensor<?x?x3xui8>" in unprofiled  # nothing else changed


def test_branch_never_taken_gets_no_time_and_loses_a_stale_one():
    module = build_l2_pipeline(96, 128, 32, blur_threshold=1e12)  # every frame "blurred": scoring never runs
    saliency = next(op for op in module.walk() if op.name == "cortex.saliency_dft")
    gray = next(op for op in module.walk() if op.name == "cortex.gray")
    ProfilePass(frames=2).apply(make_context(), module)
    assert profile_ms(gray) is not None and profile_ms(saliency) is None
    saliency.attributes[PROFILE_ATTR] = gray.attributes[PROFILE_ATTR]  # as if from an earlier profile
    ProfilePass(frames=2).apply(make_context(), module)
    assert profile_ms(saliency) is None
    assert "(0.00ms)" in next(line for line in render_table(module).splitlines() if "saliency_dft" in line)


def test_profile_of_a_tensor_graph_uses_its_only_function():
    spec = EXAMPLES["linear_bn"]
    module = parse_module(spec.text())
    ProfilePass(frames=2).apply(make_context(), module)  # entry defaults to l2_frame: falls back to @linear_bn
    assert all(profile_ms(op) is not None for op in cortex_ops(module))


def test_profile_follows_calls_into_pieces(l2):
    parted = l2.clone()
    PartitionPass().apply(make_context(), parted)
    for op in cortex_ops(parted):
        op.attributes.pop(PROFILE_ATTR)
    ProfilePass(frames=2).apply(make_context(), parted)
    assert all(profile_ms(op) is not None for op in cortex_ops(parted))


def test_profile_errors_are_one_line():
    module = build_l2_pipeline(96, 128, 32)
    with pytest.raises(PassFailedException, match=r"no function '@nope' in the module \(functions: l2_frame\)"):
        ProfilePass(entry="nope").apply(make_context(), module)
    with pytest.raises(PassFailedException, match="unknown mode 'turbo'"):
        ProfilePass(mode="turbo").apply(make_context(), module)
    with pytest.raises(PassFailedException, match="frames must be a whole number from 1 to 10000, got 0"):
        ProfilePass(frames=0).apply(make_context(), module)


# ---- the table -----------------------------------------------------------

ROW = re.compile(r"^  (\[compilable\]|\[external_call\])\s+(\w+)\s+(%\w+)?\s+\((\d+\.\d\d)ms\)(?:  in @(\w+))?$")


def table_rows(text: str) -> list[tuple[str, str, float, str | None]]:
    return [(m[1], m[2], float(m[4]), m[5]) for line in text.splitlines() if (m := ROW.match(line))]


def test_table_rows_tags_order_times_and_total(l2):
    text = render_table(l2)
    rows = table_rows(text)
    assert [(tag, name) for tag, name, _, _ in rows] == [
        ("[compilable]", "gray"),
        ("[external_call]", "blur_detector"),
        ("[compilable]", "window_median"),
        ("[external_call]", "scene_change"),
        ("[compilable]", "center_crop"),
        ("[external_call]", "text_roi"),
        ("[compilable]", "saliency_dft"),
        ("[compilable]", "motion_map"),
        ("[compilable]", "score_fusion"),
        ("[compilable]", "temporal_smooth"),
        ("[compilable]", "window_push"),
        ("[external_call]", "encoder"),
    ]
    by_name = {op.name.removeprefix("cortex."): profile_ms(op) for op in cortex_ops(l2)}
    for _, name, ms, piece in rows:
        assert ms == pytest.approx(by_name[name], abs=0.0051) and piece is None  # printed to 0.01 ms
    total = float(re.search(r"Total: (\d+\.\d\d)ms", text)[1])
    assert total == pytest.approx(sum(s.ms for s in stages(l2)), abs=0.0051)
    assert total == pytest.approx(sum(ms for _, _, ms, _ in rows), abs=0.0051 * (len(rows) + 1))


def test_table_without_profile_has_no_time_column():
    """A module never profiled lists its stages without "(0.00ms)" on each, and says how to profile."""
    text = render_table(build_l2_pipeline(96, 128, 32))
    assert "ms)" not in text and "Total:" not in text
    assert "12 stages, not profiled: -p 'cortex-profile{frames=N}'" in text
    assert "[compilable]     saliency_dft         %saliency\n" in text


def test_table_of_partitioned_module_names_the_pieces(l2):
    parted = l2.clone()
    PartitionPass().apply(make_context(), parted)
    rows = table_rows(render_table(parted))
    assert [name for _, name, _, _ in rows] == [name for _, name, _, _ in table_rows(render_table(l2))][:4] + [
        "text_roi", "center_crop", "saliency_dft", "motion_map", "score_fusion", "temporal_smooth", "window_push",
        "encoder",
    ]
    pieces = {name: piece for _, name, _, piece in rows}
    assert pieces["gray"] == "l2_frame_compiled_0" and pieces["saliency_dft"] == "l2_frame_compiled_2"
    assert pieces["window_median"] == "l2_frame_compiled_1" and pieces["window_push"] == "l2_frame_compiled_3"
    assert pieces["text_roi"] is None and pieces["encoder"] is None


# ---- the diff ------------------------------------------------------------

DIFF_ROW = re.compile(r"^  (✓|- REMOVED|- FOLDED|↓ LOWERED|\+ ADDED)\s+(\w+)\s+(%\w+)?\s+\(~(\d+\.\d\d)ms\)")


def diff_rows(text: str) -> list[tuple[str, str, float]]:
    return [(m[1], m[2], float(m[4])) for line in text.splitlines() if (m := DIFF_ROW.match(line))]


def test_power_save_diff_removes_saliency_and_motion(l2):
    after = run_passes(l2.clone(), POWER_SAVE)
    text = render_diff(l2, after)
    rows = diff_rows(text)
    assert len(rows) == 12
    removed = [name for status, name, _ in rows if status == "- REMOVED"]
    assert removed == ["saliency_dft", "motion_map"]
    gone = {name: ms for status, name, ms in rows if status != "✓"}
    # center_crop depends only on the shape: canonicalize folds it to a constant (if it does, it is FOLDED)
    assert set(gone) <= {"saliency_dft", "motion_map", "center_crop"}
    total = re.search(r"Total: (\d+\.\d)ms → (\d+\.\d)ms \(~(\d+\.\d)ms saved\)", text)
    assert total, text
    before_ms = sum(s.ms for s in stages(l2))
    saved_ms = sum(s.ms for s in stages(l2) if s.name in gone)
    assert float(total[1]) == pytest.approx(before_ms, abs=0.051)
    assert float(total[2]) == pytest.approx(before_ms - saved_ms, abs=0.051)
    assert float(total[3]) == pytest.approx(saved_ms, abs=0.051)
    assert saved_ms >= profile_ms(next(op for op in l2.walk() if op.name == "cortex.saliency_dft"))


def test_diff_of_tensor_graph_against_an_unprofiled_copy():
    """Times from the profiled module; the pipeline on a copy without them, so CSE merges %b into %a."""
    spec = EXAMPLES["unoptimized_model"]
    before = parse_module(spec.text())
    after = run_passes(before.clone(), "canonicalize,cse,dce")
    ProfilePass(frames=2).apply(make_context(), before)
    rows = diff_rows(render_diff(before, after))
    assert [(status, name) for status, name, _ in rows] == [
        ("- FOLDED", "mul"),  # %scale = 2 * 3
        ("✓", "relu"),  # %a
        ("- REMOVED", "relu"),  # %b: CSE
        ("- REMOVED", "mul"),  # %c = %a * 1
        ("- REMOVED", "exp"),  # %d: dead
        ("✓", "mul"),
        ("✓", "add"),
        ("✓", "relu"),
        ("✓", "add"),
    ]
    text = render_diff(before, after)
    saved = sum(s.ms for s in stages(before) if s.hint in ("scale", "b", "c", "d"))
    assert float(re.search(r"\(~(\d+\.\d)ms saved\)", text)[1]) == pytest.approx(saved, abs=0.051)


def test_diff_of_unchanged_module_saves_nothing(l2):
    text = render_diff(l2, l2.clone())
    assert all(status == "✓" for status, _, _ in diff_rows(text))
    assert "(~0.0ms saved)" in text


def test_diff_matches_by_name_then_by_occurrence():
    before = parse_module("""
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
  %b = cortex.relu %a : tensor<4xf32> -> tensor<4xf32>
  %c = cortex.exp %b : tensor<4xf32> -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}""")
    after = parse_module("""
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
  %0 = cortex.exp %b : tensor<4xf32> -> tensor<4xf32>
  %t = cortex.tanh %0 : tensor<4xf32> -> tensor<4xf32>
  func.return %t : tensor<4xf32>
}""")
    rows = diff_rows(render_diff(before, after))
    # %b matches %b by name; %a is gone; exp lost its name but is the only exp left; tanh is new
    assert [(status, name) for status, name, _ in rows] == [
        ("- REMOVED", "relu"),
        ("✓", "relu"),
        ("✓", "exp"),
        ("+ ADDED", "tanh"),
    ]


def test_diff_names_folded_and_lowered_stages():
    before = parse_module("""
func.func @f(%x: tensor<4xf32>, %g: tensor<64x64xf32>) -> tensor<4xf32> {
  %k = cortex.center_crop %g : tensor<64x64xf32> -> tensor<2x2xf32>
  %a = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
  %b = cortex.exp %a : tensor<4xf32> -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}""")
    for op, ms in zip([op for op in before.walk() if op.name.startswith("cortex.")], (1.0, 2.0, 4.0)):
        op.attributes["cortex.profile_ms"] = FloatAttr(ms, f64)
    after = parse_module("""
func.func @f(%x: tensor<4xf32>, %g: tensor<64x64xf32>) -> tensor<4xf32> {
  %k = cortex.constant dense<0.5> : tensor<2x2xf32>
  %a = tensor.empty() : tensor<4xf32>
  %b = cortex.exp %a : tensor<4xf32> -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}""")
    text = render_diff(before, after)
    assert [(status, name) for status, name, _ in diff_rows(text)] == [
        ("- FOLDED", "center_crop"),
        ("↓ LOWERED", "relu"),
        ("✓", "exp"),
    ]
    assert "Total: 7.0ms → 6.0ms (~1.0ms saved)" in text  # a lowered stage still runs


# ---- DOT -----------------------------------------------------------------


def test_dot_has_a_node_per_op_and_an_edge_per_use(l2):
    text = render_dot(l2)
    fn = next(iter(l2.ops))
    drawn = [op for op in fn.body.walk() if op.name != "scf.yield"]
    nodes = re.findall(r"^\s+(n\d+) \[label=", text, flags=re.M)
    assert len(nodes) == len(set(nodes)) == len(drawn) + len(fn.args)
    uses = sum(len(op.operands) for op in fn.body.walk())
    assert len(re.findall(r"^\s+n\d+ -> n\d+", text, flags=re.M)) == uses
    clusters = re.findall(r'label="external \(OpenCV\)";[^\n]*\n(.*?)\n\s+\}', text, flags=re.S)
    inside = sorted(re.findall(r'label="(\w+)\\n', "\n".join(clusters)))
    assert inside == ["blur_detector", "encoder", "scene_change", "text_roi"]  # each block's externals, apart
    # state, weights and externals have their own looks
    assert re.search(r'label="state \\"prev_gray\\".*shape=cylinder', text)
    assert re.search(r'label="weight \\"wc\\".*shape=note', text)
    assert re.search(r'label="text_roi\\n%text.*fillcolor="#ffe0b3"', text)
    assert re.search(r'label="saliency_dft\\n%saliency.*fillcolor="#d6eaff"', text)


def test_dot_of_partitioned_module_points_calls_at_pieces(l2):
    parted = l2.clone()
    PartitionPass().apply(make_context(), parted)
    text = render_dot(parted)
    assert 'subgraph "cluster_fn_l2_frame_compiled_2"' in text
    assert text.count('lhead="cluster_fn_l2_frame_compiled_') == 4


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz 'dot' is not installed")
@pytest.mark.parametrize("partitioned", [False, True])
def test_dot_parses_with_graphviz(l2, partitioned):
    module = l2.clone()
    if partitioned:
        PartitionPass().apply(make_context(), module)
    proc = subprocess.run(["dot", "-Tsvg"], input=render_dot(module), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "<svg" in proc.stdout and "saliency_dft" in proc.stdout


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz 'dot' is not installed")
def test_write_image(l2, tmp_path):
    dot = render_dot(l2)
    assert write_image(dot, tmp_path / "g.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    assert write_image(dot, tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert write_image(dot, tmp_path / "g.dot").read_text() == dot
    with pytest.raises(CortexError, match=r"unknown image format '\.bmp'"):
        write_image(dot, tmp_path / "g.bmp")
    with pytest.raises(CortexError, match="dot failed"):
        write_image("digraph {", tmp_path / "bad.svg")


def test_write_image_without_graphviz(monkeypatch, tmp_path):
    monkeypatch.setattr(graph_view.shutil, "which", lambda name: None)
    with pytest.raises(CortexError, match="Graphviz's 'dot' is not installed"):
        write_image("digraph {}", tmp_path / "g.svg")
