"""Writes an ONNX model with a grouped (depthwise) Conv: cortex.conv2d with group = 4."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.ones((4, 1, 3, 3), np.float32), "w")
node = helper.make_node("Conv", ["x", "w"], ["y"], name="depthwise", group=4)
graph = helper.make_graph(
    [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
