"""convert-cortex-to-extern: OpenCV-backed ops → `func.call`s to declared externs
(after `convert-cortex-frame-boundary`: state and runtime weights → entry arguments and results).

Each external op (blur_detector, scene_change, text_roi, encoder) becomes a
call to a private `func.func` declaration carrying `cortex.extern` (the op
name) and `cortex.props` (all its properties, defaults included), one
declaration per distinct (op, properties, signature). The runtime binds the
declaration to the op's kernel by `cortex.extern` and calls it with
`cortex.props` as keyword arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Attribute, Operation, Region
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint

from cortex.dialects import abi
from cortex.dialects.traits import External, FrameBoundary
from cortex.lowering.base import LoweringError, describe
from cortex.lowering.builders import origin_of
from cortex.lowering.frame_boundary import ConvertFrameBoundaryPass
from cortex.lowering.unsigned import as_signless, cast_to, convert_unsigned_signatures, is_unsigned, signless


def _unsigned_attrs(types: list[Attribute]) -> ArrayAttr[DictionaryAttr] | None:
    attrs = [DictionaryAttr({abi.UNSIGNED: UnitAttr()} if is_unsigned(t) else {}) for t in types]
    return ArrayAttr(attrs) if any(a.data for a in attrs) else None


class ExternTable:
    """The module's extern declarations, one per (op name, properties, signature)."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.symbols = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
        self.known: dict[tuple[str, Attribute | None, FunctionType], str] = {}
        self.last: func.FuncOp | None = None  # new declarations go first, in creation order
        for decl in module.ops:
            if isinstance(decl, func.FuncOp) and decl.is_declaration and isinstance(extern := decl.attributes.get(abi.EXTERN), StringAttr):
                key = (extern.data, decl.attributes.get(abi.PROPS), decl.function_type)
                self.known[key] = decl.sym_name.data

    def declare(self, op: IRDLOperation, rewriter: PatternRewriter) -> str:
        """The symbol of `op`'s declaration (signless signature), created on first use."""
        operand_types = [v.type for v in op.operands]
        result_types = [r.type for r in op.results]
        signature = FunctionType.from_lists([signless(t) for t in operand_types], [signless(t) for t in result_types])
        props = abi.encode_props(op)
        key = (op.name, props, signature)
        if key in self.known:
            return self.known[key]
        base = "cortex_" + op.name.removeprefix("cortex.")
        symbol, n = base, 0
        while symbol in self.symbols:
            n += 1
            symbol = f"{base}_{n}"
        decl = func.FuncOp(
            symbol,
            signature,
            visibility="private",
            region=Region(),
            arg_attrs=_unsigned_attrs(operand_types),
            res_attrs=_unsigned_attrs(result_types),
        )
        decl.attributes[abi.EXTERN] = StringAttr(op.name)
        decl.attributes[abi.PROPS] = props
        where = InsertPoint.at_start(self.module.body.block) if self.last is None else InsertPoint.after(self.last)
        rewriter.insert(decl, where)
        self.last = decl
        self.symbols.add(symbol)
        self.known[key] = symbol
        return symbol


class LowerExternal(RewritePattern):
    """An external cortex op → `func.call @<extern>` (signless operands and results, cast back)."""

    def __init__(self, table: ExternTable):
        self.table = table

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (isinstance(op, IRDLOperation) and op.name.startswith("cortex.") and op.has_trait(External)):
            return
        symbol = self.table.declare(op, rewriter)
        operands = [as_signless(v, rewriter) for v in op.operands]
        call = func.CallOp(symbol, operands, [signless(r.type) for r in op.results])
        call.attributes[abi.ORIGIN] = StringAttr(origin_of(op))
        rewriter.insert(call)
        rewriter.replace(op, [], [cast_to(new, old.type, rewriter) for new, old in zip(call.res, op.results)])


def is_illegal(op: Operation) -> bool:
    return op.name.startswith("cortex.") and (op.has_trait(External) or op.has_trait(FrameBoundary))


@dataclass(frozen=True)
class ConvertCortexToExternPass(ModulePass):
    """External ops → calls to declared externs; state and weights → entry arguments/results."""

    name = "convert-cortex-to-extern"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ConvertFrameBoundaryPass().apply(ctx, op)  # its own pass; run first so this pass lowers completely
        table = ExternTable(op)
        PatternRewriteWalker(GreedyRewritePatternApplier([LowerExternal(table)])).rewrite_module(op)
        for inner in op.walk():
            if is_illegal(inner):
                raise LoweringError(f"{self.name}: {describe(inner)} was not converted")
        convert_unsigned_signatures(op)


__all__ = ["ConvertCortexToExternPass", "ExternTable"]
