"""scripts/device_check.py's `prepare` half runs here (the GPU half runs on a GPU machine): every graph it
hands the device must compile to one IREE segment for each target. Regression: the outlining cost rule
kept the small graphs on NumPy and `prepare` stopped at `conv_bn: @conv_bn is not one IREE
segment ([])` — found only when a device run was prepared."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("iree.compiler", reason="the IREE backend is installed with cortex[iree]")
pytest.importorskip("onnxruntime")

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.mark.slow
def test_prepare_writes_every_graph_for_every_target(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("device_check", SCRIPTS / "device_check.py")
    assert spec is not None and spec.loader is not None
    device_check = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "device_check", device_check)
    spec.loader.exec_module(device_check)
    for name in ("CORTEX_IREE_MIN_INTENSITY", "CORTEX_IREE_MIN_WORK"):  # "" = the rule's defaults; restored after
        monkeypatch.setenv(name, "")  # (prepare sets them for its own process)
    device_check.prepare(tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    names = [entry["name"] for entry in index]
    assert {"cnn", "mlp", "cnn_large", "conv_bn", "gelu_tanh"} <= set(names)
    for name in names:
        for target in device_check.TARGETS:
            assert (tmp_path / f"{name}.{target}.vmfb").stat().st_size > 0, (name, target)
