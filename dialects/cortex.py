"""The `cortex` dialect: vision stages, state and weights, generic tensor ops."""

from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation

from cortex.dialects.layout import LAYOUT_OPS
from cortex.dialects.quant import QUANT_OPS
from cortex.dialects.state import STATE_OPS
from cortex.dialects.stencil import STENCIL_OPS
from cortex.dialects.tensor_ops import TENSOR_OPS
from cortex.dialects.vision import VISION_OPS
from cortex.dialects.window import WINDOW_OPS

ALL_OPS: list[type[IRDLOperation]] = [*VISION_OPS, *STATE_OPS, *TENSOR_OPS, *QUANT_OPS, *LAYOUT_OPS, *WINDOW_OPS, *STENCIL_OPS]

Cortex = Dialect("cortex", list(ALL_OPS), [])
