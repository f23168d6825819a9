"""Misspelt and mistyped properties on cortex ops are refused, by name and at their line.

A property the op does not define used to be kept as an attribute while the
op ran with its default (`qualty = 20` encoded at quality 85); a dialect-
prefixed attribute (`foo.bar`) is discardable information and stays allowed.
The strategies below draw one-edit misspellings of the properties every
vision op in a valid function spells out, and values of the wrong kind.
"""

from __future__ import annotations

import difflib
import re
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import IntegerAttr, StringAttr, i32, i64
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import ALL_OPS, EncoderOp
from cortex.ir import InvalidIRError, parse

VISION = """\
func.func @vision(%frame: tensor<64x96x3xui8>, %gray: tensor<64x96xf32>, %prev: tensor<64x96xf32>, %score: tensor<4x6xf32>, %s: f32) -> tensor<?xui8> {
  %center = cortex.center_crop %gray {block = 16 : i64, sigma = 0.25 : f32} : tensor<64x96xf32> -> tensor<4x6xf32>
  %text = cortex.text_roi %gray {block = 16 : i64, delta = 3 : i64, min_area = 10 : i64, max_area = 200 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  %sal = cortex.saliency_dft %gray {block = 16 : i64, scale = 4 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  %motion = cortex.motion_map %gray, %prev {block = 16 : i64} : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<4x6xf32>
  %smooth = cortex.temporal_smooth %score, %score, %s {alpha = 0.75 : f32, reset_threshold = 0.4 : f32} : (tensor<4x6xf32>, tensor<4x6xf32>, f32) -> tensor<4x6xf32>
  %bytes = cortex.encoder %frame, %smooth {block = 16 : i64, threshold = 0.25 : f32, quality = 70 : i64} : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
  func.return %bytes : tensor<?xui8>
}
"""
LINES = VISION.split("\n")
ENTRY = re.compile(r"(\w+) = ([^,}]+)")
OPS = {op.name: op for op in ALL_OPS}
PROPERTIES = [  # (line index, op name, property name, value text)
    (n, re.search(r"cortex\.\w+", line).group(0), m.group(1), m.group(2))
    for n, line in enumerate(LINES)
    if "{" in line and "cortex." in line
    for m in ENTRY.finditer(line[line.index("{") :])
]

CASES = settings(
    max_examples=60,
    deadline=timedelta(seconds=20),
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


def with_entry(line_index: int, old: str, new: str) -> str:
    lines = list(LINES)
    lines[line_index] = lines[line_index].replace(old, new, 1)
    return "\n".join(lines)


def test_the_unchanged_function_verifies():
    parse(VISION)


def test_a_misspelt_property_is_refused_with_the_intended_name():
    text = VISION.replace("quality = 70", "qualty = 20")
    with pytest.raises(InvalidIRError) as e:
        parse(text)
    assert str(e.value).startswith("<string>:7:")
    assert "'cortex.encoder' op unknown property 'qualty'" in str(e.value)
    assert "did you mean 'quality'?" in str(e.value)


def test_a_plural_block_is_refused_not_a_later_shape_mismatch():
    with pytest.raises(InvalidIRError, match=r"unknown property 'blocks'.*did you mean 'block'\?"):
        parse(VISION.replace("cortex.motion_map %gray, %prev {block = 16 : i64}", "cortex.motion_map %gray, %prev {blocks = 16}"))


def test_a_misspelt_property_in_the_generic_form_is_refused():
    generic = (
        'func.func @f(%frame: tensor<64x96x3xui8>, %s: tensor<4x6xf32>) -> tensor<?xui8> {\n'
        '  %b = "cortex.encoder"(%frame, %s) <{block = 16 : i64}> {qualty = 3 : i64} '
        ": (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>\n"
        "  func.return %b : tensor<?xui8>\n}\n"
    )
    with pytest.raises(InvalidIRError, match=r"<string>:2:.*unknown property 'qualty'.*did you mean 'quality'\?"):
        parse(generic)


def test_a_dialect_prefixed_attribute_stays_allowed():
    module = parse(VISION.replace("quality = 70 : i64}", 'quality = 70 : i64, foo.bar = "kept"}'))
    encoder = next(op for op in module.walk() if isinstance(op, EncoderOp))
    assert encoder.attributes["foo.bar"] == StringAttr("kept")
    assert encoder.quality.value.data == 70


def test_a_built_op_with_an_unknown_attribute_is_refused():
    module = parse(VISION)
    encoder = next(op for op in module.walk() if isinstance(op, EncoderOp))
    encoder.attributes["qualty"] = IntegerAttr(20, i64)
    with pytest.raises(VerifyException, match=r"unknown property 'qualty'.*did you mean 'quality'\?"):
        encoder.verify()


def test_a_built_op_with_a_mistyped_property_names_it():
    module = parse(VISION)
    encoder = next(op for op in module.walk() if isinstance(op, EncoderOp))
    encoder.properties["quality"] = IntegerAttr(20, i32)
    with pytest.raises(VerifyException, match=r"property 'quality' must be an i64 integer, e.g. `16 : i64`; got `20 : i32`"):
        encoder.verify()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("threshold = 0.25 : f32", "threshold = 1", "property 'threshold' must be an f32 float, e.g. `0.5 : f32`; got `1 : i64`"),
        ("quality = 70 : i64", "quality = 70.0", "property 'quality' must be an i64 integer, e.g. `16 : i64`; got `7.000000e+01 : f64`"),
        ("quality = 70 : i64", "quality = 70 : i32", "property 'quality' must be an i64 integer, e.g. `16 : i64`; got `70 : i32`"),
    ],
)
def test_a_mistyped_property_says_what_it_expects(old, new, message):
    with pytest.raises(InvalidIRError) as e:
        parse(VISION.replace(old, new))
    assert str(e.value) == f"<string>:7:12: error: 'cortex.encoder' op {message}"


