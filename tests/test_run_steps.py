"""cortex-run's probes on an entry that has no blur gate: `--report` makes the scene measure a result, and
nothing of it is read as the gate's values (the frame log, the records and the report say "no gate")."""

from __future__ import annotations

import json

import numpy as np
from helpers.pipelines import SMALL

from cortex.tools.cortex_run import main

H, W = SMALL
GATELESS = f"""builtin.module {{
  func.func @l2_frame(%frame: tensor<{H}x{W}x3xui8>) -> (tensor<?xui8>, tensor<3x4xf32>) {{
    %gray = cortex.gray %frame : tensor<{H}x{W}x3xui8> -> tensor<{H}x{W}xf32>
    %prev_gray = cortex.state "prev_gray" : tensor<{H}x{W}xf32>
    %prev_score = cortex.state "prev_score" : tensor<3x4xf32>
    %scene = cortex.scene_change %gray, %prev_gray : (tensor<{H}x{W}xf32>, tensor<{H}x{W}xf32>) -> f32
    %center = cortex.center_crop %gray : tensor<{H}x{W}xf32> -> tensor<3x4xf32>
    %smoothed = cortex.temporal_smooth %center, %prev_score, %scene : (tensor<3x4xf32>, tensor<3x4xf32>, f32) -> tensor<3x4xf32>
    cortex.update_state "prev_gray" = %gray : tensor<{H}x{W}xf32>
    cortex.update_state "prev_score" = %smoothed : tensor<3x4xf32>
    %encoded = cortex.encoder %frame, %smoothed : (tensor<{H}x{W}x3xui8>, tensor<3x4xf32>) -> tensor<?xui8>
    func.return %encoded, %smoothed : tensor<?xui8>, tensor<3x4xf32>
  }}
}}
"""


def test_a_report_on_an_entry_without_a_blur_gate_reads_no_gate_values(tmp_path, capsys):
    """The scene change is the only probe: the run succeeds with the frame log on, every record's gate fields
    are null, the report's blur gate row says none, and the scores are those of the pipeline as written."""
    pipeline = tmp_path / "gateless.mlir"
    pipeline.write_text(GATELESS)
    page, records = tmp_path / "report.html", tmp_path / "scores.jsonl"
    rc = main(["--pipeline", str(pipeline), "--size", f"{H}x{W}", "--frames", "6", "--quiet", "--dce-frames", "0",
               "--report", str(page), "--scores-jsonl", str(records)])
    err = capsys.readouterr().err
    assert rc == 0, err
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    assert [r["index"] for r in rows] == list(range(6))
    assert all(r["blurred"] is None and r["sharpness"] is None and r["threshold"] is None for r in rows)
    assert all(np.asarray(r["score"]).shape == (3, 4) for r in rows)
    assert "blur gate</td><td>none" in page.read_text()
