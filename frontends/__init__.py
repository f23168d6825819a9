"""Frontends: other formats imported into the cortex dialect (a level above it).

`cortex.frontends.onnx.from_onnx` reads an ONNX model into one `func.func @main`.
"""
