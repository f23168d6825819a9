"""`cortex-calibrate{inputs="calib.npz"}`: the observed value range of every tensor.

Glow's profile-guided quantisation, step one: run the graph (the reference
interpreter) over a calibration set and record, for each f32 tensor value,
its minimum, maximum and a histogram over [min, max] (`BINS` bins), so a
later pass can pick a min/max, percentile or entropy-based range. The
range is attached to the value's producer as the discardable attribute

    cortex.range = {min = -1.5 : f32, max = 3.25 : f32, histogram = array<i64: ...>}

and the ranges of the entry function's arguments to the function, as
`cortex.arg_ranges = [{...}, ...]`. The module path `inputs` names is
remembered as `cortex.calibration_inputs` on the module (for the report).

The `.npz` holds one array per entry argument, `arg0`, `arg1`, ... (a file
with a single array may name it anything), each with a leading sample axis
(or exactly the argument's shape, for a single sample).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.hints import isa

from cortex.errors import CortexError
from cortex.interpreter.calling import entry_function
from cortex.interpreter.tracing import TracingRunner

RANGE_ATTR = "cortex.range"
ARG_RANGES_ATTR = "cortex.arg_ranges"
INPUTS_ATTR = "cortex.calibration_inputs"
BINS = 128


@dataclass(frozen=True)
class Range:
    """What calibration saw of one tensor: min, max, and a histogram of BINS bins over [min, max]."""

    min: float
    max: float
    histogram: tuple[int, ...]

    @staticmethod
    def of(values: Sequence[np.ndarray]) -> Range:
        flat = np.concatenate([np.asarray(v, np.float32).reshape(-1) for v in values])
        flat = flat[np.isfinite(flat)]
        if flat.size == 0:
            return Range(0.0, 0.0, (0,) * BINS)
        lo, hi = float(flat.min()), float(flat.max())
        if hi <= lo:  # one value (a constant tensor, any magnitude): every count in the first bin
            return Range(lo, hi, (int(flat.size),) + (0,) * (BINS - 1))
        # in float64: float32 cannot split [1e6, 1e6 + 1] into BINS bins ("Too many bins")
        counts, _ = np.histogram(flat.astype(np.float64), bins=BINS, range=(lo, hi))
        return Range(float(np.float32(lo)), float(np.float32(hi)), tuple(int(c) for c in counts))

    def percentile(self, p: float) -> tuple[float, float]:
        """The range holding the central `p` percent of the values (from the histogram)."""
        counts = np.asarray(self.histogram, np.float64)
        total = counts.sum()
        if total == 0 or self.max <= self.min:
            return self.min, self.max
        edges = np.linspace(self.min, self.max, BINS + 1)
        cdf = np.cumsum(counts) / total
        tail = (100.0 - p) / 200.0
        lo = edges[int(np.searchsorted(cdf, tail, side="left"))]
        hi = edges[min(BINS, int(np.searchsorted(cdf, 1.0 - tail, side="left")) + 1)]
        return float(lo), float(hi)

    def to_attr(self) -> DictionaryAttr:
        return DictionaryAttr(
            {
                "min": FloatAttr(self.min, f32),
                "max": FloatAttr(self.max, f32),
                "histogram": DenseArrayBase.from_list(i64, list(self.histogram)),
            }
        )

    @staticmethod
    def from_attr(attr: Attribute) -> Range | None:
        if not isinstance(attr, DictionaryAttr):
            return None
        data = attr.data
        lo, hi, hist = data.get("min"), data.get("max"), data.get("histogram")
        if not isinstance(lo, FloatAttr) or not isinstance(hi, FloatAttr):
            return None
        counts = tuple(hist.get_values()) if isinstance(hist, DenseArrayBase) else ()
        return Range(lo.value.data, hi.value.data, counts)




def is_float_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and value.type.element_type == f32


def as_tuple(sample) -> tuple:
    return tuple(sample) if isinstance(sample, (tuple, list)) else (sample,)


def check_calibration_set(samples: object) -> None:
    """A calibration set is an iterable of samples (arrays, or tuples of arrays): not None, a number or text."""
    if samples is None or isinstance(samples, (str, bytes, int, float, dict)) or not hasattr(samples, "__iter__"):
        raise CortexError(
            "the calibration set must be a list (or other iterable) of input samples, each an array or a tuple "
            f"of arrays, got {type(samples).__name__}"
        )


def check_sample(index: int, inputs: tuple, function: func.FuncOp) -> None:
    """Sample `index` has one finite numeric array per argument (a NaN or inf would make every range meaningless)."""
    if len(inputs) != len(function.args):
        raise CortexError(f"calibration sample #{index} has {len(inputs)} input(s); @{function.sym_name.data} takes {len(function.args)}")
    for i, value in enumerate(inputs):
        try:
            array = np.asarray(value)
        except Exception as e:  # noqa: BLE001 - an object NumPy cannot make an array of
            raise CortexError(f"calibration sample #{index}, argument #{i}: not an array ({type(e).__name__})") from None
        if array.dtype.kind not in "biuf":
            raise CortexError(f"calibration sample #{index}, argument #{i}: not numeric ({array.dtype})")
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise CortexError(f"calibration sample #{index}, argument #{i} holds NaN or infinity")


def collect_ranges(module: ModuleOp, samples: Iterable, entry: str | None = None) -> tuple[dict[Operation, Range], list[Range | None]]:
    """Run `entry` on every sample; the range of each op's (first, f32 tensor) result and of each argument."""
    check_calibration_set(samples)
    function = entry_function(module, entry)
    runner = TracingRunner(module, entry=function.sym_name.data, mode=None, weights={})
    seen: dict[Operation, list[np.ndarray]] = {}
    args: list[list[np.ndarray]] = [[] for _ in function.args]
    count = 0
    for sample in samples:
        inputs = as_tuple(sample)
        check_sample(count, inputs, function)
        try:
            runner(*inputs)
        except CortexError as e:
            raise CortexError(f"calibration sample #{count}: {e}") from None
        count += 1
        for i, value in enumerate(inputs):
            if i < len(args):
                args[i].append(np.asarray(value))
        for op, results in runner.last_trace.items():
            if op.results and is_float_tensor(op.results[0]) and not op.name.endswith("constant"):
                seen.setdefault(op, []).append(np.asarray(results[0]))
    if count == 0:
        raise CortexError("the calibration set is empty")
    arg_ranges = [Range.of(v) if is_float_tensor(a) else None for a, v in zip(function.args, args)]
    return {op: Range.of(values) for op, values in seen.items()}, arg_ranges


