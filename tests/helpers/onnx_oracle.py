"""ONNX Runtime as an oracle: one thread, quiet, on the CPU."""

from __future__ import annotations

import numpy as np
import onnx


def onnx_runtime(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """`model`'s outputs on `feeds` by ONNX Runtime (imported here: only the tests that compare with it need it).

    The model's IR version is lowered to 8, the newest every ONNX Runtime the tests run with reads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4
    model.ir_version = min(model.ir_version, 8)
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
