"""Writes `m.onnx` (y = x + w) into the folder argv[1], `w` external data with the entries argv[2:] (key=value),
and `w.bin`: 4 float32 followed by 1000 bytes that are not the tensor's."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

folder = Path(sys.argv[1])
folder.mkdir(parents=True, exist_ok=True)
(folder / "w.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes() + b"\xff" * 1000)
w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
w.data_location = TensorProto.EXTERNAL
for entry in sys.argv[2:]:
    key, value = entry.split("=", 1)
    w.external_data.add(key=key, value=value.replace("NUL", "\0"))
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"], name="n")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), folder / "m.onnx")