def attach_ranges(function: func.FuncOp, ranges: dict[Operation, Range], arg_ranges: list[Range | None]) -> None:
    for op, r in ranges.items():
        op.attributes[RANGE_ATTR] = r.to_attr()
    function.attributes[ARG_RANGES_ATTR] = ArrayAttr([r.to_attr() if r else DictionaryAttr({}) for r in arg_ranges])


def calibrate(module: ModuleOp, inputs: Iterable, entry: str | None = None) -> ModuleOp:
    """Attach the observed range of every f32 tensor of `entry` to its producer (in place); returns `module`."""
    if not isinstance(module, ModuleOp):
        raise CortexError(f"calibrate takes a builtin.module, got {type(module).__name__}")
    function = entry_function(module, entry)
    ranges, arg_ranges = collect_ranges(module, inputs, function.sym_name.data)
    attach_ranges(function, ranges, arg_ranges)
    return module


def range_of(value: SSAValue) -> Range | None:
    """The calibrated range of `value`: from its producer's attribute, or the function's argument ranges."""
    if isinstance(value, OpResult):
        attr = value.op.attributes.get(RANGE_ATTR)
        return Range.from_attr(attr) if attr is not None and value.index == 0 else None
    if not isinstance(value, BlockArgument):
        return None
    parent = value.block.parent_op()
    if isinstance(parent, func.FuncOp):
        ranges = parent.attributes.get(ARG_RANGES_ATTR)
        if isa(ranges, ArrayAttr) and value.index < len(ranges.data):
            return Range.from_attr(ranges.data[value.index])
    return None


def load_samples(path: str, function: func.FuncOp) -> list[tuple[np.ndarray, ...]]:
    """The calibration samples in an `.npz` (see the module doc), one tuple of arguments each."""
    try:
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
    except OSError as e:
        raise CortexError(f"cannot read calibration inputs '{path}': {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - a truncated or foreign file: BadZipFile, EOFError, ValueError, ...
        detail = " ".join(str(e).split())[:200]
        raise CortexError(f"cannot read calibration inputs '{path}': not a readable .npz ({type(e).__name__}: {detail})") from None
    n_args = len(function.args)
    if n_args == 1 and len(arrays) == 1:
        columns = list(arrays.values())
    else:
        missing = [f"arg{i}" for i in range(n_args) if f"arg{i}" not in arrays]
        if missing:
            raise CortexError(f"'{path}' has no array {', '.join(missing)} (it has: {', '.join(arrays) or 'none'})")
        columns = [arrays[f"arg{i}"] for i in range(n_args)]
    batched = []
    for i, (column, arg) in enumerate(zip(columns, function.args)):
        shape = tuple(arg.type.get_shape()) if isinstance(arg.type, TensorType) else ()
        if column.shape == shape:
            column = column[None]
        if column.shape[1:] != shape:
            raise CortexError(
                f"'{path}': argument #{i} needs samples of shape {shape}, got an array of shape {column.shape}"
            )
        batched.append(column.astype(np.float32) if is_float_tensor(arg) else column)
    sizes = {len(c) for c in batched}
    if len(sizes) != 1:
        raise CortexError(f"'{path}': the arrays hold different numbers of samples ({sorted(sizes)})")
    return [tuple(c[s] for c in batched) for s in range(sizes.pop())]


@dataclass(frozen=True)
class CalibratePass(ModulePass):
    """Attach observed value ranges (min, max, histogram) from a calibration set (`inputs=FILE.npz`)."""

    name = "cortex-calibrate"
    inputs: str = ""
    entry: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.inputs:
            raise CortexError('no calibration set given (use inputs="FILE.npz")')
        function = entry_function(op, self.entry or None)
        calibrate(op, load_samples(self.inputs, function), function.sym_name.data)
        op.attributes[INPUTS_ATTR] = StringAttr(self.inputs)


__all__ = [
    "ARG_RANGES_ATTR",
    "BINS",
    "INPUTS_ATTR",
    "RANGE_ATTR",
    "CalibratePass",
    "Range",
    "calibrate",
    "collect_ranges",
    "load_samples",
    "range_of",
]
