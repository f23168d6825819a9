"""Each dialect fact stated once: property defaults, the typing rule, commutativity."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import ALL_OPS
from cortex.dialects.base import CortexOp, tensor
from cortex.dialects.tensor_ops import AddOp, Conv2dOp, MatmulOp, SoftmaxOp
from cortex.dialects.vision import MotionMapOp
from cortex.semantics import defaults as D
from cortex.semantics.kernels import KERNELS
from cortex.semantics.values import attr_value, op_params


def _defaults(op_class) -> dict[str, object]:
    props = op_class.get_irdl_definition().properties.items()
    return {name: attr_value(d.default_value) for name, d in props if d.default_value is not None}


@pytest.mark.parametrize("op_class", [op for op in ALL_OPS if _defaults(op) and op.name in KERNELS], ids=lambda op: op.name)
def test_kernel_keyword_defaults_are_the_property_defaults(op_class):
    signature = inspect.signature(KERNELS[op_class.name])
    for name, default in _defaults(op_class).items():
        parameter = signature.parameters.get(name)
        kernel_default = inspect.Parameter.empty if parameter is None else parameter.default
        if kernel_default is inspect.Parameter.empty:
            continue  # no default of its own (or **props): the kernel is always given the property's
        assert attr_value_like(kernel_default) == default, (op_class.name, name)


def attr_value_like(value):
    """A Python default as the property holds it (tuples; floats rounded to f32 as the attribute is)."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    if isinstance(value, float):
        return float(np.float32(value))
    return value


@pytest.mark.parametrize("op_class", [op for op in ALL_OPS if _defaults(op) and "__init__" in vars(op)], ids=lambda op: op.name)
def test_builder_keyword_defaults_are_the_property_defaults(op_class):
    signature = inspect.signature(op_class.__init__)
    for name, default in _defaults(op_class).items():
        if name in signature.parameters and signature.parameters[name].default is not inspect.Parameter.empty:
            assert attr_value_like(signature.parameters[name].default) in (default, bool(default)), (op_class.name, name)


def test_kernels_receive_absent_properties_filled_in():
    (gray,) = Block(arg_types=[tensor((64, 64))]).args
    op = MotionMapOp(gray, gray)
    del op.properties["block"]
    assert op_params(op) == {"block": D.BLOCK}


def test_builders_take_their_result_types_from_the_typing_rule():
    a, b, w = Block(arg_types=[tensor((2, 3)), tensor((1, 3)), tensor((3, 5))]).args
    assert AddOp(a, b).result.type == tensor((2, 3))
    assert MatmulOp(a, w).result.type == tensor((2, 5))
    image, kernel = Block(arg_types=[tensor((1, 3, 8, 8)), tensor((4, 3, 3, 3))]).args
    conv = Conv2dOp(image, kernel, pads=(1, 1, 1, 1))
    assert conv.result.type == tensor((1, 4, 8, 8))
    assert list(conv.infer_result_types()) == [conv.result.type]


def test_a_builder_rejects_what_the_verifier_rejects():
    (x,) = Block(arg_types=[tensor((4,))]).args
    with pytest.raises(VerifyException, match="axis 4 is out of range for rank 1"):
        SoftmaxOp(x, axis=4)
    a, b = Block(arg_types=[tensor((2, 3)), tensor((4, 5))]).args
    with pytest.raises(VerifyException):
        MatmulOp(a, b)


def test_every_cortex_op_derives_from_cortex_op():
    assert all(issubclass(op, CortexOp) for op in ALL_OPS)


def test_add_and_mul_carry_xdsl_commutative_trait_and_sub_div_do_not():
    from xdsl.traits import Commutative

    from cortex.dialects.tensor_ops import DivOp, MulOp, SubOp

    assert AddOp.has_trait(Commutative) and MulOp.has_trait(Commutative)
    assert not SubOp.has_trait(Commutative) and not DivOp.has_trait(Commutative)


@pytest.mark.parametrize(
    "expr, folds",
    [
        ("cortex.add %x, %zero", True),
        ("cortex.add %zero, %x", True),  # Commutative: the unit on the left too
        ("cortex.sub %x, %zero", True),
        ("cortex.sub %zero, %x", False),  # not commutative: 0 - x stays
        ("cortex.mul %one, %x", True),
        ("cortex.div %one, %x", False),
    ],
)
def test_one_unit_pattern_reads_the_algebra_table_and_the_trait(expr, folds):
    from cortex.driver import run_passes
    from cortex.ir import parse_module, to_text

    text = f"""func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %zero = cortex.constant dense<0.0> : tensor<4xf32>
  %one = cortex.constant dense<1.0> : tensor<4xf32>
  %r = {expr} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}}"""
    out = to_text(run_passes(parse_module(text), "canonicalize,dce"))
    assert ("func.return %x" in out) == folds, out


def test_every_op_has_its_kernel_and_every_compilable_op_its_lowering():
    from cortex.dialects.traits import Compilable
    from cortex.lowering.base import LOWERINGS
    from cortex.lowering.cortex_to_linalg import ConvertCortexToLinalgPass  # noqa: F401 - fills LOWERINGS
    from cortex.semantics.kernels import NO_KERNEL

    assert {op.name for op in ALL_OPS} - NO_KERNEL == set(KERNELS)
    assert {op for op in ALL_OPS if op.has_trait(Compilable)} == set(LOWERINGS)


def test_a_second_registration_for_one_op_is_refused():
    from cortex.lowering.base import CortexLowering, lowers
    from cortex.semantics.kernel_table import kernel

    with pytest.raises(ValueError, match="two kernels for 'cortex.add'"):
        kernel("cortex.add")(lambda lhs, rhs: lhs)
    with pytest.raises(ValueError, match="two lowerings for 'cortex.add'"):
        lowers(AddOp)(type("LowerAddAgain", (CortexLowering,), {}))
