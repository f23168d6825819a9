"""ONNX external data: read exactly the bytes a tensor declares, from inside the model's folder, or refuse.

A `length` of 10**12 was a raw MemoryError, a NUL in the location a raw
ValueError, and without `length` the whole neighbouring file was read. The
strategies below craft external-data entries (location, offset, length) and
the bytes on disk; every outcome is the declared array or one CortexError line.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from cortex.errors import CortexError
from cortex.frontends.onnx import from_onnx

MAX_MESSAGE = 400
DATA = np.arange(4, dtype=np.float32)  # the initializer: 4 float32 = 16 bytes
EXPECTED = "1.000000e+00, 2.000000e+00, 3.000000e+00"


def save_model(folder: Path, entries: dict[str, str], dims=(4,), data_type=TensorProto.FLOAT) -> Path:
    """`m.onnx` in `folder`: y = x + w, with `w` external data given by `entries`."""
    w = TensorProto(name="w", data_type=data_type, dims=list(dims))
    w.data_location = TensorProto.EXTERNAL
    for key, value in entries.items():
        w.external_data.add(key=key, value=value)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="n")], "g", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "m.onnx"
    onnx.save(model, path)
    return path


def refused(path: Path, *fragments: str) -> str:
    with pytest.raises(CortexError) as caught:
        from_onnx(str(path))
    message = str(caught.value)
    assert "\n" not in message and len(message) <= MAX_MESSAGE, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_a_huge_length_is_refused_before_reading(tmp_path):
    (tmp_path / "w.bin").write_bytes(DATA.tobytes())
    path = save_model(tmp_path, {"location": "w.bin", "length": str(10**12)})
    refused(path, "initializer 'w'", "length 1000000000000 is not the 16 bytes its type and dimensions declare")


def test_a_nul_in_the_location_is_a_cortex_error(tmp_path):
    path = save_model(tmp_path, {"location": "w\0.bin"})
    refused(path, "initializer 'w'", "contains a NUL character")


def test_without_length_only_the_declared_bytes_are_read(tmp_path):
    (tmp_path / "w.bin").write_bytes(DATA.tobytes() + b"\xff" * 1000)  # a neighbouring file, larger than the tensor
    path = save_model(tmp_path, {"location": "w.bin"})
    assert EXPECTED in str(from_onnx(str(path)))


def test_an_offset_and_length_inside_a_shared_file_are_read(tmp_path):
    (tmp_path / "all.bin").write_bytes(b"\0" * 8 + DATA.tobytes() + b"\0" * 8)
    path = save_model(tmp_path, {"location": "all.bin", "offset": "8", "length": "16"})
    assert EXPECTED in str(from_onnx(str(path)))


def test_data_past_the_end_of_the_file_is_refused(tmp_path):
    (tmp_path / "w.bin").write_bytes(DATA.tobytes()[:12])
    refused(save_model(tmp_path, {"location": "w.bin"}), "holds 12 bytes, fewer than offset 0 + 16")


@pytest.mark.parametrize("key", ["offset", "length"])
@pytest.mark.parametrize("value", ["-1", "ten", "1e3", ""])
def test_offset_and_length_must_be_byte_counts(tmp_path, key, value):
    (tmp_path / "w.bin").write_bytes(DATA.tobytes())
    refused(save_model(tmp_path, {"location": "w.bin", key: value}), f"external data {key} must be a whole number")


def test_a_link_inside_the_folder_to_a_file_outside_is_refused(tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(DATA.tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    os.symlink(secret, folder / "w.bin")
    refused(save_model(folder, {"location": "w.bin"}), "initializer 'w'", "outside the model's folder")


def test_a_model_read_through_a_linked_folder_reads_its_own_data(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "w.bin").write_bytes(DATA.tobytes())
    save_model(real, {"location": "w.bin"})
    os.symlink(real, tmp_path / "linked")
    assert EXPECTED in str(from_onnx(str(tmp_path / "linked" / "m.onnx")))


# ---------------------------------------------------------------- crafted entries

CASES = settings(max_examples=60, deadline=timedelta(seconds=20), derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

locations = st.one_of(
    st.sampled_from(["w.bin", "./w.bin", "sub/../w.bin", "../w.bin", "/etc/hostname", "", ".", "sub", "missing.bin",
                     "w.bin\0", "\0", "link.bin", "a" * 5000]),
    st.text(max_size=12),
)
byte_counts = st.one_of(st.none(), st.integers(-5, 64).map(str), st.sampled_from([str(10**12), str(2**64), "x", " 16", "0x10"]))


@st.composite
def external_entries(draw):
    entries = {"location": draw(locations)}
    for key in ("offset", "length"):
        value = draw(byte_counts)
        if value is not None:
            entries[key] = value
    file_bytes = draw(st.integers(0, 48))
    dims = draw(st.sampled_from([(4,), (2, 2), (0,), (4, 2**40)]))
    return entries, file_bytes, dims


@CASES
@given(external_entries())
def test_crafted_external_data_imports_the_declared_array_or_is_one_cortex_error(case):
    entries, file_bytes, dims = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "outside.bin").write_bytes(bytes(range(48)))
        folder = root / "model"
        (folder / "sub").mkdir(parents=True)
        (folder / "w.bin").write_bytes((DATA.tobytes() * 3)[:file_bytes])
        os.symlink(root / "outside.bin", folder / "link.bin")
        path = save_model(folder, entries, dims)
        try:
            module = from_onnx(str(path))
        except CortexError as e:
            message = str(e)
            assert "\n" not in message and len(message) <= MAX_MESSAGE, message
            assert "internal error" not in message
            return
    # what imported: the file inside the folder, exactly the declared bytes at the given offset
    location = os.path.normpath(entries["location"])
    assert location == "w.bin", entries
    offset = int(entries.get("offset", "0"))
    size = int(np.prod(dims)) * 4
    assert int(entries.get("length", size)) == size
    assert offset + size <= file_bytes
    if dims == (4,) and offset == 0:
        assert EXPECTED in str(module)
