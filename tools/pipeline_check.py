"""What cortex-run checks about a pipeline before the first frame, so a mistake costs no run.

- `check_signature`: the entry takes one frame and returns the encoder's JPEG bytes and the
  score map — what the runner reads from every call. One error names the entry, the
  signature it has and the one it needs.
- `check_weights`: every `cortex.weight` the pipeline reads gets a value from the mode's row,
  the runtime inputs every mode shares, or `--weight NAME=VALUE`; and every `--weight` names
  a weight the pipeline reads.
- `parse_weight`: one `--weight NAME=VALUE`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute

from cortex.dialects.state import WeightOp
from cortex.errors import CortexError
from cortex.semantics.modes import INPUT_DEFAULTS

EXPECTED = "(tensor<HxWx3xui8>) -> (tensor<?xui8>, tensor<RxCxf32>, ...)"
"""What cortex-run calls: a BGR frame in; the encoded JPEG's bytes and the R x C score map out."""


def _is_u8_tensor(t: Attribute, rank: int) -> bool:
    return (
        isinstance(t, TensorType)
        and t.get_num_dims() == rank
        and isinstance(t.element_type, IntegerType)
        and t.element_type.width.data == 8
    )


def _text(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)


def check_signature(fn: func.FuncOp, where: str = "the pipeline") -> None:
    """The entry's signature against what cortex-run reads from each call, or one CortexError."""
    inputs, outputs = fn.function_type.inputs.data, fn.function_type.outputs.data
    problems = []
    frame = inputs[0] if len(inputs) == 1 else None
    if not (isinstance(frame, TensorType) and _is_u8_tensor(frame, 3) and frame.get_shape()[2] in (3, -1)):
        problems.append("it must take one argument, the HxWx3 uint8 BGR frame")
    if len(outputs) < 2:
        problems.append(f"it must return at least 2 results, the JPEG bytes and the score map (it returns {len(outputs)})")
    else:
        if not _is_u8_tensor(outputs[0], 1):
            problems.append(f"result #0 must be the encoded JPEG's bytes, a 1-D ui8 tensor (it is {outputs[0]})")
        score = outputs[1]
        if not (isinstance(score, TensorType) and score.get_num_dims() == 2 and isinstance(score.element_type, Float32Type)):
            problems.append(f"result #1 must be the score map, a 2-D f32 tensor (it is {score})")
    if problems:
        raise CortexError(
            f"@{fn.sym_name.data} in {where} has the signature ({_text(inputs)}) -> ({_text(outputs)}), "
            f"but cortex-run needs {EXPECTED}: {'; '.join(problems)}"
        )


def pipeline_weights(module: ModuleOp) -> list[str]:
    """The names of the `cortex.weight`s the module reads, sorted."""
    return sorted({op.state_name for op in module.walk() if isinstance(op, WeightOp)})


def parse_weight(text: str) -> tuple[str, float]:
    """`NAME=VALUE` (a finite number), or a CortexError saying what is wrong."""
    name, eq, value = text.partition("=")
    name = name.strip()
    if not eq or not name:
        raise CortexError(f"--weight must read NAME=VALUE (e.g. --weight wc=0.4), got '{text}'")
    try:
        number = float(value)
    except ValueError:
        raise CortexError(f"--weight {name}: '{value.strip()}' is not a number") from None
    if not math.isfinite(number):
        raise CortexError(f"--weight {name}: must be a finite number, got '{value.strip()}'")
    return name, number


def parse_weights(texts: Sequence[str] | None) -> dict[str, float]:
    """Every `--weight` (a later one for the same name wins)."""
    return dict(parse_weight(t) for t in texts or ())


def check_weights(module: ModuleOp, mode: str, row: Mapping[str, float], overrides: Mapping[str, float]) -> None:
    """Every weight the pipeline reads has a value, and every override names one of them."""
    names = pipeline_weights(module)
    for name in overrides:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise CortexError(
                f"--weight {name}: the pipeline reads no weight '{name}' "
                f"(it reads: {', '.join(names) or 'none'}){hint}"
            )
    missing = [n for n in names if n not in row and n not in INPUT_DEFAULTS and n not in overrides]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise CortexError(
            f"mode '{mode}' has no value for the pipeline's weight{plural} {', '.join(repr(n) for n in missing)} "
            f"(the mode sets: {', '.join(sorted(row)) or 'nothing'}): "
            f"give {'them' if plural else 'it'} with {' '.join(f'--weight {n}=VALUE' for n in missing)}"
        )


__all__ = ["EXPECTED", "check_signature", "check_weights", "parse_weight", "parse_weights", "pipeline_weights"]
