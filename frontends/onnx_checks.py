"""What a model must be before the ONNX importer reads it.

The importer's handlers assume well-formed nodes: enough inputs, attributes
of the declared types, sizes that fit in memory. A hostile or broken model
broke those assumptions with raw IndexError/TypeError from deep inside, or
-- worse -- with silently truncated values (a float `strides`). So every node
is checked first against ONNX's own schema (`onnx.defs.get_schema`: arity,
required inputs and attributes, attribute types), every integer attribute and
every dimension is bounded, and the model file's external data may not leave
its folder. Every failure is one `OnnxImportError` line naming the node, its
operator and the attribute or input.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from cortex.errors import CortexError

MAX_ELEMENTS = 2**31 - 1
"""The most elements a tensor of an imported model may have (8 GiB of float32)."""

MAX_ATTRIBUTE_INT = 2**31 - 1
"""The largest magnitude of an integer attribute (pads, strides, kernel sizes, axes, ...)."""

MAX_MESSAGE = 400
"""An error message is one line of at most this many characters (a model can make them megabytes)."""

ATTRIBUTE_TYPE_NAMES = {
    onnx.AttributeProto.FLOAT: "a float", onnx.AttributeProto.INT: "an integer", onnx.AttributeProto.STRING: "a string",
    onnx.AttributeProto.TENSOR: "a tensor", onnx.AttributeProto.GRAPH: "a graph",
    onnx.AttributeProto.FLOATS: "a list of floats", onnx.AttributeProto.INTS: "a list of integers",
    onnx.AttributeProto.STRINGS: "a list of strings", onnx.AttributeProto.TENSORS: "a list of tensors",
    onnx.AttributeProto.GRAPHS: "a list of graphs", onnx.AttributeProto.UNDEFINED: "of no type (UNDEFINED)",
}


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


class OnnxImportError(CortexError):
    """One node (or the graph) that the cortex dialect cannot express: always one line, never huge."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


# ---------------------------------------------------------------- the model file


