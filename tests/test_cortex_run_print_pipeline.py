"""`cortex-run --print-pipeline`: every pass a run takes, as one `cortex-opt -p` pipeline — its own steps
(binding a shape-generic pipeline to the video, baking `--weight`, exposing the probes) and then the
compile's — printed without running a frame; and that text is what the run does: applied to the bundled
pipeline it gives the lowered module the run's compile makes."""

from __future__ import annotations

import pytest

import cortex
from cortex.driver import compile_program, run_passes
from cortex.frame_runners import run_options
from cortex.ir import to_text
from cortex.tools.cortex_run import BUNDLED_PIPELINE, gate_inputs, main
from cortex.tools.run_steps import RunSteps

pytestmark = pytest.mark.xdist_group("cortex_run")


def printed(capsys, *argv: str) -> str:
    assert main(["--print-pipeline", "--quiet", *argv]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_run_s_own_steps_come_first_in_order(capsys, tmp_path):
    text = printed(capsys, "--size", "100x130", "--weight", "wc=0", "--report", str(tmp_path / "r.html"))
    steps = ["cortex-pad-frames{entry=l2_frame size=100x130}", "cortex-specialize-shapes{entry=l2_frame shapes=100x130x3}",
             'cortex-specialize-weights{weights="wc=0.0"}', "cortex-expose-blur-gate{entry=l2_frame}",
             "cortex-expose-scene-change{entry=l2_frame}"]
    assert text.startswith(",".join(steps) + ",")
    assert "convert-cortex-to-linalg" in text  # then the compile's own
    assert not (tmp_path / "r.html").exists()  # no frame ran, nothing written


def test_the_reference_interpreter_prints_only_the_run_s_steps(capsys):
    text = printed(capsys, "--size", "96x128", "--runner", "reference")
    assert text == (
        "cortex-pad-frames{entry=l2_frame size=96x128},cortex-specialize-shapes{entry=l2_frame shapes=96x128x3},"
        "cortex-expose-blur-gate{entry=l2_frame}"
    )


def test_the_printed_pipeline_makes_the_module_the_run_compiles(capsys):
    text = printed(capsys, "--size", "96x128", "--weight", "wm=0.5")
    by_text = run_passes(cortex.parse(BUNDLED_PIPELINE), text)
    bind = "cortex-pad-frames{entry=l2_frame size=96x128},cortex-specialize-shapes{entry=l2_frame shapes=96x128x3}"
    steps = RunSteps("l2_frame", bind, {"wm": 0.5})
    module = run_passes(cortex.parse(BUNDLED_PIPELINE), steps.preparation())
    probed = run_passes(module.clone(), steps.probes())
    options = run_options("numpy", "l2_frame", "balanced", None, gate_inputs("auto"))
    compiled = compile_program(probed, options.replace(split=False)).lowered
    # the program builder adds the functions that derive temporal reuse's carried values (`__derive__`), which
    # the runtime calls to seed them; every other function is the printed pipeline's, exactly
    extra = functions(compiled).keys() - functions(by_text).keys()
    assert extra and all(name.startswith("l2_frame__derive__") for name in extra)
    assert {k: v for k, v in functions(compiled).items() if "__derive__" not in k} == functions(by_text)


def functions(module) -> dict[str, str]:
    return {op.sym_name.data: to_text(op) for op in module.ops}
