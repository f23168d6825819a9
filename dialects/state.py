"""Values that cross the frame boundary: named state and runtime weights.

`cortex.state` reads what `cortex.update_state` of the same name wrote in the
previous frame (zeros before the first), so within one frame a read is a
pure value. `cortex.update_state` is the only op with a side effect; DCE
keeps it. `cortex.weight` is a per-request-type input that mode
specialisation turns into a constant.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, StringAttr, TensorType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from cortex.dialects.base import CortexOp, compatible
from cortex.dialects.traits import FrameBoundary

StateValue = TensorType | Float32Type


def check_name(op: NamedOp) -> str:
    name = op.state_name
    if not name:
        raise VerifyException("the 'name' property must not be empty")
    if not all(" " <= c <= "~" and c not in '"\\' for c in name):
        # The printer escapes other characters as bytes, which the parser then rejects.
        raise VerifyException(f"the 'name' property must be printable ASCII without quotes or backslashes, got {name!r}")
    return name


class NamedOp(CortexOp):
    @property
    def state_name(self) -> str:
        name = self.properties["name"]
        assert isinstance(name, StringAttr), "prop_def(StringAttr) checked it"
        return name.data


@irdl_op_definition
class StateOp(NamedOp):
    """The value the named state held after the previous frame.

    Zeros before the first frame. Lowered, a state becomes an argument of the per-frame function
    (and its `cortex.update_state` a result): the runtime threads it from frame to frame.
    """

    name = "cortex.state"
    state_name_attr = prop_def(StringAttr, prop_name="name")
    result = result_def(StateValue)
    traits = traits_def(Pure(), FrameBoundary())
    assembly_format = "$name attr-dict `:` type($result)"

    def __init__(self, name: str, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"name": StringAttr(name)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        check_name(self)
        return [None]


@irdl_op_definition
class UpdateStateOp(NamedOp):
    """Sets the named state's value for the next frame (a side effect).

    Has a side effect: DCE never removes it. One type per state name within a function.
    """

    name = "cortex.update_state"
    state_name_attr = prop_def(StringAttr, prop_name="name")
    value = operand_def(StateValue)
    traits = traits_def(MemoryWriteEffect(), FrameBoundary())
    assembly_format = "$name `=` $value attr-dict `:` type($value)"

    def __init__(self, name: str, value: SSAValue):
        super().__init__(operands=[value], properties={"name": StringAttr(name)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        name = check_name(self)
        fn = self.parent_op()
        while fn is not None and not isinstance(fn, func.FuncOp):
            fn = fn.parent_op()
        if fn is not None:
            for read in fn.walk():
                if isinstance(read, StateOp) and read.state_name == name and not compatible(read.result.type, self.value.type):
                    raise VerifyException(
                        f"state '{name}' is read as {read.result.type} but updated with {self.value.type}"
                    )
        return []


@irdl_op_definition
class WeightOp(NamedOp):
    """A runtime weight (wc, wt, ws, wm, ...) given per request type.

    A runtime input: `cortex-specialize-mode` replaces the mode table's weights by constants; the
    blur gate's `blur_threshold` and `blur_fraction` stay runtime inputs (defaults in
    `cortex.semantics.modes.INPUT_DEFAULTS`).
    """

    name = "cortex.weight"
    state_name_attr = prop_def(StringAttr, prop_name="name")
    result = result_def(Float32Type)
    traits = traits_def(Pure(), FrameBoundary())
    assembly_format = "$name attr-dict `:` type($result)"

    def __init__(self, name: str):
        super().__init__(result_types=[f32], properties={"name": StringAttr(name)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        check_name(self)
        return [f32]


STATE_OPS: list[type[IRDLOperation]] = [StateOp, UpdateStateOp, WeightOp]