def load_model(model_or_path: onnx.ModelProto | str | Path | bytes) -> onnx.ModelProto:
    """A ModelProto from a ModelProto, a path to a .onnx file, or serialized bytes; external data
    (a path's only) is read from inside the model's folder."""
    if isinstance(model_or_path, onnx.ModelProto):
        model = model_or_path
    elif isinstance(model_or_path, (bytes, bytearray)):
        model = parse_bytes(bytes(model_or_path), "the model bytes")
    elif isinstance(model_or_path, (str, os.PathLike)):
        path = Path(model_or_path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise OnnxImportError(f"cannot read {path}: {e.strerror or e}") from None
        model = parse_bytes(data, str(path))
        load_external_data(model, path)
    else:
        raise OnnxImportError(
            f"from_onnx takes an onnx.ModelProto, a path or bytes, got {type(model_or_path).__name__}"
        )
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise OnnxImportError("the model has no graph (no nodes and no outputs): not an ONNX model?")
    return model


def parse_bytes(data: bytes, where: str) -> onnx.ModelProto:
    if not data:
        raise OnnxImportError(f"{where} is empty (0 bytes), not an ONNX model")
    try:
        return onnx.load_from_string(data)
    except Exception as e:  # protobuf's DecodeError and friends
        raise OnnxImportError(f"{where}: not an ONNX model ({type(e).__name__}: {e})") from None


def tensors_of(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """The initializers and the tensors in node attributes (Constant's value), subgraphs not included."""
    yield from model.graph.initializer
    for node in model.graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.TENSOR:
                yield attribute.t


def load_external_data(model: onnx.ModelProto, path: Path) -> None:
    """Read each tensor's external data, refusing a location outside the model's folder (`../`, absolute, a link).

    Exactly the bytes the tensor declares (its element count times its element size) are read, and
    checked before reading: a `length` that disagrees (`10**12` once reached a MemoryError), data past
    the file's end, or no `length` at all (the whole neighbouring file was read) cannot make it read more.
    """
    folder = Path(os.path.realpath(path.parent))
    for tensor in tensors_of(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        entries = {e.key: e.value for e in tensor.external_data}
        location = entries.get("location", "")
        where = f"onnx initializer '{tensor.name}'"
        shown = one_line(repr(location), 120)
        if "\0" in location:
            raise OnnxImportError(f"{where}: external data location {shown} contains a NUL character")
        try:
            target = Path(os.path.realpath(folder / location)) if location else None
        except (OSError, ValueError) as e:
            raise OnnxImportError(f"{where}: external data location {shown} is not a usable path ({e})") from None
        if target is None or (target != folder and folder not in target.parents):
            raise OnnxImportError(f"{where}: external data {shown} is outside the model's folder {folder}")
        try:
            exists = target.is_file()
        except OSError as e:  # a name too long for the file system, ...
            raise OnnxImportError(f"{where}: external data location {shown} is not a usable path ({e.strerror})") from None
        if not exists:
            raise OnnxImportError(f"{where}: external data file {shown} does not exist")
        size = declared_bytes(tensor, where)
        offset = external_number(entries, "offset", 0, where)
        length = external_number(entries, "length", size, where)
        if length != size:
            raise OnnxImportError(
                f"{where}: external data length {length} is not the {size} bytes its type and dimensions declare"
            )
        try:
            available = target.stat().st_size
            if offset + size > available:
                raise OnnxImportError(
                    f"{where}: external data {shown} holds {available} bytes, fewer than offset {offset} + {size}"
                )
            with open(target, "rb") as f:
                f.seek(offset)
                raw = f.read(size)
        except OSError as e:
            raise OnnxImportError(f"{where}: cannot read external data {shown}: {e.strerror or e}") from None
        if len(raw) != size:  # the file shrank while it was read
            raise OnnxImportError(f"{where}: external data {shown} ended after {len(raw)} of {size} bytes")
        tensor.raw_data = raw
        tensor.data_location = onnx.TensorProto.DEFAULT
        del tensor.external_data[:]


def declared_bytes(tensor: onnx.TensorProto, where: str) -> int:
    """The bytes of raw data a tensor's data type and dimensions call for (bounded by MAX_ELEMENTS)."""
    if any(d < 0 for d in tensor.dims) or math.prod(tensor.dims) > MAX_ELEMENTS:
        raise OnnxImportError(f"{where}: dimensions {list(tensor.dims)} are negative or too large")
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except Exception:  # noqa: BLE001 - an unknown data type (KeyError, TypeError, ...)
        raise OnnxImportError(f"{where}: external data of data type {tensor.data_type} cannot be read") from None
    if tensor.data_type == onnx.TensorProto.STRING:
        raise OnnxImportError(f"{where}: external data of strings cannot be read")
    return math.prod(tensor.dims) * itemsize


def external_number(entries: dict[str, str], key: str, default: int, where: str) -> int:
    """An external-data entry that is a byte count (`offset`, `length`): a whole number >= 0."""
    text = entries.get(key)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise OnnxImportError(f"{where}: external data {key} must be a whole number of bytes >= 0, got {one_line(repr(text), 60)}")
    return value


def tensor_array(tensor: onnx.TensorProto, where: str) -> np.ndarray:
    """An initializer (or Constant value) as an array; its size bounded and its data the right length."""
    if any(d < 0 for d in tensor.dims) or math.prod(tensor.dims) > MAX_ELEMENTS:
        raise OnnxImportError(f"{where}: dimensions {list(tensor.dims)} are negative or too large")
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        raise OnnxImportError(f"{where}: its data is external; import the model from its path, not as a ModelProto")
    try:
        return numpy_helper.to_array(tensor)
    except Exception as e:  # short raw_data, an unknown data type, ...
        raise OnnxImportError(f"{where}: cannot be read ({type(e).__name__}: {e})") from None


# ---------------------------------------------------------------- nodes against their schema


def schema_of(node: onnx.NodeProto, opset: int) -> Any:
    try:
        return onnx.defs.get_schema(node.op_type, opset, node.domain or "")
    except Exception:  # noqa: BLE001 - no such operator (the importer names it) or opset too old for it
        return None


def attribute_value(attribute: onnx.AttributeProto) -> Any:
    try:
        return onnx.helper.get_attribute_value(attribute)
    except Exception:  # noqa: BLE001 - an UNDEFINED type: check_node reports it
        return None


def node_problem(node: onnx.NodeProto, opset: int) -> tuple[str, str | None] | None:
    """(what is wrong, the attribute it is about) for a node its schema rejects, else None."""
    schema = schema_of(node, opset)
    seen: set[str] = set()
    for attribute in node.attribute:
        if attribute.name in seen:
            return "is given twice", attribute.name
        seen.add(attribute.name)
        declared = schema.attributes.get(attribute.name) if schema is not None else None
        if declared is not None and attribute.type != declared.type:
            return (
                f"must be {ATTRIBUTE_TYPE_NAMES.get(declared.type, declared.type)} "
                f"(ONNX declares it so), got {ATTRIBUTE_TYPE_NAMES.get(attribute.type, attribute.type)}"
            ), attribute.name
        if attribute.type == onnx.AttributeProto.UNDEFINED:
            return "has no type", attribute.name
        if node.op_type != "Constant" and attribute.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS):
            values = [attribute.i] if attribute.type == onnx.AttributeProto.INT else list(attribute.ints)
            if any(abs(v) > MAX_ATTRIBUTE_INT for v in values):
                return f"has a value beyond ±{MAX_ATTRIBUTE_INT}", attribute.name
    if schema is None:
        return None
    inputs, outputs = len(node.input), len(node.output)
    if not schema.min_input <= inputs <= schema.max_input:
        return f"has {inputs} input(s); {node.op_type} takes {arity(schema.min_input, schema.max_input)}", None
    for i, formal in enumerate(schema.inputs[:inputs]):
        if formal.option == onnx.defs.OpSchema.FormalParameterOption.Single and not node.input[i]:
            return f"input #{i} ('{formal.name}') is required but empty", None
    if not max(schema.min_output, 1) <= outputs <= schema.max_output:
        return f"has {outputs} output(s); {node.op_type} gives {arity(max(schema.min_output, 1), schema.max_output)}", None
    if not node.output[0]:
        return "its first output has no name", None
    for name, declared in schema.attributes.items():
        if declared.required and name not in seen:
            return f"{node.op_type} requires attribute '{name}'", None
    return None


def arity(low: int, high: int) -> str:
    if low == high:
        return str(low)
    return f"{low} or more" if high > 1000 else f"{low} to {high}"


def check_dims(dims: list[int], where: str) -> None:
    if any(d < 0 for d in dims):
        raise OnnxImportError(f"{where} has a negative dimension {dims}")
    if math.prod(dims) > MAX_ELEMENTS:
        raise OnnxImportError(f"{where} has shape {dims}: more than {MAX_ELEMENTS} elements")


__all__ = ["MAX_ELEMENTS", "OnnxImportError", "check_dims", "load_model", "node_problem", "one_line", "tensor_array"]
