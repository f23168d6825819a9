"""Writes an ONNX model with a Resize in tf_crop_and_resize mode, which the importer refuses by name."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

roi = numpy_helper.from_array(np.array([0, 0, 0.2, 0.2, 1, 1, 0.8, 0.8], np.float32), "roi")
scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], name="crop", coordinate_transformation_mode="tf_crop_and_resize")
graph = helper.make_graph(
    [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [roi, scales],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
