"""uint8 at the boundary: MLIR's arith ops take signless integers only.

The frame is `tensor<HxWx3xui8>` in cortex; upstream `arith` rejects `ui8`,
so the lowered module carries the same bits as `i8`
and marks the value `{cortex.unsigned}` where it crosses the function
boundary (entry arguments and results, extern declarations).

Both passes work like MLIR's dialect conversion: a pattern that needs the
signless value materialises it with `builtin.unrealized_conversion_cast`,
`convert_unsigned_signatures` rewrites the functions' types and the calls
to them (casting back for the uses still in cortex), and `reconcile_casts`
folds every cast of a cast back to the original value. Whichever pass runs
second leaves no cast.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from cortex.dialects import abi

"""Unit argument/result attribute: this signless integer value holds unsigned bits."""


def is_unsigned(t: Attribute) -> bool:
    element = t.element_type if isinstance(t, TensorType) else t
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def signless(t: Attribute) -> Attribute:
    """The same type with signless integers (`tensor<4xui8>` → `tensor<4xi8>`)."""
    element = t.element_type if isinstance(t, TensorType) else t
    if not (isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED):
        return t
    plain = IntegerType(element.width.data)
    return TensorType(plain, t.get_shape()) if isinstance(t, TensorType) else plain


def cast_to(value: SSAValue, target: Attribute, rewriter: Builder) -> SSAValue:
    """`value` as `target` (an unrealized cast at the builder's insertion point, if the types differ)."""
    if value.type == target:
        return value
    op, result = UnrealizedConversionCastOp.cast_one(value, target)
    rewriter.insert(op)
    return result


def as_signless(value: SSAValue, rewriter: Builder) -> SSAValue:
    return cast_to(value, signless(value.type), rewriter)


def with_unit(attrs: DictionaryAttr | None, name: str) -> DictionaryAttr:
    data = dict(attrs.data) if attrs is not None else {}
    data[name] = UnitAttr()
    return DictionaryAttr(data)


def attr_list(attrs: ArrayAttr[DictionaryAttr] | None, n: int) -> list[DictionaryAttr]:
    """A function's per-argument (or per-result) attribute dictionaries, padded to `n`."""
    existing = list(attrs.data) if attrs is not None else []
    return existing + [DictionaryAttr({}) for _ in range(n - len(existing))]


def convert_function(fn: func.FuncOp) -> bool:
    """Signless entry types for `fn`, `{cortex.unsigned}` where they were unsigned; True if any changed."""
    block = fn.body.blocks.first
    if block is None:  # a declaration: no arguments to convert
        return False
    arg_attrs = attr_list(fn.arg_attrs, len(fn.function_type.inputs))
    res_attrs = attr_list(fn.res_attrs, len(fn.function_type.outputs))
    changed = False
    for index, arg in enumerate(list(block.args)):
        if not is_unsigned(arg.type):
            continue
        old_type = arg.type
        new_arg = block.insert_arg(signless(old_type), index)
        new_arg.name_hint = arg.name_hint
        cast, back = UnrealizedConversionCastOp.cast_one(new_arg, old_type)
        Rewriter.insert_op(cast, InsertPoint.at_start(block))
        arg.replace_all_uses_with(back)
        block.erase_arg(arg)
        arg_attrs[index] = with_unit(arg_attrs[index], abi.UNSIGNED)
        changed = True
    for ret in (op for op in fn.walk() if isinstance(op, func.ReturnOp) and op.parent_op() is fn):
        operands = list(ret.operands)
        for index, value in enumerate(operands):
            if is_unsigned(value.type):
                cast, operands[index] = UnrealizedConversionCastOp.cast_one(value, signless(value.type))
                Rewriter.insert_op(cast, InsertPoint.before(ret))
                res_attrs[index] = with_unit(res_attrs[index], abi.UNSIGNED)
                changed = True
        ret.operands = operands
    if changed:
        inputs = [signless(t) for t in fn.function_type.inputs]
        outputs = [signless(t) for t in fn.function_type.outputs]
        fn.properties["function_type"] = FunctionType.from_lists(inputs, outputs)
        fn.arg_attrs = ArrayAttr(arg_attrs) if any(a.data for a in arg_attrs) else None
        fn.res_attrs = ArrayAttr(res_attrs) if any(a.data for a in res_attrs) else None
    return changed


def convert_call(call: func.CallOp) -> None:
    """A call to a converted function passes and receives signless values (cast at the call)."""
    builder = Builder(InsertPoint.before(call))
    operands = [as_signless(v, builder) for v in call.operands]
    new = builder.insert(func.CallOp(call.callee, operands, [signless(r.type) for r in call.res]))
    new.attributes.update(call.attributes)
    for old, value in zip(call.res, new.res):
        value.name_hint = old.name_hint
    Rewriter.replace_op(call, [], [cast_to(v, old.type, builder) for v, old in zip(new.res, call.res)])


class FoldCastPair(RewritePattern):
    """cast(cast(x : A → B) : B → A) → x, for each such use (dead casts then go)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter) -> None:
        inner = op.inputs[0].owner if len(op.inputs) == 1 else None
        if isinstance(inner, UnrealizedConversionCastOp) and len(inner.inputs) == 1:
            if inner.inputs[0].type == op.outputs[0].type:
                rewriter.replace(op, [], [inner.inputs[0]])


def reconcile_casts(module: ModuleOp) -> None:
    PatternRewriteWalker(GreedyRewritePatternApplier([FoldCastPair()])).rewrite_module(module)


def convert_unsigned_signatures(module: ModuleOp) -> None:
    """Every function definition of `module` takes and returns signless types (its calls too)."""
    converted = {
        fn.sym_name.data
        for fn in list(module.ops)
        if isinstance(fn, func.FuncOp) and not fn.is_declaration and convert_function(fn)
    }
    for call in [op for op in module.walk() if isinstance(op, func.CallOp)]:
        if call.callee.string_value() in converted:
            convert_call(call)
    reconcile_casts(module)


__all__ = ["as_signless", "cast_to", "convert_unsigned_signatures", "is_unsigned", "reconcile_casts", "signless"]