def one_edit(name: str):
    """Names one deletion, insertion, substitution or swap away from `name`."""
    letters = st.sampled_from("abcdefghijklmnopqrstuvwxyz_")
    at = st.integers(0, len(name) - 1)
    return st.one_of(
        at.map(lambda i: name[:i] + name[i + 1 :]),
        st.tuples(st.integers(0, len(name)), letters).map(lambda p: name[: p[0]] + p[1] + name[p[0] :]),
        st.tuples(at, letters).map(lambda p: name[: p[0]] + p[1] + name[p[0] + 1 :]),
        st.integers(0, len(name) - 2).map(lambda i: name[:i] + name[i + 1] + name[i] + name[i + 2 :]),
    )


@st.composite
def misspellings(draw):
    index, op, name, value = draw(st.sampled_from(PROPERTIES))
    defined = set(OPS[op].get_irdl_definition().properties)
    wrong = draw(one_edit(name).filter(lambda w: w not in defined and w and not w[0].isdigit()))
    return index, op, name, wrong, value, defined


@CASES
@given(misspellings())
def test_every_misspelt_property_is_refused_at_its_line(case):
    index, op, name, wrong, value, defined = case
    with pytest.raises(InvalidIRError) as e:
        parse(with_entry(index, f"{name} = {value}", f"{wrong} = {value}"))
    message = str(e.value)
    assert message.startswith(f"<string>:{index + 1}:"), message
    assert f"'{op}' op unknown property '{wrong}'" in message
    suggested = re.search(r"did you mean '(\w+)'\?", message)
    if suggested is not None:
        assert suggested.group(1) in defined
        assert difflib.SequenceMatcher(None, wrong, suggested.group(1)).ratio() >= 0.6
    else:
        assert not difflib.get_close_matches(wrong, sorted(defined), n=1)


WRONG_KIND = {  # a value of another kind for each kind of property
    "i64": ["1.5", "2 : i32", '"x"', "array<i64: 1>"],
    "f32": ["1", "1.5 : f64", '"x"', "array<f32: 1.0>"],
}


@st.composite
def mistyped(draw):
    index, op, name, value = draw(st.sampled_from(PROPERTIES))
    kind = value.split(":")[-1].strip()
    return index, op, name, value, kind, draw(st.sampled_from(WRONG_KIND[kind]))


@CASES
@given(mistyped())
def test_every_mistyped_property_is_named_with_its_kind(case):
    index, op, name, value, kind, wrong = case
    with pytest.raises(InvalidIRError) as e:
        parse(with_entry(index, f"{name} = {value}", f"{name} = {wrong}"))
    message = str(e.value)
    assert message.startswith(f"<string>:{index + 1}:"), message
    expected = {"i64": "an i64 integer", "f32": "an f32 float"}[kind]
    assert f"'{op}' op property '{name}' must be {expected}" in message
