"""cortex-opt as mlir-opt users expect it: anchored pipelines, one pipeline flag, single-dash
long flags, --mlir-print-ir-before-all, --mlir-pass-statistics, --mlir-elide-elementsattrs-if-larger on an
imported ONNX model, "did you mean" for ops and pass options, and --version naming cortex first."""

from __future__ import annotations

import io
import re
import sys

import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.frontends.onnx_models import mlp
from cortex.registry import PipelineError, parse_pipeline, pipeline_passes
from cortex.tools.cortex_opt import main
from cortex.tools.opt_args import normalise_argv

FOLD = """func.func @fold() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}
"""


def opt(capsys, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        rc = main(list(argv))
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    return rc, out, err


PASSES = ["canonicalize", "cse", "dce", "cortex-dce{mode=power_save}", "cortex-canonicalize"]


@st.composite
def anchored(draw, depth: int = 0) -> tuple[str, list[str]]:
    """A pipeline with random MLIR anchors, and the passes it holds, in order."""
    parts, passes = [], []
    for _ in range(draw(st.integers(1 if depth else 0, 3))):
        if depth < 2 and draw(st.booleans()):
            text, inner = draw(anchored(depth + 1))
            parts.append(f"{'func.func' if depth == 0 else 'any'}({text})")
            passes += inner
        else:
            p = draw(st.sampled_from(PASSES))
            parts.append(p)
            passes.append(p)
    space = draw(st.sampled_from(["", " "]))
    return f",{space}".join(parts), passes


@settings(max_examples=60, deadline=None, database=None)
@given(anchored(), st.booleans())
def test_an_anchored_pipeline_is_its_passes_in_order(pipeline, module_anchor):
    """Any nesting of builtin.module/func.func/any anchors parses to the passes of the flat list."""
    text, passes = pipeline
    spec = f"builtin.module({text})" if module_anchor else text
    assert parse_pipeline(spec) == parse_pipeline(",".join(passes))


@pytest.mark.parametrize("spec, message", [
    ("builtin.module(func.func(cse)", "'builtin.module(' is never closed"),
    ("gpu.module(cse)", "cannot anchor passes on 'gpu.module'; did you mean 'builtin.module'?"),
    ("func.func(func.func(cse))", "'func.func(...)' cannot be nested in 'func.func(...)'"),
    ("builtin.module(builtin.module(cse))", "'builtin.module(...)' cannot be nested in 'builtin.module(...)'"),
])
def test_a_wrong_anchor_is_a_located_pipeline_error(spec, message):
    with pytest.raises(PipelineError, match=re.escape(message)) as caught:
        parse_pipeline(spec)
    assert caught.value.at is not None and caught.value.at[2] == spec


@pytest.mark.parametrize("value", ['"a\\"}b"', '"x\\"("', '"q}("'])
def test_a_quoted_pass_option_holds_brackets_and_escaped_quotes(value):
    """A bracket inside a quoted option value (also after an escaped quote) neither closes nor opens anything."""
    pad = f"cortex-pad-frames{{entry={value} size=2x2}}"
    assert [text for text, _ in pipeline_passes(f"cse,{pad},canonicalize")] == ["cse", pad, "canonicalize"]


def test_the_nested_pipeline_prints_what_the_plain_one_prints(capsys):
    plain = opt(capsys, "-p", "canonicalize", stdin=FOLD)
    nested = opt(capsys, "-p", "builtin.module(func.func(canonicalize))", stdin=FOLD)
    flag = opt(capsys, "--pass-pipeline=builtin.module(func.func(canonicalize))", stdin=FOLD)
    assert plain[0] == 0 and plain == nested == flag
    assert cortex.to_text(cortex.run_passes(cortex.parse(FOLD), "builtin.module(func.func(canonicalize))")) == \
        cortex.to_text(cortex.run_passes(cortex.parse(FOLD), "canonicalize"))


@pytest.mark.parametrize("argv", [
    ["--pass-pipeline=builtin.module(canonicalize)", "-p", "cse"],
    ["-p", "cse", "--pass-pipeline", "builtin.module(canonicalize)"],
    ["-p", "cse", "-p", "canonicalize"],
    ["-pcse", "--passes=canonicalize"],
    ["--cse", "-p", "canonicalize"],
])
def test_two_pipelines_are_refused_not_one_dropped(capsys, argv):
    rc, out, err = opt(capsys, *argv, stdin=FOLD)
    assert rc == 2 and out == ""
    assert "the pass pipeline is given 2 times" in err and len(err.splitlines()) == 1


def test_single_dash_long_flags_are_the_double_dash_ones():
    arity = {"--split-input-file": False, "-o": True, "--output-file": True, "-p": True, "--passes": True,
             "--mlir-print-ir-after-all": False}
    assert normalise_argv(["-split-input-file", "-mlir-print-ir-after-all", "x.mlir"], arity) == \
        ["--split-input-file", "--mlir-print-ir-after-all", "x.mlir"]
    assert normalise_argv(["-canonicalize", "-cse"], arity) == ["-p", "canonicalize,cse"]
    assert normalise_argv(["-pass-pipeline=builtin.module(cse)"], arity) == ["-p", "builtin.module(cse)"]
    # an option's value is never read as a flag: `-o -cse` writes a file named -cse
    assert normalise_argv(["-o", "-cse", "-p", "-canonicalize"], arity) == ["-o", "-cse", "-p", "-canonicalize"]
    assert normalise_argv(["-x"], arity) == ["-x"]  # a short flag stays (argparse says it is unknown)


def test_single_dash_flags_run(capsys, tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text(FOLD + "// -----\n" + FOLD)
    rc, out, err = opt(capsys, str(path), "-split-input-file", "-canonicalize", "-mlir-print-ir-before-all")
    assert rc == 0, err
    assert out.count("arith.constant 3 : i32") == 2 and out.count("// -----") == 1
    assert err.count("// -----// IR Dump Before CanonicalizePass (canonicalize) //----- //") == 2


def test_print_ir_before_all_precedes_each_pass_and_after_all_follows_it(capsys):
    rc, _, err = opt(capsys, "-p", "cse,canonicalize", "--mlir-print-ir-before-all", "--mlir-print-ir-after-all",
                     stdin=FOLD)
    assert rc == 0
    titles = re.findall(r"IR Dump (Before|After) \w+ \((\w+)\)", err)
    assert titles == [("Before", "cse"), ("After", "cse"), ("Before", "canonicalize"), ("After", "canonicalize")]


def test_pass_statistics_count_what_each_pass_erased_and_created(capsys):
    rc, _, err = opt(capsys, "-p", "cse,canonicalize", "--mlir-pass-statistics", stdin=FOLD)
    assert rc == 0
    stats = re.findall(r"\(S\)\s+(\d+) (ops-\w+)", err)
    # cse: nothing to merge; canonicalize folds addi(1, 2): it and its two constants go, one constant 3 comes
    assert stats == [("0", "ops-erased"), ("0", "ops-created"), ("6", "ops-after"),
                     ("3", "ops-erased"), ("1", "ops-created"), ("4", "ops-after")], err
    assert "... Pass statistics report ..." in err


def test_an_imported_onnx_model_prints_its_weights_elided(capsys, tmp_path):
    """The 30 KB weight lines of an imported model become `dense_resource<__elided__>`, as mlir-opt prints them;
    the elided text still parses (with xDSL and with upstream mlir-opt's syntax)."""
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp(), path)
    rc, full, err = opt(capsys, str(path))
    assert rc == 0, err
    assert max(map(len, full.splitlines())) > 30_000
    rc, elided, err = opt(capsys, str(path), "--mlir-elide-elementsattrs-if-larger=16")
    assert rc == 0, err
    assert max(map(len, elided.splitlines())) < 300
    kept = re.findall(r"dense<(\[[^>]*\])>", elided)
    assert all(len(re.findall(r"[-\d.e+]+", k)) <= 16 for k in kept)  # the small ones stay
    assert elided.count("dense_resource<__elided__> : tensor<") + len(kept) == full.count("dense<[") + full.count('dense<"0x')
    assert elided.count("dense_resource<__elided__>") > 0
    assert cortex.parse(elided.replace("dense_resource<__elided__>", "dense<0.0>"))  # the rest is intact


def test_elision_spares_splats_and_small_attributes(capsys):
    text = """func.func @f() -> (tensor<4xf32>, tensor<4xf32>) {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = arith.constant dense<1.0> : tensor<4xf32>
  func.return %w, %s : tensor<4xf32>, tensor<4xf32>
}
"""
    _, kept, _ = opt(capsys, "--mlir-elide-elementsattrs-if-larger=4", stdin=text)
    _, elided, _ = opt(capsys, "--mlir-elide-elementsattrs-if-larger=3", stdin=text)
    assert "dense_resource" not in kept and "dense<[1.000000e+00" in kept
    assert "arith.constant dense_resource<__elided__> : tensor<4xf32>" in elided
    assert "arith.constant dense<1.000000e+00> : tensor<4xf32>" in elided


def test_did_you_mean_an_op_and_a_pass_option(capsys):
    rc, _, err = opt(capsys, stdin=FOLD.replace("arith.addi", "arith.addii"))
    assert rc == 1 and "unknown operation 'arith.addii'" in err and "did you mean 'arith.addi'?" in err
    rc, _, err = opt(capsys, "-p", "cortex-dce{mod=power_save}", stdin=FOLD)
    assert rc == 1 and "pass 'cortex-dce' has no option 'mod' (did you mean 'mode'?)" in err


def test_semantics_on_a_shape_generic_module_suggests_binding_its_shapes(capsys):
    rc, _, err = opt(capsys, str(cortex.examples_path("l2_pipeline.mlir")) if hasattr(cortex, "examples_path")
                     else str(__import__("pathlib").Path(cortex.__file__).parent / "examples" / "l2_pipeline.mlir"),
                     "-p", "canonicalize", "--verify-each-pass-semantics=1")
    assert rc == 1
    assert "@l2_frame is shape-generic: start the pipeline with cortex-specialize-shapes" in err


def test_version_names_cortex_first(capsys):
    with pytest.raises(SystemExit):
        from cortex.tools.cortex_opt import CortexOptMain

        CortexOptMain(["--version"])
    out = capsys.readouterr().out
    assert out.startswith(f"cortex-opt {cortex.__version__} (xDSL "), out
