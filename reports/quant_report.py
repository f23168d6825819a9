"""What quantisation cost, per quantised op: the report a user reads.

Both graphs run on the reference interpreter over the same inputs; each
quantised op (paired with its float original through `cortex.source`) has
its i8 result dequantised and compared with the float result:

- max abs error  max |q − f|
- relative error ‖q − f‖₂ / ‖f‖₂
- SQNR           10·log10(Σf² / Σ(q − f)²) dB (higher is better)

and so do the function's results, with the top-1 agreement of the last
axis (for a classifier). An input where either output is constant along
that axis has no top-1 (argmax of equal values is index 0 on both sides, an
"agreement" that means nothing, e.g. an all-zero quantised output): it is
left out of the figure and the report says on how many inputs and why.
Given a held-out set, the same figures for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.dialects.quant import DequantizeOp, QAddOp, QMaxPoolOp, QReluOp, QuantComputeOp, QuantizeOp, RequantizeOp, i8
from cortex.errors import CortexError
from cortex.interpreter.calling import entry_function
from cortex.interpreter.tracing import TracingRunner
from cortex.passes.calibrate import as_tuple
from cortex.passes.quantize import RANGE_FROM_ATTR, SOURCE_ATTR, QuantizePass, op_labels, quantize_module
from cortex.semantics.quant_kernels import dequantize


def value_params(value: SSAValue) -> tuple[float, int] | None:
    """The (scale, zero_point) of an i8 value, from the op that defines its scale."""
    owner = value.owner
    if isinstance(owner, (QuantizeOp, RequantizeOp)):
        return owner.params
    if isinstance(owner, (QuantComputeOp, QAddOp)):
        return owner.out_scale.value.data, owner.out_zero_point.value.data
    if isinstance(owner, (QReluOp, QMaxPoolOp, ops.ReshapeOp)):
        return value_params(owner.x)
    return None


@dataclass
class ErrorStats:
    """Running error figures of one tensor over many samples."""

    label: str
    op: str
    max_abs: float = 0.0
    signal: float = 0.0
    noise: float = 0.0
    agree: int = 0
    samples: int = 0
    top1_defined: int = 0  # samples whose both outputs vary along the class axis (a constant one has no top-1)
    top1_undefined: int = 0  # samples with a constant row on either side
    constant_value: float | None = None  # a constant quantised output's value, for the report

    def add(self, reference: np.ndarray, approx: np.ndarray, top1: bool = False) -> None:
        ref = np.asarray(reference, np.float64)
        err = np.asarray(approx, np.float64) - ref
        self.max_abs = max(self.max_abs, float(np.abs(err).max(initial=0.0)))
        self.signal += float((ref**2).sum())
        self.noise += float((err**2).sum())
        self.samples += 1
        if top1 and ref.ndim:
            q = np.asarray(approx, np.float64)
            if q.size and (np.ptp(q, axis=-1).min() == 0 or np.ptp(ref, axis=-1).min() == 0):
                # argmax of a constant row is index 0 on both sides: agreement there means nothing
                if np.ptp(q, axis=-1).min() == 0:
                    self.constant_value = float(q.reshape(-1, q.shape[-1])[np.ptp(q, axis=-1).reshape(-1).argmin(), 0])
                self.top1_undefined += 1
                return
            self.top1_defined += 1
            self.agree += int(np.array_equal(ref.argmax(-1), q.argmax(-1)))

    @property
    def relative(self) -> float:
        return math.sqrt(self.noise / self.signal) if self.signal else (0.0 if not self.noise else math.inf)

    @property
    def sqnr_db(self) -> float:
        if self.noise == 0:
            return math.inf
        return 10.0 * math.log10(self.signal / self.noise) if self.signal else -math.inf

    @property
    def top1(self) -> float:
        """Agreement over the samples where top-1 is defined (NaN where it never is)."""
        return self.agree / self.top1_defined if self.top1_defined else math.nan

    def top1_line(self) -> str:
        if not self.top1_undefined:
            return f"{self.label}: top-1 agreement {self.top1:.1%}" if self.top1_defined else f"{self.label}: no class axis, no top-1"
        which = (f"the quantised output is constant (every value {self.constant_value:.4g})" if self.constant_value is not None
                 else "the float output is constant")
        if not self.top1_defined:
            return f"{self.label}: top-1 agreement undefined on every input: {which}"
        return (f"{self.label}: top-1 agreement {self.top1:.1%} on {self.top1_defined} of {self.samples} inputs; "
                f"undefined on {self.top1_undefined}: {which}")


@dataclass
class SetReport:
    """The figures on one input set."""

    name: str
    ops: list[ErrorStats] = field(default_factory=list)
    outputs: list[ErrorStats] = field(default_factory=list)

    def render(self) -> list[str]:
        lines = [f"  on the {self.name} set ({self.outputs[0].samples if self.outputs else 0} inputs):"]
        lines.append(f"    {'op':<14} {'quantised as':<18} {'max abs err':>12} {'rel err':>10} {'SQNR dB':>9}")
        for s in self.ops + self.outputs:
            lines.append(f"    {s.label:<14} {s.op:<18} {s.max_abs:>12.4g} {s.relative:>10.3g} {s.sqnr_db:>9.2f}")
        for s in self.outputs:
            lines.append(f"    {s.top1_line()}")
        return lines


@dataclass
class QuantReport:
    """Per quantised op and per result: the error against the float graph (calibration and held-out sets)."""

    sets: list[SetReport]
    conversions: dict[str, int]
    quantised: int

    def by_label(self, set_name: str = "calibration") -> dict[str, ErrorStats]:
        for s in self.sets:
            if s.name == set_name:
                return {e.label: e for e in s.ops + s.outputs}
        raise KeyError(set_name)

    def __str__(self) -> str:
        conv = ", ".join(f"{n} {k}" for k, n in self.conversions.items())
        lines = [f"[quantisation report] {self.quantised} quantised ops; conversions: {conv}"]
        for s in self.sets:
            lines += s.render()
        return "\n".join(lines) + "\n"


def compare(float_module: ModuleOp, quant_module: ModuleOp, samples: Iterable, name: str, entry: str | None) -> SetReport:
    f_entry = entry_function(float_module, entry).sym_name.data
    float_ops = {label: op for op, label in op_labels(float_module).items()}
    quant_ops: list[tuple[Operation, Operation]] = []
    sources: dict[Operation, str] = {}
    for op in quant_module.walk():
        source = op.attributes.get(SOURCE_ATTR)
        if isinstance(source, StringAttr) and source.data in float_ops and op.results:
            ranged = op.attributes.get(RANGE_FROM_ATTR)  # relu folded into the range: compare after the relu
            compared = float_ops.get(ranged.data) if isinstance(ranged, StringAttr) else None
            quant_ops.append((op, compared or float_ops[source.data]))
            sources[op] = source.data
    rf = TracingRunner(float_module, entry=f_entry, mode=None, weights={})
    rq = TracingRunner(quant_module, entry=entry_function(quant_module, f_entry).sym_name.data, mode=None, weights={})
    report = SetReport(name)
    stats = {
        op: ErrorStats(sources[op], op.name.removeprefix("cortex.") + ("+relu" if RANGE_FROM_ATTR in op.attributes else ""))
        for op, _ in quant_ops
    }
    report.ops = list(stats.values())
    for sample in samples:
        inputs = as_tuple(sample)
        f_out, q_out = rf(*inputs), rq(*inputs)
        if not report.outputs:
            report.outputs = [ErrorStats(f"result #{i}", "(graph output)") for i in range(len(f_out))]
        for s, a, b in zip(report.outputs, f_out, q_out):
            s.add(a, b, top1=True)
        for qop, fop in quant_ops:
            value = rq.last_trace[qop][0]
            result_type = qop.results[0].type
            if isinstance(result_type, TensorType) and result_type.element_type == i8:
                params = value_params(qop.results[0])
                if params is None:
                    continue
                value = dequantize(value, scale=params[0], zero_point=params[1])
            if RANGE_FROM_ATTR in qop.attributes:  # compared with the float relu it absorbed
                value = np.maximum(value, np.float32(0))
            stats[qop].add(rf.last_trace[fop][0], value)
    return report


def quant_report(
    float_module: ModuleOp, quant_module: ModuleOp, calibration: Iterable, held_out: Iterable | None = None, entry: str | None = None
) -> QuantReport:
    """Compare `quant_module` with `float_module` on the calibration set (and a held-out set)."""
    sets = [compare(float_module, quant_module, calibration, "calibration", entry)]
    if held_out is not None:
        sets.append(compare(float_module, quant_module, held_out, "held-out", entry))
    conversions = {
        name: sum(1 for op in quant_module.walk() if isinstance(op, cls))
        for name, cls in (("quantize", QuantizeOp), ("dequantize", DequantizeOp), ("requantize", RequantizeOp))
    }
    quantised = sum(1 for op in quant_module.walk() if SOURCE_ATTR in op.attributes)
    return QuantReport(sets, conversions, quantised)


def quantize_with_report(module, calibration, precision, schema, granularity, clip, held_out, entry):
    """`cortex.quantize`: calibrate a copy, quantise it, and report against the float graph."""
    from cortex.passes.calibrate import calibrate, check_calibration_set

    if not isinstance(module, ModuleOp):
        raise CortexError(f"quantize takes a builtin.module, got {type(module).__name__}")
    check_calibration_set(calibration)
    if held_out is not None:
        check_calibration_set(held_out)
    samples = list(calibration)
    held = list(held_out) if held_out is not None else None
    qmodule = module.clone()
    calibrate(qmodule, samples, entry)
    float_module = qmodule.clone()
    scheme = QuantizePass(precision, schema, granularity, clip).scheme()
    quantize_module(qmodule, scheme)
    qmodule.verify()
    return qmodule, quant_report(float_module, qmodule, samples, held, entry)


__all__ = ["ErrorStats", "QuantReport", "SetReport", "quant_report", "quantize_with_report", "value_params"]


def report_for_opt(before: ModuleOp, after: ModuleOp, held_out_path: str | None = None) -> str:
    """`cortex-opt --quant-report[=HELD.npz]`: the report of a pipeline that calibrated and quantised."""
    from xdsl.dialects.builtin import StringAttr as _String

    from cortex.errors import CortexError
    from cortex.passes.calibrate import INPUTS_ATTR, load_samples

    path = after.attributes.get(INPUTS_ATTR)
    if not isinstance(path, _String):
        raise CortexError("--quant-report needs a pipeline with cortex-calibrate{inputs=...} (no calibration inputs recorded)")
    if not any(SOURCE_ATTR in op.attributes for op in after.walk()):
        raise CortexError("--quant-report: the pipeline quantised nothing (run cortex-quantize after cortex-calibrate)")
    function = entry_function(before, None)
    samples = load_samples(path.data, function)
    held = load_samples(held_out_path, function) if held_out_path else None
    return str(quant_report(before, after, samples, held, function.sym_name.data))
